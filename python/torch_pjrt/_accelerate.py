"""Hugging Face accelerate, behind transformers' Trainer and Accelerator,
chooses its default device from a fixed list of backends that a PrivateUse1
device cannot join, and it has no hook for one: its only other way in,
ACCELERATE_TORCH_DEVICE, would also override `cpu=True`. So this is the one
place torch_pjrt changes another package: when accelerate.state is loaded,
PartialState.default_device answers `tpu` while the device is available, in
the order transformers' TrainingArguments already uses (tpu before CUDA).
Everything else stays accelerate's: cpu=True / use_cpu=True,
ACCELERATE_TORCH_DEVICE and distributed launches decide as before."""
from ._on_import import when_imported


def _patch(state):
    cls = getattr(state, "PartialState", None)
    original = getattr(cls, "default_device", None) if cls is not None else None
    if not isinstance(original, property):
        return

    def default_device(self):
        import torch
        if torch.tpu.is_available():
            return torch.device("tpu")
        return original.fget(self)

    default_device.__doc__ = original.__doc__
    cls.default_device = property(default_device)


def install():
    when_imported("accelerate.state", _patch)
