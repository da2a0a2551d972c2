"""python -m torch_pjrt bench: where the tpu device stands against PyTorch
CPU eager on the same machine, measured side by side in one run.

(a) per-op latency of small ops, (b) a training step of a small Llama-style
model per eager mode, (c) greedy decoding tokens/s per mode at batch 1 and
64, (d) time to the first training step with a cold and a warm disk cache.
With --dist instead: all_reduce across two local processes, tpu tensors
through tpu_dist beside gloo on CPU tensors (dist.json); with --moe: MoE
decoding per experts implementation (bench_moe.py, moe.json).
Medians over repeats, warm-up excluded; the sides alternate round by
round (PyTorch, then each mode) so drift on a shared machine hits all
alike. Writes bench.json and bench.png."""
import argparse
import contextlib
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import torch

import torch_pjrt

MODELS = {
    # the command line checked end to end in the test suite
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
                 num_key_value_heads=1, vocab_size=256, max_position_embeddings=128),
    # fast enough for a 2-core machine
    "small": dict(hidden_size=256, intermediate_size=704, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=4096, max_position_embeddings=512),
    # the "Bench Llama" of PERFORMANCE.md (44.6 M parameters)
    "bench-llama": dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                        num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048),
}


@contextlib.contextmanager
def _process_mode(mode):
    """The process-wide eager mode inside the block (None: unchanged),
    restored after it."""
    prev = torch_pjrt.get_eager_mode()
    if mode:
        torch_pjrt.set_eager_mode(mode)
    try:
        yield
    finally:
        torch_pjrt.set_eager_mode(prev)


def _interleaved(sides, repeats, warmup=2):
    """Times each side's fn (then its sync) once per round, rounds
    alternating the sides, so drift on a shared machine (frequency, other
    load) hits every side alike. sides: {name: (fn, sync, mode)}, mode None
    for PyTorch CPU. Returns {name: (median wall s, median process CPU s)};
    process CPU counts all threads: on a loaded machine wall time favours
    whichever side runs more threads, CPU time shows the work each side
    does."""
    def run(fn, sync, mode):
        # Process-wide, not per-thread: backward passes run on PyTorch's
        # autograd thread, which follows the process-wide mode.
        with _process_mode(mode):
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            sync()
            return time.perf_counter() - t0, time.process_time() - c0

    for fn, sync, mode in sides.values():
        for _ in range(warmup):
            run(fn, sync, mode)
    times = {name: ([], []) for name in sides}
    for _ in range(repeats):
        for name, side in sides.items():
            t, c = run(*side)
            times[name][0].append(t)
            times[name][1].append(c)
    return {name: (statistics.median(t), statistics.median(c)) for name, (t, c) in times.items()}


def _no_sync():
    pass


