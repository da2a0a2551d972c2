"""The platform policy: one table (csrc/engine/platform.h) decides what
differs by platform, and the Python layer reads the same one."""
import pathlib
import re

import torch

import torch_pjrt
from torch_pjrt import _platform

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_policy_of_the_running_plugin():
    p = _platform.policy()
    info = torch_pjrt.runtime_info()
    assert p.platform is _platform.Platform.CPU  # the suite runs on XLA:CPU
    assert p._asdict() == {**info["policy"], "platform": p.platform}
    assert p.f64 and p.host_memory and p.host_functions and p.weight_copies and not p.native_bf16
    assert torch.tpu.get_device_properties(0).is_integrated is True
    assert torch.tpu.is_bf16_supported(including_emulation=False) is False
    assert _platform.jax_platform() == "cpu"


def test_override_applies_another_platforms_rules():
    try:
        _platform.set_override("tpu")
        p = _platform.policy()
        assert p.platform is _platform.Platform.TPU
        assert not p.f64 and p.native_bf16 and not p.host_functions and not p.weight_copies
        assert torch.tpu.is_bf16_supported(including_emulation=False) is True
        assert not torch_pjrt._C._f64_supported()
        _platform.set_override("cpu")  # the plugin's own platform, still without host functions
        assert _platform.policy().f64 and not _platform.policy().host_functions
    finally:
        _platform.set_override("")
    assert _platform.policy().host_functions and torch_pjrt._C._f64_supported()


def test_no_platform_name_compares_outside_the_policy():
    # A behaviour that depends on the platform reads a policy field; a
    # comparison with a plugin's name elsewhere would bypass the table.
    pattern = re.compile(r'(platform\(\)|\["platform"\]|get\("platform"\))\s*(==|!=|in\b)')
    found = [f"{path.relative_to(ROOT)}:{i}" for path in [*ROOT.glob("csrc/**/*.cc"), *ROOT.glob("csrc/**/*.h"),
                                                           *ROOT.glob("python/torch_pjrt/**/*.py")]
             for i, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []
