"""Developer tools, run as `python -m torch_pjrt <tool>`: `bench` (per-op
latency, training, decoding, torch.compile and collectives beside PyTorch on
the CPU) and `conformance` (PyTorch's OpInfo suite on the tpu against the
CPU). Nothing here is imported by `import torch_pjrt`."""
