"""The activation family: relu, threshold, gelu, silu, mish, elu, hardtanh,
softplus, the shrinks, leaky_relu, logit, log_sigmoid, glu, PReLU and their
gradients. Every op is compared with PyTorch on the CPU on fresh random
inputs and must not touch the CPU fallback."""
import random

import pytest
import torch
import torch.nn.functional as F

from conftest import TPU, assert_close, check

FLOATS = [torch.float32, torch.bfloat16, torch.float16]
NAN, INF = float("nan"), float("inf")


def rand_shape(rank, lo=1, hi=5):
    return [random.randint(lo, hi) for _ in range(rank)]


# Fresh every run, shared by the tests of a run so that the programs moving
# tensors between host and device compile once.
SHAPE2 = rand_shape(2, 2, 6)
SHAPE3 = rand_shape(3, 2, 5)


def rand(shape, dtype=torch.float32, lo=-3.0, hi=3.0):
    """Uniform in [lo, hi) (floats) or random integers in [lo, hi] (ints, bool)."""
    if dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if dtype.is_floating_point:
        return (torch.rand(shape) * (hi - lo) + lo).to(dtype)
    return torch.randint(int(lo), int(hi) + 1, shape, dtype=dtype)


def with_specials(x):
    """x with NaN, +-inf, +-0 written in (floats only)."""
    if x.dtype.is_floating_point and x.numel() >= 6:
        flat = x.view(-1)
        flat[:6] = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 1.0], dtype=x.dtype)
    return x


def grads(fn, *inputs, atol=1e-4, rtol=1e-4):
    """Compares d(sum(fn * g))/d(inputs) on the tpu and the CPU (float32)."""
    cpu = [x.detach().clone().requires_grad_(True) for x in inputs]
    tpu = [x.detach().to(TPU).requires_grad_(True) for x in inputs]
    out_c = fn(*cpu)
    g = torch.randn_like(out_c)
    out_c.backward(g)
    fn(*tpu).backward(g.to(TPU))
    for c, t in zip(cpu, tpu):
        assert_close(t.grad, c.grad, atol=atol, rtol=rtol)


def noncontig(x):
    """A non-contiguous view with x's values (a transposed copy)."""
    return x.transpose(0, -1).contiguous().transpose(0, -1) if x.dim() > 1 else x


ACTIVATIONS = {
    "relu": F.relu,
    "relu6": F.relu6,
    "threshold": lambda x: F.threshold(x, 0.3, -2.0),
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
    "mish": F.mish,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "elu": lambda x: F.elu(x, 0.7),
    "selu": F.selu,
    "celu": lambda x: F.celu(x, 1.3),
    "hardtanh": lambda x: F.hardtanh(x, -0.5, 1.5),
    "softplus": lambda x: F.softplus(x, beta=2.0, threshold=3.0),
    "logsigmoid": F.logsigmoid,
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "hardshrink": lambda x: F.hardshrink(x, 0.5),
    "softshrink": lambda x: F.softshrink(x, 1.5),
    "tanhshrink": F.tanhshrink,
    "softsign": F.softsign,
}

INPLACE_ACTIVATIONS = {
    "relu": lambda x: F.relu(x, inplace=True),
    "relu_": torch.relu_,
    "threshold": lambda x: F.threshold(x, 0.1, 5.0, inplace=True),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1, inplace=True),
    "elu": lambda x: F.elu(x, 1.1, inplace=True),
    "selu": lambda x: F.selu(x, inplace=True),
    "hardtanh": lambda x: F.hardtanh(x, -1.0, 0.5, inplace=True),
    "silu": lambda x: F.silu(x, inplace=True),
    "mish": lambda x: F.mish(x, inplace=True),
    "gelu": lambda x: torch.ops.aten.gelu_(x, approximate="tanh"),
    "hardsigmoid": lambda x: F.hardsigmoid(x, inplace=True),
    "hardswish": lambda x: F.hardswish(x, inplace=True),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_forward(name):
    fn = ACTIVATIONS[name]
    shape = SHAPE3
    for dt in FLOATS:
        check(fn, rand(shape, dt, -6, 6))
    check(lambda x: fn(x.transpose(0, 2)), rand(shape, lo=-6, hi=6))
    check(fn, rand([], lo=-6, hi=6))
    special = with_specials(rand([3, 4], lo=-30, hi=30))
    if name.startswith("gelu"):
        # The CPU's vectorized erf turns gelu(+-inf) into NaN (its scalar
        # path gives +-inf); we give +-inf.
        special = special.nan_to_num(posinf=80.0, neginf=-80.0)
    check(fn, special)


