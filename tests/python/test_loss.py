"""Losses on the tpu against PyTorch on the CPU: nll_loss (1-D, batched and
spatial, weights, ignore_index) and cross_entropy, mse_loss, huber_loss,
smooth_l1_loss and binary_cross_entropy with every reduction, their backward
ops and gradients, checks of bad targets, and that none of these ops runs
through the CPU fallback."""
import random

import pytest
import torch
import torch.nn.functional as F

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


# ------------------------------------------------------------- nll_loss / cross_entropy


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss(reduction):
    for n, c in [(6, 5), (1, 3), (0, 4)]:
        x = torch.randn(n, c).log_softmax(1)
        t = torch.randint(0, c, (n,))
        w = torch.rand(c)
        compare(lambda a: F.nll_loss(a, t.to(a.device), reduction=reduction), x)
        compare(lambda a: F.nll_loss(a, t.to(a.device), w.to(a.device), reduction=reduction), x)
        if n:
            t[0] = 1
            compare(lambda a: F.nll_loss(a, t.to(a.device), w.to(a.device), ignore_index=1, reduction=reduction), x)
    # 1-D input with a 0-d target.
    x = torch.randn(5)
    compare(lambda a: F.nll_loss(a, torch.tensor(3, device=a.device), reduction=reduction), x)
    # Spatial: (N, C, H, W) and (N, C, d1) and (N, C, d1, d2, d3).
    for shape in [(2, 3, 4, 5), (2, 4, 6), (2, 3, 2, 3, 2)]:
        x = torch.randn(shape)
        t = torch.randint(0, shape[1], (shape[0],) + shape[2:])
        w = torch.rand(shape[1])
        compare(lambda a: F.nll_loss(a, t.to(a.device), w.to(a.device), ignore_index=0, reduction=reduction), x)


def test_nll_loss_all_ignored_and_bf16():
    x = torch.randn(3, 4)
    t = torch.full((3,), -100)
    compare(lambda a: F.nll_loss(a, t.to(a.device)), x)  # 0 / 0 = nan, like the CPU
    compare(lambda a: F.nll_loss(a, torch.tensor([0, 3, 1], device=a.device)), x.bfloat16())


def test_nll_loss_outputs_and_backward_ops():
    x = torch.randn(5, 4)
    t = torch.tensor([0, 3, -100, 1, 3])
    w = torch.rand(4)
    for red in [0, 1, 2]:
        out, total = check(lambda a, b, c: torch.ops.aten.nll_loss_forward(a, b, c, red, -100), x, t, w)
        g = torch.randn(5) if red == 0 else torch.randn(())
        check(lambda gg, a, b, c, tw: torch.ops.aten.nll_loss_backward(gg, a, b, c, red, -100, tw), g, x, t, w,
              total.cpu())
    x4, t3 = torch.randn(2, 3, 2, 2), torch.randint(0, 3, (2, 2, 2))
    out, total = check(lambda a, b: torch.ops.aten.nll_loss2d_forward(a, b, None, 1, -100), x4, t3)
    check(lambda g, a, b, tw: torch.ops.aten.nll_loss2d_backward(g, a, b, None, 1, -100, tw), torch.randn(()), x4,
          t3, total.cpu())


def test_nll_loss_bad_input():
    x = torch.randn(3, 4, device=TPU)
    with pytest.raises(RuntimeError, match='expected target dtype to be Long or Byte'):
        F.nll_loss(x, torch.zeros(3, device=TPU))  # float target
    with pytest.raises((RuntimeError, ValueError), match='Expected input batch_size'):
        F.nll_loss(x, torch.zeros(4, dtype=torch.long, device=TPU))  # size mismatch


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_grad_cross_entropy(reduction):
    t = torch.randint(0, 7, (6,))
    w = torch.rand(7)
    grads(lambda x, tt: F.cross_entropy(x, tt, reduction=reduction), (6, 7), extra=(t,))
    grads(lambda x, tt, ww: F.cross_entropy(x, tt, ww, reduction=reduction, ignore_index=t[0].item()), (6, 7),
          extra=(t, w))
    grads(lambda x, tt: F.cross_entropy(x, tt, reduction=reduction, label_smoothing=0.0), (6, 7), extra=(t,))
    ts = torch.randint(0, 3, (2, 4, 5))
    grads(lambda x, tt: F.cross_entropy(x, tt, reduction=reduction), (2, 3, 4, 5), extra=(ts,))


def test_cross_entropy_is_fully_native():
    x = torch.randn(8, 10, device=TPU, requires_grad=True)
    t = torch.randint(0, 10, (8,), device=TPU)
    loss = F.cross_entropy(x, t)
    loss.backward()
    x.grad.cpu()


# ------------------------------------------------------------- mse_loss


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_mse_loss(reduction):
    for dtype in FLOATS:
        a, b = make((4, 5), dtype), make((4, 5), dtype)
        compare(lambda t: F.mse_loss(t, b.to(t.device), reduction=reduction), a)
    a, b = torch.randn(3, 5), torch.randn(5)
    expected = torch.ops.aten.mse_loss(a, b, {"none": 0, "mean": 1, "sum": 2}[reduction])
    actual = torch.ops.aten.mse_loss(a.to(TPU), b.to(TPU), {"none": 0, "mean": 1, "sum": 2}[reduction])
    assert_close(actual, expected)


def test_grad_mse_loss():
    grads(lambda x, y: F.mse_loss(x, y), (4, 6), (4, 6))
    grads(lambda x, y: F.mse_loss(x, y, reduction="none"), (4, 6), (4, 6))


# ------------------------------------------------------------- huber / smooth_l1 / binary_cross_entropy


def rand_shape(rank, lo=1, hi=5):
    return [random.randint(lo, hi) for _ in range(rank)]


def rand(shape, dtype=torch.float32, lo=-3.0, hi=3.0):
    if dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if dtype.is_floating_point:
        return torch.rand(shape, dtype=dtype) * (hi - lo) + lo
    return torch.randint(int(lo), int(hi) + 1, shape, dtype=dtype)


def grads_at(fn, *inputs, atol=1e-4, rtol=1e-4):
    """Compares d(sum(fn * g))/d(inputs) at the given inputs on the tpu and the CPU."""
    cpu = [x.detach().clone().requires_grad_(True) for x in inputs]
    tpu = [x.detach().to(TPU).requires_grad_(True) for x in inputs]
    out_c = fn(*cpu)
    g = torch.randn_like(out_c)
    out_c.backward(g)
    fn(*tpu).backward(g.to(TPU))
    for c, t in zip(cpu, tpu):
        assert_close(t.grad, c.grad, atol=atol, rtol=rtol)


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
        grads_at(lambda a, b: F.huber_loss(a, b, reduction=reduction, delta=0.7), x, y)
        grads_at(lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=1.3), x, y)


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
        grads_at(lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction), x.clamp(0.05, 0.95), y)
        grads_at(lambda a: F.binary_cross_entropy(a, y.to(a.device), w.to(a.device), reduction=reduction),
              x.clamp(0.05, 0.95))
    # checked on the device: raised at the next host read
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(torch.full([2], 1.5, device=TPU), torch.ones(2, device=TPU)).cpu()


def test_integer_inputs_rejected_like_cpu():
    i = torch.arange(6, device=TPU).view(2, 3)
    for fn in [lambda t: F.nll_loss(t, torch.zeros(2, dtype=torch.long, device=TPU)), lambda t: F.mse_loss(t, t)]:
        with pytest.raises(RuntimeError, match="not implemented|floating"):
            fn(i)