def _mode_sides(cpu_fn, make_tpu_fn, modes):
    """PyTorch CPU beside one side per eager mode; make_tpu_fn() builds each
    tpu side's fn (model copy included) in its own mode."""
    sides = {"torch_cpu": (cpu_fn, _no_sync, None)}
    for mode in modes:
        with _process_mode(mode):
            sides[f"tpu_{mode}"] = (make_tpu_fn(), torch.tpu.synchronize, mode)
    return sides


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
        r = _interleaved({"cpu": (lambda: [f(a, b) for _ in range(inner)], _no_sync, None),
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
        r = _interleaved({"floor": (lambda: floors.append(torch_pjrt._C._launch_floor(n, inner)["launch_event_us"]),
                                    _no_sync, None),
                          "tpu": (lambda: adds(a, b, inner), torch.tpu.synchronize, "strict")},
                         max(repeats, 5))
        floor, tpu = statistics.median(floors) / 1e6, r["tpu"][0] / inner
        count = 10 * inner
        with _process_mode("strict"):
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


def _model(cfg):
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(**cfg, pad_token_id=0))


def bench_train(cfg, modes, repeats, batch, seq):
    base = _model(cfg).train()
    ids = torch.randint(1, cfg["vocab_size"], (batch, seq))

    def step_fn(model, x):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def step():
            loss = model(x, labels=x).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
        return step

    sides = _mode_sides(step_fn(copy.deepcopy(base), ids),
                        lambda: step_fn(copy.deepcopy(base).to("tpu"), ids.to("tpu")), modes)
    r = _interleaved(sides, repeats)
    out = {}
    cpu = r["torch_cpu"][0]
    for name, (t, c) in r.items():
        out[f"{name}_s"] = t
        out[f"{name}_process_cpu_s"] = c
        label = name.replace("_", " ", 1)
        rel = "" if name == "torch_cpu" else f"   {cpu / t:6.2f}x torch cpu's speed"
        print(f"  train step {label:<10} {t * 1e3:9.1f} ms{rel}   (process cpu {c * 1e3:.1f} ms)")
    return out


def bench_decode(cfg, modes, batch, new_tokens, repeats):
    base = _model(cfg).eval()
    prompt = torch.randint(1, cfg["vocab_size"], (batch, 16))

    def gen(model, p):
        return lambda: model.generate(p, attention_mask=torch.ones_like(p), max_new_tokens=new_tokens,
                                      min_new_tokens=new_tokens, do_sample=False)

    sides = _mode_sides(gen(base, prompt), lambda: gen(copy.deepcopy(base).to("tpu"), prompt.to("tpu")), modes)
    r = _interleaved(sides, repeats, warmup=1)
    out = {}
    cpu = r["torch_cpu"][0]
    for name, (t, c) in r.items():
        out[f"{name}_tokens_per_s"] = batch * new_tokens / t
        out[f"{name}_process_cpu_s"] = c
        label = name.replace("_", " ", 1)
        rel = "" if name == "torch_cpu" else f"   {cpu / t:6.2f}x torch cpu"
        print(f"  decode b{batch} {label:<10} {batch * new_tokens / t:9.1f} tokens/s{rel}   (process cpu {c:.2f} s)")
    return out


def _compiled_sides(cpu_fn, inductor_fn, tpu_fn):
    return {"torch_cpu": (cpu_fn, _no_sync, None), "inductor": (inductor_fn, _no_sync, None),
            "tpu_compiled": (tpu_fn, torch.tpu.synchronize, "strict")}


def _report(what, r, unit_s, unit):
    cpu, ind = r["torch_cpu"][0], r["inductor"][0]
    for name, (t, _) in r.items():
        rel = "" if name == "torch_cpu" else f"   {t / cpu:5.2f}x torch cpu's time, {t / ind:5.2f}x inductor's"
        print(f"  {what} {name:<13} {t / unit_s:9.2f} {unit}{rel}")


def bench_compiled(cfg, repeats, new_tokens, batch=8, seq=128):
    """torch.compile side by side: the tpu backend, PyTorch CPU eager and
    inductor on the CPU. Decode is static-cache generate(); transformers
    compiles it itself on a tpu model, and is told to on the CPU."""
    from transformers import CompileConfig
    base = _model(cfg)
    out = {}

    # Decode: ms per generated token after prefill, from generate() runs of
    # new_tokens + 1 and of 1 token (the prefill and its first token).
    for b in (1, 64):
        prompt = torch.randint(1, cfg["vocab_size"], (b, 16))

        def gen(model, p, n, config=None):
            kw = {"compile_config": config} if config else {}
            return lambda: model.generate(p, attention_mask=torch.ones_like(p), max_new_tokens=n,
                                          min_new_tokens=n, do_sample=False, cache_implementation="static", **kw)

        ind_cfg = CompileConfig(backend="inductor", fullgraph=True, dynamic=False, mode="default")
        ind_cfg._compile_all_devices = True
        cpu_m, ind_m = copy.deepcopy(base).eval(), copy.deepcopy(base).eval()
        tpu_m, tp = copy.deepcopy(base).eval().to("tpu"), prompt.to("tpu")
        sides = {}
        for n in (1, new_tokens + 1):
            s = _compiled_sides(gen(cpu_m, prompt, n), gen(ind_m, prompt, n, ind_cfg), gen(tpu_m, tp, n))
            sides.update({f"{k}@{n}": v for k, v in s.items()})
        r = _interleaved(sides, repeats, warmup=1)
        per_token = {k: ((r[f"{k}@{new_tokens + 1}"][0] - r[f"{k}@1"][0]) / new_tokens, 0.0)
                     for k in ("torch_cpu", "inductor", "tpu_compiled")}
        _report(f"decode b{b}", per_token, 1e-3, "ms/token")
        out[f"decode_b{b}"] = {f"{k}_ms_per_token": v[0] * 1e3 for k, v in per_token.items()}

    ids = torch.randint(1, cfg["vocab_size"], (batch, seq))
    # Forward b8 x s128 (logits), no grad.
    cpu_m, ind_m, tpu_m = copy.deepcopy(base).eval(), copy.deepcopy(base).eval(), copy.deepcopy(base).eval().to("tpu")
    ind_f, tpu_f, tids = torch.compile(ind_m), torch.compile(tpu_m, backend="tpu"), ids.to("tpu")

    def fwd(f, x):
        def run():
            with torch.no_grad():
                f(x).logits
        return run
    r = _interleaved(_compiled_sides(fwd(cpu_m, ids), fwd(ind_f, ids), fwd(tpu_f, tids)), repeats)
    _report(f"forward b{batch}xs{seq}", r, 1e-3, "ms")
    out["forward"] = {f"{k}_s": v[0] for k, v in r.items()}

    # Train step: forward, backward and AdamW, the model and the step compiled.
    def train(model, backend):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        f = model if backend is None else torch.compile(model, backend=backend)
        step_fn = opt.step if backend is None else torch.compile(opt.step, backend=backend)
        x = ids.to(next(model.parameters()).device)

        def step():
            f(x, labels=x).loss.backward()
            step_fn()
            opt.zero_grad()
        return step
    r = _interleaved(_compiled_sides(train(copy.deepcopy(base).train(), None),
                                     train(copy.deepcopy(base).train(), "inductor"),
                                     train(copy.deepcopy(base).train().to("tpu"), "tpu")), repeats)
    _report(f"train step b{batch}xs{seq}", r, 1e-3, "ms")
    out["train_step"] = {f"{k}_s": v[0] for k, v in r.items()}
    return out


# One thread on both sides, as ../shared/PERFORMANCE.md measures: PyTorch's
# intra-op pool, and XLA:CPU's, which the plugin sizes when it starts from
# NPROC (else every core the process may use): without it XLA's products ran
# on both cores of a 2-core machine whatever --xla_cpu_multi_thread_eigen said.
ONE_THREAD_ENV = {"XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false", "NPROC": "1"}


def one_thread(env=None):
    """One thread for PyTorch here, and for XLA:CPU in env (default: this
    process's, before the plugin starts) unless env already chooses."""
    torch.set_num_threads(1)
    for k, v in ONE_THREAD_ENV.items():
        (os.environ if env is None else env).setdefault(k, v)


_FIRST_STEP = r"""
import json, sys, time, torch, torch_pjrt
from torch_pjrt.tools.bench import _model, MODELS
torch_pjrt.set_eager_mode(sys.argv[2])
cfg = MODELS[sys.argv[1]]
m = _model(cfg).train().to("tpu")
opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
ids = torch.randint(1, cfg["vocab_size"], (2, 32), device="tpu")
t0 = time.perf_counter()
loss = m(ids, labels=ids).loss
loss.backward(); opt.step(); opt.zero_grad(); loss.item()
print(json.dumps({"seconds": time.perf_counter() - t0, **torch_pjrt.cache_stats()}))
"""


_FIRST_DECODE = r"""
import json, sys, time, torch, torch_pjrt, torch_pjrt.compiler
from torch._dynamo.utils import compilation_time_metrics
from torch_pjrt.tools.bench import _model, MODELS
torch.set_num_threads(1)
cfg = MODELS[sys.argv[1]]
m = _model(cfg).eval().to("tpu")
ids = torch.randint(1, cfg["vocab_size"], (1, 16), device="tpu")
def gen(n):
    return m.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, min_new_tokens=n,
                      do_sample=False, cache_implementation="static").cpu()
gen(1)  # prefill alone: eager programs, not part of the compiled step
c0 = torch_pjrt.cache_stats()["misses"]
t0 = time.perf_counter()
gen(2)
total = time.perf_counter() - t0
t1 = time.perf_counter()
gen(2)
again = time.perf_counter() - t1
dyn = sum(compilation_time_metrics.get("_compile.compile_inner", []))
s = torch_pjrt.compiler.stats
print(json.dumps({"first_decode_s": total - again, "dynamo_aot_s": dyn, "trace_s": s["trace_seconds"] - s["xla_compile_seconds"],
                  "xla_s": s["xla_compile_seconds"], "compiles": torch_pjrt.cache_stats()["misses"] - c0}))
"""


def bench_first_decode(model):
    """The cold first compiled decode step (Dynamo + AOTAutograd, our trace
    through the kernels, XLA), then the same in a second process."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TORCH_PJRT_CACHE_DIR=d)
        runs = []
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", _FIRST_DECODE, model], env=env, capture_output=True,
                               text=True, timeout=1800)
            if r.returncode != 0:
                raise RuntimeError(r.stderr[-2000:])
            runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    for name, x in (("cold", cold), ("warm", warm)):
        print(f"  first compiled decode step, {name} cache: {x['first_decode_s']:.2f} s (Dynamo+AOT "
              f"{x['dynamo_aot_s']:.2f} s, trace {x['trace_s']:.2f} s, XLA {x['xla_s']:.2f} s, "
              f"{x['compiles']} compiles)")
    return {"cold": cold, "warm": warm}


def bench_first_step(model, mode):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TORCH_PJRT_CACHE_DIR=d)
        runs = []
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", _FIRST_STEP, model, mode], env=env, capture_output=True,
                               text=True, timeout=1800)
            if r.returncode != 0:
                raise RuntimeError(r.stderr[-2000:])
            runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    print(f"  first train step ({mode}): cold cache {cold['seconds']:.2f} s ({cold['misses']} compiles), "
          f"warm cache {warm['seconds']:.2f} s ({warm['misses']} compiles, {warm['disk_hits']} loaded)")
    return {"cold_s": cold["seconds"], "warm_s": warm["seconds"], "cold_compiles": cold["misses"],
            "warm_compiles": warm["misses"], "warm_disk_hits": warm["disk_hits"]}


def chart(result, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    labels, values = [], []
    for k, v in result["ops"].items():
        labels.append(f"{k} latency")
        values.append(v["torch_cpu_us"] / v["tpu_strict_us"])
    tr = result["train"]
    for mode in result["modes"]:
        labels.append(f"train {mode}")
        values.append(tr["torch_cpu_s"] / tr[f"tpu_{mode}_s"])
    for b, d in result["decode"].items():
        for mode in result["modes"]:
            labels.append(f"decode {b} {mode}")
            values.append(d[f"tpu_{mode}_tokens_per_s"] / d["torch_cpu_tokens_per_s"])
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(labels) + 1.2))
    ax.barh(labels, values, color=["#4a8" if v >= 1 else "#c66" for v in values])
    ax.axvline(1.0, color="k", lw=1)
    ax.set_xlabel("speed relative to PyTorch CPU eager (higher is better)")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def _compiled_ratios(c):
    r = {}
    for b in ("b1", "b64"):
        d = c[f"decode_{b}"]
        r[f"compiled_over_inductor_decode_{b}"] = d["tpu_compiled_ms_per_token"] / d["inductor_ms_per_token"]
        r[f"compiled_over_torch_cpu_decode_{b}"] = d["tpu_compiled_ms_per_token"] / d["torch_cpu_ms_per_token"]
    for k in ("forward", "train_step"):
        r[f"compiled_over_inductor_{k}"] = c[k]["tpu_compiled_s"] / c[k]["inductor_s"]
        r[f"compiled_over_torch_cpu_{k}"] = c[k]["tpu_compiled_s"] / c[k]["torch_cpu_s"]
    if "first_decode" in c:
        r["compiled_cold_first_decode_s"] = c["first_decode"]["cold"]["first_decode_s"]
        r["compiled_warm_start_compiles"] = c["first_decode"]["warm"]["compiles"]
    return r


def _write_compiled(a, res, cfg):
    print("torch.compile: tpu backend, PyTorch CPU eager, inductor")
    res["compiled"] = bench_compiled(cfg, a.repeats, a.decode_tokens)
    res["compiled"]["first_decode"] = bench_first_decode(a.model)
    res["ratios"] = _compiled_ratios(res["compiled"])
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump(res, f, indent=2)
    print("ratios:", json.dumps(res["ratios"], indent=2))
    print(f"wrote {os.path.join(a.out, 'bench.json')}")
    return 0


DIST_SIZES = (4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20)


def _size_label(nbytes):
    """4096 -> "4KiB", 1 << 20 -> "1MiB": the size in ratio keys and tables."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{nbytes >> shift}{unit}"
    return f"{nbytes}B"


def _dist_inner(nbytes):
    """Collectives per timed sample: enough that a small one's sample is
    not all timer and barrier, one for the large ones."""
    return max(1, min(50, (4 << 20) // nbytes))


def _dist_worker(rank, world, store, sizes, repeats, out):
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
        inner = _dist_inner(nbytes)

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


_DIST_WORKER = r"""
import json, sys
from torch_pjrt.tools.bench import _dist_worker
rank, world, store, sizes, repeats, out = sys.argv[1:]
_dist_worker(int(rank), int(world), store, json.loads(sizes), int(repeats), out)
"""


_DIST_THREADS = r"""
import json, sys, threading, torch, torch.distributed as dist
from torch.testing._internal.distributed.multi_threaded_pg import _install_threaded_pg
from torch_pjrt.tools.bench import _dist_worker
world, sizes, repeats, out_dir = sys.argv[1:]
_install_threaded_pg()
torch._C._distributed_c10d._set_thread_isolation_mode(True)
store = dist.HashStore()
ranks = [threading.Thread(target=_dist_worker, args=(r, int(world), store, json.loads(sizes), int(repeats),
                                                     f"{out_dir}/rank{r}.json")) for r in range(int(world))]
for t in ranks:
    t.start()
for t in ranks:
    t.join()
"""


def _dist_summary(ranks, sizes):
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
        label = _size_label(nbytes)
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
        if threads:
            env["TORCH_PJRT_CPU_DEVICES"] = str(world)
            procs = [subprocess.Popen([sys.executable, "-c", _DIST_THREADS, str(world), json.dumps(list(sizes)),
                                       str(repeats), d],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
        else:
            procs = [subprocess.Popen([sys.executable, "-c", _DIST_WORKER, str(r), str(world),
                                       os.path.join(d, "store"), json.dumps(list(sizes)), str(repeats), outs[r]],
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
    results, ratios = _dist_summary(ranks, sizes)
    print(f"  {'size':>6} {'tpu_dist us':>12} {'gloo us':>10} {'tpu_dist GB/s':>14} {'gloo GB/s':>10} "
          f"{'tpu_dist/gloo':>14}")
    for label, row in results.items():
        print(f"  {label:>6} {row['tpu_dist_us']:12.1f} {row['gloo_us']:10.1f} {row['tpu_dist_gb_per_s']:14.3f} "
              f"{row['gloo_gb_per_s']:10.3f} {row['tpu_dist_over_gloo']:13.2f}x")
    checked = all(all(r["checked"].values()) for r in ranks)
    return {"world": world, "repeats": repeats, "dtype": "float32", "op": "all_reduce SUM",
            "results": results, "ratios": ratios, "results_correct": checked,
            "stats_rank0": ranks[0]["stats"]}


def _write_dist(a):
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
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "dist.json"), "w") as f:
        json.dump(res, f, indent=2)
    print("ratios:", json.dumps(res["ratios"], indent=2))
    print(f"wrote {os.path.join(a.out, 'dist.json')}")
    return 0 if res["results_correct"] else 1


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m torch_pjrt bench")
    ap.add_argument("--out", default="bench_out")
    ap.add_argument("--model", default="small", choices=sorted(MODELS))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--modes", default="strict,fused")
    ap.add_argument("--decode-tokens", type=int, default=16)
    ap.add_argument("--compiled", choices=("auto", "on", "off"), default="auto",
                    help="torch.compile side (tpu backend, CPU eager, inductor); auto: with --model bench-llama")
    ap.add_argument("--only-compiled", action="store_true", help="run only the torch.compile side")
    ap.add_argument("--ops", action="store_true",
                    help="only the per-op latencies beside PyTorch CPU eager and the launch floor")
    ap.add_argument("--dist", action="store_true",
                    help="only all_reduce across 2 local processes: tpu_dist beside gloo (dist.json)")
    ap.add_argument("--moe", action="store_true",
                    help="only Qwen3-MoE decoding per experts implementation, with the roofline (moe.json)")
    ap.add_argument("--moe-batches", default="1,8,64")
    ap.add_argument("--moe-caches", default="dynamic,static")
    a = ap.parse_args(argv)
    if a.dist:
        return _write_dist(a)
    if a.moe:
        from . import bench_moe
        return bench_moe.main(a)
    # One thread on both sides (as in PERFORMANCE.md): with two threads on a
    # loaded 2-core machine the figures swing several-fold.
    if torch_pjrt._C._initialized():
        print("note: the PJRT runtime is already running; XLA_FLAGS and NPROC cannot change now")
    one_thread()
    modes = a.modes.split(",")
    cfg = MODELS[a.model]
    res = {"model": a.model, "config": cfg, "modes": modes, "runtime": torch_pjrt.runtime_info(),
           "threads": {"torch": torch.get_num_threads(), "NPROC": os.environ.get("NPROC")}}
    compiled = a.compiled == "on" or (a.compiled == "auto" and a.model == "bench-llama") or a.only_compiled
    if a.only_compiled:
        return _write_compiled(a, res, cfg)
    print("(a) small ops")
    res["ops"] = bench_ops(a.repeats)
    res["launch_floor"] = bench_launch_floor(a.repeats)
    if a.ops:
        res["ratios"] = _op_ratios(res)
        return _write(a, res)
    print("(b) training step, batch 4, sequence 64")
    res["train"] = bench_train(cfg, modes, a.repeats, 4, 64)
    print("(c) greedy decoding")
    res["decode"] = {f"b{b}": bench_decode(cfg, modes, b, a.decode_tokens, a.repeats) for b in (1, 64)}
    print("(d) time to first training step")
    res["first_step"] = bench_first_step(a.model, "fused" if "fused" in modes else modes[0])
    tr, d64 = res["train"], res["decode"]["b64"]
    ratios = _op_ratios(res)
    ratios["warm_start_compiles"] = res["first_step"]["warm_compiles"]
    if "fused" in modes and "strict" in modes:
        ratios["fused_over_strict_train_step"] = tr["tpu_strict_s"] / tr["tpu_fused_s"]
    if "fused" in modes:
        ratios["fused_decode_b64_over_torch_cpu"] = d64["tpu_fused_tokens_per_s"] / d64["torch_cpu_tokens_per_s"]
        ratios["fused_train_step_over_torch_cpu"] = tr["torch_cpu_s"] / tr["tpu_fused_s"]
    if compiled:
        print("(e) torch.compile: tpu backend, PyTorch CPU eager, inductor")
        res["compiled"] = bench_compiled(cfg, a.repeats, a.decode_tokens)
        res["compiled"]["first_decode"] = bench_first_decode(a.model)
        ratios.update(_compiled_ratios(res["compiled"]))
    res["ratios"] = ratios
    return _write(a, res)


def _op_ratios(res):
    return {
        "strict_small_op_over_torch_cpu": res["ops"]["add_1k"]["ratio"],
        # the worse of the two sizes
        "strict_small_op_over_launch_floor": max(c["ratio"] for c in res["launch_floor"].values()),
    }


def _write(a, res):
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump(res, f, indent=2)
    drew = "train" in res and chart(res, os.path.join(a.out, "bench.png"))
    print("ratios:", json.dumps(res["ratios"], indent=2))
    print(f"wrote {os.path.join(a.out, 'bench.json')}" + (" and bench.png" if drew else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
