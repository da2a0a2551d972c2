"""The quick OpInfo conformance run: a spread-out subset of PyTorch's OpInfo
database, compared against the CPU, must stay above its bar and never crash."""
import json
import os

import pytest

pytest.importorskip("expecttest")

from torch_pjrt import conformance  # noqa: E402


def test_quick_conformance(tmp_path):
    r = conformance.run(quick=True, out=str(tmp_path), log=lambda *_: None)
    assert os.path.exists(tmp_path / "conformance.html")
    with open(tmp_path / "conformance.json") as f:
        saved = json.load(f)
    assert saved["forward_pass_rate"] == r["forward_pass_rate"]
    failures = {k: v["first_failure"] for k, v in r["ops"].items() if v["status"] == "fail"}
    print(f"forward {r['forward_pass_rate']:.2%} native {r['native_rate']:.2%} "
          f"gradient {r['gradient_pass_rate']:.2%}; failing: {json.dumps(failures, indent=1)[:4000]}")
    assert r["crashed_ops"] == []
    assert r["forward_cases"] > 50
    assert r["forward_pass_rate"] >= 0.90
    assert r["gradient_pass_rate"] >= 0.85
