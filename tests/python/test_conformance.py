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
