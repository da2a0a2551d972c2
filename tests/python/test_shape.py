"""Shape-changing data movement on the tpu against PyTorch on the CPU: cat
(and stack), flip, roll, repeat, constant padding, triu / tril and their
gradients."""
import pytest
import torch
import torch.nn.functional as F

from conftest import TPU, assert_close, check

OTHER = [torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.bool]


def rand(shape, dtype=torch.float32):
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randint(-50, 50, shape, dtype=dtype)


def _grads(fn, *inputs):
    """fn's input gradients on the CPU and the tpu for the same upstream grad."""
    out_cpu = fn(*[i.clone().requires_grad_() if i.is_floating_point() else i for i in inputs])
    g = torch.randn_like(out_cpu)
    res = []
    for dev in ["cpu", TPU]:
        ins = [i.detach().to(dev).requires_grad_() if i.is_floating_point() else i.to(dev) for i in inputs]
        fn(*ins).backward(g.to(dev))
        res.append([i.grad for i in ins if i.is_floating_point()])
    assert_close(res[1], res[0])


# ---------------------------------------------------------------- cat, stack, flip, roll, repeat, pad, tri


def test_cat():
    a, b, c = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 1, 4)
    check(lambda *t: torch.cat(t, 1), a, b, c)
    check(lambda *t: torch.cat(t, -2), a, b, c)
    check(lambda *t: torch.cat(t, 0), a, a.flip(0), a)
    check(lambda x, y: torch.cat([x.transpose(0, 2), y.transpose(0, 2)], 1), a, b)  # non-contiguous
    check(lambda x, e, y: torch.cat([x, e, y]), a, torch.empty(0), a)              # legacy empty skipped
    check(lambda x, e: torch.cat([x, e], 1), a, torch.empty(2, 0, 4))
    check(lambda x, y, o: torch.cat([x, y], 1, out=o), a, b, torch.empty(0))
    check(lambda *t: torch.stack(t), a, a, a)
    check(lambda *t: torch.stack(t, -1), a, a)
    check(lambda *t: torch.cat(t), *[torch.randn(1, 3) for _ in range(12)])
    for dtype in OTHER:
        check(lambda *t: torch.cat(t, 1), rand((2, 3), dtype), rand((2, 2), dtype))
        check(lambda *t: torch.stack(t), rand((2, 3), dtype), rand((2, 3), dtype))


@pytest.mark.parametrize("dim", range(4))
def test_cat_keeps_channels_last(dim):
    # As the CPU: inputs that share a memory format give a result in it.
    x, y = torch.randn(2, 5, 4, 3), torch.randn(2, 5, 4, 3)
    xt = x.to(TPU).contiguous(memory_format=torch.channels_last)
    yt = y.to(TPU).contiguous(memory_format=torch.channels_last)
    got = torch.cat((xt, yt), dim=dim)
    want = torch.cat((x.contiguous(memory_format=torch.channels_last), y.contiguous(memory_format=torch.channels_last)),
                     dim=dim)
    assert got.stride() == want.stride() and got.is_contiguous(memory_format=torch.channels_last)
    assert_close(got, want)


def test_cat_mixed_dtypes():
    check(lambda x, y: torch.cat([x, y]), torch.randn(2, 3), torch.randint(0, 9, (1, 3)))
    check(lambda x, y: torch.cat([x, y]), torch.randn(2, 3).half(), torch.randn(1, 3).bfloat16())
    check(lambda x, y: torch.cat([x, y]), torch.rand(2, 3) > 0.5, torch.randint(0, 9, (1, 3), dtype=torch.int32))


def test_flip_roll_repeat():
    x = torch.randn(3, 4, 5)
    for dims in [(0,), (2,), (0, 2), (-1, 1), (0, 1, 2)]:
        check(torch.flip, x, dims)
    check(lambda a: a.transpose(0, 1).flip(0), x)
    for shifts, dims in [(1, 0), (-2, 1), ((1, 3), (0, 2)), (7, None), (13, 2), ((2, -1), (-1, -1))]:
        check(lambda a: torch.roll(a, shifts, dims), x)
    check(lambda a: a.repeat(2, 1, 3), x)
    check(lambda a: a.repeat(2, 1, 1, 2), x)
    check(lambda a: a[:, :1].repeat(1, 3, 1), x)
    check(lambda a: a.flip(0), torch.tensor(3))
    for dtype in OTHER:
        check(lambda a: a.flip(1).roll(1, 0), rand((3, 4), dtype))


def test_constant_pad():
    x = torch.randn(2, 3, 4)
    for pad in [(1, 2), (0, 0, 2, 1), (1, 1, 1, 1, 1, 1), (-1, 2), (2, -3, 0, -1), (0, 0)]:
        check(lambda a: F.pad(a, pad), x)
        check(lambda a: F.pad(a, pad, value=3.5), x)
    check(lambda a: torch.constant_pad_nd(a, (1, 1), -1), x)
    check(lambda a: F.pad(a.transpose(0, 2), (1, 1)), x)
    for dtype in OTHER:
        check(lambda a: F.pad(a, (2, -1, 1, 0), value=1), rand((3, 4), dtype))


def test_triu_tril():
    for dtype, shapes in [(torch.float32, [(4, 4), (3, 6), (6, 2), (2, 3, 5)])] + [(d, [(4, 5)]) for d in OTHER]:
        for shape in shapes:
            x = rand(shape, dtype)
            for k in [0, 1, -1, 3, -4, 100, -100]:
                check(torch.triu, x, k)
                check(torch.tril, x, k)
            check(lambda a: a.triu_(-1), x)
            check(lambda a: a.tril_(2), x)
            check(lambda a, o: torch.triu(a, 1, out=o), x, torch.empty(0, dtype=dtype))
            check(lambda a, o: torch.tril(a, -1, out=o), x, torch.empty(0, dtype=dtype))
    check(lambda a: a.t().triu(), torch.randn(3, 5))


def test_gradients():
    x = torch.randn(6, 5)
    _grads(lambda a, b: torch.cat([a, b, a], 1), x, torch.randn(6, 2))
    _grads(lambda a, b: torch.stack([a, b]), x, torch.randn(6, 5))
    _grads(lambda a: a.flip(0).roll(2, 1), x)
    _grads(lambda a: F.pad(a, (1, -2, 2, 0)), x)
    _grads(lambda a: a.triu(1) + a.tril(-1), x)
