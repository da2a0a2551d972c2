"""Indexing, data movement and sorting on the tpu against PyTorch on the CPU:
gather / scatter, index_select / index_add family, advanced indexing,
embedding, cat, flip, roll, padding, triangles, sort, topk, nonzero, unique,
out-of-range errors and gradients."""
import random
import re

import pytest
import torch
import torch.nn.functional as F

import torch_pjrt
from conftest import TPU, assert_close, check

FLOATS = [torch.float32, torch.bfloat16, torch.float16]
INTS = [torch.int64, torch.int32]


def rand(shape, dtype=torch.float32):
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randint(-50, 50, shape, dtype=dtype)


def distinct(shape, dtype=torch.float32):
    """Values without ties (so sort / topk indices are unique)."""
    n = 1
    for s in shape:
        n *= s
    return torch.randperm(max(n, 1))[:n].reshape(shape).to(dtype)


def unique_index(shape, dim, size):
    """Index tensor of `shape` with distinct values (< size) along dim."""
    shape = list(shape)
    full = shape.copy()
    full[dim] = size
    perm = torch.rand(full).argsort(dim)
    return perm.narrow(dim, 0, shape[dim]).contiguous()


# ---------------------------------------------------------------- index_select

OTHER = [torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.bool]


def test_index_select():
    for shape, dim in [((5, 7), 0), ((5, 7), 1), ((3, 4, 6), -1), ((3, 4, 6), 1), ((9,), 0)]:
        x = rand(shape)
        idx = torch.randint(0, x.shape[dim], (random.randint(1, 12),), dtype=random.choice(INTS))
        check(torch.index_select, x, dim, idx)
    for dtype in OTHER:
        check(torch.index_select, rand((5, 7), dtype), 1, torch.randint(0, 7, (4,)))
    x = torch.randn(6, 4)
    check(lambda a, i: a.t().index_select(0, i), x, torch.tensor([3, 0, 3]))  # non-contiguous self
    check(lambda a, i: a.index_select(1, i), x, torch.tensor(2))            # 0-d index
    check(lambda a, i: a.index_select(0, i), x, torch.tensor([], dtype=torch.long))
    check(lambda a, i: a.index_select(0, i), torch.tensor(3.5), torch.tensor([0]))
    check(lambda a, b, o: torch.index_select(a, 1, b, out=o), x, torch.tensor([1, 3, 1]), torch.empty(0))


# ---------------------------------------------------------------- gather / scatter


def test_gather():
    for shape, dim in [((4, 6), 1), ((4, 6), 0), ((3, 4, 5), -1), ((3, 4, 5), 1), ((7,), 0)]:
        x = rand(shape)
        ishape = [random.randint(1, s) for s in shape]
        ishape[dim] = random.randint(1, 8)
        idx = torch.randint(0, shape[dim], ishape)
        check(torch.gather, x, dim, idx)
    for dtype in OTHER:
        check(torch.gather, rand((4, 6), dtype), 1, torch.randint(0, 6, (3, 8), dtype=random.choice(INTS)))
    x = torch.randn(5, 6)
    check(lambda a, i: a.t().gather(1, i), x, torch.randint(0, 5, (6, 3)))   # transposed self
    check(lambda a, i: a.gather(0, i[::2]), x, torch.randint(0, 5, (8, 6)))  # strided index
    check(lambda a, i: a.gather(0, i), x, torch.zeros(0, 6, dtype=torch.long))
    check(lambda a, i: a.gather(0, i), torch.tensor(2.0), torch.tensor(0))
    check(lambda a, i, o: torch.gather(a, 1, i, out=o), x, torch.randint(0, 6, (5, 2)), torch.empty(0))


