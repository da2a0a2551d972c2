"""Indexing on the tpu against PyTorch on the CPU: gather / scatter,
index_select / index_add / index_reduce family, advanced indexing, take,
masked ops, embedding, nonzero, repeat_interleave, out-of-range errors and
gradients."""
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


def rand_in(shape, dtype, lo, hi):
    """Values in [lo, hi) (integers: [lo, hi])."""
    if dtype.is_floating_point:
        return torch.rand(shape, dtype=dtype) * (hi - lo) + lo
    return torch.randint(int(lo), int(hi) + 1, shape, dtype=dtype)


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


def _accumulate_many(n, size, dtype, ndim=1):
    """index_put_(accumulate=True) of n values at random (mostly repeated,
    negative as well) positions of a `size`-element tensor, against the CPU.
    Floats: each position sums about n/size values in another order than the
    CPU, so both results are held to the summation bound around the exact
    (float64) sum: count * eps * (sum of the magnitudes added there)."""
    shape = (size,) if ndim == 1 else (size // 10, 10)
    x = rand(shape, dtype)
    idx = tuple(torch.randint(-s, s, (n,)) for s in shape)
    v = rand((n,), dtype)
    got = x.to(TPU).index_put_(tuple(i.to(TPU) for i in idx), v.to(TPU), accumulate=True)
    want = x.clone().index_put_(idx, v, accumulate=True)
    if not dtype.is_floating_point:
        assert_close(got, want)
        return
    exact = x.double().index_put_(idx, v.double(), accumulate=True)
    mass = x.double().abs().index_put_(idx, v.double().abs(), accumulate=True)
    count = torch.ones(shape, dtype=torch.float64).index_put_(idx, torch.ones(n, dtype=torch.float64),
                                                              accumulate=True)
    bound = count * torch.finfo(dtype).eps * mass
    assert ((want.double() - exact).abs() <= bound).all()  # the bound holds for the CPU
    assert got.device.type == "tpu"
    err = (got.cpu().double() - exact).abs()
    assert (err <= bound).all(), f"largest error {err.max().item():.3g} over the summation bound"


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int32])
def test_index_put_accumulate_duplicates(dtype):
    for n, size in [(1, 5), (50, 3), (1000, 7), (5000, 1000)]:
        _accumulate_many(n, size, dtype)
    _accumulate_many(3000, 60, dtype, ndim=2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_index_put_accumulate_many_indices_is_fast(dtype):
    # A million indices into a thousand elements: scatter-add handles
    # repeated positions itself, so the time grows with the index count.
    _accumulate_many(1_000_000, 1000, dtype)


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


def test_masked_select_zero_dim():
    for m in (True, False):
        check(torch.masked_select, rand([], torch.float32), torch.tensor(m))
    check(torch.masked_select, rand([3], torch.float32), torch.tensor(True))


# ---------------------------------------------------------------- index_reduce


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32])
def test_index_reduce(reduce, dtype):
    shape = [random.randint(2, 5) for _ in range(3)]
    dim = random.randint(0, 2)
    n = random.randint(1, 7)
    src_shape = list(shape)
    src_shape[dim] = n
    x = rand_in(shape, dtype, 1, 4)
    src = rand_in(src_shape, dtype, 1, 4)
    idx = torch.randint(0, shape[dim], (n,))
    for include_self in (True, False):
        check(lambda t, i, s: torch.index_reduce(t, dim, i, s, reduce, include_self=include_self), x, idx, src,
              atol=1e-2 if dtype == torch.bfloat16 else None)
        check(lambda t, i, s: t.index_reduce_(dim, i, s, reduce, include_self=include_self), x.clone(), idx, src,
              atol=1e-2 if dtype == torch.bfloat16 else None)
    if dtype == torch.float32 and reduce != "mean":
        _grads(lambda t, s: torch.index_reduce(t, dim, idx.to(t.device), s, reduce), x, src,
               atol=1e-4, rtol=1e-4)


