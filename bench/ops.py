"""Per-op latency on the tpu device beside PyTorch CPU eager, measured
alternately in one process (ratios are robust to machine load).

    python bench/ops.py [--out DIR]

Prints a table and writes DIR/ops.json."""
import argparse
import json
import os
import statistics
import time

import torch
import torch_pjrt


def timeit(fn, sync, repeats=7, inner=200):
    for _ in range(20):
        fn()
    sync()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / inner * 1e6)
    return min(samples), statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="out/bench")
    args = ap.parse_args()
    torch.set_num_threads(1)
    cases = {
        "add 1 element": lambda d: (torch.randn(1, device=d), torch.randn(1, device=d), torch.add),
        "add 1k": lambda d: (torch.randn(1024, device=d), torch.randn(1024, device=d), torch.add),
        "mm 64x64": lambda d: (torch.randn(64, 64, device=d), torch.randn(64, 64, device=d), torch.mm),
        "mm 256x256": lambda d: (torch.randn(256, 256, device=d), torch.randn(256, 256, device=d), torch.mm),
    }
    rows = {}
    print(f"{'op':<16}{'torch cpu us (min/med)':>26}{'tpu us (min/med)':>22}{'tpu/cpu':>10}")
    for name, make in cases.items():
        a, b, f = make("cpu")
        ta, tb, _ = make("tpu")
        cpu = timeit(lambda: f(a, b), lambda: None, inner=50 if "256" in name else 200)
        tpu = timeit(lambda: f(ta, tb), torch.tpu.synchronize, inner=50 if "256" in name else 200)
        ratio = tpu[1] / cpu[1]
        rows[name] = {"torch_cpu_us": cpu, "tpu_us": tpu, "ratio_median": ratio}
        print(f"{name:<16}{cpu[0]:>12.1f} / {cpu[1]:<11.1f}{tpu[0]:>9.1f} / {tpu[1]:<10.1f}{ratio:>8.2f}x")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "ops.json"), "w") as f:
        json.dump({"ops": rows, "runtime": torch_pjrt.runtime_info(), "cache": torch_pjrt.cache_stats()}, f,
                  indent=2)


if __name__ == "__main__":
    main()
