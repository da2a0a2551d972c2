"""Reductions on the tpu against PyTorch on the CPU: dims / keepdim / dtype= /
out= variants, reduced-precision accumulation, first-index and NaN semantics
of max / argmax, norms, nansum / trace / equal / renorm, gradients, and that
none of these ops runs through the CPU fallback."""
import math
import random
import warnings

import pytest
import torch

import torch_pjrt
from conftest import TPU, assert_close, check

FLOATS = [torch.float32, torch.bfloat16, torch.float16]
INTS = [torch.int64, torch.int32]


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


SHAPES = [(), (7,), (4, 5), (2, 3, 4), (0, 3)]


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


def dim_choices(rank):
    if rank == 0:
        return [None, 0, -1]
    ds = [None, 0, -1, list(range(rank))]
    if rank >= 2:
        ds.append([0, rank - 1])
        ds.append([])
    return ds


def tol_sum(dtype):
    # Accumulation order differs from the CPU: allow an absolute slack.
    return {torch.float32: (1e-4, 1e-5), torch.bfloat16: (5e-2, 2e-2), torch.float16: (1e-2, 2e-3)}.get(
        dtype, (0, 0))


# ------------------------------------------------------------- sum / mean / prod


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64, torch.bool])
def test_sum(dtype):
    atol, rtol = tol_sum(dtype)
    for shape in shapes_for(dtype, SHAPES):
        for layout in pick(["contiguous", "transposed", "sliced"]):
            x = make(shape, dtype, layout)
            for dim in pick(dim_choices(len(shape))):
                keepdim = random.random() < 0.5
                compare(lambda t: torch.sum(t, dim=dim, keepdim=keepdim), x, atol=atol, rtol=rtol)
    x = make((6, 5), dtype)
    compare(lambda t: t.sum(), x, atol=atol, rtol=rtol)
    compare(lambda t: t.sum(1, dtype=torch.float32), x, atol=1e-4, rtol=1e-5)
    if dtype != torch.bool:
        compare(lambda t: t.sum(0, dtype=torch.int64), x.clamp(-100, 100))


def test_sum_big_float32():
    x = torch.randn(3, 20000)
    compare(lambda t: t.sum(1), x, atol=1e-3, rtol=1e-5)
    compare(lambda t: t.sum(), x, atol=1e-3, rtol=1e-5)


def test_sum_bfloat16_accumulates_in_float32():
    # 4096 ones: a bf16 accumulator would stall at 256.
    x = torch.ones(4096, dtype=torch.bfloat16)
    assert x.to(TPU).sum().item() == 4096
    compare(lambda t: t.sum(), torch.rand(5000).bfloat16())


def test_sum_mean_out():
    x = torch.randn(4, 6)
    for fn in [torch.sum, torch.mean]:
        out_c, out_t = torch.empty(0), torch.empty(0, device=TPU)
        fn(x, 1, keepdim=True, out=out_c)
        fn(x.to(TPU), 1, keepdim=True, out=out_t)
        assert_close(out_t, out_c)
    # out= of another dtype decides the accumulation dtype.
    out_c, out_t = torch.empty(4, dtype=torch.float64), torch.empty(4, dtype=torch.float64, device=TPU)
    torch.sum(x, 1, out=out_c)
    torch.sum(x.to(TPU), 1, out=out_t)
    assert_close(out_t, out_c)


@pytest.mark.parametrize("dtype", FLOATS)
def test_mean(dtype):
    atol, rtol = tol_sum(dtype)
    for shape in shapes_for(dtype, SHAPES):
        x = make(shape, dtype, random.choice(["contiguous", "transposed", "sliced"]))
        for dim in pick(dim_choices(len(shape)), 3):
            keepdim = random.random() < 0.5
            compare(lambda t: torch.mean(t, dim=dim, keepdim=keepdim), x, atol=atol, rtol=rtol)
    compare(lambda t: t.mean(), make((3, 4), dtype), atol=atol, rtol=rtol)
    compare(lambda t: t.mean(0, dtype=torch.float32), make((3, 4), dtype))


def test_mean_rejects_integers():
    with pytest.raises(RuntimeError, match="mean"):
        torch.arange(4, device=TPU).mean()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.bool])
