"""Convolution on the tpu (convolution_overrideable and its backward)
against the CPU: forward and gradients over many configurations."""
import random

import pytest
import torch
import torch.nn.functional as F

from conftest import TPU, assert_close, check

def _run(fn, x, w, b, dtype=torch.float32, grad=True, tol=None):
    """fn(x, w, b) on CPU (float32 reference, rounded to dtype) and on the tpu."""
    x, w = x.to(dtype), w.to(dtype)
    b = b.to(dtype) if b is not None else None
    leaves = [t for t in (x, w, b) if t is not None]
    cpu = [t.float().clone().requires_grad_(grad) for t in leaves]
    dev = [t.to(TPU).requires_grad_(grad) for t in leaves]

    def call(ts):
        xx, ww = ts[0], ts[1]
        bb = ts[2] if b is not None else None
        return fn(xx, ww, bb)

    expected = call(cpu)
    actual = call(dev)
    atol, rtol = tol or ((1e-4, 1e-4) if dtype == torch.float32 else (3e-2, 3e-2))
    assert actual.dtype == dtype
    assert_close(actual.float(), expected.to(dtype).float(), atol=atol, rtol=rtol)
    if grad:
        g = torch.randn_like(expected)
        expected.backward(g)
        actual.backward(g.to(dtype).to(TPU))
        for c, d in zip(cpu, dev):
            scale = max(1.0, c.grad.abs().max().item())
            assert_close(d.grad.float(), c.grad.to(dtype).float(), atol=atol * scale, rtol=rtol)
    return actual


CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONVT = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _random_config(nd, transposed):
    g = random.choice([1, 1, 2, 3])
    cin = g * random.randint(1, 3)
    cout = g * random.randint(1, 3)
    k = [random.randint(1, 3) for _ in range(nd)]
    s = [random.randint(1, 3) for _ in range(nd)]
    d = [random.randint(1, 2) for _ in range(nd)]
    p = [random.randint(0, (kk - 1) * dd) for kk, dd in zip(k, d)]
    size = [random.randint((kk - 1) * dd + 1, (kk - 1) * dd + 6) for kk, dd in zip(k, d)]
    n = random.randint(1, 2)
    x = torch.randn(n, cin, *size)
    bias = torch.randn(cout) if random.random() < 0.6 else None
    if transposed:
        op = [random.randint(0, max(ss, dd) - 1) for ss, dd in zip(s, d)]
        w = torch.randn(cin, cout // g, *k)
        fn = lambda x, w, b: CONVT[nd](x, w, b, stride=s, padding=p, output_padding=op, groups=g, dilation=d)
    else:
        w = torch.randn(cout, cin // g, *k)
        fn = lambda x, w, b: CONV[nd](x, w, b, stride=s, padding=p, dilation=d, groups=g)
    return fn, x, w, bias


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("transposed", [False, True])
def test_random_configs(nd, transposed):
    for _ in range(6 if nd < 3 else 3):
        fn, x, w, b = _random_config(nd, transposed)
        _run(fn, x, w, b)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision(dtype):
    fn, x, w, b = _random_config(2, False)
    _run(fn, x, w, b, dtype=dtype)
    fn, x, w, b = _random_config(1, True)
    _run(fn, x, w, b, dtype=dtype)


def test_vit_patch_embedding():
    # ViT: conv2d with stride == kernel (16x16 patches), bias.
    x, w, b = torch.randn(2, 3, 32, 48), torch.randn(8, 3, 16, 16) * 0.05, torch.randn(8)
    _run(lambda x, w, b: F.conv2d(x, w, b, stride=16), x, w, b, tol=(1e-4, 1e-4))
    # Input size not a multiple of the patch: the tail is dropped.
    x = torch.randn(1, 3, 37, 35)
    _run(lambda x, w, b: F.conv2d(x, w, b, stride=16), x, w, b, tol=(1e-4, 1e-4))


@pytest.mark.parametrize("stride", [1, 2])
def test_whisper_conv1d(stride):
    # Whisper's audio stem: conv1d k=3, padding=1, stride 1 then 2.
    x, w, b = torch.randn(2, 16, 30), torch.randn(12, 16, 3) * 0.2, torch.randn(12)
    _run(lambda x, w, b: F.conv1d(x, w, b, stride=stride, padding=1), x, w, b)
    _run(lambda x, w, b: F.conv1d(x, w, b, stride=stride, padding=1), x.bfloat16(), w, b, dtype=torch.bfloat16)


def test_modules_and_padding_modes():
    for m in [torch.nn.Conv2d(4, 6, 3, padding="same"), torch.nn.Conv1d(4, 4, 5, padding="same", groups=4),
              torch.nn.ConvTranspose2d(4, 2, 4, stride=2, padding=1), torch.nn.Conv3d(2, 3, (1, 2, 3))]:
        nd = {torch.nn.Conv1d: 1, torch.nn.Conv2d: 2, torch.nn.Conv3d: 3, torch.nn.ConvTranspose2d: 2}[type(m)]
        x = torch.randn(2, m.in_channels, *([7] * nd))
        expected = m(x)
        actual = m.to(TPU)(x.to(TPU))
        assert_close(actual.detach(), expected.detach(), atol=1e-4, rtol=1e-4)


def test_large_transposed_padding():
    # padding larger than the dilated kernel extent: negative pads inside.
    x, w = torch.randn(1, 2, 9), torch.randn(2, 3, 3)
    _run(lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=3), x, w, None)
    _run(lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, padding=4, output_padding=2), x, w, None)


