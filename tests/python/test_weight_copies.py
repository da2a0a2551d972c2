"""Weights read through copies derived from them (on XLA:CPU: a matmul's
weight as [in, out], the MoE kernel's expert tensors as panels; eager makes
its own, compiled graphs theirs) give the CPU's results after every kind of
write to the weight, those that leave the tensor's version alone included
(`.data` assignment, `.data.mul_()`)."""
import copy

import pytest
import torch

import torch_pjrt
from conftest import TPU, assert_close

torch._dynamo.config.recompile_limit = 64

# 16 rows and more read a compiled graph's weight from its [in, out] copy;
# fewer read the weight itself (see _dot_layout.py).
ROWS = (1, 15, 16, 64)


def _params(model):
    return [p for p in model.parameters() if p.dim() >= 2]


def _optimizer_step(model, grads):
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for p, g in zip(model.parameters(), grads):
        p.grad = g.to(p.device)
    opt.step()
    opt.zero_grad()


# Each write: (model, new values on the CPU, one per parameter) -> None; it
# is applied to the CPU model and to the tpu one alike.
WRITES = {
    "in_place": lambda m, new: [p.mul_(-2) for p in _params(m)],
    "data_mul": lambda m, new: [p.data.mul_(-2) for p in _params(m)],
    "data_assign": lambda m, new: [setattr(p, "data", n.to(p.device)) for p, n in zip(m.parameters(), new)],
    "data_copy": lambda m, new: [p.data.copy_(n) for p, n in zip(m.parameters(), new)],
    "copy": lambda m, new: [p.copy_(n) for p, n in zip(m.parameters(), new)],
    "load_state_dict": lambda m, new: m.load_state_dict(dict(zip(m.state_dict(), new))),
    "optimizer_step": _optimizer_step,
}


def _check(run, model, inputs):
    for x in inputs:
        # Twice: eager copies a weight from its second read of one content.
        for _ in range(2):
            assert_close(run(x.to(TPU)), model(x), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("write", list(WRITES))
def test_mlp_follows_every_write_to_its_weights(write, compiled):
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 16))
    dev = copy.deepcopy(model).to(TPU)
    run = torch.compile(dev, backend="tpu") if compiled else dev
    inputs = [torch.randn(rows, 32) for rows in ROWS]
    # New weights of the initial ones' scale: outputs of magnitude ~1.
    new = [torch.randn_like(p) / model[0].in_features**0.5 for p in model.parameters()]
    with torch.no_grad():
        _check(run, model, inputs)
        WRITES[write](model, new)
        WRITES[write](dev, new)
        _check(run, model, inputs)
        # And once more: the copies made after the write follow the next one.
        WRITES[write](model, [-n for n in new])
        WRITES[write](dev, [-n for n in new])
        _check(run, model, inputs)
    torch._dynamo.reset()


def per_pair(x, index, weights, gate_up, down):
    """The MoE layer one (token, choice) pair at a time."""
    out = torch.zeros(x.shape[0], x.shape[1])
    for t in range(index.shape[0]):
        for k in range(index.shape[1]):
            e = int(index[t, k])
            gate, up = (gate_up[e] @ x[t]).chunk(2)
            out[t] += weights[t, k] * (down[e] @ (torch.nn.functional.silu(gate) * up))
    return out


class Experts(torch.nn.Module):
    def __init__(self, gate_up, down):
        super().__init__()
        self.gate_up = torch.nn.Parameter(gate_up)
        self.down = torch.nn.Parameter(down)

    def forward(self, x, index, weights):
        if x.device.type != "tpu":
            return per_pair(x, index, weights, self.gate_up, self.down)
        return torch.ops.torch_pjrt.moe_experts(x, index, weights, self.gate_up, self.down, "silu")


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("write", ["in_place", "data_mul", "data_assign", "data_copy", "load_state_dict"])
def test_moe_experts_follow_every_write(write, compiled):
    # f32 expert tensors whose output features fill whole panels: compiled,
    # on XLA:CPU, the graph reads them as host panels (else [in, out]).
    torch._dynamo.reset()
    experts, hidden, inter, top_k = 6, 64, 48, 2
    model = Experts(torch.randn(experts, 2 * inter, hidden) / hidden**0.5,
                    torch.randn(experts, hidden, inter) / inter**0.5)
    dev = copy.deepcopy(model).to(TPU)
    run = torch.compile(dev, backend="tpu") if compiled else dev
    inputs = []
    for tokens in (1, 19):
        inputs.append((torch.randn(tokens, hidden),
                       torch.stack([torch.randperm(experts)[:top_k] for _ in range(tokens)]),
                       torch.rand(tokens, top_k)))
    new = [torch.randn_like(p) / p.shape[-1]**0.5 for p in model.parameters()]

    def check():
        for x, index, weights in inputs:
            for _ in range(2):
                assert_close(run(x.to(TPU), index.to(TPU), weights.to(TPU)), model(x, index, weights),
                             atol=1e-5, rtol=1e-5)

    with torch.no_grad():
        check()
        WRITES[write](model, new)
        WRITES[write](dev, new)
        check()
    if compiled and torch_pjrt.runtime_info()["platform"] == "cpu":
        from torch_pjrt import _dot_layout
        form = "host_panels" if torch_pjrt.runtime_info()["native_functions"] else "in_out"
        assert {(id(dev.gate_up), form), (id(dev.down), form)} <= set(_dot_layout.copies)
    torch._dynamo.reset()
