"""torch.optim's fused=True steps on the tpu (_fused_adam_, _fused_adamw_,
_fused_sgd_): native, and equal to the CPU's fused kernels over several
steps for parameters and optimizer state, with float and tensor lr, every
option torch.optim passes, and GradScaler's grad_scale / found_inf (a step
with an inf gradient is skipped)."""
import json
import os
import subprocess
import sys

import pytest
import torch

import torch_pjrt
from conftest import TPU, assert_as_close_as_cpu, assert_close

SHAPES = [(37, 19), (19,), (3, 4, 5), (), (70,), (5, 7)]  # odd sizes reach the CPU kernels' scalar tails

CONFIGS = {
    "adamw": (torch.optim.AdamW, dict(lr=1e-2, weight_decay=0.1)),
    "adamw_amsgrad_maximize": (torch.optim.AdamW, dict(lr=1e-2, weight_decay=0.05, amsgrad=True, maximize=True)),
    "adam": (torch.optim.Adam, dict(lr=1e-2, betas=(0.8, 0.99))),
    "adam_wd_amsgrad": (torch.optim.Adam, dict(lr=1e-2, weight_decay=0.1, amsgrad=True, eps=1e-6)),
    # 1 - beta1 >= 0.5: the other branch of the CPU's lerp
    "adam_low_beta1": (torch.optim.Adam, dict(lr=1e-2, betas=(0.3, 0.9), maximize=True)),
    "adam_tensor_lr": (torch.optim.Adam, dict(lr=torch.tensor(1e-2), weight_decay=0.1)),
    "adamw_tensor_lr": (torch.optim.AdamW, dict(lr=torch.tensor(3e-3), amsgrad=True)),
    "sgd": (torch.optim.SGD, dict(lr=0.1)),
    "sgd_momentum": (torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    "sgd_nesterov_maximize": (torch.optim.SGD, dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    "sgd_tensor_lr": (torch.optim.SGD, dict(lr=torch.tensor(0.1), momentum=0.5, weight_decay=0.1)),
}

# float32: the largest difference from the CPU measured over these steps is
# 7e-7 (a few roundings in another order: XLA may contract a multiply-add).
F32_TOL = dict(atol=2e-6, rtol=2e-6)


def _params(dtype):
    # the last one a transposed (non-contiguous) parameter
    return [torch.randn(s).to(dtype) for s in SHAPES[:-1]] + [torch.randn(SHAPES[-1][::-1]).to(dtype).t()]


def _make(cfg, params, device):
    cls, kw = CONFIGS[cfg]
    kw = dict(kw)
    if device is not None and cfg != "adam_tensor_lr" and isinstance(kw["lr"], torch.Tensor):
        kw["lr"] = kw["lr"].to(device)  # adam_tensor_lr keeps a CPU lr tensor with tpu parameters
    ps = [p.clone().to(device).requires_grad_() if device else p.clone().requires_grad_() for p in params]
    return ps, cls(ps, fused=True, **kw)


def _state(opt, ps):
    return [opt.state[p] for p in ps]


class Run:
    """One optimizer over copies of the parameters: on the tpu, on the CPU,
    or the CPU in float32 (the reference that bounds half-precision error).
    round_to: the CPU's fused SGD in bfloat16 leaves its vectorized elements
    unchanged (its half-precision path never stores the parameter), so that
    kernel's stand-in is float32 with every stored value rounded to
    bfloat16 after each step: the same math, done by its scalar path."""

    def __init__(self, cfg, params, device=None, dtype=None, round_to=None, scaler=False):
        self.device, self.round_to = device, round_to
        self.ps, self.opt = _make(cfg, [p.to(dtype) for p in params] if dtype else params, device)
        self.scaler = torch.amp.GradScaler(device.type if device else "cpu", init_scale=2.0**10,
                                           growth_interval=2) if scaler else None

    def step(self, grads):
        grads = [g.to(self.ps[0].dtype).to(self.device) if self.device else g.to(self.ps[0].dtype) for g in grads]
        self.opt.zero_grad()
        if self.scaler is None:
            for p, g in zip(self.ps, grads):
                p.grad = g.clone()
            self.opt.step()
        else:
            # d loss / d p = g, times the scale
            self.scaler.scale(sum((p * g).sum() for p, g in zip(self.ps, grads))).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        if self.round_to is not None:
            with torch.no_grad():
                for p in self.ps:
                    p.copy_(p.to(self.round_to).float())
                    buf = self.opt.state[p].get("momentum_buffer")
                    if buf is not None:
                        buf.copy_(buf.to(self.round_to).float())

    def values(self, grads=True):
        """Parameters, gradients and optimizer state, in one order."""
        out = [p.detach() for p in self.ps] + ([p.grad for p in self.ps] if grads else [])
        for st in _state(self.opt, self.ps):
            out += [st[k] for k in sorted(st)]
        return out


def _runs(cfg, params, dtype, scaler=False):
    """(tpu, cpu, float32 reference or None)"""
    tpu = Run(cfg, params, TPU, scaler=scaler)
    if dtype == torch.float32:
        return tpu, Run(cfg, params, scaler=scaler), None
    emulate = cfg.startswith("sgd")
    cpu = Run(cfg, params, dtype=torch.float32 if emulate else None, round_to=dtype if emulate else None,
              scaler=scaler)
    return tpu, cpu, Run(cfg, params, dtype=torch.float32, scaler=scaler)


def _compare(tpu, cpu, ref):
    """float32: within F32_TOL of the CPU; bfloat16: no further from the
    float32 reference than twice the CPU's own bfloat16 error, plus one
    rounding step (a last-bit difference in float32 can flip a stored
    bfloat16 value, and the momentum carries it on)."""
    a, c = tpu.values(), cpu.values()
    assert len(a) == len(c)
    r = ref.values() if ref else [None] * len(a)
    for x, y, z in zip(a, c, r):
        if x.dtype == torch.bfloat16:
            assert_as_close_as_cpu(x, y.to(x.dtype), z)
        else:
            assert_close(x, y, **F32_TOL)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("cfg", CONFIGS)
def test_fused_step_matches_cpu(cfg, dtype):
    params = _params(dtype)
    runs = _runs(cfg, params, dtype)
    for _ in range(4):
        # Gradients laid out as their parameters, as autograd makes them: the
        # CPU kernels walk memory and pair elements by address.
        grads = _params(dtype)
        for run in runs:
            if run:
                run.step(grads)
    _compare(*runs)
    assert torch_pjrt.fallback_stats() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("cfg", ["adamw", "adam_wd_amsgrad", "adamw_tensor_lr", "sgd_momentum", "sgd"])
def test_fused_step_with_grad_scaler_matches_cpu(cfg, dtype):
    """GradScaler passes grad_scale and found_inf to a fused step: the
    gradients are unscaled in the step (and stored so), and the step with an
    inf gradient changes nothing: parameters, state and step count stay."""
    runs = _runs(cfg, _params(dtype), dtype, scaler=True)
    tpu, cpu, _ = runs
    for step in range(5):
        grads = _params(dtype)
        if step == 3:
            grads[1][4] = float("inf")
        before = [v.cpu().clone() for v in tpu.values(grads=False)]
        for run in runs:
            if run:
                run.step(grads)
        assert tpu.scaler.get_scale() == cpu.scaler.get_scale()
        if step == 3:
            assert tpu.scaler.get_scale() == 2.0**10  # grown at step 2, backed off at 3
            after = [v.cpu() for v in tpu.values(grads=False)]
            assert all(torch.equal(a, b) for a, b in zip(after, before)), "the skipped step changed a value"
        else:
            _compare(*runs)
    assert torch_pjrt.fallback_stats() == {}


def test_compiled_fused_step_matches_cpu():
    """torch.compile(optimizer.step): PyTorch keeps the fused step out of
    the graph (torch.compiler.disable), so it runs as the eager kernel, still
    native and equal to the CPU's."""
    cpu = Run("adamw_amsgrad_maximize", _params(torch.float32))
    tpu = Run("adamw_amsgrad_maximize", [p.detach() for p in cpu.ps], TPU)
    tpu.opt.step = torch.compile(tpu.opt.step, backend="tpu")
    for _ in range(3):
        tpu.step(grads := _params(torch.float32))
        cpu.step(grads)
    _compare(tpu, cpu, None)
    assert torch_pjrt.fallback_stats() == {}


@pytest.mark.parametrize("cfg", ["adamw", "sgd_momentum"])
def test_fused_step_on_views_of_one_storage(cfg):
    """Parameters that are views of one flat buffer (as flattened-parameter
    wrappers make them): each update lands in its part of the buffer."""
    flat = torch.randn(30)
    runs = []
    for device in (None, TPU):
        buf = flat.clone().to(device) if device else flat.clone()
        ps = [buf[:12].view(3, 4).requires_grad_(), buf[12:].view(2, 9).requires_grad_()]
        runs.append((buf, ps, CONFIGS[cfg][0](ps, fused=True, **CONFIGS[cfg][1])))
    for _ in range(3):
        grads = [torch.randn(3, 4), torch.randn(2, 9)]
        for buf, ps, opt in runs:
            for p, g in zip(ps, grads):
                p.grad = g.to(p.device)
            opt.step()
    assert_close(runs[1][0], runs[0][0], **F32_TOL)
    assert torch_pjrt.fallback_stats() == {}


def test_fused_step_errors():
    p = [torch.randn(3, device=TPU)]
    with pytest.raises(RuntimeError, match="expected 1 grads"):
        torch._fused_adamw_(p, [], [torch.zeros(3, device=TPU)], [torch.zeros(3, device=TPU)], [],
                            [torch.zeros((), device=TPU)], lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0,
                            eps=1e-8, amsgrad=False, maximize=False)
    with pytest.raises(RuntimeError, match="shape"):
        torch._fused_sgd_(p, [torch.randn(4, device=TPU)], [], weight_decay=0.0, momentum=0.0, lr=0.1,
                          dampening=0.0, nesterov=False, maximize=False, is_first_step=False)
    with pytest.raises(RuntimeError, match="momentum_buffer_list must be empty"):
        torch._fused_sgd_(p, [torch.randn(3, device=TPU)], [torch.randn(3, device=TPU)], weight_decay=0.0,
                          momentum=0.0, lr=0.1, dampening=0.0, nesterov=False, maximize=False, is_first_step=False)


# Trainer with its default arguments, on the tpu and on the CPU, in fresh
# processes: which optimizer it picked, what ran through the CPU fallback,
# the losses, and the parameters after training (saved to a file).
_TRAINER = r"""
import json, sys, torch, torch_pjrt
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments
out, device = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=128, max_position_embeddings=64)
model = LlamaForCausalLM(cfg)
ids = torch.randint(0, 128, (24, 16), generator=torch.Generator().manual_seed(1))
args = TrainingArguments(output_dir=out, max_steps=12, logging_steps=1, report_to=[], save_strategy="no",
                         use_cpu=device == "cpu", dataloader_pin_memory=False)
tr = Trainer(model=model, args=args, train_dataset=[{"input_ids": i, "labels": i} for i in ids])
tr.train()
torch.save({k: v.cpu() for k, v in tr.model.state_dict().items()}, out + "/params.pt")
print(json.dumps({"optim": getattr(args.optim, "value", str(args.optim)),
                  "device": str(next(tr.model.parameters()).device), "fallback": torch_pjrt.fallback_stats(),
                  "losses": [h["loss"] for h in tr.state.log_history if "loss" in h]}))
"""


@pytest.mark.once("runs the Trainer in fresh processes")
def test_trainer_default_optimizer_runs_natively_and_matches_cpu(tmp_path):
    pytest.importorskip("transformers")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCELERATE_")}
    res = {}
    for device in ("tpu", "cpu"):
        (tmp_path / device).mkdir()
        r = subprocess.run([sys.executable, "-c", _TRAINER, str(tmp_path / device), device], env=env,
                           capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr[-3000:]
        res[device] = json.loads(r.stdout.strip().splitlines()[-1])
    tpu, cpu = res["tpu"], res["cpu"]
    assert tpu["device"].startswith("tpu") and cpu["device"] == "cpu"
    assert tpu["optim"] == cpu["optim"] == "adamw_torch_fused", tpu["optim"]
    assert tpu["fallback"] == {}, f"ran through the CPU fallback: {tpu['fallback']}"
    assert len(tpu["losses"]) == len(cpu["losses"]) == 12
    # Measured: losses within 2e-7 relative, parameters within 6e-8.
    for step, (a, b) in enumerate(zip(tpu["losses"], cpu["losses"])):
        assert abs(a - b) <= 1e-6 * abs(b), f"step {step}: tpu loss {a} vs cpu {b}"
    got, want = (torch.load(tmp_path / d / "params.pt") for d in ("tpu", "cpu"))
    assert got.keys() == want.keys()
    for k in want:
        torch.testing.assert_close(got[k], want[k], atol=5e-7, rtol=0, msg=lambda m: f"{k}: {m}")
