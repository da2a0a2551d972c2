"""Preconditions the CPU checks on data raise the CPU's error on the tpu too.

Values living on the device are checked by a small program of their own
(engine/checks.h): the error comes at the next host read or synchronize in
strict and fused mode, without waiting at the call, and at the call in
debug mode. Checks the CPU makes from sizes and strides alone (memory
overlap) raise at the call in every mode. After any of them the device
keeps working. Each case also runs on the CPU, so the expected class and
message are the CPU's own."""
import re

import pytest
import torch
import torch.nn.functional as F

import torch_pjrt
from conftest import PASS_MODE, TPU, assert_close, to_tpu


@pytest.fixture
def mode():
    """The pass's mode: each pass of the suite checks when its mode raises."""
    return PASS_MODE


def _cpu_error(fn, args, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        fn(*args)


def _still_works():
    a = torch.arange(4.0, device=TPU)
    assert (a * 2 + 1).cpu().tolist() == [1.0, 3.0, 5.0, 7.0]


def deferred(mode, fn, args, exc, msg):
    """fn raises exc(msg) on the CPU; on the tpu at the next host read in
    strict / fused mode (the call itself neither raises nor waits) and at
    the call in debug mode."""
    _cpu_error(fn, args, exc, msg)
    targs = to_tpu(list(args))
    with pytest.raises(exc, match=re.escape(msg)):
        out = fn(*targs)
        assert mode != "debug", "debug mode raises at the call"
        if isinstance(out, tuple):
            out = out[0]
        out.cpu()
    _still_works()


def at_call(fn, args, exc, msg):
    """fn raises exc(msg) at the call on the CPU and on the tpu, in every mode."""
    _cpu_error(fn, [a.clone() if isinstance(a, torch.Tensor) else a for a in args], exc, msg)
    with pytest.raises(exc, match=re.escape(msg)):
        fn(*to_tpu(list(args)))
    _still_works()


# ---------------------------------------------------------------- class-index targets

X = torch.randn(4, 5)


@pytest.mark.parametrize("target, bad", [([1, 7, 2, -3], 7), ([1, -3, 2, 7], -3), ([0, 5, 1, 2], 5)])
def test_cross_entropy_target_out_of_bounds(mode, target, bad):
    deferred(mode, F.cross_entropy, (X, torch.tensor(target)), IndexError, f"Target {bad} is out of bounds.")


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_nll_loss_target_out_of_bounds(mode, reduction):
    fn = lambda x, t: F.nll_loss(x, t, reduction=reduction)  # noqa: E731
    deferred(mode, fn, (X.log_softmax(1), torch.tensor([1, 9, 2, 3])), IndexError, "Target 9 is out of bounds.")
    deferred(mode, fn, (X[0], torch.tensor(-1)), IndexError, "Target -1 is out of bounds.")


def test_nll_loss2d_target_out_of_bounds(mode):
    t = torch.randint(0, 5, (2, 3, 3))
    t[1, 2, 0] = 6
    deferred(mode, F.nll_loss, (torch.randn(2, 5, 3, 3), t), IndexError, "Target 6 is out of bounds.")
    deferred(mode, F.cross_entropy, (torch.randn(2, 5, 3, 3), t), IndexError, "Target 6 is out of bounds.")


def test_ignored_targets_are_not_checked(mode):
    for target, ignore in [([1, -100, 2, 3], -100), ([1, 7, 2, 3], 7)]:
        x, t = X.clone().requires_grad_(), torch.tensor(target)
        xt = x.detach().to(TPU).requires_grad_()
        loss = F.cross_entropy(x, t, ignore_index=ignore)
        tloss = F.cross_entropy(xt, t.to(TPU), ignore_index=ignore)
        assert_close(tloss, loss.detach())
        loss.backward()
        tloss.backward()
        assert_close(xt.grad, x.grad)
    t = torch.randint(0, 5, (2, 3, 3))
    t[0, 1, 1] = 255
    x = torch.randn(2, 5, 3, 3)
    assert_close(F.cross_entropy(x.to(TPU), t.to(TPU), ignore_index=255), F.cross_entropy(x, t, ignore_index=255))


def test_valid_targets_and_weights(mode):
    x, t, w = torch.randn(6, 5), torch.randint(0, 5, (6,)), torch.rand(5)
    for red in ["none", "sum", "mean"]:
        assert_close(F.nll_loss(x.to(TPU), t.to(TPU), w.to(TPU), reduction=red), F.nll_loss(x, t, w, reduction=red))
    t8 = t.to(torch.int64)[:3].expand(2, 3)  # a broadcast view as target
    x8 = torch.randn(2, 5, 3)
    assert_close(F.cross_entropy(x8.to(TPU), t8.to(TPU)), F.cross_entropy(x8, t8))


@pytest.mark.allow_fallback("multi_margin_loss")
def test_multi_margin_target_out_of_bounds(mode):
    # Not native (runs through the CPU fallback), which checks it.
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(X.to(TPU), torch.tensor([1, 7, 2, 3], device=TPU)).cpu()
    _still_works()


# ---------------------------------------------------------------- probabilities


@pytest.mark.parametrize("probs, n, replacement, msg", [
    ([0.2, -0.1, 0.5], 1, False, "probability tensor contains either `inf`, `nan` or element < 0"),
    ([0.2, float("inf")], 1, True, "probability tensor contains either `inf`, `nan` or element < 0"),
    ([[0.2, 0.3], [0.1, float("nan")]], 2, False, "probability tensor contains either `inf`, `nan` or element < 0"),
    ([0.2, -0.1, 0.5], 2, True, "invalid multinomial distribution (encountering probability entry < 0)"),
    ([0.2, float("nan")], 2, True, "invalid multinomial distribution (encountering probability entry < 0)"),
    ([0.2, float("inf")], 2, True, "invalid multinomial distribution (encountering probability entry = infinity or NaN)"),
    ([0.0, 0.0, 0.0], 1, False, "invalid multinomial distribution (sum of probabilities <= 0)"),
    ([[1.0, 0.0], [0.0, 0.0]], 1, False, "invalid multinomial distribution (sum of probabilities <= 0)"),
    ([[1.0, 0.0], [0.0, 0.0]], 3, True, "invalid multinomial distribution (sum of probabilities <= 0)"),
    # the CPU's sampling loop reports whichever row comes first
    ([[0.0, 0.0], [1.0, -1.0]], 3, True, "invalid multinomial distribution (sum of probabilities <= 0)"),
    ([[1.0, -1.0], [0.0, 0.0]], 3, True, "invalid multinomial distribution (encountering probability entry < 0)"),
])
def test_multinomial_bad_probabilities(mode, probs, n, replacement, msg):
    fn = lambda p: torch.multinomial(p, n, replacement)  # noqa: E731
    deferred(mode, fn, (torch.tensor(probs),), RuntimeError, msg)


def test_multinomial_valid(mode):
    p = torch.tensor([[0.0, 2.0, 0.0, 1.0], [1.0, 0.0, 3.0, 0.0]])
    for n, repl in [(1, False), (2, False), (5, True)]:
        s = torch.multinomial(p.to(TPU), n, repl).cpu()
        assert s.shape == (2, n) and s.dtype == torch.int64
        assert bool((p.gather(1, s) > 0).all())
    assert torch.multinomial(torch.tensor([0.0, 1.0], device=TPU), 4, True).cpu().tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize("p", [[0.2, 1.5], [0.2, float("nan")], [-0.5, 0.5]])
def test_bernoulli_bad_probabilities(mode, p):
    msg = "Expected p_in >= 0 && p_in <= 1 to be true, but got false."
    deferred(mode, torch.bernoulli, (torch.tensor(p),), RuntimeError, msg)
    deferred(mode, lambda x, q: x.bernoulli_(q), (torch.empty(2), torch.tensor(p)), RuntimeError, msg)


def test_bernoulli_valid(mode):
    p = torch.tensor([0.0, 1.0, 0.0, 1.0])
    assert_close(torch.bernoulli(p.to(TPU)), p)
    assert_close(torch.empty(2, 4, device=TPU).bernoulli_(p.to(TPU)), p.expand(2, 4))
    s = torch.bernoulli(torch.full((1000,), 0.5, device=TPU)).cpu()
    assert 300 < s.sum() < 700
    # a scalar p is checked on the host, at the call
    at_call(lambda x: x.bernoulli_(1.5), (torch.empty(2),), RuntimeError, "bernoulli_ expects p to be in [0, 1]")


# ---------------------------------------------------------------- memory overlap

PARTIAL = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
           "memory location. Please clone() the tensor before performing the operation.")