@pytest.mark.parametrize("name", list(INPLACE_ACTIVATIONS))
def test_activation_inplace(name):
    fn = INPLACE_ACTIVATIONS[name]
    check(fn, rand([4, 5], lo=-4, hi=4))
    check(lambda x: fn(x.t()[1:]), rand([4, 5], lo=-4, hi=4))
    check(fn, rand([4, 5], torch.bfloat16, -4, 4))


def test_threshold_compares_half_inputs_in_float():
    # bf16(0.3) == 0.30078125 > 0.3: the CPU keeps it (compares in float).
    x = torch.tensor([0.30078125, 0.296875, 0.3125, -1.0], dtype=torch.bfloat16)
    check(lambda x: F.threshold(x, 0.3, -2.0), x)
    check(lambda x: F.threshold(x, 0.3, -2.0), x.half())
    g = torch.ones_like(x)
    check(lambda x, g: torch.ops.aten.threshold_backward(g, x, 0.3), x, g)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_activation_gradient(name, dtype):
    fn = ACTIVATIONS[name]
    x = rand(SHAPE2, dtype, -4, 4)
    g = rand(list(x.shape), dtype)
    xc, xt = x.clone().requires_grad_(), x.to(TPU).requires_grad_()
    fn(xc).backward(g)
    yt = fn(xt)
    yt.backward(g.to(TPU))
    assert_close(yt.detach(), fn(x))
    assert_close(xt.grad, xc.grad)


def test_activation_out_variants():
    x, g = rand([3, 4], lo=-4, hi=4), rand([3, 4])
    aten = torch.ops.aten
    cases = [
        (lambda x, o: aten.threshold.out(x, 0.5, 1.0, out=o), (x,)),
        (lambda x, o: aten.gelu.out(x, approximate="tanh", out=o), (x,)),
        (lambda x, o: aten.silu.out(x, out=o), (x,)),
        (lambda x, o: aten.mish.out(x, out=o), (x,)),
        (lambda x, o: aten.leaky_relu.out(x, 0.3, out=o), (x,)),
        (lambda x, o: aten.elu.out(x, 1.0, 1.5, 0.5, out=o), (x,)),
        (lambda x, o: aten.hardtanh.out(x, -1.0, 2.0, out=o), (x,)),
        (lambda x, o: aten.softplus.out(x, 1.5, 10.0, out=o), (x,)),
        (lambda g, x, o: aten.threshold_backward.grad_input(g, x, 0.2, grad_input=o), (g, x)),
        (lambda g, x, o: aten.gelu_backward.grad_input(g, x, approximate="none", grad_input=o), (g, x)),
        (lambda g, x, o: aten.silu_backward.grad_input(g, x, grad_input=o), (g, x)),
        (lambda g, x, o: aten.sigmoid_backward.grad_input(g, x, grad_input=o), (g, x)),
        (lambda g, x, o: aten.tanh_backward.grad_input(g, x, grad_input=o), (g, x)),
        (lambda g, x, o: aten.leaky_relu_backward.grad_input(g, x, 0.1, False, grad_input=o), (g, x)),
        (lambda g, x, o: aten.elu_backward.grad_input(g, 1.0, 1.0, 1.0, True, x, grad_input=o), (g, x)),
        (lambda g, x, o: aten.hardtanh_backward.grad_input(g, x, -1.0, 1.0, grad_input=o), (g, x)),
        (lambda g, x, o: aten.softplus_backward.grad_input(g, x, 1.0, 20.0, grad_input=o), (g, x)),
        # the CPU kernel reads the forward's buffer exp(-|x|); ours recomputes it
        (lambda g, x, o: aten.log_sigmoid_backward.grad_input(g, x, torch.exp(-x.abs()), grad_input=o), (g, x)),
    ]
    for fn, args in cases:
        check(fn, *args, torch.empty(0))
    check(lambda g, x: aten.elu_backward(g, 0.5, 1.2, 0.8, False, x), g, x)
    check(lambda g, x: aten.mish_backward(g, x), g, x)
    # the kinks of hardsigmoid / hardswish
    kinks = torch.tensor([-3.5, -3.0, -2.5, 0.0, 2.5, 3.0, 3.5])
    for dt in [torch.float32, torch.bfloat16]:
        check(aten.hardswish_backward, rand([7], dt), kinks.to(dt))
        check(aten.hardsigmoid_backward, rand([7], dt), kinks.to(dt))
    check(lambda g, x: aten.log_sigmoid_backward(g, x, torch.exp(-x.abs())), g, x)
    check(lambda g, x: aten.leaky_relu_backward(g, x, 0.1, True), g, x)


