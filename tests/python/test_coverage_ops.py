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


# ---------------------------------------------------------------- reductions and comparisons

FLOATS = [torch.float32, torch.bfloat16, torch.float16]
INTS = [torch.int64, torch.int32]


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_nansum(dtype):
    x = rand(rand_shape(3, 2, 5), dtype)
    if dtype.is_floating_point:
        x[x > 1.5] = float("nan")
    check(torch.nansum, x)
    check(lambda t: torch.nansum(t, dim=1, keepdim=True), x)
    check(lambda t: torch.nansum(t, dim=(0, 2)), noncontig(x))
    check(lambda t: torch.nanmean(t, dim=-1), x.float())
    check(lambda t: torch.nansum(t, dim=0, dtype=torch.float32), x)
    out = torch.empty(0, dtype=torch.nansum(x).dtype, device=TPU)
    torch.nansum(x.to(TPU), dim=0, out=out)
    assert_close(out, torch.nansum(x, dim=0))


def test_nansum_gradient():
    x = rand(rand_shape(2, 2, 5))
    x[0, 0] = float("nan")
    grads(lambda t: torch.nansum(t, dim=1), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_equal(dtype):
    x = rand(rand_shape(2, 1, 5), dtype)
    assert torch.equal(x.to(TPU), x.clone().to(TPU))
    y = x.clone()
    y.view(-1)[-1] = not y.view(-1)[-1] if dtype == torch.bool else y.view(-1)[-1] + 1
    assert not torch.equal(x.to(TPU), y.to(TPU))
    assert not torch.equal(x.to(TPU), x.to(TPU).reshape(-1)) or x.dim() == 1
    assert torch.equal(x.to(TPU).t(), x.t().contiguous().to(TPU))
    assert torch.equal(torch.ones(3, device=TPU), torch.ones(3, dtype=torch.int64, device=TPU))
    nan = torch.tensor([float("nan")], device=TPU)
    assert not torch.equal(nan, nan)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32])
def test_trace(dtype):
    x = rand(rand_shape(2, 1, 6), dtype)
    check(torch.trace, x)
    check(torch.trace, x.t())
    if dtype == torch.float32:
        grads(torch.trace, x)
    with pytest.raises(RuntimeError, match="expected a matrix"):
        torch.trace(torch.ones(3, device=TPU))


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
        grads(lambda t: fn(t, dim).values, rand(x.shape))


# ---------------------------------------------------------------- index_reduce

@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32])
def test_index_reduce(reduce, dtype):
    shape = rand_shape(3, 2, 5)
    dim = random.randint(0, 2)
    n = random.randint(1, 7)
    src_shape = list(shape)
    src_shape[dim] = n
    x = rand(shape, dtype, 1, 4)
    src = rand(src_shape, dtype, 1, 4)
    idx = torch.randint(0, shape[dim], (n,))
    for include_self in (True, False):
        check(lambda t, i, s: torch.index_reduce(t, dim, i, s, reduce, include_self=include_self), x, idx, src,
              atol=1e-2 if dtype == torch.bfloat16 else None)
        check(lambda t, i, s: t.index_reduce_(dim, i, s, reduce, include_self=include_self), x.clone(), idx, src,
              atol=1e-2 if dtype == torch.bfloat16 else None)
    if dtype == torch.float32 and reduce != "mean":
        grads(lambda t, s: torch.index_reduce(t, dim, idx.to(t.device), s, reduce), x, src)


def test_index_reduce_rejects_bad_index():
    # Device indices are checked without waiting: the error surfaces at the next host read.
    x = torch.ones(3, device=TPU)
    with pytest.raises(IndexError, match="index out of range"):
        torch.index_reduce(x, 0, torch.tensor([5], device=TPU), torch.ones(1, device=TPU), "prod").cpu()
    with pytest.raises(IndexError, match='index out of range in self'):
        torch.index_reduce(x, 0, torch.tensor([-1], device=TPU), torch.ones(1, device=TPU), "amax").cpu()
    with pytest.raises(RuntimeError, match="same device"):
        torch.index_reduce(x, 0, torch.tensor([1]), torch.ones(1), "amin")


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


# ---------------------------------------------------------------- vectors

@pytest.mark.parametrize("p", [1, 2, 3.5, float("inf")])
@pytest.mark.parametrize("dtype", FLOATS)
def test_renorm(p, dtype):
    x = rand(rand_shape(3, 2, 5), dtype)
    dim = random.randint(0, 2)
    check(lambda t: torch.renorm(t, p, dim, 1.5), x)
    check(lambda t: t.renorm_(p, dim, 1.5), x.clone())
    if dtype == torch.float32:
        grads(lambda t: torch.renorm(t, p, dim, 1.5), x)


