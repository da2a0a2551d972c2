"""python -m torch_pjrt bench [options]: the command line. By default (a)
per-op latency, (b) a training step per eager mode, (c) greedy decoding
tokens/s per mode at batch 1 and 64 beside PyTorch on the CPU (--baseline
cuda: on the GPU; --only-decode runs just this), (d) time to the first
training step with a cold and a warm disk cache, and (e) with --model
bench-llama or --compiled on, torch.compile beside inductor. Writes
bench.json and bench.png. --dist, --moe and --cold run their own benchmark
instead (dist.json, moe.json, cold.json)."""
import argparse
import json
import os

import torch

import torch_pjrt

from . import chart, compiled, eager, ops
from .models import MODELS
from .timing import one_thread, write_json


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
    ap.add_argument("--baseline", choices=("cpu", "cuda"), default="cpu",
                    help="where PyTorch eager runs beside the tpu in (c) greedy decoding: cpu, or cuda (torch's own "
                         "GPU path, beside the tpu device on XLA:GPU on the same machine)")
    ap.add_argument("--only-decode", action="store_true",
                    help="only (c) greedy decoding at batch 1 and 64 beside --baseline")
    ap.add_argument("--ops", action="store_true",
                    help="only the per-op latencies beside PyTorch CPU eager and the launch floor")
    ap.add_argument("--dist", action="store_true",
                    help="only all_reduce across 2 local processes: tpu_dist beside gloo (dist.json)")
    ap.add_argument("--moe", action="store_true",
                    help="only Qwen3-MoE decoding per experts implementation, with the roofline (moe.json)")
    ap.add_argument("--cold", action="store_true",
                    help="only the first calls, each in a fresh process with a fresh cache (cold.json)")
    ap.add_argument("--cold-tokens", type=lambda s: tuple(int(x) for x in s.split(",")), default=(32, 256),
                    help="--cold: the two generate lengths whose programs are compared")
    ap.add_argument("--cold-model", default="tiny", help="--cold: the model of the programs and varied prompts")
    ap.add_argument("--first-model", default="bench-llama", help="--cold: the model of the cold and warm first call")
    ap.add_argument("--first-tokens", type=int, default=32, help="--cold: new tokens of the cold and warm first call")
    ap.add_argument("--varied-requests", type=int, default=20, help="--cold: requests per side of varied prompts")
    ap.add_argument("--varied-tokens", type=int, default=16, help="--cold: new tokens per varied-prompt request")
    ap.add_argument("--moe-batches", default="1,8,64")
    ap.add_argument("--moe-caches", default="dynamic,static")
    a = ap.parse_args(argv)
    if a.dist:
        from . import dist
        return dist.main(a)
    if a.moe:
        from . import moe
        return moe.main(a)
    # One thread on both sides (as in PERFORMANCE.md): with two threads on a
    # loaded 2-core machine the figures swing several-fold.
    if torch_pjrt._C._initialized():
        print("note: the PJRT runtime is already running; XLA_FLAGS and NPROC cannot change now")
    one_thread()
    if a.cold:
        from . import cold
        return cold.bench_cold(a)
    modes = a.modes.split(",")
    cfg = MODELS[a.model]
    res = {"model": a.model, "config": cfg, "modes": modes, "runtime": torch_pjrt.runtime_info(),
           "threads": {"torch": torch.get_num_threads(), "NPROC": os.environ.get("NPROC")}}
    with_compiled = a.compiled == "on" or (a.compiled == "auto" and a.model == "bench-llama") or a.only_compiled
    if a.only_compiled:
        return _write_compiled(a, res, cfg)
    if a.baseline == "cuda" and not torch.cuda.is_available():
        ap.error("--baseline cuda: this torch sees no CUDA device")
    res["baseline"] = a.baseline
    if a.only_decode:
        print(f"(c) greedy decoding beside torch {a.baseline} eager")
        res["decode"] = _decode(a, cfg, modes)
        res["ratios"] = _decode_ratios(res["decode"], modes, a.baseline)
        return _write(a, res)
    print("(a) small ops")
    res["ops"] = ops.bench_ops(a.repeats)
    res["launch_floor"] = ops.bench_launch_floor(a.repeats)
    res["fused_record"] = ops.bench_fused_record(a.repeats)
    if a.ops:
        res["ratios"] = ops.ratios(res)
        return _write(a, res)
    print("(b) training step, batch 4, sequence 64")
    res["train"] = eager.bench_train(cfg, modes, a.repeats, 4, 64)
    print("(c) greedy decoding")
    res["decode"] = _decode(a, cfg, modes)
    print("(d) time to first training step")
    res["first_step"] = eager.bench_first_step(a.model, "fused" if "fused" in modes else modes[0])
    tr, d64 = res["train"], res["decode"]["b64"]
    ratios = ops.ratios(res)
    ratios["warm_start_compiles"] = res["first_step"]["warm_compiles"]
    if "fused" in modes and "strict" in modes:
        ratios["fused_over_strict_train_step"] = tr["tpu_strict_s"] / tr["tpu_fused_s"]
    if "fused" in modes:
        ratios["fused_train_step_over_torch_cpu"] = tr["torch_cpu_s"] / tr["tpu_fused_s"]
        if a.baseline == "cpu":
            ratios["fused_decode_b64_over_torch_cpu"] = d64["tpu_fused_tokens_per_s"] / d64["torch_cpu_tokens_per_s"]
    if a.baseline != "cpu":
        ratios.update(_decode_ratios(res["decode"], modes, a.baseline))
    if with_compiled:
        print("(e) torch.compile: tpu backend, PyTorch CPU eager, inductor")
        res["compiled"] = compiled.bench_compiled(cfg, a.repeats, a.decode_tokens)
        res["compiled"]["first_decode"] = compiled.bench_first_decode(a.model)
        ratios.update(compiled.ratios(res["compiled"]))
    res["ratios"] = ratios
    return _write(a, res)


def _decode(a, cfg, modes):
    return {f"b{b}": eager.bench_decode(cfg, modes, b, a.decode_tokens, a.repeats, a.baseline) for b in (1, 64)}


def _decode_ratios(decode, modes, baseline):
    """{MODE_decode_bB_over_torch_BASELINE: tpu tokens/s over PyTorch's}."""
    return {f"{mode}_decode_{b}_over_torch_{baseline}":
            d[f"tpu_{mode}_tokens_per_s"] / d[f"torch_{baseline}_tokens_per_s"]
            for b, d in decode.items() for mode in modes}


def _write_compiled(a, res, cfg):
    print("torch.compile: tpu backend, PyTorch CPU eager, inductor")
    res["compiled"] = compiled.bench_compiled(cfg, a.repeats, a.decode_tokens)
    res["compiled"]["first_decode"] = compiled.bench_first_decode(a.model)
    res["ratios"] = compiled.ratios(res["compiled"])
    path = write_json(a.out, "bench.json", res)
    print("ratios:", json.dumps(res["ratios"], indent=2))
    print(f"wrote {path}")
    return 0


def _write(a, res):
    path = write_json(a.out, "bench.json", res)
    drew = "train" in res and chart.overview(res, os.path.join(a.out, "bench.png"))
    print("ratios:", json.dumps(res["ratios"], indent=2))
    print(f"wrote {path}" + (" and bench.png" if drew else ""))
    return 0