def test_index_reduce_rejects_bad_index():
    # Device indices are checked without waiting: the error surfaces at the next host read.
    x = torch.ones(3, device=TPU)
    with pytest.raises(IndexError, match="index out of range"):
        torch.index_reduce(x, 0, torch.tensor([5], device=TPU), torch.ones(1, device=TPU), "prod").cpu()
    with pytest.raises(IndexError, match='index out of range in self'):
        torch.index_reduce(x, 0, torch.tensor([-1], device=TPU), torch.ones(1, device=TPU), "amax").cpu()
    with pytest.raises(RuntimeError, match="same device"):
        torch.index_reduce(x, 0, torch.tensor([1]), torch.ones(1), "amin")


def test_index_copy_one_index():
    """One index (a static KV cache's decoding step) along any dim, for any
    dtype, with a 1-element or 0-d index, eagerly and compiled; an index out
    of range raises and changes nothing in the tensor."""
    for dtype in [torch.float32, torch.bfloat16, torch.int64, torch.bool]:
        for shape, dim in [((3, 4, 6, 5), 2), ((6, 4), 0), ((4, 6), -1), ((7,), 0)]:
            x = rand(shape, dtype)
            sshape = list(shape)
            sshape[dim] = 1
            src = rand(sshape, dtype)
            at = random.randrange(shape[dim])
            check(lambda a, i, s: a.index_copy(dim, i, s), x, torch.tensor([at]), src)
            check(lambda a, i, s: a.index_copy_(dim, i, s), x, torch.tensor(at), src)
    cache, new = torch.randn(2, 3, 9, 4), torch.randn(2, 3, 1, 4)

    def step(c, pos, k):
        c.index_copy_(2, pos, k)
        return c * 1.0
    tc = cache.to(TPU)
    f = torch.compile(step, backend="tpu")
    for at in (0, 4, 8):
        out = f(tc, torch.tensor([at], device=TPU), (new + at).to(TPU))
        step(cache, torch.tensor([at]), new + at)
        assert_close(tc, cache, atol=0, rtol=0)
        assert_close(out, cache, atol=0, rtol=0)
    # Out of range: the error, and no element of any row written.
    x = torch.randn(4, 5)
    for bad in (5, -1):
        t = x.to(TPU)
        with pytest.raises(IndexError, match="out of bounds"):
            t.index_copy_(1, torch.tensor([bad], device=TPU), torch.ones(4, 1, device=TPU))
            torch_pjrt.synchronize()
        assert_close(t, x, atol=0, rtol=0)


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


# ---------------------------------------------------------------- nonzero, repeat_interleave


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


def _grads(fn, *inputs, atol=None, rtol=None):
    """fn's input gradients on the CPU and the tpu for the same upstream grad."""
    out_cpu = fn(*[i.clone().requires_grad_() if i.is_floating_point() else i for i in inputs])
    g = torch.randn_like(out_cpu)
    res = []
    for dev in ["cpu", TPU]:
        ins = [i.detach().to(dev).requires_grad_() if i.is_floating_point() else i.to(dev) for i in inputs]
        fn(*ins).backward(g.to(dev))
        res.append([i.grad for i in ins if i.is_floating_point()])
    assert_close(res[1], res[0], atol, rtol)


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
    u = unique_index((6, 3), 1, 5)
    _grads(lambda a: a.scatter(1, u.to(a.device), 0.0), x)
    _grads(lambda a, s: a.index_add(0, idx.to(a.device), s), x, torch.randn(9, 5))


def test_compile_cache_shared_across_values():
    """Index values and scalars are operands: new values reuse the program."""
    x = torch.randn(8, 4, device=TPU)
    torch_pjrt.reset_cache_stats()
    for _ in range(3):
        i = torch.randint(0, 8, (5,), device=TPU)
        x.index_select(0, i).cpu()
        x.scatter(0, i[:4].reshape(4, 1).expand(4, 4).contiguous(), random.random()).cpu()
    assert torch_pjrt.cache_stats()["misses"] <= 8
