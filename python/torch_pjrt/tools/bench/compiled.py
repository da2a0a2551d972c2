"""torch.compile side by side: the tpu backend, PyTorch CPU eager and
inductor on the CPU (decode, forward, training step), and the first
compiled decode step with a cold and a warm disk cache (each in a fresh
process: run as `python -m torch_pjrt.tools.bench.compiled MODEL`, this
module is that process)."""
import copy
import json
import sys
import tempfile
import time

import torch

from .models import MODELS, model
from .timing import cold_and_warm, interleaved, no_sync


def _compiled_sides(cpu_fn, inductor_fn, tpu_fn):
    return {"torch_cpu": (cpu_fn, no_sync, None), "inductor": (inductor_fn, no_sync, None),
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
    base = model(cfg)
    out = {}

    # Decode: ms per generated token after prefill, from generate() runs of
    # new_tokens + 1 and of 1 token (the prefill and its first token).
    for b in (1, 64):
        prompt = torch.randint(1, cfg["vocab_size"], (b, 16))

        def gen(m, p, n, config=None):
            kw = {"compile_config": config} if config else {}
            return lambda: m.generate(p, attention_mask=torch.ones_like(p), max_new_tokens=n,
                                      min_new_tokens=n, do_sample=False, cache_implementation="static", **kw)

        ind_cfg = CompileConfig(backend="inductor", fullgraph=True, dynamic=False, mode="default")
        ind_cfg._compile_all_devices = True
        cpu_m, ind_m = copy.deepcopy(base).eval(), copy.deepcopy(base).eval()
        tpu_m, tp = copy.deepcopy(base).eval().to("tpu"), prompt.to("tpu")
        sides = {}
        for n in (1, new_tokens + 1):
            s = _compiled_sides(gen(cpu_m, prompt, n), gen(ind_m, prompt, n, ind_cfg), gen(tpu_m, tp, n))
            sides.update({f"{k}@{n}": v for k, v in s.items()})
        r = interleaved(sides, repeats, warmup=1)
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
    r = interleaved(_compiled_sides(fwd(cpu_m, ids), fwd(ind_f, ids), fwd(tpu_f, tids)), repeats)
    _report(f"forward b{batch}xs{seq}", r, 1e-3, "ms")
    out["forward"] = {f"{k}_s": v[0] for k, v in r.items()}

    # Train step: forward, backward and AdamW, the model and the step compiled.
    def train(m, backend):
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
        f = m if backend is None else torch.compile(m, backend=backend)
        step_fn = opt.step if backend is None else torch.compile(opt.step, backend=backend)
        x = ids.to(next(m.parameters()).device)

        def step():
            f(x, labels=x).loss.backward()
            step_fn()
            opt.zero_grad()
        return step
    r = interleaved(_compiled_sides(train(copy.deepcopy(base).train(), None),
                                    train(copy.deepcopy(base).train(), "inductor"),
                                    train(copy.deepcopy(base).train().to("tpu"), "tpu")), repeats)
    _report(f"train step b{batch}xs{seq}", r, 1e-3, "ms")
    out["train_step"] = {f"{k}_s": v[0] for k, v in r.items()}
    return out


def _first_decode(model_name):
    """In a fresh process: the first compiled decode step, timed by part."""
    import torch_pjrt.compiler
    from torch._dynamo.utils import compilation_time_metrics
    torch.set_num_threads(1)
    cfg = MODELS[model_name]
    m = model(cfg).eval().to("tpu")
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
    print(json.dumps({"first_decode_s": total - again, "dynamo_aot_s": dyn,
                      "trace_s": s["trace_seconds"] - s["xla_compile_seconds"],
                      "xla_s": s["xla_compile_seconds"], "compiles": torch_pjrt.cache_stats()["misses"] - c0}))


def bench_first_decode(model_name):
    """The cold first compiled decode step (Dynamo + AOTAutograd, our trace
    through the kernels, XLA), then the same in a second process."""
    with tempfile.TemporaryDirectory() as d:
        cold, warm = cold_and_warm(__spec__.name, [model_name], d)
    for name, x in (("cold", cold), ("warm", warm)):
        print(f"  first compiled decode step, {name} cache: {x['first_decode_s']:.2f} s (Dynamo+AOT "
              f"{x['dynamo_aot_s']:.2f} s, trace {x['trace_s']:.2f} s, XLA {x['xla_s']:.2f} s, "
              f"{x['compiles']} compiles)")
    return {"cold": cold, "warm": warm}


def ratios(c):
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


if __name__ == "__main__":
    _first_decode(sys.argv[1])
