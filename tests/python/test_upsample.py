"""Nearest-neighbour upsampling (csrc/ops/upsample): values bit
for bit like the CPU, gradients within float tolerance, every dtype the CPU
kernel takes, and the CPU's error for the others."""
import random

import pytest
import torch
import torch.nn.functional as F

from conftest import TPU, assert_close


def _cases(nd):
    # Spatial sizes of 2 or more: scales down to 0.5 keep every output non-empty.
    shape = [2, 3] + [random.randint(2, 7) for _ in range(nd)]
    return [
        (shape, dict(scale_factor=2)),
        (shape, dict(scale_factor=random.choice([3, 0.5, 1.7, 2.5]))),
        (shape, dict(size=[random.randint(1, 12) for _ in range(nd)])),
        (shape, dict(scale_factor=random.choice([1.5, 2.0, 0.6]), recompute_scale_factor=True)),
    ]


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nearest_matches_cpu_with_gradient(mode, nd):
    for shape, kw in _cases(nd):
        x = torch.randn(*shape, requires_grad=True)
        y = F.interpolate(x, mode=mode, **kw)
        xt = x.detach().to(TPU).requires_grad_()
        yt = F.interpolate(xt, mode=mode, **kw)
        assert_close(yt, y.detach(), atol=0, rtol=0)  # a pure gather: exact
        g = torch.randn_like(y)
        y.backward(g)
        yt.backward(g.to(TPU))
        assert_close(xt.grad, x.grad)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.uint8])
def test_nearest_low_precision_and_bytes(dtype):
    x = (torch.randn(2, 3, 5, 4) * 20).to(dtype)
    for kw in (dict(scale_factor=2), dict(size=(7, 9))):
        assert_close(F.interpolate(x.to(TPU), **kw), F.interpolate(x, **kw), atol=0, rtol=0)
    if dtype.is_floating_point:
        # The CPU sums half-precision gradients in float and rounds once.
        xf = x.float().requires_grad_()
        xt = x.to(TPU).requires_grad_()
        g = torch.randn(2, 3, 7, 9)
        F.interpolate(xf, size=(7, 9)).backward(g)
        F.interpolate(xt, size=(7, 9)).backward(g.to(dtype).to(TPU))
        xc = x.clone().requires_grad_()
        F.interpolate(xc, size=(7, 9)).backward(g.to(dtype))
        assert_close(xt.grad, xc.grad)


def test_upsample_module_and_integer_error():
    up = torch.nn.Upsample(scale_factor=2, mode="nearest")
    x = torch.randn(1, 4, 3, 3)
    assert_close(up(x.to(TPU)), up(x), atol=0, rtol=0)
    xi = torch.ones(1, 1, 3, 3, dtype=torch.int32)
    with pytest.raises(NotImplementedError, match="not implemented for 'Int'"):
        F.interpolate(xi.to(TPU), scale_factor=2).cpu()
