"""The storage model: views, writes through views, in-place ops, out=,
resize_, set_, copies between devices and dtypes, with PyTorch's aliasing;
Module.to keeping tied parameters tied."""
import random

import pytest
import torch

from conftest import TPU, assert_close, check


def rand_shape(rank, lo=1, hi=6):
    return [random.randint(lo, hi) for _ in range(rank)]


def test_roundtrip_all_dtypes():
    for dt in [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.uint8,
               torch.int16, torch.int32, torch.int64, torch.bool]:
        x = (torch.randn(3, 5) * 10).to(dt)
        assert torch.equal(x.to(TPU).cpu(), x)


def test_casts_between_dtypes():
    dts = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool, torch.uint8]
    x = torch.randn(4, 7) * 50
    for a in dts:
        for b in dts:
            src = x.to(a)
            assert_close(src.to(TPU).to(b), src.to(b))


@pytest.mark.parametrize("trial", range(5))
def test_view_reads_random(trial):
    shape = rand_shape(3, 2, 6)
    x = torch.randn(shape)
    t = x.to(TPU)
    views = [
        lambda v: v.transpose(0, 2),
        lambda v: v.permute(1, 2, 0),
        lambda v: v[:, 1:, ::2],
        lambda v: v.narrow(1, 1, shape[1] - 1),
        lambda v: v.select(2, shape[2] - 1),
        lambda v: v[..., None].expand(*shape, 3),
        lambda v: v.reshape(-1)[1:].unfold(0, 2, 1),
        lambda v: v.flatten()[::3],
        lambda v: torch.diagonal(v, 0, 0, 1),
        lambda v: v.unsqueeze(1).squeeze(1).t() if v.dim() == 2 else v.mT,
        lambda v: v.as_strided((2, 2), (1, 2), 1),
        lambda v: v.view(torch.int32),
        lambda v: v.view(torch.int16),
        lambda v: v.view(-1, shape[-1]).t()[1:],
    ]
    for f in views:
        assert_close(f(t), f(x))


@pytest.mark.parametrize("trial", range(5))
def test_write_through_view_read_through_another(trial):
    shape = rand_shape(3, 2, 5)
    x = torch.randn(shape)
    t = x.to(TPU)
    writes = [
        lambda v: v.transpose(0, 1)[0].fill_(3.5),
        lambda v: v[:, ::2].mul_(2),
        lambda v: v.select(2, 0).add_(1),
        lambda v: torch.diagonal(v, 0, 1, 2).zero_(),
        lambda v: v.view(-1)[1::3].copy_(torch.arange(len(v.view(-1)[1::3]), dtype=v.dtype)),
    ]
    for w in writes:
        w(x)
        w(t)
        assert_close(t, x)
        assert_close(t.permute(2, 0, 1), x.permute(2, 0, 1))


def test_aliasing_between_views():
    x = torch.zeros(4, 6)
    t = x.to(TPU)
    a, b = x[1:3], x.t()
    ta, tb = t[1:3], t.t()
    a[:, 2] = 5.0
    ta[:, 2] = 5.0
    assert_close(tb, b)
    b[0].add_(1)
    tb[0].add_(1)
    assert_close(ta, a)
    assert_close(t, x)


def test_inplace_and_out():
    x, y = torch.randn(3, 4), torch.randn(4)
    check(lambda a, b: a.add_(b, alpha=2), x, y)
    check(lambda a, b: a.mul_(b), x, y)
    out = torch.empty(0)
    tout = torch.empty(0, device=TPU)
    torch.add(x, y, out=out)
    torch.add(x.to(TPU), y.to(TPU), out=tout)
    assert_close(tout, out)
    # out= into a strided view writes only the view
    base, tbase = torch.zeros(4, 8), torch.zeros(4, 8, device=TPU)
    torch.mul(x.t(), 2, out=base.t()[:4, :3])
    torch.mul(x.t().to(TPU), 2, out=tbase.t()[:4, :3])
    assert_close(tbase, base)


