"""Random ops on the tpu: reproducibility under seeds, generators and rng
states, and the statistics of every distribution. The values themselves
differ from the CPU's by design (the bits come from XLA's generator), so
distributions are checked by their moments, bounds and frequencies."""
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_pjrt
from conftest import TPU, assert_close, check

FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
N = 100_000


def host(x):
    return x.cpu().double()


def assert_moments(x, mean, std, mean_tol, std_tol):
    m, s = x.mean().item(), x.std().item()
    assert abs(m - mean) < mean_tol, f"mean {m} vs {mean}"
    assert abs(s - std) < std_tol, f"std {s} vs {std}"


# ---------------------------------------------------------------- seeding

SAMPLERS = {
    "rand": lambda: torch.rand(1000, device=TPU),
    "randn": lambda: torch.randn(10, 100, device=TPU),
    "randint": lambda: torch.randint(0, 1000, (1000,), device=TPU),
    "randperm": lambda: torch.randperm(500, device=TPU),
    "bernoulli": lambda: torch.empty(1000, device=TPU).bernoulli_(0.5),
    "dropout": lambda: F.dropout(torch.ones(1000, device=TPU), 0.5),
    "multinomial": lambda: torch.multinomial(torch.ones(4, 50, device=TPU), 20),
    "exponential": lambda: torch.empty(1000, device=TPU).exponential_(),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_manual_seed_reproduces(name):
    f = SAMPLERS[name]
    torch.manual_seed(1234)
    a, b = f().cpu(), f().cpu()
    torch.manual_seed(1234)
    c, d = f().cpu(), f().cpu()
    assert torch.equal(a, c) and torch.equal(b, d)
    assert not torch.equal(a, b), "consecutive calls must give different numbers"
    torch.manual_seed(4321)
    assert not torch.equal(f().cpu(), a), "different seeds must give different numbers"


def test_tpu_manual_seed_and_initial_seed():
    torch.tpu.manual_seed(77)
    assert torch.tpu.initial_seed() == 77
    a = torch.randn(100, device=TPU).cpu()
    torch.tpu.manual_seed_all(77)
    assert torch.equal(torch.randn(100, device=TPU).cpu(), a)
    # The CPU generator is separate: seeding the tpu leaves it alone.
    torch.manual_seed(5)
    cpu_a = torch.rand(5)
    torch.manual_seed(5)
    torch.tpu.manual_seed(6)
    assert torch.equal(torch.rand(5), cpu_a)


def test_rng_state_round_trip():
    torch.manual_seed(3)
    torch.rand(10, device=TPU)
    state = torch.tpu.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    a = torch.randn(1000, device=TPU).cpu()
    b = torch.randint(0, 100, (50,), device=TPU).cpu()
    torch.tpu.set_rng_state(state)
    assert torch.equal(torch.randn(1000, device=TPU).cpu(), a)
    assert torch.equal(torch.randint(0, 100, (50,), device=TPU).cpu(), b)
    # torch.random.fork_rng saves and restores the tpu state too.
    with torch.random.fork_rng(device_type="tpu"):
        torch.rand(10, device=TPU)
    torch.tpu.set_rng_state(state)
    assert torch.equal(torch.randn(1000, device=TPU).cpu(), a)


def test_generator_argument():
    g = torch.Generator(device="tpu")
    assert g.device.type == "tpu"
    default_state = torch.tpu.get_rng_state()
    g.manual_seed(99)
    a = torch.rand(500, device=TPU, generator=g).cpu()
    b = torch.randn(500, device=TPU, generator=g).cpu()
    g.manual_seed(99)
    assert torch.equal(torch.rand(500, device=TPU, generator=g).cpu(), a)
    assert torch.equal(torch.randn(500, device=TPU, generator=g).cpu(), b)
    # Drawing from g leaves the default generator untouched.
    assert torch.equal(torch.tpu.get_rng_state(), default_state)
    # Generator state round trip, and every op accepting generator=.
    s = g.get_state()
    outs = [
        torch.randint(0, 10, (100,), device=TPU, generator=g),
        torch.randperm(100, device=TPU, generator=g),
        torch.empty(100, device=TPU).normal_(generator=g),
        torch.empty(100, device=TPU).bernoulli_(0.5, generator=g),
        torch.multinomial(torch.ones(10, device=TPU), 5, generator=g),
        torch.normal(torch.zeros(100, device=TPU), 1.0, generator=g),
    ]
    g.set_state(s)
    again = [
        torch.randint(0, 10, (100,), device=TPU, generator=g),
        torch.randperm(100, device=TPU, generator=g),
        torch.empty(100, device=TPU).normal_(generator=g),
        torch.empty(100, device=TPU).bernoulli_(0.5, generator=g),
        torch.multinomial(torch.ones(10, device=TPU), 5, generator=g),
        torch.normal(torch.zeros(100, device=TPU), 1.0, generator=g),
    ]
    for x, y in zip(outs, again):
        assert torch.equal(x.cpu(), y.cpu())
    # Two generators with one seed agree; clones continue identically.
    g2 = torch.Generator(device="tpu").manual_seed(99)
    g.manual_seed(99)
    assert torch.equal(torch.rand(50, device=TPU, generator=g).cpu(), torch.rand(50, device=TPU, generator=g2).cpu())


def test_cpu_generator_rejected():
    with pytest.raises(RuntimeError, match="generator"):
        torch.rand(3, device=TPU, generator=torch.Generator())


def test_one_program_for_every_seed_and_bound():
    """Seeds, counters and bounds are runtime operands, never constants."""
    x = torch.empty(777, device=TPU)
    x.uniform_(0, 1).cpu()
    torch_pjrt.reset_cache_stats()
    for i in range(5):
        torch.manual_seed(i)
        x.uniform_(-i, i + 1)
    g = torch.Generator(device="tpu").manual_seed(5)
    x.uniform_(2, 3, generator=g).cpu()
    assert torch_pjrt.cache_stats()["misses"] == 0


# ---------------------------------------------------------------- uniform

@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_statistics(dtype):
    x = host(torch.empty(N, dtype=dtype, device=TPU).uniform_(-2, 3))
    assert x.min() >= -2 and x.max() < 3
    assert_moments(x, 0.5, 5 / math.sqrt(12), 0.03, 0.02)
    r = host(torch.rand(N, dtype=dtype, device=TPU))
    assert r.min() >= 0 and r.max() < 1
    counts = torch.histc(r.float(), bins=8, min=0, max=1)
    assert (counts - N / 8).abs().max() < N / 8 * 0.06, counts


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_uniform_half_types_never_reach_the_upper_bound(dtype):
    r = host(torch.rand(1_000_000, dtype=dtype, device=TPU))
    assert r.max() < 1
    for lo, hi in [(0.0, 0.3), (1.0, 1.01), (-5.0, 7.3), (100.0, 100.5)]:
        x = host(torch.empty(200_000, dtype=dtype, device=TPU).uniform_(lo, hi))
        # Bounds as the op sees them (f32); rounding to the dtype may not reach hi.
        assert x.min() >= torch.tensor(lo, dtype=dtype).double() and x.max() < torch.tensor(hi).double()


def test_uniform_degenerate_and_errors():
    x = torch.empty(100, device=TPU).uniform_(2.5, 2.5)
    assert (x.cpu() == 2.5).all()
    for bad in [(3.0, 2.0)]:
        with pytest.raises(RuntimeError, match="uniform_ expects"):
            torch.empty(3, device=TPU).uniform_(*bad)
    with pytest.raises(RuntimeError, match='"check_uniform_bounds" not implemented for \'Long\''):
        torch.empty(3, dtype=torch.int64, device=TPU).uniform_()
    with pytest.raises(RuntimeError, match='"check_uniform_bounds" not implemented for \'Int\''):
        torch.rand(3, dtype=torch.int32, device=TPU)


def test_random_fills_write_through_views():
    y = torch.zeros(10, 10, device=TPU)
    y[:, 2:5].uniform_(5, 6)
    y.t()[7].normal_(100, 1)  # column 7
    h = y.cpu()
    assert ((h[:, 2:5] >= 5) & (h[:, 2:5] < 6)).all()
    assert (h[:, 7] > 90).all()
    rest = torch.cat([h[:, :2], h[:, 5:7], h[:, 8:]], 1)
    assert (rest == 0).all()
    z = torch.zeros(12, device=TPU)
    z[::3].bernoulli_(1.0)
    z[1::3].random_(7, 8)
    assert torch.equal(z.cpu(), torch.tensor([1.0, 7, 0] * 4))
    e = torch.empty(0, 5, device=TPU)
    for f in [lambda t: t.uniform_(), lambda t: t.normal_(), lambda t: t.random_(0, 3), lambda t: t.bernoulli_(0.5)]:
        assert f(e).shape == (0, 5)
    assert torch.rand(0, device=TPU).shape == (0,)
    assert torch.randn((), device=TPU).shape == ()


# ---------------------------------------------------------------- normal family

@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_statistics(dtype):
    x = host(torch.empty(N, dtype=dtype, device=TPU).normal_(1.5, 2.0))
    assert_moments(x, 1.5, 2.0, 0.05, 0.04)
    within = ((x - 1.5).abs() < 2.0).double().mean().item()
    assert abs(within - 0.6827) < 0.01
    z = torch.randn(N, dtype=dtype, device=TPU)
    assert z.dtype == dtype
    z = host(z)
    assert_moments(z, 0.0, 1.0, 0.03, 0.02)
    assert abs((z ** 3).mean().item()) < 0.1  # skew
    assert abs((z ** 4).mean().item() - 3) < 0.15  # kurtosis
    assert z.abs().max() > 3.5  # the tails exist


def test_normal_tensor_overloads():
    means = torch.linspace(-10, 10, 8)
    m = means[:, None].expand(8, 20_000).to(TPU)
    x = torch.normal(m, 0.5)
    assert x.shape == (8, 20_000) and x.dtype == torch.float32
    h = host(x)
    assert (h.mean(1) - means.double()).abs().max() < 0.03
    assert (h.std(1) - 0.5).abs().max() < 0.02

    stds = torch.tensor([0.0, 1.0, 3.0]).to(TPU)
    y = host(torch.normal(2.0, stds[:, None].expand(3, 30_000)))
    assert (y[0] == 2.0).all()
    assert abs(y[2].std().item() - 3.0) < 0.1 and abs(y[1].mean().item() - 2.0) < 0.05

    # Tensor mean and std broadcast against each other.
    z = torch.normal(torch.zeros(4, 1, device=TPU), torch.ones(1, 25_000, device=TPU) * 2)
    assert z.shape == (4, 25_000)
    assert_moments(host(z), 0.0, 2.0, 0.05, 0.05)

    out = torch.empty(0, device=TPU)
    r = torch.normal(torch.zeros(10_000, device=TPU), 1.0, out=out)
    assert r is out and out.shape == (10_000,)
    assert_moments(host(out), 0.0, 1.0, 0.05, 0.05)
    out = torch.empty(100, device=TPU)
    torch.normal(1.0, torch.ones(100, device=TPU), out=out)
    assert abs(host(out).mean().item() - 1.0) < 0.5
    torch.normal(torch.zeros(100, device=TPU), torch.ones(100, device=TPU), out=out[:])
    assert out.shape == (100,)

    w = torch.normal(3.0, 0.5, size=(N,), device=TPU)
    assert_moments(host(w), 3.0, 0.5, 0.02, 0.02)
    b = torch.normal(torch.zeros(1000, dtype=torch.bfloat16, device=TPU), 1.0)
    assert b.dtype == torch.bfloat16
    with pytest.raises(RuntimeError, match="std"):
        torch.normal(torch.zeros(3, device=TPU), -1.0)
    with pytest.raises(RuntimeError, match="std"):
        torch.empty(3, device=TPU).normal_(0, -1)


def test_log_normal_exponential_geometric_cauchy():
    ln = host(torch.empty(N, device=TPU).log_normal_(0.5, 0.25))
    assert ln.min() > 0
    assert_moments(ln.log(), 0.5, 0.25, 0.01, 0.01)

    for dtype in FLOATS:
        e = host(torch.empty(N, dtype=dtype, device=TPU).exponential_(2.0))
        assert e.min() > 0 and torch.isfinite(e).all()
        assert abs(e.mean().item() - 0.5) < 0.02, dtype
    with pytest.raises(RuntimeError, match="lambda"):
        torch.empty(3, device=TPU).exponential_(0)

    for dtype in [torch.float32, torch.int64]:
        g = host(torch.empty(N, dtype=dtype, device=TPU).geometric_(0.25))
        assert g.min() >= 1 and (g == g.round()).all()
        assert abs(g.mean().item() - 4.0) < 0.1
        assert abs((g == 1).double().mean().item() - 0.25) < 0.01

    c = host(torch.empty(N, device=TPU).cauchy_(1.0, 2.0))
    q = torch.quantile(c.float(), torch.tensor([0.25, 0.5, 0.75])).double()
    assert torch.allclose(q, torch.tensor([-1.0, 1.0, 3.0], dtype=torch.float64), atol=0.1), q


# ---------------------------------------------------------------- integers

INT_LIKE = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
            torch.float32, torch.float64, torch.bfloat16, torch.float16]


