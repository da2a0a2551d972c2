"""Layer norm and RMS norm on the tpu against PyTorch on the CPU: forward
outputs and statistics, gradients of input / weight / bias, reduced-precision
inputs, modules, and that none of it runs through the CPU fallback."""
import random

import pytest
import torch
import torch.nn.functional as F

import torch_pjrt
from conftest import TPU, assert_close

# (input shape, number of normalized trailing dims)
CASES = [((6,), 1), ((4, 8), 1), ((2, 3, 16), 1), ((2, 3, 4, 5), 2), ((3, 4, 5), 3), ((0, 4), 1)]


def params(shape, n, with_weight, with_bias, dtype):
    ns = shape[len(shape) - n:]
    w = torch.randn(ns, dtype=dtype) if with_weight else None
    b = torch.randn(ns, dtype=dtype) if with_bias else None
    return list(ns), w, b


def tpu(t):
    return None if t is None else t.to(TPU)


def tol(dtype):
    return {torch.float32: (1e-5, 1e-4), torch.bfloat16: (3e-2, 2e-2), torch.float16: (3e-3, 3e-3)}[dtype]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_native_layer_norm_forward(dtype):
    atol, rtol = tol(dtype)
    cases = CASES if dtype == torch.float32 else random.sample(CASES, 3)
    for shape, n in cases:
        for hw, hb in [(True, True), (False, False), random.choice([(True, False), (False, True)])]:
            x = torch.randn(shape, dtype=dtype) * 2 + 0.5
            ns, w, b = params(shape, n, hw, hb, dtype)
            expected = torch.native_layer_norm(x, ns, w, b, 1e-5)
            actual = torch.native_layer_norm(x.to(TPU), ns, tpu(w), tpu(b), 1e-5)
            assert_close(actual, expected, atol=atol, rtol=rtol)


def test_layer_norm_mixed_dtypes_and_eps():
    # bf16 input with f32 parameters: statistics come out as f32, like the CPU.
    x = torch.randn(3, 8, dtype=torch.bfloat16)
    w, b = torch.randn(8), torch.randn(8)
    expected = torch.native_layer_norm(x, [8], w, b, 1e-5)
    actual = torch.native_layer_norm(x.to(TPU), [8], w.to(TPU), b.to(TPU), 1e-5)
    assert_close(actual, expected, atol=3e-2, rtol=2e-2)
    # eps is an operand: a new eps reuses the compiled program.
    x = torch.randn(4, 8)
    F.layer_norm(x.to(TPU), (8,), eps=1e-3).cpu()
    torch_pjrt.reset_cache_stats()
    for eps in [1e-2, 0.5]:
        assert_close(F.layer_norm(x.to(TPU), (8,), eps=eps), F.layer_norm(x, (8,), eps=eps), atol=1e-5, rtol=1e-4)
    assert torch_pjrt.cache_stats()["misses"] == 0


def test_layer_norm_non_contiguous_input():
    x = torch.randn(8, 5, 3)
    t = x.to(TPU)
    assert_close(F.layer_norm(t.transpose(0, 2), (8,)), F.layer_norm(x.transpose(0, 2), (8,)), atol=1e-5, rtol=1e-4)
    assert_close(F.layer_norm(t[:, ::2], (3,)), F.layer_norm(x[:, ::2], (3,)), atol=1e-5, rtol=1e-4)