def test_scatter_src_value():
    for dtype, shapes in [(torch.float32, [((5, 6), 0), ((5, 6), 1), ((3, 4, 5), -1), ((8,), 0)]),
                          (torch.int64, [((5, 6), 1)])]:
        for shape, dim in shapes:
            x = rand(shape, dtype)
            ishape = [random.randint(1, s) for s in shape]
            idx = unique_index(ishape, dim, shape[dim])
            src = rand([s + 1 for s in ishape], dtype)  # src larger than index: only idx's extent is read
            check(torch.scatter, x, dim, idx, src)
            check(lambda a, i, s: a.scatter_(dim, i, s), x, idx, src)
            check(lambda a, i: a.scatter(dim, i, 3), x, idx)
            check(lambda a, i: a.scatter_(dim, i, -2), x, idx)
        check(lambda a, i, s, o: torch.scatter(a, dim, i, s, out=o), x, idx, src, torch.empty(0, dtype=dtype))
        check(lambda a, i, o: torch.scatter(a, dim, i, 7, out=o), x, idx, torch.empty(0, dtype=dtype))
    for dtype in [torch.bfloat16, torch.int32, torch.bool]:
        check(lambda a, i, s: a.scatter(1, i, s), rand((4, 5), dtype), unique_index((4, 2), 1, 5), rand((4, 2), dtype))
    x = torch.randn(4, 5)
    check(lambda a, i, s: a.t().scatter(1, i, s), x, unique_index((5, 2), 1, 4), torch.randn(5, 2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int32])
def test_scatter_add_and_reduce(dtype):
    for shape, dim in [((5, 6), 0), ((3, 4, 5), 2)]:
        x = rand(shape, dtype)
        ishape = list(shape)
        ishape[dim] = 9  # many duplicates
        idx = torch.randint(0, shape[dim], ishape)
        src = rand(ishape, dtype)
        check(torch.scatter_add, x, dim, idx, src)
        check(lambda a, i, s: a.scatter_add_(dim, i, s), x, idx, src)
        check(lambda a, i, s: a.scatter(dim, i, s, reduce="add"), x, idx, src)
        check(lambda a, i: a.scatter_(dim, i, 2, reduce="multiply"), x, idx)
        small = (torch.rand(ishape) * 2 + 0.5).to(dtype) if dtype.is_floating_point else torch.randint(-2, 3, ishape,
                                                                                                       dtype=dtype)
        check(lambda a, i, s: a.scatter_(dim, i, s, reduce="multiply"), x, idx, small, atol=1e-2, rtol=1e-2)
    check(lambda a, i, s, o: torch.scatter_add(a, dim, i, s, out=o), x, idx, src, torch.empty(0, dtype=dtype))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce(reduce):
    for include_self in [True, False]:
        for dtype in [torch.float32, torch.int64]:
            x = rand((6, 5), dtype)
            idx = torch.randint(0, 6, (10, 5))
            src = rand((10, 5), dtype) if reduce != "prod" or not dtype.is_floating_point else torch.rand(10, 5) + 0.5
            tol = dict(atol=1e-4, rtol=1e-4)
            check(lambda a, i, s: a.scatter_reduce(0, i, s, reduce, include_self=include_self), x, idx, src, **tol)
        check(lambda a, i, s: a.scatter_reduce_(1, i, s, reduce, include_self=include_self), x,
              torch.randint(0, 5, (6, 3)), src[:6, :3], **tol)
    check(lambda a, i, s, o: torch.scatter_reduce(a, 0, i, s, reduce, out=o), x, idx, src,
          torch.empty(0, dtype=dtype), **tol)


# ---------------------------------------------------------------- embedding


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_embedding_forward(dtype):
    w = rand((20, 8), dtype)
    for ishape in [(5,), (3, 4), (2, 3, 2), ()]:
        idx = torch.randint(0, 20, ishape)
        check(F.embedding, idx, w)
    check(lambda i, ww: F.embedding(i, ww, padding_idx=3), torch.tensor([[3, 1], [2, 3]]), w)


@pytest.mark.parametrize("padding_idx,scale", [(None, False), (2, False), (None, True), (-1, True)])
def test_embedding_grad(padding_idx, scale):
    w = torch.randn(10, 6)
    idx = torch.randint(0, 10, (4, 7))
    idx[0, :3] = 9  # duplicates, some on the padding row
    idx[1, :2] = 2
    g = torch.randn(4, 7, 6)
    grads = []
    for dev in ["cpu", TPU]:
        ww = w.detach().to(dev).requires_grad_()
        out = F.embedding(idx.to(dev), ww, padding_idx=padding_idx, scale_grad_by_freq=scale)
        out.backward(g.to(dev))
        grads.append(ww.grad)
    assert_close(grads[1], grads[0])


