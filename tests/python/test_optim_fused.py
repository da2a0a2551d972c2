"""torch.optim's fused=True steps on the tpu (_fused_adam_, _fused_adamw_,
_fused_sgd_): native, and equal to the CPU's fused kernels over several
steps for parameters and optimizer state, with float and tensor lr, every
option torch.optim passes, and GradScaler's grad_scale / found_inf (a step
with an inf gradient is skipped)."""
import copy
import json
import os
import subprocess
import sys

import pytest
import torch

import torch_pjrt
from conftest import TPU, assert_close

SHAPES = [(37, 19), (19,), (3, 4, 5), (), (70,)]  # odd sizes reach the CPU kernels' scalar tails

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

# Largest differences from the CPU measured over these steps: float32 7e-7
# (a few roundings in another order: XLA may contract a multiply-add);
# bfloat16 one step of the stored value's rounding (1 ulp <= 2^-7
# relative) where the float32 math differs in its last bits.
TOL = {torch.float32: (2e-6, 2e-6), torch.bfloat16: (1e-5, 8e-3)}


def _params(dtype):
    return [torch.randn(s).to(dtype) for s in SHAPES]


def _make(cfg, params, device):
    cls, kw = CONFIGS[cfg]
    kw = dict(kw)
    if device is not None and cfg != "adam_tensor_lr" and isinstance(kw["lr"], torch.Tensor):
        kw["lr"] = kw["lr"].to(device)  # adam_tensor_lr keeps a CPU lr tensor with tpu parameters
    ps = [p.clone().to(device).requires_grad_() if device else p.clone().requires_grad_() for p in params]
    return ps, cls(ps, fused=True, **kw)


def _state(opt, ps):
    return [{k: v for k, v in sorted(opt.state[p].items())} for p in ps]


def _cpu_reference_bf16_sgd(cfg, params, grads_per_step):
    """The CPU's fused SGD in bfloat16 leaves its vectorized elements
    unchanged (its half-precision path never stores the parameter), so the
    bfloat16 reference is the float32 kernel with every stored value
    rounded to bfloat16 after each step: the same math, done by the kernel's
    scalar path."""
    ps, opt = _make(cfg, [p.float() for p in params], None)
    for grads in grads_per_step:
        for p, g in zip(ps, grads):
            p.grad = g.float()
        opt.step()
        with torch.no_grad():
            for p in ps:
                p.copy_(p.to(torch.bfloat16).float())
                buf = opt.state[p].get("momentum_buffer")
                if buf is not None:
                    buf.copy_(buf.to(torch.bfloat16).float())
    return [p.detach().to(torch.bfloat16) for p in ps], [
        {k: v.to(torch.bfloat16) for k, v in s.items()} for s in _state(opt, ps)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("cfg", CONFIGS)
def test_fused_step_matches_cpu(cfg, dtype):
    params = _params(dtype)
    steps = [[torch.randn(s).to(dtype) for s in SHAPES] for _ in range(4)]
    cpu, cpu_opt = _make(cfg, params, None)
    tpu, tpu_opt = _make(cfg, params, TPU)
    for grads in steps:
        for p, q, g in zip(cpu, tpu, grads):
            p.grad, q.grad = g.clone(), g.to(TPU)
        cpu_opt.step()
        tpu_opt.step()
    atol, rtol = TOL[dtype]
    expected_params, expected_state = [p.detach() for p in cpu], _state(cpu_opt, cpu)
    if dtype == torch.bfloat16 and cfg.startswith("sgd"):
        expected_params, expected_state = _cpu_reference_bf16_sgd(cfg, params, steps)
    assert_close([q.detach() for q in tpu], expected_params, atol=atol, rtol=rtol)
    actual_state = _state(tpu_opt, tpu)
    assert [sorted(s) for s in actual_state] == [sorted(s) for s in expected_state]
    for a, e in zip(actual_state, expected_state):
        for k in e:
            assert_close(a[k], e[k], atol=atol, rtol=rtol)
    assert torch_pjrt.fallback_stats() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("cfg", ["adamw", "adam_wd_amsgrad", "adamw_tensor_lr", "sgd_momentum", "sgd"])
def test_fused_step_with_grad_scaler_matches_cpu(cfg, dtype):
    """GradScaler passes grad_scale and found_inf to a fused step: the
    gradients are unscaled in the step (and stored so), and the step with an
    inf gradient changes nothing: parameters, state and step count stay."""
    params = _params(dtype)
    # See _cpu_reference_bf16_sgd: that CPU kernel's stand-in is float32
    # with the stored values rounded to bfloat16 after each step.
    rounded = dtype == torch.bfloat16 and cfg.startswith("sgd")
    runs = []
    for device in (None, TPU):
        ps, opt = _make(cfg, [p.float() for p in params] if rounded and not device else params, device)
        scaler = torch.amp.GradScaler(device.type if device else "cpu", init_scale=2.0**10, growth_interval=2)
        runs.append((ps, opt, scaler, device))
    for step in range(5):
        grads = [torch.randn(s).to(dtype) for s in SHAPES]
        if step == 3:
            grads[1][4] = float("inf")
        before = [q.detach().cpu() for q in runs[1][0]]
        for ps, opt, scaler, device in runs:
            opt.zero_grad()
            # d loss / d p = g, times the scale
            loss = sum((p * (g.to(device) if device else g)).sum() for p, g in zip(ps, grads))
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        (cpu, cpu_opt, cpu_scaler, _), (tpu, tpu_opt, tpu_scaler, _) = runs
        if rounded:
            with torch.no_grad():
                for p in cpu:
                    p.copy_(p.to(dtype).float())
                    buf = cpu_opt.state[p].get("momentum_buffer")
                    if buf is not None:
                        buf.copy_(buf.to(dtype).float())
        assert tpu_scaler.get_scale() == cpu_scaler.get_scale()
        if step == 3:
            assert tpu_scaler.get_scale() == 2.0**10  # grown at step 2, backed off at 3
            for q, b in zip(tpu, before):
                assert torch.equal(q.detach().cpu(), b), "a step with an inf gradient changed a parameter"
        atol, rtol = TOL[dtype]
        assert_close([q.detach() for q in tpu], [p.detach().to(dtype) for p in cpu], atol=atol, rtol=rtol)
        # the unscaled gradients are stored back (not on the skipped step, as on the CPU)
        assert_close([q.grad for q in tpu], [p.grad.to(dtype) for p in cpu], atol=atol, rtol=rtol)
        for a, e in zip(_state(tpu_opt, tpu), _state(cpu_opt, cpu)):
            assert sorted(a) == sorted(e)
            for k in e:
                assert_close(a[k], e[k].to(a[k].dtype), atol=atol, rtol=rtol)
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