def test_only_some_grads():
    x, w = torch.randn(2, 4, 8, 8), torch.randn(6, 2, 3, 3, requires_grad=True)
    wt = w.detach().to(TPU).requires_grad_()
    F.conv2d(x, w, stride=2, groups=2).sum().backward()
    F.conv2d(x.to(TPU), wt, stride=2, groups=2).sum().backward()
    assert_close(wt.grad, w.grad, atol=1e-4, rtol=1e-4)


def test_grad_sizes_not_implied_by_grad_output():
    # Lengths 9 and 10 give the same output length with stride 2: the
    # gradients must still come back at each input's own size.
    w = torch.randn(3, 2, 3)
    for n in (9, 10):
        _run(lambda x, w, b: F.conv1d(x, w, b, stride=2), torch.randn(1, 2, n), w, None)
    for k in (2, 3):
        _run(lambda x, w, b: F.conv1d(x, w, b, stride=3), torch.randn(1, 2, 10), torch.randn(3, 2, k), None)


def test_noncontiguous_inputs():
    x = torch.randn(2, 9, 3, 8).transpose(1, 2)[:, :, 1:]  # [2, 3, 8, 8], strided
    w = torch.randn(3, 4, 3, 3).transpose(0, 1)  # [4, 3, 3, 3]
    _run(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, torch.randn(4))
    _run(lambda x, w, b: F.conv_transpose2d(x, w.transpose(0, 1), b, stride=2), x, w, None)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_pointwise_and_patch(dtype):
    # 1x1 and stride == kernel convs may become plain dots inside XLA.
    for n in (1, 2):
        _run(lambda x, w, b: F.conv2d(x, w, b), torch.randn(n, 4, 5, 5), torch.randn(6, 4, 1, 1), torch.randn(6),
             dtype=dtype)
        _run(lambda x, w, b: F.conv2d(x, w, b, stride=8), torch.randn(n, 3, 16, 24), torch.randn(5, 3, 8, 8) * 0.1,
             None, dtype=dtype)


def test_errors():
    x = torch.randn(1, 4, 8, device=TPU)
    with pytest.raises(RuntimeError, match="channels"):
        F.conv1d(x, torch.randn(2, 3, 3, device=TPU))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv1d(x, torch.randn(2, 4, 30, device=TPU))


def _ints(shape, dtype):
    return torch.randint(-5, 6, shape, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.int64])  # the CPU's slow path covers int64 only
def test_integer_convolution(dtype):
    x, w, bias = _ints([2, 3, 7], dtype), _ints([4, 3, 3], dtype), _ints([4], dtype)
    check(lambda a, b, c: F.conv1d(a, b, c, stride=2, padding=1), x, w, bias)
    check(lambda a, b: F.conv_transpose1d(a, b, stride=2), x, _ints([3, 4, 3], dtype))
    check(F.conv2d, _ints([2, 3, 5, 6], dtype), _ints([4, 3, 3, 2], dtype))
    check(lambda a, b: F.conv2d(a, b, groups=3), _ints([1, 3, 4, 4], dtype), _ints([3, 1, 2, 2], dtype))
