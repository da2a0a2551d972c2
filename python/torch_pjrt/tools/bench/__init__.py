"""python -m torch_pjrt bench: where the tpu device stands against PyTorch
CPU eager on the same machine, measured side by side in one run.

One module per benchmark, all timed through timing.py:
- ops.py: per-op latency of small ops, and the launch floor under them;
- eager.py: a training step of a small Llama-style model per eager mode,
  greedy decoding tokens/s per mode at batch 1 and 64, and the time to the
  first training step with a cold and a warm disk cache;
- compiled.py: torch.compile's tpu backend beside PyTorch CPU eager and
  inductor (decode, forward, training step, first compiled decode);
- dist.py (--dist): all_reduce through tpu_dist beside gloo;
- moe.py (--moe): MoE decoding per experts implementation.
cli.py parses the command line and writes the JSON files; chart.py draws
them. Nothing here is imported by `import torch_pjrt`.
"""
