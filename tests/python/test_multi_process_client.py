"""torch_pjrt.distributed.configure_client: a process as one node of a
multi-process PJRT client, its key-value exchange backed by a c10d store.
The XLA:CPU plugin forms no client across processes, so what runs here is
the single-node job (the options and callbacks reach the plugin, which
builds its client as usual) and the errors; each case runs in a fresh
process, as the client is made at the device's first use."""
import json
import subprocess
import sys

import pytest
import torch

import torch_pjrt

pytestmark = pytest.mark.once("client creation happens before any op runs")

pytest.importorskip("torch.distributed")


def _fresh(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_single_node_job_forms_its_client_through_a_c10d_store(tmp_path):
    r = _fresh(f"""
import json, torch, torch.distributed as dist, torch_pjrt
store = dist.FileStore({str(tmp_path / "store")!r}, 1)
torch_pjrt.distributed.configure_client(store, 0, 1)
x = torch.arange(4.0, device="tpu") * 2
info = torch_pjrt.runtime_info()
print(json.dumps({{"x": x.cpu().tolist(), "node_id": info.get("node_id"), "num_nodes": info.get("num_nodes")}}))
""")
    assert r == {"x": [0.0, 2.0, 4.0, 6.0], "node_id": 0, "num_nodes": 1}


def test_a_node_outside_its_job_is_refused_before_any_client_exists():
    r = _fresh("""
import json, torch.distributed as dist, torch_pjrt
errors = []
for node, nodes in ((1, 1), (-1, 2), (0, 0)):
    try:
        torch_pjrt.distributed.configure_client(dist.HashStore(), node, nodes)
        errors.append(None)
    except RuntimeError as e:
        errors.append(str(e))
print(json.dumps({"errors": errors, "started": torch_pjrt._C._initialized()}))
""")
    assert all(e and "node_id must be in [0, num_nodes)" in e for e in r["errors"]), r
    assert not r["started"]


def test_configuring_after_the_device_is_in_use_is_an_error():
    import torch.distributed as dist
    torch.ones(1, device="tpu").cpu()
    with pytest.raises(RuntimeError, match="before the device's first use"):
        torch_pjrt.distributed.configure_client(dist.HashStore(), 0, 1)
    assert "num_nodes" not in torch_pjrt.runtime_info()
