"""Complex tensors on the tpu: view_as_real / view_as_complex over shared
storage (reads, writes through either view) and complex arithmetic."""
import random

import pytest
import torch

from conftest import TPU, assert_close


def test_view_as_real_reads_and_prints():
    z = torch.randn(3, 4, dtype=torch.complex64)
    zt = z.to(TPU)
    assert_close(zt, z)
    r = torch.view_as_real(zt)
    assert r.shape == (3, 4, 2) and r.dtype == torch.float32
    assert r.untyped_storage().data_ptr() == zt.untyped_storage().data_ptr()
    assert_close(r, torch.view_as_real(z))
    assert_close(torch.view_as_real(zt[:, 1::2]), torch.view_as_real(z[:, 1::2]))
    assert "j" in repr(zt)


def test_view_as_real_writes_are_visible():
    z = torch.randn(5, dtype=torch.complex64)
    zt = z.to(TPU)
    r, rt = torch.view_as_real(z), torch.view_as_real(zt)
    r[:, 1] = 7.0
    rt[:, 1] = 7.0
    assert_close(zt, z)
    zt.mul_(2)
    z.mul_(2)
    assert_close(rt, r)


def test_view_as_complex_writes_are_visible():
    x = torch.randn(4, 3, 2)
    xt = x.to(TPU)
    c, ct = torch.view_as_complex(x), torch.view_as_complex(xt)
    assert ct.dtype == torch.complex64 and ct.shape == (4, 3)
    assert_close(ct, c)
    src = torch.randn(3, dtype=torch.complex64)
    c[1] = src
    ct[1] = src.to(TPU)
    assert_close(xt, x)
    xt[0, 0, 1] = -3.0
    x[0, 0, 1] = -3.0
    assert_close(ct, c)


