"""Tensor factories on the tpu against PyTorch on the CPU: ranges (arange,
linspace, logspace), eye, tril/triu_indices and the fills behind full /
ones / zeros and their *_like / new_* forms. None may fall back."""
import random
import warnings

import pytest
import torch

import torch_pjrt
from conftest import TPU, assert_close


def exact(actual, expected):
    assert_close(actual, expected, atol=0, rtol=0)


def ulps(dtype, magnitude, n=2):
    """n units in the last place at `magnitude` for dtype."""
    return n * torch.finfo(dtype).eps * max(magnitude, 1e-30)


# ---------------------------------------------------------------- arange

# Exactly representable ranges: every dtype must match the CPU bit for bit.
EXACT_LIMIT = {torch.float16: 2048, torch.bfloat16: 256}


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.uint8, torch.float32,
                                   torch.float64, torch.bfloat16, torch.float16])
def test_arange_integral_steps_exact(dtype):
    limit = EXACT_LIMIT.get(dtype, 10_000)
    lo = 0 if dtype == torch.uint8 else -limit
    hi = 255 if dtype == torch.uint8 else limit
    for _ in range(12):
        step = random.choice([1, 2, 3, 7, -1, -2, -5])
        start = random.randint(lo, hi)
        end = start + step * random.randint(0, 60)
        end = max(lo, min(hi, end))
        if (end - start) * step < 0:
            continue
        exact(torch.arange(start, end, step, dtype=dtype, device=TPU), torch.arange(start, end, step, dtype=dtype))
    exact(torch.arange(5, dtype=dtype, device=TPU), torch.arange(5, dtype=dtype))
    exact(torch.arange(0, dtype=dtype, device=TPU), torch.arange(0, dtype=dtype))


def test_arange_default_dtypes_and_forms():
    for args in [(10,), (2, 10), (10, 2, -3), (0.5, 4), (1, 2.5, 0.25), (-3.0, 3.0, 0.5), (True,)]:
        e = torch.arange(*args)
        a = torch.arange(*args, device=TPU)
        assert a.dtype == e.dtype
        exact(a, e)
    # Float bounds truncated to an integer dtype, as PyTorch does.
    for args in [(0.5, 10.7, 1.5), (-3.9, 4.2, 2.5), (7.2, -1.1, -1.7)]:
        exact(torch.arange(*args, dtype=torch.int64, device=TPU), torch.arange(*args, dtype=torch.int64))
        exact(torch.arange(*args, dtype=torch.int32, device=TPU), torch.arange(*args, dtype=torch.int32))
    big = torch.arange(2**40, 2**40 + 50, 3, device=TPU)
    exact(big, torch.arange(2**40, 2**40 + 50, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_arange_fractional_steps(dtype):
    """Lengths match exactly; values within an ulp of the range's magnitude
    (the CPU kernel itself rounds differently in its vectorized and scalar
    loops, so bit equality with it is not a meaningful target)."""
    for _ in range(12):
        step = random.choice([0.1, 0.25, -0.3, 1.7, -2.5, 0.01, 0.37])
        start = random.uniform(-50, 50)
        end = start + step * random.uniform(0, 300)
        e = torch.arange(start, end, step, dtype=dtype)
        a = torch.arange(start, end, step, dtype=dtype, device=TPU)
        assert a.shape == e.shape
        mag = max(abs(start), abs(end))
        assert_close(a, e, atol=ulps(dtype, mag), rtol=0)


def test_arange_out_variants():
    e = torch.arange(3, 30, 4)
    out = torch.empty(0, dtype=torch.int64, device=TPU)
    torch.arange(3, 30, 4, out=out)
    exact(out, e)
    # A non-contiguous out of the right size is written through.
    base = torch.zeros(len(e), 2, dtype=torch.int64, device=TPU)
    torch.arange(3, 30, 4, out=base[:, 1])
    exact(base[:, 1], e)
    exact(base[:, 0], torch.zeros(len(e), dtype=torch.int64))
    # An out of another shape but the right numel keeps its shape.
    out = torch.empty(2, 3, dtype=torch.int64, device=TPU)
    torch.arange(6, out=out)
    e = torch.empty(2, 3, dtype=torch.int64)
    torch.arange(6, out=e)
    exact(out, e)
    out = torch.empty(2, 5, device=TPU)
    torch.linspace(-1, 1, 10, out=out)
    e = torch.empty(2, 5)
    torch.linspace(-1, 1, 10, out=e)
    exact(out, e)
    # A wrongly sized out is resized, with PyTorch's warning.
    out = torch.empty(3, device=TPU)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torch.arange(0.0, 1.0, 0.125, out=out)
    assert any("does not match the computed number of elements" in str(x.message) for x in w)
    exact(out, torch.arange(0.0, 1.0, 0.125))


def test_arange_errors():
    for args in [(0, 10, 0), (0, 10, -1), (10, 0, 1), (0, float("inf"), 1)]:
        with pytest.raises(RuntimeError, match='step must be nonzero|unsupported range|inconsistent with step sign'):
            torch.arange(*args)
        with pytest.raises(RuntimeError, match='step must be nonzero|unsupported range|inconsistent with step sign'):
            torch.arange(*args, device=TPU)
    with pytest.raises(RuntimeError, match='"arange_tpu" not implemented for \'Bool\''):
        torch.arange(3, dtype=torch.bool, device=TPU)


def test_arange_reuses_one_program_per_length():
    torch.arange(0, 10, device=TPU).cpu()
    torch_pjrt.reset_cache_stats()
    for start in [5, -7, 100]:
        exact(torch.arange(start, start + 10, device=TPU), torch.arange(start, start + 10))
    exact(torch.arange(0, 20, 2, device=TPU), torch.arange(0, 20, 2))
    assert torch_pjrt.cache_stats()["misses"] == 0


# ---------------------------------------------------------------- linspace / logspace

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.int32,
                                   torch.uint8, torch.int8])
