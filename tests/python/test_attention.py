"""Scaled dot product attention against the CPU: the fused overrideable
backend (_fused_sdp_choice, forward and backward) and a Llama attention
block."""
import pytest
import torch
import torch.nn.functional as F

from conftest import TPU, assert_as_close_as_cpu, assert_close, to_tpu

# Products sum in a different order than the CPU's BLAS.
F32 = dict(atol=1e-4, rtol=1e-4)


# ---------------------------------------------------------------- attention


def sdpa_case(b, hq, hkv, l, s, e, ev=None, dtype=torch.float32):
    ev = ev or e
    q = torch.randn(b, hq, l, e, dtype=dtype)
    k = torch.randn(b, hkv, s, e, dtype=dtype)
    v = torch.randn(b, hkv, s, ev, dtype=dtype)
    return q, k, v


def compare_sdpa(q, k, v, mask=None, grad=True, atol=1e-5, rtol=1e-4, **kw):
    """Forward (and gradients wrt q, k, v and a float mask) against the CPU."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    cpu = [t.clone().requires_grad_(grad) for t in (q, k, v)]
    tpu = [t.detach().to(TPU).requires_grad_(grad) for t in (q, k, v)]
    mgrad = grad and mask is not None and mask.is_floating_point()
    cm = tpu_m = None
    if mask is not None:
        cm = mask.clone().requires_grad_(mgrad)
        tpu_m = mask.detach().to(TPU).requires_grad_(mgrad)
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(*cpu, attn_mask=cm, **kw)
    tout = F.scaled_dot_product_attention(*tpu, attn_mask=tpu_m, **kw)
    assert_close(tout, out, atol=atol, rtol=rtol)
    if grad:
        g = torch.randn(out.shape, dtype=out.dtype)
        out.backward(g)
        tout.backward(g.to(TPU))
        for t, c in zip(tpu, cpu):
            assert_close(t.grad, c.grad, atol=atol * 10, rtol=rtol * 10)
        if mgrad:
            assert_close(tpu_m.grad, cm.grad, atol=atol * 10, rtol=rtol * 10)
    return tout


# One base shape (b, hq, hkv, l, s, e) shared by most cases, so the compiled
# attention programs are reused: scale is a runtime operand, views are
# separate reads.
A = (2, 4, 4, 5, 7, 8)


def test_sdpa_routes_to_fused_kernel():
    q, k, v = (t.to(TPU) for t in sdpa_case(*A))
    assert torch._fused_sdp_choice(q, k, v) == 4  # SDPBackend.overrideable
    assert torch._fused_sdp_choice(q, k, v, dropout_p=0.5) == 0  # math applies dropout
    assert torch._fused_sdp_choice(q[0], k[0], v[0]) == 4
    assert torch._fused_sdp_choice(q[None], k[None], v[None]) == 0  # 5-D: math
    out, lse, *_ = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q, k, v)
    assert lse.shape == (2, 4, 5) and lse.dtype == torch.float32
    ref = torch.logsumexp(q.cpu() @ k.cpu().mT / 8 ** 0.5, -1)
    assert_close(lse, ref, atol=1e-5, rtol=1e-5)
    assert_close(out, F.scaled_dot_product_attention(q.cpu(), k.cpu(), v.cpu()), atol=1e-5, rtol=1e-4)


def test_sdpa_plain_and_scale():
    compare_sdpa(*sdpa_case(*A))
    compare_sdpa(*sdpa_case(*A), scale=0.3)
    compare_sdpa(*sdpa_case(1, 2, 2, 4, 3, 8, 5))  # value head dim != query head dim


def test_sdpa_causal():
    compare_sdpa(*sdpa_case(*A), is_causal=True)  # fewer queries than keys
    compare_sdpa(*sdpa_case(*A), is_causal=True, scale=-0.7)
    compare_sdpa(*sdpa_case(2, 4, 4, 7, 5, 8), is_causal=True)  # more queries than keys


@pytest.mark.parametrize("mshape", [(5, 7), (1, 4, 1, 7)])
def test_sdpa_bool_mask(mshape):
    mask = torch.rand(mshape) > 0.3
    mask[..., 0] = True
    if len(mshape) == 2:
        mask[1] = False  # a fully masked row gives zeros, as PyTorch's safe softmax does
    out = compare_sdpa(*sdpa_case(*A), mask)
    if len(mshape) == 2:
        assert (out[:, :, 1].cpu() == 0).all()


@pytest.mark.parametrize("mshape", [(2, 1, 5, 7), (2, 4, 5, 7)])
def test_sdpa_float_mask(mshape):
    compare_sdpa(*sdpa_case(*A), torch.randn(mshape))  # gradients wrt the mask too


def test_sdpa_gqa():
    compare_sdpa(*sdpa_case(2, 4, 2, 5, 7, 8), enable_gqa=True)
    compare_sdpa(*sdpa_case(2, 4, 1, 5, 7, 8), enable_gqa=True, is_causal=True, scale=0.5)
    compare_sdpa(*sdpa_case(2, 4, 2, 5, 7, 8), torch.randn(4, 5, 7), enable_gqa=True)


def test_sdpa_few_query_rows():
    """Decoding's shape (one or a few query rows against many keys), where
    the scores are computed with k as stored: values and gradients."""
    compare_sdpa(*sdpa_case(2, 4, 2, 1, 40, 16), enable_gqa=True)
    compare_sdpa(*sdpa_case(2, 4, 4, 3, 40, 16), torch.rand(2, 1, 3, 40) > 0.3)
    compare_sdpa(*sdpa_case(2, 8, 2, 1, 40, 16), torch.randn(2, 8, 1, 40), enable_gqa=True)
    compare_sdpa(*sdpa_case(1, 2, 2, 2, 33, 16, ev=8), is_causal=True)


def test_sdpa_3d_and_noncontiguous():
    q, k, v = sdpa_case(*A)
    compare_sdpa(q[0], k[0], v[0], is_causal=True)
    # Llama's layout: [B, L, H, E] transposed to [B, H, L, E].
    b, h, l, s, e = A[0], A[1], A[3], A[4], A[5]
    q = torch.randn(b, l, h, e).transpose(1, 2)
    k = torch.randn(b, s, h, e).transpose(1, 2)
    v = torch.randn(b, s, h, e).transpose(1, 2)
    out = compare_sdpa(q, k, v, is_causal=True)
    assert out.transpose(1, 2).is_contiguous()  # the output's layout follows the query's


def test_sdpa_low_precision():
    q, k, v = sdpa_case(2, 4, 2, 5, 7, 8, dtype=torch.bfloat16)
    kw = dict(is_causal=True, enable_gqa=True)
    q32, q16 = q.float().requires_grad_(), q.clone().requires_grad_()
    ref = F.scaled_dot_product_attention(q32, k.float(), v.float(), **kw)
    cpu = F.scaled_dot_product_attention(q16, k, v, **kw)
    tq = q.to(TPU).requires_grad_()
    out = F.scaled_dot_product_attention(tq, k.to(TPU), v.to(TPU), **kw)
    assert out.dtype == torch.bfloat16
    assert_as_close_as_cpu(out, cpu, ref)
    g = torch.randn(ref.shape)
    for o, gg in [(ref, g), (cpu, g.bfloat16()), (out, g.bfloat16().to(TPU))]:
        o.backward(gg)
    assert tq.grad.dtype == torch.bfloat16
    assert_as_close_as_cpu(tq.grad, q16.grad, q32.grad)
    q, k, v = sdpa_case(*A, dtype=torch.float16)
    mask = torch.randn(5, 7).to(torch.float16)
    cpu = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out = F.scaled_dot_product_attention(*to_tpu([q, k, v]), attn_mask=mask.to(TPU))
    assert_close(out, cpu, atol=3e-3, rtol=3e-3)


def test_sdpa_errors():
    q, k, v = (t.to(TPU) for t in sdpa_case(1, 4, 2, 5, 5, 8))
    with pytest.raises(RuntimeError, match='must match the size of tensor b'):
        F.scaled_dot_product_attention(q, k, v)  # GQA heads without enable_gqa
    with pytest.raises(RuntimeError, match='does not apply dropout'):
        torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q, k, v, dropout_p=0.5)
    with pytest.raises(RuntimeError, match='Expected size for first two dimensions of batch2'):
        F.scaled_dot_product_attention(q, k[..., :4], v[..., :4], enable_gqa=True)


# ---------------------------------------------------------------- a model


@pytest.mark.parametrize("impl", ["sdpa", "eager"])
def test_tiny_llama_attention(impl):
    transformers = pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import LlamaAttention, LlamaRotaryEmbedding
    cfg = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                   num_attention_heads=4, num_key_value_heads=2, vocab_size=128)
    cfg._attn_implementation = impl
    attn = LlamaAttention(cfg, layer_idx=0).eval()
    rope = LlamaRotaryEmbedding(cfg)
    b, l = 2, 7
    x = torch.randn(b, l, 64)
    pos = torch.arange(l)[None].expand(b, l)
    cos, sin = rope(x, pos)
    causal = torch.full((l, l), float("-inf")).triu(1)[None, None].expand(b, 1, l, l)

    out, _ = attn(x.clone().requires_grad_(), (cos, sin), causal)
    tattn = LlamaAttention(cfg, layer_idx=0).eval()
    tattn.load_state_dict(attn.state_dict())
    tattn.to(TPU)
    tx = x.to(TPU).requires_grad_()
    tout, _ = tattn(tx, (cos.to(TPU), sin.to(TPU)), causal.to(TPU))
    assert_close(tout, out, **F32)
    xc = x.clone().requires_grad_()
    attn(xc, (cos, sin), causal)[0].pow(2).sum().backward()
    tout.pow(2).sum().backward()
    assert_close(tx.grad, xc.grad, atol=1e-4, rtol=1e-3)
    assert_close(tattn.q_proj.weight.grad, attn.q_proj.weight.grad, atol=1e-4, rtol=1e-3)
