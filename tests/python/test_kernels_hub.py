"""The hub layers of torch_pjrt.kernels.hub through the `kernels` library's
own mechanism (`model.use_kernels = True`, `kernels.kernelize`): the
RMSNorm forward against transformers' own, and a Llama using it against the
same model on the CPU (inference, greedy decoding, compiled decoding,
AdamW steps)."""
import copy
import random

import pytest
import torch

import torch_pjrt
from conftest import TPU, assert_adamw_steps_match, assert_close

kernels = pytest.importorskip("kernels")
hub = torch_pjrt.kernels.hub


def llama(**kw):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=256, eos_token_id=None, **kw)
    return LlamaForCausalLM(cfg)


def kernelized(model):
    """A tpu copy of `model` with `use_kernels = True`, every norm of it
    running the hub forward."""
    dev = copy.deepcopy(model).to(TPU)
    dev.use_kernels = True
    norms = [m for m in dev.modules() if type(m).__name__.endswith("RMSNorm")]
    assert norms and all(n.__dict__.get("_kernel_repo") is hub.REPOSITORIES["RMSNorm"] for n in norms)
    return dev


def test_registered_for_tpu_in_the_kernels_mapping():
    from kernels._internals.layer import globals as mapping
    assert "tpu" in mapping._KERNEL_MAPPING.get()["RMSNorm"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rms_norm_forward_matches_transformers(dtype):
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    h = random.choice([8, 64, 96])
    layer = LlamaRMSNorm(h, eps=random.choice([1e-6, 1e-5]))
    with torch.no_grad():
        layer.weight.normal_()
    layer = layer.to(dtype)
    x = torch.randn(3, random.randint(1, 9), h).to(dtype)
    expected = layer(x)
    dev = copy.deepcopy(layer).to(TPU)
    actual = hub.RMSNorm.forward(dev, x.to(TPU))
    if dtype == torch.float32:
        assert_close(actual, expected, atol=1e-5, rtol=1e-5)
    else:  # the same roundings: at most one bfloat16 step apart
        assert_close(actual, expected, atol=1e-2, rtol=8e-3)


def test_llama_use_kernels_matches_the_cpu():
    model = llama().eval()
    dev = kernelized(model)
    ids = torch.randint(0, 256, (2, random.randint(5, 9)))
    torch_pjrt.reset_fallback_stats()
    with torch.no_grad():
        assert_close(dev(ids.to(TPU)).logits, model(ids).logits, atol=1e-4, rtol=1e-4)
        tokens = dev.generate(ids.to(TPU), max_new_tokens=5, do_sample=False).cpu()
    assert torch.equal(tokens, model.generate(ids, max_new_tokens=5, do_sample=False))
    assert torch_pjrt.fallback_stats() == {}


def test_compiled_static_cache_decoding_with_hub_kernels():
    model = llama().eval()
    dev = kernelized(model)
    ids = torch.randint(0, 256, (2, 6))
    torch_pjrt.reset_fallback_stats()
    with torch.no_grad():
        tokens = dev.generate(ids.to(TPU), max_new_tokens=4, do_sample=False, cache_implementation="static").cpu()
    assert torch.equal(tokens, model.generate(ids, max_new_tokens=4, do_sample=False))
    assert torch_pjrt.fallback_stats() == {}


def test_llama_use_kernels_adamw_steps_match_the_cpu():
    model = llama().train()
    dev = kernelized(model)
    assert dev.kernels_mode == kernels.Mode.TRAINING
    torch_pjrt.reset_fallback_stats()
    assert_adamw_steps_match(model, dev, 256)
    assert torch_pjrt.fallback_stats() == {}
