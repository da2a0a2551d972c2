"""TORCH_PJRT_EXIT_REPORT: a folder where every process that loaded
torch_pjrt writes, at exit, what it ran: the ops that went through the CPU
fallback, the ops per eager mode and the mode it started in, as
`<pid>.json`. A multi-process job (torchrun, a DataLoader with spawned
workers, a Trainer launched in a child) can then be checked as a whole; the
test suite reads its subprocesses' reports this way, so a child's fallback
fails the test that started it."""
import json
import os
import sys

from . import _C, _env


def _write(folder, mode):
    report = {
        "pid": os.getpid(),
        "argv": getattr(sys, "orig_argv", sys.argv),
        "start_mode": mode,
        "fallback": dict(_C._fallback_stats()),
        "ops_per_mode": dict(_C._mode_counts()),
    }
    # Written whole, then renamed: a reader never sees half a report.
    path = os.path.join(folder, f"{os.getpid()}.json")
    try:
        with open(path + ".tmp", "w") as f:
            json.dump(report, f)
        os.replace(path + ".tmp", path)
    except OSError as err:  # the folder went away: nothing to report to
        print(f"torch_pjrt: could not write the exit report {path}: {err}", file=sys.stderr)


def install():
    folder = _env.get("TORCH_PJRT_EXIT_REPORT")
    if not folder:
        return
    # One finalizer of multiprocessing's serves both ends: the main process
    # runs them at exit (multiprocessing registers that with atexit), and its
    # children run them before they end through os._exit, which skips atexit.
    from multiprocessing import util
    util.Finalize(None, _write, args=(folder, _C._eager_mode()), exitpriority=0)


def read(folder):
    """The reports in folder, one dict per process."""
    out = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                out.append(json.load(f))
    return out
