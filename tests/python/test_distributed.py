"""torch.distributed on tpu through the c10d backend tpu_dist
(csrc/aten/distributed.cc): two processes on loopback, each on its own
tpu:0, as on TPU VMs with a chip per process (the host transport). Each
scenario runs dist_worker.py in both ranks; every rank reports, and the
tests check each rank's results. The same
scenarios with the ranks as threads of one process, rank r on tpu:r of a
two-device client, take the device transport."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.once("collectives run on the host transport (gloo), whatever the eager mode")

pytest.importorskip("torch.distributed")

WORKER = Path(__file__).with_name("dist_worker.py")


def _run(scenario, tmp_path, world=2, timeout_s=60, **env):
    store, out = tmp_path / "store", tmp_path / "out.json"
    full_env = {**os.environ, **{k: str(v) for k, v in env.items()}}
    procs = [subprocess.Popen([sys.executable, str(WORKER), scenario, str(r), str(world), str(store),
                               str(out if r == 0 else tmp_path / f"out{r}.json")],
                              env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(world)]
    logs = []
    for p in procs:
        try:
            _, err = p.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        logs.append(err[-3000:])
    for rank, p in enumerate(procs):
        assert p.returncode == 0, f"rank {rank}: {logs[rank]}"
    ranks = [out] + [tmp_path / f"out{r}.json" for r in range(1, world)]
    result = json.loads(out.read_text())
    result["ranks"] = [json.loads(f.read_text()) if f.exists() else None for f in ranks]
    return result


def _run_threads(scenario, tmp_path, world=2, **env):
    out = tmp_path / "out.json"
    full_env = {**os.environ, "TORCH_PJRT_CPU_DEVICES": str(world), **{k: str(v) for k, v in env.items()}}
    p = subprocess.run([sys.executable, str(WORKER), "threads", scenario, str(world), str(out)], env=full_env,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(out.read_text())
    assert r["errors"] == [] and r["devices"] == world, r["errors"]
    return r


def _every_rank_checked_all(r):
    # Rank 0 also checks the reductions to it; the others check what they
    # receive (broadcast from rank 1, scatter, send/recv, ...).
    for rank, rr in enumerate(r["ranks"]):
        assert rr["failures"] == [] and rr["checked"] >= (50 if rank == 0 else 35), (rank, rr)


def _losses_and_parameters_match(r):
    for rank, rr in enumerate(r["ranks"]):
        assert len(rr["parallel"]) == len(rr["reference"]) == 20
        for step, (p, ref) in enumerate(zip(rr["parallel"], rr["reference"])):
            assert abs(p - ref) <= 1e-5 * abs(ref), (rank, step, p, ref)
        assert rr["param_max_diff"] <= PARAM_TOL, (rank, rr["param_max_diff"])


# After 20 AdamW steps at lr 1e-3, parameters trained on split batches
# against one process on the whole batch differ in rounding only (gradients
# summed as two halves): measured 1.2e-7 on every rank, both transports.
PARAM_TOL = 2e-6


def test_every_collective_matches_gloo_on_the_cpu(tmp_path):
    r = _run("collectives", tmp_path)
    _every_rank_checked_all(r)
    assert r["stats"]["host_collectives"] > 0 and r["stats"]["device_collectives"] == 0


def test_the_default_backend_of_the_device_is_tpu_dist(tmp_path):
    r = _run("default_backend", tmp_path)
    assert r["backend"] == "tpu:tpu_dist" and r["tpu"] == [3.0, 3.0, 3.0], r


@pytest.mark.parametrize("scenario", ["ddp", "fsdp2"])
def test_data_parallel_training_equals_one_process_on_the_global_batch(scenario, tmp_path):
    pytest.importorskip("transformers")
    r = _run(scenario, tmp_path)
    _losses_and_parameters_match(r)
    assert r["stats"]["host_collectives"] > 20


def test_dtensor_shard_replicate_round_trips_are_exact(tmp_path):
    r = _run("dtensor", tmp_path)
    for rr in r["ranks"]:
        assert rr["round_trips"] and all(rr["round_trips"].values()), rr


def test_async_collectives_return_before_the_exchange_and_complete_at_wait(tmp_path):
    r = _run("async_work", tmp_path)
    # Rank 1 joins 2 s late: a call that waited for the exchange would take that long.
    assert r["call_seconds"] < 1.0 and not r["completed_at_return"], r
    for rr in r["ranks"]:
        assert rr["completed_after_wait"] and rr["all_reduce"] == [3.0] * 5, rr
        assert rr["future_value"] == [[[0.5] * 3] * 2], rr
        assert rr["in_flight"] == [[float(2 * i + 1)] * 3 for i in range(4)], rr
        assert rr["stats"]["host_collectives"] >= 6, rr


def test_a_peer_that_dies_fails_the_collective_with_a_clear_error(tmp_path):
    r = _run("peer_dies", tmp_path, DIST_TIMEOUT=20)
    assert r["raised"], r
    assert r["ranks"][1] is None  # rank 1 left before writing anything
    assert r["seconds"] < 30, r


@pytest.mark.parametrize("family", ["llama", "qwen3"])
def test_tp_plan_auto_logits_equal_the_cpu(family, tmp_path):
    transformers = pytest.importorskip("transformers")
    import torch
    torch.manual_seed(0)
    common = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=128, max_position_embeddings=64)
    if family == "llama":
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**common))
    else:
        model = transformers.Qwen3ForCausalLM(transformers.Qwen3Config(head_dim=16, **common))
    model.save_pretrained(tmp_path / family)
    for res in _torchrun_tp(tmp_path / family, tmp_path / "out.json"):
        assert res["sharded"] and res["backend"] == "tpu_dist" and res["device"] == "tpu:0", res
        assert res["max_diff"] <= 1e-5, res
        assert res["stats"]["host_collectives"] > 0


def _torchrun_tp(model_dir, out, *extra):
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                        "--master-port", str(29500 + os.getpid() % 1000), str(WORKER), "tp_plan",
                        str(model_dir), str(out), *extra], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return [json.loads(Path(f).read_text()) for f in (out, f"{out}.rank1")]


def test_expert_parallel_qwen3_moe_logits_equal_the_cpu(tmp_path):
    """transformers' expert parallelism (DistributedConfig(ep_size=2)):
    each rank holds half the experts, and the logits are the CPU's."""
    transformers = pytest.importorskip("transformers")
    import torch
    torch.manual_seed(0)
    cfg = transformers.Qwen3MoeConfig(hidden_size=64, intermediate_size=128, moe_intermediate_size=32, num_experts=4,
                                      num_experts_per_tok=2, num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, head_dim=16, vocab_size=128, max_position_embeddings=64)
    transformers.Qwen3MoeForCausalLM(cfg).save_pretrained(tmp_path / "moe")
    for res in _torchrun_tp(tmp_path / "moe", tmp_path / "out.json", "2"):
        assert res["experts_here"] == 2, res  # 4 experts over 2 ranks
        assert res["backend"] == "tpu_dist" and res["device"] == "tpu:0", res
        assert res["max_diff"] <= 1e-5, res
        assert res["stats"]["host_collectives"] > 0


