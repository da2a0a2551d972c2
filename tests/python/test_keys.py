"""Cache keys of compiled graphs: what a graph bakes into its program
(Python float arguments, complex host scalars) is keyed exactly, so two calls
differing only past a float's sixth decimal, or in the sign of a zero, get
programs of their own and the CPU's answers."""
import torch
import torch.fx

import torch_pjrt.compiler
from conftest import TPU

torch._dynamo.config.recompile_limit = 64


def _graph(fn, name):
    # A captured graph as the backend receives it, called with the
    # arguments given: a Python float argument is baked into the program.
    return torch_pjrt.compiler._Program(torch.fx.symbolic_trace(fn), name)


def _exact(got, want):
    got = got.cpu()
    assert got.dtype == want.dtype
    assert torch.equal(torch.view_as_real(got) if got.is_complex() else got,
                       torch.view_as_real(want) if want.is_complex() else want), (got, want)


def test_float_arguments_past_the_sixth_decimal_get_their_own_program():
    g = _graph(lambda x, s: x * s, "keys_float_mul")
    x = torch.full((4,), 3.0, dtype=torch.float64)
    for s in (1.0000001, 1.0000002, 1.0000001, 1.0000000000000002):
        (y,) = g(x.to(TPU), s)
        _exact(y, x * s)


def test_small_float_arguments_get_their_own_program():
    g = _graph(lambda x, s: x + s, "keys_float_add")
    x = torch.zeros(3, dtype=torch.float64)
    for s in (1e-7, 2e-7, 1e-7):
        (y,) = g(x.to(TPU), s)
        _exact(y, x + s)


def test_signed_zero_arguments_get_their_own_program():
    g = _graph(lambda x, s: x * s, "keys_signed_zero")
    x = torch.tensor([1.0, -2.0], dtype=torch.float64)
    for s in (0.0, -0.0, 0.0):
        (y,) = g(x.to(TPU), s)
        assert torch.equal(torch.signbit(y.cpu()), torch.signbit(x * s)), s


def test_complex_host_scalars_past_the_sixth_decimal_get_their_own_program():
    # A complex 0-d CPU tensor is baked into the compiled program (its
    # value is part of the graph's signature).
    f = torch.compile(lambda x, c: x * c, backend="tpu")
    x = torch.full((4,), 3.0 - 1.0j, dtype=torch.complex128)
    for c in (1.0000001 + 0j, 1.0000002 + 0j, 1 + 1.0000001j, 1 + 1.0000002j, 1.0000001 + 0j):
        c = torch.tensor(c, dtype=torch.complex128)
        _exact(f(x.to(TPU), c), x * c)


def test_baked_float_constants_past_the_sixth_decimal():
    x = torch.full((4,), 3.0, dtype=torch.float64)
    a = torch.compile(lambda x: x * 1.0000001, backend="tpu")
    b = torch.compile(lambda x: x * 1.0000002, backend="tpu")
    _exact(a(x.to(TPU)), x * 1.0000001)
    _exact(b(x.to(TPU)), x * 1.0000002)
    c = torch.compile(lambda x: x + 1e-7, backend="tpu")
    d = torch.compile(lambda x: x + 2e-7, backend="tpu")
    z = torch.zeros(3, dtype=torch.float64)
    _exact(c(z.to(TPU)), z + 1e-7)
    _exact(d(z.to(TPU)), z + 2e-7)