@pytest.mark.parametrize("dtype", INT_LIKE)
def test_randint_range_and_frequencies(dtype):
    x = torch.randint(3, 10, (N,), dtype=dtype, device=TPU)
    assert x.dtype == dtype
    h = host(x)
    assert h.min() == 3 and h.max() == 9
    freq = torch.bincount(h.long(), minlength=10)[3:].double() / N
    assert (freq - 1 / 7).abs().max() < 0.01, freq
    if dtype.is_signed if not dtype.is_floating_point else True:
        y = host(torch.randint(-50, -40, (10_000,), dtype=dtype, device=TPU))
        assert set(y.long().tolist()) == set(range(-50, -40))


def test_randint_wide_ranges():
    x = host(torch.randint(-2**40, 2**40, (N,), device=TPU))
    assert x.min() >= -2**40 and x.max() < 2**40
    assert x.min() < -0.9 * 2**40 and x.max() > 0.9 * 2**40
    assert abs(x.mean().item()) < 2**40 * 0.02
    i32 = host(torch.randint(-2**31, 2**31, (N,), dtype=torch.int32, device=TPU))
    assert i32.min() < -0.9 * 2**31 and i32.max() > 0.9 * 2**31
    full = torch.empty(N, dtype=torch.int64, device=TPU).random_(-2**63, None).cpu()
    assert full.min() < -2**62 and full.max() > 2**62


