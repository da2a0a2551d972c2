"""The MoE experts kernel (csrc/ops/moe, torch_pjrt.kernels.moe): the op
against a per-pair loop on the CPU, its errors, and a Qwen3-MoE whose
experts run through it in transformers against the same model on the CPU."""
import copy
import random
from unittest import mock

import pytest
import torch
import torch.nn.functional as F

import torch_pjrt
import torch_pjrt.kernels as kernels
from conftest import TPU, assert_adamw_steps_match, assert_close

ACTS = {"silu": F.silu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "relu": F.relu}


def per_pair(x, index, weights, gate_up, down, act="silu"):
    """The layer one (token, choice) pair at a time, in float32."""
    out = torch.zeros(x.shape[0], x.shape[1])
    for t in range(index.shape[0]):
        for k in range(index.shape[1]):
            e = int(index[t, k])
            if not 0 <= e < gate_up.shape[0]:
                continue
            gate, up = (gate_up[e].float() @ x[t].float()).chunk(2)
            out[t] += weights[t, k].float() * (down[e].float() @ (ACTS[act](gate) * up))
    return out


def layer(tokens, hidden, inter, experts, top_k, dtype=torch.float32):
    x = torch.randn(tokens, hidden).to(dtype)
    index = torch.stack([torch.randperm(experts)[:top_k] for _ in range(tokens)])
    weights = torch.rand(tokens, top_k).to(dtype)
    gate_up = (torch.randn(experts, 2 * inter, hidden) / hidden**0.5).to(dtype)
    down = (torch.randn(experts, hidden, inter) / inter**0.5).to(dtype)
    return x, index, weights, gate_up, down


def run(x, index, weights, gate_up, down, act="silu", in_out=False):
    if in_out:
        gate_up, down = gate_up.transpose(1, 2).contiguous(), down.transpose(1, 2).contiguous()
    args = [t.to(TPU) for t in (x, index, weights, gate_up, down)]
    return torch.ops.torch_pjrt.moe_experts(*args, act, in_out)


