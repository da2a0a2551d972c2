"""Differential conformance against PyTorch's OpInfo database.

Every OpInfo sample runs on the CPU and on the tpu; outputs (and float32
gradients) are compared with the OpInfo's own tolerances where it states
them for CPU-vs-device comparison (our defaults otherwise, stated in the
report). Each case ends as pass / mismatch / error / skip and records
whether it ran natively or touched the CPU fallback. Workers run in
subprocesses so a crash or a hang is recorded against its op instead of
ending the run.

The quick run (a fixed subset of the ops, every dtype, one sample each) is a
regression gate: its outcome per (op, dtype, kind) is compared with a
committed baseline, and any new failure or move to the CPU fallback fails.

    python -m torch_pjrt conformance [--quick] [--out DIR] [--ops NAME,...]
        [--baseline PATH | --write-baseline PATH]
"""
import argparse
import html
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import zlib

from .. import _env

DTYPES = ["float32", "bfloat16", "float16", "int64", "int32", "bool"]
# (atol, rtol) used when the OpInfo states none: different summation orders
# and transcendental approximations than the CPU kernels.
DEFAULT_TOL = {"float32": (1e-5, 1e-5), "float64": (1e-7, 1e-7), "bfloat16": (1e-2, 1.6e-2),
               "float16": (1e-3, 1e-3), "complex64": (1e-5, 1e-5), "complex128": (1e-7, 1e-7)}
MAX_SAMPLES = 8
# The quick run keeps the ops whose id hashes to 0 modulo this: a spread-out
# subset that stays the same when PyTorch adds or reorders OpInfos.
QUICK_EVERY = 6
# Test hook: {op id: "hang" | "crash" | "die_before_start"} makes a worker
# misbehave at that op, to show the driver survives it.
FAULTS_ENV = "TORCH_PJRT_CONFORMANCE_FAULTS"


# ----------------------------------------------------------------- worker side

