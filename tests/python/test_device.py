"""The tpu device as a user sees it: torch.tpu, torch.accelerator, moving
and saving tensors, generated methods, autoloading and clear errors."""
import io
import os
import subprocess
import sys

import pytest
import torch

import torch_pjrt
from conftest import TPU, assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_py(code, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=300)


def test_runtime_info_names_the_xla_cpu_plugin():
    info = torch_pjrt.runtime_info()
    assert info["platform"] == "cpu"
    assert "xla_cpu_pjrt" in info["plugin_path"]
    assert info["pjrt_api_version"].startswith("0.")
    assert info["device_count"] >= 1
    assert "xla_version" in info and "stablehlo_current_version" in info


def test_device_module_like_cuda():
    assert torch.tpu.is_available()
    assert torch.tpu.device_count() >= 1
    assert torch.tpu.current_device() == 0
    torch.tpu.set_device(0)
    with torch.tpu.device(0):
        assert torch.tpu.current_device() == 0
    torch.tpu.synchronize()
    torch.tpu.empty_cache()
    assert torch.device("tpu").type == "tpu"
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator().type == "tpu"
    assert torch.accelerator.device_count() == torch.tpu.device_count()
    torch.accelerator.synchronize()
    with pytest.raises(RuntimeError, match='invalid tpu device index 1'):
        torch.tpu.set_device(torch.tpu.device_count())


def test_bf16_support_says_where_it_is_emulated():
    import torch_pjrt
    assert torch.tpu.is_bf16_supported() and torch.tpu.is_bf16_supported(including_emulation=True)
    # XLA:CPU computes bfloat16 in float32 and rounds; TPUs and GPUs have it.
    assert torch.tpu.is_bf16_supported(including_emulation=False) == (torch_pjrt.plugin_choice.name != "cpu")
    x = torch.randn(8, 8)
    got = (x.to(TPU, torch.bfloat16) @ x.to(TPU, torch.bfloat16)).cpu()
    torch.testing.assert_close(got, x.bfloat16() @ x.bfloat16(), atol=0.1, rtol=2e-2)


def test_memory_stats_track_allocations():
    torch.tpu.synchronize()
    before = torch.tpu.memory_allocated()
    torch.tpu.reset_peak_memory_stats()
    x = torch.ones(1024, 1024, device=TPU)
    torch.tpu.synchronize()
    assert torch.tpu.memory_allocated() >= before + 4 * 1024 * 1024
    assert torch.tpu.max_memory_allocated() >= torch.tpu.memory_allocated()
    del x
    torch.tpu.synchronize()
    assert torch.tpu.memory_allocated() < before + 4 * 1024 * 1024


def test_memory_counts_an_output_from_its_launch():
    """As on CUDA, an op's output counts as soon as the op is issued, though
    strict mode runs it later and fused mode later still."""
    torch.tpu.synchronize()
    before = torch.tpu.memory_allocated()
    x = torch.randn(1024, 1024, device=TPU)  # no synchronize
    assert torch.tpu.memory_allocated() >= before + 4 * 1024 * 1024
    assert torch.tpu.memory_stats()["allocated_bytes.all.current"] >= before + 4 * 1024 * 1024
    del x


def test_memory_queries_like_cuda():
    free, total = torch.tpu.mem_get_info()
    assert 0 < free <= total
    props = torch.tpu.get_device_properties(0)
    assert props.total_memory == total and props.name == torch.tpu.get_device_name(0)
    if torch_pjrt.runtime_info()["platform"] == "cpu":  # buffers live in host RAM
        assert total == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    st = torch.tpu.memory_stats()
    for k in ("allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
              "active_bytes.all.current", "num_donated_buffers"):
        assert k in st
    assert st["reserved_bytes.all.current"] == st["allocated_bytes.all.current"]  # no caching allocator
    summary = torch.tpu.memory_summary()
    assert "allocated" in summary and "free / total" in summary
    n = torch.tpu.device_count()
    with pytest.raises(RuntimeError, match=f"invalid tpu device index {n}"):
        torch.tpu.get_device_properties(n)
    with pytest.raises(IndexError, match=f"invalid tpu device index {n}"):
        torch.tpu.mem_get_info(n)


def test_generated_methods_and_module_to():
    x = torch.randn(3)
    t = x.tpu()
    assert t.is_tpu and t.device.type == "tpu"
    assert_close(t, x)
    m = torch.nn.Linear(3, 2).tpu()
    assert next(m.parameters()).device.type == "tpu"
    s = x.untyped_storage().tpu()
    assert s.device.type == "tpu"


