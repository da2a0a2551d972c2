"""Sorting, selection, searching and counting on the tpu against PyTorch on
the CPU: sort, topk, kthvalue, median, unique, searchsorted / bucketize,
histc, bincount and their gradients."""
import random

import pytest
import torch

from conftest import TPU, assert_close, check


def distinct(shape, dtype=torch.float32):
    """Values without ties (so sort / topk indices are unique)."""
    n = 1
    for s in shape:
        n *= s
    return torch.randperm(max(n, 1))[:n].reshape(shape).to(dtype)


def rand(shape, dtype=torch.float32, lo=-3.0, hi=3.0):
    if dtype.is_floating_point:
        return torch.rand(shape, dtype=dtype) * (hi - lo) + lo
    return torch.randint(int(lo), int(hi) + 1, shape, dtype=dtype)


def rand_shape(rank, lo=1, hi=5):
    return [random.randint(lo, hi) for _ in range(rank)]


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
    # Empty inputs: an empty result over a non-empty dim; an empty dim is the
    # CPU's IndexError before any check of k.
    check(lambda a: torch.kthvalue(a, 1, 2).values, torch.randn(2, 0, 4))
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        torch.kthvalue(torch.randn(2, 0, 4, device=TPU), 1, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int8, torch.bool])
def test_mode(dtype):
    # Few distinct values, so runs and ties are common. The value is the
    # CPU's (the smallest of the most frequent); the index is the CPU's where
    # it sorts stably (rows of at most 16), else an index holding the value.
    for _ in range(6):
        rank = random.randint(1, 3)
        shape = rand_shape(rank, 1, 24)
        dim = random.randrange(-rank, rank)
        x = rand(shape, dtype, 0, 1 if dtype == torch.bool else random.randint(1, 6))
        keep = random.random() < 0.5
        cv, ci = torch.mode(x, dim, keep)
        tv, ti = torch.mode(x.to(TPU), dim, keep)
        assert torch.equal(tv.cpu(), cv)
        d = dim % rank
        if shape[d] <= 16:
            assert torch.equal(ti.cpu(), ci)
        idx = ti.cpu() if keep else ti.cpu().unsqueeze(d)
        held = x.gather(d, idx)
        assert torch.equal(held if keep else held.squeeze(d), cv)
    v, i = torch.empty(0, dtype=dtype, device=TPU), torch.empty(0, dtype=torch.long, device=TPU)
    torch.mode(x.to(TPU), -1, out=(v, i))
    assert torch.equal(v.cpu(), torch.mode(x, -1).values)
    with pytest.raises(RuntimeError, match="for values output"):
        torch.mode(x.to(TPU), -1, out=(torch.empty(0, dtype=torch.float64 if dtype != torch.float64 else torch.int64,
                                                   device=TPU), i))
    with pytest.raises(IndexError, match="non-zero size"):
        torch.mode(torch.empty(3, 0, device=TPU), 1)


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


def test_gradients():
    d = distinct((6, 5))
    _grads(lambda a: torch.topk(a, 3, dim=1).values, d)
    _grads(lambda a: torch.topk(a, 2, dim=0, largest=False).values, d)
    _grads(lambda a: torch.sort(a, 1).values, distinct((6, 5)))
    _grads(lambda a: torch.kthvalue(a, 2, 1).values, distinct((6, 5)))
    _grads(lambda a: torch.median(a, 1).values, distinct((6, 5)))


# ---------------------------------------------------------------- searching and counting


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32])
def test_searchsorted_bucketize(dtype):
    seq = rand([random.randint(1, 8)], dtype, -3, 3).sort().values
    v = rand(rand_shape(2, 1, 5), dtype, -4, 4)
    if dtype.is_floating_point:
        v.view(-1)[0] = float("nan")
    for right in (False, True):
        for out_int32 in (False, True):
            check(lambda s, t: torch.searchsorted(s, t, right=right, out_int32=out_int32), seq, v)
            check(lambda t, s: torch.bucketize(t, s, right=right, out_int32=out_int32), v, seq)
    check(lambda s: torch.searchsorted(s, 1), seq)
    check(lambda s: torch.bucketize(1, s), seq)
    check(lambda s, t: torch.searchsorted(s, t, side="right"), seq, v)
    # N-D boundaries, and an unsorted sequence with a sorter.
    seqs = rand([3, 6], dtype, -3, 3).sort(-1).values
    vals = rand([3, 4], dtype, -4, 4)
    check(torch.searchsorted, seqs, vals)
    raw = rand([7], dtype, -3, 3)
    sorter = raw.argsort()
    check(lambda s, t, o: torch.searchsorted(s, t, sorter=o), raw, v, sorter)
    with pytest.raises(RuntimeError, match="side"):
        torch.searchsorted(seq.to(TPU), v.to(TPU), right=True, side="left")


