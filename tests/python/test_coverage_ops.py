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


# ---------------------------------------------------------------- FFT

FFT_TOL = dict(atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("fn", ["fft", "ifft", "rfft", "ihfft"])
def test_fft_1d(fn, norm):
    x = rand(rand_shape(3, 2, 7))
    dim = random.randint(-3, 2)
    n = random.choice([None, random.randint(1, 9)])
    f = getattr(torch.fft, fn)
    check(lambda t: f(t, n=n, dim=dim, norm=norm), x, **FFT_TOL)
    check(lambda t: f(t, dim=dim, norm=norm), noncontig(x), **FFT_TOL)
    if fn in ("fft", "ifft"):
        check(lambda t: f(t, n=n, dim=dim, norm=norm), rand(x.shape, torch.complex64), **FFT_TOL)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("fn", ["irfft", "hfft"])
def test_fft_1d_to_real(fn, norm):
    x = rand(rand_shape(3, 2, 7), torch.complex64)
    dim = random.randint(-3, 2)
    n = random.choice([None, random.randint(1, 12)])
    f = getattr(torch.fft, fn)
    check(lambda t: f(t, n=n, dim=dim, norm=norm), x, **FFT_TOL)


@pytest.mark.parametrize("fn", ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn", "irfft2", "irfftn",
                                "hfft2", "hfftn", "ihfft2", "ihfftn"])
def test_fft_nd(fn, norm=None):
    real_in = fn.startswith(("rfft", "ihfft")) or random.random() < 0.5 and fn in ("fft2", "fftn")
    x = rand(rand_shape(4, 2, 5), torch.float32 if real_in else torch.complex64)
    f = getattr(torch.fft, fn)
    norm = random.choice([None, "ortho", "forward"])
    check(lambda t: f(t, norm=norm), x, **FFT_TOL)
    check(lambda t: f(t, dim=(0, 2), norm=norm), x, **FFT_TOL)
    if fn.endswith("n"):
        # All four dims: more than XLA's three per stablehlo.fft.
        check(lambda t: f(t, dim=(3, 0, 1, 2), norm=norm), x, **FFT_TOL)


def test_fft_out_variants():
    x = rand([4, 6])
    for f, a in [(torch.fft.fft, x), (torch.fft.rfft, x), (torch.fft.irfft, torch.fft.rfft(x))]:
        expected = f(a)
        out = torch.empty(0, dtype=expected.dtype, device=TPU)
        f(a.to(TPU), out=out)
        assert_close(out, expected, **FFT_TOL)


def test_fft_gradients():
    x = rand(rand_shape(2, 3, 6))
    grads(lambda t: torch.fft.rfft(t).abs(), x)
    grads(lambda t: torch.fft.fft2(t).real, x)
    grads(lambda t: torch.fft.irfft(torch.fft.rfft(t) * 2, n=t.shape[-1]), x)
    grads(lambda t: torch.fft.ihfft(t).imag, x)


def test_fft_rejects_bad_input():
    with pytest.raises(RuntimeError, match='expects a complex input tensor'):
        torch.ops.aten._fft_c2c(torch.ones(4, device=TPU), [0], 0, True)
    with pytest.raises(IndexError, match='Dimension out of range'):
        torch.fft.fft(torch.ones(4, device=TPU), dim=3)


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


# ---------------------------------------------------------------- vectors

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_cross(dtype):
    shape = rand_shape(3, 1, 4)
    dim = random.randint(0, 2)
    shape[dim] = 3
    x, y = rand(shape, dtype), rand(shape, dtype)
    check(lambda a, b: torch.linalg.cross(a, b, dim=dim), x, y)
    check(lambda a, b: torch.cross(a, b, dim=dim), x, y)
    check(lambda a, b: torch.linalg.cross(a, b, dim=dim), x, y.select(0, 0).unsqueeze(0) if dim else y)
    if dtype == torch.float32:
        grads(lambda a, b: torch.linalg.cross(a, b, dim=dim), x, y)
    with pytest.raises(RuntimeError, match='dimension -1 must have length 3'):
        torch.linalg.cross(torch.ones(2, 4, device=TPU), torch.ones(2, 4, device=TPU))


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


# ---------------------------------------------------------------- max_unpool

@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("dtype", FLOATS)
def test_max_unpool(nd, dtype):
    pool = getattr(torch.nn.functional, f"max_pool{nd}d")
    unpool = getattr(torch.nn.functional, f"max_unpool{nd}d")
    spatial = [2 * s for s in rand_shape(nd, 2, 3)]  # even: the default output size holds every index
    x = rand([2, 3] + spatial, dtype)
    v, i = pool(x, 2, return_indices=True)
    check(lambda a, b: unpool(a, b, 2), v, i)
    check(lambda a, b: unpool(a, b, 2, output_size=[s + 1 for s in spatial]), v, i)
    check(lambda a, b: unpool(a[0], b[0], 2), v, i)  # unbatched
    if dtype == torch.float32:
        grads(lambda a: unpool(a, i.to(a.device), 2), v)
    with pytest.raises(RuntimeError, match="invalid max index"):
        unpool(v.to(TPU), (i + 1000).to(TPU), 2).cpu()


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


