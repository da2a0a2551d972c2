"""The elementwise family, binary and ternary side: binary arithmetic and
math, comparisons, where / clamp / masked_fill, lerp / addcmul / addcdiv
(unary, special and integer math are in test_elementwise.py). Every op is
compared with PyTorch on the CPU on fresh random inputs and must not touch
the CPU fallback."""
import pytest
import torch

from conftest import TPU, assert_close, check
from elementwise_inputs import FLOATS, INF, INTS, NAN, rand, with_specials


# ---------------------------------------------------------------- binary ops

def binary_inputs(dtype, lo=-5, hi=5):
    """Pairs of broadcastable operands, some strided."""
    a = rand([3, 1, 4], dtype, lo, hi)
    b = rand([5, 4], dtype, lo, hi)
    c = rand([4, 3], dtype, lo, hi).t()
    return [(a, b), (b, rand([4], dtype, lo, hi)), (c, rand([3, 4], dtype, lo, hi)),
            (rand([], dtype, lo, hi), b)]


BINARY = {
    "maximum": (torch.maximum, FLOATS + INTS + [torch.bool, torch.uint8]),
    "minimum": (torch.minimum, FLOATS + INTS + [torch.bool, torch.uint8]),
    "fmax": (torch.fmax, FLOATS + INTS + [torch.bool]),
    "fmin": (torch.fmin, FLOATS + INTS + [torch.bool]),
    "atan2": (torch.atan2, FLOATS + INTS),
    "hypot": (torch.hypot, FLOATS),
    "copysign": (torch.copysign, FLOATS + INTS),
    "xlogy": (torch.xlogy, FLOATS + INTS),
    "remainder": (torch.remainder, FLOATS + INTS + [torch.uint8]),
    "fmod": (torch.fmod, FLOATS + INTS + [torch.uint8]),
    "floor_divide": (torch.floor_divide, FLOATS + INTS),
    "pow": (torch.pow, FLOATS + INTS),
    "bitwise_and": (torch.bitwise_and, INTS + [torch.bool, torch.uint8, torch.int8]),
    "bitwise_or": (torch.bitwise_or, INTS + [torch.bool, torch.uint8, torch.int8]),
    "bitwise_xor": (torch.bitwise_xor, INTS + [torch.bool, torch.uint8, torch.int8]),
    "logical_and": (torch.logical_and, FLOATS[:1] + INTS + [torch.bool]),
    "logical_or": (torch.logical_or, FLOATS[:1] + INTS + [torch.bool]),
    "logical_xor": (torch.logical_xor, FLOATS[:1] + INTS + [torch.bool]),
    "logaddexp": (torch.logaddexp, FLOATS),
    "logaddexp2": (torch.logaddexp2, FLOATS),
    "heaviside": (torch.heaviside, FLOATS + INTS + [torch.bool]),
}
HAS_INPLACE = {"atan2", "hypot", "copysign", "xlogy", "remainder", "fmod", "floor_divide", "pow", "bitwise_and",
               "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor", "heaviside"}
DIVIDES = {"remainder", "fmod", "floor_divide"}


def operands(name, dtype):
    lo, hi = (0, 9) if dtype == torch.uint8 else (-9, 9)
    if name == "pow":
        lo, hi = (0.1, 3) if dtype.is_floating_point else (-3, 5)
    pairs = binary_inputs(dtype, lo, hi)
    if name in DIVIDES and not dtype.is_floating_point:
        # No zero divisors: those raise ZeroDivisionError (test_device_checks).
        pairs = [(a, torch.where(b == 0, torch.ones_like(b), b)) for a, b in pairs]
    if name in ("xlogy", "copysign", "maximum", "minimum", "fmax", "fmin", "remainder", "fmod", "logaddexp",
                "logaddexp2", "heaviside") \
            and dtype.is_floating_point:
        pairs.append((with_specials(rand([2, 6], dtype)), with_specials(rand([2, 6], dtype)).flip(1)))
    return pairs


@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name):
    fn, dtypes = BINARY[name]
    for dt in dtypes:
        pairs = operands(name, dt)
        # every operand layout in the first dtype, one broadcast pair (and the specials) in the others
        for a, b in pairs if dt == dtypes[0] else pairs[:1] + pairs[4:]:
            check(fn, a, b)
    a, b = operands(name, dtypes[0])[0]
    check(lambda a, b, o: fn(a, b, out=o), a, b, torch.empty(0, dtype=dtypes[0]))
    if name in HAS_INPLACE:
        a, b = operands(name, dtypes[0])[1]
        check(lambda a, b: getattr(a, name + "_")(b), a, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int8, torch.complex64])
