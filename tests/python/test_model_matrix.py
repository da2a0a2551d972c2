"""A matrix of tiny Hugging Face models (built from configs, random weights,
nothing downloaded) on the tpu against the CPU: float32 logits, one AdamW
step, greedy generation, both attention implementations, no CPU fallback."""
import copy

import pytest
import torch

from conftest import TPU

transformers = pytest.importorskip("transformers")
T = transformers

V = 128  # vocabulary of every text model
LOGITS_ATOL = 1e-4  # max |tpu - cpu| of float32 logits
GRAD_ATOL, GRAD_RTOL = 1e-5, 1e-4
PARAM_ATOL, PARAM_RTOL = 1e-7, 1e-6  # after one AdamW step from the same weights and gradients


def _decoder_kw(**kw):
    # Larger-than-default init spreads the logits, so greedy decoding makes
    # varied tokens rather than one repeated id.
    base = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, vocab_size=V, max_position_embeddings=128, pad_token_id=0,
                initializer_range=0.2)
    base.update(kw)
    return base


def qwen3_moe():
    return T.Qwen3MoeForCausalLM(T.Qwen3MoeConfig(**_decoder_kw(
        head_dim=16, moe_intermediate_size=32, num_experts=4, num_experts_per_tok=2, decoder_sparse_step=1)))


def mistral():
    return T.MistralForCausalLM(T.MistralConfig(**_decoder_kw(sliding_window=8)))


def mixtral():
    return T.MixtralForCausalLM(T.MixtralConfig(**_decoder_kw(num_local_experts=4, num_experts_per_tok=2)))


def gemma3():
    return T.Gemma3ForCausalLM(T.Gemma3TextConfig(**_decoder_kw(head_dim=16, sliding_window=8)))


def gpt2():
    return T.GPT2LMHeadModel(T.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=V, n_positions=128,
                                          resid_pdrop=0, embd_pdrop=0, attn_pdrop=0, bos_token_id=1,
                                          eos_token_id=1, initializer_range=0.2))


def bert():
    return T.BertForMaskedLM(T.BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                          intermediate_size=128, vocab_size=V, max_position_embeddings=64,
                                          hidden_dropout_prob=0, attention_probs_dropout_prob=0))


def t5():
    return T.T5ForConditionalGeneration(T.T5Config(d_model=64, d_ff=128, num_layers=2, num_heads=4, d_kv=16,
                                                   vocab_size=V, dropout_rate=0, decoder_start_token_id=0,
                                                   pad_token_id=0, eos_token_id=1))


def vit():
    return T.ViTForImageClassification(T.ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                   intermediate_size=128, image_size=32, patch_size=8,
                                                   num_labels=10))


def whisper():
    return T.WhisperForConditionalGeneration(T.WhisperConfig(
        d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=V, num_mel_bins=16, max_source_positions=32,
        max_target_positions=64, decoder_start_token_id=1, pad_token_id=0, eos_token_id=2, bos_token_id=1,
        suppress_tokens=None, begin_suppress_tokens=None, init_std=0.2))


def _text(n=12):
    ids = torch.randint(2, V, (2, n))
    mask = torch.ones_like(ids)
    mask[1, :3] = 0  # left padding on the second row
    return ids, mask


def lm_batch():
    ids, mask = _text()
    return dict(input_ids=ids, attention_mask=mask), dict(labels=ids)


def mlm_batch():
    ids, mask = _text()
    mask = mask.flip(1)  # right padding
    labels = torch.where(torch.rand(ids.shape) < 0.3, ids, -100)
    return dict(input_ids=ids, attention_mask=mask), dict(labels=labels)


def seq2seq_batch():
    ids, mask = _text()
    mask = mask.flip(1)
    dec = torch.randint(2, V, (2, 7))
    return dict(input_ids=ids, attention_mask=mask, decoder_input_ids=dec), dict(labels=dec)


def image_batch():
    return dict(pixel_values=torch.randn(2, 3, 32, 32)), dict(labels=torch.randint(0, 10, (2,)))


def audio_batch():
    dec = torch.randint(3, V, (2, 7))
    return dict(input_features=torch.randn(2, 16, 64), decoder_input_ids=dec), dict(labels=dec)


LM = ("input_ids", "attention_mask")
# A static cache decodes every step at one shape: one compiled program per
# op instead of one per cache length (the dynamic cache is covered by the
# sliding-window models here and by Llama / Qwen3 in test_models.py).
STATIC = dict(cache_implementation="static", disable_compile=True)
# name: (builder, batch maker, inputs generate() takes (None: not generative),
# extra generate() arguments)
MODELS = {
    "qwen3_moe": (qwen3_moe, lm_batch, LM, STATIC),
    "mistral": (mistral, lm_batch, LM, {}),
    "mixtral": (mixtral, lm_batch, LM, STATIC),
    "gemma3": (gemma3, lm_batch, LM, {}),
    "gpt2": (gpt2, lm_batch, LM, STATIC),
    "bert": (bert, mlm_batch, None, {}),
    # A random tied T5 repeats its last token forever (its embedding scores
    # itself highest); banning repeats makes every step pick a new argmax.
    "t5": (t5, seq2seq_batch, ("input_ids", "attention_mask"), dict(no_repeat_ngram_size=1, **STATIC)),
    "vit": (vit, image_batch, None, {}),
    "whisper": (whisper, audio_batch, ("input_features",), STATIC),
}
GEN_TOKENS = 10