def run_grads(fn, x, extra, atol, rtol):
    xs = [x] + [e for e in extra if e is not None]
    for t in xs:
        t.requires_grad_()
    ts = [t.detach().to(TPU).requires_grad_() for t in xs]
    it = iter(ts[1:])
    t_extra = [None if e is None else next(it) for e in extra]
    expected = fn(x, *extra)
    actual = fn(ts[0], *t_extra)
    assert_close(actual, expected, atol=atol, rtol=rtol)
    g = torch.randn_like(expected)
    expected.backward(g)
    actual.backward(g.to(TPU))
    for t, c in zip(ts, xs):
        assert_close(t.grad, c.grad, atol=atol, rtol=rtol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_layer_norm_grad(dtype):
    atol, rtol = (1e-4, 1e-4) if dtype == torch.float32 else (5e-2, 3e-2)
    cases = CASES[:-1] if dtype == torch.float32 else random.sample(CASES[:-1], 2)
    for shape, n in cases:
        for hw, hb in [(True, True), (False, False), random.choice([(True, False), (False, True)])]:
            x = torch.randn(shape, dtype=dtype)
            ns, w, b = params(shape, n, hw, hb, dtype)
            run_grads(lambda a, ww, bb: F.layer_norm(a, ns, ww, bb), x, [w, b], atol, rtol)


def test_native_layer_norm_backward_masks():
    x, g = torch.randn(4, 6), torch.randn(4, 6)
    w, b = torch.randn(6), torch.randn(6)
    _, mean, rstd = torch.native_layer_norm(x, [6], w, b, 1e-5)
    for mask in [[True, True, True], [True, False, False], [False, True, True], [False, False, True]]:
        expected = torch.ops.aten.native_layer_norm_backward(g, x, [6], mean, rstd, w, b, mask)
        actual = torch.ops.aten.native_layer_norm_backward(g.to(TPU), x.to(TPU), [6], mean.to(TPU), rstd.to(TPU),
                                                           w.to(TPU), b.to(TPU), mask)
        for a, e in zip(actual, expected):
            assert (a is None) == (e is None)
            if e is not None:
                assert_close(a, e, atol=1e-5, rtol=1e-4)


def test_layer_norm_module_training_step():
    m = torch.nn.LayerNorm(8)
    with torch.no_grad():
        m.weight.copy_(torch.randn(8))
        m.bias.copy_(torch.randn(8))
    mt = torch.nn.LayerNorm(8).to(TPU)
    mt.load_state_dict(m.state_dict())
    x = torch.randn(5, 8)
    m(x).pow(3).sum().backward()
    mt(x.to(TPU)).pow(3).sum().backward()
    assert_close(mt.weight.grad, m.weight.grad, atol=1e-4, rtol=1e-4)
    assert_close(mt.bias.grad, m.bias.grad, atol=1e-4, rtol=1e-4)


def test_layer_norm_bad_shapes():
    x = torch.randn(3, 4, device=TPU)
    with pytest.raises(RuntimeError, match='Given normalized_shape'):
        F.layer_norm(x, (5,))
    with pytest.raises(RuntimeError, match='Expected weight to be of same shape as normalized_shape'):
        F.layer_norm(x, (4,), torch.randn(3, device=TPU))


# ---------------------------------------------------------------- RMS norm


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_rms_norm_forward(dtype):
    atol, rtol = tol(dtype)
    cases = CASES if dtype == torch.float32 else random.sample(CASES, 3)
    for shape, n in cases:
        for hw in [True, False]:
            for eps in [None, 1e-6]:
                x = torch.randn(shape, dtype=dtype)
                ns, w, _ = params(shape, n, hw, False, dtype)
                assert_close(F.rms_norm(x.to(TPU), ns, tpu(w), eps), F.rms_norm(x, ns, w, eps), atol=atol, rtol=rtol)


def test_fused_rms_norm_outputs():
    for dtype in [torch.float32, torch.bfloat16]:
        x, w = torch.randn(3, 4, 8, dtype=dtype), torch.randn(8, dtype=dtype)
        expected = torch._fused_rms_norm(x, [8], w, 1e-5)
        actual = torch._fused_rms_norm(x.to(TPU), [8], w.to(TPU), 1e-5)
        assert_close(actual, expected, atol=3e-2 if dtype == torch.bfloat16 else 1e-5, rtol=2e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rms_norm_grad(dtype):
    atol, rtol = (1e-4, 1e-4) if dtype == torch.float32 else (5e-2, 3e-2)
    cases = CASES[:-1] if dtype == torch.float32 else random.sample(CASES[:-1], 2)
    for shape, n in cases:
        for hw in [True, False]:
            x = torch.randn(shape, dtype=dtype)
            ns, w, _ = params(shape, n, hw, False, dtype)
            run_grads(lambda a, ww: F.rms_norm(a, ns, ww, 1e-6), x, [w], atol, rtol)


def test_rms_norm_module_is_native():
    m = torch.nn.RMSNorm(16)
    with torch.no_grad():
        m.weight.copy_(torch.randn(16))
    mt = torch.nn.RMSNorm(16).to(TPU)
    mt.load_state_dict(m.state_dict())
    x = torch.randn(4, 16)
    xt = x.to(TPU).requires_grad_()
    x.requires_grad_()
    out = mt(xt)
    out.backward(torch.ones_like(out))
    xt.grad.cpu()
    m(x).backward(torch.ones(4, 16))
    assert_close(xt.grad, x.grad, atol=1e-5, rtol=1e-4)
    assert_close(mt.weight.grad, m.weight.grad, atol=1e-5, rtol=1e-4)


def test_rms_norm_bad_shapes():
    x = torch.randn(3, 4, device=TPU)
    with pytest.raises(RuntimeError, match='Given normalized_shape'):
        F.rms_norm(x, (5,))
