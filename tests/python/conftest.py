"""Shared helpers and the guards every test runs under.

Every test compares the tpu result with PyTorch on the CPU on fresh random
inputs. The guards make the suite test what it claims:
- the pass's eager mode (TORCH_PJRT_EAGER_MODE) is the mode each test starts
  in, no test may leave the mode changed, and the pass ends by reporting (and
  failing on) tests that ran in another mode;
- no op may run through the CPU fallback unless the test declares it with
  `@pytest.mark.allow_fallback("op", ...)`, in the test's process or in any
  process it starts (each writes a report at exit into a folder of the
  test's own, TORCH_PJRT_EXIT_REPORT, which it inherits);
- queued device work is finished inside the test that queued it, so an error
  it raises is that test's failure, never the next one's;
- all randomness (torch, Python's random, numpy) derives from one per-test
  seed, printed on failure; TORCH_PJRT_TEST_SEED=N replays it.

A test whose subject does not depend on the pass's mode (a command-line
tool, an environment variable read in a fresh process, a test that picks
its own modes, the host transport of collectives) is marked
`@pytest.mark.once("why")`: it runs in the strict pass only, and the other
passes report how many they left to it.
"""
import copy
import os
import random
import shutil
import tempfile

import pytest
import torch

import torch_pjrt  # noqa: F401  (registers the tpu device)
from torch_pjrt import _exit_report

# A pass over an installed package (scripts/test_wheel.sh) must not test the
# source tree's copy instead: that would hide a file the wheel left out.
if os.environ.get("TORCH_PJRT_TEST_INSTALLED"):
    _tree = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    _used = os.path.abspath(torch_pjrt.__file__)
    if _used.startswith(_tree + os.sep):
        raise pytest.UsageError(f"TORCH_PJRT_TEST_INSTALLED is set, but torch_pjrt was imported from the tree: {_used}")


def pytest_report_header(config):
    return f"torch_pjrt {torch_pjrt.__version__} from {os.path.dirname(os.path.abspath(torch_pjrt.__file__))}"


TPU = torch.device("tpu")
PASS_MODE = os.environ.get("TORCH_PJRT_EAGER_MODE") or "strict"

# Tolerances by dtype for results computed in a different order than the CPU
# (a few units of the dtype's rounding at magnitudes ~1). Integer and bool
# results are always compared exactly.
TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-10, 1e-10),
    torch.bfloat16: (2e-2, 2e-2),
    torch.float16: (2e-3, 2e-3),
    torch.complex64: (1e-5, 1e-5),
    torch.complex128: (1e-10, 1e-10),
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


def _exact(dtype):
    return not (dtype.is_floating_point or dtype.is_complex)