def test_searchsorted_searches_as_the_cpu():
    # Unsorted boundaries have no right answer: the CPU's binary search gives
    # one, which the device's reproduces step for step (PyTorch's own test
    # reads permuted, unsorted rows).
    for _ in range(8):
        m = random.randint(1, 40)
        seqs = torch.randint(-5, 6, (3, m)).double()
        vals = torch.randint(-6, 7, (3, random.randint(1, 9))).int()
        for right in (False, True):
            check(lambda s, t: torch.searchsorted(s, t, right=right), seqs, vals)
        check(lambda s, t: torch.searchsorted(s, t), seqs[0], vals)
    b = torch.tensor([[[1, 3, 5], [2, 4, 6]], [[1, 2, 3], [4, 5, 6]]])
    check(torch.searchsorted, b.permute(2, 1, 0).double(), b.permute(2, 1, 0).int())
    # Many values against many boundaries: a million of each is a million-
    # element program, not a trillion comparisons.
    seq = torch.linspace(-1, 1, 1 << 20)
    v = torch.rand(1 << 20) * 2 - 1
    got = torch.searchsorted(seq.to(TPU), v.to(TPU))
    assert torch.equal(got.cpu(), torch.searchsorted(seq, v))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_histc(dtype):
    x = rand(rand_shape(2, 1, 10), dtype, -3, 3)
    bins = random.randint(1, 12)
    check(lambda t: torch.histc(t, bins=bins, min=-2, max=2), x)
    check(lambda t: torch.histc(t, bins=bins), x)
    check(lambda t: torch.histc(t, bins=bins), torch.full([4], 2.0, dtype=dtype))
    out = torch.empty(0, dtype=dtype, device=TPU)
    torch.histc(x.to(TPU), bins=bins, out=out)
    assert_close(out, torch.histc(x, bins=bins))
    with pytest.raises(RuntimeError, match="not finite"):
        # the data's range is checked on the device: raised at the next read
        torch.histc(torch.tensor([1.0, float("inf")], dtype=dtype, device=TPU)).cpu()
    with pytest.raises(RuntimeError, match="bins"):
        torch.histc(x.to(TPU), bins=0)


@pytest.mark.parametrize("wdtype", [None, torch.float32, torch.float16, torch.int64])
def test_bincount(wdtype):
    x = torch.randint(0, 9, (random.randint(1, 20),))
    w = None if wdtype is None else rand(x.shape, wdtype, 0, 5)
    check(lambda t: torch.bincount(t, w.to(t.device) if w is not None else None), x)
    check(lambda t: torch.bincount(t, minlength=15), x)
    check(lambda t: torch.bincount(t), x.to(torch.int32))
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.bincount(torch.tensor([1, -1], device=TPU))
    # The CPU's errors, in its order: dtype, then minlength, then shape.
    for bad, msg in [(torch.tensor([1.0, 0.3]), "not implemented for 'Float'"),
                     (torch.tensor([[1, 2], [3, 4]]), "1-d non-negative integral")]:
        for device in ("cpu", TPU):
            with pytest.raises(RuntimeError, match=msg):
                torch.bincount(bad.to(device))
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        torch.bincount(torch.tensor([1, 3], device=TPU), minlength=-1)


# ---------------------------------------------------------------- histc