def test_add_and_sub_with_and_without_alpha(dtype):
    """alpha 1 lowers without the alpha operand, any other alpha with it:
    the two share no program, whatever the order they run in."""
    for a, b in binary_inputs(dtype)[:3]:
        for alpha in ([1, 3, -2] if not dtype.is_floating_point and not dtype.is_complex else [1, 0.5, 1.0, -2.25]):
            check(lambda a, b: torch.add(a, b, alpha=alpha), a, b)
            check(lambda a, b: torch.sub(a, b, alpha=alpha), a, b)
            check(lambda a, b: a.clone().add_(b, alpha=alpha) if a.shape == torch.broadcast_shapes(a.shape, b.shape)
                  else a + b, a, b)
    if dtype.is_complex:
        a, b = binary_inputs(dtype)[0]
        check(lambda a, b: torch.add(a, b, alpha=1 - 2j), a, b)
    a, b = binary_inputs(dtype)[1]
    check(lambda a, b, o: torch.sub(a, b, out=o), a, b, torch.empty(0, dtype=dtype))


def test_bool_add():
    a, b = rand([4, 5], torch.bool), rand([5], torch.bool)
    check(torch.add, a, b)
    check(lambda a, b: torch.add(a, b, alpha=True), a, b)


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_mixed_dtypes(name):
    """Type promotion comes from PyTorch's meta functions."""
    fn, dtypes = BINARY[name]
    if name == "heaviside":
        with pytest.raises(RuntimeError, match="different dtypes"):
            fn(rand([3]).to(TPU), rand([3], torch.int64).to(TPU))
        return
    if torch.float32 in dtypes and torch.int64 in dtypes:
        a = rand([3, 4], torch.int32, 1, 5)
        b = rand([3, 4], torch.float32, 1, 5)
        check(fn, a, b)
        check(fn, b, a)
        check(fn, a, torch.tensor(2.5))  # a 0-d CPU tensor takes part as a scalar
        check(fn, rand([3, 4], torch.bfloat16, 1, 3), b)
    if torch.int8 in dtypes:
        check(fn, rand([3, 4], torch.int8, -9, 9), rand([4], torch.int64, -9, 9))
        check(fn, rand([3, 4], torch.bool), rand([4], torch.int32, -9, 9))


def test_binary_dtype_errors():
    f = rand([3]).to(TPU)
    i = rand([3], torch.int64).to(TPU)
    with pytest.raises(NotImplementedError, match='"bitwise_and" not implemented for \'Float\''):
        torch.bitwise_and(f, f)
    with pytest.raises(NotImplementedError, match='"hypot" not implemented for \'Long\''):
        torch.hypot(i, i)
    with pytest.raises(NotImplementedError, match='"remainder" not implemented for \'Bool\''):
        torch.remainder(i.bool(), i.bool())
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        i.pow(-1)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.atan2_(i)


