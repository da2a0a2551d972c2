"""Training step of an 8M-parameter MLP on the tpu with torch.optim's
fused=True kernels beside foreach=True, in the strict and fused eager
modes, and PyTorch's own CPU step with fused=True; one thread on every
side. Prints median milliseconds per step (forward, backward, optimizer
step) and per optimizer step alone.

    PYTHONPATH=python python bench/fused_optim.py [repeats]
"""
import copy
import sys

import torch

from torch_pjrt.tools import bench

bench.one_thread()  # before the plugin starts: NPROC=1 for XLA:CPU

import torch_pjrt  # noqa: E402


def model():
    torch.manual_seed(0)
    layers = []
    for _ in range(8):  # 8 x (1024 x 1024 + 1024) = 8.4M parameters
        layers += [torch.nn.Linear(1024, 1024), torch.nn.GELU()]
    return torch.nn.Sequential(*layers)


def sides(make_opt, base, x, part):
    out = {}
    for device, modes in ((None, [None]), ("tpu", ["strict", "fused"])):
        for mode in modes:
            for kind in ("fused", "foreach"):
                if device is None and kind == "foreach":
                    continue
                m = copy.deepcopy(base).to(device or "cpu")
                opt = make_opt(m, kind)
                xx = x.to(device or "cpu")

                def train(m=m, opt=opt, xx=xx):
                    opt.zero_grad()
                    m(xx).square().mean().backward()
                    opt.step()

                def step(m=m, opt=opt):
                    opt.step()

                if part == "step":  # gradients for the step-only timing
                    with bench._process_mode(mode):
                        m(xx).square().mean().backward()
                sync = torch.tpu.synchronize if device else bench._no_sync
                out[f"{'tpu_' + mode if device else 'torch_cpu'}_{kind}"] = (train if part == "train" else step, sync,
                                                                             mode)
    return out


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    base, x = model(), torch.randn(8, 1024)
    print(f"{sum(p.numel() for p in base.parameters()) / 1e6:.1f}M parameters, batch 8")
    for name, make_opt in (("AdamW", lambda m, k: torch.optim.AdamW(m.parameters(), lr=1e-4, **{k: True})),
                           ("SGD", lambda m, k: torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9,
                                                                **{k: True}))):
        for part in ("train", "step"):
            r = bench._interleaved(sides(make_opt, base, x, part), repeats)
            for side, (t, c) in r.items():
                print(f"  {name} {part:<5} {side:<20} {t * 1e3:8.2f} ms   (process CPU {c * 1e3:8.2f} ms)")
    print("fallback:", torch_pjrt.fallback_stats())


if __name__ == "__main__":
    main()
