"""softmax / log_softmax on the tpu against PyTorch on the CPU: every dim,
dtype= and half_to_float, infinities and NaN, the backward ops and gradients,
and that none of these ops runs through the CPU fallback."""
import math
import random

import pytest
import torch

from conftest import TPU, assert_close, check

FLOATS = [torch.float32, torch.bfloat16, torch.float16]


def make(shape, dtype=torch.float32, layout="contiguous"):
    """A random tensor of `shape`, optionally as a transposed or sliced view
    (of a larger CPU tensor: check() copies views with their layout)."""
    if dtype == torch.bool:
        x = torch.rand(shape) > 0.5
    elif dtype.is_floating_point:
        x = torch.randn(shape).to(dtype)
    else:
        x = torch.randint(-5, 6, shape).to(dtype)
    if layout == "transposed" and x.dim() >= 2:
        return x.transpose(0, -1).contiguous().transpose(0, -1)
    if layout == "sliced" and x.dim() >= 1:
        big = torch.cat([x, x], dim=-1)
        return big[..., ::2]
    return x


def on_tpu_like(x):
    """Moves x to the tpu as the same view of a copy of its base."""
    if x._base is None:
        return x.to(TPU)
    return x._base.to(TPU).as_strided(x.size(), x.stride(), x.storage_offset())


def compare(fn, x, *args, atol=None, rtol=None, **kwargs):
    expected = fn(x, *args, **kwargs)
    actual = fn(on_tpu_like(x), *args, **kwargs)
    assert_close(actual, expected, atol=atol, rtol=rtol)
    return actual


def pick(xs, k=2):
    """k random choices out of xs: coverage across runs, few programs per run."""
    xs = list(xs)
    return random.sample(xs, min(k, len(xs)))


def shapes_for(dtype, shapes, k=2):
    """Every shape for float32; k of them for the other dtypes (compiles are
    the test suite's cost, and the lowering is dtype-generic)."""
    return list(shapes) if dtype == torch.float32 else pick(shapes, k)


def dims_of(rank):
    return range(-max(rank, 1), max(rank, 1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_log_softmax(dtype):
    for shape in shapes_for(dtype, [(), (7,), (4, 9), (2, 3, 5), (0, 4)]):
        x = make(shape, dtype, random.choice(["contiguous", "transposed", "sliced"])) * 3
        for dim in pick(dims_of(len(shape))):
            compare(lambda t: (torch.softmax(t, dim), torch.log_softmax(t, dim)), x)
    x = make((3, 6), dtype)
    compare(lambda t: torch.softmax(t, 1, dtype=torch.float32), x)
    compare(lambda t: torch.log_softmax(t, 0, dtype=torch.float32), x)
    if dtype != torch.float32:
        # half_to_float (CUDA's fused upcast; the CPU has none): f32 results.
        t = x.to(TPU)
        assert_close(torch.ops.aten._softmax(t, 1, True), torch.softmax(x.float(), 1))
        assert_close(torch.ops.aten._log_softmax(t, 1, True), torch.log_softmax(x.float(), 1))


def test_softmax_infinities():
    x = torch.randn(4, 5)
    x[0] = -math.inf
    x[1, 2] = -math.inf
    x[2, 1] = math.inf
    x[3, 3] = math.nan
    compare(lambda t: (t.softmax(1), t.log_softmax(1)), x)


def test_softmax_out_and_backward_data():
    x = torch.randn(4, 6)
    for op in [torch.ops.aten._softmax, torch.ops.aten._log_softmax]:
        out_c, out_t = torch.empty(0), torch.empty(0, device=TPU)
        op.out(x, 1, False, out=out_c)
        op.out(x.to(TPU), 1, False, out=out_t)
        assert_close(out_t, out_c)
    g, y = torch.randn(4, 6), torch.softmax(torch.randn(4, 6), 1)
    for op in [torch.ops.aten._softmax_backward_data, torch.ops.aten._log_softmax_backward_data]:
        for dim in [0, 1]:
            check(lambda a, b: op(a, b, dim, torch.float32), g, y)
        check(lambda a, b: op(a, b, 1, torch.float16), g.half(), y.half())
        check(lambda a, b: op(a, b, 1, torch.bfloat16), g.bfloat16(), y.bfloat16())
        # Backward of a half_to_float forward: f32 grads, f16 input dtype.
        expected = op(g, y, 1, torch.float32).half()
        assert_close(op(g.to(TPU), y.to(TPU), 1, torch.float16), expected)


def grads(fn, *shapes, extra=(), dtype=torch.float32, atol=1e-5, rtol=1e-5):
    """fn's result and the gradients of its inputs on the tpu vs the CPU."""
    xs = [torch.randn(*s, dtype=dtype, requires_grad=True) for s in shapes]
    ts = [x.detach().to(TPU).requires_grad_() for x in xs]
    expected = fn(*xs, *extra)
    actual = fn(*ts, *[e.to(TPU) if isinstance(e, torch.Tensor) else e for e in extra])
    assert_close(actual, expected, atol=atol, rtol=rtol)
    g = torch.randn_like(expected)
    expected.backward(g)
    actual.backward(g.to(TPU))
    for t, x in zip(ts, xs):
        assert_close(t.grad, x.grad, atol=atol, rtol=rtol)


def test_grad_softmax_log_softmax():
    for dim in [0, 1, -1]:
        grads(lambda x: x.softmax(dim), (4, 7))
        grads(lambda x: x.log_softmax(dim), (4, 7))
    grads(lambda x: x.softmax(1), (2, 3, 5))


def test_integer_inputs_rejected_like_cpu():
    i = torch.arange(6, device=TPU).view(2, 3)
    for fn in [lambda t: t.softmax(1), lambda t: t.log_softmax(0)]:
        with pytest.raises(RuntimeError, match="not implemented|floating"):
            fn(i)