def test_embedding_dense_backward_direct():
    for dtype in [torch.float32, torch.bfloat16]:
        g = rand((12, 5), dtype)
        idx = torch.randint(0, 7, (12,))
        for pad, scale in [(-1, False), (3, True), (0, False)]:
            check(lambda gg, i: torch.ops.aten.embedding_dense_backward(gg, i, 7, pad, scale), g, idx)
            check(lambda gg, i: torch.ops.aten.embedding_dense_backward(gg, i, 7, pad, scale), g, idx.int())


def test_embedding_module():
    emb = torch.nn.Embedding(50, 16, padding_idx=0)
    idx = torch.randint(0, 50, (3, 9))
    ref = emb(idx)
    emb_t = torch.nn.Embedding(50, 16, padding_idx=0).to(TPU)
    emb_t.load_state_dict(emb.state_dict())
    assert_close(emb_t(idx.to(TPU)), ref)


# ---------------------------------------------------------------- advanced indexing

INDEXERS = [
    lambda x, i, j, m: x[i],
    lambda x, i, j, m: x[:, j],
    lambda x, i, j, m: x[i, j[:1]],
    lambda x, i, j, m: x[i[:, None], j],          # broadcast to a 2-D block
    lambda x, i, j, m: x[i[:2], :, torch.tensor([0, 1])],  # non-adjacent: result dims go first
    lambda x, i, j, m: x[..., torch.tensor([1, -1, 0])],
    lambda x, i, j, m: x[None, i],
    lambda x, i, j, m: x[1:, j],
    lambda x, i, j, m: x[torch.tensor(1), j],     # 0-d index
    lambda x, i, j, m: x[-i - 1],                 # negative indices wrap
    lambda x, i, j, m: x[m],                      # bool mask over the first two dims
    lambda x, i, j, m: x[m[0]],
    lambda x, i, j, m: x[:, m[0]],
    lambda x, i, j, m: x[i.int()],
    lambda x, i, j, m: x.transpose(0, 1)[j],      # non-contiguous self
    lambda x, i, j, m: x[i[:0]],                  # empty index
]


def test_index():
    x = torch.randn(5, 5, 3)
    i = torch.randint(0, 5, (4,))
    j = torch.randint(0, 5, (3,))
    m = torch.rand(5, 5) > 0.5
    for k, f in enumerate(INDEXERS):
        expected = f(x, i, j, m)
        assert_close(f(x.to(TPU), i.to(TPU), j.to(TPU), m.to(TPU)), expected), k
        # Index tensors may stay on the host for a device tensor.
        assert_close(f(x.to(TPU), i, j, m), expected)
    for dtype in [torch.bfloat16, torch.int64, torch.bool]:
        x = rand((5, 5, 3), dtype)
        for f in INDEXERS[4:5] + INDEXERS[10:11]:
            assert_close(f(x.to(TPU), i.to(TPU), j.to(TPU), m.to(TPU)), f(x, i, j, m))


def test_index_out():
    x = torch.randn(6, 4)
    i = torch.randint(0, 6, (3,))
    out = torch.empty(0)
    check(lambda a, b, o: torch.ops.aten.index.Tensor_out(a, [b], out=o), x, i, out)


