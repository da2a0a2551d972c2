"""Ops made native to raise OpInfo conformance (the coverage branch): FFTs,
conjugation and others that used to run on the CPU fallback. Every op is
compared with PyTorch on the CPU on fresh random inputs and must not touch
the CPU fallback."""
import random

import pytest
import torch

from conftest import TPU, assert_close, check


def rand_shape(rank, lo=1, hi=5):
    return [random.randint(lo, hi) for _ in range(rank)]


def rand(shape, dtype=torch.float32, lo=-3.0, hi=3.0):
    if dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if dtype.is_floating_point or dtype.is_complex:
        return (torch.rand(shape, dtype=dtype) * (hi - lo) + lo)
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


def noncontig(x):
    """A non-contiguous view with x's values (a transposed copy)."""
    return x.transpose(0, -1).contiguous().transpose(0, -1) if x.dim() > 1 else x


# ---------------------------------------------------------------- conjugation

def test_conj_physical_and_conj_views():
    x = rand(rand_shape(2, 2, 5), torch.complex64)
    check(torch.conj_physical, x)
    check(lambda t: t.conj_physical_(), x.clone())
    check(lambda t: torch.conj_physical(t), rand([3, 4]))
    # A lazy conjugate (conj bit) read back, copied and computed with.
    check(lambda t: t.conj(), x)
    check(lambda t: t.conj().clone(), x)
    check(lambda t: t.conj() * 2, x)
    check(lambda t: t.conj().imag, x)
    check(lambda t: torch.zeros_like(t).conj().copy_(t), x)
    t = x.to(TPU).conj()
    assert_close(t, x.conj())
    assert_close(torch.empty_like(t).copy_(x.conj()), x.conj().resolve_conj())
    out = torch.empty(0, dtype=torch.complex64, device=TPU)
    torch.conj_physical(x.to(TPU), out=out)
    assert_close(out, x.conj_physical())


def test_complex_abs_and_sgn():
    x = rand(rand_shape(2, 2, 5), torch.complex64)
    x.view(-1)[0] = 0
    check(torch.abs, x)
    check(torch.sgn, x, atol=1e-6, rtol=1e-6)
    out = torch.empty(0, device=TPU)
    torch.abs(x.to(TPU), out=out)
    assert_close(out, x.abs())
    with pytest.raises(RuntimeError, match="In-place abs"):
        x.to(TPU).abs_()
    grads(lambda t: t.abs(), x + 0.1)
    grads(lambda t: (t.sgn() * 3).real, x + 0.1)


FLOATS = [torch.float32, torch.bfloat16, torch.float16]
INTS = [torch.int64, torch.int32]


# ---------------------------------------------------------------- activations

@pytest.mark.parametrize("dtype", FLOATS)
def test_glu(dtype):
    shape = rand_shape(3, 1, 4)
    dim = random.randint(-3, 2)
    shape[dim] *= 2
    x = rand(shape, dtype)
    check(lambda t: torch.nn.functional.glu(t, dim), x)
    check(lambda t: torch.nn.functional.glu(t, 0), noncontig(rand([4, 3], dtype)))
    out = torch.empty(0, dtype=dtype, device=TPU)
    torch._C._nn.glu(x.to(TPU), dim, out=out)
    assert_close(out, torch.nn.functional.glu(x, dim))
    if dtype == torch.float32:
        grads(lambda t: torch.nn.functional.glu(t, dim), x)
    with pytest.raises(RuntimeError, match="even"):
        torch.nn.functional.glu(torch.ones(3, device=TPU, dtype=dtype))


# ---------------------------------------------------------------- integer and bit math