# ---------------------------------------------------------------- searching and counting

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32])
def test_searchsorted_bucketize(dtype):
    seq = rand([random.randint(1, 8)], dtype, -3, 3).sort().values
    v = rand(rand_shape(2, 1, 5), dtype, -4, 4)
    if dtype.is_floating_point:
        v.view(-1)[0] = float("nan")
    for right in (False, True):
        for out_int32 in (False, True):
            check(lambda s, t: torch.searchsorted(s, t, right=right, out_int32=out_int32), seq, v)
            check(lambda t, s: torch.bucketize(t, s, right=right, out_int32=out_int32), v, seq)
    check(lambda s: torch.searchsorted(s, 1), seq)
    check(lambda s: torch.bucketize(1, s), seq)
    check(lambda s, t: torch.searchsorted(s, t, side="right"), seq, v)
    # N-D boundaries, and an unsorted sequence with a sorter.
    seqs = rand([3, 6], dtype, -3, 3).sort(-1).values
    vals = rand([3, 4], dtype, -4, 4)
    check(torch.searchsorted, seqs, vals)
    raw = rand([7], dtype, -3, 3)
    sorter = raw.argsort()
    check(lambda s, t, o: torch.searchsorted(s, t, sorter=o), raw, v, sorter)
    with pytest.raises(RuntimeError, match="side"):
        torch.searchsorted(seq.to(TPU), v.to(TPU), right=True, side="left")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_histc(dtype):
    x = rand(rand_shape(2, 1, 10), dtype, -3, 3)
    bins = random.randint(1, 12)
    check(lambda t: torch.histc(t, bins=bins, min=-2, max=2), x)
    check(lambda t: torch.histc(t, bins=bins), x)
    check(lambda t: torch.histc(t, bins=bins), torch.full([4], 2.0, dtype=dtype))
    out = torch.empty(0, dtype=dtype, device=TPU)
    torch.histc(x.to(TPU), bins=bins, out=out)
    assert_close(out, torch.histc(x, bins=bins))
    with pytest.raises(RuntimeError, match="not finite"):
        # the data's range is checked on the device: raised at the next read
        torch.histc(torch.tensor([1.0, float("inf")], dtype=dtype, device=TPU)).cpu()
    with pytest.raises(RuntimeError, match="bins"):
        torch.histc(x.to(TPU), bins=0)


@pytest.mark.parametrize("wdtype", [None, torch.float32, torch.float16, torch.int64])
def test_bincount(wdtype):
    x = torch.randint(0, 9, (random.randint(1, 20),))
    w = None if wdtype is None else rand(x.shape, wdtype, 0, 5)
    check(lambda t: torch.bincount(t, w.to(t.device) if w is not None else None), x)
    check(lambda t: torch.bincount(t, minlength=15), x)
    check(lambda t: torch.bincount(t), x.to(torch.int32))
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.bincount(torch.tensor([1, -1], device=TPU))


# ---------------------------------------------------------------- losses

@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_huber_smooth_l1(reduction, dtype):
    x, y = rand(rand_shape(2, 2, 5), dtype), rand([1], dtype)
    y = y.expand(x.shape).contiguous()
    F = torch.nn.functional
    check(lambda a, b: F.huber_loss(a, b, reduction=reduction, delta=0.7), x, y)
    check(lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=0.7), x, y)
    check(lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=0.0), x, y)
    if dtype == torch.float32:
        grads(lambda a, b: F.huber_loss(a, b, reduction=reduction, delta=0.7), x, y)
        grads(lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=1.3), x, y)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_cross_entropy(reduction, dtype):
    F = torch.nn.functional
    x, y = rand(rand_shape(2, 2, 5), dtype, 0, 1), rand([1], dtype, 0, 1)
    y = y.expand(x.shape).contiguous()
    x.view(-1)[0] = 0
    w = rand(x.shape[-1:], dtype, 0, 2)
    check(lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction), x, y)
    check(lambda a, b, c: F.binary_cross_entropy(a, b, c, reduction=reduction), x, y, w)
    if dtype == torch.float32:
        grads(lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction), x.clamp(0.05, 0.95), y)
        grads(lambda a: F.binary_cross_entropy(a, y.to(a.device), w.to(a.device), reduction=reduction),
              x.clamp(0.05, 0.95))
    # checked on the device: raised at the next host read
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(torch.full([2], 1.5, device=TPU), torch.ones(2, device=TPU)).cpu()


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


def test_masked_select_zero_dim():
    for m in (True, False):
        check(torch.masked_select, rand([], torch.float32), torch.tensor(m))
    check(torch.masked_select, rand([3], torch.float32), torch.tensor(True))