def test_index_put():
    x = torch.randn(6, 5, 4)
    i = torch.randperm(6)[:3]
    j = torch.randperm(5)[:3]
    # unique positions for overwrite; duplicates for accumulate
    check(lambda a, ii, v: a.index_put_((ii,), v), x, i, torch.randn(3, 5, 4))
    check(lambda a, ii, jj, v: a.index_put_((ii, jj), v), x, i, j, torch.randn(3, 4))
    check(lambda a, ii, v: torch.ops.aten.index_put(a, [None, ii], v), x, j, torch.randn(4))  # broadcast values
    check(lambda a, ii, jj, v: torch.ops.aten.index_put_(a, [ii, None, jj[:1] % 4], v), x, i, j, torch.randn(3, 5))
    dup = torch.randint(0, 6, (12,))
    check(lambda a, ii, v: a.index_put_((ii,), v, accumulate=True), x, dup, torch.randn(12, 5, 4))
    check(lambda a, ii, jj, v: a.index_put_((ii, jj), v, accumulate=True), x, dup, torch.randint(-5, 5, (12,)),
          torch.randn(12, 4))
    check(lambda a, ii, v: a.index_put_((-ii - 1,), v, accumulate=True), x, dup, torch.randn(4))
    for dtype in OTHER:
        x = rand((6, 5), dtype)
        check(lambda a, ii, v: a.index_put_((ii,), v), x, i, rand((3, 5), dtype))
        check(lambda a, ii, v: a.index_put_((ii,), v, accumulate=True), x, dup, rand((12, 5), dtype),
              atol=0.1, rtol=0.05)


def test_setitem():
    x = torch.randn(6, 7)
    i = torch.randperm(6)[:4]
    m = torch.rand(6, 7) > 0.3

    def f(a, ii, mm):
        a[ii] = 2.5
        a[:, ii[:2]] = torch.arange(2.0)
        a[mm] = a[mm] * 3          # bool mask with tensor values
        a[ii, 1] += 1.0
        a[a > 1] = 0.0             # scalar fill through a mask
        return a

    check(f, x, i, m)
    assert_close(f(x.to(TPU), i, m), f(x.clone(), i, m))  # host indices


def test_index_put_duplicate_accumulate_sums():
    x = torch.zeros(3, dtype=torch.float32)
    idx = torch.tensor([0, 0, 2, 0, 2])
    v = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    t = x.to(TPU).index_put_((idx.to(TPU),), v.to(TPU), accumulate=True)
    assert t.cpu().tolist() == [7.0, 0.0, 8.0]


# ---------------------------------------------------------------- index_add / copy / fill, take, masked_scatter


def test_index_add_copy_fill():
    for dtype, shapes in [(torch.float32, [((6, 4), 0), ((6, 4), 1), ((3, 5, 2), -2)]),
                          (torch.bfloat16, [((6, 4), 1)]), (torch.int64, [((6, 4), 0)])]:
        for shape, dim in shapes:
            x = rand(shape, dtype)
            n = shape[dim]
            sshape = list(shape)
            sshape[dim] = 7
            dup = torch.randint(0, n, (7,))
            src = rand(sshape, dtype)
            check(lambda a, i, s: a.index_add(dim, i, s), x, dup, src, atol=0.1, rtol=0.05)
            check(lambda a, i, s: a.index_add_(dim, i, s, alpha=2), x, dup.int(), src, atol=0.1, rtol=0.05)
            uniq = torch.randperm(n)[: min(n, 3)]
            sshape[dim] = len(uniq)
            src = rand(sshape, dtype)
            check(lambda a, i, s: a.index_copy(dim, i, s), x, uniq, src)
            check(lambda a, i, s: a.index_copy_(dim, i, s), x, uniq, src)
            check(lambda a, i: a.index_fill(dim, i, 3), x, dup)
            check(lambda a, i: a.index_fill_(dim, -i - 1, torch.tensor(5, dtype=dtype)), x, dup)
    x = torch.randn(6, 4)
    check(lambda a, i, s, o: torch.index_add(a, 0, i, s, out=o), x, torch.tensor([0, 5, 0]), torch.randn(3, 4),
          torch.empty(0))
    check(lambda a, i, s, o: torch.index_copy(a, 1, i, s, out=o), x, torch.tensor([3, 1]), torch.randn(6, 2),
          torch.empty(0))
    check(lambda a, i, s: a.index_add(0, i, s), torch.tensor(2.0), torch.tensor([0]), torch.tensor(1.5))