def test_save_and_load_roundtrip():
    x = torch.randn(4, 5)
    t = x.to(TPU)
    view = t[1:, ::2]
    buf = io.BytesIO()
    torch.save({"t": t, "view": view, "cpu": x}, buf)
    buf.seek(0)
    d = torch.load(buf)
    assert d["t"].device.type == "tpu"
    assert_close(d["t"], x)
    assert_close(d["view"], x[1:, ::2])
    buf.seek(0)
    d = torch.load(buf, map_location="cpu")
    assert d["t"].device.type == "cpu"
    assert torch.equal(d["t"], x)
    buf.seek(0)
    d = torch.load(buf, map_location="tpu")
    assert d["cpu"].device.type == "tpu"


def test_state_dict_save_load_model():
    m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 2)).to(TPU)
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf, map_location="cpu")
    m2 = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 2))
    m2.load_state_dict(sd)
    for a, b in zip(m.parameters(), m2.parameters()):
        assert torch.equal(a.detach().cpu(), b.detach())


@pytest.mark.once("checks a fresh process's start")
def test_autoload_through_import_torch_alone():
    r = run_py("import torch; x = torch.ones(2, device='tpu'); print(x.device, x.cpu().sum().item())")
    assert r.returncode == 0, r.stderr
    assert "tpu:0 2.0" in r.stdout


def test_bad_inputs_raise_and_process_keeps_working():
    a = torch.randn(3, device=TPU)
    with pytest.raises(RuntimeError, match="same device"):
        a * torch.randn(3)
    with pytest.raises(TypeError, match="float8_e4m3fn"):
        torch.zeros(2, dtype=torch.float8_e4m3fn, device=TPU)
    with pytest.raises(RuntimeError, match='invalid tpu device index 7'):
        torch.ones(2, device="tpu:7")
    assert_close(a * 2, a.cpu() * 2)


def test_cache_reuses_programs_for_new_scalars():
    x = torch.randn(7, 3, device=TPU)
    torch.tpu.synchronize()
    (x * 0.5).cpu()
    torch_pjrt.reset_cache_stats()
    for s in [0.37, 0.38, 1.5, -2.0]:
        (x * s).cpu()
    st = torch_pjrt.cache_stats()
    assert st["misses"] == 0 and st["hits"] >= 4


@pytest.mark.allow_fallback("special_bessel_j0")
def test_fallback_runs_on_cpu_and_is_counted():
    x = torch.randn(5, 5)
    # an op with no native lowering: correct through the CPU fallback
    r = torch.special.bessel_j0(x.to(TPU))
    assert_close(r, torch.special.bessel_j0(x))
    assert any(k.startswith("special_bessel_j0") for k in torch_pjrt.fallback_stats())


@pytest.mark.once("sets the eager modes it checks itself")
def test_debug_mode_runs_synchronously():
    prev = torch_pjrt.get_eager_mode()
    torch_pjrt.set_eager_mode("debug")
    try:
        assert torch_pjrt.get_eager_mode() == "debug"
        x = torch.randn(4, device=TPU)
        assert_close(x + 1, x.cpu() + 1)
    finally:
        torch_pjrt.set_eager_mode(prev)


def test_pinned_host_memory_is_known_pinned_and_feeds_the_device():
    x = torch.randn(64, 3)
    p = x.pin_memory()
    assert p.is_pinned() and p[5:].is_pinned() and not x.is_pinned()
    assert torch.equal(p, x)
    t = p.to("tpu", non_blocking=True)
    assert torch.equal(t.cpu(), x)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x), batch_size=16, pin_memory=True)
    batches = [b for (b,) in loader]
    assert all(b.is_pinned() for b in batches)
    assert torch.equal(torch.cat([b.to("tpu") for b in batches]).cpu(), x)


def test_torch_accelerator_memory_calls_reach_the_device():
    # accelerate's release_memory calls torch.accelerator.empty_cache(),
    # which requires a DeviceAllocator behind the device.
    # Once first: what stays resident after a first use (the generator's
    # state, cached scalars) is part of the base, not of x.
    del_me = torch.randn(256, 256, device="tpu") * 2
    del del_me
    torch.accelerator.empty_cache()
    base = torch.accelerator.memory_allocated()
    torch.accelerator.reset_peak_memory_stats()
    x = torch.randn(256, 256, device="tpu") * 2
    assert torch.accelerator.memory_allocated() - base >= x.numel() * 4
    assert torch.accelerator.memory_allocated() == torch.tpu.memory_allocated()
    assert torch.accelerator.max_memory_allocated() >= torch.accelerator.memory_allocated()
    stats = torch.accelerator.memory_stats()
    assert stats["allocated_bytes.all.current"] == torch.tpu.memory_allocated()
    free, total = torch.accelerator.get_memory_info()
    assert 0 < free <= total
    del x
    torch.accelerator.empty_cache()
    assert torch.accelerator.memory_allocated() == base
    with pytest.raises(IndexError, match="invalid tpu device index"):
        torch.tpu.mem_get_info(torch.tpu.device_count())