@pytest.mark.allow_fallback("polar")  # polar.out has no native lowering yet
def test_complex_arithmetic():
    a, b = torch.randn(6, dtype=torch.complex64), torch.randn(6, dtype=torch.complex64)
    assert_close((a.to(TPU) + b.to(TPU)), a + b)
    mag, ang = torch.rand(5) + 0.1, torch.randn(5)
    assert_close(torch.polar(mag.to(TPU), ang.to(TPU)), torch.polar(mag, ang), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_variance_is_real_and_its_mean_complex(dtype):
    z = torch.randn(6, 7, dtype=dtype)
    zt = z.to(TPU)
    assert_close(zt.var(), z.var())
    assert_close(zt.std(dim=1, correction=0), z.std(dim=1, correction=0))
    for fn in (torch.var_mean, torch.std_mean):
        got, want = fn(zt, dim=0, keepdim=True), fn(z, dim=0, keepdim=True)
        assert_close(got[0], want[0])
        assert_close(got[1], want[1])
    out = torch.empty(0, dtype=z.real.dtype, device=TPU)
    torch.var(zt, dim=1, out=out)
    assert_close(out, z.var(dim=1))
    for fn in (torch.var, torch.std):  # a complex out takes the real result, as on the CPU
        got, want = torch.empty(0, dtype=dtype, device=TPU), torch.empty(0, dtype=dtype)
        fn(zt, 0, keepdim=True, out=got)
        fn(z, 0, keepdim=True, out=want)
        assert got.dtype == dtype
        assert_close(got, want)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_norms_and_logsumexp(dtype):
    z = torch.randn(5, 8, dtype=dtype)
    z[1, 2] = 0
    zt = z.to(TPU)
    for kw in ({}, {"ord": 1, "dim": 1}, {"ord": 0, "dim": 0}, {"ord": float("inf")}, {"ord": 3.5, "dim": 1}):
        assert_close(torch.linalg.vector_norm(zt, **kw), torch.linalg.vector_norm(z, **kw))
    assert_close(torch.logsumexp(zt, 1), torch.logsumexp(z, 1))
    assert_close(torch.logsumexp(zt, 0, keepdim=True), torch.logsumexp(z, 0, keepdim=True))
    # An infinite real part is not shifted by (the CPU's rule).
    z[0, 0] = complex(float("inf"), 1.0)
    assert_close(torch.logsumexp(z.to(TPU), 1), torch.logsumexp(z, 1))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_modulus_of_an_infinite_part_is_infinite_beside_a_nan(dtype):
    # As C's cabs: (nan, inf) and (inf, nan) are both inf; finite huge parts
    # do not overflow to inf.
    inf, nan = float("inf"), float("nan")
    parts = [(inf, nan), (nan, inf), (-inf, 1), (nan, -inf), (nan, 0), (3, 4), (1e30, 1e30)]
    z = torch.tensor([complex(*p) for p in parts], dtype=dtype)
    z = torch.cat([z, torch.randn(9, dtype=dtype)])
    assert_close(z.to(TPU).abs(), z.abs(), equal_nan=True)
    assert_close(torch.linalg.vector_norm(z[:2].to(TPU)), torch.linalg.vector_norm(z[:2]))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_exp_of_infinite_real_parts_follows_c99(dtype):
    # e^(-inf + iy) is a zero signed like y and e^(+inf + iy) is (inf, nan)
    # for an infinite or NaN y, as the CPU computes (XLA gave NaN parts).
    inf, nan = float("inf"), float("nan")
    parts = [(-inf, inf), (-inf, -inf), (-inf, nan), (-inf, 1), (-inf, -2), (inf, inf), (inf, -inf), (inf, nan),
             (inf, 0), (nan, 0), (0, inf)]
    z = torch.cat([torch.tensor([complex(*p) for p in parts], dtype=dtype), torch.randn(13, dtype=dtype)])
    got, want = torch.exp(z.to(TPU)), torch.exp(z)
    assert_close(got, want, equal_nan=True)
    zero = want == 0
    assert torch.equal(torch.signbit(got.imag.cpu()[zero]), torch.signbit(want.imag[zero]))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("steps", [2, 7, 1000])
def test_complex_linspace(dtype, steps):
    start, end = complex(-3.0, 0.5), complex(1.0, 2.0)
    assert_close(torch.linspace(start, end, steps, dtype=dtype, device=TPU),
                 torch.linspace(start, end, steps, dtype=dtype))


def test_complex_linspace_into_a_strided_out():
    """An out of any shape is filled in its index order."""
    res = torch.rand(3, 3, 100).to(torch.complex128).permute(2, 0, 1)
    got = res.to(TPU)
    torch.linspace(0, 900 + 9j, 900, out=res)
    torch.linspace(0, 900 + 9j, 900, out=got)
    assert_close(got, res)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_pow_of_a_zero_complex_base_is_the_cpus(dtype):
    # The CPU computes e^(y log 0): 0 for Re y > 0, (inf, NaN) for Re y < 0,
    # NaN for Re y == 0 (XLA's power gave NaN for all of them).
    inf, nan = float("inf"), float("nan")
    y = torch.tensor([2, -1, 0, 1j, 2 + 1j, -2 + 1j, -1j, 0.5, -0.5 + 2j, inf, nan], dtype=dtype)
    y = torch.cat([y, torch.randn(7, dtype=dtype)])
    x = torch.zeros_like(y)
    x[-7:] = torch.randn(7, dtype=dtype)
    assert_close(torch.pow(x.to(TPU), y.to(TPU)), torch.pow(x, y), equal_nan=True)
    assert_close(torch.pow(0j, y.to(TPU)), torch.pow(0j, y), equal_nan=True)


def _as_complex64(t):
    return t.cpu().to(torch.complex64)


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_complex32_holds_the_cpus_half_pairs():
    z = torch.randn(4, 5, dtype=torch.complex32)
    zt = z.to(TPU)
    assert zt.dtype == torch.complex32 and zt.untyped_storage().nbytes() == z.untyped_storage().nbytes()
    assert torch.equal(_as_complex64(zt), _as_complex64(z))
    # Other dtypes' views of its storage see the CPU's bytes.
    assert torch.equal(torch.view_as_real(zt).cpu(), torch.view_as_real(z))
    assert torch.equal(zt.view(torch.float32).cpu(), z.view(torch.float32))
    assert torch.equal(zt.real.cpu(), z.real) and torch.equal(zt.imag.cpu(), z.imag)
    # A complex64 source rounds to complex32 as the CPU's copy rounds it.
    wide = torch.randn(4, 5, dtype=torch.complex64) * 1000
    assert torch.equal(_as_complex64(wide.to(TPU).to(torch.complex32)), _as_complex64(wide.to(torch.complex32)))
    assert torch.equal(_as_complex64(wide.to(torch.complex32).to(TPU)), _as_complex64(wide.to(torch.complex32)))


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_complex32_rounds_each_result_like_the_cpu():
    a, b = (torch.randn(300, dtype=torch.complex32) * 9 for _ in range(2))
    at, bt = a.to(TPU), b.to(TPU)
    for op in (torch.add, torch.sub, torch.mul, lambda x, y: x * y + x, lambda x, y: torch.cat([x, y])):
        got, want = op(at, bt), op(a, b)
        assert got.dtype == want.dtype == torch.complex32
        assert torch.equal(_as_complex64(got), _as_complex64(want))
    assert torch.equal(torch.abs(at).cpu(), torch.abs(a))


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_complex32_writes_through_views():
    z = torch.randn(6, 8, dtype=torch.complex32)
    zt = z.to(TPU)
    src = torch.randn(3, 4, dtype=torch.complex32)
    z[1:4, ::2] = src
    zt[1:4, ::2] = src.to(TPU)
    z[5].fill_(2 - 1j)
    zt[5].fill_(2 - 1j)
    idx = torch.tensor([0, 4])
    z[idx] = z[idx] * 2
    zt[idx.to(TPU)] = zt[idx.to(TPU)] * 2
    torch.view_as_real(z)[2, :, 1] = 0.5
    torch.view_as_real(zt)[2, :, 1] = 0.5
    assert torch.equal(_as_complex64(zt), _as_complex64(z))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_nan_and_inf_are_either_parts(dtype):
    inf, nan = float("inf"), float("nan")
    parts = [(inf, 1), (1, -inf), (nan, 0), (0, nan), (nan, inf), (-inf, nan), (1, 1)]
    z = torch.cat([torch.tensor([complex(*p) for p in parts], dtype=dtype), torch.randn(5, dtype=dtype)])
    zt = z.to(TPU)
    for f in (torch.isnan, torch.isinf, torch.isfinite):
        assert torch.equal(f(zt).cpu(), f(z)), f.__name__
    # nan_to_num replaces each part, with the part dtype's limits by default.
    assert_close(torch.nan_to_num(zt), torch.nan_to_num(z))
    assert_close(torch.nan_to_num(zt, 1.0, 2.0, -3.0), torch.nan_to_num(z, 1.0, 2.0, -3.0))
    assert_close(torch.where(zt.isnan(), 0, zt), torch.where(z.isnan(), 0, z))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_sums_multiply_by_alpha_as_the_cpu(dtype):
    # PyTorch computes a + alpha * b with a complex multiply, alpha 1
    # included: an infinite part of b gives NaN parts.
    inf, nan = float("inf"), float("nan")
    vals = [complex(inf, inf), complex(inf, -inf), complex(nan, inf), complex(1, 2), complex(-0.0, 0)]
    a = torch.tensor([x for x in vals for _ in vals], dtype=dtype)
    b = torch.tensor([y for _ in vals for y in vals], dtype=dtype)
    for f in (torch.add, torch.sub, lambda x, y: torch.add(x, y, alpha=2)):
        assert_close(f(a.to(TPU), b.to(TPU)), f(a, b), equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_logaddexp_silu_lerp_and_pow(dtype):
    x, y, w = (torch.randn(300, dtype=dtype) * 3 for _ in range(3))
    xt, yt, wt = x.to(TPU), y.to(TPU), w.to(TPU)
    tol = dict(atol=1e-5, rtol=1e-5) if dtype == torch.complex64 else {}
    assert_close(torch.logaddexp(xt, yt), torch.logaddexp(x, y), **tol)
    assert_close(torch.nn.functional.silu(xt), torch.nn.functional.silu(x), **tol)
    assert_close(torch.lerp(xt, yt, wt), torch.lerp(x, y, w), **tol)
    assert_close(torch.lerp(xt, yt, 0.3), torch.lerp(x, y, 0.3), **tol)
    assert_close(torch.pow(xt, yt), torch.pow(x, y), **tol)


def test_complex_abs_into_real_and_complex_outs():
    z = torch.randn(7, dtype=torch.complex64)
    for out in (torch.empty(7), torch.empty(0, dtype=torch.float64), torch.empty(7, dtype=torch.complex64)):
        got, want = out.to(TPU), out.clone()
        torch.abs(z.to(TPU), out=got)
        torch.abs(z, out=want)
        assert got.dtype == want.dtype
        assert_close(got, want, atol=1e-6, rtol=1e-6)  # |z| is float32 math in every case
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        torch.abs(z.to(TPU), out=torch.empty(0, dtype=torch.long, device=TPU))


def _extremal_grid(dtype):
    inf, nan = float("inf"), float("nan")
    parts = [inf, -inf, nan, 0.0, -0.0, 1.5, -2.0, 1e30]
    z = torch.tensor([complex(a, b) for a in parts for b in parts], dtype=dtype)
    return torch.cat([z, torch.randn(64, dtype=dtype) * 4])


_SPECIAL_VALUE_FNS = {
    "exp2": torch.exp2, "log": torch.log, "log2": torch.log2, "log10": torch.log10, "log1p": torch.log1p,
    "expm1": torch.expm1, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal,
    "sigmoid": torch.sigmoid, "sinh": torch.sinh, "cosh": torch.cosh, "tanh": torch.tanh, "sin": torch.sin,
    "cos": torch.cos, "tan": torch.tan, "sgn": torch.sgn, "abs": torch.abs, "asin": torch.asin, "acos": torch.acos,
    "atan": torch.atan, "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh,
    "silu": torch.nn.functional.silu,
    "pow_2.5": lambda z: torch.pow(z, 2.5), "pow_-3": lambda z: torch.pow(z, -3), "pow_0.5": lambda z: z ** 0.5,
    "pow_-1": lambda z: z ** -1, "pow_-2": lambda z: z ** -2, "pow_tensor": lambda z: torch.pow(z, _tame(z).flip(0)),
}


def _tame(z):
    # Exponents with huge finite parts make results that differ in every
    # digit with the last bit of log z: 3 there instead.
    parts = torch.view_as_real(z).clone()
    parts[(parts.abs() > 1e3) & parts.isfinite()] = 3.0
    return torch.view_as_complex(parts)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("fn", sorted(_SPECIAL_VALUE_FNS))
def test_complex_special_values_are_the_cpus(fn, dtype):
    # Infinite, NaN, signed-zero and huge parts, as C's complex functions
    # (Annex G) and PyTorch's own formulas give them on the CPU; -0 parts
    # pick the side of a branch cut.
    z = _extremal_grid(dtype)
    f = _SPECIAL_VALUE_FNS[fn]
    got, want = f(z.to(TPU)), f(z)
    if want.is_complex():
        got, want = torch.view_as_real(got), torch.view_as_real(want)
    tol = 1e-5 if dtype == torch.complex64 else 1e-12
    if fn == "pow_tensor":
        tol *= 10  # a part of e^(y log x) that nearly cancels keeps fewer digits
    assert_close(got, want, atol=tol, rtol=tol, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_logcumsumexp(dtype):
    # The imaginary part is a phase, equal up to whole turns: the device
    # combines in another order, whose phases may sum to another turn.
    def same_phase(got, want):
        assert got.device.type == "tpu"
        got = got.cpu()
        torch.testing.assert_close(got.real, want.real, equal_nan=True)
        torch.testing.assert_close(torch.polar(torch.ones_like(got.real), got.imag),
                                   torch.polar(torch.ones_like(want.real), want.imag), equal_nan=True)

    z = torch.randn(5, 12, dtype=dtype) * 3
    zt = z.to(TPU)
    for dim in (0, 1, -1):
        same_phase(torch.logcumsumexp(zt, dim), torch.logcumsumexp(z, dim))
    # Infinite real parts, as the CPU combines them (the partial results
    # hold no NaN part here; see scan.cc for where they may differ).
    inf = float("inf")
    s = torch.tensor([complex(-inf, 4), complex(-inf, 1), 1.2 + 2.1j, 1e10 + 1e20j, complex(inf, 0), complex(inf, 1)],
                     dtype=dtype)
    assert_close(torch.logcumsumexp(s.to(TPU), 0), torch.logcumsumexp(s, 0), equal_nan=True)
    out = torch.empty(0, dtype=dtype, device=TPU)
    torch.logcumsumexp(zt, 1, out=out)
    same_phase(out, torch.logcumsumexp(z, 1))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_logaddexp_special_values_are_the_cpus(dtype):
    # logaddexp and logcumsumexp share PyTorch's rule: NaN parts, and equal
    # infinite real parts (the smaller operand for -inf, the plain sum of
    # exponentials for +inf).
    inf, nan = float("inf"), float("nan")
    vals = [complex(-inf, 4), complex(-inf, 1), 1.2 + 2.1j, complex(inf, 0), complex(inf, 1), complex(nan, 2),
            complex(1, nan), 3 - 1j, complex(random.uniform(-3, 3), random.uniform(-3, 3))]
    x = torch.tensor([a for a in vals for _ in vals], dtype=dtype)
    y = torch.tensor([b for _ in vals for b in vals], dtype=dtype)
    assert_close(torch.logaddexp(x.to(TPU), y.to(TPU)), torch.logaddexp(x, y), equal_nan=True)