def assert_close(actual, expected, atol=None, rtol=None, equal_nan=True):
    """actual: computed on the tpu (a tpu tensor, or a structure of them);
    expected: the CPU result. Integer and bool results must be equal."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"expected a tensor, got {type(actual)}"
        assert actual.device.type == "tpu", f"the result under test lives on {actual.device}, not on the tpu"
        actual = actual.cpu()
        assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
        assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
        if _exact(expected.dtype):
            atol = rtol = 0
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


def assert_as_close_as_cpu(actual, cpu_low, reference, factor=2.0):
    """Low-precision results: the tpu's largest error against a float32
    reference may be at most `factor` times the CPU's own largest error in the
    same dtype, plus one rounding step of the dtype at the result's scale. The
    bound comes from what the dtype costs on the CPU, not from a guess."""
    assert actual.device.type == "tpu", f"the result under test lives on {actual.device}"
    assert actual.dtype == cpu_low.dtype and actual.shape == cpu_low.shape
    a, c, r = actual.cpu().float(), cpu_low.float(), reference.float()
    err, cpu_err = (a - r).abs().max().item(), (c - r).abs().max().item()
    step = torch.finfo(actual.dtype).eps * max(r.abs().max().item(), 1e-6)
    assert err <= factor * cpu_err + step, (
        f"{actual.dtype} error against float32 {err:.3g} exceeds {factor} x the CPU's {cpu_err:.3g} + {step:.3g}")


def assert_adamw_steps_match(model, dev, vocab, steps=10, tol=1e-3):
    """`steps` AdamW steps of a causal LM on the CPU and of its copy on the
    tpu, on the same random batches: each loss within `tol` of the CPU's
    (relative), and each parameter after them within `tol` of the CPU's, or,
    where the CPU's own float32 run strays from a float64 one by more, within
    twice that. Adam divides by a gradient's own size, so an element whose
    one gradient is a cancellation at rounding level (a token seen once)
    takes a full step in whichever direction rounding gave it, on any
    float32 device."""
    exact = copy.deepcopy(model).double()
    if hasattr(exact, "set_experts_implementation"):  # the CPU's grouped_mm has no float64
        exact.set_experts_implementation("eager")
    runs = [(model, torch.optim.AdamW(model.parameters(), lr=1e-3), None),
            (dev, torch.optim.AdamW(dev.parameters(), lr=1e-3), TPU),
            (exact, torch.optim.AdamW(exact.parameters(), lr=1e-3), None)]
    for _ in range(steps):
        ids = torch.randint(0, vocab, (2, 8))
        losses = []
        for m, opt, device in runs:
            opt.zero_grad()
            x = ids if device is None else ids.to(device)
            loss = m(x, labels=x).loss
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert abs(losses[1] - losses[0]) <= tol * abs(losses[0]), f"loss {losses[1]} != the CPU's {losses[0]}"
    for (name, p), q, r in zip(model.named_parameters(), dev.parameters(), exact.parameters()):
        p, q, r = p.detach(), q.detach().cpu(), r.detach()
        cpu_err = (p.double() - r).abs()
        allowed = torch.maximum(tol + tol * p.abs().double(), 2 * cpu_err + tol)
        err = (q.double() - p.double()).abs()
        worst = (err - allowed).argmax()
        assert bool((err <= allowed).all()), (
            f"{name}[{worst}]: tpu {q.flatten()[worst]} vs CPU {p.flatten()[worst]} (float64 {r.flatten()[worst]})")


def _base_names(stats):
    return {k.split("::")[-1].split(".")[0] for k in stats}


def fallback_ops():
    """Base names of the ATen ops that ran through the CPU fallback."""
    return _base_names(torch_pjrt.fallback_stats())


def seed_everything(seed):
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed % 2**32)
    except ImportError:
        pass


# ----------------------------------------------------------------- the guards

FIRST_PASS = "strict"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "allow_fallback(*ops): ATen ops (base names) this test expects to run on the CPU fallback")
    config.addinivalue_line(
        "markers", f"once(why): the test does not depend on the pass's eager mode; it runs in the {FIRST_PASS} pass only")
    config.stash[_RUNS] = {}
    config.stash[_LEFT] = 0


def pytest_collection_modifyitems(config, items):
    if PASS_MODE == FIRST_PASS:
        return
    keep, left = [], []
    for item in items:
        marker = item.get_closest_marker("once")
        if marker is not None:
            assert marker.args, f"{item.nodeid}: once() needs a reason"
        (left if marker is not None else keep).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = keep
    config.stash[_LEFT] = len(left)


_RUNS = pytest.StashKey[dict]()
_LEFT = pytest.StashKey[int]()


def _mode_state():
    return torch_pjrt.get_eager_mode(), torch_pjrt._C._thread_eager_mode()


@pytest.fixture(autouse=True)
def _guards(request):
    seed = int(os.environ.get("TORCH_PJRT_TEST_SEED") or int.from_bytes(os.urandom(4), "little"))
    request.node.user_properties.append(("seed", seed))
    seed_everything(seed)

    start = _mode_state()
    counts0 = torch_pjrt._C._mode_counts()
    torch_pjrt.reset_fallback_stats()
    # Processes the test starts report here at exit (they inherit it).
    reports = tempfile.mkdtemp(prefix="torch_pjrt_reports_")
    os.environ["TORCH_PJRT_EXIT_REPORT"] = reports
    try:
        yield
    finally:
        del os.environ["TORCH_PJRT_EXIT_REPORT"]
        children = _exit_report.read(reports)
        shutil.rmtree(reports, ignore_errors=True)
    # Work the test queued belongs to the test: errors surface here.
    torch_pjrt.synchronize()
    counts = {m: n - counts0[m] for m, n in torch_pjrt._C._mode_counts().items()}
    for child in children:
        for m, n in child["ops_per_mode"].items():
            counts[m] += n
    request.config.stash[_RUNS][request.node.nodeid] = (start[0], counts)

    end = _mode_state()
    if end != start:
        torch_pjrt.set_eager_mode(start[0])
        torch_pjrt._C._set_thread_eager_mode(start[1])
        pytest.fail(f"the test changed the eager mode from {start} to {end} (process, thread) "
                    "and did not restore it", pytrace=False)

    marker = request.node.get_closest_marker("allow_fallback")
    allowed = set(marker.args) if marker else set()
    unexpected = fallback_ops() - allowed
    if unexpected:
        pytest.fail(f"ops ran through the CPU fallback: {sorted(unexpected)} ({torch_pjrt.fallback_stats()}); "
                    "make them native or declare them with @pytest.mark.allow_fallback", pytrace=False)
    for child in children:
        unexpected = _base_names(child["fallback"]) - allowed
        if unexpected:
            pytest.fail(f"ops ran through the CPU fallback in a process the test started (pid {child['pid']}, "
                        f"{' '.join(child['argv'])[:200]}): {sorted(unexpected)} ({child['fallback']}); make them native "
                        "or declare them with @pytest.mark.allow_fallback", pytrace=False)


# Packages the suite needs (comma-separated): a test skipped because one is
# missing fails instead, so a broken setup cannot pass as a green run.
REQUIRED = {p for p in os.environ.get("TORCH_PJRT_TEST_REQUIRE", "").split(",") if p}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    if call.excinfo is not None:
        for k, v in item.user_properties:
            if k == "seed":
                item.add_report_section(call.when, "seed", f"replay with TORCH_PJRT_TEST_SEED={v}")
    outcome = yield
    report = outcome.get_result()
    if report.skipped and REQUIRED and call.excinfo is not None:
        reason = str(call.excinfo.value)
        missing = [p for p in REQUIRED if f"could not import '{p}'" in reason]
        if missing:
            report.outcome = "failed"
            report.longrepr = f"required package missing: {missing[0]} ({reason})"


def _mode_report(config):
    """(tests that started outside the pass's mode, tests whose ops all ran
    in other modes, ops per mode) over the tests run."""
    runs = config.stash.get(_RUNS, {})
    wrong_start = sorted(n for n, (m, _) in runs.items() if m != PASS_MODE)
    own_mode = sorted(n for n, (_, c) in runs.items() if sum(c.values()) and not c[PASS_MODE])
    ops = {m: sum(c[m] for _, c in runs.values()) for m in ("debug", "strict", "fused")}
    return runs, wrong_start, own_mode, ops


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    runs, wrong_start, own_mode, ops = _mode_report(config)
    if not runs:
        return
    tr = terminalreporter
    tr.section(f"eager mode of this pass: {PASS_MODE}")
    tr.write_line(f"{len(runs) - len(wrong_start)} of {len(runs)} tests started in {PASS_MODE}; "
                  f"ops recorded per mode: " + ", ".join(f"{m} {n}" for m, n in ops.items()))
    if own_mode:
        tr.write_line(f"{len(own_mode)} tests ran their ops only in modes they chose themselves:")
        for n in own_mode:
            tr.write_line(f"  {n}")
    for n in wrong_start:
        tr.write_line(f"NOT IN {PASS_MODE}: {n} started in {runs[n][0]}", red=True)
    left = config.stash.get(_LEFT, 0)
    if left:
        tr.write_line(f"{left} tests marked once (mode-independent) ran in the {FIRST_PASS} pass, not here")


def pytest_sessionfinish(session, exitstatus):
    _, wrong_start, _, _ = _mode_report(session.config)
    if wrong_start and session.exitstatus == 0:
        session.exitstatus = 1
