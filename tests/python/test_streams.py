"""torch.tpu streams and events (python/torch_pjrt/streams.py over the
device guard and csrc/engine/event.h), used as CUDA code uses them."""
import time

import pytest
import torch

import torch_pjrt
from conftest import assert_close, to_cpu


def test_streams_are_distinct_objects_and_the_current_one_is_switched():
    default = torch.tpu.current_stream()
    assert default == torch.tpu.default_stream() and default.stream_id == 0
    assert default.device == torch.device("tpu", 0)
    s1, s2 = torch.tpu.Stream(), torch.tpu.Stream()
    assert s1 != s2 and s1 != default
    with torch.tpu.stream(s1):
        assert torch.tpu.current_stream() == s1
        assert torch.accelerator.current_stream() == s1
        with s2:
            assert torch.tpu.current_stream() == s2
        assert torch.tpu.current_stream() == s1
    assert torch.tpu.current_stream() == default
    torch.tpu.set_stream(s2)
    try:
        assert torch.accelerator.current_stream() == s2
    finally:
        torch.tpu.set_stream(default)


def test_work_across_streams_matches_the_cpu():
    a = torch.randn(64, 64)
    x = a.to("tpu")
    side = torch.tpu.Stream()
    side.wait_stream(torch.tpu.current_stream())
    with torch.tpu.stream(side):
        y = (x @ x).relu()
        done = side.record_event()
    torch.tpu.current_stream().wait_event(done)
    z = y + x
    assert_close(z, (a @ a).relu() + a)
    side.synchronize()
    assert side.query()


def test_event_marks_the_work_before_it():
    e = torch.tpu.Event()
    assert e.query()  # never recorded: nothing to wait for
    x = torch.randn(512, 512, device="tpu")
    for _ in range(8):
        x = x @ x / 512
    e.record()
    e.synchronize()
    assert e.query()
    assert torch.tpu.current_stream().query()
    assert torch.isfinite(to_cpu(x)).all()


def test_elapsed_time_measures_the_device_work_between_events():
    x = torch.randn(768, 768, device="tpu")

    def work(x):
        for _ in range(6):
            x = x @ x / 768
        return x

    work(x).cpu()  # compiled before timing: a compile is host time, not device work
    torch.tpu.synchronize()
    start, end = torch.tpu.Event(enable_timing=True), torch.tpu.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    x = work(x)
    end.record()
    end.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1e3
    ms = start.elapsed_time(end)
    assert 0 < ms <= wall_ms * 1.05 + 1, (ms, wall_ms)
    # Mostly device work: the events see most of the wall time.
    assert ms >= 0.5 * wall_ms, (ms, wall_ms)


def test_elapsed_time_needs_timing_and_recorded_events():
    timed, untimed = torch.tpu.Event(enable_timing=True), torch.tpu.Event()
    timed.record()
    untimed.record()
    with pytest.raises((ValueError, RuntimeError), match="enable_timing"):
        timed.elapsed_time(untimed)
    with pytest.raises((ValueError, RuntimeError)):
        timed.elapsed_time(torch.tpu.Event(enable_timing=True))


def test_interprocess_events_are_refused():
    with pytest.raises(RuntimeError, match="processes"):
        torch.tpu.Event(interprocess=True)


@pytest.mark.once("sets the eager modes it checks itself")
def test_recording_in_fused_mode_issues_the_pending_cluster():
    with torch_pjrt.eager_mode("fused"):
        x = torch.randn(256, 256, device="tpu")
        start, end = torch.tpu.Event(enable_timing=True), torch.tpu.Event(enable_timing=True)
        start.record()
        y = (x @ x).sin() @ x
        end.record()  # the cluster computing y is launched here
        end.synchronize()
        assert end.query() and start.elapsed_time(end) > 0
        c = to_cpu(x)
        # matmul sums in another order than the CPU's, and sin passes that on
        assert_close(y, (c @ c).sin() @ c, atol=1e-3, rtol=1e-4)