def _ops():
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def _op_id(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def _skip_reason(op, dtype):
    """The OpInfo's own skip / expected failure for CPU-vs-device comparison."""
    for info in list(op.decorators or []) + list(op.skips or []):
        if not hasattr(info, "test_name"):  # a bare decorator applies to every test
            q = getattr(info, "__qualname__", "")
            if q == "onlyCUDA":
                return "OpInfo runs only on CUDA"
            if q == "onlyCPU":
                return "OpInfo runs only on the CPU"
            continue
        if info.test_name not in (None, "test_compare_cpu"):
            continue
        if info.cls_name not in (None, "TestCommon"):
            continue
        if info.dtypes is not None and dtype not in info.dtypes:
            continue
        if info.active_if is False:
            continue
        for d in info.decorators:
            q = getattr(d, "__qualname__", "")
            if d is unittest.expectedFailure:
                return "OpInfo marks test_compare_cpu as an expected failure"
            if q.startswith("skip"):
                return "OpInfo skips test_compare_cpu"
    return None


def _override(op, dtype):
    """(atol, rtol) the OpInfo's tolerance / precision overrides give dtype, (0, 0) if none."""
    from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride
    atol = rtol = 0.0
    decorators = []
    for info in op.decorators or []:
        if not hasattr(info, "test_name"):
            decorators.append(info)
        elif info.test_name in (None, "test_compare_cpu") and info.cls_name in (None, "TestCommon"):
            decorators.extend(info.decorators)
    for d in decorators:
        if isinstance(d, toleranceOverride) and dtype in d.d:
            atol, rtol = max(atol, d.d[dtype].atol), max(rtol, d.d[dtype].rtol)
        elif isinstance(d, precisionOverride) and dtype in d.d:
            atol = max(atol, d.d[dtype])
    return atol, rtol


def _tolerance(override, out_dtype):
    """Tolerance for one output: the default for the OUTPUT's dtype (an int64
    sample of cos gives float32 results), loosened by the OpInfo's override
    for the sample dtype."""
    atol, rtol = DEFAULT_TOL.get(str(out_dtype).replace("torch.", ""), (0.0, 0.0))
    return max(atol, override[0]), max(rtol, override[1])


def _assert_close(actual, expected, override, min_tol=(0.0, 0.0)):
    import torch
    a_leaves, e_leaves = [], []
    _leaves(actual, a_leaves)
    _leaves(expected, e_leaves)
    if len(a_leaves) != len(e_leaves):
        raise AssertionError(f"output structure differs: {len(a_leaves)} vs {len(e_leaves)} leaves")
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if isinstance(e, torch.Tensor):
            atol, rtol = _tolerance(override, e.dtype)
        elif isinstance(e, float):
            atol, rtol = _tolerance(override, torch.float32)
        elif isinstance(e, (bool, int, complex)) or e is None:
            atol, rtol = override
        else:  # strings, dtypes, other objects: equality
            if a != e:
                raise AssertionError(f"output {i}: {a!r} != {e!r}")
            continue
        atol, rtol = max(atol, min_tol[0]), max(rtol, min_tol[1])
        try:
            torch.testing.assert_close(a, e, atol=atol, rtol=rtol, equal_nan=True, check_device=False)
        except AssertionError as err:
            raise AssertionError(f"output {i}: {err}" if len(e_leaves) > 1 else str(err)) from None


def _leaves(x, out):
    import torch
    if isinstance(x, torch.Tensor) or x is None or isinstance(x, (bool, int, float, complex, str, torch.dtype)):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _leaves(v, out)
    elif isinstance(x, dict):
        for k in sorted(x, key=str):
            _leaves(x[k], out)
    else:
        out.append(x)


def _tree_map(fn, x):
    import torch
    if isinstance(x, torch.Tensor):
        return fn(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_tree_map(fn, v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_tree_map(fn, v) for v in x)
    if isinstance(x, dict):
        return {k: _tree_map(fn, v) for k, v in x.items()}
    return x


def _tensors(x):
    out = []
    _tree_map(lambda t: out.append(t), x)
    return out


def _samples(op, device, dtype, requires_grad, n, seed):
    """The first n samples of the OpInfo, generated from a fixed seed (the same
    inputs every run). Calls the sample function directly: op.sample_inputs()
    wraps it in a tracker that inspects the call stack and reseeds for every
    sample, which cost most of a run's time."""
    import itertools
    import torch
    torch.manual_seed(seed)
    return list(itertools.islice(op.sample_inputs_func(op, device, dtype, requires_grad), n))


def _placements(op, dtype, requires_grad, n, seed):
    """For each of the first n samples, the device kind of each tensor leaf
    when the OpInfo generates its samples for a device: "meta" for tensors
    made on the device, "cpu" for those the sample function pins to the CPU
    (tensor_split's index tensors). Samples are generated on the meta device,
    which holds no data; None where that fails or differs in structure."""
    import torch
    try:
        with torch.random.fork_rng():
            metas = _samples(op, "meta", dtype, requires_grad, n, seed)
    except Exception:  # noqa: BLE001
        return [None] * n
    out = []
    for m in metas:
        kinds = []
        m.transform(lambda t: kinds.append((t.device.type, tuple(t.shape))) if isinstance(t, torch.Tensor) else t)
        out.append(kinds)
    return out + [None] * (n - len(out))


def _run_case(op, sample, dtype, dtname, grad, placement=None):
    import torch
    import torch_pjrt
    override = _override(op, dtype)
    cpu_sample = sample.transform(
        lambda t: t.detach().clone().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t)
    shapes = []
    sample.transform(lambda t: shapes.append(tuple(t.shape)) if isinstance(t, torch.Tensor) else t)
    if placement is None or [s for _, s in placement] != shapes:
        placement = [("meta", s) for s in shapes]
    where = iter(placement)

    def to_device(t):
        if not isinstance(t, torch.Tensor):
            return t
        kind = next(where)[0]
        moved = t.detach().to("tpu") if kind != "cpu" else t.detach().clone()
        return moved.requires_grad_(t.requires_grad)

    tpu_sample = sample.transform(to_device)
    try:
        expected = op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs)
    except Exception as e:  # noqa: BLE001
        # No reference value to compare against; the tpu must refuse the sample alike.
        try:
            op(tpu_sample.input, *tpu_sample.args, **tpu_sample.kwargs)
        except Exception:  # noqa: BLE001
            raise _Skip(f"the CPU reference raises ({type(e).__name__}); the tpu raises too") from None
        raise AssertionError(f"the CPU reference raises {type(e).__name__}: {str(e)[:200]}; the tpu does not")
    torch_pjrt.reset_fallback_stats()
    actual = op(tpu_sample.input, *tpu_sample.args, **tpu_sample.kwargs)
    actual_cpu = _tree_map(lambda t: t.detach().cpu(), actual)
    fallback = sorted(torch_pjrt.fallback_stats())
    expected_d = _tree_map(lambda t: t.detach(), expected)
    try:
        _assert_close(actual_cpu, expected_d, override)
    except AssertionError:
        # Among equal keys PyTorch leaves the index order open (unstable
        # sort, topk, kthvalue): any index selecting the same values is
        # right, whichever one the CPU kernel happened to pick.
        try:
            explained = _ties_explain(op, cpu_sample, actual_cpu, expected_d, override)
        except Exception:  # noqa: BLE001 - the original mismatch is what to report
            explained = False
        if not explained:
            raise
    if not grad:
        return fallback
    outs_c = [t for t in _tensors(expected) if t.requires_grad and t.grad_fn is not None]
    outs_t = [t for t in _tensors(actual) if t.requires_grad and t.grad_fn is not None]
    ins_c = [t for t in _tensors([cpu_sample.input, cpu_sample.args, cpu_sample.kwargs]) if t.requires_grad]
    ins_t = [t for t in _tensors([tpu_sample.input, tpu_sample.args, tpu_sample.kwargs]) if t.requires_grad]
    if not outs_c or not ins_c:
        raise _Skip("no differentiable output")
    gos = [torch.randn_like(t) for t in outs_c]
    gc = torch.autograd.grad(outs_c, ins_c, gos, allow_unused=True)
    torch_pjrt.reset_fallback_stats()
    # Each grad_output on its output's device (an op like `to` may return a CPU tensor).
    gt = torch.autograd.grad(outs_t, ins_t, [g.to(t.device) for g, t in zip(gos, outs_t)], allow_unused=True)
    gt = [None if g is None else g.cpu() for g in gt]
    fb = sorted(torch_pjrt.fallback_stats())
    _assert_close(gt, list(gc), override, min_tol=(1e-4, 1e-4))
    return fb


class _Skip(Exception):
    pass


# op name -> (position of `dim` among the positional args after the input,
# its default); the output's index tensor picks from the input along dim.
_TIE_OPS = {"sort": (0, -1), "argsort": (0, -1), "topk": (1, -1), "kthvalue": (1, -1)}


def _ties_explain(op, sample, actual, expected, override):
    """True when actual differs from expected only in which of several equal
    input elements its indices pick, for ops that leave that open."""
    import torch
    name = op.name
    if name not in _TIE_OPS or not isinstance(sample.input, torch.Tensor):
        return False
    if name in ("sort", "argsort") and (sample.kwargs.get("stable") or
                                        (name == "sort" and len(sample.args) > 2 and sample.args[2])):
        return False  # a stable sort fixes the order
    pos, default = _TIE_OPS[name]
    dim = sample.args[pos] if len(sample.args) > pos else sample.kwargs.get("dim", default)
    x = sample.input.detach()
    if x.dim() == 0:
        return False
    a_leaves, e_leaves = [], []
    _leaves(actual, a_leaves)
    _leaves(expected, e_leaves)
    if len(a_leaves) != len(e_leaves):
        return False
    index_leaf = 0 if name == "argsort" else 1  # the others return (values, indices)
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if not isinstance(e, torch.Tensor) or not isinstance(a, torch.Tensor) or a.shape != e.shape:
            return False
        if i != index_leaf:  # values: compared as usual
            _assert_close(a, e, override)
            continue
        keep = e.dim() == x.dim()
        ai, ei = (a, e) if keep else (a.unsqueeze(dim), e.unsqueeze(dim))
        if ai.numel() and (ai.min() < 0 or ai.max() >= x.size(dim)):
            return False
        if not torch.equal(x.gather(dim, ai), x.gather(dim, ei)):
            return False
    return True


def _worker(op_ids, quick, grads):
    """Runs op_ids in the given order, printing one JSON line per event:
    {"start": op} before an op, one record per case, {"end": op} after it,
    {"done": true} at the end. The driver relies on the order to know which
    op a worker that dies before printing anything was about to run."""
    faults = json.loads(_env.get(FAULTS_ENV) or "{}")
    if op_ids and faults.get(op_ids[0]) == "die_before_start":
        os._exit(3)  # as a worker whose startup fails would; checked before loading the OpInfos
    import torch
    import torch_pjrt  # noqa: F401
    by_id = {_op_id(op): op for op in _ops()}
    for oid in op_ids:
        op = by_id.get(oid)
        if op is None:
            continue
        fault = faults.get(oid)
        if fault == "die_before_start":
            os._exit(3)
        print(json.dumps({"start": oid}), flush=True)
        if fault == "hang":
            while True:
                time.sleep(3600)
        if fault == "crash":
            os._exit(5)
        _run_op(op, oid, quick, grads)
        print(json.dumps({"end": oid}), flush=True)
    # Each op's fallbacks are in its records; the process's own exit report
    # (TORCH_PJRT_EXIT_REPORT) has nothing more to say about them.
    torch_pjrt.reset_fallback_stats()
    print(json.dumps({"done": True}), flush=True)


def _run_op(op, oid, quick, grads):
    import torch
    import torch_pjrt
    supported = op.supported_dtypes("cpu")
    for dtname in DTYPES:
        dtype = getattr(torch, dtname)
        if dtype not in supported:
            continue
        kinds = ["forward"] + (["gradient"] if grads and dtname == "float32" and op.supports_autograd else [])
        for kind in kinds:
            reason = _skip_reason(op, dtype)
            n = 1 if quick else MAX_SAMPLES
            seed = _seed(oid, dtname, kind)
            try:
                samples = _samples(op, "cpu", dtype, kind == "gradient", n, seed)
            except Exception as e:  # noqa: BLE001
                samples, reason = [], f"sample generation failed on the CPU: {e}"
            placements = _placements(op, dtype, kind == "gradient", len(samples), seed) if samples else []
            for i, s in enumerate(samples):
                rec = {"op": oid, "dtype": dtname, "kind": kind, "sample": i, "seed": seed}
                if reason:
                    rec.update(status="skip", reason=reason)
                else:
                    t0 = time.perf_counter()
                    # What the case draws itself (grad_outputs, random ops)
                    # depends on its own seed only, not on the cases before it.
                    torch.manual_seed(seed + 1 + i)
                    try:
                        fb = _run_case(op, s, dtype, dtname, kind == "gradient", placements[i])
                        rec.update(status="pass", fallback=fb)
                    except _Skip as e:
                        rec.update(status="skip", reason=str(e))
                    except AssertionError as e:
                        rec.update(status="mismatch", message=str(e)[:400],
                                   fallback=sorted(torch_pjrt.fallback_stats()))
                    except Exception as e:  # noqa: BLE001
                        rec.update(status="error", message=f"{type(e).__name__}: {str(e)[:400]}",
                                   fallback=sorted(torch_pjrt.fallback_stats()))
                    rec["seconds"] = round(time.perf_counter() - t0, 3)
                print(json.dumps(rec), flush=True)


def _seed(oid, dtname, kind):
    """The seed a case's samples are generated from: fixed per (op, dtype,
    kind), so every run, quick or full, sees the same inputs."""
    return zlib.crc32(f"{oid} {dtname} {kind}".encode())


# ----------------------------------------------------------------- driver side

def _select_ops(quick, names):
    ids = [_op_id(op) for op in _ops()]
    if names:
        keep = set(names)
        return [i for i in ids if i in keep or i.split(".")[0] in keep]
    if quick:
        return [i for i in ids if _in_quick(i)]
    return ids


def _in_quick(oid):
    return zlib.crc32(f"quick {oid}".encode()) % QUICK_EVERY == 0


# A worker that dies or hangs before it starts an op this many times in a row
# is broken as a whole (an import fails): the ops left are charged at once
# instead of one fresh worker each.
_MAX_SILENT_WORKERS = 3


def run(quick=False, out="conformance_out", ops=None, grads=True, timeout_per_op=600, startup_timeout=300,
        log=print):
    """Runs the ops in worker subprocesses and writes conformance.json / .html
    to out. An op whose worker dies, or runs longer than timeout_per_op
    seconds (a worker gets startup_timeout to reach its first op), is killed
    and recorded as an error with "crash": "died" / "timeout"; the next
    worker goes on after it."""
    op_ids = _select_ops(quick, ops)
    cases, crashed = [], []
    remaining = list(op_ids)
    silent = 0
    t0 = time.time()
    while remaining:
        cmd = [sys.executable, "-m", "torch_pjrt.tools.conformance", "--worker", "--ops", ",".join(remaining)]
        if quick:
            cmd.append("--quick")
        if not grads:
            cmd.append("--no-grads")
        current, finished, started, how, code, err = _run_worker(
            cmd, cases, timeout_per_op, startup_timeout,
            lambda oid, n: log(f"[{len(op_ids) - len(remaining) + n}/{len(op_ids)}] {oid}"))
        remaining = [o for o in remaining if o not in finished]
        if how == "done" or not remaining:
            break
        silent = 0 if started else silent + 1
        if started:
            charge = [current] if current else []  # none when it died between two ops
        elif silent < _MAX_SILENT_WORKERS:
            charge = remaining[:1]  # it died or hung before its first op: the one it was about to run
        else:
            charge = list(remaining)
        if how == "timeout" and started:
            what = f"timed out after {timeout_per_op} s; worker killed"
        elif how == "timeout":
            what = f"worker did not reach its first op within {startup_timeout} s; killed"
        else:
            what = f"worker process died (exit {code})" + ("" if started else " before its first op")
        if err:
            what += ": " + err
        for oid in charge:
            crashed.append(oid)
            cases.append({"op": oid, "dtype": "*", "kind": "forward", "sample": -1, "status": "error",
                          "crash": "timeout" if how == "timeout" else "died", "message": what})
        remaining = [o for o in remaining if o not in charge]
    report = summarize(cases, quick, time.time() - t0)
    report["crashed_ops"] = crashed
    report["selected_ops"] = op_ids
    report.update(_environment())
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "conformance.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(out, "conformance.html"), "w") as f:
        f.write(to_html(report))
    return report


def _run_worker(cmd, cases, timeout_per_op, startup_timeout, on_start):
    """One worker subprocess, read until it is done, dies or overruns.
    Returns (op in progress or None, ops it finished, whether it started
    any, "done" | "died" | "timeout", exit code, the tail of its stderr)."""
    with tempfile.TemporaryFile("w+") as errf:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True)
        lines = queue.Queue()

        def pump():  # a blocking read would wait forever on a hung worker
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        current, finished, started, how = None, set(), False, "died"
        deadline = time.monotonic() + startup_timeout
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                proc.kill()
                how = "timeout"
                break
            if line is None:
                break
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if "start" in rec:
                current, started = rec["start"], True
                deadline = time.monotonic() + timeout_per_op
                on_start(current, len(finished) + 1)
            elif "end" in rec:
                finished.add(rec["end"])
                current = None
            elif "done" in rec:
                how = "done"
                break
            else:
                cases.append(rec)
        try:
            code = proc.wait(timeout=60)  # a worker that reported done but hangs on its way out
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        reader.join()
        proc.stdout.close()
        if how == "done" and code != 0:
            how = "died"
        errf.seek(0)
        tail = errf.read()[-1500:].strip()
    return current, finished, started, how, code, (tail if how != "done" else "")


