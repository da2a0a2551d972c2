"""The OpInfo conformance gate: the quick run (a fixed subset of PyTorch's
OpInfo database, every dtype of the full run, one seeded sample each) is
compared case by case with the committed baseline; a new failure or a move to
the CPU fallback fails, an improvement is reported so the baseline can be
raised. The runner itself must survive workers that crash or hang."""
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("expecttest")

from torch_pjrt.tools import conformance  # noqa: E402

BASELINE = Path(__file__).with_name("conformance_baseline.json")


def _out_dir(tmp_path):
    """Where the gate leaves its report, diff and candidate baseline:
    TORCH_PJRT_CONFORMANCE_OUT/<eager mode> (for CI to keep, one folder per
    pass), else the test's tmp dir."""
    out = os.environ.get("TORCH_PJRT_CONFORMANCE_OUT")
    return Path(out) / (os.environ.get("TORCH_PJRT_EAGER_MODE") or "strict") if out else tmp_path


def test_quick_conformance_matches_baseline(tmp_path, capsys):
    """Runs in every eager mode: the quick run's outcome map is the same in
    strict, fused and debug (measured), so one baseline serves all three and
    a case that only fails when fused shows up as a regression."""
    baseline = conformance.load_baseline(BASELINE)
    out = _out_dir(tmp_path)
    r = conformance.run(quick=True, out=str(out), timeout_per_op=300, log=lambda *_: None)
    if r["platform"] != baseline["platform"]:
        pytest.skip(f"the baseline was recorded on {baseline['platform']}, this run uses {r['platform']}")
    ok, text, diff = conformance.gate(r, BASELINE, str(out))
    summary = (f"quick conformance ({r['eager_mode']} mode): {r['forward_cases']} forward and "
               f"{r['gradient_cases']} gradient cases in {r['seconds']} s; forward {r['forward_pass_rate']:.2%}, "
               f"native {r['native_rate']:.2%}, gradient {r['gradient_pass_rate']:.2%}\n{text}")
    print(summary)
    if ok and diff["improvements"]:
        with capsys.disabled():  # shown even when the test passes: the baseline can be raised
            print("\n" + summary)
    assert ok, text
    assert r["crashed_ops"] == []


def test_baseline_matches_the_quick_selection():
    """The baseline holds exactly the quick run's ops, every dtype of the
    full run that each supports: a change to the selection, to DTYPES or to
    PyTorch's OpInfos shows here, without running anything."""
    import torch
    baseline = conformance.load_baseline(BASELINE)
    assert baseline["quick"] is True
    keys = baseline["cases"]
    by_id = {conformance._op_id(op): op for op in conformance._ops()}
    selected = conformance._select_ops(True, None)
    expected = set()
    for oid in selected:
        supported = by_id[oid].supported_dtypes("cpu")
        expected |= {(oid, d) for d in conformance.DTYPES if getattr(torch, d) in supported}
    assert {tuple(k.split(" ")[:2]) for k in keys} == expected
    assert set(conformance.DTYPES) == {k.split(" ")[1] for k in keys}


def test_quick_selection_and_inputs_are_deterministic():
    """The quick subset depends on each op's id alone (not on the order of
    PyTorch's database), and each case's inputs on its seed alone."""
    import torch
    ids = [conformance._op_id(op) for op in conformance._ops()]
    selected = conformance._select_ops(True, None)
    assert selected == [i for i in ids if conformance._in_quick(i)]
    assert set(selected) == set(i for i in reversed(ids) if conformance._in_quick(i))
    assert 0.1 < len(selected) / len(ids) < 0.25
    by_id = {conformance._op_id(op): op for op in conformance._ops()}
    for oid in selected[:3]:
        seed = conformance._seed(oid, "float32", "forward")
        a, b = (conformance._samples(by_id[oid], "cpu", torch.float32, False, 1, seed) for _ in range(2))
        torch.manual_seed(0)  # the global state in between does not matter
        c = conformance._samples(by_id[oid], "cpu", torch.float32, False, 1, seed)
        for x in (b, c):
            fa, fx = [], []
            a[0].transform(lambda t: fa.append(t) if isinstance(t, torch.Tensor) else t)
            x[0].transform(lambda t: fx.append(t) if isinstance(t, torch.Tensor) else t)
            assert len(fa) == len(fx) and all(torch.equal(p, q) for p, q in zip(fa, fx)), oid


# --------------------------------------------------------- the gate can fail

BASE = {
    "abs float32 forward": "pass native",
    "abs float32 gradient": "pass native",
    "neg int64 forward": "pass native",
    "cos bfloat16 forward": "fail native",
    "sin float16 forward": "pass fallback",
    "exp bool forward": "skip",
    "tan int32 forward": "pass native",
    "erf float16 forward": "fail fallback",
}


