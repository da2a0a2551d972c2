"""torch.tpu: the device module, shaped like torch.cuda."""
import sys

import torch

from . import _C, _platform
from . import amp  # noqa: F401  (torch.tpu.amp, like torch.cuda.amp)
from ._devices import current_device, device_count  # noqa: F401
from ._devices import index as _index
from ._dynamo_hook import _NoInductorCodegen
from .streams import Event, Stream, current_stream, default_stream, set_stream, stream  # noqa: F401

sys.modules.setdefault("torch.tpu.amp", amp)


def is_available() -> bool:
    return bool(_C._is_available())


def is_initialized() -> bool:
    # As torch.cuda's: a forked child does not have its parent's device.
    return bool(_C._initialized()) and not _C._in_bad_fork()


def init() -> None:
    _C._runtime_info()


def set_device(device) -> None:
    i = _index(device)
    if i < 0 or i >= device_count():
        raise RuntimeError(f"invalid tpu device index {i} ({device_count()} device(s) available)")
    torch.accelerator.set_device_index(i)


class device:
    """Context manager that changes the current tpu device."""

    def __init__(self, dev):
        self.idx = _index(dev)
        self.prev = -1

    def __enter__(self):
        self.prev = current_device()
        set_device(self.idx)

    def __exit__(self, *exc):
        set_device(self.prev)
        return False


def synchronize(device=None) -> None:
    """Waits for all queued work; raises the first error it produced."""
    if _called_by_profiler_exit():
        _C._settle()
        return
    _C._synchronize()


def _called_by_profiler_exit() -> bool:
    """Whether the caller is torch.autograd.profiler.profile.__exit__, which
    synchronizes the device before it disables the profiler: an error raised
    there would leave the profiler enabled for the rest of the process (and
    its state crashes the interpreter's exit). There the work is finished
    without raising, and a failure reaches the user at their next read or
    synchronize, as at the end of any trace."""
    from torch.autograd import profiler

    caller = sys._getframe(2).f_code
    return caller is profiler.profile.__exit__.__code__


def _generator(device=None) -> torch.Generator:
    return _C._default_generator(_index(device))


def manual_seed(seed: int) -> None:
    _generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for i in range(max(device_count(), 1)):
        _C._default_generator(i).manual_seed(int(seed))


def seed() -> None:
    _generator().seed()


def seed_all() -> None:
    for i in range(max(device_count(), 1)):
        _C._default_generator(i).seed()


def initial_seed() -> int:
    return _generator().initial_seed()


def get_rng_state(device="tpu") -> torch.Tensor:
    return _generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device="tpu") -> None:
    _generator(device).set_state(new_state)


def get_rng_state_all():
    return [_C._default_generator(i).get_state() for i in range(device_count())]


def set_rng_state_all(states) -> None:
    for i, s in enumerate(states):
        _C._default_generator(i).set_state(s)


def default_generators():
    return tuple(_C._default_generator(i) for i in range(device_count()))


def memory_allocated(device=None) -> int:
    # Ops still queued (strict mode) or pending (fused mode) have not made
    # their buffers yet; CUDA counts an output from its launch, so launch.
    _C._flush()
    return int(_C._memory_allocated(_index(device)))


def max_memory_allocated(device=None) -> int:
    _C._flush()
    return int(_C._max_memory_allocated(_index(device)))


def memory_reserved(device=None) -> int:
    return memory_allocated(device)


def max_memory_reserved(device=None) -> int:
    return max_memory_allocated(device)


def reset_peak_memory_stats(device=None) -> None:
    _C._flush()
    _C._reset_peak_memory_stats(_index(device))


def reset_max_memory_allocated(device=None) -> None:
    _C._reset_peak_memory_stats(_index(device))


