"""Mask indexing on the tpu against PyTorch on the CPU: byte (uint8) masks
read and written like bool masks with the CPU's deprecation warning on every
call, index_put's checks in the CPU's order, and indices into a dim of size 0."""
import random
import re
import warnings

import pytest
import torch

from conftest import TPU, assert_close, check


def warnings_of(fn, *args):
    """fn's result and the deprecation warnings it raised, all of them."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(*args)
    # The text up to where each build says it was raised.
    return r, [str(x.message).split(" (Triggered")[0] for x in w if "uint8" in str(x.message)]


def like_cpu(fn, *args, warns=True):
    """fn on CPU inputs and on tpu copies: the same result, the same
    mutated inputs and the same uint8 warnings (some, if warns)."""
    cpu_args = [a.clone() for a in args]
    tpu_args = [a.to(TPU) for a in args]
    expected, cpu_w = warnings_of(fn, *cpu_args)
    actual, tpu_w = warnings_of(fn, *tpu_args)
    assert_close(actual, expected)
    for a, e in zip(tpu_args, cpu_args):
        assert_close(a, e)
    assert tpu_w == cpu_w and bool(cpu_w) == warns, (tpu_w, cpu_w)


def byte_mask(shape):
    return (torch.rand(shape) > 0.5).to(torch.uint8)


def test_byte_mask_read():
    x = torch.randn(5, 7, 3)
    like_cpu(lambda a, m: a[m], x, byte_mask(5))
    like_cpu(lambda a, m: a[m], x, byte_mask((5, 7)))
    like_cpu(lambda a, m: a[:, m], x, byte_mask(7))
    like_cpu(lambda a, m, n: a[m, :, n], x, torch.tensor([1, 0, 1, 1, 0], dtype=torch.uint8),
             torch.ones(3, dtype=torch.uint8))
    like_cpu(lambda a, m: (a[m], a[m.bool()], a[m]), x, byte_mask(5))  # one warning per byte call
    # A 0-d mask is handled before index is called: no warning on either device.
    like_cpu(lambda a, m: a[m], torch.tensor(2.5), torch.tensor(1, dtype=torch.uint8), warns=False)
    like_cpu(lambda a, m: a[m], x, torch.zeros(5, dtype=torch.uint8))


def test_byte_mask_write():
    x = torch.randn(6, 4)

    def put(a, m, v):
        a[m] = v
        return a

    like_cpu(put, x, byte_mask(6), torch.randn(4))
    like_cpu(lambda a, m: put(a, m, a[m] * 2), x, byte_mask((6, 4)))
    like_cpu(lambda a, m: a.index_put_((m,), a[m] * 2, accumulate=True), x, byte_mask(6))
    like_cpu(lambda a, m: a.index_put_((m,), a[m], accumulate=True), x, torch.zeros(6, dtype=torch.uint8))


@pytest.mark.parametrize("values", [[], [1.0, 2.0, 3.0], [1, 2, 3]])
def test_index_put_shape_checked_before_dtype(values):
    # A long tensor written with float values of the wrong shape: the CPU
    # reports the shape.
    a = torch.arange(0, 4)
    v = torch.tensor(values)

    def put(t, vv):
        t[t > -1] = vv

    with pytest.raises(RuntimeError, match="shape mismatch"):
        put(a.clone(), v)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        put(a.to(TPU), v.to(TPU))
    # Matching shape, other dtype: the dtype error, as on the CPU.
    with pytest.raises(RuntimeError, match="dtypes match"):
        a.index_put_((a > -1,), torch.randn(4))
    with pytest.raises(RuntimeError, match="dtypes match"):
        a.to(TPU).index_put_((a.to(TPU) > -1,), torch.randn(4, device=TPU))


def test_index_into_empty_dim_raises_at_the_call():
    x = torch.empty(10, 0)
    for device_index in [True, False]:
        i = torch.tensor([0, 1]).to(TPU if device_index else "cpu")
        with pytest.raises(IndexError, match="for dimension with size 0"):
            x.to(TPU)[:, i]
        with pytest.raises(IndexError, match="for dimension with size 0"):
            torch.ops.aten.index_put_(x.to(TPU), [None, i], torch.tensor(1.0, device=TPU))
    # Nothing is left pending: the next ops run and read back.
    y = torch.randn(2, 3, 4, 5)
    z = y.to(TPU)[:, :, :, 1][:, 1:1, :]
    assert z.shape == (2, 0, 4) and z.stride() == (60, 20, 5) and z.is_contiguous()
    check(lambda a: a[:, 1:1, :] + 1, y[:, :, :, 1])
    # An empty index into an empty dim selects nothing.
    check(lambda a, ii: a[:, ii], x, torch.tensor([], dtype=torch.long))
    check(lambda a, ii: a[ii], x, torch.randint(0, 10, (3,)))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_indices_from_host_raise_at_the_call(dtype):
    # Indices copied to the device keep their host min and max: one out of
    # range raises the CPU's error at the op, not at a later read.
    n = random.randint(3, 12)
    x = torch.randn(n, 4)
    bad = torch.randint(0, n, (5,), dtype=dtype)
    bad[0] = random.choice([n, -n - 1, n + 7])
    with pytest.raises(IndexError) as cpu_err:
        x[bad]
    for op in [lambda a, i: a[i], lambda a, i: a.index_put_((i,), torch.tensor(1.0, device=TPU))]:
        with pytest.raises(IndexError, match=re.escape(str(cpu_err.value).splitlines()[0])):
            op(x.to(TPU), bad.to(TPU))
    # In range, the same tensors index as on the CPU; a view of the bad
    # tensor's in-range part is still allowed.
    good = torch.randint(-n, n, (7,), dtype=dtype)
    check(lambda a, i: a[i], x, good)
    check(lambda a, i: a.index_put_((i,), torch.ones(4), accumulate=True), x, good)
    assert_close(x.to(TPU)[bad.to(TPU)[1:]], x[bad[1:]])