@pytest.mark.parametrize("in_out", [False, True])
@pytest.mark.parametrize("shape", [(1, 16, 8, 4, 2), (13, 32, 16, 8, 3), (64, 32, 8, 4, 4), (40, 24, 12, 64, 2)])
def test_experts_match_a_per_pair_loop(shape, in_out):
    args = layer(*shape)
    assert_close(run(*args, in_out=in_out), per_pair(*args), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("tokens", [1, 24])
def test_repeated_calls_follow_the_expert_weights(tokens):
    # Read again with one content, the expert tensors come from [in, out]
    # copies on XLA:CPU (dense_copy); an in-place change must reach the
    # next call, and a second layer's tensors get copies of their own.
    x, index, weights, gate_up, down = layer(tokens, 32, 8, 6, 2)
    dev = [t.to(TPU) for t in (x, index, weights, gate_up, down)]
    other = [t.to(TPU) for t in layer(tokens, 32, 8, 6, 2)[3:]]

    def call(gu, dn):
        return torch.ops.torch_pjrt.moe_experts(*dev[:3], gu, dn, "silu", False)

    with torch.no_grad():
        for _ in range(3):
            assert_close(call(dev[3], dev[4]), per_pair(x, index, weights, gate_up, down), atol=1e-5, rtol=1e-5)
            assert_close(call(*other), per_pair(x, index, weights, *[t.cpu() for t in other]), atol=1e-5, rtol=1e-5)
        dev[3].mul_(-0.5)
        dev[4][1:].add_(0.25)
        gate_up.mul_(-0.5)
        down[1:].add_(0.25)
        for _ in range(3):
            assert_close(call(dev[3], dev[4]), per_pair(x, index, weights, gate_up, down), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("act", sorted(ACTS))
def test_activations(act):
    args = layer(9, 16, 8, 4, 2)
    assert_close(run(*args, act=act), per_pair(*args, act=act), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("tokens", [1, 11])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_rounds_like_the_layers(dtype, tokens):
    args = layer(tokens, 32, 16, 8, 2, dtype)
    out = run(*args)
    assert out.dtype == dtype
    assert_close(out.float(), per_pair(*args), atol=3e-2, rtol=3e-2)


def test_sentinel_and_out_of_range_ids_contribute_nothing():
    x, index, weights, gate_up, down = layer(10, 16, 8, 4, 3)
    # Expert parallelism marks pairs routed to experts held elsewhere with
    # ids >= experts; negative ids are dropped the same way.
    index[0, 0], index[3, 1], index[5] = 4, 7, -1
    assert_close(run(x, index, weights, gate_up, down), per_pair(x, index, weights, gate_up, down),
                 atol=1e-5, rtol=1e-5)
    assert torch.equal(run(x, index, weights, gate_up, down)[5].cpu(), torch.zeros(16))
    # One token (decoding a single sequence) takes its own path.
    for row in (0, 3, 5):
        one = (x[row:row + 1], index[row:row + 1], weights[row:row + 1], gate_up, down)
        assert_close(run(*one), per_pair(*one), atol=1e-5, rtol=1e-5)


def native_calls(name="grouped_rows"):
    """Calls of a native function so far (XLA:CPU): the grouped kernel, or
    the layer's routing ("moe_dispatch", "moe_combine")."""
    return torch_pjrt.runtime_info()["native_functions"].get(f"torch_pjrt_{name}_f32", 0)


native_only = pytest.mark.skipif(not torch_pjrt.runtime_info()["native_functions"],
                                 reason="the plugin runs no native functions (XLA:CPU does)")


def host_panels(w):
    """[E, out, in] in the native kernel's panel form [E, out / 32, in, 32]."""
    e, n, k = w.shape
    return w.reshape(e, n // 32, 32, k).permute(0, 1, 3, 2).contiguous()


@native_only
@pytest.mark.parametrize("in_out", [False, True])
def test_inference_on_xla_cpu_runs_the_native_grouped_kernel(in_out):
    # f32 expert tensors read again with one content go through the native
    # grouped kernel from panel-major copies: uneven groups (one expert with
    # rows for three blocks of 8, an idle one, tails of many lengths),
    # sentinel and negative ids, and an in-place change of the weights.
    x, index, weights, gate_up, down = layer(37, 64, 48, 12, 3)
    index[:21, 0] = 5
    index[index == 7] = 3
    index[2, 1], index[9, 2] = -1, 12
    dev = [t.to(TPU) for t in (x, index, weights)]
    gu, dn = [(t.transpose(1, 2).contiguous() if in_out else t).to(TPU) for t in (gate_up, down)]

    def call():
        return torch.ops.torch_pjrt.moe_experts(*dev, gu, dn, "silu", in_out)

    with torch.no_grad():
        start = native_calls()
        routed = [native_calls(name) for name in ("moe_dispatch", "moe_combine")]
        for _ in range(3):
            assert_close(call(), per_pair(x, index, weights, gate_up, down), atol=1e-5, rtol=1e-5)
        # The first read makes no copy; each later call runs both products
        # natively, the pairs grouped and summed back natively around them.
        assert native_calls() - start == 4
        assert [native_calls(name) - n for name, n in zip(("moe_dispatch", "moe_combine"), routed)] == [2, 2]
        gu.mul_(-0.5)
        gate_up.mul_(-0.5)
        for _ in range(2):
            assert_close(call(), per_pair(x, index, weights, gate_up, down), atol=1e-5, rtol=1e-5)
        assert native_calls() - start == 6
        # A single token (decoding one sequence) reads the same copies,
        # sentinel and out-of-range choices included (rows 2 and 9).
        start = native_calls()
        for row in (0, 2, 9):
            one = [t[row:row + 1] for t in dev]
            assert_close(torch.ops.torch_pjrt.moe_experts(*one, gu, dn, "silu", in_out),
                         per_pair(x[row:row + 1], index[row:row + 1], weights[row:row + 1], gate_up, down),
                         atol=1e-5, rtol=1e-5)
        assert native_calls() - start == 6


@native_only
@pytest.mark.parametrize("tokens", [1, 19])
def test_expert_tensors_in_host_panels(tokens):
    # The 4-D panel form (what the torch.compile backend passes on XLA:CPU).
    x, index, weights, gate_up, down = layer(tokens, 64, 16, 6, 2)
    args = [t.to(TPU) for t in (x, index, weights, host_panels(gate_up), host_panels(down))]
    start = native_calls()
    assert_close(torch.ops.torch_pjrt.moe_experts(*args, "gelu_tanh"),
                 per_pair(x, index, weights, gate_up, down, act="gelu_tanh"), atol=1e-5, rtol=1e-5)
    # One token too: the kernel reads its experts' panels in place.
    assert native_calls() - start == 2
    op = torch.ops.torch_pjrt.moe_experts
    with pytest.raises(RuntimeError, match="host-panel expert tensors must be"):
        op(*args[:3], args[3][:, :, :8], args[4], "silu")
    with pytest.raises(RuntimeError, match="float32 only"):
        op(*(t.bfloat16() if t.is_floating_point() else t for t in args), "silu")


def test_many_rows_per_expert_span_several_tiles():
    # 2 experts for 100 tokens: each expert's rows run as several tiles.
    args = layer(100, 16, 8, 2, 2)
    assert_close(run(*args), per_pair(*args), atol=1e-5, rtol=1e-5)


def test_meta_shapes_and_errors():
    x, index, weights, gate_up, down = (t.to(TPU) for t in layer(4, 16, 8, 4, 2))
    meta = torch.ops.torch_pjrt.moe_experts(*(t.to("meta") for t in (x, index, weights, gate_up, down)), "silu")
    assert meta.shape == (4, 16) and meta.device.type == "meta"
    op = torch.ops.torch_pjrt.moe_experts
    with pytest.raises(RuntimeError, match="unsupported activation 'tanh'"):
        op(x, index, weights, gate_up, down, "tanh")
    with pytest.raises(RuntimeError, match="share one dtype"):
        op(x, index, weights, gate_up.half(), down, "silu")
    with pytest.raises(RuntimeError, match="must hold integers"):
        op(x, index.float(), weights, gate_up, down, "silu")
    with pytest.raises(RuntimeError, match="do not fit hidden size"):
        op(x, index, weights, gate_up[:, :, :8], down, "silu")
    with pytest.raises(RuntimeError, match="top_k_weights"):
        op(x, index, weights[:, :1], gate_up, down, "silu")
    with pytest.raises(RuntimeError, match="same device|different devices|tpu and cpu"):
        op(x, index.cpu(), weights, gate_up, down, "silu")
    # The device goes on working.
    args = layer(3, 16, 8, 4, 2)
    assert_close(run(*args), per_pair(*args), atol=1e-5, rtol=1e-5)


def test_gradients_match_the_loop():
    x, index, weights, gate_up, down = layer(12, 16, 8, 4, 2)
    ref = [t.clone().requires_grad_() for t in (x, weights, gate_up, down)]
    per_pair(ref[0], index, ref[1], ref[2], ref[3]).pow(2).sum().backward()
    dev = [t.to(TPU).requires_grad_() for t in (x, weights, gate_up, down)]
    kernels.moe.moe_experts(dev[0], index.to(TPU), dev[1], dev[2], dev[3]).pow(2).sum().backward()
    for r, d in zip(ref, dev):
        assert_close(d.grad, r.grad, atol=1e-4, rtol=1e-4)


# ------------------------------------------------------ in transformers

def qwen3_moe(**kw):
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM
    cfg = Qwen3MoeConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=16, num_experts=8, num_experts_per_tok=2,
                         moe_intermediate_size=32, vocab_size=256, eos_token_id=None, **kw)
    return Qwen3MoeForCausalLM(cfg)


def counting():
    return mock.patch.object(kernels.moe, "moe_experts", wraps=kernels.moe.moe_experts)


def test_qwen3_moe_inference_runs_the_kernel_and_matches_the_cpu():
    model = qwen3_moe().eval()
    dev = copy.deepcopy(model).to(TPU)
    ids = torch.randint(0, 256, (3, random.randint(5, 9)))
    with torch.no_grad(), counting() as calls:
        assert_close(dev(ids.to(TPU)).logits, model(ids).logits, atol=1e-4, rtol=1e-4)
    assert calls.call_count == 2  # one per layer
    with counting() as calls:
        tokens = dev.generate(ids.to(TPU), max_new_tokens=5, do_sample=False).cpu()
    # generate() switches "grouped_mm" to "batched_mm" to decode on a
    # device; both stand for the kernel on tpu.
    assert calls.call_count == 2 * 5
    assert torch.equal(tokens, model.generate(ids, max_new_tokens=5, do_sample=False))


def test_standard_only_and_by_name():
    model = qwen3_moe().eval()
    dev = copy.deepcopy(model).to(TPU)
    ids = torch.randint(0, 256, (2, 6))
    expected = model(ids).logits.detach()
    with torch.no_grad(), counting() as calls, kernels.standard_only():
        assert_close(dev(ids.to(TPU)).logits, expected, atol=1e-4, rtol=1e-4)
    assert calls.call_count == 0
    dev.set_experts_implementation("tpu_experts")
    with torch.no_grad(), counting() as calls, kernels.standard_only():
        assert_close(dev(ids.to(TPU)).logits, expected, atol=1e-4, rtol=1e-4)
    assert calls.call_count == 2


def test_qwen3_moe_adamw_steps_match_the_cpu():
    model = qwen3_moe().train()
    dev = copy.deepcopy(model).to(TPU)
    with counting() as calls:
        assert_adamw_steps_match(model, dev, 256)
    assert calls.call_count == 2 * 10


def test_compiled_forward_runs_the_kernel():
    model = qwen3_moe().eval()
    dev = copy.deepcopy(model).to(TPU)
    ids = torch.randint(0, 256, (2, 7))
    compiled = torch.compile(dev, backend="tpu")
    with torch.no_grad(), counting() as calls:
        out = compiled(ids.to(TPU)).logits
    assert calls.call_count >= 2
    assert_close(out, model(ids).logits.detach(), atol=1e-4, rtol=1e-4)
    assert torch_pjrt.fallback_stats() == {}
    # On XLA:CPU the compiled graph reads the experts from copies: in the
    # native kernel's panel form where programs call it, else [in, out].
    from torch_pjrt import _dot_layout
    experts = dev.model.layers[0].mlp.experts
    native = bool(torch_pjrt.runtime_info()["native_functions"])
    for w in (experts.gate_up_proj, experts.down_proj):
        if native:
            copy_ = _dot_layout.copies[id(w), "host_panels"][2]
            assert torch.equal(copy_.cpu(), host_panels(w.detach().cpu()))
        else:
            copy_ = _dot_layout.copies[id(w), "in_out"][2]
            assert torch.equal(copy_.cpu(), w.detach().transpose(1, 2).cpu())
    if native:
        start = native_calls()
        with torch.no_grad():
            assert_close(compiled(ids.to(TPU)).logits, model(ids).logits.detach(), atol=1e-4, rtol=1e-4)
        assert native_calls() - start == 2 * 2  # two layers, two products each
