"""PyTorch's own device-generic test files on the tpu beside the CPU.

    python -m torch_pjrt pytorch-tests FILE... [--sample N] [--match REGEX]
        [--timeout S] [--json OUT] [--logs DIR]

Each file runs under pytest twice, each run in processes of its own with one
thread: first on the CPU as plain PyTorch (no torch_pjrt, device backends not
autoloaded), then on the tpu, running only the tests that passed on the CPU
(`TestFooCPU::test_bar_cpu_float32` becomes
`TestFooPRIVATEUSE1::test_bar_tpu_float32`, or `TestFooTPU::...`). Tests that fail on the CPU too
are not the device's to fix, so the figure per file is how many of the CPU's
passes also pass on the tpu, and the list is those that do not.

A process killed by a signal (a crash) or by the driver because a test ran
past --timeout (a hang) is restarted after that test, so one crash does not
lose the rest of the file. --sample keeps a fixed subset of a file's tests
(chosen by a hash of the test id, the same every run) for the large
OpInfo-driven files; --match keeps the tests whose id a regex finds (say
`complex32`), to compare one family quickly.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

_PLUGIN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pytorch_tests")
_POLL_S = 0.2
PASSED = "passed"


def tpu_ids(cpu_id):
    """The ids the tpu variant of a CPU test may have: the class suffix CPU
    becomes PRIVATEUSE1 or TPU (PyTorch names the first class instantiated
    for the device by its generic name and later ones by the device's own:
    test_indexing.py has TestIndexingPRIVATEUSE1 beside NumpyTestsTPU), and
    the test name's device token (the last `_cpu` before the dtype suffix or
    the end) becomes `_tpu`. Empty for an id that is not a CPU variant."""
    parts = cpu_id.split("::")
    if len(parts) < 3 or not parts[-2].endswith("CPU"):
        return []
    name = parts[-1]
    hits = list(re.finditer(r"_cpu(?=_|$|\[)", name))
    if not hits:
        return []
    h = hits[-1]
    test = name[:h.start()] + "_tpu" + name[h.end():]
    cls = parts[-2][:-len("CPU")]
    return ["::".join(parts[:-2] + [cls + suffix, test]) for suffix in ("PRIVATEUSE1", "TPU")]


def cpu_only_classes(path):
    """The test classes a file instantiates for the CPU alone
    (`instantiate_device_type_tests(TestFoo, globals(), only_for="cpu")`):
    the device never gets them, so they are not the device's to pass."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = set()
    for m in re.finditer(r"instantiate_device_type_tests\(\s*(\w+)\s*,.*only_for\s*=(.*)", text):
        only = m.group(2).lower()
        if "cpu" in only and not any(d in only for d in ("privateuse1", "tpu")):
            found.add(m.group(1))
    return found


# Skips PyTorch's own decorators give a device they keep a test from:
# onlyCPU, and largeTensorTest, whose memory check knows only CUDA and XPU
# among accelerators.
_ONLY_CPU_SKIPS = ("Only runs on cpu", "Unknown device type")


