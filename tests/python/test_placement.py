"""Several devices in one process (TORCH_PJRT_CPU_DEVICES=2): a tensor on
tpu:1 has its buffers on device 1, every op on it runs there, in each eager
mode and in compiled graphs, and values move between devices only through
copies. Each case runs in a child process, since the device count is fixed
when the client starts."""
import json
import os
import subprocess
import sys

from conftest import PASS_MODE


def run_child(code):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_PJRT_") or k == "TORCH_PJRT_EXIT_REPORT"}
    env.update(TORCH_PJRT_EAGER_MODE=PASS_MODE, TORCH_PJRT_CPU_DEVICES="2")
    if "TORCH_PJRT_CACHE_DIR" in os.environ:
        env["TORCH_PJRT_CACHE_DIR"] = os.environ["TORCH_PJRT_CACHE_DIR"]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


OPS_AND_MEMORY = r"""
import json, torch, torch_pjrt
seed = int(torch.randint(0, 2**31 - 1, ()).item())
torch.manual_seed(seed)
out = {"seed": seed}
a, b = torch.randn(64, 32), torch.randn(32, 16)
step = lambda x, y: torch.softmax(torch.relu(x @ y) * 0.5 + 1, dim=-1).sum(0)
# once first: the scalar constants 0.5 and 1 get their one copy on device 1
step(torch.ones(64, 32, device="tpu:1"), torch.ones(32, 16, device="tpu:1")).cpu()
before = [torch.tpu.memory_allocated(i) for i in range(2)]
ta, tb = a.to("tpu:1"), b.to("tpu:1")
r = step(ta, tb)
out["device"] = str(r.device)
out["err"] = (r.cpu() - step(a, b)).abs().max().item()
after = [torch.tpu.memory_allocated(i) for i in range(2)]
# device 1 holds the inputs and the result; device 0 gains nothing
out["grew1"] = after[1] - before[1]
out["grew0"] = after[0] - before[0]
out["want1"] = (a.numel() + b.numel() + r.numel()) * 4
# copies both ways, and factories on the current device
back = r.to("tpu:0")
out["back"] = [str(back.device), torch.equal(back.cpu(), r.cpu())]
with torch.tpu.device(1):
    f = torch.arange(6, device="tpu").float() * 2
out["factory"] = [str(f.device), f.cpu().tolist()]
out["zeros"] = torch.zeros(3, device="tpu:1").add_(2).cpu().tolist()
# an op given two devices raises as on CUDA, and the process goes on
try:
    torch.mm(ta, b.to("tpu:0"))
    out["mixed"] = "no error"
except RuntimeError as e:
    out["mixed"] = str(e)
out["after_error"] = (ta.sum() - a.sum()).abs().item()
# random numbers on tpu:1 follow its own generator
torch.tpu.manual_seed_all(7)
x1 = torch.rand(5, device="tpu:1").cpu()
torch.tpu.manual_seed_all(7)
x2 = torch.rand(5, device="tpu:1").cpu()
out["rand"] = [torch.equal(x1, x2), bool(((x1 >= 0) & (x1 < 1)).all())]
print(json.dumps(out))
"""


def test_tensors_on_the_second_device_live_and_compute_there():
    r = run_child(OPS_AND_MEMORY)
    assert r["device"] == "tpu:1"
    assert r["err"] < 1e-4, r
    assert r["grew1"] == r["want1"], r
    assert r["grew0"] == 0, r
    assert r["back"] == ["tpu:0", True]
    assert r["factory"] == ["tpu:1", [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]]
    assert r["zeros"] == [2.0, 2.0, 2.0]
    assert "same device" in r["mixed"] and "tpu:1" in r["mixed"] and "tpu:0" in r["mixed"], r["mixed"]
    assert r["after_error"] < 1e-3
    assert r["rand"] == [True, True]


TWO_MODELS = r"""
import json, torch, torch_pjrt
from transformers import LlamaConfig, LlamaForCausalLM
seed = int(torch.randint(0, 2**31 - 1, ()).item())
torch.manual_seed(seed)
cfg = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
cpu = LlamaForCausalLM(cfg).eval()
ids = torch.randint(0, 128, (2, 12))
with torch.no_grad():
    want = cpu(ids).logits
m0 = LlamaForCausalLM(cfg).eval(); m0.load_state_dict(cpu.state_dict()); m0.to("tpu:0")
m1 = LlamaForCausalLM(cfg).eval(); m1.load_state_dict(cpu.state_dict()); m1.to("tpu:1")
with torch.no_grad():
    # both devices' work pending at once (one flush in fused mode)
    l0 = m0(ids.to("tpu:0")).logits
    l1 = m1(ids.to("tpu:1")).logits
out = {"seed": seed, "devices": [str(l0.device), str(l1.device)],
       "err0": (l0.cpu() - want).abs().max().item(), "err1": (l1.cpu() - want).abs().max().item()}
# one training step on tpu:1 against the CPU
cpu.train(); m1.train()
for model, dev in ((cpu, "cpu"), (m1, "tpu:1")):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss = model(ids.to(dev), labels=ids.to(dev)).loss
    loss.backward()
    opt.step()
    out["loss_" + dev] = loss.item()
out["grad_device"] = str(next(m1.parameters()).grad.device)
out["param_err"] = max((p.detach().cpu() - q.detach()).abs().max().item()
                       for p, q in zip(m1.parameters(), cpu.parameters()))
# a compiled graph runs where its inputs are
f = torch.compile(lambda x, y: torch.tanh(x @ y) + 2, backend="tpu")
a, b = torch.randn(8, 8), torch.randn(8, 8)
f(torch.ones(8, 8, device="tpu:1"), torch.ones(8, 8, device="tpu:1")).cpu()  # compiles; makes its constants
before0 = torch.tpu.memory_allocated(0)
c1 = f(a.to("tpu:1"), b.to("tpu:1"))
out["compiled"] = [str(c1.device), (c1.cpu() - (torch.tanh(a @ b) + 2)).abs().max().item(),
                   torch.tpu.memory_allocated(0) - before0]
print(json.dumps(out))
"""


def test_a_model_on_each_device_matches_the_cpu():
    r = run_child(TWO_MODELS)
    assert r["devices"] == ["tpu:0", "tpu:1"]
    assert r["err0"] < 1e-4 and r["err1"] < 1e-4, r
    assert abs(r["loss_tpu:1"] - r["loss_cpu"]) <= 1e-4 * abs(r["loss_cpu"]), r
    assert r["grad_device"] == "tpu:1"
    assert r["param_err"] < 1e-4, r
    assert r["compiled"][0] == "tpu:1" and r["compiled"][1] < 1e-5, r
    assert r["compiled"][2] == 0, r  # nothing of the compiled call landed on tpu:0