def test_take_and_masked_scatter():
    x = torch.randn(4, 5)
    check(torch.take, x, torch.randint(-20, 20, (3, 6)))
    check(lambda a, i: a.t().take(i), x, torch.randint(0, 20, (7,)))
    check(lambda a, i, o: torch.take(a, i, out=o), x, torch.randint(0, 20, (2, 2)), torch.empty(0))
    for mshape in [(4, 5), (5,), (4, 1)]:
        m = torch.rand(mshape) > 0.5
        src = torch.randn(30)
        check(lambda a, mm, s: a.masked_scatter(mm, s), x, m, src)
        check(lambda a, mm, s: a.masked_scatter_(mm, s.reshape(5, 6)), x, m, src)
    for mshape in [(4, 5), (5,), (3, 1, 1)]:
        m = torch.rand(mshape) > 0.5
        check(torch.masked_select, x, m)
        check(lambda a, mm, o: torch.masked_select(a, mm, out=o), x, m, torch.empty(0))
    _grads(lambda a, s: a.masked_scatter(torch.tensor([True, False, True, True, False], device=a.device), s), x,
           torch.randn(20))
    with pytest.raises(RuntimeError, match="source"):
        x.to(TPU).masked_scatter(torch.ones(4, 5, dtype=torch.bool, device=TPU), torch.randn(3, device=TPU))


# ---------------------------------------------------------------- out-of-range indices


def _raises_like_cpu(case, args_cpu, args_tpu):
    """case raises on the tpu (at the call, or at the next sync for device
    indices) the CPU's exception class with the CPU's message. PyTorch's CPU
    index kernel counts "dimension N" among the indexed dimensions only; ours
    names the dimension of the tensor, so only that number may differ."""
    with pytest.raises(Exception) as cpu_err:
        case(*args_cpu)
    expected = re.escape(str(cpu_err.value).splitlines()[0])
    expected = re.sub(r"dimension\\ \d+", r"dimension\\ \\d+", expected)
    with pytest.raises(cpu_err.type, match=expected):
        case(*args_tpu)
        torch_pjrt.synchronize()


@pytest.mark.parametrize("device_index", [True, False])
def test_out_of_range_indices_raise(device_index):
    x = torch.randn(4, 5)
    w = torch.randn(10, 3)
    cases = [
        lambda x, w, ix: F.embedding(ix([1, 10]), w),
        lambda x, w, ix: F.embedding(ix([-1]), w),
        lambda x, w, ix: x[ix([4])],
        lambda x, w, ix: x[:, ix([-6])],
        lambda x, w, ix: x.index_put_((ix([0, 7]),), x.new_tensor(1.0)),
        lambda x, w, ix: x.index_put_((ix([9]),), x.new_ones(5), accumulate=True),
    ]
    if device_index:
        cases += [
            lambda x, w, ix: x.index_select(0, ix([-1])),
            lambda x, w, ix: x.gather(1, ix([[5]])),
            lambda x, w, ix: x.gather(0, ix([[-1]])),
            lambda x, w, ix: x.scatter(1, ix([[7]]), 1.0),
            lambda x, w, ix: x.scatter_add(0, ix([[4]]), x),
            lambda x, w, ix: x.scatter_reduce(0, ix([[4]]), x, "amax"),
            lambda x, w, ix: x.index_add(1, ix([5]), x.new_ones(4, 1)),
            lambda x, w, ix: x.index_copy(0, ix([4]), x.new_ones(1, 5)),
            lambda x, w, ix: x.index_fill(1, ix([-6]), 1.0),
            lambda x, w, ix: x.take(ix([20])),
        ]
    tx, tw = x.to(TPU), w.to(TPU)
    tix = (lambda v: torch.tensor(v, device=TPU)) if device_index else torch.tensor
    for case in cases:
        _raises_like_cpu(case, (x, w, torch.tensor), (tx, tw, tix))
    if device_index:
        # Where the CPU's own answer is an accident of its kernel (a message
        # from a vectorised path, or no check at all), the tpu says what
        # index_select along dimension 0 says on the CPU.
        odd = [
            lambda x, w, ix: x.index_select(1, ix([5])),
            lambda x, w, ix: torch.ops.aten.embedding_dense_backward(x.new_ones(2, 3), ix([0, 10]), 10, -1, False),
        ]
        for case in odd:
            with pytest.raises(IndexError, match="^index out of range in self$"):
                case(tx, tw, tix)
                torch_pjrt.synchronize()
    # The device is still usable and the tensors unchanged by failed writes.
    assert_close(tx[torch.tensor([3, -1], device=TPU)], x[[3, -1]])