def _environment():
    """What the outcomes depend on besides the code: PyTorch (its OpInfos),
    the plugin, the eager mode the workers inherit."""
    import torch
    import torch_pjrt
    return {"torch": torch.__version__, "platform": torch_pjrt.plugin_choice.name,
            "eager_mode": _env.value("TORCH_PJRT_EAGER_MODE")}


def summarize(cases, quick, seconds):
    fwd = [c for c in cases if c["kind"] == "forward" and c["status"] != "skip"]
    grad = [c for c in cases if c["kind"] == "gradient" and c["status"] != "skip"]
    native = [c for c in fwd if not c.get("fallback")]
    per_op = {}
    for c in cases:
        o = per_op.setdefault(c["op"], {"pass": 0, "mismatch": 0, "error": 0, "skip": 0, "native": 0,
                                         "fallback_ops": set(), "first_failure": None})
        o[c["status"]] += 1
        if c["status"] != "skip" and not c.get("fallback"):
            o["native"] += 1
        o["fallback_ops"].update(c.get("fallback", []))
        if c["status"] in ("mismatch", "error") and not o["first_failure"]:
            o["first_failure"] = f"[{c['dtype']} {c['kind']}] {c.get('message', '')}"
    for o in per_op.values():
        o["fallback_ops"] = sorted(o["fallback_ops"])
        o["status"] = "fail" if o["mismatch"] or o["error"] else ("pass" if o["pass"] else "skip")

    def rate(a, b):
        return round(len(a) / len(b), 4) if b else 0.0

    return {
        "forward_pass_rate": rate([c for c in fwd if c["status"] == "pass"], fwd),
        "native_rate": rate(native, fwd),
        "gradient_pass_rate": rate([c for c in grad if c["status"] == "pass"], grad),
        "cases": len(cases),
        "forward_cases": len(fwd),
        "gradient_cases": len(grad),
        "skipped_cases": sum(1 for c in cases if c["status"] == "skip"),
        "quick": quick,
        "seconds": round(seconds, 1),
        "tolerances": {"default_atol_rtol": DEFAULT_TOL, "gradients_min": [1e-4, 1e-4],
                       "note": "the OpInfo's own test_compare_cpu tolerance overrides win when looser"},
        "ops": per_op,
        "case_list": cases,
    }


