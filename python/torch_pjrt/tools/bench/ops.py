"""Per-op latency of small ops beside PyTorch CPU eager, and strict mode's
`a + b` beside the launch floor under it."""
import os
import statistics
import threading
import time

import torch

import torch_pjrt

from .timing import interleaved, no_sync, process_mode


def bench_ops(repeats):
    cases = {
        "add_1": ((1,), (1,), torch.add),
        "add_1k": ((1024,), (1024,), torch.add),
        "mm_64": ((64, 64), (64, 64), torch.mm),
        "mm_256": ((256, 256), (256, 256), torch.mm),
        "softmax_64x1024": ((64, 1024), None, lambda a, b: torch.softmax(a, -1)),
    }
    out = {}
    for name, (sa, sb, f) in cases.items():
        a, b = torch.randn(sa), (torch.randn(sb) if sb else None)
        ta, tb = a.to("tpu"), (b.to("tpu") if sb else None)
        inner = 20 if "256" in name else 100
        r = interleaved({"cpu": (lambda: [f(a, b) for _ in range(inner)], no_sync, None),
                         "tpu": (lambda: [f(ta, tb) for _ in range(inner)], torch.tpu.synchronize, "strict")},
                        max(repeats, 5))
        cpu, tpu = r["cpu"][0] / inner, r["tpu"][0] / inner
        out[name] = {"torch_cpu_us": cpu * 1e6, "tpu_strict_us": tpu * 1e6, "ratio": tpu / cpu}
        print(f"  {name:<18} torch cpu {cpu * 1e6:9.1f} us   tpu strict {tpu * 1e6:9.1f} us   {tpu / cpu:6.2f}x")
    return out


def _thread_cpu_seconds():
    """{thread id: (name, CPU seconds)} of this process's threads, from
    /proc: schedstat's nanoseconds on a CPU where the kernel keeps them,
    else stat's user + system clock ticks (empty without /proc)."""
    out = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    tick = os.sysconf("SC_CLK_TCK")
    for tid in tids:
        base = f"/proc/self/task/{tid}"
        try:
            with open(f"{base}/comm") as f:
                name = f.read().strip()
            try:
                with open(f"{base}/schedstat") as f:
                    seconds = int(f.read().split()[0]) / 1e9
            except (OSError, ValueError, IndexError):
                with open(f"{base}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                seconds = (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            continue
        out[int(tid)] = (name, seconds)
    return out


def _cpu_per_op(fn, ops):
    """CPU microseconds per op that fn() costs each kind of thread: the one
    calling it (dispatch and recording; its own clock, which /proc only
    brings up to date at a switch), the executor (launching), and the rest
    (the plugin's own threads, which run the programs)."""
    me = threading.get_native_id()
    before, mine = _thread_cpu_seconds(), time.thread_time()
    fn()
    mine, after = time.thread_time() - mine, _thread_cpu_seconds()
    kinds = {"dispatching_thread": mine, "executor": 0.0, "plugin_threads": 0.0}
    for tid, (name, t) in after.items():
        if tid != me:
            kinds["executor" if name == "tpu-executor" else "plugin_threads"] += t - before.get(tid, (name, 0.0))[1]
    return {k: 1e6 * v / ops for k, v in kinds.items()}


def bench_launch_floor(repeats, inner=2000):
    """Strict-mode `a + b` in a loop (then one sync) beside the floor under
    it: the same add launched straight through the PJRT runtime with its
    completion event, as the engine launches every op. The ratio is the
    device layer's own per-op cost: dispatch, recording, the launch queue.
    Where the time goes is reported too: the CPU each kind of thread spends
    per op, on both sides (a side can only be as fast as its busiest
    thread, and all of them share the machine's cores)."""
    out = {}

    def adds(a, b, count):
        # Each result dropped at once, as the floor drops each launch's
        # output: neither side keeps thousands of buffers alive.
        for _ in range(count):
            a + b

    for n in (1, 1024):
        a, b = torch.randn(n, device="tpu"), torch.randn(n, device="tpu")
        floors = []  # the floor's own per-launch time (its side also times launches without the event)
        r = interleaved({"floor": (lambda: floors.append(torch_pjrt._C._launch_floor(n, inner)["launch_event_us"]),
                                   no_sync, None),
                         "tpu": (lambda: adds(a, b, inner), torch.tpu.synchronize, "strict")},
                        max(repeats, 5))
        floor, tpu = statistics.median(floors) / 1e6, r["tpu"][0] / inner
        count = 10 * inner
        with process_mode("strict"):
            strict_cpu = _cpu_per_op(lambda: (adds(a, b, count), torch.tpu.synchronize()), count)
        # The floor times two loops (without and with the event): per op, half.
        floor_cpu = _cpu_per_op(lambda: torch_pjrt._C._launch_floor(n, count), 2 * count)
        out[f"add_{n}"] = {"launch_floor_us": floor * 1e6, "tpu_strict_us": tpu * 1e6, "ratio": tpu / floor,
                           "strict_cpu_us_per_op": strict_cpu, "floor_cpu_us_per_op": floor_cpu}
        print(f"  add of {n:<5} launch floor {floor * 1e6:7.2f} us   tpu strict {tpu * 1e6:7.2f} us   "
              f"{tpu / floor:5.2f}x the floor")
        for side, cpu in (("strict", strict_cpu), ("floor", floor_cpu)):
            print(f"    {side:<6} CPU us per op: " + "  ".join(f"{k} {v:5.2f}" for k, v in cpu.items()))
    return out


def bench_fused_record(repeats, inner=2000):
    """Fused mode's host cost of recording an op: `a + b` of one element in
    a loop, nothing launched per op (each result dropped, so a cluster
    holds nothing to compute), beside PyTorch CPU eager's whole `a + b` of
    one element. Both sides are dispatch, dtype rules and an output tensor;
    the tpu side records a node where the CPU adds."""
    a, b = torch.randn(1), torch.randn(1)
    ta, tb = a.to("tpu"), b.to("tpu")

    def adds(x, y):
        for _ in range(inner):
            x + y

    r = interleaved({"cpu": (lambda: adds(a, b), no_sync, None),
                     "tpu": (lambda: adds(ta, tb), no_sync, "fused")}, max(repeats, 7))
    torch.tpu.synchronize()
    cpu, tpu = r["cpu"][0] / inner, r["tpu"][0] / inner
    print(f"  fused record of add_1  torch cpu {cpu * 1e6:6.2f} us   tpu fused {tpu * 1e6:6.2f} us   "
          f"{tpu / cpu:5.2f}x")
    return {"torch_cpu_us": cpu * 1e6, "tpu_fused_record_us": tpu * 1e6, "ratio": tpu / cpu}


def ratios(res):
    return {
        "fused_record_over_torch_cpu_add": res["fused_record"]["ratio"],
        "strict_small_op_over_torch_cpu": res["ops"]["add_1k"]["ratio"],
        # the worse of the two sizes
        "strict_small_op_over_launch_floor": max(c["ratio"] for c in res["launch_floor"].values()),
    }
