"""torch_pjrt: the `tpu` device for PyTorch, over XLA PJRT plugins.

Importing this package (or just `import torch` once it is installed, through
the torch.backends entry point) makes `torch.device("tpu")` available.
"""
import os

import torch

from . import _plugins

_name, _path, _hint = _plugins.resolve()

from . import _C  # noqa: E402  (loads the native backend: registers PrivateUse1 kernels)

_C._configure(_path, _name, _hint, int(os.environ.get("TORCH_PJRT_CPU_DEVICES", "1")))

if torch._C._get_privateuse1_backend_name() != "tpu":
    torch.utils.rename_privateuse1_backend("tpu")

from . import device_module  # noqa: E402

torch._register_device_module("tpu", device_module)
torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)

__version__ = "0.1.0"


def _autoload():
    """Entry point for torch.backends autoloading: importing does the work."""


def runtime_info() -> dict:
    """The loaded plugin: platform, plugin_path, pjrt_api_version,
    device_count, and the XLA / StableHLO versions the plugin reports."""
    return dict(_C._runtime_info())


def cache_stats() -> dict:
    """Compilation cache counters: hits, misses, compile_seconds, entries."""
    return dict(_C._cache_stats())


def reset_cache_stats() -> None:
    _C._reset_cache_stats()


def fallback_stats() -> dict:
    """{aten op name: calls} of ops that ran through the CPU fallback."""
    return dict(_C._fallback_stats())


def reset_fallback_stats() -> None:
    _C._reset_fallback_stats()


def set_eager_mode(mode: str) -> None:
    """'debug' (synchronous) or 'strict' (asynchronous, the default)."""
    _C._set_eager_mode(mode)


def get_eager_mode() -> str:
    return _C._eager_mode()


def synchronize() -> None:
    _C._synchronize()