def test_out_of_range_messages():
    # Device indices are checked on the device: the error comes at the next
    # host read or synchronize (at once in debug mode), with CPU's message.
    x = torch.randn(4, 5, device=TPU)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(torch.tensor([10], device=TPU), x).cpu()
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 4"):
        x[torch.tensor([1, 9], device=TPU)].cpu()
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 1 with size 5"):
        x.gather(1, torch.tensor([[0, 5]], device=TPU))
        torch.tpu.synchronize()
    with pytest.raises(IndexError, match="out of range"):
        x.take(torch.tensor([-21], device=TPU)).sum().item()
    # a failed check is not remembered as a good index
    bad = torch.tensor([10], device=TPU)
    for _ in range(2):
        with pytest.raises(IndexError, match="index out of range in self"):
            F.embedding(bad, x).cpu()
    # host indices are checked at the call, as on the CPU
    with pytest.raises(IndexError, match='index 9 is out of bounds for dimension 0 with size 4'):
        x[torch.tensor([1, 9])]


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


# ---------------------------------------------------------------- sort family


def test_sort():
    for shape, dim in [((10,), 0), ((4, 9), 1), ((4, 9), 0), ((3, 4, 5), -2)]:
        x = distinct(shape)
        for desc in [False, True]:
            check(lambda a: torch.sort(a, dim, desc), x)
    check(lambda a: torch.argsort(a, 1, descending=True), x)
    for dtype in [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.int32]:
        x = distinct((4, 9), dtype) if dtype != torch.float16 else distinct((4, 9)).half()
        check(lambda a: torch.sort(a, dim=1, descending=True, stable=True), x)
        # Ties: a stable sort keeps the original order, also descending.
        ties = torch.randint(0, 3, (5, 20)).to(dtype)
        for desc in [False, True]:
            check(lambda a: torch.sort(a, dim=1, descending=desc, stable=True), ties)
    x = distinct((4, 6))
    vals, idx = torch.empty(0), torch.empty(0, dtype=torch.long)
    check(lambda a, v, i: torch.sort(a, 1, out=(v, i)), x, vals, idx)
    check(lambda a: a.t().sort(0), x)
    check(lambda a: torch.msort(a), x)


def test_sort_nan_bool_and_edges():
    x = torch.tensor([[3.0, float("nan"), -1.0, float("nan"), 0.0, -0.0, 2.0]])
    for desc in [False, True]:
        check(lambda a: torch.sort(a, descending=desc, stable=True), x)
    check(lambda a: torch.sort(a, stable=True), torch.rand(20) > 0.5)
    check(lambda a: torch.sort(a), torch.tensor(2.0))
    check(lambda a: torch.sort(a), torch.empty(0, 3))


