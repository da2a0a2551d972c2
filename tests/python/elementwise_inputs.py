"""Inputs the elementwise tests share (test_elementwise.py for unary, special
and integer math, test_elementwise_binary.py for binary and ternary ops):
random shapes and values, values with NaN / inf / -0 written in, and the
CPU-vs-tpu gradient check. One module so the shapes drawn once per run
are the same for both files, and the programs moving their tensors compile
once."""
import random

import torch

from conftest import TPU, assert_close

FLOATS = [torch.float32, torch.bfloat16, torch.float16]
INTS = [torch.int64, torch.int32]
NAN, INF = float("nan"), float("inf")


def rand_shape(rank, lo=1, hi=5):
    return [random.randint(lo, hi) for _ in range(rank)]


# Fresh every run, shared by the tests of a run so that the programs moving
# tensors between host and device compile once.
SHAPE2 = rand_shape(2, 2, 6)
SHAPE3 = rand_shape(3, 2, 5)


def rand(shape, dtype=torch.float32, lo=-3.0, hi=3.0):
    """Uniform in [lo, hi) (floats) or random integers in [lo, hi] (ints, bool)."""
    if dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if dtype.is_floating_point:
        return (torch.rand(shape) * (hi - lo) + lo).to(dtype)
    if dtype.is_complex:
        return torch.rand(shape, dtype=dtype) * (hi - lo) + lo
    return torch.randint(int(lo), int(hi) + 1, shape, dtype=dtype)


def grads(fn, *inputs, atol=1e-4, rtol=1e-4):
    """Compares d(sum(fn * g))/d(inputs) on the tpu and the CPU (float32)."""
    cpu = [x.detach().clone().requires_grad_(True) for x in inputs]
    tpu = [x.detach().to(TPU).requires_grad_(True) for x in inputs]
    out_c = fn(*cpu)
    g = torch.randn_like(out_c.real if out_c.is_complex() else out_c)
    if out_c.is_complex():
        g = torch.complex(g, torch.randn_like(g))
    out_c.backward(g)
    fn(*tpu).backward(g.to(TPU))
    for c, t in zip(cpu, tpu):
        assert_close(t.grad, c.grad, atol=atol, rtol=rtol)


def with_specials(x):
    """x with NaN, +-inf, +-0 written in (floats only)."""
    if x.dtype.is_floating_point and x.numel() >= 6:
        flat = x.view(-1)
        flat[:6] = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 1.0], dtype=x.dtype)
    return x
