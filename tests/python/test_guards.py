"""The suite's own guards can fail: a CPU fallback in a process a test
starts fails that test unless declared, and the exit report a child writes
(TORCH_PJRT_EXIT_REPORT) names what it ran."""
import json
import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.once("checks the suite's guards, in processes of their own")

HERE = os.path.dirname(os.path.abspath(__file__))

# special_bessel_j0 has no lowering: it runs through the CPU fallback.
CHILD = "import torch; x = torch.rand(4, device='tpu'); print(torch.special.bessel_j0(x).sum().item())"


def test_a_child_writes_what_it_ran(tmp_path):
    env = dict(os.environ, TORCH_PJRT_EXIT_REPORT=str(tmp_path), TORCH_PJRT_EAGER_MODE="fused")
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    (report,) = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert report["start_mode"] == "fused"
    assert any("special_bessel_j0" in k for k in report["fallback"]), report
    assert report["ops_per_mode"]["fused"] > 0 and report["ops_per_mode"]["strict"] == 0, report


def test_a_spawned_worker_reports_too(tmp_path):
    # As torch.multiprocessing.spawn starts its workers.
    code = ("import multiprocessing as mp, torch\n"
            "def work():\n"
            "    print((torch.ones(3, device='tpu') * 2).sum().item())\n"
            "if __name__ == '__main__':\n"
            "    p = mp.get_context('spawn').Process(target=work)\n"
            "    p.start(); p.join()\n")
    (tmp_path / "main.py").write_text(code)
    reports = tmp_path / "reports"
    reports.mkdir()
    env = dict(os.environ, TORCH_PJRT_EXIT_REPORT=str(reports))
    r = subprocess.run([sys.executable, str(tmp_path / "main.py")], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "6.0" in r.stdout, r.stderr[-2000:]
    found = [json.loads(p.read_text()) for p in reports.glob("*.json")]
    assert len(found) == 2, found  # the parent and its worker
    assert sum(sum(f["ops_per_mode"].values()) for f in found) > 0


# A copy of the suite's conftest judges these, as it judges every test.
INNER = f"""
import subprocess, sys
import pytest

CHILD = {CHILD!r}


def test_undeclared():
    subprocess.run([sys.executable, "-c", CHILD], check=True)


@pytest.mark.allow_fallback("special_bessel_j0")
def test_declared():
    subprocess.run([sys.executable, "-c", CHILD], check=True)
"""


def test_an_undeclared_fallback_in_a_child_fails_its_test(tmp_path):
    shutil.copy(os.path.join(HERE, "conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_inner.py").write_text(INNER)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                        str(tmp_path / "test_inner.py")], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out[-3000:]
    # The guards run at teardown: pytest reports their failure as an error.
    assert "2 passed, 1 error" in out and "ERROR test_inner.py::test_undeclared" in out, out[-3000:]
    assert "in a process the test started" in out and "special_bessel_j0" in out, out[-3000:]