def test_activation_integer_inputs():
    x = rand([3, 4], torch.int64, -5, 5)
    check(F.relu, x)
    check(lambda x: F.threshold(x, 1, 7), x)
    check(lambda x: F.hardtanh(x, -2, 3), x)
    check(lambda x: torch.relu_(x), x)
    for fn in [F.gelu, F.silu, F.leaky_relu, F.elu, F.softplus, F.mish]:
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            fn(x.to(TPU))
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        F.relu(rand([3], torch.bool).to(TPU))
    with pytest.raises(RuntimeError, match="approximate argument"):
        F.gelu(rand([3]).to(TPU), approximate="fast")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gelu_silu_relu_train_step_native(dtype):
    """The MLP nonlinearities run forward and backward without a fallback."""
    x = rand([8, 16], dtype)
    for fn in [F.gelu, lambda t: F.gelu(t, approximate="tanh"), F.silu, F.relu]:
        xc, xt = x.clone().requires_grad_(), x.to(TPU).requires_grad_()
        g = rand([8, 16], dtype)
        fn(xc).backward(g)
        fn(xt).backward(g.to(TPU))
        assert_close(xt.grad, xc.grad)


# ---------------------------------------------------------------- logit

def test_logit():
    x = rand([4, 6], lo=-0.2, hi=1.2)
    x.view(-1)[:3] = torch.tensor([0.0, 1.0, 0.5])
    for eps in [None, 0.0, 0.1, -1.0]:
        check(lambda x: torch.logit(x, eps), x)
        check(lambda x: torch.logit(x, eps), x.to(torch.bfloat16))
        xc, xt = x.clone().requires_grad_(), x.to(TPU).requires_grad_()
        g = rand([4, 6])
        torch.logit(xc, eps).backward(g)
        torch.logit(xt, eps).backward(g.to(TPU))
        assert_close(xt.grad, xc.grad)
    check(lambda x: x.t().logit_(0.2), x)
    check(lambda x, o: torch.logit(x, 0.05, out=o), x, torch.empty(0))
    check(torch.logit, rand([3, 4], torch.int64, 0, 1))


# ---------------------------------------------------------------- glu

@pytest.mark.parametrize("dtype", FLOATS)
def test_glu(dtype):
    shape = rand_shape(3, 1, 4)
    dim = random.randint(-3, 2)
    shape[dim] *= 2
    x = rand(shape, dtype)
    check(lambda t: torch.nn.functional.glu(t, dim), x)
    check(lambda t: torch.nn.functional.glu(t, 0), noncontig(rand([4, 3], dtype)))
    out = torch.empty(0, dtype=dtype, device=TPU)
    torch._C._nn.glu(x.to(TPU), dim, out=out)
    assert_close(out, torch.nn.functional.glu(x, dim))
    if dtype == torch.float32:
        grads(lambda t: torch.nn.functional.glu(t, dim), x)
    with pytest.raises(RuntimeError, match="even"):
        torch.nn.functional.glu(torch.ones(3, device=TPU, dtype=dtype))

# ---------------------------------------------------------------- prelu

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_prelu(dtype):
    x = rand([2, 3, 4], dtype, -4, 4)
    for w in [rand([3], dtype), rand([1], dtype)]:
        check(F.prelu, x, w)
    check(torch.ops.aten._prelu_kernel, x, rand([3, 1], dtype))
    if dtype == torch.float32:
        grads(F.prelu, x, rand([3]))
    with pytest.raises(RuntimeError, match="prelu: expected a floating point tensor"):
        torch.ops.aten._prelu_kernel(torch.ones(3, dtype=torch.int64, device=TPU),
                                     torch.ones(1, dtype=torch.int64, device=TPU))
