"""Scans on the tpu against PyTorch on the CPU: cumsum, cumprod, logcumsumexp
and cummax / cummin along every dim, in-place and out= variants, long scans,
infinities and NaN, gradients, and that none of these ops runs through the
CPU fallback."""
import math
import random

import pytest
import torch

from conftest import TPU, assert_close, check

FLOATS = [torch.float32, torch.bfloat16, torch.float16]


def make(shape, dtype=torch.float32, layout="contiguous"):
    """A random tensor of `shape`, optionally as a transposed or sliced view
    (of a larger CPU tensor: check() copies views with their layout)."""
    if dtype == torch.bool:
        x = torch.rand(shape) > 0.5
    elif dtype.is_floating_point:
        x = torch.randn(shape).to(dtype)
    else:
        x = torch.randint(-5, 6, shape).to(dtype)
    if layout == "transposed" and x.dim() >= 2:
        return x.transpose(0, -1).contiguous().transpose(0, -1)
    if layout == "sliced" and x.dim() >= 1:
        big = torch.cat([x, x], dim=-1)
        return big[..., ::2]
    return x


def on_tpu_like(x):
    """Moves x to the tpu as the same view of a copy of its base."""
    if x._base is None:
        return x.to(TPU)
    return x._base.to(TPU).as_strided(x.size(), x.stride(), x.storage_offset())


def compare(fn, x, *args, atol=None, rtol=None, **kwargs):
    expected = fn(x, *args, **kwargs)
    actual = fn(on_tpu_like(x), *args, **kwargs)
    assert_close(actual, expected, atol=atol, rtol=rtol)
    return actual


def pick(xs, k=2):
    """k random choices out of xs: coverage across runs, few programs per run."""
    xs = list(xs)
    return random.sample(xs, min(k, len(xs)))


def shapes_for(dtype, shapes, k=2):
    """Every shape for float32; k of them for the other dtypes (compiles are
    the test suite's cost, and the lowering is dtype-generic)."""
    return list(shapes) if dtype == torch.float32 else pick(shapes, k)


def dims_of(rank):
    return range(-max(rank, 1), max(rank, 1))


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64, torch.bool])
def test_cumsum(dtype):
    for shape in shapes_for(dtype, [(), (1,), (7,), (4, 9), (2, 3, 5), (0, 3)]):
        x = make(shape, dtype, random.choice(["contiguous", "transposed"]))
        for dim in pick(dims_of(len(shape))):
            compare(lambda t: torch.cumsum(t, dim), x, atol=1e-5 if dtype == torch.float32 else None)
    x = make((3, 6), dtype)
    compare(lambda t: torch.cumsum(t, 1, dtype=torch.float32), x, atol=1e-5)
    if dtype != torch.bool:
        check(lambda t: t.cumsum_(1), x)
    out_c, out_t = torch.empty(0, dtype=torch.float64), torch.empty(0, dtype=torch.float64, device=TPU)
    torch.cumsum(x, 0, dtype=torch.float64, out=out_c)
    torch.cumsum(x.to(TPU), 0, dtype=torch.float64, out=out_t)
    assert_close(out_t, out_c)


def test_cumsum_long():
    x = torch.randn(3, 3000)
    compare(lambda t: t.cumsum(1), x, atol=1e-3, rtol=1e-5)
    i = torch.randint(-1000, 1000, (5000,))
    compare(lambda t: t.cumsum(0), i)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_cumprod(dtype):
    for shape in shapes_for(dtype, [(), (9,), (4, 7), (2, 3, 5)]):
        x = (torch.rand(shape) + 0.5).to(dtype) if dtype.is_floating_point else torch.randint(-3, 4, shape)
        for dim in pick(dims_of(len(shape))):
            compare(lambda t: torch.cumprod(t, dim), x, atol=1e-5 if dtype == torch.float32 else None)
    x = torch.rand(3, 5) + 0.5
    check(lambda t: t.cumprod_(0), x)
    out_c, out_t = torch.empty(0), torch.empty(0, device=TPU)
    torch.cumprod(x, 1, out=out_c)
    torch.cumprod(x.to(TPU), 1, out=out_t)
    assert_close(out_t, out_c)


@pytest.mark.parametrize("dtype", FLOATS)
def test_logcumsumexp(dtype):
    for shape in shapes_for(dtype, [(), (9,), (4, 7), (2, 3, 5)]):
        x = make(shape, dtype) * 4
        for dim in pick(dims_of(len(shape))):
            compare(lambda t: torch.logcumsumexp(t, dim), x, atol=1e-5 if dtype == torch.float32 else None)
    x = torch.tensor([[-math.inf, -math.inf, 1.0, -math.inf, 2.0],
                      [math.inf, 0.0, math.inf, 1.0, -math.inf],
                      [0.0, math.nan, 1.0, 2.0, 3.0]])
    compare(lambda t: t.logcumsumexp(1), x)
    out_c, out_t = torch.empty(0), torch.empty(0, device=TPU)
    torch.logcumsumexp(x, 1, out=out_c)
    torch.logcumsumexp(x.to(TPU), 1, out=out_t)
    assert_close(out_t, out_c)


# ------------------------------------------------------------- cummax / cummin


def rand_shape(rank, lo=1, hi=5):
    return [random.randint(lo, hi) for _ in range(rank)]


def rand(shape, dtype=torch.float32, lo=-3.0, hi=3.0):
    if dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if dtype.is_floating_point:
        return torch.rand(shape, dtype=dtype) * (hi - lo) + lo
    return torch.randint(int(lo), int(hi) + 1, shape, dtype=dtype)


def noncontig(x):
    """A non-contiguous view with x's values (a transposed copy)."""
    return x.transpose(0, -1).contiguous().transpose(0, -1) if x.dim() > 1 else x


def grads_at(fn, *inputs, atol=1e-4, rtol=1e-4):
    """Compares d(sum(fn * g))/d(inputs) at the given inputs on the tpu and the CPU."""
    cpu = [x.detach().clone().requires_grad_(True) for x in inputs]
    tpu = [x.detach().to(TPU).requires_grad_(True) for x in inputs]
    out_c = fn(*cpu)
    g = torch.randn_like(out_c)
    out_c.backward(g)
    fn(*tpu).backward(g.to(TPU))
    for c, t in zip(cpu, tpu):
        assert_close(t.grad, c.grad, atol=atol, rtol=rtol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32, torch.bool])
@pytest.mark.parametrize("fn", [torch.cummax, torch.cummin])
def test_cummax_cummin(fn, dtype):
    x = rand(rand_shape(3, 1, 9), dtype, -2, 2)  # small range: ties
    if dtype.is_floating_point:
        x.view(-1)[random.randrange(x.numel())] = float("nan")
    dim = random.randint(-3, 2)
    check(lambda t: fn(t, dim), x)
    check(lambda t: fn(t, 0), noncontig(x))
    check(lambda t: fn(t, 0), rand([], dtype))
    if dtype == torch.float32:
        grads_at(lambda t: fn(t, dim).values, rand(x.shape))


def test_logcumsumexp_rejects_integers_like_cpu():
    with pytest.raises(RuntimeError, match="not implemented|floating"):
        torch.arange(6, device=TPU).view(2, 3).logcumsumexp(1)
