"""python -m torch_pjrt bench --dist: all_reduce across two local ranks,
tpu tensors through tpu_dist beside gloo on CPU tensors in the same ranks,
first as processes (the host transport), then as threads of one process on
tpu:0 and tpu:1 (the device transport). Writes dist.json.

The ranks are processes running this module: `python -m
torch_pjrt.tools.bench.dist rank RANK WORLD STORE SIZES REPEATS OUT` runs one
rank, `... threads WORLD SIZES REPEATS OUT_DIR` all ranks as threads."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import torch_pjrt

from .timing import one_thread, write_json

DIST_SIZES = (4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20)


def size_label(nbytes):
    """4096 -> "4KiB", 1 << 20 -> "1MiB": the size in ratio keys and tables."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{nbytes >> shift}{unit}"
    return f"{nbytes}B"


def inner_count(nbytes):
    """Collectives per timed sample: enough that a small one's sample is
    not all timer and barrier, one for the large ones."""
    return max(1, min(50, (4 << 20) // nbytes))


def _worker(rank, world, store, sizes, repeats, out):
    """One rank of bench_dist: every size, the two sides alternating round
    by round, each sample started together by a gloo barrier. Writes this
    rank's per-sample seconds (per collective) to out. store: a file path
    (ranks as processes) or a shared c10d store (ranks as threads, rank r
    on tpu:r)."""
    import datetime
    import torch.distributed as dist
    torch.set_num_threads(1)
    where = {"init_method": f"file://{store}"} if isinstance(store, str) else {"store": store}
    if not isinstance(store, str):
        torch.tpu.set_device(rank)
    dist.init_process_group("cpu:gloo,tpu:tpu_dist", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=600), **where)
    # The barrier that starts each sample runs on a group of its own, so
    # neither side's backend is in it.
    start = dist.new_group(backend="gloo")
    result = {"samples": {}, "checked": {}}
    for nbytes in sizes:
        n = nbytes // 4
        # correct first: ranks contribute rank + 1, every element sums to
        # world * (world + 1) / 2
        d, c = torch.full((n,), rank + 1.0, device="tpu"), torch.full((n,), rank + 1.0)
        dist.all_reduce(d)
        dist.all_reduce(c)
        want = world * (world + 1) / 2
        result["checked"][str(nbytes)] = bool((d.cpu() == want).all() and (c == want).all())
        d, c = torch.zeros(n, device="tpu"), torch.zeros(n)  # zeros stay zeros however often summed
        inner = inner_count(nbytes)

        def tpu_side():
            for _ in range(inner):
                dist.all_reduce(d)
            torch.tpu.synchronize()

        def gloo_side():
            for _ in range(inner):
                dist.all_reduce(c)

        sides = {"tpu_dist": tpu_side, "gloo": gloo_side}
        samples = {name: [] for name in sides}
        for round_ in range(repeats + 1):  # round 0 warms up (compiles the copies)
            for name, fn in sides.items():
                dist.barrier(group=start)
                t0 = time.perf_counter()
                fn()
                t = (time.perf_counter() - t0) / inner
                if round_:
                    samples[name].append(t)
        result["samples"][str(nbytes)] = samples
    result["stats"] = torch_pjrt.distributed.stats()
    dist.destroy_process_group()
    with open(out, "w") as f:
        json.dump(result, f)


def _threads(world, sizes, repeats, out_dir):
    """All ranks as threads of this process, rank r on tpu:r."""
    import threading

    import torch.distributed as dist
    from torch.testing._internal.distributed.multi_threaded_pg import _install_threaded_pg
    _install_threaded_pg()
    torch._C._distributed_c10d._set_thread_isolation_mode(True)
    store = dist.HashStore()
    ranks = [threading.Thread(target=_worker, args=(r, world, store, sizes, repeats, f"{out_dir}/rank{r}.json"))
             for r in range(world)]
    for t in ranks:
        t.start()
    for t in ranks:
        t.join()


def summary(ranks, sizes):
    """Per-rank samples -> per size and side the median over rounds of the
    slowest rank's time (a collective is done when its last rank is), the
    bandwidth that time gives (bytes reduced / s; for two ranks the bus
    bandwidth of nccl-tests is the same figure), and the time ratios
    tpu_dist_over_gloo_<size>."""
    results, ratios = {}, {}
    for nbytes in sizes:
        row = {}
        for side in ("tpu_dist", "gloo"):
            per_round = [max(r["samples"][str(nbytes)][side][i] for r in ranks)
                         for i in range(min(len(r["samples"][str(nbytes)][side]) for r in ranks))]
            t = statistics.median(per_round)
            row[f"{side}_us"] = t * 1e6
            row[f"{side}_gb_per_s"] = nbytes / t / 1e9
        row["tpu_dist_over_gloo"] = row["tpu_dist_us"] / row["gloo_us"]
        label = size_label(nbytes)
        results[label] = row
        ratios[f"tpu_dist_over_gloo_{label}"] = row["tpu_dist_over_gloo"]
    return results, ratios


def bench_dist(sizes, repeats, world=2, timeout_s=1800, threads=False):
    """all_reduce (float32, SUM) across `world` local processes on
    loopback, each on its own tpu:0, as test_distributed.py runs them (the
    host transport); with threads, across `world` threads of one process,
    rank r on tpu:r (the device transport)."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ)
        one_thread(env)
        outs = [os.path.join(d, f"rank{r}.json") for r in range(world)]
        me = [sys.executable, "-m", __spec__.name]
        if threads:
            env["TORCH_PJRT_CPU_DEVICES"] = str(world)
            procs = [subprocess.Popen(me + ["threads", str(world), json.dumps(list(sizes)), str(repeats), d],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
        else:
            procs = [subprocess.Popen(me + ["rank", str(r), str(world), os.path.join(d, "store"),
                                            json.dumps(list(sizes)), str(repeats), outs[r]],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for r in range(world)]
        errs = []
        try:
            for p in procs:
                errs.append(p.communicate(timeout=timeout_s)[1])
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        for p, err in zip(procs, errs):
            if p.returncode != 0:
                raise RuntimeError(f"bench rank exited {p.returncode}:\n{err[-3000:]}")
        ranks = []
        for o in outs:
            with open(o) as f:
                ranks.append(json.load(f))
    results, ratios = summary(ranks, sizes)
    print(f"  {'size':>6} {'tpu_dist us':>12} {'gloo us':>10} {'tpu_dist GB/s':>14} {'gloo GB/s':>10} "
          f"{'tpu_dist/gloo':>14}")
    for label, row in results.items():
        print(f"  {label:>6} {row['tpu_dist_us']:12.1f} {row['gloo_us']:10.1f} {row['tpu_dist_gb_per_s']:14.3f} "
              f"{row['gloo_gb_per_s']:10.3f} {row['tpu_dist_over_gloo']:13.2f}x")
    checked = all(all(r["checked"].values()) for r in ranks)
    return {"world": world, "repeats": repeats, "dtype": "float32", "op": "all_reduce SUM",
            "results": results, "ratios": ratios, "results_correct": checked,
            "stats_rank0": ranks[0]["stats"]}


def main(a):
    """--dist: both transports, written to dist.json; exits 1 where a
    result was wrong."""
    print("all_reduce, 2 processes: tpu tensors through tpu_dist (host transport) beside gloo on CPU tensors")
    res = bench_dist(DIST_SIZES, a.repeats)
    print("all_reduce, 2 threads on tpu:0 and tpu:1: tpu_dist's device transport beside gloo on CPU tensors")
    dev = bench_dist(DIST_SIZES, a.repeats, threads=True)
    res["device_transport"] = dev
    for label, ratio in dev["ratios"].items():
        res["ratios"][label.replace("tpu_dist_over", "device_transport_over")] = ratio
    res["results_correct"] = res["results_correct"] and dev["results_correct"]
    res["runtime"] = torch_pjrt.runtime_info()
    if not res["results_correct"]:
        print("warning: an all_reduce result was wrong (see dist.json)")
    path = write_json(a.out, "dist.json", res)
    print("ratios:", json.dumps(res["ratios"], indent=2))
    print(f"wrote {path}")
    return 0 if res["results_correct"] else 1


if __name__ == "__main__":
    kind, args = sys.argv[1], sys.argv[2:]
    if kind == "rank":
        rank, world, store, sizes, repeats, out = args
        _worker(int(rank), int(world), store, json.loads(sizes), int(repeats), out)
    else:
        world, sizes, repeats, out_dir = args
        _threads(int(world), json.loads(sizes), int(repeats), out_dir)
