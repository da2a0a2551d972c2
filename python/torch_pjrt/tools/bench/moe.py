"""python -m torch_pjrt bench --moe: greedy decoding of a Qwen3-MoE model
from its config, ms per generated token, for each experts implementation on
`tpu` (the MoE kernel; transformers' default on a device, "grouped_mm"
prefill and "batched_mm" decoding; "grouped_mm" throughout; "eager") beside
PyTorch CPU with "grouped_mm", per batch size and KV cache (dynamic,
static), with each batch's roofline. Writes moe.json and moe.png.

Per-token time is (fastest run of N new tokens - fastest run of 2) / (N - 2):
prefill and the first step drop out. Every side is warmed up (its programs
compiled or loaded) before the timed rounds; the rounds alternate the sides.
A side that fails in its warm-up is reported in the row's "failed" and
timed as None, and the ratios that need it are None. Roofline of
a step: the larger of the bytes it must read (every non-expert weight, and
each expert the batch routes to once: the expected count of distinct
experts under uniform routing) over the device's measured read bandwidth,
and its matmul flops over the device's measured matmul throughput.
"""
import copy
import json
import os

import torch

import torch_pjrt

from . import chart
from .timing import no_sync, one_thread, process_mode, timed, write_json

CONFIG = dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
              num_key_value_heads=4, head_dim=64, num_experts=32, num_experts_per_tok=4, moe_intermediate_size=256,
              vocab_size=32000)

# side -> (device, experts implementation). "tpu_batched_mm" is what
# transformers runs on a device by default: generate() prefills with
# "grouped_mm" and switches to "batched_mm" for decoding; "tpu_grouped_mm"
# keeps grouped_mm throughout (under a name generate() does not switch).
SIDES = {"tpu_kernel": ("tpu", "tpu_experts"), "tpu_grouped_mm": ("tpu", "grouped_mm_kept"),
         "tpu_batched_mm": ("tpu", "grouped_mm"), "tpu_eager": ("tpu", "eager"),
         "torch_cpu_grouped_mm": ("cpu", "grouped_mm")}


def _register_kept_grouped_mm():
    from transformers.integrations import moe
    standard = moe.ExpertsInterface._global_mapping["grouped_mm"]
    moe.ExpertsInterface.register("grouped_mm_kept", getattr(standard, "standard", standard))


def device_rates():
    """(read bandwidth bytes/s, matmul flop/s) of the tpu device, best of 5."""
    x = torch.randn(32 << 20, device="tpu")  # 128 MiB
    a, b = torch.randn(1024, 1024, device="tpu"), torch.randn(1024, 1024, device="tpu")
    sync = torch.tpu.synchronize
    keep = []  # results held, so no eager mode drops the work as unused
    read = min(timed(lambda: keep.append(x.sum()), sync) for _ in range(6))
    mm = min(timed(lambda: keep.append(a @ b), sync) for _ in range(6))
    return x.numel() * 4 / read, 2 * 1024**3 / mm


def roofline(cfg, batch, bandwidth, flops_rate):
    h, e, k = cfg["hidden_size"], cfg["num_experts"], cfg["num_experts_per_tok"]
    heads, kv, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    attn = h * hd * (2 * heads + 2 * kv)  # q, k, v, o projections
    expert = 3 * h * cfg["moe_intermediate_size"]
    router = h * e
    head = h * cfg["vocab_size"]
    layers = cfg["num_hidden_layers"]
    distinct = e * (1 - (1 - k / e) ** batch)
    read = 4 * (layers * (attn + router + distinct * expert) + head)
    flops = 2 * batch * (layers * (attn + router + k * expert) + head)
    return max(read / bandwidth, flops / flops_rate), {"bytes": read, "flops": flops, "distinct_experts": distinct}