# Hugging Face MoE layers count the tokens routed to each expert with histc.
HISTC_FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def _histc_both(x, **kw):
    expected = torch.histc(x, **kw)
    actual = torch.histc(x.to(TPU), **kw)
    assert_close(actual, expected, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", HISTC_FLOATS)
@pytest.mark.parametrize("shape", [(100,), (7, 9), (2, 3, 5), (), (0,)])
def test_histc_explicit_range(dtype, shape):
    x = (torch.randn(shape) * 2).to(dtype)  # some values fall outside [-1.5, 2]
    for bins in (1, 7, 64):
        _histc_both(x, bins=bins, min=-1.5, max=2)


@pytest.mark.parametrize("dtype", HISTC_FLOATS)
def test_histc_data_range(dtype):
    """min == max: the edges are the data's min and max (computed on the device)."""
    x = torch.randn(50, 3).to(dtype)
    _histc_both(x, bins=10)
    _histc_both(x, bins=5, min=3, max=3)
    _histc_both(torch.full((4,), 2.5, dtype=dtype), bins=4)  # one value: edges v-1, v+1
    _histc_both(torch.empty(0, dtype=dtype), bins=3)  # empty: edges -1, 1, all zero


@pytest.mark.parametrize("dtype", HISTC_FLOATS)
def test_histc_edges_and_nan(dtype):
    # Integral values land exactly on bin edges; the right edge belongs to
    # the last bin; NaN and values outside are not counted.
    x = torch.randint(-2, 13, (200,)).to(dtype)
    _histc_both(x, bins=5, min=0, max=10)
    _histc_both(x, bins=10, min=0, max=10)
    x[::7] = float("nan")
    _histc_both(x, bins=4, min=0, max=10)


def test_histc_non_contiguous():
    x = torch.randn(8, 12)
    _histc_both(x.t(), bins=6, min=-1, max=1)
    _histc_both(x[::2, 1::3], bins=6, min=-1, max=1)
    _histc_both(torch.randn(5, 1).expand(5, 4), bins=3, min=-2, max=2)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.uint8])
def test_histc_integers(dtype):
    """The CPU has no integer histc (CUDA does: the MoE path on a
    non-CPU device counts int32 expert ids); compare with the float count."""
    lo = 0 if dtype == torch.uint8 else -5
    x = torch.randint(lo, 20, (300,), dtype=dtype)
    for bins, mn, mx in [(8, 0, 7), (4, 0, 15), (25, lo, 19), (3, 2, 2)]:
        expected = torch.histc(x.double(), bins=bins, min=mn, max=mx).to(dtype)
        actual = torch.histc(x.to(TPU), bins=bins, min=mn, max=mx)
        assert_close(actual, expected, atol=0, rtol=0)


def test_histc_moe_counts():
    """transformers' grouped_mm experts: sorted int32 expert ids, one bin per expert."""
    experts = 6
    ids = torch.sort(torch.randint(0, experts, (40,), dtype=torch.int32)).values
    counts = torch.histc(ids.to(TPU), bins=experts, min=0, max=experts - 1)
    assert_close(counts, torch.bincount(ids, minlength=experts).to(torch.int32), atol=0, rtol=0)
    offsets = torch.cumsum(counts, 0, dtype=torch.int32)
    assert offsets[-1].item() == 40


def test_histc_out():
    x = torch.randn(30)
    out = torch.empty(0, device=TPU)
    r = torch.histc(x.to(TPU), bins=5, min=-1, max=1, out=out)
    assert r is out
    assert_close(out, torch.histc(x, bins=5, min=-1, max=1), atol=0, rtol=0)
    out = torch.zeros(9, device=TPU)
    with pytest.warns(UserWarning, match="resized"):  # as on the CPU
        torch.histc(x.to(TPU), bins=4, out=out)
    assert_close(out, torch.histc(x, bins=4), atol=0, rtol=0)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.histc(x.to(TPU), bins=4, out=torch.empty(4, device=TPU, dtype=torch.float64))


def test_histc_errors():
    x = torch.randn(10, device=TPU)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        torch.histc(x, bins=0)
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(x, bins=3, min=2, max=1)
    with pytest.raises(RuntimeError, match="not finite"):
        torch.histc(x, bins=3, min=0, max=float("inf"))
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        torch.histc(torch.ones(3, dtype=torch.bool, device=TPU), bins=2)
