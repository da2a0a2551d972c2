"""Pooling on the tpu against the CPU: max / avg / adaptive pooling in 1-3
spatial dims with their gradients, max_unpool, and their errors."""
import random

import pytest
import torch

from conftest import TPU, assert_close, check

FLOATS = [torch.float32, torch.bfloat16, torch.float16]
F_ = torch.nn.functional


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