# ------------------------------------------------------------- baseline gate

def outcome_map(cases):
    """{"op dtype kind": outcome} over a run's cases, the samples of one key
    folded together: "fail" if any sample fails, else "pass" if any passes,
    else "skip"; a case that ran says "native" or "fallback" (any CPU
    fallback in any sample)."""
    by_key = {}
    for c in cases:
        by_key.setdefault(f"{c['op']} {c['dtype']} {c['kind']}", []).append(c)
    out = {}
    for key, cs in by_key.items():
        ran = [c for c in cs if c["status"] != "skip"]
        if not ran:
            out[key] = "skip"
            continue
        if any(c.get("crash") for c in ran):  # the worker died or hung: nothing to say about fallback
            out[key] = "fail crash"
            continue
        outcome = "fail" if any(c["status"] in ("mismatch", "error") for c in ran) else "pass"
        out[key] = outcome + (" fallback" if any(c.get("fallback") for c in ran) else " native")
    return out


def write_baseline(path, report, base=None, ops=None):
    """The run's outcome map as a baseline file, one case per line so a
    change to it reads as a plain diff. For a run of some ops only, base
    (a baseline's cases) supplies the cases of every other op."""
    cases = outcome_map(report["case_list"])
    if base is not None and ops is not None:
        ops = set(ops)
        cases = dict({k: v for k, v in base.items() if k.split(" ")[0] not in ops}, **cases)
    head = {"about": "torch_pjrt conformance baseline: outcome of each (op, dtype, kind) in the quick run; "
                     "regenerate with python -m torch_pjrt conformance --quick --write-baseline PATH",
            "torch": report.get("torch"), "platform": report.get("platform"),
            "quick": report["quick"], "ops": len({k.split(" ")[0] for k in cases})}
    lines = [f"  {json.dumps(k)}: {json.dumps(head[k])}," for k in head]
    lines.append('  "cases": {')
    lines.append(",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(cases.items())))
    lines.append("  }")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("{\n" + "\n".join(lines) + "\n}\n")


def load_baseline(path):
    with open(path) as f:
        return json.load(f)


def compare(baseline, current, ops=None):
    """Compares two outcome maps. Returns {"regressions": [...],
    "improvements": [...], "other": [...]}, each a list of
    {"case", "was", "now", "why"} (None where a map lacks the case).
    Regressions: a case that fails and did not, a case that moved from
    native to the CPU fallback, a case that passed and no longer runs.
    Improvements: fail -> pass, fallback -> native, a case that passes and
    did not run. ops restricts the comparison to those ops (a partial run)."""
    if ops is not None:
        ops = set(ops)
        baseline = {k: v for k, v in baseline.items() if k.split(" ")[0] in ops}
    diff = {"regressions": [], "improvements": [], "other": []}
    for key in sorted(set(baseline) | set(current)):
        was, now = baseline.get(key), current.get(key)
        if was == now:
            continue
        w_out, w_where = (was or "missing").partition(" ")[::2]
        n_out, n_where = (now or "missing").partition(" ")[::2]
        entry = {"case": key, "was": was, "now": now}
        bad, good = [], []
        if n_out == "fail" and w_out != "fail":
            bad.append("new failure")
        if w_out == "pass" and n_out in ("skip", "missing"):
            bad.append("no longer runs")
        if w_where == "native" and n_where == "fallback":
            bad.append("moved to the CPU fallback")
        if n_out == "pass" and w_out != "pass":
            good.append("now passes")
        if w_where == "fallback" and n_where == "native":
            good.append("now native")
        if bad:
            diff["regressions"].append(dict(entry, why=", ".join(bad)))
        if good:
            diff["improvements"].append(dict(entry, why=", ".join(good)))
        if not bad and not good:
            diff["other"].append(dict(entry, why="changed"))
    return diff


def gate(report, baseline_path, out, ops=None):
    """Compares a run with the baseline at baseline_path; writes
    baseline_diff.json and the run's own map as conformance_baseline.json to
    out (copy it over the baseline to raise it). Returns (ok, text, diff):
    ok is False on any regression, text lists the changes for a person."""
    baseline = load_baseline(baseline_path)
    current = outcome_map(report["case_list"])
    diff = compare(baseline["cases"], current, ops)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "baseline_diff.json"), "w") as f:
        json.dump(dict(diff, baseline=os.path.abspath(baseline_path)), f, indent=1)
    write_baseline(os.path.join(out, "conformance_baseline.json"), report, baseline["cases"], ops)
    messages = {}
    for c in report["case_list"]:
        if c["status"] in ("mismatch", "error"):
            messages.setdefault(f"{c['op']} {c['dtype']} {c['kind']}", c.get("message", ""))
    text = []
    if diff["regressions"]:
        text.append(f"{len(diff['regressions'])} regression(s) against {baseline_path}:")
        for e in diff["regressions"]:
            detail = f" -- {' '.join(messages[e['case']].split())[:300]}" if e["case"] in messages else ""
            text.append(f"  {_change(e)}{detail}")
    if diff["improvements"]:
        raise_it = f"cp {os.path.join(out, 'conformance_baseline.json')} {baseline_path}"
        text.append(f"{len(diff['improvements'])} improvement(s) over {baseline_path} (" +
                    (f"raise it: {raise_it}" if not diff["regressions"] else "raise it once the regressions are fixed")
                    + "):")
        text += [f"  {_change(e)}" for e in diff["improvements"]]
    if diff["other"]:
        text.append(f"{len(diff['other'])} other change(s):")
        text += [f"  {_change(e)}" for e in diff["other"]]
    if diff["regressions"] and baseline.get("torch") and report.get("torch") not in (None, baseline["torch"]):
        text.append(f"note: the baseline was recorded with torch {baseline['torch']}, this run used "
                    f"{report['torch']}")
    text.append(f"details in {os.path.join(out, 'baseline_diff.json')}")
    return not diff["regressions"], "\n".join(text), diff


