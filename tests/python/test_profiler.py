"""The device in torch.profiler (csrc/aten/profiler.cc over the engine's
timeline): programs executed, transfers, compiles and waits appear in the
trace beside the host's ATen calls, linked to the ops that caused them."""
import json
import time

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import torch_pjrt

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]


def _trace(prof, tmp_path):
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    return json.loads(path.read_text())["traceEvents"]


def _spans(events, cat):
    return [e for e in events if e.get("cat") == cat and e.get("ph") == "X"]


def test_device_activity_is_offered():
    assert ProfilerActivity.PrivateUse1 in torch.profiler.supported_activities()


def test_trace_shows_programs_transfers_and_compiles(tmp_path):
    n = int(torch.randint(1000, 100000, (1,)))  # a shape no earlier test compiled
    a = torch.randn(n)
    with profile(activities=ACTIVITIES) as prof:
        x = a.to("tpu")
        y = (x * 2).sin() + x
        back = y.cpu()
    torch.testing.assert_close(back, (a * 2).sin() + a)
    events = _trace(prof, tmp_path)
    kernels = _spans(events, "kernel")
    assert kernels, "no device programs in the trace"
    assert all(e["dur"] >= 0 and e["name"] for e in kernels)
    assert any("sin" in e["name"] or "sin" in e["args"].get("program", "") for e in kernels)
    copies = _spans(events, "gpu_memcpy")
    kinds = {e["args"]["kind"] for e in copies}
    assert {"host_to_device", "device_to_host"} <= kinds, kinds
    assert any(int(e["args"].get("bytes", 0)) == 4 * n for e in copies)
    runtime = {e["args"]["kind"] for e in _spans(events, "privateuse1_runtime")}
    assert runtime & {"compile", "load"}, runtime
    # Device spans lie on the host's clock, inside the traced interval.
    ops = _spans(events, "cpu_op")
    lo, hi = min(e["ts"] for e in ops), max(e["ts"] + e["dur"] for e in ops)
    for e in kernels:
        assert lo - 1e3 <= e["ts"] <= hi + 1e5, (e, lo, hi)


@pytest.mark.parametrize("mode,launcher", [("strict", "aten::mm"), ("debug", "aten::mm"),
                                           ("fused", "aten::_to_copy")])
@pytest.mark.once("sets the eager modes it checks itself")
def test_programs_link_to_the_ops_that_launched_them(mode, launcher):
    # Fused mode launches its cluster at the read that needs it: the
    # device time is that op's.
    x = torch.randn(256, 256, device="tpu")
    torch.tpu.synchronize()
    with torch_pjrt.eager_mode(mode):
        with profile(activities=ACTIVITIES) as prof:
            y = x @ x
            y.cpu()
    times = {e.key: e.device_time_total for e in prof.key_averages()}
    assert times.get(launcher, 0) > 0, times


def test_host_only_trace_records_no_device_spans(tmp_path):
    x = torch.randn(8, device="tpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        (x + 1).cpu()
    assert not _spans(_trace(prof, tmp_path), "kernel")


def test_a_failure_inside_a_trace_still_reaches_the_user():
    x = torch.randn(4, device="tpu")
    idx = torch.tensor([0, 9], device="tpu")
    with pytest.raises(IndexError):
        with profile(activities=ACTIVITIES):
            y = x[idx]
        y.cpu()
    assert (x + 1).cpu().shape == (4,)


@pytest.mark.once("sets the eager modes it checks itself")
def test_device_time_covers_a_device_bound_training_step_in_debug_mode(tmp_path):
    # Big matmuls, few ops: the device's work is most of the step, so the
    # summed program time must come within 20% of the wall time.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                                torch.nn.ReLU(), torch.nn.Linear(1024, 1024)).to("tpu")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(1024, 1024, device="tpu")
    target = torch.randn(1024, 1024, device="tpu")

    def step():
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    with torch_pjrt.eager_mode("debug"):
        for _ in range(2):  # compile every program first
            step().item()
        # Each step traced on its own; the closest of three counts, so a
        # busy machine's stray pause in one step does not decide.
        gaps = []
        for i in range(3):
            with profile(activities=ACTIVITIES) as prof:
                t0 = time.perf_counter()
                step()
                wall = time.perf_counter() - t0
            device = sum(e["dur"] for e in _spans(_trace(prof, tmp_path), "kernel")) / 1e6
            gaps.append((abs(device - wall) / wall, device, wall))
    best = min(gaps)
    print("device vs step (ms):", [(round(d * 1e3, 1), round(w * 1e3, 1)) for _, d, w in gaps])
    assert best[0] <= 0.2, f"device {best[1] * 1e3:.1f} ms vs step {best[2] * 1e3:.1f} ms"