def test_topk():
    for dtype, shapes in [(torch.float32, [((12,), 0), ((5, 11), 1), ((5, 11), 0), ((3, 4, 6), -1)]),
                          (torch.bfloat16, [((5, 11), 1)]), (torch.int64, [((5, 11), 1)])]:
        for shape, dim in shapes:
            x = distinct(shape, dtype)
            n = shape[dim]
            for k, largest in [(1, True), (n // 2, False), (n, True)]:
                check(lambda a: torch.topk(a, k, dim, largest=largest), x)
    x = distinct((4, 9))
    check(lambda a, v, i: torch.topk(a, 3, out=(v, i)), x, torch.empty(0), torch.empty(0, dtype=torch.long))
    check(lambda a: torch.topk(a, 0), x)
    check(lambda a: torch.topk(a, 2, 0), x.t())
    # unsorted: compare the selected set
    v = torch.topk(x.to(TPU), 4, sorted=False).values
    assert_close(v.sort(-1).values, torch.topk(x, 4).values.sort(-1).values)


def test_topk_ties_and_nan():
    x = torch.randint(0, 4, (6, 10)).float()
    vals = torch.topk(x.to(TPU), 5, dim=1)
    ref = torch.topk(x, 5, dim=1)
    assert_close(vals.values, ref.values)
    # indices of ties may differ: they must point at the same values
    assert_close(torch.gather(x.to(TPU), 1, vals.indices), ref.values)
    check(lambda a: torch.topk(a, 2), torch.tensor([1.0, float("nan"), 3.0, 2.0]))
    check(lambda a: torch.topk(a, 2, largest=False), torch.tensor([1.0, float("nan"), 3.0, 2.0]))


def test_kthvalue_median():
    x = distinct((5, 7))
    for k in [1, 4, 7]:
        check(lambda a: torch.kthvalue(a, k, 1), x)
    check(lambda a: torch.kthvalue(a, 3, 0, keepdim=True), x)
    check(torch.median, x)
    check(lambda a: torch.median(a, 1), x)
    check(lambda a: torch.median(a, 0, keepdim=True), x)
    check(lambda a: torch.median(a[:, :6], 1), x)  # even count: the lower median
    check(lambda a: torch.nanmedian(a, 1), x)
    check(torch.nanmedian, x)
    xi = distinct((5, 7), torch.int64)
    check(lambda a: torch.kthvalue(a, 2, 1), xi)
    check(lambda a: torch.median(a, 1), xi)
    check(lambda a: torch.kthvalue(a, 1), torch.tensor(3.0))
    check(lambda a, v, i: torch.kthvalue(a, 2, out=(v, i)), x, torch.empty(0, dtype=x.dtype),
          torch.empty(0, dtype=torch.long))


def test_median_nan():
    nan = float("nan")
    x = torch.tensor([[3.0, nan, 1.0, nan, 2.0], [1.0, 5.0, 3.0, 4.0, 2.0], [nan, nan, nan, nan, nan]])
    check(lambda a: torch.median(a, 1), x)
    check(lambda a: torch.nanmedian(a, 1), x[:2])
    # all-NaN row: the value is NaN; CPU's index there is an nth_element artifact
    assert_close(torch.nanmedian(x.to(TPU), 1).values, torch.nanmedian(x, 1).values)
    check(torch.median, x)
    check(torch.nanmedian, x[:2])
    check(torch.median, torch.empty(0))


# ---------------------------------------------------------------- nonzero, unique


def test_nonzero():
    for dtype, shapes in [(torch.float32, [(10,), (4, 5), (2, 3, 4), (0, 3)]), (torch.int64, [(4, 5)]),
                          (torch.bool, [(4, 5)])]:
        for shape in shapes:
            x = rand(shape, dtype)
            if dtype != torch.bool:
                x = x * (torch.rand(shape) > 0.5).to(dtype)
            check(torch.nonzero, x)
            check(lambda a: torch.nonzero(a, as_tuple=True), x)
            check(lambda a: torch.where(a), x)
    x = torch.randn(4, 5) * (torch.rand(4, 5) > 0.5)
    check(lambda a, o: torch.nonzero(a, out=o), x, torch.empty(0, dtype=torch.long))
    for size in [0, 3, 30]:
        check(lambda a: torch.nonzero_static(a, size=size), x)
        check(lambda a: torch.nonzero_static(a, size=size, fill_value=-7), x)
    check(torch.nonzero, torch.tensor(2.0))
    check(torch.nonzero, torch.zeros(3, 4))


def test_unique():
    for dtype in [torch.float32, torch.int32]:
        x = torch.randint(-4, 5, (6, 7)).to(dtype)
        check(lambda a: torch.unique(a, return_inverse=True, return_counts=True), x)
    check(torch.unique, x)
    check(lambda a: torch.unique(a, return_counts=True), x[0])
    check(lambda a: torch.unique(a, return_inverse=True), torch.empty(0, dtype=dtype))
    runs = torch.randint(0, 3, (4, 9)).repeat_interleave(2, dim=1)
    check(lambda a: torch.unique_consecutive(a, return_inverse=True, return_counts=True), runs)
    check(torch.unique_consecutive, runs[0].float())
    rows = torch.randint(0, 2, (7, 3)).repeat_interleave(2, dim=0)
    check(lambda a: torch.unique_consecutive(a, return_inverse=True, return_counts=True, dim=0), rows)
    check(lambda a: torch.unique_consecutive(a, return_counts=True, dim=1), rows.t())


def test_repeat_interleave_and_tri_indices():
    rep = torch.randint(0, 4, (6,))
    check(torch.repeat_interleave, rep)
    check(lambda r: torch.repeat_interleave(r, output_size=int(rep.sum())), rep)
    x = torch.randn(6, 3)
    check(lambda a, r: a.repeat_interleave(r, dim=0), x, rep)
    check(lambda a: a.repeat_interleave(3, dim=1), x)
    with pytest.raises(RuntimeError, match="negative"):
        torch.repeat_interleave(torch.tensor([1, -1], device=TPU))
    for row, col, off in [(4, 4, 0), (3, 5, 1), (5, 3, -2)]:
        assert_close(torch.tril_indices(row, col, off, device=TPU), torch.tril_indices(row, col, off))
        assert_close(torch.triu_indices(row, col, off, device=TPU), torch.triu_indices(row, col, off))


# ---------------------------------------------------------------- gradients


def _grads(fn, *inputs, seed_grad=True):
    """fn's input gradients on the CPU and the tpu for the same upstream grad."""
    out_cpu = fn(*[i.clone().requires_grad_() if i.is_floating_point() else i for i in inputs])
    g = torch.randn_like(out_cpu)
    res = []
    for dev in ["cpu", TPU]:
        ins = [i.detach().to(dev).requires_grad_() if i.is_floating_point() else i.to(dev) for i in inputs]
        fn(*ins).backward(g.to(dev))
        res.append([i.grad for i in ins if i.is_floating_point()])
    assert_close(res[1], res[0])


def test_gradients():
    x = torch.randn(6, 5)
    idx = torch.randint(0, 6, (9,))
    _grads(lambda a: a.index_select(0, idx.to(a.device)), x)
    _grads(lambda a: a.gather(1, torch.randint(0, 5, (6, 8), generator=torch.Generator().manual_seed(1)).to(a.device)),
           x)
    _grads(lambda a: a[idx.to(a.device)], x)
    _grads(lambda a: a[idx.to(a.device)[:4], idx.to(a.device)[:4] % 5], x)
    _grads(lambda a: a[:, torch.tensor([0, 0, 3], device=a.device)], x)
    _grads(lambda a: a[a.detach() > 0], x)
    _grads(lambda a, b: torch.cat([a, b, a], 1), x, torch.randn(6, 2))
    _grads(lambda a, b: torch.stack([a, b]), x, torch.randn(6, 5))
    d = distinct((6, 5))
    _grads(lambda a: torch.topk(a, 3, dim=1).values, d)
    _grads(lambda a: torch.topk(a, 2, dim=0, largest=False).values, d)
    _grads(lambda a: torch.sort(a, 1).values, distinct((6, 5)))
    _grads(lambda a: a.flip(0).roll(2, 1), x)
    _grads(lambda a: F.pad(a, (1, -2, 2, 0)), x)
    _grads(lambda a: a.triu(1) + a.tril(-1), x)
    u = unique_index((6, 3), 1, 5)
    _grads(lambda a: a.scatter(1, u.to(a.device), 0.0), x)
    _grads(lambda a, s: a.index_add(0, idx.to(a.device), s), x, torch.randn(9, 5))
    _grads(lambda a: torch.kthvalue(a, 2, 1).values, distinct((6, 5)))
    _grads(lambda a: torch.median(a, 1).values, distinct((6, 5)))


def test_compile_cache_shared_across_values():
    """Index values and scalars are operands: new values reuse the program."""
    x = torch.randn(8, 4, device=TPU)
    torch_pjrt.reset_cache_stats()
    for _ in range(3):
        i = torch.randint(0, 8, (5,), device=TPU)
        x.index_select(0, i).cpu()
        x.scatter(0, i[:4].reshape(4, 1).expand(4, 4).contiguous(), random.random()).cpu()
    assert torch_pjrt.cache_stats()["misses"] <= 8
