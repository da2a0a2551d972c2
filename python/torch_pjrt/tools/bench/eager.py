"""The eager modes on a small Llama-style model beside PyTorch CPU eager:
a training step, greedy decoding, and the time to the first training step
with a cold and a warm disk cache (each in a fresh process: run as
`python -m torch_pjrt.tools.bench.eager MODEL MODE`, this module is that
process)."""
import copy
import json
import sys
import tempfile
import time

import torch

import torch_pjrt

from .models import MODELS, model
from .timing import cold_and_warm, interleaved, mode_sides, no_sync


def bench_train(cfg, modes, repeats, batch, seq):
    base = model(cfg).train()
    ids = torch.randint(1, cfg["vocab_size"], (batch, seq))

    def step_fn(m, x):
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4)

        def step():
            loss = m(x, labels=x).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
        return step

    sides = mode_sides(step_fn(copy.deepcopy(base), ids),
                       lambda: step_fn(copy.deepcopy(base).to("tpu"), ids.to("tpu")), modes)
    r = interleaved(sides, repeats)
    out = {}
    cpu = r["torch_cpu"][0]
    for name, (t, c) in r.items():
        out[f"{name}_s"] = t
        out[f"{name}_process_cpu_s"] = c
        label = name.replace("_", " ", 1)
        rel = "" if name == "torch_cpu" else f"   {cpu / t:6.2f}x torch cpu's speed"
        print(f"  train step {label:<10} {t * 1e3:9.1f} ms{rel}   (process cpu {c * 1e3:.1f} ms)")
    return out


def bench_decode(cfg, modes, batch, new_tokens, repeats, baseline="cpu"):
    """Greedy decoding on the tpu beside PyTorch eager on `baseline` (cpu,
    or cuda: torch's own GPU path on the machine whose GPU the tpu device
    drives through XLA:GPU)."""
    base = model(cfg).eval()
    prompt = torch.randint(1, cfg["vocab_size"], (batch, 16))

    def gen(m, p):
        return lambda: m.generate(p, attention_mask=torch.ones_like(p), max_new_tokens=new_tokens,
                                  min_new_tokens=new_tokens, do_sample=False)

    base_name = f"torch_{baseline}"
    base_sync = torch.cuda.synchronize if baseline == "cuda" else no_sync
    base_fn = gen(copy.deepcopy(base).to(baseline), prompt.to(baseline)) if baseline != "cpu" else gen(base, prompt)
    sides = mode_sides(base_fn, lambda: gen(copy.deepcopy(base).to("tpu"), prompt.to("tpu")), modes,
                       base_name, base_sync)
    r = interleaved(sides, repeats, warmup=1)
    out = {}
    ref = r[base_name][0]
    for name, (t, c) in r.items():
        out[f"{name}_tokens_per_s"] = batch * new_tokens / t
        out[f"{name}_process_cpu_s"] = c
        label = name.replace("_", " ", 1)
        rel = "" if name == base_name else f"   {ref / t:6.2f}x torch {baseline}"
        print(f"  decode b{batch} {label:<10} {batch * new_tokens / t:9.1f} tokens/s{rel}   (process cpu {c:.2f} s)")
    return out


def _first_step(model_name, mode):
    """In a fresh process: one training step, timed, and the cache's counters."""
    torch_pjrt.set_eager_mode(mode)
    cfg = MODELS[model_name]
    m = model(cfg).train().to("tpu")
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    ids = torch.randint(1, cfg["vocab_size"], (2, 32), device="tpu")
    t0 = time.perf_counter()
    loss = m(ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    loss.item()
    print(json.dumps({"seconds": time.perf_counter() - t0, **torch_pjrt.cache_stats()}))


def bench_first_step(model_name, mode):
    with tempfile.TemporaryDirectory() as d:
        cold, warm = cold_and_warm(__spec__.name, [model_name, mode], d)
    print(f"  first train step ({mode}): cold cache {cold['seconds']:.2f} s ({cold['misses']} compiles), "
          f"warm cache {warm['seconds']:.2f} s ({warm['misses']} compiles, {warm['disk_hits']} loaded)")
    return {"cold_s": cold["seconds"], "warm_s": warm["seconds"], "cold_compiles": cold["misses"],
            "warm_compiles": warm["misses"], "warm_disk_hits": warm["disk_hits"]}


if __name__ == "__main__":
    _first_step(*sys.argv[1:3])