def test_prod(dtype):
    for shape in shapes_for(dtype, [(), (6,), (3, 5), (2, 3, 4), (0, 2)]):
        if dtype.is_floating_point:
            x = (torch.rand(shape) + 0.5).to(dtype)
        else:
            x = make(shape, dtype)
        atol, rtol = (1e-5, 1e-5) if dtype == torch.float32 else (2e-2, 2e-2)
        compare(lambda t: t.prod(), x, atol=atol, rtol=rtol)
        for dim in ([0, -1] if len(shape) else [0]):
            kd = random.random() < 0.5
            compare(lambda t: t.prod(dim, keepdim=kd), x, atol=atol, rtol=rtol)
    x = torch.rand(3, 4) + 0.5
    compare(lambda t: t.prod(1, dtype=torch.float64), x)
    out_c, out_t = torch.empty(3), torch.empty(3, device=TPU)
    torch.prod(x, 1, out=out_c)
    torch.prod(x.to(TPU), 1, out=out_t)
    assert_close(out_t, out_c)


# ------------------------------------------------------------- extremes


def with_ties_and_nans(shape, dtype, nan=True):
    x = torch.randint(0, 3, shape).to(dtype)
    if nan and dtype.is_floating_point and x.numel() > 2:
        flat = x.view(-1)
        for i in random.sample(range(flat.numel()), max(1, flat.numel() // 7)):
            flat[i] = float("nan")
    return x


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64, torch.bool])
def test_amax_amin(dtype):
    for shape in shapes_for(dtype, [(), (9,), (4, 5), (2, 3, 4)]):
        x = with_ties_and_nans(shape, dtype) if dtype != torch.bool else make(shape, dtype)
        for dim in pick([d for d in dim_choices(len(shape)) if d is not None]):
            keepdim = random.random() < 0.5
            compare(lambda t: torch.amax(t, dim, keepdim), x)
            compare(lambda t: torch.amin(t, dim, keepdim), x)
        compare(lambda t: torch.amax(t), x)
    x = torch.randn(3, 4)
    out_c, out_t = torch.empty(0), torch.empty(0, device=TPU)
    torch.amax(x, 0, out=out_c)
    torch.amax(x.to(TPU), 0, out=out_t)
    assert_close(out_t, out_c)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32, torch.bool])
def test_max_min_dim_first_index_and_nan(dtype):
    for shape in shapes_for(dtype, [(), (9,), (4, 6), (3, 5, 4)]):
        dim, keepdim = random.choice(dims_of(len(shape))), random.random() < 0.5
        for nan in [False, True]:  # same program, NaN-free and with NaN
            x = with_ties_and_nans(shape, dtype, nan) if dtype != torch.bool else make(shape, dtype)
            for fn in [torch.max, torch.min]:
                r = compare(lambda t: fn(t, dim, keepdim), x, rtol=0, atol=0)
                assert r.indices.dtype == torch.int64


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32])
def test_argmax_argmin(dtype):
    for shape in shapes_for(dtype, [(), (9,), (4, 6), (3, 5, 4)]):
        dim, kd = random.choice(dims_of(len(shape))), random.random() < 0.5
        for nan in [False, True]:
            x = with_ties_and_nans(shape, dtype, nan)
            for fn in [torch.argmax, torch.argmin]:
                compare(lambda t: fn(t, keepdim=kd), x)
                compare(lambda t: fn(t, dim, keepdim=kd), x)
    x = torch.randn(4, 5)
    out_c, out_t = torch.empty(0, dtype=torch.long), torch.empty(0, dtype=torch.long, device=TPU)
    torch.argmax(x, 1, out=out_c)
    torch.argmax(x.to(TPU), 1, out=out_t)
    assert_close(out_t, out_c)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.bool])
def test_full_max_min_and_aminmax(dtype):
    for shape in shapes_for(dtype, [(), (7,), (3, 4)]):
        x = with_ties_and_nans(shape, dtype) if dtype != torch.bool else make(shape, dtype)
        compare(lambda t: t.max(), x)
        compare(lambda t: t.min(), x)
        if dtype != torch.bool:
            compare(lambda t: torch.aminmax(t), x)
            if len(shape):
                compare(lambda t: torch.aminmax(t, dim=-1, keepdim=True), x)
    x = make((3, 4), dtype)
    out_c, out_t = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype, device=TPU)
    torch.max(x, out=out_c)
    torch.max(x.to(TPU), out=out_t)
    assert_close(out_t, out_c)
    vc, ic = torch.empty(0, dtype=dtype), torch.empty(0, dtype=torch.long)
    vt, it = torch.empty(0, dtype=dtype, device=TPU), torch.empty(0, dtype=torch.long, device=TPU)
    torch.min(x, 1, out=(vc, ic))
    torch.min(x.to(TPU), 1, out=(vt, it))
    assert_close((vt, it), (vc, ic))


