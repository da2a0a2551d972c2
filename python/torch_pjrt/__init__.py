"""torch_pjrt: the `tpu` device for PyTorch, over XLA PJRT plugins.

Importing this package (or just `import torch` once it is installed, through
the torch.backends entry point) makes `torch.device("tpu")` available.
"""
import atexit
import contextlib
import os
import time


def _autoload():
    """Entry point for torch.backends autoloading: importing does the work.
    Defined before `import torch`, which may autoload this very module."""


import torch  # noqa: E402

from . import _env, _plugins

_name, _path, _hint = _plugins.resolve()

from . import _C  # noqa: E402  (loads the native backend: registers PrivateUse1 kernels)

_C._configure(_path, _name, _hint, int(_env.get("TORCH_PJRT_CPU_DEVICES", "1")))

if torch._C._get_privateuse1_backend_name() != "tpu":
    torch.utils.rename_privateuse1_backend("tpu")

from . import device_module  # noqa: E402

torch._register_device_module("tpu", device_module)
torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)

__version__ = "0.1.0"

from . import _accelerate  # noqa: E402

_accelerate.install()  # Trainer and Accelerator default to tpu (see _accelerate.py)

from . import _dynamo_hook  # noqa: E402,F401  (torch.compile(backend="tpu"))
from . import kernels  # noqa: E402,F401  (transformers' layers on tpu: see kernels/__init__.py)
from . import distributed  # noqa: E402
from ._jax_op import JaxOp, jax_op  # noqa: E402,F401  (imports jax only when used)

distributed.install()  # the c10d backend "tpu_dist" (see distributed.py)


@atexit.register
def _drain_at_exit():
    if not _C._initialized():
        return
    # Finish device work before the process tears down its statics.
    try:
        _C._synchronize()
    except Exception:  # noqa: BLE001  (an error nobody read: nothing to report it to)
        pass
    # PyTorch's autograd thread for the device drops its last graph task
    # (which holds Python objects) just after backward() returns; if that
    # decref needs the GIL once finalization has begun, the thread is killed
    # mid-C++ and the process aborts. Give it the GIL briefly first.
    time.sleep(0.05)


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
    """Sets the process-wide default eager mode:
    'debug'  - synchronous, one op at a time; errors point at their line;
    'strict' - asynchronous like CUDA (the default);
    'fused'  - ops are recorded and compiled together into one program when
               the host needs data, on synchronize(), or past a size bound."""
    _C._set_eager_mode(mode)


def get_eager_mode() -> str:
    """The calling thread's eager mode."""
    return _C._eager_mode()


@contextlib.contextmanager
def eager_mode(mode: str):
    """Uses `mode` on the calling thread inside the block. PyTorch runs
    backward passes of tpu tensors on its own autograd thread, which follows
    the process-wide mode: for training in one mode prefer set_eager_mode()."""
    prev = _C._thread_eager_mode()
    _C._set_thread_eager_mode(mode)
    try:
        yield
    finally:
        _C._set_thread_eager_mode(prev)


def fused_stats() -> dict:
    """Fused mode: flushes so far, nodes pending, and the node bound."""
    return dict(_C._fused_stats())


def synchronize() -> None:
    """Launches pending fused work and waits for all queued work."""
    _C._synchronize()
