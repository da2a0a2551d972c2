"""Shared helpers: every test compares the tpu result with PyTorch on the CPU
on fresh random inputs."""
import os

import pytest
import torch

import torch_pjrt  # noqa: F401  (registers the tpu device)

TPU = torch.device("tpu")

# Tolerances by dtype for results computed in a different order than the CPU.
TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-10, 1e-10),
    torch.bfloat16: (2e-2, 2e-2),
    torch.float16: (2e-3, 2e-3),
}


def to_tpu(x):
    """Moves tensors (and nested lists/tuples/dicts of them) to the tpu."""
    if isinstance(x, torch.Tensor):
        return x.to(TPU)
    if isinstance(x, (list, tuple)):
        return type(x)(to_tpu(v) for v in x)
    if isinstance(x, dict):
        return {k: to_tpu(v) for k, v in x.items()}
    return x


def to_cpu(x):
    if isinstance(x, torch.Tensor):
        return x.cpu()
    if isinstance(x, (list, tuple)):
        return type(x)(to_cpu(v) for v in x)
    if isinstance(x, dict):
        return {k: to_cpu(v) for k, v in x.items()}
    return x


def assert_close(actual, expected, atol=None, rtol=None, equal_nan=True):
    """actual: computed on tpu (moved back); expected: the CPU result."""
    actual = to_cpu(actual)
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"expected a tensor, got {type(actual)}"
        assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
        assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
        a, r = TOL.get(expected.dtype, (0, 0))
        torch.testing.assert_close(actual, expected, atol=a if atol is None else atol,
                                   rtol=r if rtol is None else rtol, equal_nan=equal_nan)
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_close(a, e, atol, rtol, equal_nan)
    else:
        assert actual == expected, f"{actual} != {expected}"


def check(fn, *args, atol=None, rtol=None, **kwargs):
    """Runs fn on CPU args and on tpu copies of them; compares the results
    and, for in-place ops, the mutated arguments."""
    cpu_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    tpu_args = to_tpu(list(args))
    expected = fn(*cpu_args, **kwargs)
    actual = fn(*tpu_args, **to_tpu(kwargs))
    assert_close(actual, expected, atol, rtol)
    for a, e in zip(tpu_args, cpu_args):
        if isinstance(e, torch.Tensor):
            assert_close(a, e, atol, rtol)
    return actual


@pytest.fixture(autouse=True)
def _fresh_seed(request):
    """Fresh random inputs every run; the seed is printed on failure."""
    seed = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(seed)
    request.node.user_properties.append(("seed", seed))
    yield


def pytest_runtest_makereport(item, call):
    if call.excinfo is not None:
        for k, v in item.user_properties:
            if k == "seed":
                call.excinfo.value.args = call.excinfo.value.args  # keep message
                item.add_report_section(call.when, "seed", str(v))
