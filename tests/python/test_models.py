"""Hugging Face models built from small configs (random weights, nothing
downloaded) run on the tpu exactly like on the CPU: logits, greedy
generation, and training with AdamW — with no CPU fallback."""
import copy

import pytest
import torch

from conftest import TPU

transformers = pytest.importorskip("transformers")


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=256, max_position_embeddings=128, pad_token_id=0)
    return LlamaForCausalLM(cfg)


def qwen3():
    from transformers import Qwen3Config, Qwen3ForCausalLM
    cfg = Qwen3Config(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, vocab_size=256, max_position_embeddings=128,
                      pad_token_id=0)
    return Qwen3ForCausalLM(cfg)


MODELS = {"llama": llama, "qwen3": qwen3}


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_logits_and_generation_match_cpu(name, attn):
    model = MODELS[name]().eval()
    model.config._attn_implementation = attn
    tmodel = copy.deepcopy(model).to(TPU)
    ids = torch.randint(1, 256, (2, 12))
    mask = torch.ones_like(ids)
    mask[1, :3] = 0  # left padding on the second row
    with torch.no_grad():
        ref = model(ids, attention_mask=mask).logits
        out = tmodel(ids.to(TPU), attention_mask=mask.to(TPU)).logits
    assert (out.cpu() - ref).abs().max().item() < 1e-4
    gen_ref = model.generate(ids[:1], max_new_tokens=20, do_sample=False)
    gen = tmodel.generate(ids[:1].to(TPU), max_new_tokens=20, do_sample=False)
    assert torch.equal(gen.cpu(), gen_ref)


def test_training_50_steps_matches_cpu():
    model = llama().train()
    tmodel = copy.deepcopy(model).to(TPU)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    topt = torch.optim.AdamW(tmodel.parameters(), lr=1e-3)
    data = [torch.randint(1, 256, (2, 16)) for _ in range(50)]
    for step, ids in enumerate(data):
        loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        tids = ids.to(TPU)
        tloss = tmodel(tids, labels=tids).loss
        tloss.backward()
        topt.step()
        topt.zero_grad()
        a, b = tloss.item(), loss.item()
        assert abs(a - b) <= 1e-3 * abs(b), f"step {step}: tpu {a} cpu {b}"


def test_sgd_and_foreach_optimizers():
    for make in [lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
                 lambda p: torch.optim.AdamW(p, lr=1e-2, foreach=True),
                 lambda p: torch.optim.AdamW(p, lr=1e-2, foreach=False)]:
        m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
        tm = copy.deepcopy(m).to(TPU)
        o, to = make(m.parameters()), make(tm.parameters())
        for _ in range(5):
            x = torch.randn(6, 8)
            loss = m(x).pow(2).mean()
            loss.backward()
            o.step()
            o.zero_grad()
            tl = tm(x.to(TPU)).pow(2).mean()
            tl.backward()
            to.step()
            to.zero_grad()
        for p, tp in zip(m.parameters(), tm.parameters()):
            torch.testing.assert_close(tp.detach().cpu(), p.detach(), atol=1e-5, rtol=1e-4)
