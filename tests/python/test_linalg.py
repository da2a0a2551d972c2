"""Matrix products (mm, bmm, addmm, baddbmm, addbmm, mv, addmv, dot, vdot,
matmul, linear) and scaled dot product attention against the CPU."""
import random

import pytest
import torch
import torch.nn.functional as F

from conftest import TPU, assert_as_close_as_cpu, assert_close, check, to_tpu

# Products sum in a different order than the CPU's BLAS.
F32 = dict(atol=1e-4, rtol=1e-4)
FLOATS = [torch.float32, torch.bfloat16, torch.float16]
INTS = [torch.int64, torch.int32]


def rnd(*shape, dtype=torch.float32):
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(-4, 5, shape, dtype=dtype)


def tol(dtype):
    return F32 if dtype == torch.float32 else {}


def noncontig(x):
    """The same values through a transposed, strided view."""
    if x.dim() < 2:
        return torch.stack([x, x], -1)[..., 0]
    return x.transpose(-1, -2).contiguous().transpose(-1, -2)


# ---------------------------------------------------------------- products


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.float64])
def test_mm(dtype):
    for n, k, m in [(3, 4, 5), (1, 7, 1), (4, 0, 3)]:
        check(torch.mm, rnd(n, k, dtype=dtype), rnd(k, m, dtype=dtype), **tol(dtype))
    a, b = rnd(3, 4, dtype=dtype), rnd(4, 5, dtype=dtype)
    check(torch.mm, noncontig(a), noncontig(b), **tol(dtype))
    check(lambda x, y, o: torch.mm(x, y, out=o), a, b, torch.empty(0, dtype=dtype), **tol(dtype))


def test_mm_views_and_out_view():
    big = torch.randn(10, 12)
    check(lambda x: torch.mm(x[1:5, ::2], x[2:8, 3:9]), big, **F32)
    check(lambda x: torch.mm(x.t()[:4], x[:10, :3]), big, **F32)
    out = torch.zeros(6, 6)
    check(lambda x, o: torch.mm(x[:3, :4], x[:4, :3], out=o[::2, 1:4]), big, out, **F32)


def test_mm_errors():
    a, b = torch.randn(3, 4, device=TPU), torch.randn(5, 2, device=TPU)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.mm(a, b)
    with pytest.raises(RuntimeError, match='to have the same dtype'):
        torch.mm(a, torch.randn(4, 2, device=TPU, dtype=torch.float16))
    with pytest.raises(RuntimeError, match='mat2 must be a matrix'):
        torch.mm(a, torch.randn(4, device=TPU))
    with pytest.raises(RuntimeError, match='"mm" not implemented for \'Bool\''):
        torch.mm(torch.ones(2, 2, dtype=torch.bool, device=TPU), torch.ones(2, 2, dtype=torch.bool, device=TPU))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_bmm(dtype):
    for b, n, k, m in [(2, 3, 4, 5), (3, 5, 0, 2)]:
        x, y = rnd(b, n, k, dtype=dtype), rnd(b, k, m, dtype=dtype)
        check(torch.bmm, x, y, **tol(dtype))
        check(torch.bmm, noncontig(x), y.permute(1, 0, 2).contiguous().permute(1, 0, 2), **tol(dtype))
        check(lambda p, q, o: torch.bmm(p, q, out=o), x, y, torch.empty(0, dtype=dtype), **tol(dtype))
    with pytest.raises(RuntimeError, match='Expected size for first two dimensions of batch2'):
        torch.bmm(torch.randn(2, 3, 4, device=TPU), torch.randn(3, 4, 5, device=TPU))


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64])
def test_addmm(dtype):
    n, k, m = random.randint(1, 6), random.randint(1, 9), random.randint(1, 6)
    a, b = rnd(n, k, dtype=dtype), rnd(k, m, dtype=dtype)
    fl = dtype.is_floating_point
    scalars = [(1, 1), (0.5, -2.0), (0, 3.0)] if fl else [(1, 1), (2, -3), (0, 2)]
    for i, self_shape in enumerate([(n, m), (m,), (n, 1), ()]):
        beta, alpha = scalars[i % len(scalars)]
        check(lambda x, y, z: torch.addmm(x, y, z, beta=beta, alpha=alpha), rnd(*self_shape, dtype=dtype), a, b,
              **tol(dtype))
    beta, alpha = scalars[1]
    check(lambda x, y, z: x.addmm_(y, z, beta=beta, alpha=alpha), rnd(n, m, dtype=dtype), a, b, **tol(dtype))
    check(lambda x, y, z, o: torch.addmm(x, y, z, beta=beta, alpha=alpha, out=o), rnd(m, dtype=dtype), a, b,
          torch.empty(0, dtype=dtype), **tol(dtype))
    check(lambda x, y, z: torch.addmm(x, y, z), rnd(n, m, dtype=dtype), noncontig(a), noncontig(b), **tol(dtype))