def _plugin_memory(device=None) -> dict:
    return dict(_C._device_memory_stats(_index(device)))


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes of the device's memory, as torch.cuda.mem_get_info:
    from the plugin where it reports a limit (TPU, GPU), else the host's
    memory (XLA:CPU keeps buffers in host RAM). The same figures as
    torch.accelerator.get_memory_info."""
    return tuple(_C._mem_get_info(_index(device)))


def memory_stats(device=None) -> dict:
    """Counters named as torch.cuda.memory_stats where they mean the same.
    Buffers are freed when their last tensor dies (no caching allocator), so
    reserved equals allocated."""
    cur = memory_allocated(device)  # launches pending work first
    peak = int(_C._max_memory_allocated(_index(device)))
    s = _plugin_memory(device)
    return {
        "allocated_bytes.all.current": cur,
        "allocated_bytes.all.peak": peak,
        "active_bytes.all.current": cur,
        "active_bytes.all.peak": peak,
        "reserved_bytes.all.current": cur,
        "reserved_bytes.all.peak": peak,
        # buffers programs consumed in place (in-place updates, optimizer steps)
        "num_donated_buffers": int(_C._donated_buffers()),
        # what the plugin reports for the device (-1: not reported)
        "device_bytes_in_use": s["bytes_in_use"],
        "device_peak_bytes_in_use": s["peak_bytes_in_use"],
        "device_bytes_limit": s["bytes_limit"],
    }


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A readable report of memory_stats() and mem_get_info()."""
    st, (free, total) = memory_stats(device), mem_get_info(device)
    mib = lambda b: "n/a" if b < 0 else f"{b / 2**20:,.1f} MiB"  # noqa: E731
    rows = [("allocated (tensors)", st["allocated_bytes.all.current"], st["allocated_bytes.all.peak"]),
            ("plugin: in use", st["device_bytes_in_use"], st["device_peak_bytes_in_use"])]
    lines = [f"tpu memory summary, device {_index(device)} ({get_device_name(device)})",
             f"{'':<24}{'current':>16}{'peak':>16}"]
    lines += [f"{name:<24}{mib(cur):>16}{mib(pk):>16}" for name, cur, pk in rows]
    lines.append(f"{'free / total':<24}{mib(free):>16}{mib(total):>16}")
    if not abbreviated:
        lines.append(f"buffers donated to programs: {st['num_donated_buffers']}")
    return "\n".join(lines) + "\n"


class _TpuDeviceProperties:
    """What torch.tpu.get_device_properties() returns, like CUDA's."""

    def __init__(self, index):
        info = _C._runtime_info()
        self.index = index
        self.name = get_device_name(index)
        self.platform = info["platform"]
        self.platform_version = info["platform_version"]
        self.total_memory = mem_get_info(index)[1]
        self.is_integrated = info["policy"]["host_memory"]  # shares host memory

    def __repr__(self):
        return (f"_TpuDeviceProperties(name='{self.name}', platform='{self.platform}', "
                f"total_memory={self.total_memory // 2**20}MB)")


def get_device_properties(device=None) -> _TpuDeviceProperties:
    i = _index(device)
    if i < 0 or i >= device_count():
        raise RuntimeError(f"invalid tpu device index {i} ({device_count()} device(s) available)")
    return _TpuDeviceProperties(i)


def empty_cache() -> None:
    """Device buffers are freed as soon as their last tensor dies; there is
    no caching allocator to trim. Waits for queued work so frees complete."""
    _C._synchronize()


def get_device_name(device=None) -> str:
    info = _C._runtime_info()
    return f"tpu ({info['platform']} via PJRT)"


def get_amp_supported_dtype():
    return [torch.bfloat16, torch.float16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 works on the device: on every PJRT platform, the
    device being available. Natively (not by computing in float32 and
    rounding, as XLA:CPU does) on TPUs and NVIDIA GPUs; including_emulation
    False asks for that."""
    if not is_available():
        return False
    if including_emulation:
        return True
    return _platform.policy().native_bf16  # asks the plugin: starts the device


def _is_in_bad_fork() -> bool:
    """Whether this process was forked after its parent started the device:
    using the device here raises at once (start workers that use it with
    'spawn' or 'forkserver'). torch.manual_seed and DataLoader workers ask
    this before seeding the device."""
    return _C._in_bad_fork()


# Inductor's backend registration takes a device's code generators from its
# device module: the tpu has none (see _dynamo_hook.py).
Scheduling = PythonWrapperCodegen = CppWrapperCodegen = WrapperFxCodegen = _NoInductorCodegen