def _case(key, outcome):
    op, dtype, kind = key.split(" ")
    if outcome is None:
        return []
    status, _, where = outcome.partition(" ")
    c = {"op": op, "dtype": dtype, "kind": kind, "sample": 0, "seed": 1,
         "status": {"pass": "pass", "fail": "mismatch", "skip": "skip"}[status]}
    if status == "fail":
        c["message"] = f"{op} differs"
    if where:
        c["fallback"] = ["aten::" + op] if where == "fallback" else []
    return [c]


def _report(outcomes):
    cases = [c for k, v in outcomes.items() for c in _case(k, v)]
    return dict(conformance.summarize(cases, True, 0.0), torch="2.13.0+cpu", platform="cpu", eager_mode="strict")


def _baseline_file(tmp_path, cases):
    path = tmp_path / "baseline.json"
    conformance.write_baseline(str(path), _report(cases))
    assert conformance.load_baseline(path)["cases"] == cases  # the file round-trips
    return path


def test_gate_fails_on_a_new_failure_a_move_to_fallback_and_a_lost_case(tmp_path):
    path = _baseline_file(tmp_path, BASE)
    now = dict(BASE)
    now["abs float32 forward"] = "fail native"      # regressed
    now["neg int64 forward"] = "pass fallback"       # moved to the CPU fallback
    del now["tan int32 forward"]                     # no longer runs
    now["cos bfloat16 forward"] = "pass native"      # fixed
    ok, text, _ = conformance.gate(_report(now), path, str(tmp_path / "out"))
    print(text)
    assert not ok
    assert "3 regression(s)" in text
    assert "abs float32 forward: pass native -> fail native (new failure) -- abs differs" in text
    assert "neg int64 forward: pass native -> pass fallback (moved to the CPU fallback)" in text
    assert "tan int32 forward: pass native -> not run (no longer runs)" in text
    assert "cos bfloat16 forward: fail native -> pass native (now passes)" in text
    with open(tmp_path / "out" / "baseline_diff.json") as f:
        diff = json.load(f)
    assert [e["case"] for e in diff["regressions"]] == ["abs float32 forward", "neg int64 forward",
                                                        "tan int32 forward"]
    assert [e["case"] for e in diff["improvements"]] == ["cos bfloat16 forward"]
    # A failing case may still not move to the fallback unnoticed.
    d = conformance.compare({"x float32 forward": "fail native"}, {"x float32 forward": "fail fallback"})
    assert [e["why"] for e in d["regressions"]] == ["moved to the CPU fallback"]
    # Nor may an op crash its worker.
    d = conformance.compare({"x float32 forward": "pass native"}, {"x * forward": "fail crash"})
    assert {e["why"] for e in d["regressions"]} == {"new failure", "no longer runs"}


def test_gate_reports_improvements_and_the_raised_baseline(tmp_path):
    path = _baseline_file(tmp_path, BASE)
    now = dict(BASE)
    now["cos bfloat16 forward"] = "pass native"      # fail -> pass
    now["sin float16 forward"] = "pass native"       # fallback -> native
    now["exp bool forward"] = "pass native"          # skip -> runs and passes
    now["erf float16 forward"] = "fail native"       # still fails, natively now
    out = tmp_path / "out"
    ok, text, _ = conformance.gate(_report(now), path, str(out))
    print(text)
    assert ok
    assert "4 improvement(s)" in text
    with open(out / "baseline_diff.json") as f:
        diff = json.load(f)
    assert diff["regressions"] == []
    assert {e["case"]: e["why"] for e in diff["improvements"]} == {
        "cos bfloat16 forward": "now passes", "sin float16 forward": "now native",
        "exp bool forward": "now passes", "erf float16 forward": "now native"}
    # The run's own map, ready to replace the baseline, has the raised outcomes.
    assert conformance.load_baseline(out / "conformance_baseline.json")["cases"] == now
    # An unchanged run passes quietly; a partial run is compared on its own ops only.
    assert conformance.gate(_report(BASE), path, str(out))[0]
    part = {k: v for k, v in BASE.items() if k.startswith("abs ")}
    assert conformance.gate(_report(part), path, str(out), ops=["abs"])[0]
    assert not conformance.gate(_report(part), path, str(out))[0]
    # A partial run's candidate baseline keeps every other op's cases.
    part["abs float32 forward"] = "fail native"
    conformance.gate(_report(part), path, str(out), ops=["abs"])
    assert conformance.load_baseline(out / "conformance_baseline.json")["cases"] == dict(BASE, **part)


# ------------------------------------------------- a worker that dies or hangs

