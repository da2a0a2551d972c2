"""Hugging Face accelerate, behind transformers' Trainer and Accelerator,
chooses its default device from a fixed list of backends that a PrivateUse1
device cannot join, and it has no hook for one: its only other way in,
ACCELERATE_TORCH_DEVICE, would also override `cpu=True`. So this is the one
place torch_pjrt changes another package: when accelerate.state is loaded,
PartialState.default_device answers `tpu` while the device is available, in
the order transformers' TrainingArguments already uses (tpu before CUDA).
Everything else stays accelerate's: cpu=True / use_cpu=True,
ACCELERATE_TORCH_DEVICE and distributed launches decide as before."""
import importlib.abc
import importlib.machinery
import sys

_TARGET = "accelerate.state"


def _patch(state):
    cls = getattr(state, "PartialState", None)
    original = getattr(cls, "default_device", None) if cls is not None else None
    if not isinstance(original, property) or getattr(original.fget, "_torch_pjrt", False):
        return

    def default_device(self):
        import torch
        if torch.tpu.is_available():
            return torch.device("tpu")
        return original.fget(self)

    default_device._torch_pjrt = True
    default_device.__doc__ = original.__doc__
    cls.default_device = property(default_device)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)
        spec.loader.exec_module = exec_module
        sys.meta_path[:] = [f for f in sys.meta_path if f is not self]
        return spec


def install():
    if _TARGET in sys.modules:
        _patch(sys.modules[_TARGET])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
