"""The elementwise family, unary side: unary math, special functions and
predicates, integer and bit ops, gradients of the math functions, complex
conjugation (binary ops, comparisons, where / clamp / masked_fill / lerp /
addcmul are in test_elementwise_binary.py; activations in
test_activation.py). Every op is compared with PyTorch on the CPU on fresh
random inputs and must not touch the CPU fallback."""
import pytest
import torch
import torch.nn.functional as F

import torch_pjrt
from conftest import TPU, assert_as_close_as_cpu, assert_close, check
from elementwise_inputs import FLOATS, INTS, SHAPE2, grads, rand, rand_shape, with_specials


# ---------------------------------------------------------------- unary math

# op -> input range (lo, hi)
UNARY_FLOAT = {
    "exp": (-5, 5), "exp2": (-5, 5), "expm1": (-3, 3), "log": (0.01, 10), "log2": (0.01, 10),
    "log10": (0.01, 10), "log1p": (-0.9, 10), "sqrt": (0, 10), "rsqrt": (0.1, 10), "reciprocal": (0.5, 5),
    "sin": (-6, 6), "cos": (-6, 6), "tan": (-1.3, 1.3), "tanh": (-4, 4), "sigmoid": (-6, 6), "erf": (-3, 3),
    "erfinv": (-0.99, 0.99), "asin": (-0.99, 0.99), "acos": (-0.99, 0.99), "atan": (-5, 5), "sinh": (-4, 4),
    "cosh": (-4, 4), "asinh": (-5, 5), "acosh": (1.01, 5), "atanh": (-0.99, 0.99), "lgamma": (-3.5, 5),
    "digamma": (0.1, 5), "erfc": (-3, 5), "sinc": (-3, 3),
}
UNARY_SAME = ["neg", "abs", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac"]


@pytest.mark.parametrize("name", list(UNARY_FLOAT) + UNARY_SAME)
def test_unary(name):
    lo, hi = UNARY_FLOAT.get(name, (-10, 10))
    fn = getattr(torch, name)
    shape = SHAPE2
    check(fn, rand(shape, lo=lo, hi=hi))
    check(lambda x: fn(x.t()[::2]), rand(shape, lo=lo, hi=hi))
    check(fn, rand([], lo=lo, hi=hi))
    check(fn, rand(shape, torch.bfloat16, lo, hi))
    if name in ("exp", "log", "sqrt", "sigmoid", "tanh", "erf", "neg", "round"):
        check(fn, rand(shape, torch.float16, lo, hi))
        check(fn, rand([0, 3], lo=lo, hi=hi))
    # NaN / inf / -0 behave as on the CPU (sign(nan) is 0, round is half to even).
    special = with_specials(rand([4, 5], lo=lo, hi=hi))
    if name == "round":
        special.view(-1)[6:10] = torch.tensor([0.5, 1.5, 2.5, -2.5])
    check(fn, special)
    # in-place and out=, the latter into a wrongly sized and a wider output
    check(lambda x: getattr(x.t()[1:], name + "_")(), rand(shape, lo=lo, hi=hi))
    check(lambda x, o: fn(x, out=o), rand(shape, lo=lo, hi=hi), torch.empty(0))
    if name in ("exp", "sin", "erf", "log1p", "sigmoid"):
        # computed in float32 (the common dtype), then widened: float32 tolerance
        check(lambda x, o: fn(x, out=o), rand(shape, lo=lo, hi=hi), torch.empty(shape, dtype=torch.float64),
              atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", list(UNARY_FLOAT) + UNARY_SAME)
def test_unary_integer_inputs(name):
    fn = getattr(torch, name)
    lo, hi = UNARY_FLOAT.get(name, (-10, 10))
    lo, hi = max(lo, -5), min(hi, 5)
    if name == "erfinv":
        lo, hi = 0, 0
    if name in ("log", "log2", "log10", "rsqrt", "reciprocal"):
        lo = 1
    for dt in [torch.int64, torch.uint8]:
        x = rand([3, 4], dt, 0 if dt == torch.uint8 else lo, hi)
        if name == "frac":
            with pytest.raises(NotImplementedError, match='"frac" not implemented for'):
                fn(x.to(TPU))
            continue
        if name == "neg" and dt == torch.uint8:
            continue  # wraps like the CPU, but the CPU warns for it
        check(fn, x)
    b = rand([5], torch.bool)
    if name in ("abs", "floor", "ceil", "round", "trunc", "frac"):
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
            fn(b.to(TPU))
    elif name == "neg":
        with pytest.raises(RuntimeError, match="bool"):
            fn(b.to(TPU))
    else:
        check(fn, b)
    # A float result cannot go back into an integer tensor in place.
    if name in UNARY_FLOAT:
        with pytest.raises(RuntimeError, match="can't be cast"):
            getattr(rand([3], torch.int64).to(TPU), name + "_")()


@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
def test_round_decimals(decimals):
    x = rand([4, 6], lo=-500, hi=500)
    check(lambda x: torch.round(x, decimals=decimals), x)
    check(lambda x: x.t().round_(decimals=decimals), x)
    check(lambda x, o: torch.round(x, decimals=decimals, out=o), x, torch.empty(0))
    check(lambda x: torch.round(x, decimals=decimals), x.to(torch.bfloat16))
    if decimals:
        with pytest.raises(NotImplementedError, match='"round" not implemented for \'Long\''):
            torch.round(rand([3], torch.int64).to(TPU), decimals=decimals)


def test_predicates():
    fns = [torch.isnan, torch.isinf, torch.isfinite, torch.isposinf, torch.isneginf, torch.signbit]
    for dt in FLOATS:
        x = with_specials(rand([5, 4], dt))
        for fn in fns:
            check(fn, x)
    x = with_specials(rand([5, 4]))
    for fn in fns:
        check(lambda x: fn(x.t()), x)
    check(lambda x, o: torch.isposinf(x, out=o), x, torch.empty(0, dtype=torch.bool))
    check(lambda x, o: torch.isneginf(x, out=o), x, torch.empty(0, dtype=torch.bool))
    check(lambda x, o: torch.signbit(x, out=o), x, torch.empty(0, dtype=torch.bool))
    for dt in [torch.int64, torch.bool, torch.uint8]:
        x = rand([3, 4], dt, 0, 5)
        for fn in [torch.isnan, torch.isinf, torch.isfinite, torch.isposinf, torch.isneginf, torch.signbit]:
            check(fn, x)


def test_nan_to_num():
    for dt in FLOATS:
        x = with_specials(rand([4, 5], dt))
        check(torch.nan_to_num, x)
        check(lambda x: torch.nan_to_num(x, nan=1.5, posinf=100.0, neginf=-7.0), x)
        check(lambda x: torch.nan_to_num(x.t(), posinf=3.0), x)
        check(lambda x: x.nan_to_num_(nan=-1.0), x)
        check(lambda x, o: torch.nan_to_num(x, nan=2.0, out=o), x, torch.empty(0, dtype=dt))
    check(torch.nan_to_num, rand([3, 4], torch.int64))
    check(torch.nan_to_num, rand([3], torch.bool))


def test_bitwise_and_logical_not():
    for dt in INTS + [torch.uint8, torch.int8, torch.bool]:
        x = rand([4, 5], dt, -100, 100) if dt != torch.uint8 else rand([4, 5], dt, 0, 255)
        check(torch.bitwise_not, x)
        check(lambda x: x.t().bitwise_not_(), x)
        check(lambda x, o: torch.bitwise_not(x, out=o), x, torch.empty(0, dtype=dt))
        check(torch.logical_not, x)
        check(lambda x: x.logical_not_(), x)
    x = with_specials(rand([4, 5]))
    check(torch.logical_not, x)
    check(lambda x: x.logical_not_(), x)
    check(lambda x, o: torch.logical_not(x, out=o), x, torch.empty(0, dtype=torch.int32))
    with pytest.raises(NotImplementedError, match='"bitwise_not" not implemented for \'Float\''):
        torch.bitwise_not(rand([3]).to(TPU))


def test_scalar_parameters_share_a_program():
    """Slopes, bounds and exponents are operands: new values compile nothing."""
    x = rand([7, 3]).to(TPU)
    # In fused mode the first program would otherwise also take in x's upload.
    torch_pjrt.synchronize()
    for fn in [lambda v: F.leaky_relu(x, v), lambda v: torch.clamp(x, -v, v), lambda v: x.pow(v),
               lambda v: F.elu(x, v), lambda v: x.masked_fill(x > 0, v), lambda v: torch.lt(x, v)]:
        fn(0.25).cpu()
        torch_pjrt.reset_cache_stats()
        fn(0.75).cpu()
        assert torch_pjrt.cache_stats()["misses"] == 0


def test_polygamma():
    x = rand([4, 5], lo=-3.5, hi=5)
    for n in [0, 1, 2, 3]:
        check(lambda x: torch.polygamma(n, x), x, atol=1e-4, rtol=1e-4)
        check(lambda x: torch.special.polygamma(n, x), x.abs().to(torch.bfloat16) + 0.5)
    check(lambda x: x.polygamma_(1), x.abs() + 0.1)
    check(lambda x, o: torch.polygamma(2, x, out=o), x.abs() + 0.1, torch.empty(0), atol=1e-4, rtol=1e-4)
    check(lambda x: torch.polygamma(1, x), rand([3, 4], torch.int64, 1, 5))


# ----------------------------------------------------------------- gradients

GRAD_FNS = {
    "exp": torch.exp, "log": lambda x: torch.log(x.abs() + 0.5), "sqrt": lambda x: torch.sqrt(x.abs() + 0.1),
    "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.5), "sin": torch.sin, "cos": torch.cos, "tan": torch.tan,
    "erf": torch.erf, "expm1": torch.expm1, "log1p": lambda x: torch.log1p(x.abs()), "abs": torch.abs,
    "neg": torch.neg, "reciprocal": lambda x: torch.reciprocal(x.abs() + 0.5), "sign": torch.sign,
    "round": torch.round, "pow_scalar": lambda x: x ** 3, "pow_tensor": lambda x: (x.abs() + 0.5) ** x,
    "rpow": lambda x: 2 ** x, "atan2": lambda x: torch.atan2(x, x.t()),
    "maximum": lambda x: torch.maximum(x, x.t()), "fmin": lambda x: torch.fmin(x, x.t()),
    "hypot": lambda x: torch.hypot(x, x.t() + 2), "lerp": lambda x: torch.lerp(x, x.t(), 0.3),
    "addcmul": lambda x: torch.addcmul(x, x, x.t(), value=0.5),
    "addcdiv": lambda x: torch.addcdiv(x, x, x.t().abs() + 1, value=0.5),
    "xlogy": lambda x: torch.xlogy(x, x.abs() + 1), "copysign": lambda x: torch.copysign(x, x.t()),
    "clamp_tensor": lambda x: torch.clamp(x, x.t() - 1, x.t() + 1),
    "remainder": lambda x: torch.remainder(x, 1.5),
    "logaddexp": lambda x: torch.logaddexp(x, x.t()), "logaddexp2": lambda x: torch.logaddexp2(x, x.t()),
    "erfc": torch.erfc, "sinc": torch.sinc, "asin": lambda x: torch.asin(x * 0.8), "atan": torch.atan,
    "cosh": torch.cosh, "lgamma": lambda x: torch.lgamma(x.abs() + 0.2), "digamma": lambda x: torch.digamma(x.abs() + 0.2),
}


@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_math_gradient(name):
    fn = GRAD_FNS[name]
    x = rand([5, 5], lo=-1.2, hi=1.2)  # square: x.t() is the second operand
    g = rand([5, 5])
    xc, xt = x.clone().requires_grad_(), x.to(TPU).requires_grad_()
    fn(xc).backward(g)
    fn(xt).backward(g.to(TPU))
    x64 = x.double().requires_grad_()
    fn(x64).backward(g.double())
    # Where a derivative subtracts nearly equal terms (sinc's near 0) both
    # float32 results are off the exact one by far more than the tolerance:
    # there the tpu's error may be a few times the CPU's own.
    if not torch.allclose(xt.grad.cpu(), xc.grad, atol=1e-5, rtol=1e-5):
        assert_as_close_as_cpu(xt.grad, xc.grad, x64.grad, factor=4)


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


# ---------------------------------------------------------------- integer and bit math

@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8])
def test_lcm_wraps_as_the_cpus(dtype):
    # Over the whole range: 8- and 16-bit products are taken at 32 bits by C,
    # so the CPU's lcm may wrap to a negative value.
    info = torch.iinfo(dtype)
    a, b = (torch.randint(info.min, info.max, (3000,)).to(dtype) for _ in range(2))
    check(torch.lcm, a, b)


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