def test_resize_and_set():
    t = torch.arange(6.0, device=TPU)
    t.resize_(2, 3)
    assert t.shape == (2, 3)
    assert_close(t, torch.arange(6.0).reshape(2, 3))
    t.resize_(4, 4)
    assert_close(t.flatten()[:6], torch.arange(6.0))
    u = torch.empty(0, device=TPU)
    u.set_(t)
    assert u.data_ptr() == t.data_ptr()
    u.fill_(2.0)
    assert_close(t, torch.full((4, 4), 2.0))
    s = torch.empty(0, device=TPU)
    s.set_(t.untyped_storage(), 4, (2, 2), (1, 2))
    assert_close(s, torch.full((2, 2), 2.0))


def test_copy_between_devices_and_dtypes():
    x = torch.randn(5, 3)
    t = torch.empty(5, 3, dtype=torch.bfloat16, device=TPU)
    t.copy_(x)
    assert_close(t, x.to(torch.bfloat16))
    c = torch.empty(3, 5)
    c.copy_(t.t())  # tpu -> cpu into a strided destination: exact
    assert torch.equal(c, x.t().to(torch.bfloat16).float())
    # broadcasting copy
    t2 = torch.empty(4, 3, device=TPU)
    t2.copy_(x[0])
    assert_close(t2, x[0].expand(4, 3))


def test_storage_shares_between_dtype_views():
    x = torch.randn(8)
    t = x.to(TPU)
    ti = t.view(torch.int32)
    ti[0] = 0
    x.view(torch.int32)[0] = 0
    assert_close(t, x)
    assert t.untyped_storage().nbytes() == 32


def test_print_and_item():
    t = torch.tensor([1.5, -2.0], device=TPU)
    assert "tpu" in repr(t)
    assert t[0].item() == 1.5
    assert torch.tensor(3, device=TPU).item() == 3


def test_mixed_device_error_and_recovery():
    a = torch.randn(3, device=TPU)
    with pytest.raises(RuntimeError, match="same device"):
        a + torch.randn(3)
    assert_close(a + 1, a.cpu() + 1)


def test_unsupported_dtype_error():
    with pytest.raises(TypeError, match="not supported on the tpu"):
        torch.empty(2, dtype=torch.float8_e4m3fn, device=TPU)
    assert_close(torch.ones(2, device=TPU), torch.ones(2))


def test_module_to_keeps_tied_parameters():
    """PrivateUse1 is not one of c10's dense backends: without our
    _has_compatible_shallow_copy_type, Module.to('tpu') would give each
    module its own copy of a shared parameter."""
    emb = torch.nn.Embedding(10, 4)
    head = torch.nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    m = torch.nn.ModuleDict({"emb": emb, "head": head})
    param = emb.weight
    m.to(TPU)
    assert m["head"].weight is m["emb"].weight is param  # moved in place, like CUDA
    assert param.device.type == "tpu"
    ids = torch.randint(0, 10, (3,))
    m["head"](m["emb"](ids.to(TPU))).sum().backward()
    ref = torch.nn.Embedding(10, 4)
    with torch.no_grad():
        ref.weight.copy_(param.cpu())
    torch.nn.functional.linear(ref(ids), ref.weight).sum().backward()
    assert_close(param.grad, ref.weight.grad)  # both uses accumulate into one grad
    m.to("cpu")
    assert m["head"].weight is m["emb"].weight and param.device.type == "cpu"
    assert param.grad.device.type == "cpu"
    assert torch._has_compatible_shallow_copy_type(torch.ones(2), torch.ones(2, device=TPU))
    assert torch._has_compatible_shallow_copy_type(torch.ones(2, device=TPU), torch.ones(2))
    assert not torch._has_compatible_shallow_copy_type(torch.ones(2, device=TPU),
                                                       torch.ones(2).to_sparse())