def bench_moe(batches, caches, new_tokens, repeats):
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM
    _register_kept_grouped_mm()
    # Each side and batch is its own compiled variant of the model's forward
    # (Dynamo guards on the experts implementation and the shapes); past
    # Dynamo's default limit of 8 the later sides would silently run eagerly.
    import torch._dynamo
    torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 64)
    torch.manual_seed(0)
    cfg = dict(CONFIG)
    base = Qwen3MoeForCausalLM(Qwen3MoeConfig(**cfg, eos_token_id=None)).eval()
    models = {"cpu": base, "tpu": copy.deepcopy(base).to("tpu")}
    bandwidth, flops_rate = device_rates()
    print(f"  device: read {bandwidth / 1e9:.1f} GB/s, matmul {flops_rate / 1e9:.1f} GFLOP/s")
    out = {"config": cfg, "read_bandwidth_gb_s": bandwidth / 1e9, "matmul_gflop_s": flops_rate / 1e9, "rows": {}}
    for cache in caches:
        for batch in batches:
            prompt = torch.randint(1, cfg["vocab_size"], (batch, 8))

            def side(name, n):
                device, impl = SIDES[name]
                model = models[device]
                p = prompt.to(device)
                kw = {"cache_implementation": "static"} if cache == "static" else {}

                def run():
                    model.set_experts_implementation(impl)
                    with torch.no_grad(), torch_pjrt.kernels.standard_only():
                        model.generate(p, attention_mask=torch.ones_like(p), max_new_tokens=n, min_new_tokens=n,
                                       do_sample=False, **kw)
                return run, (torch.tpu.synchronize if device == "tpu" else no_sync)

            # Warm-up: both lengths' programs compiled or loaded. A side that
            # fails is reported, not timed.
            failed = {}
            for name in SIDES:
                try:
                    timed(*side(name, 2))
                    timed(*side(name, new_tokens))
                except Exception as e:  # noqa: BLE001 - the bench reports it and goes on
                    failed[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                    print(f"  {cache:<7} b{batch:<3} {name} failed: {failed[name]}")
            measured = [name for name in SIDES if name not in failed]
            # Per token: the fastest long run less the fastest short one (a
            # difference per repeat turns one slow short run into a negative).
            short, long_ = ({name: [] for name in measured} for _ in range(2))
            # Each side's pair is timed after an untimed short run of its
            # own: the sides share one model, and what one side's reads
            # leave (eager weight copies are kept per storage and view)
            # must not be paid by the next side's first timed run.
            for _ in range(repeats):
                for name in measured:
                    timed(*side(name, 2))
                    short[name].append(timed(*side(name, 2)))
                    long_[name].append(timed(*side(name, new_tokens)))
            roof, parts = roofline(cfg, batch, bandwidth, flops_rate)
            row = {f"{name}_ms_per_token": (1e3 * (min(long_[name]) - min(short[name])) / (new_tokens - 2)
                                            if name in long_ else None) for name in SIDES}
            row.update(roofline_ms=1e3 * roof, failed=failed, **parts)
            out["rows"][f"{cache}_b{batch}"] = row
            cells = "  ".join(f"{name} {row[f'{name}_ms_per_token']:8.1f}" if name in long_ else f"{name}   failed"
                              for name in SIDES)
            print(f"  {cache:<7} b{batch:<3} ms/token: {cells}  roofline {1e3 * roof:6.1f}")
    models["tpu"].set_experts_implementation("grouped_mm")
    return out


def _row_ratios(row):
    kernel = row["tpu_kernel_ms_per_token"]
    standard = [row[f"tpu_{n}_ms_per_token"] for n in ("grouped_mm", "batched_mm", "eager")]

    def over(t):
        return None if t is None or kernel is None else t / kernel
    return {"kernel_speedup_over_batched_mm_b64": over(row["tpu_batched_mm_ms_per_token"]),
            "kernel_speedup_over_best_standard_b64": over(min((t for t in standard if t is not None), default=None)),
            "kernel_speedup_over_torch_cpu_grouped_mm_b64": over(row["torch_cpu_grouped_mm_ms_per_token"]),
            "kernel_over_roofline_b64": None if kernel is None else kernel / row["roofline_ms"]}


def ratios(res):
    """At batch 64: speed-ups of the kernel (slower time / kernel time) and
    its time over the roofline: under their plain names for the dynamic
    cache (generate()'s default; the other cache where only it
    ran), and with a `static_` prefix for the static cache (transformers'
    compiled decoding on tpu) when both ran."""
    rows = res["rows"]
    main = rows.get("dynamic_b64") or next(r for k, r in rows.items() if k.endswith("_b64"))
    out = _row_ratios(main)
    if "dynamic_b64" in rows and "static_b64" in rows:
        out.update({f"static_{k}": v for k, v in _row_ratios(rows["static_b64"]).items()})
    return out


def main(a):
    one_thread()
    batches = [int(b) for b in a.moe_batches.split(",")]
    caches = a.moe_caches.split(",")
    print(f"MoE decoding (Qwen3-MoE from config), {a.decode_tokens} new tokens, best of {a.repeats}")
    with process_mode("fused"):
        res = bench_moe(batches, caches, max(a.decode_tokens, 3), a.repeats)
    res["runtime"] = torch_pjrt.runtime_info()
    res["mode"] = "fused"
    res["threads"] = {"torch": torch.get_num_threads(), "NPROC": os.environ.get("NPROC")}
    if any(k.endswith("_b64") for k in res["rows"]):
        res["ratios"] = ratios(res)
        print("ratios:", json.dumps(res["ratios"], indent=2))
    path = write_json(a.out, "moe.json", res)
    drew = chart.moe(res, os.path.join(a.out, "moe.png"), SIDES)
    print(f"wrote {path}" + (" and moe.png" if drew else ""))
    return 0
