"""torch_pjrt: the `tpu` device for PyTorch, over XLA PJRT plugins.

Importing this package (or just `import torch` once it is installed, through
the torch.backends entry point) makes `torch.device("tpu")` available.
"""
import atexit
import contextlib
import os
import sys
import time

import _torch_pjrt_autoload as _load_record

from ._version import __version__  # noqa: F401


def _run_as_main():
    """True while `python -m torch_pjrt ...` imports this package: the
    command reports a failed load (info) instead of dying on it."""
    argv = getattr(sys, "orig_argv", [])
    return sys.argv[:1] == ["-m"] and any(a == "-m" and b == "torch_pjrt" for a, b in zip(argv, argv[1:]))


if _load_record.error is not None:
    raise ImportError(_load_record.error)

try:
    _load_record.check_build(os.path.dirname(os.path.abspath(__file__)))

    import torch

    from . import _env, _plugins

    plugin_choice = _plugins.resolve()
    if not plugin_choice.path:
        raise _load_record.PluginUnavailable(f"none is installed for '{plugin_choice.name}': {plugin_choice.hint}")

    from . import _C  # loads the native backend: registers PrivateUse1 kernels

    # Loads and checks the plugin now (a few ms; the client waits for first use).
    try:
        _plugin_attributes = _C._configure(plugin_choice.path, plugin_choice.name, plugin_choice.hint,
                                           int(_env.value("TORCH_PJRT_CPU_DEVICES")))
    except RuntimeError as _err:
        raise _load_record.PluginUnavailable(str(_err)) from _err

    if torch._C._get_privateuse1_backend_name() != "tpu":
        torch.utils.rename_privateuse1_backend("tpu")

    from . import device_module

    torch._register_device_module("tpu", device_module)
    torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)

    from . import _accelerate

    _accelerate.install()  # Trainer and Accelerator default to tpu (see _accelerate.py)

    from . import _dynamo_hook  # noqa: F401  (torch.compile(backend="tpu"))
    from . import kernels  # noqa: F401  (transformers' layers on tpu: see kernels/__init__.py)
    from . import distributed
    from . import jax_interop  # noqa: F401  (imports jax only when used)
    from .jax_interop import JaxOp, jax_op  # noqa: F401  (torch_pjrt.jax_op: the module's entry point)

    distributed.install()  # the c10d backend "tpu_dist" (see distributed.py)

    from . import _exit_report

    _exit_report.install()  # TORCH_PJRT_EXIT_REPORT (see _exit_report.py)
except Exception as _err:
    _load_record.fail(_err)
    if not _run_as_main():
        raise ImportError(_load_record.error) from _err


@atexit.register
def _drain_at_exit():
    if _load_record.error is not None or not _C._initialized():
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
    device_count, the XLA / StableHLO versions the plugin reports, and why
    this plugin was chosen (plugin_choice)."""
    return dict(_C._runtime_info(), plugin_choice=plugin_choice.reason)


def cache_stats() -> dict:
    """Compilation cache counters: hits (in memory), disk_hits, misses
    (compiled), compile_seconds, entries, evictions, and the compile tiers
    of small programs (TORCH_PJRT_LIGHT_COMPILE_ELEMENTS,
    TORCH_PJRT_QUICK_COMPILE_ELEMENTS): light_compiles / quick_compiles
    (of the misses) with their light_compile_seconds /
    quick_compile_seconds, and size_class_compiles /
    size_class_compile_seconds: {class: count / seconds} of the programs
    over tensors padded to a size class (TORCH_PJRT_SIZE_CLASSES), which
    serve every length of their class."""
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