def test_extremes_of_empty_raise():
    e = torch.empty(0, 3, device=TPU)
    with pytest.raises(RuntimeError, match="numel"):
        e.max()
    with pytest.raises((RuntimeError, IndexError), match='Expected reduction dim to be specified'):
        e.argmax()
    with pytest.raises((RuntimeError, IndexError), match='Expected reduction dim 0 to have non-zero size'):
        e.amax(0)
    assert_close(e.amax(1), torch.empty(0))


# ------------------------------------------------------------- all / any


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int64, torch.uint8, torch.bfloat16])
def test_all_any(dtype):
    shapes = [(), (6,), (3, 4), (2, 3, 4), (0, 2)]
    for shape in shapes if dtype == torch.bool else pick(shapes, 2):
        x = (torch.rand(shape) > 0.3).to(dtype) if dtype != torch.float32 else (torch.rand(shape) > 0.2) * 2.5
        for fn in [torch.all, torch.any]:
            compare(lambda t: fn(t), x)
            for dim in pick(range(len(shape)), 1):
                kd = random.random() < 0.5
                compare(lambda t: fn(t, dim, keepdim=kd), x)
            if len(shape) >= 2:
                compare(lambda t: fn(t, dim=(0, -1)), x)
                compare(lambda t: fn(t, dim=[]), x)  # reduces nothing
    x = torch.tensor([float("nan"), 0.0])
    compare(lambda t: (t.all(), t.any()), x)


def test_all_any_out():
    x = torch.rand(3, 4) > 0.5
    for fn in [torch.all, torch.any]:
        for args in [(), (1,), ((0, 1),)]:
            out_c, out_t = torch.empty(0, dtype=torch.bool), torch.empty(0, dtype=torch.bool, device=TPU)
            fn(x, *args, out=out_c)
            fn(x.to(TPU), *args, out=out_t)
            assert_close(out_t, out_c)


# ------------------------------------------------------------- var / std


@pytest.mark.parametrize("dtype", FLOATS)
def test_var_std(dtype):
    tol = {torch.float32: (1e-5, 1e-4)}.get(dtype)
    atol, rtol = tol if tol else (None, None)
    # Small groups make dof <= 0 (inf / nan results, and a warning on both sides).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for shape in shapes_for(dtype, [(), (9,), (5, 6), (2, 3, 4)]):
            x = make(shape, dtype, random.choice(["contiguous", "transposed"])) * 3 + 1
            for dim in pick(dim_choices(len(shape))):
                keepdim = random.random() < 0.5
                fn = random.choice([torch.var, torch.std])
                for correction in [0, 1, 2, 0.5]:  # an operand: one program for all
                    compare(lambda t: fn(t, dim, correction=correction, keepdim=keepdim), x, atol=atol, rtol=rtol)
            compare(lambda t: torch.var_mean(t, correction=1), x, atol=atol, rtol=rtol)
            compare(lambda t: torch.std_mean(t, 0 if len(shape) else None, keepdim=True), x, atol=atol, rtol=rtol)
    x = torch.randn(4, 5)
    compare(lambda t: (t.var(), t.std(), t.var(1, unbiased=False), t.std(0, True, True)), x, atol=1e-5, rtol=1e-4)
    # correction >= N: division by zero like the CPU (inf / nan), with its warning.
    with pytest.warns(UserWarning, match="degrees of freedom"):
        actual = (x.to(TPU).var(1, correction=5), x.to(TPU).std(1, correction=7))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert_close(actual, (x.var(1, correction=5), x.std(1, correction=7)))
    out_c, out_t = torch.empty(0), torch.empty(0, device=TPU)
    torch.std(x, 1, out=out_c)
    torch.std(x.to(TPU), 1, out=out_t)
    assert_close(out_t, out_c, atol=1e-5, rtol=1e-4)


def test_var_rejects_integers():
    with pytest.raises(RuntimeError, match="floating point"):
        torch.arange(5, device=TPU).var()


