"""torch.compile(backend="tpu") on Hugging Face models built from small
configs: static-cache generate() (which compiles decoding itself on a tpu
model) and compiled training."""
import copy

import pytest
import torch

import torch_pjrt
import torch_pjrt.compiler
from conftest import TPU

transformers = pytest.importorskip("transformers")

torch._dynamo.config.recompile_limit = 64


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    return LlamaForCausalLM(LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        vocab_size=256, max_position_embeddings=128, pad_token_id=0))


def qwen3():
    from transformers import Qwen3Config, Qwen3ForCausalLM
    return Qwen3ForCausalLM(Qwen3Config(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        head_dim=16, vocab_size=256, max_position_embeddings=128, pad_token_id=0))


def gemma3():
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig
    return Gemma3ForCausalLM(Gemma3TextConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        head_dim=16, vocab_size=256, max_position_embeddings=128, sliding_window=16, pad_token_id=0))


def qwen3_moe():
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM
    return Qwen3MoeForCausalLM(Qwen3MoeConfig(
        hidden_size=64, intermediate_size=128, moe_intermediate_size=32, num_experts=8, num_experts_per_tok=2,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=256,
        max_position_embeddings=128, pad_token_id=0))


MODELS = {"llama": llama, "qwen3": qwen3, "gemma3": gemma3, "qwen3_moe": qwen3_moe}


def _generate(model, ids, **kw):
    # Always 8 tokens: a prompt whose first greedy token is EOS would stop
    # before any decoding step, so nothing would be compiled to count.
    return model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8, min_new_tokens=8,
                          do_sample=False, cache_implementation="static", **kw)


@pytest.mark.parametrize("explicit_config", [False, True], ids=["auto", "compile_config"])
@pytest.mark.parametrize("name", MODELS)
def test_static_cache_generate_matches_cpu(name, explicit_config):
    torch._dynamo.reset()
    model = MODELS[name]().eval()
    tmodel = copy.deepcopy(model).to(TPU)
    kw = {}
    if explicit_config:
        from transformers import CompileConfig
        kw["compile_config"] = CompileConfig(backend="tpu", fullgraph=True, dynamic=False)
    ids = torch.randint(1, 256, (1, 6))
    want = _generate(model, ids)
    programs = torch_pjrt.compiler.stats["programs"]
    got = _generate(tmodel, ids.to(TPU), **kw)
    assert torch.equal(got.cpu(), want)
    # Every decoded token ran the one compiled program: it was traced once,
    # at the first decoded token, and never again. (Gemma 3's sliding-window
    # cache layer keeps a Python int that Dynamo guards on, so transformers
    # re-captures each step on every backend; the captures are the same graph,
    # so no new XLA program is compiled for them.)
    traced = torch_pjrt.compiler.stats["programs"] - programs
    # (Gemma 3: a capture may also be served by one left from an earlier call.)
    assert traced == 1 or name == "gemma3"
    compiled = torch_pjrt.compiler.stats["xla_compile_seconds"]
    ids2 = torch.randint(1, 256, (1, 6))
    got2 = _generate(tmodel, ids2.to(TPU), **kw)
    assert torch.equal(got2.cpu(), _generate(model, ids2))
    if name != "gemma3":  # (Gemma 3 re-captures, see above)
        assert torch_pjrt.compiler.stats["programs"] - programs == 1
        assert torch_pjrt.compiler.stats["xla_compile_seconds"] == compiled


def test_compiled_training_matches_cpu():
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = llama()
    model.config._attn_implementation = "eager"
    tmodel = copy.deepcopy(model).to(TPU)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    topt = torch.optim.AdamW(tmodel.parameters(), lr=1e-3)
    ctrain = torch.compile(tmodel, backend="tpu")
    cstep = torch.compile(topt.step, backend="tpu")
    losses, tlosses = [], []
    for _ in range(20):
        ids = torch.randint(1, 256, (2, 16))
        loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
        tids = ids.to(TPU)
        tloss = ctrain(tids, labels=tids).loss
        tloss.backward()
        cstep()
        topt.zero_grad()
        tlosses.append(tloss.item())
    torch.testing.assert_close(torch.tensor(tlosses), torch.tensor(losses), rtol=1e-3, atol=0)
    for p, tp in zip(model.parameters(), tmodel.parameters()):
        torch.testing.assert_close(tp.detach().cpu(), p.detach(), rtol=1e-3, atol=1e-4)


def test_default_backend_generate_matches_cpu():
    """torch.compile(model.forward) with no backend, as transformers' own
    compile tests and code written for CUDA do: the graphs run through the
    tpu backend, whole (fullgraph=True), and decode as the CPU does."""
    torch._dynamo.reset()
    model = llama().eval()
    tmodel = copy.deepcopy(model).to(TPU)
    programs = torch_pjrt.compiler.stats["programs"]
    tmodel.forward = torch.compile(tmodel.forward, fullgraph=True)
    ids = torch.randint(1, 256, (2, 6))
    got = _generate(tmodel, ids.to(TPU))
    assert torch.equal(got.cpu(), _generate(model, ids))
    assert torch_pjrt.compiler.stats["programs"] > programs
