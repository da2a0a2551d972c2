"""The pytorch-tests tool: runs a device-generic PyTorch test file on the CPU
and on the tpu and reports the tests that pass on the CPU but not on the tpu,
restarting after a test that crashes or hangs its process."""
import json
import textwrap
import zlib

import pytest

pytest.importorskip("expecttest")

from torch_pjrt.tools import pytorch_tests  # noqa: E402

pytestmark = pytest.mark.once("the tool runs its own processes; the eager mode is theirs, not the pass's")

SYNTHETIC = textwrap.dedent('''
    import os
    import signal
    import time

    import torch
    from torch.testing._internal.common_device_type import dtypes, dtypesIfCPU, instantiate_device_type_tests, onlyCPU
    from torch.testing._internal.common_utils import TestCase


    class TestSynthetic(TestCase):
        # Named so that they run in this order (unittest sorts test names).
        def test_a_crashes_on_tpu(self, device):
            if torch.device(device).type != "cpu":
                os.kill(os.getpid(), signal.SIGSEGV)

        def test_b_fails_on_tpu(self, device):
            self.assertEqual(torch.device(device).type, "cpu")

        def test_c_passes(self, device):
            x = torch.arange(4.0, device=device)
            self.assertEqual((x * 2).sum().item(), 12.0)

        def test_d_fails_everywhere(self, device):
            self.fail("on every device")

        def test_e_hangs_on_tpu(self, device):
            if torch.device(device).type != "cpu":
                time.sleep(600)


    class TestSecond(TestCase):
        def test_passes(self, device):
            self.assertEqual(torch.ones(2, device=device).sum().item(), 2.0)

        @onlyCPU
        def test_only_cpu(self, device):
            pass

        # A float16 variant for the CPU only: the tpu has no such test.
        @dtypesIfCPU(torch.float16, torch.float32)
        @dtypes(torch.float32)
        def test_dtypes(self, device, dtype):
            pass


    class TestCpuOnly(TestCase):
        def test_passes(self, device):
            pass


    # PyTorch names the first TestSecondPRIVATEUSE1, the second
    # TestSyntheticTPU; they run in this order.
    instantiate_device_type_tests(TestSecond, globals())
    instantiate_device_type_tests(TestSynthetic, globals())
    instantiate_device_type_tests(TestCpuOnly, globals(), only_for="cpu")
''')


def test_id_mapping():
    def ids(cls, name):
        return [f"f.py::{cls}PRIVATEUSE1::{name}", f"f.py::{cls}TPU::{name}"]
    assert pytorch_tests.tpu_ids("f.py::TestFooCPU::test_bar_cpu_float32") == ids("TestFoo", "test_bar_tpu_float32")
    assert pytorch_tests.tpu_ids("f.py::TestFooCPU::test_cpu_bar_cpu") == ids("TestFoo", "test_cpu_bar_tpu")
    assert pytorch_tests.tpu_ids("f.py::TestFooCPU::test_x_cpu_int64_float32") == \
        ids("TestFoo", "test_x_tpu_int64_float32")
    assert pytorch_tests.tpu_ids("f.py::TestFoo::test_bar") == []


def test_reports_exactly_the_tests_that_pass_on_cpu_and_not_on_tpu(tmp_path, capsys):
    f = tmp_path / "test_synthetic.py"
    f.write_text(SYNTHETIC)
    out = tmp_path / "r.json"
    # 8 s: the hang costs that much, and a passing test's first compiles on
    # a busy machine stay well under it.
    assert pytorch_tests.main([str(f), "--timeout", "8", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    (r,) = json.loads(out.read_text())
    cls = "test_synthetic.py::TestSyntheticTPU::"
    assert r["cpu_passed"] == 6 and r["tpu_passed"] == 3, text
    assert r["cpu_pass_tpu_fail"] == {
        cls + "test_a_crashes_on_tpu_tpu": "crash (signal 11)",
        cls + "test_b_fails_on_tpu_tpu": "failed",
        cls + "test_e_hangs_on_tpu_tpu": "hang",
    }, text
    # The crash cost the tpu run a process and the tests after it still ran;
    # the hang was the last test, so nothing was restarted after it.
    assert r["processes"] == {"cpu": 1, "tpu": 2}
    assert r["crashes"]["tpu"] == [cls + "test_a_crashes_on_tpu_tpu"]
    assert r["hangs"]["tpu"] == [cls + "test_e_hangs_on_tpu_tpu"]
    # The test failing on the CPU too is not compared.
    assert "test_d_fails_everywhere" not in str(r["cpu_pass_tpu_fail"])
    assert list(r["reasons"]) == [cls + "test_b_fails_on_tpu_tpu"]
    assert r["reasons"][cls + "test_b_fails_on_tpu_tpu"].startswith("AssertionError")
    # Tests the file keeps to the CPU (only_for="cpu", onlyCPU) are not counted.
    assert sorted(r["cpu_only"]) == ["test_synthetic.py::TestCpuOnlyCPU::test_passes_cpu",
                                     "test_synthetic.py::TestSecondCPU::test_dtypes_cpu_float16",
                                     "test_synthetic.py::TestSecondCPU::test_only_cpu_cpu"]
    assert r["cpu_counts"] == {"failed": 1, "passed": 9}
    assert r["tpu_counts"] == {"crash": 1, "failed": 1, "hang": 1, "passed": 3, "skipped": 1}
    assert "3 of 6 CPU passes pass on tpu (50.0%)" in text
    assert "3 CPU passes are CPU-only" in text


def test_sample_is_fixed(tmp_path):
    # The sample is the tests whose ids hash lowest: the same in every run
    # and every process of a run, whatever else the file holds.
    f = tmp_path / "test_synthetic.py"
    f.write_text(SYNTHETIC)
    r = pytorch_tests.run_device(str(f), "cpu", sample=2, workdir=str(tmp_path))
    ids = [f"test_synthetic.py::TestSyntheticCPU::test_{n}_cpu"
           for n in ("a_crashes_on_tpu", "b_fails_on_tpu", "c_passes", "d_fails_everywhere", "e_hangs_on_tpu")]
    ids += [f"test_synthetic.py::{t}_cpu" for t in ("TestSecondCPU::test_passes", "TestSecondCPU::test_only_cpu",
                                                     "TestCpuOnlyCPU::test_passes")]
    ids += [f"test_synthetic.py::TestSecondCPU::test_dtypes_cpu_{d}" for d in ("float16", "float32")]
    assert sorted(r["status"]) == sorted(sorted(ids, key=lambda s: zlib.crc32(s.encode()))[:2])


def test_match_keeps_the_tests_a_regex_finds(tmp_path):
    f = tmp_path / "test_synthetic.py"
    f.write_text(SYNTHETIC)
    r = pytorch_tests.compare(str(f), match=r"test_(c_passes|b_fails)", timeout=8)
    assert sorted(r["cpu_counts"].items()) == [("passed", 2)]
    assert r["tpu_passed"] == 1
    assert list(r["cpu_pass_tpu_fail"]) == ["test_synthetic.py::TestSyntheticTPU::test_b_fails_on_tpu_tpu"]