INTERNAL = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.")


def test_copy_partial_overlap(mode):
    at_call(lambda a: a.copy_(a.t()), (torch.randn(3, 3),), RuntimeError, PARTIAL)
    at_call(lambda a: a[:5].copy_(a[1:]), (torch.arange(6.0),), RuntimeError, PARTIAL)


def test_copy_internal_overlap(mode):
    at_call(lambda a: a.expand(3, 3).copy_(torch.ones(3, 3)), (torch.zeros(3, 1),), RuntimeError, INTERNAL)
    at_call(lambda a: a.expand(3, 3).copy_(torch.ones(3, 3, device=a.device)), (torch.zeros(3, 1),),
            RuntimeError, INTERNAL)


def test_copy_allowed_overlaps(mode):
    def fn(a):
        a.copy_(a)  # the same tensor
        a.copy_(a.view(3, 3).view(9).view(3, 3))  # the same elements in the same order
        a[:1].copy_(a[2:])  # same storage, disjoint
        a[:, 0].copy_(a[:, 2])
        return a

    x = torch.randn(3, 3)
    assert_close(fn(x.to(TPU)), fn(x.clone()))


@pytest.mark.parametrize("dst, src, msg", [
    ([10, 3, 3], [90], "The size of tensor a (3) must match the size of tensor b (90) at non-singleton dimension 2"),
    ([3], [2, 3], "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    ([], [1], "output with shape [] doesn't match the broadcast shape [1]"),
    ([0], [3], "The size of tensor a (0) must match the size of tensor b (3) at non-singleton dimension 0"),
])
def test_copy_shapes_that_do_not_broadcast(mode, dst, src, msg):
    """Checked at the call, with the CPU's messages, from either device."""
    at_call(lambda d, s: d.copy_(s), (torch.zeros(dst), torch.randn(src)), RuntimeError, msg)
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        torch.zeros(dst, device=TPU).copy_(torch.randn(src))


# ---------------------------------------------------------------- more value preconditions


@pytest.mark.parametrize("x, y, msg", [
    ([0.5, 1.5], [0.0, 1.0], "all elements of input should be between 0 and 1"),
    ([0.5, float("nan")], [0.0, 1.0], "all elements of input should be between 0 and 1"),
    ([0.5, 0.5], [0.0, 2.0], "all elements of target should be between 0 and 1"),
    # the CPU reports the first element where input or target is bad
    ([0.5, -1.0], [2.0, 1.0], "all elements of target should be between 0 and 1"),
    ([-1.0, 0.5], [2.0, 1.0], "all elements of input should be between 0 and 1"),
])
def test_binary_cross_entropy_range(mode, x, y, msg):
    deferred(mode, F.binary_cross_entropy, (torch.tensor(x), torch.tensor(y)), RuntimeError, msg)


def test_binary_cross_entropy_valid(mode):
    x, y = torch.rand(3, 4), torch.rand(3, 4)
    x[0, 0], y[0, 1] = 0.0, 1.0
    assert_close(F.binary_cross_entropy(x.to(TPU), y.to(TPU)), F.binary_cross_entropy(x, y))


@pytest.mark.parametrize("repeats, size, msg", [
    ([1, 2], 5, "allocated size does not match required size"),
    ([1, -1, 2], 5, "allocated size does not match required size"),
    ([1, -1, 2], 2, "repeats can not be negative"),
])
def test_repeat_interleave_output_size(mode, repeats, size, msg):
    fn = lambda r: torch.repeat_interleave(r, output_size=size)  # noqa: E731
    deferred(mode, fn, (torch.tensor(repeats),), RuntimeError, msg)


def test_repeat_interleave_valid(mode):
    r = torch.tensor([2, 0, 3])
    assert_close(torch.repeat_interleave(r.to(TPU), output_size=5), torch.repeat_interleave(r, output_size=5))
    x = torch.randn(3, 2)
    assert_close(x.to(TPU).repeat_interleave(r.to(TPU), dim=0, output_size=5), x.repeat_interleave(r, dim=0))
    # without output_size the size is read from the device: raised at the call
    at_call(torch.repeat_interleave, (torch.tensor([1, -1]),), RuntimeError, "repeats can not be negative")


@pytest.mark.parametrize("values, n, msg", [
    ([1, -1, 2], 3, "Class values must be non-negative."),
    ([1, 5, 2], 3, "Class values must be smaller than num_classes."),
    ([1, 5, -2], 3, "Class values must be non-negative."),
])
def test_one_hot_class_values(mode, values, n, msg):
    deferred(mode, lambda t: F.one_hot(t, n), (torch.tensor(values),), RuntimeError, msg)


def test_one_hot_valid_and_host_checks(mode):
    t = torch.tensor([[1, 0], [3, 2]])
    assert_close(F.one_hot(t.to(TPU)), F.one_hot(t))
    assert_close(F.one_hot(t.to(TPU), 6), F.one_hot(t, 6))
    assert_close(F.one_hot(torch.tensor([], dtype=torch.long, device=TPU), 3), F.one_hot(torch.tensor([]).long(), 3))
    # an inferred class count reads the maximum: raised at the call
    at_call(F.one_hot, (torch.tensor([1, -1, 2]),), RuntimeError, "Class values must be non-negative.")
    at_call(lambda t: F.one_hot(t, -2), (torch.tensor([0, 1]),), RuntimeError,
            "Class values must be smaller than num_classes.")
    at_call(F.one_hot, (torch.tensor([], dtype=torch.long),), RuntimeError,
            "Can not infer total number of classes from empty tensor.")


@pytest.mark.parametrize("fn", [
    lambda m, s: torch.normal(m, s),
    lambda m, s: torch.normal(0.5, s),
    lambda m, s: torch.normal(m, s, out=torch.empty(3, device=m.device)),
])
@pytest.mark.parametrize("std", [[1.0, -1.0, 2.0], [1.0, float("nan"), 2.0]])
def test_normal_negative_std(mode, fn, std):
    # PyTorch's normal reads std's minimum on the host on every device: at the call.
    at_call(fn, (torch.zeros(3), torch.tensor(std)), RuntimeError, "normal expects all elements of std >= 0.0")


def test_normal_valid_std(mode):
    s = torch.normal(torch.zeros(2000, device=TPU), torch.tensor([0.0, 2.0], device=TPU).repeat(1000)).cpu()
    assert bool((s[0::2] == 0).all()) and 1.5 < float(s[1::2].std()) < 2.5
    # a scalar std is checked on the host, at the call
    at_call(lambda m: torch.normal(m, -1.0), (torch.zeros(2),), RuntimeError, "normal expects std >= 0.0")


# the CPU raises these from its kernels' overlap checks; so does the tpu, at the call
OVERLAPS = [
    ("index_put_ value", lambda a: a.index_put_((torch.tensor([0], device=a.device),), a[1:2].t().reshape(1, 3)),
     PARTIAL),
    ("index_put_ row", lambda a: a.index_put_((torch.tensor([0], device=a.device),), a[0]), PARTIAL),
    ("index_select out", lambda a: torch.index_select(a, 0, torch.tensor([0, 1, 2], device=a.device), out=a.t()),
     PARTIAL),
    ("take out", lambda a: torch.take(a, torch.tensor([0, 1, 2], device=a.device), out=a[0]), PARTIAL),
    ("masked_select out", lambda a: torch.masked_select(a, a > -100, out=a.view(9)), PARTIAL),
    ("addmm out", lambda a: torch.addmm(a, a, a, out=a.t()), PARTIAL),
    ("cumsum out", lambda a: torch.cumsum(a, 0, out=a.t()), PARTIAL),
    ("cumprod out", lambda a: torch.cumprod(a, 1, out=a.t()), PARTIAL),
    ("sort out", lambda a: torch.sort(a, 0, out=(a.t(), torch.empty(3, 3, dtype=torch.long, device=a.device))),
     PARTIAL),
    ("masked_scatter_ expanded", lambda a: a[:, :1].expand(3, 3).masked_scatter_(
        torch.ones(3, 3, dtype=torch.bool, device=a.device), torch.ones(9, device=a.device)), INTERNAL),
    ("normal_ expanded", lambda a: a[:, :1].expand(3, 3).normal_(), INTERNAL),
    ("add_ transposed", lambda a: a.add_(a.t()), PARTIAL),
    ("mul_ expanded", lambda a: a[:, :1].expand(3, 3).mul_(2), INTERNAL),
    ("index_copy_ source", lambda a: a.index_copy_(0, torch.tensor([0], device=a.device), a[1:2]), PARTIAL),
    ("scatter_ source", lambda a: a.scatter_(0, torch.tensor([[0, 1, 2]], device=a.device), a[1:2]), PARTIAL),
    ("cat out", lambda a: torch.cat([a[:1], a[1:2]], out=a[1:3]), PARTIAL),
    ("where out", lambda a: torch.where(a > 0, a.t(), a, out=a), PARTIAL),
    ("where out broadcast row", lambda a: torch.where(a > 0, a[0], a, out=a), PARTIAL),
    ("where out condition", lambda a: (lambda m: torch.where(m.t(), m, m, out=m))(a > 0), PARTIAL),
    ("where out expanded", lambda a: torch.where(a[0] > 0, a, a, out=a[:1].expand(3, 3)), INTERNAL),
]


@pytest.mark.parametrize("name, fn, msg", OVERLAPS, ids=[o[0] for o in OVERLAPS])
def test_memory_overlap(mode, name, fn, msg):
    at_call(fn, (torch.randn(3, 3),), RuntimeError, msg)


def test_where_out_full_overlap(mode):
    # an input that is out itself is fine, as on the CPU
    def fn(a, b):
        torch.where(a > 0, a, b, out=a)
        torch.where(b > 0, a, b, out=b)
        return a, b

    x, y = torch.randn(3, 4), torch.randn(3, 4)
    assert_close(fn(x.to(TPU), y.to(TPU)), fn(x.clone(), y.clone()))


def test_masked_fill_mask_overlap(mode):
    at_call(lambda m: m.masked_fill_(m.t(), True), (torch.rand(3, 3) > 0.5,), RuntimeError, PARTIAL)


def test_no_overlap_no_error(mode):
    def fn(a, b):
        i = torch.tensor([2, 0], device=a.device)
        a.index_put_((i,), b[:2])
        a[i] = a[1].clone()
        a[:, 0] = a[:, 1]
        a.masked_fill_(b > 0, 0.5)
        c = torch.empty(3, 3, device=a.device)
        torch.cumsum(a, 0, out=c)
        torch.addmm(a[0], b, c, out=torch.empty(3, 3, device=a.device))
        torch.sort(a, 1, out=(c, torch.empty(3, 3, dtype=torch.long, device=a.device)))
        torch.index_select(a, 1, i, out=b[:, :2])
        return a, b, c

    x, y = torch.randn(3, 3), torch.randn(3, 3)
    assert_close(fn(x.to(TPU), y.to(TPU)), fn(x.clone(), y.clone()), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("value, args, msg", [
    (0, (), "Expected Tensor with single nonzero value, but got zero"),
    (False, (), "Expected Tensor with single nonzero value, but got zero"),
    (0.0, ("boom",), "boom"),
    (0, ("",), "Assertion is failed"),
])
def test_assert_async(mode, value, args, msg):
    def fn(t):
        torch._assert_async(t, *args)
        return t

    deferred(mode, fn, (torch.tensor(value),), RuntimeError, msg)


def test_assert_async_passes_and_checks_sizes(mode):
    for v in [1, True, 0.5, float("nan")]:
        torch._assert_async(torch.tensor(v, device=TPU))
    torch.tpu.synchronize()
    at_call(torch._assert_async, (torch.tensor([1, 2]),), RuntimeError,
            "Boolean value of Tensor with more than one value is ambiguous")
    assert not any("_assert_async" in k for k in torch_pjrt.fallback_stats())


# ---------------------------------------------------------------- integer division by zero

DIVISIONS = [
    ("div floor", lambda a, b: torch.div(a, b, rounding_mode="floor")),
    ("div trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc")),
    ("floor_divide", lambda a, b: a // b),
    ("remainder", lambda a, b: a % b),
    ("fmod", torch.fmod),
    ("floor_divide_", lambda a, b: a.floor_divide_(b)),
    ("remainder_", lambda a, b: a.remainder_(b)),
    ("div_ trunc", lambda a, b: a.div_(b, rounding_mode="trunc")),
    ("fmod out", lambda a, b: torch.fmod(a, b, out=torch.empty_like(a))),
]


@pytest.mark.parametrize("name, fn", DIVISIONS, ids=[d[0] for d in DIVISIONS])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_integer_division_by_zero(mode, name, fn, dtype):
    a = torch.randint(1, 50, (3, 4), dtype=dtype)
    b = torch.randint(1, 9, (3, 4), dtype=dtype)
    b[torch.randint(0, 3, ()), torch.randint(0, 4, ())] = 0
    deferred(mode, fn, (a, b), RuntimeError, "ZeroDivisionError")
    # a broadcast divisor, and a Python scalar one (checked at the call)
    deferred(mode, fn, (a, b[1:2] * 0), RuntimeError, "ZeroDivisionError")
    at_call(lambda x: fn(x, 0), (a,), RuntimeError, "ZeroDivisionError")


def test_division_by_zero_allowed(mode):
    a, b = torch.randint(-20, 20, (5,)), torch.tensor([3, -2, 0, 1, 5])
    # floating results and true division give inf / nan like the CPU
    assert_close(a.to(TPU) / b.to(TPU), a / b)
    assert_close(torch.div(a.double().to(TPU), b.to(TPU), rounding_mode="floor"), torch.div(a.double(), b,
                                                                                           rounding_mode="floor"))
    assert_close(a.to(TPU) % 2.5, a % 2.5)
    # no zero divisor: the values, in every integer dtype
    c = torch.tensor([3, -2, 7, 1, 5])
    for dt in [torch.int64, torch.int32, torch.int8]:
        x, y = a.to(dt), c.to(dt)
        assert_close(x.to(TPU) // y.to(TPU), x // y)
        assert_close(torch.fmod(x.to(TPU), y.to(TPU)), torch.fmod(x, y))
        assert_close(x.to(TPU) % 3, x % 3)
    # an empty result divides nothing
    e = torch.empty(0, dtype=torch.long)
    assert (e.to(TPU) // torch.zeros(1, dtype=torch.long, device=TPU)).cpu().shape == (0,)


@pytest.mark.parametrize("rounding", ["floor", "trunc"])
def test_rounding_division_of_bools(mode, rounding):
    at_call(lambda a: torch.div(a, a, rounding_mode=rounding), (torch.rand(4) > 0.5,), NotImplementedError,
            f'"div_{rounding}_cpu" not implemented for \'Bool\'')


# ---------------------------------------------------------------- index_add's two CPU errors

INDEX_ADDS = [
    # (self shape, dim, source shape, index dtype, alpha): the CPU hands the
    # first / last dimension of a 2-D or wider self to scatter_add
    ((3, 4), 0, (1, 4), torch.int64, 1, RuntimeError, "index {v} is out of bounds for dimension 0 with size 3"),
    ((3, 4), 1, (3, 1), torch.int64, 1, RuntimeError, "index {v} is out of bounds for dimension 1 with size 4"),
    ((3, 4, 2), 2, (3, 4, 1), torch.int64, 1, RuntimeError, "index {v} is out of bounds for dimension 2 with size 2"),
    # ... and runs its own loop otherwise
    ((3, 4, 2), 1, (3, 1, 2), torch.int64, 1, IndexError, "index out of range in self"),
    ((3, 4), 0, (1, 4), torch.int64, 2, IndexError, "index out of range in self"),
    ((3, 4), 0, (1, 4), torch.int32, 1, IndexError, "index out of range in self"),
    ((5,), 0, (1,), torch.int64, 1, IndexError, "index out of range in self"),
]


@pytest.mark.parametrize("shape, dim, sshape, idt, alpha, exc, msg", INDEX_ADDS)
@pytest.mark.parametrize("bad", [9, -1])
def test_index_add_out_of_range(mode, shape, dim, sshape, idt, alpha, exc, msg, bad):
    fn = lambda x, i, s: x.index_add(dim, i, s, alpha=alpha)  # noqa: E731
    args = (torch.randn(shape), torch.tensor([bad], dtype=idt), torch.randn(sshape))
    deferred(mode, fn, args, exc, msg.format(v=bad))


def test_index_add_empty_self_unchecked(mode):
    # with more than one dimension the CPU never looks at the index of an empty self
    x, i, s = torch.randn(3, 0), torch.tensor([9]), torch.randn(1, 0)
    assert_close(x.to(TPU).index_add(0, i.to(TPU), s.to(TPU)), x.index_add(0, i, s))


# ---------------------------------------------------------------- histc's data range

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("values", [[1.0, NAN, 2.0], [INF, 1.0], [0.1, -INF, 0.5], [INF, INF], [-INF], [NAN, INF]])
def test_histc_range_not_finite(mode, dtype, values):
    x = torch.tensor(values, dtype=dtype)
    try:
        torch.histc(x, 4)
    except RuntimeError as e:
        msg = str(e).split("\n")[0]
    assert msg.startswith("torch.histc: range of [")
    deferred(mode, lambda t: torch.histc(t, 4), (x,), RuntimeError, msg)


def test_histc_valid(mode):
    x = torch.randn(50) * 3
    assert_close(torch.histc(x.to(TPU), 7), torch.histc(x, 7))
    assert_close(torch.histc(torch.full((4,), 2.0, device=TPU), 3), torch.histc(torch.full((4,), 2.0), 3))
    # explicit edges: non-finite data is only not counted
    y = torch.tensor([0.5, NAN, INF, 2.5])
    assert_close(torch.histc(y.to(TPU), 3, 0, 3), torch.histc(y, 3, 0, 3))
    at_call(lambda t: torch.histc(t, 3, 0, INF), (y,), RuntimeError, "torch.histc: range of [0, inf] is not finite")


# ---------------------------------------------------------------- quantile's q


@pytest.mark.parametrize("fn", [torch.quantile, torch.nanquantile,
                                lambda x, q: torch.quantile(x, q, dim=1, keepdim=True),
                                lambda x, q: torch.nanquantile(x, q, out=torch.empty(q.shape, device=x.device))])
@pytest.mark.parametrize("q", [[0.5, 1.5], [-0.25], [0.5, float("nan")], 2.0])
def test_quantile_q_out_of_range(mode, fn, q):
    x = torch.randn(3, 5)
    x[0, 1] = float("nan")
    deferred(mode, fn, (x, torch.tensor(q)), RuntimeError, "quantile() q values must be in the range [0, 1]")


def test_quantile_valid_and_host_checks(mode):
    x, q = torch.randn(4, 6), torch.rand(3)
    assert_close(torch.quantile(x.to(TPU), q.to(TPU), dim=1), torch.quantile(x, q, dim=1))
    xt, xc = x.to(TPU).requires_grad_(), x.clone().requires_grad_()
    torch.nanquantile(xt, q.to(TPU), dim=0).sum().backward()
    torch.nanquantile(xc, q, dim=0).sum().backward()
    assert_close(xt.grad, xc.grad)
    with torch.inference_mode():
        assert_close(torch.quantile(x.to(TPU), q.to(TPU)), torch.quantile(x, q))
    # a float q and the composite's own metadata checks raise at the call
    at_call(lambda t: torch.quantile(t, 1.5), (x,), RuntimeError, "quantile() q must be in the range [0, 1] but got 1.5")
    at_call(lambda t, p: torch.quantile(t, p), (x, torch.tensor([1, 2])), RuntimeError,
            "quantile() q tensor must be same dtype as the input tensor")


def test_quantile_compiles(mode):
    # torch.compile traces quantile with fake tensors through the same
    # registration: they go to the composite unchecked, as before
    def f(x, q):
        return torch.quantile(x, q, dim=1).sum() * 2

    x, q = torch.randn(4, 6), torch.tensor([0.25, 0.75])
    xt, xc = x.to(TPU).requires_grad_(), x.clone().requires_grad_()
    r = torch.compile(f, backend="tpu")(xt, q.to(TPU))
    r.backward()
    f(xc, q).backward()
    assert_close(r.detach(), f(x, q))
    assert_close(xt.grad, xc.grad)
