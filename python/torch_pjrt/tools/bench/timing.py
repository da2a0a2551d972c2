"""What every benchmark times with: the sides of a comparison run round by
round, alternating (PyTorch, then each mode), so drift on a shared machine
(frequency, other load) hits all alike; medians over repeats, warm-up
excluded; one thread on both sides; fresh processes for cold starts."""
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

import torch

import torch_pjrt


@contextlib.contextmanager
def process_mode(mode):
    """The process-wide eager mode inside the block (None: unchanged),
    restored after it."""
    prev = torch_pjrt.get_eager_mode()
    if mode:
        torch_pjrt.set_eager_mode(mode)
    try:
        yield
    finally:
        torch_pjrt.set_eager_mode(prev)


def interleaved(sides, repeats, warmup=2):
    """Times each side's fn (then its sync) once per round, rounds
    alternating the sides, so drift on a shared machine (frequency, other
    load) hits every side alike. sides: {name: (fn, sync, mode)}, mode None
    for PyTorch eager. Returns {name: (median wall s, median process CPU s)};
    process CPU counts all threads: on a loaded machine wall time favours
    whichever side runs more threads, CPU time shows the work each side
    does."""
    def run(fn, sync, mode):
        # Process-wide, not per-thread: backward passes run on PyTorch's
        # autograd thread, which follows the process-wide mode.
        with process_mode(mode):
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            sync()
            return time.perf_counter() - t0, time.process_time() - c0

    for fn, sync, mode in sides.values():
        for _ in range(warmup):
            run(fn, sync, mode)
    times = {name: ([], []) for name in sides}
    for _ in range(repeats):
        for name, side in sides.items():
            t, c = run(*side)
            times[name][0].append(t)
            times[name][1].append(c)
    return {name: (statistics.median(t), statistics.median(c)) for name, (t, c) in times.items()}


def timed(fn, sync):
    """Seconds of one fn() and its sync."""
    t0 = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - t0


def no_sync():
    pass


def mode_sides(base_fn, make_tpu_fn, modes, base="torch_cpu", base_sync=no_sync):
    """PyTorch eager (base: torch_cpu, or torch_cuda with its sync) beside
    one side per eager mode; make_tpu_fn() builds each tpu side's fn (model
    copy included) in its own mode."""
    sides = {base: (base_fn, base_sync, None)}
    for mode in modes:
        with process_mode(mode):
            sides[f"tpu_{mode}"] = (make_tpu_fn(), torch.tpu.synchronize, mode)
    return sides


# One thread on both sides, as ../shared/PERFORMANCE.md measures: PyTorch's
# intra-op pool, and XLA:CPU's, which the plugin sizes when it starts from
# NPROC (else every core the process may use): without it XLA's products ran
# on both cores of a 2-core machine whatever --xla_cpu_multi_thread_eigen said.
ONE_THREAD_ENV = {"XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false", "NPROC": "1"}


def one_thread(env=None):
    """One thread for PyTorch here, and for XLA:CPU in env (default: this
    process's, before the plugin starts) unless env already chooses."""
    torch.set_num_threads(1)
    for k, v in ONE_THREAD_ENV.items():
        (os.environ if env is None else env).setdefault(k, v)


def in_fresh_process(module, args, cache_dir):
    """Runs `python -m module args` in a new process on the disk cache
    cache_dir; returns the JSON object it printed on its last line."""
    env = dict(os.environ, TORCH_PJRT_CACHE_DIR=cache_dir)
    r = subprocess.run([sys.executable, "-m", module, *args], env=env, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def cold_and_warm(module, args, cache_dir):
    """Runs `python -m module args` twice on one fresh disk cache: the
    first process compiles everything, the second finds it cached. Returns
    the JSON object each printed on its last line."""
    return [in_fresh_process(module, args, cache_dir) for _ in range(2)]


def write_json(out_dir, name, res):
    """Writes res as out_dir/name; returns the path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name)
    with open(path, "w") as f:
        json.dump(res, f, indent=2)
    return path