def _env(device):
    env = dict(os.environ)
    # The folder holding this torch_pjrt, for the tpu run's import of it.
    pkg_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = [_PLUGIN_DIR, pkg_parent] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    env["PYTORCH_TESTING_DEVICE_ONLY_FOR"] = device
    env["OMP_NUM_THREADS"] = "1"
    env["MKL_NUM_THREADS"] = "1"
    if device == "cpu":
        # Plain PyTorch: torch would otherwise autoload installed backends.
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    else:
        env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    return env


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_device(path, device, *, only=None, sample=None, match=None, timeout=60.0, workdir, log=None):
    """Runs one file on one device until every selected test is settled.

    Returns {"status": {test id: status}, "reasons": {test id: a failure's
    exception or a skip's reason}, "crashes": [id], "hangs": [id], "errors":
    [str], "processes": n}. Statuses: passed, failed, error,
    skipped, xfailed, xpassed, crash (signal N), hang."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    status, reasons, crashes, hangs, errors = {}, {}, [], [], []
    processes = 0
    selected = set()  # what the processes chose to run
    ini = os.path.join(workdir, "pytest.ini")
    with open(ini, "w") as f:
        f.write("[pytest]\n")
    while True:
        progress = os.path.join(workdir, f"{device}.progress.{processes}")
        control = os.path.join(workdir, f"{device}.control.json")
        with open(control, "w") as f:
            json.dump({"device": device, "progress": progress, "skip": sorted(status),
                       "only": None if only is None else sorted(only), "sample": sample,
                       "match": match}, f)
        open(progress, "w").close()
        cmd = [sys.executable, "-m", "pytest", path, "-q", "-p", "no:cacheprovider", "-p", "_pytorch_tests_plugin",
               "--pytorch-tests-control", control, "-c", ini, "--rootdir", folder]
        out = open(log, "a") if log else subprocess.DEVNULL
        if log:
            out.write(f"\n===== {device} process {processes}: {' '.join(cmd)}\n")
            out.flush()
        proc = subprocess.Popen(cmd, cwd=folder, env=_env(device), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        processes += 1
        current, started, finished, hung, partial = None, None, False, False, ""
        with open(progress) as pf:
            while True:
                rc = proc.poll()
                # Only whole lines: the plugin may be mid-write.
                *lines, partial = (partial + pf.read()).split("\n")
                for line in lines:
                    f = line.split("\t")
                    if f[0] == "selected":
                        selected.add(f[1])
                    elif f[0] == "start":
                        current, started = f[1], time.monotonic()
                    elif f[0] == "end":
                        status[f[1]] = f[2]
                        current = None
                    elif f[0] == "reason":
                        reasons[f[1]] = f[2]
                    elif f[0] == "collecterror":
                        errors.append(f"{device}: collection error {f[1]}")
                    elif f[0] == "finished":
                        finished = True
                if rc is not None:
                    break
                if current is not None and time.monotonic() - started > timeout:
                    _kill(proc)
                    hung = True
                    break
                time.sleep(_POLL_S)
        if log:
            out.close()
        if finished:
            break
        if hung:
            status[current] = "hang"
            hangs.append(current)
        elif current is None:
            # Died outside a test (collection, startup): nothing to restart after.
            errors.append(f"{device}: process ended with {proc.returncode} outside a test")
            break
        else:
            status[current] = f"crash (signal {-proc.returncode})" if proc.returncode < 0 else \
                f"crash (exit {proc.returncode})"
            crashes.append(current)
        if selected <= set(status):
            break  # it was the last test left: no process to restart
    return {"status": status, "reasons": reasons, "crashes": crashes, "hangs": hangs, "errors": errors,
            "processes": processes}


def compare(path, *, sample=None, match=None, timeout=60.0, logs=None):
    t0 = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="torch_pjrt_pytorch_tests_")
    base = os.path.splitext(os.path.basename(path))[0]
    log = lambda d: os.path.join(logs, f"{base}.{d}.log") if logs else None  # noqa: E731
    try:
        cpu = run_device(path, "cpu", sample=sample, match=match, timeout=timeout, workdir=workdir, log=log("cpu"))
        cpu_pass = sorted(t for t, s in cpu["status"].items() if s == PASSED)
        candidates = {t: tpu_ids(t) for t in cpu_pass}
        tpu = run_device(path, "tpu", only=[m for ms in candidates.values() for m in ms], timeout=timeout,
                         workdir=workdir, log=log("tpu"))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    failing, cpu_only = {}, []
    only_cpu_classes = cpu_only_classes(path)
    collected = not tpu["errors"]  # every tpu test the file instantiates was collected
    for t in cpu_pass:
        ran = [m for m in candidates[t] if m in tpu["status"]]
        skip = tpu["reasons"].get(ran[0], "") if ran else ""
        if t.split("::")[-2][:-len("CPU")] in only_cpu_classes or any(r in skip for r in _ONLY_CPU_SKIPS):
            cpu_only.append(t)
        elif not candidates[t]:
            failing[t] = "no tpu id"
        elif not ran and collected:
            # The file instantiates this variant for the CPU only
            # (dtypesIfCPU adds dtypes the generic list lacks).
            cpu_only.append(t)
        elif not ran:
            failing[candidates[t][0]] = "not collected"
        elif tpu["status"][ran[0]] != PASSED:
            failing[ran[0]] = tpu["status"][ran[0]]
    n = len(cpu_pass) - len(cpu_only)
    return {
        "file": os.path.abspath(path),
        "cpu_passed": n,
        "cpu_only": cpu_only,
        "tpu_passed": n - len(failing),
        "percent": round(100.0 * (n - len(failing)) / n, 1) if n else None,
        "cpu_counts": _counts(cpu["status"]),
        "tpu_counts": _counts(tpu["status"]),
        "crashes": {"cpu": cpu["crashes"], "tpu": tpu["crashes"]},
        "hangs": {"cpu": cpu["hangs"], "tpu": tpu["hangs"]},
        "errors": cpu["errors"] + tpu["errors"],
        "processes": {"cpu": cpu["processes"], "tpu": tpu["processes"]},
        "cpu_pass_tpu_fail": dict(sorted(failing.items())),
        "reasons": {t: tpu["reasons"][t] for t in sorted(failing) if t in tpu["reasons"]},
        "wall_s": round(time.monotonic() - t0, 1),
    }


def _counts(status):
    c = {}
    for s in status.values():
        k = s.split(" ")[0]
        c[k] = c.get(k, 0) + 1
    return dict(sorted(c.items()))


def report(r, out=None):
    out = out or sys.stdout
    name = os.path.basename(r["file"])
    pct = "-" if r["percent"] is None else f"{r['percent']}%"
    print(f"{name}: {r['tpu_passed']} of {r['cpu_passed']} CPU passes pass on tpu ({pct}); "
          f"tpu crashes {len(r['crashes']['tpu'])}, hangs {len(r['hangs']['tpu'])}; {r['wall_s']} s", file=out)
    if r["cpu_only"]:
        print(f"  {len(r['cpu_only'])} CPU passes are CPU-only by the file's own choice (only_for=\"cpu\", "
              "onlyCPU, dtypesIfCPU, largeTensorTest) and not counted", file=out)
    print(f"  cpu: {r['cpu_counts']}", file=out)
    print(f"  tpu: {r['tpu_counts']}", file=out)
    for d in ("cpu", "tpu"):
        if r["crashes"][d] or r["hangs"][d]:
            print(f"  {d} crashes: {r['crashes'][d]}  hangs: {r['hangs'][d]}", file=out)
    for e in r["errors"]:
        print(f"  {e}", file=out)
    if r["cpu_pass_tpu_fail"]:
        print("  pass on the CPU, not on tpu:", file=out)
        for t, s in r["cpu_pass_tpu_fail"].items():
            why = r["reasons"].get(t)
            print(f"    {t}  {s}" + (f": {why[:160]}" if why else ""), file=out)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m torch_pjrt pytorch-tests", description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", help="PyTorch test files (run where they are, never copied)")
    p.add_argument("--sample", type=int, default=None, help="keep this many tests per file (a fixed hash sample)")
    p.add_argument("--match", default=None, help="keep only the tests whose id this regex finds")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds one test may run before it counts as a hang")
    p.add_argument("--json", default=None, help="write the results here")
    p.add_argument("--logs", default=None, help="keep each run's pytest output in this folder")
    a = p.parse_args(argv)
    if a.logs:
        os.makedirs(a.logs, exist_ok=True)
    results = []
    t0 = time.monotonic()
    for f in a.files:
        r = compare(f, sample=a.sample, match=a.match, timeout=a.timeout, logs=a.logs)
        report(r)
        sys.stdout.flush()
        results.append(r)
    total_cpu = sum(r["cpu_passed"] for r in results)
    total_tpu = sum(r["tpu_passed"] for r in results)
    if len(results) > 1:
        pct = f"{100.0 * total_tpu / total_cpu:.1f}%" if total_cpu else "-"
        print(f"all: {total_tpu} of {total_cpu} CPU passes pass on tpu ({pct}); {time.monotonic() - t0:.1f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