def test_linspace_exact(dtype):
    """Same rounding as PyTorch's kernel, op by op (the f32 one is fused)."""
    lo = 0 if dtype == torch.uint8 else -100
    hi = 120
    cases = [(0, 1, 5), (1, 0, 5), (-1, 1, 2), (3, 3, 4), (0, 100, 0), (7, 9, 1)]
    for _ in range(15):
        cases.append((random.uniform(lo, hi), random.uniform(lo, hi), random.choice([2, 3, 7, 16, 50, 257, 1000])))
    for start, end, steps in cases:
        exact(torch.linspace(start, end, steps, dtype=dtype, device=TPU),
              torch.linspace(start, end, steps, dtype=dtype))


def test_linspace_float64_and_defaults():
    for _ in range(10):
        start, end = random.uniform(-1e3, 1e3), random.uniform(-1e3, 1e3)
        steps = random.choice([2, 5, 33, 500])
        e = torch.linspace(start, end, steps, dtype=torch.float64)
        # PyTorch's f64 kernel fuses multiply-add; XLA does not: 1 ulp.
        assert_close(torch.linspace(start, end, steps, dtype=torch.float64, device=TPU), e,
                     atol=ulps(torch.float64, max(abs(start), abs(end)), 1), rtol=0)
    exact(torch.linspace(-2, 2, 9, device=TPU), torch.linspace(-2, 2, 9))
    out = torch.empty(0, device=TPU)
    torch.linspace(0, 1, 11, out=out)
    exact(out, torch.linspace(0, 1, 11))
    base = torch.zeros(11, 3, device=TPU)
    torch.linspace(-1, 1, 11, out=base[:, 2])
    exact(base[:, 2], torch.linspace(-1, 1, 11))
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.linspace(0, 1, -1, device=TPU)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64])
def test_logspace(dtype):
    cases = [(0, 3, 4, 10.0), (-2, 3, 7, 10.0), (1, 10, 10, 2.0), (3, -3, 5, 10.0), (2, 2, 3, 3.0), (0, 1, 1, 10.0),
             (0, 5, 0, 10.0)]
    for start, end, steps, base in cases:
        e = torch.logspace(start, end, steps, base=base, dtype=dtype)
        a = torch.logspace(start, end, steps, base=base, dtype=dtype, device=TPU)
        if dtype.is_floating_point:
            # PyTorch computes powers in f64 with libm; we use XLA's pow
            # (in f32 for narrower floats).
            rtol = {torch.float32: 2e-6, torch.float64: 1e-14, torch.bfloat16: 8e-3}[dtype]
            assert_close(a, e, atol=0, rtol=rtol)
        else:
            exact(a, e)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_logspace(dtype):
    # Random complex ends: the exponents are out's dtype, the powers double.
    for _ in range(6):
        start = complex(random.uniform(-3, 3), random.uniform(-4, 4))
        end = complex(random.uniform(-3, 3), random.uniform(-4, 4))
        steps, base = random.randint(2, 40), random.choice([2.0, 10.0, 3.5])
        e = torch.logspace(start, end, steps, base=base, dtype=dtype)
        a = torch.logspace(start, end, steps, base=base, dtype=dtype, device=TPU)
        rtol = {torch.complex64: 1e-5, torch.complex128: 1e-12}[dtype]
        assert_close(a, e, atol=rtol * float(e.abs().max()), rtol=rtol)


