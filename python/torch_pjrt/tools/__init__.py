"""Developer tools, run as `python -m torch_pjrt <tool>`: `bench` (per-op
latency, training, decoding, torch.compile, collectives and MoE decoding
beside PyTorch on the CPU; one module per benchmark in bench/),
`conformance` (PyTorch's OpInfo suite on the tpu against the CPU) and
`pytorch-tests` (PyTorch's own device-generic test files, which tests that
pass on the CPU fail on the tpu). They
need what a user's install may lack (torch.testing._internal, transformers,
matplotlib), so nothing here is imported by `import torch_pjrt`; the user's
own tool, `python -m torch_pjrt info`, is _info.py."""