def test_addmm_beta_zero_ignores_nan():
    s = torch.full((3, 4), float("nan"))
    s[0, 0] = float("inf")
    a, b = torch.randn(3, 5), torch.randn(5, 4)
    r = check(lambda x, y, z: torch.addmm(x, y, z, beta=0, alpha=1.5), s, a, b, **F32)
    assert not torch.isnan(r.cpu()).any()
    check(lambda x, y, z: x.addmm_(y, z, beta=0), s, a, b, **F32)
    # beta != 0 keeps NaN, and the same compiled program serves both betas.
    check(lambda x, y, z: torch.addmm(x, y, z, beta=1e-3), s, a, b, **F32)
    check(lambda x, y, z: torch.baddbmm(x, y, z, beta=0), torch.full((2, 3, 4), float("nan")),
          torch.randn(2, 3, 5), torch.randn(2, 5, 4), **F32)
    check(lambda x, y, z: torch.addmv(x, y, z, beta=0), torch.full((3,), float("nan")),
          torch.randn(3, 5), torch.randn(5), **F32)
    check(lambda x, y, z: torch.addbmm(x, y, z, beta=0), torch.full((3, 4), float("nan")),
          torch.randn(2, 3, 5), torch.randn(2, 5, 4), **F32)


def test_addmm_errors():
    with pytest.raises(RuntimeError, match='expanded size of the tensor'):
        torch.addmm(torch.randn(5, device=TPU), torch.randn(3, 4, device=TPU), torch.randn(4, 2, device=TPU))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.randn(2, device=TPU).addmm_(torch.randn(3, 4, device=TPU), torch.randn(4, 2, device=TPU))
    # integer addmm with a float beta truncates it, as the CPU kernel does
    ints = torch.randint(-5, 5, (2, 2))
    assert torch.equal(torch.addmm(ints.to(TPU), ints.to(TPU), ints.to(TPU), beta=0.5).cpu(),
                       torch.addmm(ints, ints, ints, beta=0.5))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_baddbmm_addbmm(dtype):
    b, n, k, m = random.randint(1, 4), random.randint(1, 5), random.randint(1, 6), random.randint(1, 5)
    x, y = rnd(b, n, k, dtype=dtype), rnd(b, k, m, dtype=dtype)
    fl = dtype.is_floating_point
    beta, alpha = (0.5, 2.0) if fl else (2, 3)
    for shape in [(b, n, m), (1, 1, m), ()]:
        check(lambda s, p, q: torch.baddbmm(s, p, q, beta=beta, alpha=alpha), rnd(*shape, dtype=dtype), x, y,
              **tol(dtype))
    for shape in [(n, m), (n, 1)]:
        check(lambda s, p, q: torch.addbmm(s, p, q, beta=beta, alpha=alpha), rnd(*shape, dtype=dtype), x, y,
              **tol(dtype))
    check(lambda s, p, q: s.baddbmm_(p, q, beta=beta, alpha=alpha), rnd(b, n, m, dtype=dtype), x, y, **tol(dtype))
    check(lambda s, p, q: s.addbmm_(p, q, beta=beta, alpha=alpha), rnd(n, m, dtype=dtype), x, y, **tol(dtype))
    check(lambda s, p, q, o: torch.baddbmm(s, p, q, out=o), rnd(b, n, m, dtype=dtype), x, y,
          torch.empty(0, dtype=dtype), **tol(dtype))
    check(lambda s, p, q, o: torch.addbmm(s, p, q, out=o), rnd(n, m, dtype=dtype), x, y, torch.empty(0, dtype=dtype),
          **tol(dtype))
    check(lambda s, p, q: torch.baddbmm(s, p, q), rnd(b, n, m, dtype=dtype), noncontig(x), noncontig(y), **tol(dtype))
    with pytest.raises(RuntimeError, match="same number of batches"):
        torch.addbmm(torch.randn(n, m, device=TPU), torch.randn(b + 1, n, k, device=TPU),
                     torch.randn(b, k, m, device=TPU))