def test_a_group_in_one_process_runs_collectives_on_the_devices(tmp_path):
    """Four ranks as threads on four devices: every collective of tpu tensors
    on the device transport, results exact (sums in rank order, which gloo's
    ring does not keep beyond two ranks: _ordered_sum in dist_worker.py)."""
    r = _run_threads("collectives", tmp_path, world=4)
    _every_rank_checked_all(r)
    assert r["stats"]["device_collectives"] >= 200 and r["stats"]["host_collectives"] == 0, r["stats"]
    assert r["stats"]["host_bytes"] == 0 and r["stats"]["cpu_collectives"] > 0  # CPU tensors go to gloo as they are


@pytest.mark.parametrize("scenario", ["ddp", "fsdp2"])
def test_data_parallel_on_the_device_transport_equals_one_process(scenario, tmp_path):
    pytest.importorskip("transformers")
    r = _run_threads(scenario, tmp_path)
    _losses_and_parameters_match(r)
    assert r["stats"]["device_collectives"] > 20 and r["stats"]["host_collectives"] == 0, r["stats"]


def test_device_transport_work_completes_with_its_replica(tmp_path):
    r = _run_threads("device_work", tmp_path)
    for rr in r["ranks"]:
        assert rr["completed_after_wait"] and rr["success"] and rr["all_reduce"] == [3.0] * 3, rr
        assert rr["future_value"] == [[[0.5] * 3] * 2], rr
        assert rr["chained"] == [20.0] * 4, rr
    assert r["stats"]["device_collectives"] >= 6 and r["stats"]["host_collectives"] == 0, r["stats"]


def test_dtensor_on_the_device_transport_round_trips_exactly(tmp_path):
    r = _run_threads("dtensor", tmp_path)
    for rr in r["ranks"]:
        assert rr["round_trips"] and all(rr["round_trips"].values()), rr


def test_a_member_that_never_comes_is_an_error_after_the_timeout(tmp_path):
    r = _run_threads("member_missing", tmp_path, DIST_TIMEOUT=3)
    assert r["raised"] and "timed out" in r["raised"] and "1 of 2" in r["raised"], r
    assert 2.5 < r["seconds"] < 60, r
    assert r["after"] == [2.0, 2.0, 2.0]  # the process goes on