@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.uint8])
def test_gcd_lcm(dtype):
    lo = 0 if dtype == torch.uint8 else -30
    a, b = rand(rand_shape(2, 1, 6), dtype, lo, 30), rand([1], dtype, lo, 30)
    a.view(-1)[0] = 0
    for f in (torch.gcd, torch.lcm):
        check(f, a, b)
        check(f, b, a)
        check(f, a.t(), a.t())
        check(lambda x, y: x.gcd_(y) if f is torch.gcd else x.lcm_(y), a.clone(), b)
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        torch.gcd(torch.ones(2, device=TPU), torch.ones(2, device=TPU))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8])
def test_shifts(dtype):
    bits = torch.iinfo(dtype).bits
    x = rand(rand_shape(2, 1, 6), dtype, torch.iinfo(dtype).min if dtype != torch.uint8 else 0,
             min(torch.iinfo(dtype).max, 2 ** 40))
    lo = 0 if dtype == torch.uint8 else -3
    s = rand(x.shape, dtype, lo, bits + 3)
    for f in (torch.bitwise_left_shift, torch.bitwise_right_shift, lambda a, b: a << b, lambda a, b: a >> b):
        check(f, x, s)
        check(f, x.t(), s.t())
        check(lambda a: f(a, 3), x)
    check(lambda a, b: a.bitwise_left_shift_(b), x.clone(), s)
    check(lambda a, b: a.__irshift__(b), x.clone(), s)
    check(lambda a: a.__ilshift__(2), x.clone())
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        torch.ones(2, device=TPU) << 1


@pytest.mark.parametrize("dtype", FLOATS + [torch.float64])
def test_nextafter(dtype):
    x = rand(rand_shape(2, 2, 6), dtype)
    y = rand(x.shape, dtype)
    x.view(-1)[:4] = torch.tensor([0.0, 1.0, float("nan"), -2.0], dtype=dtype)
    y.view(-1)[:4] = torch.tensor([-1.0, 1.0, 0.0, float("inf")], dtype=dtype)
    check(torch.nextafter, x, y, atol=0, rtol=0)
    check(lambda a, b: a.nextafter_(b), x.clone(), y, atol=0, rtol=0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch.nextafter(torch.ones(2, dtype=torch.int64, device=TPU), torch.ones(2, dtype=torch.int64, device=TPU))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_xlog1py(dtype):
    x = rand(rand_shape(2, 2, 6), dtype, -2, 3)
    y = rand(x.shape, dtype, 0, 5)
    if dtype.is_floating_point:
        x.view(-1)[:2] = 0
        y.view(-1)[1] = float("nan")
    check(torch.special.xlog1py, x, y)
    check(torch.special.xlog1py, x, 2.5)
    check(lambda b: torch.special.xlog1py(3, b), y)
    if dtype == torch.float32:
        grads(torch.special.xlog1py, x, y.abs())


# ---------------------------------------------------------------- special functions

@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_polygamma_negative_inputs(n, dtype):
    x = rand(rand_shape(2, 2, 6), dtype, -6, 6)
    if dtype.is_floating_point:
        x.view(-1)[:3] = torch.tensor([-2.0, 0.0, -0.5], dtype=dtype)  # poles and a half-integer
    # n >= 2 at negative x sums alternating terms: float32 cancellation on the CPU as well.
    tol = dict(atol=1e-3, rtol=1e-3) if n >= 2 or dtype == torch.bfloat16 else {}
    if dtype == torch.bfloat16:
        tol = dict(atol=5e-2, rtol=5e-2)
    check(lambda t: torch.polygamma(n, t), x, **tol)
    check(lambda t: torch.special.polygamma(n, t), x.abs() + 0.1, **tol)
    if dtype == torch.float32:
        grads(torch.digamma, x.abs() + 0.1 - 3 * (x < 0).float())


# ---------------------------------------------------------------- fixes in other families

def test_clamp_bool_tensor_bound():
    a, c = rand([4, 3], torch.bool), rand([3], torch.bool)
    check(torch.clamp_max, a, c)
    check(torch.clamp_min, a, c)
    check(lambda x, y: torch.clamp(x, max=y), a, c)
    with pytest.raises(NotImplementedError, match='"clamp" not implemented for \'Bool\''):
        torch.clamp(a.to(TPU), c.to(TPU), c.to(TPU))


@pytest.mark.parametrize("dtype", [torch.int64, torch.float32, torch.bfloat16])
def test_native_dropout_backward_dtype(dtype):
    g, m = rand([3, 4], dtype), rand([3, 4], torch.bool)
    check(lambda a, b: torch.ops.aten.native_dropout_backward(a, b, 1.25), g, m)