def test_random_default_ranges():
    u8 = host(torch.empty(N, dtype=torch.uint8, device=TPU).random_())
    assert set(u8.long().tolist()) == set(range(256))
    i8 = host(torch.empty(N, dtype=torch.int8, device=TPU).random_())
    assert set(i8.long().tolist()) == set(range(128))
    b = torch.empty(1000, dtype=torch.bool, device=TPU).random_().cpu()
    assert 300 < b.sum().item() < 700
    i64 = torch.empty(N, dtype=torch.int64, device=TPU).random_().cpu()
    assert i64.min() >= 0 and i64.max() > 2**62
    i32 = torch.empty(N, dtype=torch.int32, device=TPU).random_().cpu()
    assert i32.min() >= 0 and i32.max() > 2**30
    for dtype, digits in [(torch.float32, 24), (torch.bfloat16, 8), (torch.float16, 11), (torch.float64, 53)]:
        f = host(torch.empty(N, dtype=dtype, device=TPU).random_())
        assert f.min() >= 0 and f.max() <= 2**digits and (f == f.round()).all()
        assert f.max() > 0.9 * 2**digits


def test_random_from_and_to_overloads():
    a = host(torch.empty(10_000, dtype=torch.int8, device=TPU).random_(100, None))  # random_.from: [100, 127]
    assert set(a.long().tolist()) == set(range(100, 128))
    f = host(torch.empty(10_000, dtype=torch.bfloat16, device=TPU).random_(200, None))  # [200, 2^8]
    assert f.min() >= 200 and f.max() <= 256 and (f == f.round()).all()
    b = host(torch.empty(10_000, dtype=torch.int64, device=TPU).random_(5))  # random_.to: [0, 5)
    assert set(b.long().tolist()) == set(range(5))
    c = host(torch.empty(10_000, dtype=torch.int32, device=TPU).random_(-3, 3))
    assert set(c.long().tolist()) == set(range(-3, 3))
    d = torch.empty(1000, dtype=torch.bool, device=TPU).random_(0, 2).cpu()
    assert 0 < d.sum().item() < 1000
    # PyTorch's own bounds checks.
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        torch.empty(3, device=TPU).random_(5, 3)
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.empty(3, dtype=torch.uint8, device=TPU).random_(-1, 5)
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.empty(3, dtype=torch.int8, device=TPU).random_(0, 1000)