@pytest.mark.parametrize("fn", [lambda out: torch.linspace(1, 10, 10, out=out),
                                lambda out: torch.logspace(1, 10, 10, out=out),
                                lambda out: torch.arange(10.0, out=out)], ids=["linspace", "logspace", "arange"])
def test_ranges_refuse_an_overlapping_out(fn):
    # As on the CPU: an expanded out would hold one value for many.
    for device in ("cpu", TPU):
        with pytest.raises(RuntimeError, match="unsupported operation"):
            fn(torch.rand(1, device=device).expand(10))


# ---------------------------------------------------------------- eye

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool, torch.float16])
def test_eye(dtype):
    for n, m in [(0, 0), (1, 1), (3, 3), (4, 7), (7, 4), (5, 0), (0, 5)]:
        exact(torch.eye(n, m, dtype=dtype, device=TPU), torch.eye(n, m, dtype=dtype))
    exact(torch.eye(6, dtype=dtype, device=TPU), torch.eye(6, dtype=dtype))


def test_eye_out_and_errors():
    out = torch.full((2, 2), 7.0, device=TPU)
    torch.eye(4, out=out)
    exact(out, torch.eye(4))
    out = torch.empty(0, dtype=torch.int32, device=TPU)
    torch.eye(3, 5, out=out)
    exact(out, torch.eye(3, 5, dtype=torch.int32))
    # A transposed out receives the transposed layout's values.
    base = torch.full((5, 3), 9.0, device=TPU)
    torch.eye(3, 5, out=base.t())
    exact(base, torch.eye(3, 5).t())
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0"):
        torch.eye(-1, device=TPU)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0"):
        torch.eye(2, -3, device=TPU)


# ---------------------------------------------------------------- fills

SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4, 5)]
FILL_DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32,
               torch.int8, torch.uint8, torch.bool]


@pytest.mark.parametrize("dtype", FILL_DTYPES)
def test_full_ones_zeros(dtype):
    value = {torch.bool: True, torch.uint8: 200, torch.int8: -100}.get(dtype, -3.75 if dtype.is_floating_point else -12345)
    for shape in SHAPES:
        exact(torch.zeros(shape, dtype=dtype, device=TPU), torch.zeros(shape, dtype=dtype))
        exact(torch.ones(shape, dtype=dtype, device=TPU), torch.ones(shape, dtype=dtype))
        exact(torch.full(shape, value, dtype=dtype, device=TPU), torch.full(shape, value, dtype=dtype))
    x = torch.randn(3, 5).to(dtype)
    t = x.to(TPU)
    for f in [torch.zeros_like, torch.ones_like, lambda v: torch.full_like(v, value)]:
        exact(f(t), f(x))
    exact(t.new_zeros(2, 3), x.new_zeros(2, 3))
    exact(t.new_ones(4), x.new_ones(4))
    exact(t.new_full((2, 2), value), x.new_full((2, 2), value))
    exact(torch.scalar_tensor(value, dtype=dtype, device=TPU), torch.scalar_tensor(value, dtype=dtype))
    exact(torch.zeros(3, 3, dtype=dtype, device=TPU).t(), torch.zeros(3, 3, dtype=dtype).t())


def test_full_default_dtype_inference():
    for value in [3, 2.5, True]:
        e = torch.full((2, 3), value)
        a = torch.full((2, 3), value, device=TPU)
        assert a.dtype == e.dtype
        exact(a, e)
    exact(torch.full((4,), float("inf"), device=TPU), torch.full((4,), float("inf")))
    assert torch.full((4,), float("nan"), device=TPU).cpu().isnan().all()


# ---------------------------------------------------------------- tril / triu indices

@pytest.mark.parametrize("fn", [torch.tril_indices, torch.triu_indices])
def test_tri_indices(fn):
    cases = [(0, 0, 0), (1, 1, 0), (3, 3, 0), (4, 6, 1), (6, 4, -2), (5, 5, 10), (5, 5, -10), (3, 7, -1), (7, 3, 2)]
    for _ in range(6):
        cases.append((random.randint(0, 12), random.randint(0, 12), random.randint(-12, 12)))
    for row, col, offset in cases:
        for dtype in [torch.int64, torch.int32]:
            exact(fn(row, col, offset, dtype=dtype, device=TPU), fn(row, col, offset, dtype=dtype))
    exact(fn(4, 4, device=TPU), fn(4, 4))
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        fn(3, 3, dtype=torch.float32, device=TPU)
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        fn(-1, 3, device=TPU)
