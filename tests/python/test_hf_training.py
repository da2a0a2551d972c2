"""Hugging Face training on tpu with no flags: Trainer and an Accelerator
loop pick the device themselves and match the same training on the CPU."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

# A tiny Llama, its data and the two training paths. Run in fresh processes
# with accelerate's own variables removed: what a user gets from a plain
# script. Prints the device training ran on and the loss of every step.
_SCRIPT = r"""
import json, sys, torch, torch_pjrt
from transformers import LlamaConfig, LlamaForCausalLM
path, device = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=128, max_position_embeddings=64)
model = LlamaForCausalLM(cfg)
ids = torch.randint(0, 128, (40, 16), generator=torch.Generator().manual_seed(1))
if path == "trainer":
    from transformers import Trainer, TrainingArguments
    args = TrainingArguments(output_dir=sys.argv[3], per_device_train_batch_size=2, max_steps=20, logging_steps=1,
                             learning_rate=1e-3, report_to=[], use_cpu=device == "cpu", save_strategy="no",
                             dataloader_pin_memory=False, seed=0, data_seed=0)
    tr = Trainer(model=model, args=args, train_dataset=[{"input_ids": i, "labels": i} for i in ids])
    tr.train()
    losses = [h["loss"] for h in tr.state.log_history if "loss" in h]
    on = str(next(tr.model.parameters()).device)
else:
    from accelerate import Accelerator
    acc = Accelerator(cpu=device == "cpu")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    dl = torch.utils.data.DataLoader(ids, batch_size=2)
    model, opt, dl = acc.prepare(model, opt, dl)
    losses = []
    for batch in dl:
        loss = model(batch, labels=batch).loss
        acc.backward(loss)
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    on = str(acc.device)
    model = acc.unwrap_model(model)
import os
os.makedirs(sys.argv[3], exist_ok=True)
torch.save({k: v.detach().cpu() for k, v in (tr.model if path == "trainer" else model).state_dict().items()},
           os.path.join(sys.argv[3], "params.pt"))
print(json.dumps({"device": on, "losses": losses}))
"""


def _train(path, device, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCELERATE_")}
    r = subprocess.run([sys.executable, "-c", _SCRIPT, path, device, str(tmp_path / device)], env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("path", ["trainer", "accelerator"])
def test_training_runs_on_tpu_with_no_flags_and_matches_cpu(path, tmp_path):
    tpu = _train(path, "tpu", tmp_path)
    cpu = _train(path, "cpu", tmp_path)
    assert tpu["device"].startswith("tpu") and cpu["device"] == "cpu"
    assert len(tpu["losses"]) == len(cpu["losses"]) == 20
    # Measured (strict): losses within 2e-7 relative; parameters after 20
    # steps within 8.5e-6 (Trainer: its gradient clipping sums the norm in
    # another order) and 1.2e-7 (Accelerator loop).
    for step, (a, b) in enumerate(zip(tpu["losses"], cpu["losses"])):
        assert abs(a - b) <= 2e-6 * abs(b), f"step {step}: tpu {a} vs cpu {b}"
    got, want = (torch.load(tmp_path / d / "params.pt") for d in ("tpu", "cpu"))
    assert got.keys() == want.keys()
    for k in want:
        torch.testing.assert_close(got[k], want[k], atol=1e-4, rtol=0, msg=lambda m: f"{k}: {m}")


# The same Trainer under torchrun: two processes on tpu_dist, DDP over them.
_LAUNCHED = r"""
import json, os, sys, torch, torch_pjrt
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments
torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=128, max_position_embeddings=64)
model = LlamaForCausalLM(cfg)
ids = torch.randint(0, 128, (40, 16), generator=torch.Generator().manual_seed(1))
args = TrainingArguments(output_dir=sys.argv[1], per_device_train_batch_size=int(sys.argv[2]), max_steps=10,
                         logging_steps=1, learning_rate=1e-3, report_to=[], save_strategy="no", seed=0, data_seed=0)
tr = Trainer(model=model, args=args, train_dataset=[{"input_ids": i, "labels": i} for i in ids])
tr.train()
rank = int(os.environ.get("RANK", 0))
torch.save({k: v.detach().cpu() for k, v in tr.model.state_dict().items()}, sys.argv[3] + f".params{rank}")
with open(sys.argv[3] + (f".rank{rank}" if rank else ""), "w") as f:
    json.dump({"losses": [h["loss"] for h in tr.state.log_history if "loss" in h],
               "mode": str(tr.accelerator.state.distributed_type),
               "backend": str(tr.accelerator.state.backend), "device": str(tr.args.device),
               "stats": torch_pjrt.distributed.stats()}, f)
"""


@pytest.mark.once("the launcher and the c10d host transport do not depend on the eager mode; Trainer runs in every mode above")
def test_trainer_under_torchrun_trains_data_parallel_like_one_process_on_the_global_batch(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(_LAUNCHED)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCELERATE_")}
    launched, single = tmp_path / "launched.json", tmp_path / "single.json"
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                        "--master-port", str(29600 + os.getpid() % 1000), str(script), str(tmp_path / "a"), "2",
                        str(launched)], env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([sys.executable, str(script), str(tmp_path / "b"), "4", str(single)], env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    one = json.loads(single.read_text())
    for rank, path in enumerate((launched, Path(f"{launched}.rank1"))):
        two = json.loads(path.read_text())
        assert two["backend"] == "tpu_dist" and two["device"] == "tpu:0" and "MULTI" in two["mode"], (rank, two)
        assert two["stats"]["host_collectives"] > 10
        assert len(two["losses"]) == len(one["losses"]) == 10
        for step, (a, b) in enumerate(zip(two["losses"], one["losses"])):
            assert abs(a - b) <= 1e-5 * abs(b), f"rank {rank} step {step}: 2 processes {a} vs 1 process {b}"
        # Each rank's replica ends as the one process's model.
        got, want = torch.load(f"{launched}.params{rank}"), torch.load(f"{single}.params0")
        worst = max((got[k] - want[k]).abs().max().item() for k in want)
        assert worst <= 1e-5, (rank, worst)  # measured: 4.7e-7