# ------------------------------------------------------------- logsumexp / norms / count_nonzero


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64])
def test_logsumexp(dtype):
    for shape in shapes_for(dtype, [(), (7,), (4, 5), (2, 3, 4)]):
        x = make(shape, dtype) * (3 if dtype.is_floating_point else 1)
        for dim in pick([d for d in dim_choices(len(shape)) if d is not None and d != []]):
            kd = random.random() < 0.5
            compare(lambda t: torch.logsumexp(t, dim, keepdim=kd), x)
    x = torch.randn(4, 5)
    x[1] = -math.inf
    x[2, 3] = math.inf
    x[3, 0] = math.nan
    compare(lambda t: t.logsumexp(1), x)
    compare(lambda t: t.logsumexp(0), x[:1] * 100)


@pytest.mark.parametrize("dtype", FLOATS)
def test_vector_norm(dtype):
    for shape in pick([(), (7,), (4, 5), (2, 3, 4)], 2):
        x = make(shape, dtype, random.choice(["contiguous", "sliced"]))
        if x.numel():
            x.view(-1)[0] = 0
        for ord in [2, 1, 0, math.inf, -math.inf, 3.5, -1.5]:
            for dim in pick([None, -1] + ([(0, -1)] if len(shape) >= 2 else []), 1):
                kd = random.random() < 0.5
                compare(lambda t: torch.linalg.vector_norm(t, ord, dim, keepdim=kd), x,
                        atol=1e-4 if dtype == torch.float32 else None)
    x = torch.randn(3, 4)
    compare(lambda t: (t.norm(), t.norm(1, 1), t.norm(dim=0, keepdim=True), torch.norm(t, 3, 1)), x, atol=1e-5)
    compare(lambda t: torch.linalg.vector_norm(t, dtype=torch.float64), x.half())
    compare(lambda t: torch.linalg.vector_norm(t, 2, 1, dtype=torch.float32), x.bfloat16())
    out_c, out_t = torch.empty(0), torch.empty(0, device=TPU)
    torch.linalg.vector_norm(x, 2, 1, out=out_c)
    torch.linalg.vector_norm(x.to(TPU), 2, 1, out=out_t)
    assert_close(out_t, out_c)


def test_vector_norm_new_p_reuses_program():
    x = torch.randn(16, device=TPU)
    torch_pjrt.synchronize()  # in fused mode the first program would also draw x
    torch.linalg.vector_norm(x, 3.25).cpu()
    torch_pjrt.reset_cache_stats()
    for p in [3.5, 4.5, 1.25]:
        assert_close(torch.linalg.vector_norm(x, p), torch.linalg.vector_norm(x.cpu(), p), atol=1e-5, rtol=1e-5)
    assert torch_pjrt.cache_stats()["misses"] == 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_count_nonzero(dtype):
    x = (torch.randint(0, 3, (3, 4, 5)) * (torch.rand(3, 4, 5) > 0.4)).to(dtype)
    compare(lambda t: (torch.count_nonzero(t), torch.count_nonzero(t, 1), torch.count_nonzero(t, (0, 2))), x)


# ------------------------------------------------------------- nansum / trace / equal / renorm
# (fresh random shapes; grads_at compares gradients at given inputs)


def rand_shape(rank, lo=1, hi=5):
    return [random.randint(lo, hi) for _ in range(rank)]


def rand(shape, dtype=torch.float32, lo=-3.0, hi=3.0):
    if dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if dtype.is_floating_point:
        return torch.rand(shape, dtype=dtype) * (hi - lo) + lo
    return torch.randint(int(lo), int(hi) + 1, shape, dtype=dtype)


def noncontig(x):
    """A non-contiguous view with x's values (a transposed copy)."""
    return x.transpose(0, -1).contiguous().transpose(0, -1) if x.dim() > 1 else x


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


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_nansum(dtype):
    x = rand(rand_shape(3, 2, 5), dtype)
    if dtype.is_floating_point:
        x[x > 1.5] = float("nan")
    check(torch.nansum, x)
    check(lambda t: torch.nansum(t, dim=1, keepdim=True), x)
    check(lambda t: torch.nansum(t, dim=(0, 2)), noncontig(x))
    check(lambda t: torch.nanmean(t, dim=-1), x.float())
    check(lambda t: torch.nansum(t, dim=0, dtype=torch.float32), x)
    out = torch.empty(0, dtype=torch.nansum(x).dtype, device=TPU)
    torch.nansum(x.to(TPU), dim=0, out=out)
    assert_close(out, torch.nansum(x, dim=0))


