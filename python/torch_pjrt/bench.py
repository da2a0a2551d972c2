"""python -m torch_pjrt bench: where the tpu device stands against PyTorch
CPU eager on the same machine, measured side by side in one run.

(a) per-op latency of small ops, (b) a training step of a small Llama-style
model per eager mode, (c) greedy decoding tokens/s per mode at batch 1 and
64, (d) time to the first training step with a cold and a warm disk cache.
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


_FIRST_STEP = r"""
import json, sys, time, torch, torch_pjrt
from torch_pjrt.bench import _model, MODELS
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


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m torch_pjrt bench")
    ap.add_argument("--out", default="bench_out")
    ap.add_argument("--model", default="small", choices=sorted(MODELS))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--modes", default="strict,fused")
    ap.add_argument("--decode-tokens", type=int, default=16)
    a = ap.parse_args(argv)
    # One thread on both sides (as in PERFORMANCE.md): PyTorch's intra-op
    # pool and XLA's Eigen pool; with two threads on a loaded 2-core machine
    # the figures swing several-fold. Set before the plugin starts.
    torch.set_num_threads(1)
    if torch_pjrt._C._initialized():
        print("note: the PJRT runtime is already running; XLA_FLAGS cannot change now")
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    modes = a.modes.split(",")
    cfg = MODELS[a.model]
    res = {"model": a.model, "config": cfg, "modes": modes, "runtime": torch_pjrt.runtime_info(),
           "threads": {"torch": torch.get_num_threads(), "XLA_FLAGS": os.environ.get("XLA_FLAGS", "")}}
    print("(a) small ops")
    res["ops"] = bench_ops(a.repeats)
    print("(b) training step, batch 4, sequence 64")
    res["train"] = bench_train(cfg, modes, a.repeats, 4, 64)
    print("(c) greedy decoding")
    res["decode"] = {f"b{b}": bench_decode(cfg, modes, b, a.decode_tokens, a.repeats) for b in (1, 64)}
    print("(d) time to first training step")
    res["first_step"] = bench_first_step(a.model, "fused" if "fused" in modes else modes[0])
    tr, d64 = res["train"], res["decode"]["b64"]
    ratios = {
        "strict_small_op_over_torch_cpu": res["ops"]["add_1k"]["ratio"],
        "warm_start_compiles": res["first_step"]["warm_compiles"],
    }
    if "fused" in modes and "strict" in modes:
        ratios["fused_over_strict_train_step"] = tr["tpu_strict_s"] / tr["tpu_fused_s"]
    if "fused" in modes:
        ratios["fused_decode_b64_over_torch_cpu"] = d64["tpu_fused_tokens_per_s"] / d64["torch_cpu_tokens_per_s"]
        ratios["fused_train_step_over_torch_cpu"] = tr["torch_cpu_s"] / tr["tpu_fused_s"]
    res["ratios"] = ratios
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump(res, f, indent=2)
    drew = chart(res, os.path.join(a.out, "bench.png"))
    print("ratios:", json.dumps(ratios, indent=2))
    print(f"wrote {os.path.join(a.out, 'bench.json')}" + (" and bench.png" if drew else " (no matplotlib: no chart)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
