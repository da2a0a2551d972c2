"""What the Python layer does differently by platform, read from the one
table that decides it (csrc/engine/platform.h, PlatformPolicy): code asks
for a field of policy(), never compares plugin names."""
import enum
from typing import NamedTuple

from . import _C


class Platform(enum.Enum):
    CPU = "cpu"  # XLA:CPU
    GPU = "gpu"  # XLA:GPU (CUDA or ROCm)
    TPU = "tpu"  # libtpu
    OTHER = "other"


class Policy(NamedTuple):
    platform: Platform
    f64: bool  # float64 / complex128 held
    native_bf16: bool  # bfloat16 computed natively, not emulated in float32
    host_memory: bool  # buffers are host memory (the device is "integrated")
    host_functions: bool  # programs may call native host functions
    weight_copies: bool  # matmul weights read from [in, out] copies (_dot_layout)


_policy = None


def policy() -> Policy:
    """The running plugin's policy (starts the device on first call)."""
    global _policy
    if _policy is None:
        p = _C._runtime_info()["policy"]
        _policy = Policy(Platform(p["platform"]), p["f64"], p["native_bf16"], p["host_memory"],
                         p["host_functions"], p["weight_copies"])
    return _policy


def set_override(name: str) -> None:
    """Applies another platform's rules ("tpu": no float64) on any plugin,
    for tests; "" restores the plugin's."""
    global _policy
    _C._set_platform_override(name)
    _policy = None


def jax_platform() -> str:
    """The name jax.export targets for the running plugin."""
    p = policy().platform
    if p is Platform.GPU:  # jax names the GPU platform by its vendor stack
        return "rocm" if "rocm" in _C._runtime_info()["platform"].lower() else "cuda"
    return p.value
