"""Integer division and remainder as the CPU computes them: values, the
ZeroDivisionError of a zero divisor (host or device), MIN // -1, in-place
and out= forms, and programs where the compiler sees a constant zero
divisor (which must never trap the process)."""
import os
import subprocess
import sys

import pytest
import torch

from conftest import TPU

INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]

OPS = {
    "floor_divide": torch.floor_divide,
    "fmod": torch.fmod,
    "remainder": torch.remainder,
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "floordiv_operator": lambda a, b: a // b,
    "mod_operator": lambda a, b: a % b,
}

INPLACE = {
    "floor_divide_": lambda a, b: a.floor_divide_(b),
    "fmod_": lambda a, b: a.fmod_(b),
    "remainder_": lambda a, b: a.remainder_(b),
    "div_trunc_": lambda a, b: a.div_(b, rounding_mode="trunc"),
    "div_floor_": lambda a, b: a.div_(b, rounding_mode="floor"),
    "ifloordiv": lambda a, b: a.__ifloordiv__(b),
    "imod": lambda a, b: a.__imod__(b),
}


def _operands(dtype):
    lo, hi = (0, 100) if dtype == torch.uint8 else (-100, 100)
    a = torch.randint(lo, hi, (7, 33), dtype=dtype)
    b = torch.randint(1 if dtype == torch.uint8 else lo, hi, (7, 33), dtype=dtype)
    b[b == 0] = 3
    return a, b


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(OPS))
def test_values_tensor_and_scalar_divisor(name, dtype):
    f = OPS[name]
    a, b = _operands(dtype)
    torch.testing.assert_close(f(a.to(TPU), b.to(TPU)).cpu(), f(a, b))
    torch.testing.assert_close(f(a.to(TPU), 7).cpu(), f(a, 7))
    if dtype != torch.uint8:
        torch.testing.assert_close(f(a.to(TPU), -7).cpu(), f(a, -7))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_values_inplace(name, dtype):
    f = INPLACE[name]
    a, b = _operands(dtype)
    d = a.to(TPU)
    f(d, b.to(TPU))
    torch.testing.assert_close(d.cpu(), f(a.clone(), b))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_values_out(dtype):
    a, b = _operands(dtype)
    for f in (torch.floor_divide, torch.fmod, torch.remainder):
        out = torch.empty_like(a, device=TPU)
        f(a.to(TPU), b.to(TPU), out=out)
        torch.testing.assert_close(out.cpu(), f(a, b))
    out = torch.empty_like(a, device=TPU)
    torch.div(a.to(TPU), b.to(TPU), rounding_mode="floor", out=out)
    torch.testing.assert_close(out.cpu(), torch.div(a, b, rounding_mode="floor"))


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64], ids=str)
def test_min_by_minus_one(dtype):
    m = torch.iinfo(dtype).min
    a = torch.tensor([m, m + 1, 7, -7], dtype=dtype)
    b = torch.full_like(a, -1)
    # The CPU's own trunc division of int32/int64 MIN by -1 traps; its floor
    # division and remainders wrap to MIN and 0, which the device matches.
    for name in ("floor_divide", "fmod", "remainder", "div_floor", "floordiv_operator", "mod_operator"):
        f = OPS[name]
        torch.testing.assert_close(f(a.to(TPU), b.to(TPU)).cpu(), f(a, b), msg=name)
        torch.testing.assert_close(f(a.to(TPU), -1).cpu(), f(a, -1), msg=name)
    trunc = torch.div(a.to(TPU), b.to(TPU), rounding_mode="trunc").cpu()
    torch.testing.assert_close(trunc, torch.tensor([m, -(m + 1), -7, 7], dtype=dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(OPS) + sorted(INPLACE))
def test_zero_divisor_raises(name, dtype):
    f = OPS.get(name) or INPLACE[name]
    a, b = _operands(dtype)
    b[3, 5] = 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a.clone(), b)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a.to(TPU), b.to(TPU)).cpu()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a.to(TPU), 0)
    torch.tpu.synchronize()


# Divisors the compiler sees as constants (a zeros/full fused into the same
# program, a traced graph): a zero there once made XLA's constant folder
# divide by zero and kill the process with SIGFPE. Run in a child so the
# suite survives a regression.
_CONSTANT_DIVISOR = r"""
import torch, torch_pjrt, torch._refs
from torch.testing import make_tensor
# PyTorch's reference floor division on empty, then 0-d operands (its
# reference-numerics tests): the sequence that reached the trap.
for shape in [(0,), (1, 0, 3), ()]:
    l = make_tensor(shape, dtype=torch.int8, device="tpu")
    r = make_tensor(shape, dtype=torch.int8, device="tpu", exclude_zero=True)
    assert torch.equal(torch._refs.floor_divide(l, r).cpu(), torch.floor_divide(l.cpu(), r.cpu()))
ops = [torch.floor_divide, torch.fmod, torch.remainder,
       lambda a, b: torch.div(a, b, rounding_mode="trunc"),
       lambda a, b: torch.div(a, b, rounding_mode="floor")]
for dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
    x = torch.randint(0, 100, (64,), dtype=dtype, device="tpu")
    for i, f in enumerate(ops):
        try:
            f(x, torch.zeros_like(x)).cpu()
        except RuntimeError as e:
            assert "ZeroDivisionError" in str(e), e
        else:
            raise AssertionError("no ZeroDivisionError", dtype, i)
        g = torch.compile(lambda x, f=f: f(x, torch.zeros_like(x)), backend="tpu")
        try:
            g(x).cpu()
        except RuntimeError as e:
            assert "ZeroDivisionError" in str(e), e
        else:
            raise AssertionError("no ZeroDivisionError (compiled)", dtype, i)
    if dtype != torch.uint8:
        m = torch.iinfo(dtype).min
        mins = torch.full((64,), m, dtype=dtype, device="tpu")
        got = torch.floor_divide(mins, torch.full_like(mins, -1)).cpu()
        assert (got == m).all(), got
        got = torch.fmod(mins, torch.full_like(mins, -1)).cpu()
        assert (got == 0).all(), got
torch.tpu.synchronize()
print("OK")
"""


@pytest.mark.once("runs every eager mode itself, each in a child process")
@pytest.mark.parametrize("mode", ["strict", "fused", "debug"])
def test_constant_zero_divisor_never_traps(mode):
    env = dict(os.environ, TORCH_PJRT_EAGER_MODE=mode)
    r = subprocess.run([sys.executable, "-c", _CONSTANT_DIVISOR], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0 and "OK" in r.stdout, (r.returncode, r.stdout[-2000:], r.stderr[-4000:])