def test_like_factories():
    x = torch.empty(300, 400, dtype=torch.float16, device=TPU)
    r = torch.rand_like(x)
    assert r.dtype == torch.float16 and r.device.type == "tpu" and r.shape == x.shape
    assert 0 <= host(r).min() and host(r).max() < 1
    n = torch.randn_like(x, dtype=torch.float32)
    assert n.dtype == torch.float32
    assert_moments(host(n), 0.0, 1.0, 0.03, 0.02)
    i = torch.randint_like(x, 10)
    assert i.dtype == torch.float16 and set(host(i).long().flatten().tolist()) == set(range(10))
    j = host(torch.randint_like(x, 3, 6, dtype=torch.int64))
    assert set(j.long().flatten().tolist()) == {3, 4, 5}


# ---------------------------------------------------------------- bernoulli

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int64, torch.bool, torch.uint8])
def test_bernoulli_scalar_p(dtype):
    x = torch.empty(N, dtype=dtype, device=TPU).bernoulli_(0.3)
    h = host(x)
    assert set(h.unique().tolist()) <= {0.0, 1.0}
    assert abs(h.mean().item() - 0.3) < 0.01
    assert host(torch.empty(1000, dtype=dtype, device=TPU).bernoulli_(0.0)).sum() == 0
    assert host(torch.empty(1000, dtype=dtype, device=TPU).bernoulli_(1.0)).sum() == 1000