def _change(e):
    return f"{e['case']}: {e['was'] or 'not run'} -> {e['now'] or 'not run'} ({e['why']})"


def to_html(r):
    rows = []
    for name, o in sorted(r["ops"].items()):
        rows.append(
            f"<tr class='{o['status']}'><td>{html.escape(name)}</td><td>{o['status']}</td><td>{o['pass']}</td>"
            f"<td>{o['mismatch']}</td><td>{o['error']}</td><td>{o['skip']}</td><td>{o['native']}</td>"
            f"<td>{html.escape(', '.join(o['fallback_ops']))}</td>"
            f"<td>{html.escape(o['first_failure'] or '')}</td></tr>")
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>torch_pjrt conformance</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;font-size:13px}}
td,th{{border:1px solid #ccc;padding:3px 6px;vertical-align:top}}th{{cursor:pointer;background:#eee}}
tr.fail td:nth-child(2){{background:#fcc}}tr.pass td:nth-child(2){{background:#cfc}}
td:last-child{{max-width:40em;font-family:monospace;font-size:11px}}</style></head><body>
<h1>torch_pjrt conformance {'(quick)' if r['quick'] else ''}</h1>
<p>Forward pass rate <b>{r['forward_pass_rate']:.2%}</b> of {r['forward_cases']} cases;
native (no CPU fallback) <b>{r['native_rate']:.2%}</b>; gradient pass rate
<b>{r['gradient_pass_rate']:.2%}</b> of {r['gradient_cases']}; {r['skipped_cases']} skipped; {r['seconds']} s.</p>
<p>Click a column header to sort.</p>
<table id="t"><thead><tr><th>op</th><th>status</th><th>pass</th><th>mismatch</th><th>error</th><th>skip</th>
<th>native</th><th>fallback ops</th><th>first failure</th></tr></thead><tbody>{''.join(rows)}</tbody></table>
<script>
document.querySelectorAll('th').forEach((th, i) => th.onclick = () => {{
  const tb = document.querySelector('#t tbody'); const rows = [...tb.rows];
  const num = rows.every(r => !isNaN(parseFloat(r.cells[i].textContent)) || r.cells[i].textContent === '');
  const dir = th.dataset.dir = th.dataset.dir === 'asc' ? 'desc' : 'asc';
  rows.sort((a, b) => {{ const x = a.cells[i].textContent, y = b.cells[i].textContent;
    const c = num ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
    return dir === 'asc' ? c : -c; }});
  rows.forEach(r => tb.appendChild(r)); }});
</script></body></html>"""


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m torch_pjrt conformance")
    ap.add_argument("--quick", action="store_true",
                    help="a fixed spread-out subset of the ops, every dtype, one sample each")
    ap.add_argument("--out", default="conformance_out")
    ap.add_argument("--ops", default="", help="comma-separated OpInfo names")
    ap.add_argument("--no-grads", action="store_true")
    ap.add_argument("--timeout-per-op", type=float, default=600,
                    help="seconds before a worker stuck in one op is killed (default 600)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--baseline", metavar="PATH",
                   help="compare with this baseline; exit 1 on any new failure or move to the CPU fallback")
    g.add_argument("--write-baseline", metavar="PATH", help="write this run's outcomes as the baseline")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    ops = [o for o in a.ops.split(",") if o]
    if a.worker:
        _worker(ops, a.quick, not a.no_grads)
        return 0
    if a.baseline and load_baseline(a.baseline).get("quick") != a.quick:
        ap.error("the baseline was recorded " + ("with" if not a.quick else "without") + " --quick; "
                 "compare like with like")
    r = run(quick=a.quick, out=a.out, ops=ops, grads=not a.no_grads, timeout_per_op=a.timeout_per_op)
    print(f"forward pass {r['forward_pass_rate']:.2%} ({r['forward_cases']} cases), native {r['native_rate']:.2%}, "
          f"gradient pass {r['gradient_pass_rate']:.2%} ({r['gradient_cases']} cases), "
          f"{len(r['crashed_ops'])} crashed, {r['seconds']} s; report in {os.path.join(a.out, 'conformance.html')}")
    if a.write_baseline:
        # With --ops, only those ops' cases change in an existing baseline.
        base = load_baseline(a.write_baseline)["cases"] if ops and os.path.exists(a.write_baseline) else None
        write_baseline(a.write_baseline, r, base, r["selected_ops"])
        print(f"baseline written to {a.write_baseline}")
    if a.baseline:
        ok, text, _ = gate(r, a.baseline, a.out, ops=r["selected_ops"] if ops else None)
        print(text)
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
