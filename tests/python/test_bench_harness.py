"""The benchmark harness's timing loop (no timed assertions: the figures
themselves are for `python -m torch_pjrt bench`)."""
import os

import pytest
import torch

import torch_pjrt
from torch_pjrt.tools.bench import dist, ops, timing

pytestmark = pytest.mark.once("the bench picks its own modes")


def test_interleaved_runs_each_side_per_round_in_its_mode():
    before = torch_pjrt.get_eager_mode()
    seen = []
    x = torch.randn(8, device="tpu")

    def side(name):
        def fn():
            seen.append((name, torch_pjrt.get_eager_mode()))
            (x + 1).sum()
        return fn

    r = timing.interleaved({"cpu": (side("cpu"), timing.no_sync, None),
                            "fused": (side("fused"), torch.tpu.synchronize, "fused"),
                            "strict": (side("strict"), torch.tpu.synchronize, "strict")}, repeats=3, warmup=1)
    assert set(r) == {"cpu", "fused", "strict"}
    assert all(t > 0 and c >= 0 for t, c in r.values())
    # warm-up once per side, then rounds alternating the sides
    assert [n for n, _ in seen[3:]] == ["cpu", "fused", "strict"] * 3
    assert all(m == "fused" for n, m in seen if n == "fused")
    assert all(m == "strict" for n, m in seen if n == "strict")
    assert all(m == before for n, m in seen if n == "cpu")  # a PyTorch side keeps the caller's mode
    assert torch_pjrt.get_eager_mode() == before  # and the caller gets its mode back


def test_moe_ratios_are_speed_ups_and_none_where_a_side_failed():
    from torch_pjrt.tools.bench import moe
    row = {"tpu_kernel_ms_per_token": 10.0, "tpu_grouped_mm_ms_per_token": None,
           "tpu_batched_mm_ms_per_token": 80.0, "tpu_eager_ms_per_token": 40.0,
           "torch_cpu_grouped_mm_ms_per_token": 25.0, "roofline_ms": 5.0, "failed": {"tpu_grouped_mm": "E"}}
    r = moe.ratios({"rows": {"static_b1": dict(row, tpu_kernel_ms_per_token=1.0), "dynamic_b64": row}})
    assert r == {"kernel_speedup_over_batched_mm_b64": 8.0, "kernel_speedup_over_best_standard_b64": 4.0,
                 "kernel_speedup_over_torch_cpu_grouped_mm_b64": 2.5, "kernel_over_roofline_b64": 2.0}
    r = moe.ratios({"rows": {"dynamic_b64": dict(row, tpu_kernel_ms_per_token=None)}})
    assert set(r.values()) == {None}
    # Both caches at batch 64: the static row's ratios come with a prefix.
    r = moe.ratios({"rows": {"dynamic_b64": row, "static_b64": dict(row, tpu_kernel_ms_per_token=5.0)}})
    assert r["kernel_speedup_over_batched_mm_b64"] == 8.0 and r["static_kernel_speedup_over_batched_mm_b64"] == 16.0
    assert r["static_kernel_over_roofline_b64"] == 1.0 and len(r) == 8


def test_dist_size_labels_and_samples_per_size():
    assert [dist.size_label(n) for n in dist.DIST_SIZES] == ["4KiB", "64KiB", "1MiB", "16MiB", "64MiB"]
    assert dist.size_label(1536) == "1536B"
    assert dist.inner_count(4 << 10) == 50 and dist.inner_count(1 << 20) == 4 and dist.inner_count(64 << 20) == 1