def test_bernoulli_tensor_p():
    p = torch.tensor([0.0, 0.2, 0.5, 0.9, 1.0])
    # p broadcast to self (bernoulli_.Tensor)
    x = host(torch.empty(5, 20_000, device=TPU).bernoulli_(p[:, None].to(TPU)))
    assert torch.allclose(x.mean(1), p.double(), atol=0.015)
    assert x[0].sum() == 0 and x[4].sum() == 20_000
    # p from the CPU is moved like PyTorch does
    y = host(torch.empty(5, 20_000, dtype=torch.int32, device=TPU).bernoulli_(p[:, None]))
    assert torch.allclose(y.mean(1), p.double(), atol=0.015)
    # functional: bernoulli(p) draws with probabilities p, same dtype
    P = p[:, None].expand(5, 20_000).contiguous().to(TPU, torch.bfloat16)
    z = torch.bernoulli(P)
    assert z.dtype == torch.bfloat16
    assert torch.allclose(host(z).mean(1), p.double(), atol=0.02)
    # bernoulli.p and out=
    w = host(torch.bernoulli(torch.empty(N, device=TPU), 0.7))
    assert abs(w.mean().item() - 0.7) < 0.01
    out = torch.empty(3, device=TPU)
    torch.bernoulli(P.float(), out=out)
    assert out.shape == (5, 20_000)
    base = torch.full((4, 3), 7.0, device=TPU)
    torch.bernoulli(torch.tensor([[1.0, 0, 1, 0]] * 3, device=TPU), out=base.t())  # written through the view
    assert torch.equal(base.cpu(), torch.tensor([[1.0] * 3, [0] * 3, [1] * 3, [0] * 3]))
    with pytest.raises(RuntimeError, match="bernoulli_ expects p to be in"):
        torch.empty(3, device=TPU).bernoulli_(1.5)


