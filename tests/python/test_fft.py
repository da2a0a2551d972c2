"""torch.fft on the tpu (_fft_c2c, _fft_r2c, _fft_c2r) against the CPU:
1-D and n-D transforms, every normalization, out= variants, gradients and
errors."""
import random

import pytest
import torch

from conftest import TPU, assert_close, check


def rand_shape(rank, lo=1, hi=5):
    return [random.randint(lo, hi) for _ in range(rank)]


def rand(shape, dtype=torch.float32, lo=-3.0, hi=3.0):
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