def test_addbmm_half_adds_batch_by_batch_like_the_cpu():
    # The CPU rounds to bf16 / f16 after each batch's product; summing all
    # batches in f32 first differs by an ulp or two, beyond tolerance now and
    # then (a single random case fails one run in a few dozen).
    for dtype in (torch.bfloat16, torch.float16):
        for _ in range(25):
            b, n, k, m = random.randint(2, 6), random.randint(1, 5), random.randint(1, 8), random.randint(1, 5)
            check(lambda s, p, q: torch.addbmm(s, p, q, beta=0.5, alpha=2.0), rnd(n, m, dtype=dtype),
                  rnd(b, n, k, dtype=dtype), rnd(b, k, m, dtype=dtype), **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64])
def test_mv_addmv_dot(dtype):
    n, k = random.randint(1, 7), random.randint(1, 9)
    a, v, w = rnd(n, k, dtype=dtype), rnd(k, dtype=dtype), rnd(k, dtype=dtype)
    check(torch.mv, a, v, **tol(dtype))
    check(torch.mv, noncontig(a), v, **tol(dtype))
    check(lambda x, y, o: torch.mv(x, y, out=o), a, v, torch.empty(0, dtype=dtype), **tol(dtype))
    beta, alpha = (0.5, -1.5) if dtype.is_floating_point else (2, -1)
    for shape in [(n,), ()]:
        check(lambda s, x, y: torch.addmv(s, x, y, beta=beta, alpha=alpha), rnd(*shape, dtype=dtype), a, v,
              **tol(dtype))
    check(lambda s, x, y: s.addmv_(x, y, beta=beta, alpha=alpha), rnd(n, dtype=dtype), a, v, **tol(dtype))
    check(lambda s, x, y, o: torch.addmv(s, x, y, out=o), rnd(n, dtype=dtype), a, v, torch.empty(0, dtype=dtype),
          **tol(dtype))
    check(torch.dot, v, w, **tol(dtype))
    check(torch.dot, v[::2], w[1::2] if k % 2 == 0 else w[::2], **tol(dtype))
    check(torch.vdot, v, w, **tol(dtype))
    check(lambda x, y, o: torch.dot(x, y, out=o), v, w, torch.empty(0, dtype=dtype), **tol(dtype))
    check(torch.outer, v, w[: n], **tol(dtype))
    check(torch.ger, v, w, **tol(dtype))
    check(torch.inner, v, w, **tol(dtype))
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        torch.dot(to_tpu(v), to_tpu(rnd(k + 1, dtype=dtype)))
    with pytest.raises(RuntimeError, match='size mismatch, got input'):
        torch.mv(to_tpu(a), to_tpu(rnd(k + 1, dtype=dtype)))


def test_empty_products():
    check(torch.dot, torch.randn(0), torch.randn(0))
    check(torch.mv, torch.randn(3, 0), torch.randn(0))
    check(lambda s, a, b: torch.addmm(s, a, b, beta=2), torch.randn(3, 2), torch.randn(3, 0), torch.randn(0, 2))


def grads_match(fn, *args):
    """fn's forward and the gradients of every input against the CPU."""
    cpu = [a.clone().requires_grad_() for a in args]
    tpu = [a.to(TPU).requires_grad_() for a in args]
    out, tout = fn(*cpu), fn(*tpu)
    assert_close(tout, out, **F32)
    g = torch.randn(out.shape)
    out.backward(g)
    tout.backward(g.to(TPU))
    for t, c in zip(tpu, cpu):
        assert_close(t.grad, c.grad, **F32)