# ---------------------------------------------------------------- dropout

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_training(dtype, p):
    x = (torch.randn(200, 500).abs() + 1).to(dtype)  # nonzero, so kept == (y != 0)
    xt = x.to(TPU).requires_grad_()
    y = F.dropout(xt, p, training=True)
    g = torch.randn(200, 500, dtype=dtype)
    y.backward(g.to(TPU))
    keep = y.detach().cpu() != 0
    assert abs(keep.double().mean().item() - (1 - p)) < 0.01
    scale = 1.0 / (1 - p)
    # Same formula as PyTorch: x * mask * scale, rounded once.
    assert_close(y.detach(), x * keep * scale, atol=0, rtol=0)
    # Backward uses the very same mask.
    assert_close(xt.grad, g * keep * scale, atol=0, rtol=0)


def test_dropout_modes_and_modules():
    x = torch.randn(64, 100)
    xt = x.to(TPU)
    assert torch.equal(F.dropout(xt, 0.5, training=False).cpu(), x)
    assert torch.equal(F.dropout(xt, 0.0, training=True).cpu(), x)
    assert (F.dropout(xt, 1.0, training=True).cpu() == 0).all()
    m = nn.Dropout(0.25).to(TPU)
    m.train()
    kept = (m(xt).cpu() != 0).double().mean().item()
    assert abs(kept - 0.75) < 0.03
    m.eval()
    assert torch.equal(m(xt).cpu(), x)
    out, mask = torch.ops.aten.native_dropout(xt, 0.3, True)
    assert mask.dtype == torch.bool
    assert_close(out, x * mask.cpu() * (1 / 0.7), atol=0, rtol=0)
    out, mask = torch.ops.aten.native_dropout(xt, 0.3, False)
    assert torch.equal(out.cpu(), x) and mask.cpu().all()
    # Feature dropout composes bernoulli_ and arithmetic.
    f = nn.Dropout2d(0.5)(torch.ones(8, 16, 4, 4, device=TPU)).cpu()
    per_channel = f.flatten(2)
    assert ((per_channel == 0).all(2) | (per_channel == 2).all(2)).all()


def test_native_dropout_backward_matches_cpu():
    for dtype in [torch.float32, torch.bfloat16, torch.float16]:
        g = torch.randn(7, 9).to(dtype)
        mask = torch.rand(7, 9) < 0.6
        check(torch.ops.aten.native_dropout_backward, g, mask, 1 / 0.6, atol=0, rtol=0)
        check(torch.ops.aten.native_dropout_backward, g.t(), mask.t(), 2.5, atol=0, rtol=0)

@pytest.mark.parametrize("dtype", [torch.int64, torch.float32, torch.bfloat16])
def test_native_dropout_backward_dtype(dtype):
    # Integer gradients promote with the double scale, as on the CPU.
    g = torch.randint(-3, 4, (3, 4)).to(dtype)
    m = torch.rand(3, 4) < 0.5
    check(lambda a, b: torch.ops.aten.native_dropout_backward(a, b, 1.25), g, m)


# ---------------------------------------------------------------- randperm, multinomial

@pytest.mark.parametrize("n", [0, 1, 2, 10, 257, 5000])
def test_randperm_is_a_permutation(n):
    dtypes = [torch.int64, torch.int32, torch.float32]
    dtypes += [torch.float16] if n <= 2049 else []
    dtypes += [torch.bfloat16] if n <= 257 else []
    for dtype in dtypes:
        r = torch.randperm(n, dtype=dtype, device=TPU)
        assert r.dtype == dtype and r.shape == (n,)
        assert torch.equal(r.cpu().sort().values, torch.arange(n, dtype=dtype))
    if n >= 10:
        assert not torch.equal(torch.randperm(n, device=TPU).cpu(), torch.randperm(n, device=TPU).cpu())