def test_nansum_gradient():
    x = rand(rand_shape(2, 2, 5))
    x[0, 0] = float("nan")
    grads_at(lambda t: torch.nansum(t, dim=1), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_equal(dtype):
    x = rand(rand_shape(2, 1, 5), dtype)
    assert torch.equal(x.to(TPU), x.clone().to(TPU))
    y = x.clone()
    y.view(-1)[-1] = not y.view(-1)[-1] if dtype == torch.bool else y.view(-1)[-1] + 1
    assert not torch.equal(x.to(TPU), y.to(TPU))
    assert not torch.equal(x.to(TPU), x.to(TPU).reshape(-1)) or x.dim() == 1
    assert torch.equal(x.to(TPU).t(), x.t().contiguous().to(TPU))
    assert torch.equal(torch.ones(3, device=TPU), torch.ones(3, dtype=torch.int64, device=TPU))
    nan = torch.tensor([float("nan")], device=TPU)
    assert not torch.equal(nan, nan)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32])
def test_trace(dtype):
    x = rand(rand_shape(2, 1, 6), dtype)
    check(torch.trace, x)
    check(torch.trace, x.t())
    if dtype == torch.float32:
        grads_at(torch.trace, x)
    with pytest.raises(RuntimeError, match="expected a matrix"):
        torch.trace(torch.ones(3, device=TPU))


@pytest.mark.parametrize("p", [1, 2, 3.5, float("inf")])
@pytest.mark.parametrize("dtype", FLOATS)
def test_renorm(p, dtype):
    x = rand(rand_shape(3, 2, 5), dtype)
    dim = random.randint(0, 2)
    check(lambda t: torch.renorm(t, p, dim, 1.5), x)
    check(lambda t: t.renorm_(p, dim, 1.5), x.clone())
    if dtype == torch.float32:
        grads_at(lambda t: torch.renorm(t, p, dim, 1.5), x)


# ------------------------------------------------------------- gradients


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


def test_grad_sum_mean():
    grads(lambda x: x.sum(1), (4, 6))
    grads(lambda x: x.sum((0, 2), keepdim=True), (3, 4, 5))
    grads(lambda x: x.mean(), (4, 6))
    grads(lambda x: x.mean(-1), (2, 3, 5))


def test_grad_var_std():
    grads(lambda x: x.var(1), (4, 6))
    grads(lambda x: x.var(correction=0), (4, 6))
    grads(lambda x: x.std(0, keepdim=True), (5, 3))


def test_grad_logsumexp_norm_amax():
    grads(lambda x: x.logsumexp(1), (4, 6))
    grads(lambda x: torch.linalg.vector_norm(x, 2, 1), (4, 6))
    grads(lambda x: x.amax(1), (4, 6))


def test_a_dim_list_needs_at_most_64_dims():
    # The CPU's reductions hold their dims in a 64-bit mask: a dim list over
    # more dims raises there; a whole reduction does not.
    x = torch.randn([1] * 65)
    xt = x.to(TPU)
    ops = [torch.sum, torch.mean, torch.nansum, torch.std, torch.var, torch.logsumexp, torch.norm,
           torch.count_nonzero, torch.amax, torch.var_mean]
    for op in ops:
        for d in (0, 64, -1):
            with pytest.raises(RuntimeError, match="only tensors with up to 64 dims are supported"):
                op(xt, dim=d)
    assert_close(xt.sum(), x.sum())


def test_nansum_of_everything_sums_as_well_as_sum():
    # Against a float64 sum, nansum's error stays that of sum over the same
    # values (it was 7x larger over a tensor of many dims).
    x = torch.randn(8, 9, 10, 7, 6) * 100
    x.view(-1)[::97] = float("nan")
    ref = torch.nansum(x.double()).item()
    nansum_err = abs(torch.nansum(x.to(TPU)).item() - ref)
    sum_err = abs(torch.sum(x.nan_to_num(0.0).to(TPU)).item() - ref)
    assert nansum_err <= 2 * sum_err + 1e-6 * abs(ref), (nansum_err, sum_err)
    assert_close(torch.nansum(x.to(TPU), (0, 1, 2, 3, 4), keepdim=True), torch.nansum(x, (0, 1, 2, 3, 4), keepdim=True),
                 atol=0.5, rtol=1e-5)
    assert_close(torch.nansum(x.to(TPU), (1, 3), keepdim=True), torch.nansum(x, (1, 3), keepdim=True), atol=1e-3,
                 rtol=1e-5)
