"""The pytest plugin of pytorch_tests.py. Its module is loaded as a top-level
module (this folder on PYTHONPATH) by the test processes, so the CPU run does
not import torch_pjrt; the package is here so installs carry the file."""
