"""Real and complex dtypes on the tpu: bfloat16 / float16 models end to end
against the CPU, float64 where the plugin has it (and a clear error on TPU
platforms, which lack it), and complex Python scalars as native operands."""
import copy
import platform

import pytest
import torch

import torch_pjrt
from conftest import TPU, assert_as_close_as_cpu, assert_close, check


# ---- bfloat16 / float16 models


def llama():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, vocab_size=256, max_position_embeddings=128,
                                   pad_token_id=0, eos_token_id=None)
    # No end-of-sequence token: greedy decoding of random weights would stop
    # early whenever it picked one, and the test reads a fixed length.
    return transformers.LlamaForCausalLM(cfg)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_llama_in_low_precision_matches_cpu(dtype):
    ref_model = llama().eval()
    model = copy.deepcopy(ref_model).to(dtype)
    tmodel = copy.deepcopy(model).to(TPU)
    ids = torch.randint(1, 256, (2, 10))
    mask = torch.ones_like(ids)
    mask[1, :3] = 0  # left padding on the second row
    with torch.no_grad():
        ref = ref_model(ids, attention_mask=mask).logits
        cpu = model(ids, attention_mask=mask).logits
        out = tmodel(ids.to(TPU), attention_mask=mask.to(TPU)).logits
    assert out.dtype == dtype
    # Padded positions attend to nothing and are garbage on every device.
    keep = mask.bool()
    assert_as_close_as_cpu(out[keep.to(TPU)], cpu[keep], ref[keep])
    # Greedy decoding picks the CPU's token at every step, except at a real
    # near-tie: the CPU's own top-two margin in this dtype smaller than the
    # dtype's error there (measured against float32), where both are right.
    gen = tmodel.generate(ids[:1].to(TPU), max_new_tokens=10, do_sample=False).cpu()
    assert gen.shape == (1, 20)
    with torch.no_grad():
        low = model(gen).logits[0, 9:-1].float()
        f32 = ref_model(gen).logits[0, 9:-1]
    top2 = low.topk(2, dim=-1).values
    margin = top2[:, 0] - top2[:, 1]
    err = (low - f32).abs().max(-1).values
    for step in range(10):
        if margin[step] <= 2 * err[step]:
            break  # a near-tie: the continuations may differ from here on
        assert gen[0, 10 + step] == low[step].argmax(), f"step {step}: tpu picked {gen[0, 10 + step]}"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_mlp_training_matches_cpu(dtype):
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.SiLU(), torch.nn.Linear(16, 4)).to(dtype)
    tm = copy.deepcopy(m).to(TPU)
    x = torch.randn(6, 8, dtype=dtype)
    loss = m(x).float().pow(2).mean()
    loss.backward()
    tloss = tm(x.to(TPU)).float().pow(2).mean()
    tloss.backward()
    assert_close(tloss, loss, atol=1e-2, rtol=1e-2)
    for p, tp in zip(m.parameters(), tm.parameters()):
        assert tp.grad.dtype == dtype
        assert_close(tp.grad, p.grad, atol=5e-2 if dtype == torch.bfloat16 else 5e-3, rtol=3e-2)


# ---- float64


def test_float64_ops_match_cpu():
    assert torch_pjrt._C._f64_supported()  # XLA:CPU holds f64
    a, b = torch.randn(5, 7, dtype=torch.float64), torch.randn(7, 3, dtype=torch.float64)
    check(torch.mm, a, b)
    check(lambda x: (x.exp() * 0.37 + 1e-12).sum(1), a)
    check(lambda x: x.t()[1:4].softmax(-1), a)
    check(lambda x: x.float(), a)
    check(lambda x: x.double(), torch.randn(4))
    t = torch.full((3,), 1 / 3, dtype=torch.float64, device=TPU)
    assert_close(t, torch.full((3,), 1 / 3, dtype=torch.float64), atol=0, rtol=0)
    lin = torch.linspace(0, 1, 7, dtype=torch.float64, device=TPU)
    assert_close(lin, torch.linspace(0, 1, 7, dtype=torch.float64), atol=0, rtol=0)
    z = torch.randn(4, dtype=torch.complex128)
    check(lambda v: v * (1 - 2j), z)


@pytest.fixture
def tpu_platform():
    """Applies the TPU platform's dtype rules on whatever plugin is loaded."""
    torch_pjrt._platform.set_override("tpu")
    try:
        yield
    finally:
        torch_pjrt._platform.set_override("")


def test_float64_is_a_clear_error_on_tpu(tpu_platform):
    assert not torch_pjrt._C._f64_supported()
    x = torch.randn(3, dtype=torch.float64)
    for make in [lambda: x.to(TPU), lambda: torch.zeros(3, dtype=torch.float64, device=TPU),
                 lambda: torch.ones(2, device=TPU).double(), lambda: torch.arange(3.0, dtype=torch.float64, device=TPU),
                 lambda: torch.tensor([1.0, 2.0], dtype=torch.float64, device=TPU),
                 lambda: torch.empty_strided((2, 2), (1, 2), dtype=torch.float64, device=TPU)]:
        with pytest.raises(TypeError, match="float64 is not supported on TPU; use float32"):
            make()
    with pytest.raises(TypeError, match="complex128 is not supported on TPU; use complex64"):
        torch.zeros(2, dtype=torch.complex128, device=TPU)