def test_integer_division_semantics():
    """Python floor / remainder for signed integers and floats, C fmod, trunc."""
    a = torch.tensor([7, -7, 7, -7, 0, 5, -5, 9, -9, 100], dtype=torch.int64)
    b = torch.tensor([2, 2, -2, -2, 3, 5, 3, -4, 4, -7], dtype=torch.int64)
    fns = [torch.remainder, torch.fmod, torch.floor_divide, lambda a, b: torch.div(a, b, rounding_mode="floor"),
           lambda a, b: torch.div(a, b, rounding_mode="trunc")]
    for fn in fns:
        check(fn, a, b)
    for dt in [torch.int32, torch.int16, torch.int8]:
        check(torch.remainder, a.to(dt), b.to(dt))
        check(torch.floor_divide, a.to(dt), b.to(dt))
    af = torch.tensor([7.5, -7.5, 1.0, -1.0, 0.0, -0.0, 5.0, 3.0, 1e-8, -1e8])
    bf = torch.tensor([2.0, 2.0, 0.1, 0.1, 3.0, -3.0, -2.5, 0.0, -3.0, 7.0])
    for fn in fns:
        check(fn, af, bf)
        check(fn, af.to(torch.bfloat16), bf.to(torch.bfloat16))
    check(lambda a: a % 3, a)
    check(lambda a: a % -3.5, af)
    check(lambda a: a // 3, a)
    check(lambda a: 17 % a, b)
    check(lambda a: torch.remainder(-2, a), b)


def test_pow_semantics():
    # Integer powers wrap like the CPU's; negative exponents give 0 or +-1.
    base = torch.tensor([2, -1, -1, 1, 0, 3, -3, 2, 5, 7, 0], dtype=torch.int64)
    exp = torch.tensor([3, -3, -2, -5, 0, 40, 3, 63, -1, 0, 5], dtype=torch.int64)
    check(torch.pow, base, exp)
    check(torch.pow, base.to(torch.int32), exp.to(torch.int32))
    check(lambda b: b ** 3, base)
    check(lambda b: b.pow(2), base.to(torch.int16))
    # Exponents of every bit width wrap as the CPU's do (0^64 is 0, 2^65 is 0
    # in 8 bits): every uint8 / int8 pair, and wide exponents of wider types.
    for dt in [torch.uint8, torch.int8]:
        info = torch.iinfo(dt)
        a = torch.arange(info.min, info.max + 1).to(dt)
        b8, e8 = (t.flatten() for t in torch.meshgrid(a, a, indexing="ij"))
        keep = (e8 >= 0) | (b8.abs() <= 1) if dt.is_signed else slice(None)
        check(torch.pow, b8[keep], e8[keep])
    wide = torch.randint(-300, 300, (4000,))
    wide_exp = torch.randint(0, 130, (4000,))
    for dt in [torch.int16, torch.int32, torch.int64]:
        check(torch.pow, wide.to(dt), wide_exp.to(dt))
        check(lambda b: b ** 65, wide.to(dt))
    # Float special cases follow C's pow.
    fb = torch.tensor([0.0, NAN, 1.0, -8.0, -2.0, 0.0, -0.0, INF, -INF, 2.0])
    fe = torch.tensor([0.0, 0.0, NAN, 1 / 3, 3.0, -1.0, -1.0, -0.5, 3.0, 0.5])
    check(torch.pow, fb, fe)
    x = rand([4, 5], lo=0.1, hi=4)
    for e in [2, 3, 0.5, -0.5, -1, -2, 1.7, 0, 1]:
        check(lambda x: x ** e, x)
        check(lambda x: x.pow(e), x.to(torch.bfloat16))
        check(lambda x: torch.pow(e, x), x)  # pow.Scalar
    for e in [0, 1, 0.0, 1.0]:  # a fill and a copy, NaN and inf included
        check(lambda x: x ** e, with_specials(rand([4, 5])))
    check(lambda x: 2 ** x, rand([3, 4], torch.int64, 0, 10))
    check(lambda x: 2.5 ** x, rand([3, 4], torch.int64, 0, 10))
    check(lambda x: x ** 1.5, rand([3, 4], torch.int64, 0, 10))
    check(lambda x: x.pow_(2.0), x)
    check(lambda x, o: torch.pow(x, 3, out=o), x, torch.empty(0))
    check(lambda x, o: torch.pow(3, x, out=o), x, torch.empty(0))
    # computed in float32 (x's dtype), then widened: float32's tolerance
    check(lambda x, o: torch.pow(3, x, out=o), x, torch.empty(0, dtype=torch.float64), atol=1e-5, rtol=1e-5)


def test_scalar_overloads_of_arithmetic():
    """add/sub/mul/div with Python numbers go through the Tensor kernels."""
    x = rand([3, 4])
    i = rand([3, 4], torch.int64, 1, 9)
    for fn in [lambda x: x + 2, lambda x: x - 0.5, lambda x: x * 3, lambda x: x / 4, lambda x: 1 - x,
               lambda x: 2 / x, lambda x: x.add(2, alpha=3), lambda x: x.sub_(1.5), lambda x: x.mul_(2),
               lambda x: x.div_(2), lambda x: torch.rsub(x, 2), lambda x: torch.rsub(x, x, alpha=2),
               lambda x: x.div(3, rounding_mode="floor"), lambda x: x.add_(x, alpha=0.5)]:
        check(fn, x)
    for fn in [lambda i: i + 2, lambda i: i * 3, lambda i: i / 2, lambda i: 10 - i, lambda i: i + 0.5,
               lambda i: i.div(3, rounding_mode="trunc"), lambda i: i.mul_(3)]:
        check(fn, i)
    check(lambda x, o: torch.add(x, 2, out=o), x, torch.empty(0))
    check(lambda x, o: torch.mul(x, 2, out=o), x, torch.empty(0))


# --------------------------------------------------------------- comparisons

COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("name", COMPARE)
def test_comparison(name):
    fn = getattr(torch, name)
    for dt in FLOATS + INTS + [torch.bool, torch.uint8]:
        lo, hi = (0, 4) if dt in (torch.uint8, torch.bool) else (-2, 2)
        pairs = binary_inputs(dt, lo, hi)
        for a, b in pairs if dt in (torch.float32, torch.int64) else pairs[:1]:
            if dt.is_floating_point:
                a, b = a.round(), b.round()  # ties, so eq / le / ge see equality
            check(fn, a, b)
        if dt in (torch.float32, torch.int32, torch.bool):
            x = rand([3, 4], dt, lo, hi)
            check(lambda x: fn(x, 1), x)
            check(lambda x: fn(x, 0.5), x)  # int tensors compare in float here
            check(lambda x: fn(x.t(), True), x)
    x = with_specials(rand([3, 4]))
    check(fn, x, x.flip(1))
    check(lambda x: fn(x, NAN), x)
    check(lambda x: fn(x, INF), x)
    check(fn, rand([3, 4], torch.int32), rand([3, 4]).round())
    check(fn, rand([3, 4]).round(), torch.tensor(1))
    # out= (any dtype) and in-place (result cast to self's dtype)
    x, y = rand([3, 4]).round(), rand([4]).round()
    check(lambda x, y, o: fn(x, y, out=o), x, y, torch.empty(0, dtype=torch.bool))
    check(lambda x, o: fn(x, 0.0, out=o), x, torch.empty(0, dtype=torch.float32))
    check(lambda x, y: getattr(x, name + "_")(y), x, y)
    check(lambda x: getattr(x, name + "_")(1.0), x)
    check(lambda x: getattr(x, name + "_")(1), rand([3, 4], torch.int64, -2, 2))
    ops = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__"}
    check(lambda x, y: getattr(x, ops[name])(y), x, y)


# ------------------------------------------------ where, clamp, masked_fill

def test_where():
    for dt in FLOATS + INTS + [torch.bool]:
        c = rand([3, 1, 4], torch.bool)
        check(torch.where, c, rand([5, 4], dt), rand([4], dt))
        check(lambda c, x: torch.where(c, x, 0), c, rand([5, 4], dt))
        check(lambda c, x: torch.where(c.t(), x, x.t()), rand([4, 4], torch.bool), rand([4, 4], dt))
    c = rand([3, 4], torch.bool)
    check(torch.where, c, rand([3, 4], torch.int32), rand([3, 4]))
    check(lambda c, x: torch.where(c, 1.5, x), c, rand([3, 4], torch.int64))
    check(lambda c, x: torch.where(c, x, -INF), c, rand([3, 4], torch.bfloat16))
    check(lambda x: torch.where(x > 0, x, x * 2), rand([3, 4]))
    check(lambda c, x, y, o: torch.where(c, x, y, out=o), c, rand([3, 4]), rand([4]), torch.empty(0))
    check(lambda x: torch.where(torch.tensor(True), x, 0.0), rand([3, 4]))  # 0-d CPU condition
    with pytest.raises(RuntimeError, match="boolean"):
        torch.where(rand([3]).to(TPU), rand([3]).to(TPU), rand([3]).to(TPU))
    # gradient flows through where to both branches
    x, y = rand([3, 4]), rand([3, 4])
    xt, yt = x.to(TPU).requires_grad_(), y.to(TPU).requires_grad_()
    xc, yc = x.clone().requires_grad_(), y.clone().requires_grad_()
    g = rand([3, 4])
    torch.where(xc > yc, xc, yc).backward(g)
    torch.where(xt > yt, xt, yt).backward(g.to(TPU))
    assert_close(xt.grad, xc.grad)
    assert_close(yt.grad, yc.grad)


def test_clamp():
    for dt in FLOATS + INTS + [torch.uint8]:
        lo, hi = (0, 20) if dt == torch.uint8 else (-10, 10)
        x = rand([4, 5], dt, lo, hi)
        check(lambda x: torch.clamp(x, 2, 7), x)
        a, b = rand([5], dt, lo, hi // 2), rand([4, 1], dt, hi // 2, hi)
        check(lambda x, a, b: torch.clamp(x, a, b), x, a, b)
        if dt not in (torch.float32, torch.int64):
            continue
        check(lambda x: torch.clamp(x, min=3), x)
        check(lambda x: torch.clamp(x.t(), max=4), x)
        check(lambda x: torch.clamp(x, 8, 2), x)  # min > max gives max
        check(lambda x: x.clamp_min(5), x)
        check(lambda x: x.clamp_max(5), x)
        check(lambda x: torch.clip(x, 1, 6), x)
        check(lambda x: x.clamp_(1, 6), x)
        check(lambda x: x.clamp_min_(3), x)
        check(lambda x: x.clamp_max_(3), x)
        check(lambda x, a: torch.clamp(x, min=a), x, a)
        check(lambda x, b: torch.clamp(x, max=b), x, b)
        check(lambda x, a: torch.clamp_min(x, a), x, a)
        check(lambda x, b: torch.clamp_max(x, b), x, b)
        check(lambda x, a, b: x.clamp_(a, b), x, a, b)
        check(lambda x, a: x.clamp_min_(a), x, a)
        check(lambda x, b: x.clamp_max_(b), x, b)
    x = rand([4, 5])
    # int tensors with float bounds promote
    check(lambda x: torch.clamp(x, 0.5, 3.5), rand([4, 5], torch.int64, -5, 5))
    check(lambda x: torch.clamp_min(x, 0.5), rand([4, 5], torch.int64, -5, 5))
    # NaN in the input or a bound gives NaN, as on the CPU
    s = with_specials(rand([4, 5]))
    check(lambda x: torch.clamp(x, -1, 1), s)
    check(lambda x: torch.clamp(x, min=NAN), x)
    check(lambda x: torch.clamp(x, NAN, 1.0), x)
    check(lambda x: torch.clamp_max(x, NAN), x)
    check(lambda x, a, b: torch.clamp(x, a, b), s, with_specials(rand([4, 5], lo=-3, hi=-1)).flip(0),
          rand([4, 5], lo=1, hi=3))
    check(lambda x, o: torch.clamp(x, -1, 1, out=o), x, torch.empty(0))
    check(lambda x, a, o: torch.clamp(x, a, out=o), x, rand([5]), torch.empty(0))
    check(lambda x, o: torch.clamp_min(x, 0, out=o), x, torch.empty(0))
    check(lambda x, a, o: torch.clamp_max(x, a, out=o), x, rand([5]), torch.empty(0))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        torch.clamp(x.to(TPU))
    with pytest.raises(RuntimeError, match="can't be cast"):
        rand([3], torch.int64).to(TPU).clamp_(0.5, 1.5)
    # gradients
    xc, xt = x.clone().requires_grad_(), x.to(TPU).requires_grad_()
    g = rand([4, 5])
    torch.clamp(xc, -1, 1).backward(g)
    torch.clamp(xt, -1, 1).backward(g.to(TPU))
    assert_close(xt.grad, xc.grad)


def test_masked_fill():
    for dt in FLOATS + INTS + [torch.bool, torch.uint8]:
        x = rand([4, 5], dt, 0, 9)
        m = rand([4, 5], torch.bool)
        check(lambda x, m: x.masked_fill(m, 3), x, m)
        check(lambda x, m: x.t().masked_fill_(m.t(), 2), x, m)
        if dt not in (torch.float32, torch.int64):
            continue
        check(lambda x, m: x.masked_fill(m, torch.tensor(1)), x, m)
        check(lambda x, m: x.masked_fill_(m, 0), x, m)
        check(lambda x, m: x.masked_fill(m[0], 5), x, m)  # mask broadcast to x
        check(lambda x, m: x[0].masked_fill(m, 5), x, m)  # result broadcast to the mask
        check(lambda x, m, v: x.masked_fill_(m[:, :1], v), x, m, torch.tensor(7, dtype=dt))  # tpu 0-d value
    x, m = rand([4, 5]), rand([4, 5], torch.bool)
    check(lambda x, m: x.masked_fill(m, -INF), x, m)
    check(lambda x, m: x.masked_fill(m, 2.75), x.to(torch.bfloat16), m)
    check(lambda x, m: x.masked_fill(m, 2.7), rand([4, 5], torch.int64), m)
    check(lambda x: x.masked_fill(x > 0, 0.0), x)
    with pytest.raises(RuntimeError, match="boolean masks"):
        x.to(TPU).masked_fill(m.to(TPU).int(), 0.0)
    with pytest.raises(RuntimeError, match="0-dimensional value"):
        x.to(TPU).masked_fill(m.to(TPU), torch.ones(2))
    with pytest.raises(RuntimeError, match="overflow"):
        rand([3], torch.int64).to(TPU).masked_fill(rand([3], torch.bool).to(TPU), 1e30)
    with pytest.raises(RuntimeError, match='cannot be broadcast to the shape'):
        x[0].to(TPU).masked_fill_(m.to(TPU), 1.0)  # the mask cannot grow x in place
    # gradient
    xc, xt = x.clone().requires_grad_(), x.to(TPU).requires_grad_()
    g = rand([4, 5])
    xc.masked_fill(m, 0.0).backward(g)
    xt.masked_fill(m.to(TPU), 0.0).backward(g.to(TPU))
    assert_close(xt.grad, xc.grad)


# ---------------------------------------------------- lerp, addcmul, addcdiv

def test_lerp():
    for dt in FLOATS:
        a, b = rand([3, 1, 4], dt), rand([5, 4], dt)
        for w in [0.3, 0.5, 0.9, -1.5, 2.0]:
            check(lambda a, b: torch.lerp(a, b, w), a, b)
        check(lambda a, b, w: torch.lerp(a, b, w), a, b, rand([4], dt, -1, 2))
        check(lambda a, b, w: torch.lerp(a, b, w), a, b, rand([], dt, -1, 2))
    a, b, w = rand([4, 5]), rand([4, 5]), rand([4, 5], lo=0, hi=1)
    check(lambda a, b: a.lerp_(b, 0.25), a, b)
    check(lambda a, b, w: a.t().lerp_(b.t(), w.t()), a, b, w)
    check(lambda a, b, o: torch.lerp(a, b, 0.7, out=o), a, b, torch.empty(0))
    check(lambda a, b, w, o: torch.lerp(a, b, w, out=o), a, b, w, torch.empty(0))
    with pytest.raises(NotImplementedError, match='"lerp" not implemented for \'Long\''):
        torch.lerp(rand([3], torch.int64).to(TPU), rand([3], torch.int64).to(TPU), 0.5)
    with pytest.raises(RuntimeError, match="expected dtype"):
        torch.lerp(a.to(TPU), b.to(TPU).double(), 0.5)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv(name):
    fn = getattr(torch, name)
    for dt in FLOATS + (INTS if name == "addcmul" else []):
        s, t1, t2 = rand([3, 1, 4], dt), rand([5, 4], dt), rand([4], dt, 1, 3)
        check(fn, s, t1, t2)
        check(lambda s, a, b: fn(s, a, b, value=2 if not dt.is_floating_point else 0.5), s, t1, t2)
    s, t1, t2 = rand([4, 5]), rand([4, 5]), rand([4, 5], lo=1, hi=3)
    check(lambda s, a, b: getattr(s, name + "_")(a, b, value=-1.5), s, t1, t2)
    check(lambda s, a, b: getattr(s.t(), name + "_")(a.t(), b.t()), s, t1, t2)
    check(lambda s, a, b, o: fn(s, a, b, value=3.0, out=o), s, t1, t2, torch.empty(0))
    if name == "addcdiv":
        with pytest.raises(RuntimeError, match="Integer division"):
            fn(*(rand([3], torch.int64).to(TPU) for _ in range(3)))


# ---------------------------------------------------------------- clamp with bool bounds

def test_clamp_bool_tensor_bound():
    a, c = rand([4, 3], torch.bool), rand([3], torch.bool)
    check(torch.clamp_max, a, c)
    check(torch.clamp_min, a, c)
    check(lambda x, y: torch.clamp(x, max=y), a, c)
    with pytest.raises(NotImplementedError, match='"clamp" not implemented for \'Bool\''):
        torch.clamp(a.to(TPU), c.to(TPU), c.to(TPU))


def test_pow_with_a_scalar_base_checks_overlap_as_the_cpu():
    # pow(scalar, tensor, out=) builds no iterator in its meta: the CPU's
    # overlap errors must still come, and a full overlap stays allowed.
    for dev in ["cpu", TPU]:
        d = torch.randn(6, dtype=torch.float64, device=dev)
        with pytest.raises(RuntimeError, match="single memory location"):
            torch.pow(42, d[:3], out=d[1:4])
        with pytest.raises(RuntimeError, match="single memory location"):
            torch.pow(2, d[:3], out=d[:1].expand(3))
    x = torch.rand(5, dtype=torch.float64)
    check(lambda t: torch.pow(2, t, out=t), x)