def _pair(name, attn):
    model = MODELS[name][0]()
    model.set_attn_implementation(attn)
    return model, copy.deepcopy(model).to(TPU)


def _tpu(d):
    return {k: v.to(TPU) for k, v in d.items()}


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("name", MODELS)
def test_logits_and_generation(name, attn):
    model, tmodel = _pair(name, attn)
    model.eval()
    tmodel.eval()
    inputs, _ = MODELS[name][1]()
    with torch.no_grad():
        ref = model(**inputs).logits
        out = tmodel(**_tpu(inputs)).logits
    assert out.dtype == torch.float32
    diff = (out.cpu() - ref).abs().max().item()
    assert diff < LOGITS_ATOL, f"max |tpu - cpu| logits {diff}"
    gen_inputs = MODELS[name][2]
    # Decoding caches keys and values before the attention function runs, so
    # one implementation covers it; the fused mode compiles every decode
    # step whole, which makes each generate() costly there.
    if gen_inputs is None or attn != "sdpa":
        return
    src = {k: inputs[k] for k in gen_inputs}  # both rows: padded batches decode too
    kw = dict(max_new_tokens=GEN_TOKENS, min_new_tokens=GEN_TOKENS, do_sample=False, **MODELS[name][3])
    gen_ref = model.generate(**src, **kw)
    gen = tmodel.generate(**_tpu(src), **kw)
    assert torch.equal(gen.cpu(), gen_ref), f"\ntpu {gen.tolist()}\ncpu {gen_ref.tolist()}"


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("name", MODELS)
def test_adamw_step(name, attn):
    model, tmodel = _pair(name, attn)
    model.train()
    tmodel.train()
    inputs, labels = MODELS[name][1]()
    batch = {**inputs, **labels}
    loss = model(**batch).loss
    loss.backward()
    tloss = tmodel(**_tpu(batch)).loss
    tloss.backward()
    torch.testing.assert_close(tloss.detach().cpu(), loss.detach(), atol=1e-5, rtol=1e-5)
    named = list(model.named_parameters())
    tparams = list(tmodel.parameters())
    for (n, p), tp in zip(named, tparams):
        if p.grad is None:
            assert tp.grad is None, n
            continue
        torch.testing.assert_close(tp.grad.cpu(), p.grad, atol=GRAD_ATOL, rtol=GRAD_RTOL, msg=lambda m: f"{n}: {m}")
        # Adam's first step is g / (|g| + eps): gradients that are rounding
        # noise (a key bias's is exactly zero in exact arithmetic) become
        # +-lr either way. So the CPU optimizer steps from the tpu's own
        # gradients; the comparison above already bounds them.
        p.grad = tp.grad.cpu()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    topt = torch.optim.AdamW(tparams, lr=1e-3)
    opt.step()
    topt.step()
    for (n, p), tp in zip(named, tparams):
        torch.testing.assert_close(tp.detach().cpu(), p.detach(), atol=PARAM_ATOL, rtol=PARAM_RTOL,
                                   msg=lambda m: f"{n}: {m}")


def test_tied_weights_stay_tied():
    model = gpt2().to(TPU)
    assert model.lm_head.weight is model.transformer.wte.weight
    assert model.lm_head.weight.device.type == "tpu"
    model.to("cpu")
    assert model.lm_head.weight is model.transformer.wte.weight


@pytest.mark.parametrize("name", ["qwen3_moe", "mixtral"])
def test_moe_experts_use_the_kernel_or_grouped_mm(name):
    """On the tpu the "grouped_mm" experts run as torch_pjrt's experts
    kernel (its backward recomputes through _grouped_mm); under
    standard_only() transformers' own path runs, _grouped_mm with histc
    counting tokens per expert. Both stay native, forward and backward."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch_pjrt.kernels import standard_only

    class Seen(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.add(str(func.overloadpacket.__name__))
            return func(*args, **(kwargs or {}))

    model = MODELS[name][0]().to(TPU)
    assert model.config._experts_implementation == "grouped_mm"
    ids = torch.randint(2, V, (2, 12), device=TPU)
    kernel, standard = Seen(), Seen()
    with kernel:
        model(ids, labels=ids).loss.backward()
    with standard_only(), standard:
        model(ids, labels=ids).loss.backward()
    assert "moe_experts" in kernel.ops
    assert {"_grouped_mm", "histc"} <= standard.ops and "moe_experts" not in standard.ops


@pytest.mark.parametrize("impl", ["eager", "batched_mm"])
def test_moe_other_experts_implementations(impl):
    """The per-expert loop (data-dependent shapes) and the batched gather
    path: loss and gradients match the CPU, natively."""
    model = qwen3_moe()
    model.set_experts_implementation(impl)
    tmodel = copy.deepcopy(model).to(TPU)
    inputs, labels = lm_batch()
    batch = {**inputs, **labels}
    loss = model(**batch).loss
    loss.backward()
    tloss = tmodel(**_tpu(batch)).loss
    tloss.backward()
    torch.testing.assert_close(tloss.detach().cpu(), loss.detach(), atol=1e-5, rtol=1e-5)
    for (n, p), tp in zip(model.named_parameters(), tmodel.parameters()):
        torch.testing.assert_close(tp.grad.cpu(), p.grad, atol=GRAD_ATOL, rtol=GRAD_RTOL, msg=lambda m: f"{n}: {m}")