def test_product_gradients():
    grads_match(lambda s, a, b: torch.addmm(s, a, b, beta=0.5, alpha=2), torch.randn(4), torch.randn(3, 5),
                torch.randn(5, 4))
    grads_match(lambda s, a, b: torch.baddbmm(s, a, b, beta=2, alpha=0.5), torch.randn(3, 4), torch.randn(2, 3, 5),
                torch.randn(2, 5, 4))
    grads_match(lambda s, a, b: torch.addbmm(s, a, b, alpha=-1), torch.randn(3, 4), torch.randn(2, 3, 5),
                torch.randn(2, 5, 4))
    grads_match(lambda s, a, b: torch.addmv(s, a, b, beta=3), torch.randn(3), torch.randn(3, 5), torch.randn(5))
    grads_match(torch.bmm, torch.randn(2, 3, 5), torch.randn(2, 5, 4))
    grads_match(torch.mv, torch.randn(3, 5), torch.randn(5))
    grads_match(torch.dot, torch.randn(5), torch.randn(5))
    grads_match(torch.outer, torch.randn(3), torch.randn(4))


MATMUL_SHAPES = [
    ((5,), (5,)), ((5,), (5, 3)), ((4, 5), (5,)), ((4, 5), (5, 3)),
    ((2, 4, 5), (5,)), ((5,), (2, 5, 3)), ((2, 4, 5), (5, 3)), ((4, 5), (2, 5, 3)),
    ((2, 4, 5), (2, 5, 3)), ((2, 1, 4, 5), (3, 5, 6)), ((1, 4, 5), (3, 2, 5, 6)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_forward_backward(sa, sb):
    a, b = torch.randn(sa, requires_grad=True), torch.randn(sb, requires_grad=True)
    ta, tb = a.detach().to(TPU).requires_grad_(), b.detach().to(TPU).requires_grad_()
    out, tout = torch.matmul(a, b), torch.matmul(ta, tb)
    assert_close(tout, out, **F32)
    g = torch.randn(out.shape)
    out.backward(g)
    tout.backward(g.to(TPU))
    assert_close(ta.grad, a.grad, **F32)
    assert_close(tb.grad, b.grad, **F32)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.int64])
def test_matmul_dtypes(dtype):
    for sa, sb in MATMUL_SHAPES[::3]:
        check(torch.matmul, rnd(*sa, dtype=dtype), rnd(*sb, dtype=dtype))
        check(lambda x, y: x @ y, rnd(*sa, dtype=dtype), rnd(*sb, dtype=dtype))


def test_matmul_out_and_noncontiguous():
    check(lambda x, y, o: torch.matmul(x, y, out=o), torch.randn(2, 3, 4), torch.randn(4, 5), torch.empty(0), **F32)
    check(lambda x, y: torch.matmul(x.transpose(0, 1), y.mT), torch.randn(3, 2, 4), torch.randn(2, 5, 4), **F32)


def test_low_precision_accumulates_in_f32():
    # A long bf16 dot whose exact value needs f32 accumulation to round right.
    k = 4096
    a = torch.ones(1, k, dtype=torch.bfloat16)
    b = torch.full((k, 1), 1 + 2 ** -7, dtype=torch.bfloat16)
    r = torch.mm(a.to(TPU), b.to(TPU))
    assert r.item() == torch.tensor(k * (1 + 2 ** -7), dtype=torch.bfloat16).item()
    assert_close(r, torch.mm(a, b))


@pytest.mark.parametrize("in_shape", [(4, 6), (2, 3, 6), (6,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(in_shape, bias):
    lin = torch.nn.Linear(6, 5, bias=bias)
    tlin = torch.nn.Linear(6, 5, bias=bias)
    tlin.load_state_dict(lin.state_dict())
    tlin.to(TPU)
    x = torch.randn(in_shape, requires_grad=True)
    tx = x.detach().to(TPU).requires_grad_()
    out, tout = lin(x), tlin(tx)
    assert_close(tout, out, **F32)
    g = torch.randn(out.shape)
    out.backward(g)
    tout.backward(g.to(TPU))
    assert_close(tx.grad, x.grad, **F32)
    assert_close(tlin.weight.grad, lin.weight.grad, **F32)
    if bias:
        assert_close(tlin.bias.grad, lin.bias.grad, **F32)
    # Transposed input.
    check(lambda a, w: F.linear(a.transpose(0, -1), w), torch.randn(6, 3), torch.randn(5, 6), **F32)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_linear_low_precision(dtype):
    check(F.linear, torch.randn(3, 4, 16).to(dtype), torch.randn(8, 16).to(dtype), torch.randn(8).to(dtype))


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
