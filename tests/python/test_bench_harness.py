"""The benchmark harness's timing loop (no timed assertions: the figures
themselves are for `python -m torch_pjrt bench`)."""
import torch

import torch_pjrt
from torch_pjrt import bench


def test_interleaved_runs_each_side_per_round_in_its_mode():
    before = torch_pjrt.get_eager_mode()
    seen = []
    x = torch.randn(8, device="tpu")

    def side(name):
        def fn():
            seen.append((name, torch_pjrt.get_eager_mode()))
            (x + 1).sum()
        return fn

    r = bench._interleaved({"cpu": (side("cpu"), bench._no_sync, None),
                            "fused": (side("fused"), torch.tpu.synchronize, "fused"),
                            "strict": (side("strict"), torch.tpu.synchronize, "strict")}, repeats=3, warmup=1)
    assert set(r) == {"cpu", "fused", "strict"}
    assert all(t > 0 and c >= 0 for t, c in r.values())
    # warm-up once per side, then rounds alternating the sides
    assert [n for n, _ in seen[3:]] == ["cpu", "fused", "strict"] * 3
    assert all(m == "fused" for n, m in seen if n == "fused")
    assert all(m == "strict" for n, m in seen if n == "strict")
    assert all(m == before for n, m in seen if n == "cpu")  # a PyTorch side keeps the caller's mode
    assert torch_pjrt.get_eager_mode() == before  # and the caller gets its mode back
