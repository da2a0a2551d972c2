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

@pytest.mark.parametrize("dtype", [torch.int64])  # the CPU's slow path covers int64 only
def test_integer_convolution(dtype):
    F = torch.nn.functional
    x, w, bias = rand([2, 3, 7], dtype, -5, 5), rand([4, 3, 3], dtype, -5, 5), rand([4], dtype, -5, 5)
    check(lambda a, b, c: F.conv1d(a, b, c, stride=2, padding=1), x, w, bias)
    check(lambda a, b: F.conv_transpose1d(a, b, stride=2), x, rand([3, 4, 3], dtype, -5, 5))
    check(F.conv2d, rand([2, 3, 5, 6], dtype, -5, 5), rand([4, 3, 3, 2], dtype, -5, 5))
    check(lambda a, b: F.conv2d(a, b, groups=3), rand([1, 3, 4, 4], dtype, -5, 5), rand([3, 1, 2, 2], dtype, -5, 5))


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


def test_integral_products_truncate_float_scalars():
    i64 = torch.int64
    check(lambda s, a, b: torch.addmv(s, a, b, beta=0.2, alpha=2.6), rand([5], i64), rand([5, 4], i64),
          rand([4], i64))
    check(lambda s, a, b: torch.addmm(s, a, b, beta=1.7, alpha=0.6), rand([2, 3], i64), rand([2, 4], i64),
          rand([4, 3], i64))
    check(lambda s, a, b: torch.baddbmm(s, a, b, beta=3.2), rand([2, 2, 3], i64), rand([2, 2, 4], i64),
          rand([2, 4, 3], i64))


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
