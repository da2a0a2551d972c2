"""The persistent compilation cache: a warm start compiles nothing; corrupt,
torn or concurrent entries never produce wrong results."""
import glob
import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.once("the disk cache's files and processes do not depend on the eager mode")

PROGRAM = r"""
import sys, torch, torch_pjrt
torch.manual_seed(0)
x = torch.randn(6, 5)
t = x.to("tpu")
for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    y = (t[:, i % 5:] * (i + 1) + 1).cpu()
    assert torch.allclose(y, x[:, i % 5:] * (i + 1) + 1), "wrong result"
s = torch_pjrt.cache_stats()
print("STATS", s["misses"], s["disk_hits"], s["corrupt_entries"])
"""

# Compiles a new program every iteration, for minutes: killed mid-run.
WRITER = r"""
import torch, torch_pjrt
t = torch.randn(4000).to("tpu")
for i in range(1, 4000):
    t[:i].mul(2).cpu()
"""


def run(cache_dir, *args, **popen):
    env = dict(os.environ, TORCH_PJRT_CACHE_DIR=str(cache_dir), TORCH_PJRT_EAGER_MODE="strict")
    return subprocess.run([sys.executable, "-c", PROGRAM, *args], env=env, capture_output=True, text=True,
                          timeout=300)


def stats(r):
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("STATS")][0]
    return [int(v) for v in line.split()[1:]]


def test_warm_start_compiles_nothing(tmp_path):
    misses, disk_hits, _ = stats(run(tmp_path))
    assert misses > 0 and disk_hits == 0
    misses, disk_hits, _ = stats(run(tmp_path))
    assert misses == 0 and disk_hits > 0


def test_corrupt_entries_are_discarded_and_recompiled(tmp_path):
    stats(run(tmp_path))
    files = glob.glob(str(tmp_path / "*" / "*.exe"))
    assert files
    for i, f in enumerate(files):
        data = open(f, "rb").read()
        with open(f, "wb") as fh:  # truncate some, flip bytes in others
            fh.write(data[: len(data) // 2] if i % 2 else data[:-9] + bytes([data[-9] ^ 0xFF]) + data[-8:])
    r = run(tmp_path)
    misses, disk_hits, corrupt = stats(r)
    assert corrupt == len(files) and misses == len(files)
    assert "corrupt compilation cache entry" in r.stderr
    misses, disk_hits, corrupt = stats(run(tmp_path))
    assert misses == 0 and corrupt == 0


def test_killed_writer_and_concurrent_processes(tmp_path):
    # The writer compiles a new program per iteration (a new slice shape) for
    # far longer than it is given: it is killed while still writing entries.
    env = dict(os.environ, TORCH_PJRT_CACHE_DIR=str(tmp_path))
    p = subprocess.Popen([sys.executable, "-c", WRITER], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while len(glob.glob(str(tmp_path / "**" / "*"), recursive=True)) < 8 and time.time() < deadline:
        assert p.poll() is None, "the writer ended before it was killed"
        time.sleep(0.05)
    assert p.poll() is None, "the writer ended before it was killed"
    p.send_signal(signal.SIGKILL)
    p.wait()
    procs = [subprocess.Popen([sys.executable, "-c", PROGRAM, "12"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for q in procs:
        out, err = q.communicate(timeout=300)
        assert q.returncode == 0, err
        assert "STATS" in out