def test_randperm_uniform_and_out():
    counts = {}
    for _ in range(600):
        k = tuple(torch.randperm(3, device=TPU).cpu().tolist())
        counts[k] = counts.get(k, 0) + 1
    assert len(counts) == 6 and all(55 < c < 145 for c in counts.values()), counts
    out = torch.empty(0, dtype=torch.int64, device=TPU)
    torch.randperm(20, out=out)
    assert torch.equal(out.cpu().sort().values, torch.arange(20))
    with pytest.raises(RuntimeError, match='negative dimension'):
        torch.randperm(-1, device=TPU)
    with pytest.raises(RuntimeError, match="Half"):
        torch.randperm(5000, dtype=torch.float16, device=TPU)


def test_multinomial_with_replacement():
    p = torch.tensor([0.1, 0.2, 0.0, 0.3, 0.4])
    s = torch.multinomial((p * 7).to(TPU), 40_000, replacement=True)  # unnormalized is fine
    assert s.dtype == torch.int64 and s.shape == (40_000,)
    freq = torch.bincount(s.cpu(), minlength=5).double() / 40_000
    assert (freq - p.double()).abs().max() < 0.012, freq
    assert freq[2] == 0
    P = torch.stack([p, p.flip(0)]).to(TPU)
    s2 = torch.multinomial(P, 20_000, replacement=True).cpu()
    assert s2.shape == (2, 20_000)
    f2 = torch.stack([torch.bincount(r, minlength=5) for r in s2]).double() / 20_000
    assert (f2 - P.cpu().double()).abs().max() < 0.015


def test_multinomial_without_replacement():
    p = torch.tensor([0.1, 0.2, 0.0, 0.3, 0.4])
    rows = p.expand(4000, 5).contiguous().to(TPU)
    s = torch.multinomial(rows, 3).cpu()
    assert s.shape == (4000, 3)
    assert all(len(set(r)) == 3 for r in s.tolist())
    assert (s != 2).all()  # zero probability is never drawn while others remain
    first = torch.bincount(s[:, 0], minlength=5).double() / 4000
    assert (first - p.double()).abs().max() < 0.03, first
    one = torch.multinomial(rows, 1).cpu()  # the single-sample path
    assert one.shape == (4000, 1)
    f1 = torch.bincount(one[:, 0], minlength=5).double() / 4000
    assert (f1 - p.double()).abs().max() < 0.03
    full = torch.multinomial(torch.ones(6, device=TPU), 6).cpu()
    assert sorted(full.tolist()) == list(range(6))
    out = torch.empty(0, dtype=torch.int64, device=TPU)
    torch.multinomial(torch.ones(2, 8, device=TPU, dtype=torch.float64), 4, out=out)
    assert out.shape == (2, 4)
    with pytest.raises(RuntimeError, match="without replacement"):
        torch.multinomial(torch.ones(3, device=TPU), 4)
    with pytest.raises(RuntimeError, match="floating"):
        torch.multinomial(torch.ones(3, dtype=torch.int64, device=TPU), 1)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_fills(dtype):
    z = torch.randn(N, dtype=dtype, device=TPU)
    assert z.dtype == dtype
    h = z.cpu()
    # Each part carries half the variance, so E|z|^2 = 1.
    assert_moments(h.real.double(), 0.0, math.sqrt(0.5), 0.02, 0.02)
    assert_moments(h.imag.double(), 0.0, math.sqrt(0.5), 0.02, 0.02)
    u = torch.empty(N, dtype=dtype, device=TPU).uniform_(-1, 2).cpu()
    for part in (u.real, u.imag):
        assert part.min() >= -1 and part.max() < 2 and abs(part.double().mean().item() - 0.5) < 0.03
    with pytest.raises(RuntimeError, match="uniform_ expects"):
        torch.empty(3, dtype=dtype, device=TPU).uniform_(3, 2)
