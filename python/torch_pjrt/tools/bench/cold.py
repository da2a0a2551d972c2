"""bench --cold: what the first calls cost, each scenario in a fresh process
with a fresh cache directory and one thread.

- programs: programs compiled by a cold generate(N) of the tiny Llama (two
  layers), per eager mode and per N; the key compares the longest N with
  the shortest (a program per token shows as a ratio near the token ratio,
  programs that serve many sizes as a ratio near 1).
- first call: a cold generate(32) (--first-tokens) of the bench Llama over the same call in
  a second process whose disk cache the first one filled.
- varied prompts: in one process, after one request, the median time of
  requests whose prompt lengths all differ over the median of repeats of
  that request, the two alternating (a new length that compiles shows as a
  large ratio).

Writes cold.json with the ratio keys cold_programs_LONG_over_SHORT (the
worst mode), cold_over_warm_generate and varied_prompt_over_repeated."""
import json
import os
import statistics
import sys
import tempfile
import time

import torch

import torch_pjrt

from .models import MODELS, model
from .timing import cold_and_warm, in_fresh_process, write_json

# The tiny Llama of the programs and varied-prompt scenarios: two layers, so
# that per-layer programs shared between layers show as such, and positions
# for the longest prompt plus its new tokens.
TINY = dict(MODELS["tiny"], num_hidden_layers=2, max_position_embeddings=512)
CONFIGS = {"tiny": TINY, "small": MODELS["small"], "bench-llama": MODELS["bench-llama"]}


def _generate(m, prompt, tokens):
    with torch.no_grad():
        out = m.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=tokens,
                         min_new_tokens=tokens, do_sample=False)
    return out.cpu()


def _first_generate(model_name, mode, tokens, prompt_len):
    """In this (fresh) process: one generate, timed, with the cache's
    counters."""
    torch_pjrt.set_eager_mode(mode)
    cfg = CONFIGS[model_name]
    m = model(cfg).eval().to("tpu")
    prompt = torch.randint(1, cfg["vocab_size"], (1, prompt_len)).to("tpu")
    torch.tpu.synchronize()
    torch_pjrt.reset_cache_stats()
    t0 = time.perf_counter()
    _generate(m, prompt, tokens)
    seconds = time.perf_counter() - t0
    s = torch_pjrt.cache_stats()
    return {"seconds": seconds, "compiles": s["misses"], "compile_seconds": s["compile_seconds"],
            "disk_hits": s["disk_hits"]}


def _varied(model_name, mode, tokens, lengths):
    """In this (fresh) process: one request, then its repeats alternating
    with one request per other prompt length (all distinct)."""
    torch_pjrt.set_eager_mode(mode)
    cfg = CONFIGS[model_name]
    m = model(cfg).eval().to("tpu")
    g = torch.Generator().manual_seed(0)
    first = lengths[0]
    prompt = torch.randint(1, cfg["vocab_size"], (1, first), generator=g).to("tpu")

    def request(p):
        t0 = time.perf_counter()
        _generate(m, p, tokens)
        return time.perf_counter() - t0

    request(prompt)
    # The sides alternate request by request, so drift hits both alike; the
    # repeats compile nothing, so the programs counted are the new lengths'.
    torch_pjrt.reset_cache_stats()
    repeated, varied = [], []
    for n in lengths[1:]:
        repeated.append(request(prompt))
        varied.append(request(torch.randint(1, cfg["vocab_size"], (1, n), generator=g).to("tpu")))
    s = torch_pjrt.cache_stats()
    return {"repeated_median_s": statistics.median(repeated), "varied_median_s": statistics.median(varied),
            "varied_compiles": s["misses"], "varied_compile_seconds": s["compile_seconds"],
            "lengths": lengths[1:]}


def _in_fresh_process(args, cache_dir):
    return in_fresh_process(__spec__.name, [json.dumps(args)], cache_dir)


def prompt_lengths(count, low, high):
    """count + 1 distinct lengths spread over [low, high]: the first for the
    repeated request, the rest each once."""
    step = (high - low) / max(count, 1)
    out = sorted({low + round(i * step) for i in range(count + 1)})
    if len(out) != count + 1:
        raise ValueError(f"{count + 1} distinct prompt lengths do not fit in [{low}, {high}]")
    return [out[len(out) // 2]] + [n for i, n in enumerate(out) if i != len(out) // 2]


def bench_cold(a):
    modes = a.modes.split(",")
    short, long = a.cold_tokens
    res = {"programs": {}, "threads": {k: os.environ.get(k) for k in ("NPROC", "XLA_FLAGS")}}
    ratios = {}
    for mode in modes:
        row = {}
        for n in (short, long):
            with tempfile.TemporaryDirectory() as d:
                row[n] = _in_fresh_process(["first", a.cold_model, mode, n, 8], d)
            print(f"  {mode}: cold generate({n}) of the {a.cold_model} Llama: {row[n]['compiles']} programs, "
                  f"{row[n]['seconds']:.2f} s ({row[n]['compile_seconds']:.2f} s compiling)")
        res["programs"][mode] = {str(n): r for n, r in row.items()}
        ratios[f"{mode}_cold_programs_{long}_over_{short}"] = row[long]["compiles"] / max(row[short]["compiles"], 1)
    ratios[f"cold_programs_{long}_over_{short}"] = max(ratios[f"{m}_cold_programs_{long}_over_{short}"]
                                                       for m in modes)
    mode = modes[0]
    with tempfile.TemporaryDirectory() as d:
        cold, warm = cold_and_warm(__spec__.name, [json.dumps(["first", a.first_model, mode, a.first_tokens, 16])], d)
    res["first_call"] = {"model": a.first_model, "mode": mode, "cold": cold, "warm": warm}
    print(f"  {mode}: generate({a.first_tokens}) of the {a.first_model} Llama, first call: cold cache {cold['seconds']:.2f} s "
          f"({cold['compiles']} programs), warm disk cache {warm['seconds']:.2f} s ({warm['disk_hits']} loaded)")
    ratios["cold_over_warm_generate"] = cold["seconds"] / warm["seconds"]
    lengths = prompt_lengths(a.varied_requests, 5, 200)
    with tempfile.TemporaryDirectory() as d:
        v = _in_fresh_process(["varied", a.cold_model, mode, a.varied_tokens, lengths], d)
    res["varied_prompts"] = dict(v, mode=mode, model=a.cold_model)
    print(f"  {mode}: {a.varied_tokens} new tokens, repeated prompt {v['repeated_median_s'] * 1e3:.0f} ms, varied prompt "
          f"{v['varied_median_s'] * 1e3:.0f} ms (medians; {v['varied_compiles']} programs for "
          f"{len(lengths) - 1} lengths)")
    ratios["varied_prompt_over_repeated"] = v["varied_median_s"] / v["repeated_median_s"]
    res["ratios"] = ratios
    path = write_json(a.out, "cold.json", res)
    print("ratios:", json.dumps(ratios, indent=2))
    print(f"wrote {path}")
    return 0


def _main(args):
    torch.set_num_threads(1)
    kind, *rest = args
    out = _first_generate(*rest) if kind == "first" else _varied(*rest)
    print(json.dumps(out))


if __name__ == "__main__":
    _main(json.loads(sys.argv[1]))
