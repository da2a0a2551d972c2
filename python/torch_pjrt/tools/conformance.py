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
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import zlib

# The case tables and worker (conformance_cases.py) and the report and
# baseline gate (conformance_report.py) are named here too: this module is
# the tool's one entry point, for `python -m torch_pjrt conformance` and for
# the tests.
from .conformance_cases import (DTYPES, FAULTS_ENV, QUICK_EVERY, _op_id, _ops, _samples, _seed,  # noqa: F401
                                _ties_explain, _worker)
from .conformance_report import (_environment, compare, gate, load_baseline, outcome_map,  # noqa: F401
                                 summarize, to_html, write_baseline)


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
