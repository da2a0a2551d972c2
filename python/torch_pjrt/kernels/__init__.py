"""Kernels shipped with torch_pjrt: fused programs for the hot layers of
Hugging Face models on `tpu`, handed to transformers through its own
registries when transformers is imported (no network, nothing to download).

- `moe`: a mixture-of-experts layer's experts as one program
  (`torch.ops.torch_pjrt.moe_experts`), registered as the experts
  implementation "tpu_experts" and used on `tpu` in place of "grouped_mm"
  and "batched_mm" (what `generate()` switches to for decoding).

`standard_only()` turns the substitution off for a block, to run (or time)
transformers' own implementations on `tpu`.
"""
import contextlib

from .. import _on_import
from . import hub, moe

__all__ = ["hub", "moe", "standard_only"]


@contextlib.contextmanager
def standard_only():
    """Within the block, "grouped_mm" and "batched_mm" on `tpu` run as
    transformers implements them (the kernel still runs by name)."""
    previous = moe.substitute
    moe.substitute = False
    try:
        yield
    finally:
        moe.substitute = previous


_on_import.when_imported("transformers.integrations.moe", moe.register, "transformers>=5.25,<5.26")
_on_import.when_imported("kernels", hub.register, "kernels>=0.19,<0.20")