def test_tpu_rules_keep_float32_work_free_of_float64(tpu_platform):
    # Python floats (float64 on the host) still work as operands, fills and
    # range bounds of float32 / bfloat16 / integer / complex64 tensors.
    x = torch.randn(4, 5)
    check(lambda v: v * 0.37 + 1.5, x)
    check(lambda v: v.to(torch.bfloat16) * 0.1, x)
    check(lambda v: torch.where(v > 0, v, 2.5), x)
    check(lambda v: v.fill_(1 / 3), x.clone())
    check(lambda v: v.fill_(2.7), torch.zeros(3, dtype=torch.int32))
    check(lambda v: v * (0.5 + 1j), torch.randn(3, dtype=torch.complex64))
    for dt in [torch.float32, torch.bfloat16, torch.int64]:
        assert_close(torch.linspace(-2, 3, 9, dtype=dt, device=TPU), torch.linspace(-2, 3, 9, dtype=dt),
                     atol=1e-6 if dt == torch.float32 else None, rtol=1e-6 if dt == torch.float32 else None)
    assert_close(torch.logspace(0, 2, 5, device=TPU), torch.logspace(0, 2, 5), atol=1e-4, rtol=1e-5)
    assert_close(torch.full((2,), 0.1, device=TPU), torch.full((2,), 0.1))
    assert_close(torch.full((2,), 7, dtype=torch.uint8, device=TPU), torch.full((2,), 7, dtype=torch.uint8))


# ---- complex scalars


def test_complex_fill_full_and_setitem():
    check(lambda t: t.fill_(1 + 2j), torch.randn(3, 4, dtype=torch.complex64))
    check(lambda t: t.t().fill_(-0.5j), torch.randn(3, 4, dtype=torch.complex64))
    check(lambda t: t.fill_(2.5), torch.randn(3, dtype=torch.complex64))
    check(lambda t: t.fill_(3 + 0j), torch.randn(3))
    for dt in [None, torch.complex64, torch.complex128]:
        assert_close(torch.full((2, 3), 1j, dtype=dt, device=TPU), torch.full((2, 3), 1j, dtype=dt))
    assert_close(torch.full((2,), 1j, device=TPU).dtype, torch.complex64)

    def setitem(t):
        t[1] = 3j
        t[:, 0] = 1 - 1j
        t[t.real > 0.5] = -2j
        return t
    check(setitem, torch.randn(3, 4, dtype=torch.complex64))
    with pytest.raises(RuntimeError, match="cannot be converted"):
        torch.zeros(2, device=TPU).fill_(1 + 2j)


def test_complex_scalar_arithmetic():
    z = torch.randn(3, 4, dtype=torch.complex64)
    check(lambda t: t * 2j, z)
    check(lambda t: 2j * t + (1 - 0.5j), z)
    check(lambda t: t - 1j, z)
    check(lambda t: t / (0.5 + 2j), z, atol=1e-5, rtol=1e-5)
    check(lambda t: t.mul_(1j), z.clone())
    check(lambda t: t.add_(3 - 1j, alpha=2), z.clone())
    check(lambda t: t * 2j, torch.randn(3))  # real tensor * complex scalar: complex64
    check(lambda t: t == 1j, torch.tensor([1j, 2, 1j], dtype=torch.complex64))
    check(lambda t: torch.where(t.real > 0, t, 5j), z)
    # Values that change only the scalar share one compiled program.
    zt = z.to(TPU)
    (zt * 3j).cpu()
    (zt * (1 + 5j)).cpu()  # (fused mode: the first program also uploaded zt)
    before = torch_pjrt.cache_stats()["misses"]
    (zt * (4 - 1j)).cpu()
    assert torch_pjrt.cache_stats()["misses"] == before


# Finite values past the integer range, the float extremes, the int32 / int64
# bounds and the non-finite ones: the CPU truncates as x86 does (the minimum
# for what does not fit, the low bits for narrower integers), XLA saturates.
CONVERSION_EDGES = [torch.finfo(torch.float).min, -2, -1.5, -0.5, 0, 0.5, 1.5, 2, torch.finfo(torch.float).max,
                    3e9, -3e9, 40000.5, -40000.5, 70000.7, -70000.7, 1e19, -1e19, 9.3e18, 2.0 ** 63, -2.0 ** 63,
                    2.0 ** 31, -2.0 ** 31, 300.7, -300.7, float("nan"), float("inf"), -float("inf")]


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the CPU's out-of-range conversions are x86's here; other hosts saturate")
@pytest.mark.parametrize("to", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16,
                                torch.bool])
@pytest.mark.parametrize("frm", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_float_to_int_conversion_matches_cpu(frm, to):
    x = torch.tensor(CONVERSION_EDGES, dtype=frm)
    assert_close(x.to(TPU).to(to), x.to(to))
    x = x[torch.randperm(len(x))].repeat(3)
    assert_close(x.to(TPU).to(to), x.to(to))


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the CPU's out-of-range conversions are x86's here; other hosts saturate")
@pytest.mark.parametrize("frm", [torch.float32, torch.float64])
def test_float_to_uint32_wraps_like_the_cpu(frm):
    """Below 2^32, negatives within int32 included, uint32 matches the CPU
    (past it the CPU follows no one rule)."""
    x = torch.cat([torch.tensor([-2.0 ** 31, -70000.7, -2, -1.5, 0.5, 2.0 ** 31, 3e9, 2.0 ** 32 - 512]),
                   torch.empty(40).uniform_(-2.0 ** 31, 2.0 ** 32 - 512)]).to(frm)
    assert_close(x.to(TPU).to(torch.uint32), x.to(torch.uint32))