# ---------------------------------------------------------------- fixes in other families

@pytest.mark.parametrize("dtype", [torch.int64])  # the CPU's slow path covers int64 only
def test_integer_convolution(dtype):
    F = torch.nn.functional
    x, w, bias = rand([2, 3, 7], dtype, -5, 5), rand([4, 3, 3], dtype, -5, 5), rand([4], dtype, -5, 5)
    check(lambda a, b, c: F.conv1d(a, b, c, stride=2, padding=1), x, w, bias)
    check(lambda a, b: F.conv_transpose1d(a, b, stride=2), x, rand([3, 4, 3], dtype, -5, 5))
    check(F.conv2d, rand([2, 3, 5, 6], dtype, -5, 5), rand([4, 3, 3, 2], dtype, -5, 5))
    check(lambda a, b: F.conv2d(a, b, groups=3), rand([1, 3, 4, 4], dtype, -5, 5), rand([3, 1, 2, 2], dtype, -5, 5))


@pytest.mark.parametrize("dtype", [torch.int64, torch.float32, torch.bfloat16])
def test_native_dropout_backward_dtype(dtype):
    g, m = rand([3, 4], dtype), rand([3, 4], torch.bool)
    check(lambda a, b: torch.ops.aten.native_dropout_backward(a, b, 1.25), g, m)


def test_masked_select_zero_dim():
    for m in (True, False):
        check(torch.masked_select, rand([], torch.float32), torch.tensor(m))
    check(torch.masked_select, rand([3], torch.float32), torch.tensor(True))


# ---------------------------------------------------------------- pooling

F_ = torch.nn.functional


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_max_pool(nd, dtype):
    pool = getattr(F_, f"max_pool{nd}d")
    x = rand([2, 3] + rand_shape(nd, 5, 8), dtype)
    x.view(-1)[random.randrange(x.numel())] = float("nan")
    x[..., 0] = x[..., 1]  # ties: the first index wins
    for kw in [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
               dict(kernel_size=2, stride=1, dilation=2, ceil_mode=True), dict(kernel_size=3, stride=2, ceil_mode=True)]:
        check(lambda t: pool(t, return_indices=True, **kw), x)
        check(lambda t: pool(t, **kw), x[0])  # unbatched
    check(lambda t: pool(t, 2), noncontig(x))
    if dtype == torch.float32:
        y = rand(x.shape)
        grads(lambda t: pool(t, kernel_size=3, stride=2, padding=1), y)
        grads(lambda t: pool(t, kernel_size=2, dilation=2, ceil_mode=True), y)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_avg_pool(nd, dtype):
    if nd == 3 and dtype == torch.bfloat16:
        pytest.skip("the CPU has no bfloat16 avg_pool3d to compare with")
    pool = getattr(F_, f"avg_pool{nd}d")
    x = rand([2, 3] + rand_shape(nd, 5, 8), dtype)
    cases = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
             dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
             dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)]
    if nd > 1:
        cases += [dict(kernel_size=2, divisor_override=3), dict(kernel_size=2, divisor_override=-2)]
    for kw in cases:
        check(lambda t: pool(t, **kw), x)
        if dtype == torch.float32:
            grads(lambda t: pool(t, **kw), x)
    check(lambda t: pool(t, 2), x[0])


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_adaptive_pool(nd, dtype):
    avg = getattr(F_, f"adaptive_avg_pool{nd}d")
    mx = getattr(F_, f"adaptive_max_pool{nd}d")
    x = rand([2, 3] + rand_shape(nd, 3, 9), dtype)
    for out in ([1] * nd, rand_shape(nd, 1, 5), [s + 2 for s in x.shape[2:]]):
        check(lambda t: avg(t, out), x, atol=2e-2 if dtype == torch.bfloat16 else None)
        check(lambda t: mx(t, out, return_indices=True), x)
        if dtype == torch.float32:
            grads(lambda t: avg(t, out), x)
            grads(lambda t: mx(t, out), x)
    check(lambda t: avg(t, 2), x[0])
    check(lambda t: mx(t, 2), x[0])
    check(lambda t: F_.interpolate(t, size=[3] * nd, mode="area"), x, atol=2e-2 if dtype == torch.bfloat16 else None)


def test_pool_errors():
    x = torch.ones(1, 1, 4, 4, device=TPU)
    with pytest.raises(RuntimeError, match="pad should be"):
        F_.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match='divisor must be not zero'):
        F_.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F_.max_pool3d(torch.ones(1, 1, 1, 1, 1, device=TPU), 2)
