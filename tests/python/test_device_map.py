"""device_map="auto" on tpu: accelerate's memory plan sees the device (the
get_max_memory wrapper in torch_pjrt/_accelerate.py), so a model that fits
loads onto tpu, one over a given budget splits between tpu and the CPU, and
both generate the CPU's tokens."""
import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=256, max_position_embeddings=64)
    model = LlamaForCausalLM(cfg).eval()
    path = tmp_path_factory.mktemp("llama")
    model.save_pretrained(path)
    ids = torch.randint(0, 256, (2, 7))
    with torch.no_grad():
        tokens = model.generate(ids, max_new_tokens=6, do_sample=False)
    layer_bytes = sum(p.numel() * p.element_size() for p in model.model.layers[0].parameters())
    return path, ids, tokens, layer_bytes


def _devices(model):
    return {str(p.device) for p in model.parameters()}


def _generate(model, ids):
    with torch.no_grad():
        return model.generate(ids.to("tpu"), max_new_tokens=6, do_sample=False).cpu()


def test_max_memory_lists_the_device():
    from accelerate.utils import get_max_memory
    mem = get_max_memory()
    assert 0 in mem and mem[0] > 0, mem
    assert get_max_memory({0: "1MB", "cpu": "2MB"}) == {0: 10**6, "cpu": 2 * 10**6}
    with pytest.raises(ValueError, match="not recognized"):
        get_max_memory({"gpu7": 1})


def test_auto_loads_a_model_that_fits_onto_tpu(saved):
    path, ids, tokens, _ = saved
    model = LlamaForCausalLM.from_pretrained(path, device_map="auto")
    assert _devices(model) == {"tpu:0"}
    assert torch.equal(_generate(model, ids), tokens)


def test_auto_splits_a_model_over_its_budget_between_tpu_and_cpu(saved):
    path, ids, tokens, layer_bytes = saved
    # Room on the device for about two decoder layers: the rest goes to the CPU.
    model = LlamaForCausalLM.from_pretrained(path, device_map="auto",
                                             max_memory={0: int(2.5 * layer_bytes), "cpu": 10**9})
    placed = set(model.hf_device_map.values())
    assert 0 in placed and "cpu" in placed, model.hf_device_map
    # What goes to the CPU is offloaded as on CUDA: accelerate keeps those
    # weights in host memory and streams them in for each forward.
    assert "tpu:0" in _devices(model)
    assert torch.equal(_generate(model, ids), tokens)