def test_dist_summary_takes_the_slowest_rank_per_round_then_the_median():
    def rank(tpu, gloo):
        return {"samples": {"4096": {"tpu_dist": tpu, "gloo": gloo}}}
    ranks = [rank([1e-3, 5e-3, 2e-3], [1e-3, 1e-3, 1e-3]), rank([3e-3, 1e-3, 1e-3], [2e-3, 1e-3, 4e-3])]
    results, ratios = dist.summary(ranks, [4096])
    row = results["4KiB"]
    # rounds' slowest ranks: tpu_dist 3, 5, 2 ms -> 3 ms; gloo 2, 1, 4 ms -> 2 ms
    assert abs(row["tpu_dist_us"] - 3000) < 1e-6 and abs(row["gloo_us"] - 2000) < 1e-6
    assert abs(row["gloo_gb_per_s"] - 4096 / 2e-3 / 1e9) < 1e-12
    assert ratios == {"tpu_dist_over_gloo_4KiB": row["tpu_dist_over_gloo"]}
    assert abs(ratios["tpu_dist_over_gloo_4KiB"] - 1.5) < 1e-9


def test_dist_bench_runs_two_ranks_and_checks_their_results():
    r = dist.bench_dist((4 << 10,), repeats=1)
    assert r["results_correct"] and set(r["results"]) == {"4KiB"}
    assert set(r["ratios"]) == {"tpu_dist_over_gloo_4KiB"}
    assert r["stats_rank0"]["host_collectives"] >= 1 + dist.inner_count(4 << 10) * 2


def test_dist_bench_with_ranks_as_threads_takes_the_device_transport():
    r = dist.bench_dist((4 << 10,), repeats=1, threads=True)
    assert r["results_correct"] and set(r["ratios"]) == {"tpu_dist_over_gloo_4KiB"}
    # every tpu all_reduce on the devices: the check, then warm-up and timed rounds
    assert r["stats_rank0"]["device_collectives"] >= 1 + dist.inner_count(4 << 10) * 2
    assert r["stats_rank0"]["host_bytes"] == 0


def test_launch_floor_beside_strict_adds():
    floor = torch_pjrt._C._launch_floor(16, 20)
    assert set(floor) == {"launch_us", "launch_event_us"} and all(v > 0 for v in floor.values())
    r = ops.bench_launch_floor(repeats=1, inner=20)
    assert set(r) == {"add_1", "add_1024"}
    for row in r.values():
        assert row["launch_floor_us"] > 0 and row["tpu_strict_us"] > 0
        assert abs(row["ratio"] - row["tpu_strict_us"] / row["launch_floor_us"]) < 1e-9
        kinds = {"dispatching_thread", "executor", "plugin_threads"}
        assert set(row["strict_cpu_us_per_op"]) == set(row["floor_cpu_us_per_op"]) == kinds
        if os.path.exists("/proc/self/schedstat"):  # nanosecond CPU clocks (else 10 ms ticks)
            # Strict mode records on the calling thread and launches on the
            # executor; the floor launches from the calling thread alone.
            strict, fl = row["strict_cpu_us_per_op"], row["floor_cpu_us_per_op"]
            assert strict["dispatching_thread"] > 0 and strict["executor"] > 0, strict
            assert fl["dispatching_thread"] > 0 and fl["executor"] < 0.1 * fl["dispatching_thread"], fl


def test_launch_floor_rejects_bad_sizes():
    with pytest.raises(RuntimeError, match="must be positive"):
        torch_pjrt._C._launch_floor(0, 10)


_PRODUCTS_CPU = r"""
import resource, time, torch, torch_pjrt
a, b = torch.randn(512, 512, device="tpu"), torch.randn(512, 512, device="tpu")
keep = [a @ b for _ in range(2)]
torch.tpu.synchronize()
r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
keep += [a @ b for _ in range(40)]
torch.tpu.synchronize()
r1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
print((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) / (t1 - t0))
"""


def test_one_thread_leaves_xla_one_thread():
    # The bench's one-thread setting reaches XLA:CPU's pool: its products
    # busy one core at a time (without NPROC they take every core). A
    # choice already made is kept.
    env = {"XLA_FLAGS": "--xla_cpu_use_xnnpack=false"}
    timing.one_thread(env)
    assert env == {"XLA_FLAGS": "--xla_cpu_use_xnnpack=false", "NPROC": "1"}
    env = {k: v for k, v in os.environ.items() if k not in timing.ONE_THREAD_ENV}
    timing.one_thread(env)
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _PRODUCTS_CPU], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.split()[-1]) < 1.4