# How the driver handles its workers does not depend on the eager mode the
# workers run in.
_runner_once = pytest.mark.once("the driver's handling of its workers does not depend on their eager mode")


@_runner_once
def test_runner_kills_hung_and_dead_workers_and_goes_on(tmp_path, monkeypatch):
    ops = conformance._select_ops(False, ["abs", "neg", "exp", "sin"])
    assert len(ops) == 4
    # Worker 1 crashes in its first op; worker 2 runs `ok`, then hangs and is
    # killed; worker 3 dies before it starts any op.
    crash, ok, hang, dead = ops
    monkeypatch.setenv(conformance.FAULTS_ENV, json.dumps(
        {crash: "crash", hang: "hang", dead: "die_before_start"}))
    r = conformance.run(quick=True, out=str(tmp_path), ops=ops, grads=False, timeout_per_op=15,
                        log=lambda *_: None)
    assert r["crashed_ops"] == [crash, hang, dead]
    how = {c["op"]: c for c in r["case_list"] if c.get("crash")}
    assert how[crash]["crash"] == "died" and "exit 5" in how[crash]["message"]
    assert how[hang]["crash"] == "timeout" and "timed out after 15 s" in how[hang]["message"]
    assert how[dead]["crash"] == "died" and "before its first op" in how[dead]["message"]
    # The op after the crash still ran, in a fresh worker, and kept its results.
    assert [c["status"] for c in r["case_list"] if c["op"] == ok and c["dtype"] == "float32"] == ["pass"]
    assert conformance.outcome_map(r["case_list"])[f"{hang} * forward"] == "fail crash"


@_runner_once
def test_runner_gives_up_on_a_worker_that_never_starts(tmp_path, monkeypatch):
    """A worker that dies before its first op every time (a broken
    environment) ends the run with every op charged, never a loop."""
    ops = conformance._select_ops(False, ["abs", "neg", "exp", "sin"])
    monkeypatch.setenv(conformance.FAULTS_ENV, json.dumps({o: "die_before_start" for o in ops}))
    r = conformance.run(quick=True, out=str(tmp_path), ops=ops, grads=False, timeout_per_op=30,
                        log=lambda *_: None)
    assert r["crashed_ops"] == ops
    assert all("before its first op" in c["message"] for c in r["case_list"])


@_runner_once
def test_command_line_exits_nonzero_on_a_regression(tmp_path, capsys):
    """The conformance command with --baseline, on one op (in this process:
    `python -m torch_pjrt conformance` hands its arguments to main): a
    baseline case the run no longer has fails the command and is named."""
    base = tmp_path / "baseline.json"
    base.write_text(json.dumps({"quick": True, "cases": {
        "abs float32 forward": "pass native", "abs float64 forward": "pass native"}}))
    code = conformance.main(["--quick", "--ops", "abs", "--no-grads", "--out", str(tmp_path / "out"),
                             "--baseline", str(base)])
    printed = capsys.readouterr().out
    print(printed[-3000:])
    assert code == 1
    assert "abs float64 forward: pass native -> not run (no longer runs)" in printed
    assert (tmp_path / "out" / "conformance.html").exists()
    assert conformance.load_baseline(tmp_path / "out" / "conformance_baseline.json")["cases"]["abs float32 forward"]


def test_tie_order_is_free_only_where_pytorch_leaves_it_open():
    import torch
    from types import SimpleNamespace
    x = torch.tensor([[3.0, 1.0, 3.0, 2.0]])
    cpu = torch.topk(x, 2)  # values [3, 3], indices [0, 2]
    swapped = (cpu.values, cpu.indices.flip(-1))  # the other order of the tie: fine
    wrong = (cpu.values, torch.tensor([[0, 3]]))  # picks a 2 where a 3 is: not fine
    tol = (0.0, 0.0)

    def case(name, args=(), kwargs=None):
        return (SimpleNamespace(name=name), SimpleNamespace(input=x, args=args, kwargs=kwargs or {}))

    op, s = case("topk", (2,))
    assert conformance._ties_explain(op, s, swapped, tuple(cpu), tol)
    assert not conformance._ties_explain(op, s, wrong, tuple(cpu), tol)
    srt = torch.sort(x)
    other = (srt.values, torch.tensor([[1, 3, 2, 0]]))
    op, s = case("sort")
    assert conformance._ties_explain(op, s, other, tuple(srt), tol)
    op, s = case("sort", kwargs={"stable": True})  # a stable sort fixes the order
    assert not conformance._ties_explain(op, s, other, tuple(srt), tol)
    op, s = case("cumsum", (1,))  # ops that define their output leave nothing open
    assert not conformance._ties_explain(op, s, other, tuple(srt), tol)
