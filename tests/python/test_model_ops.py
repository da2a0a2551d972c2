"""Ops made native for the Hugging Face model matrix (kernels_models.cc)
against the CPU: histc and the shallow-copy compatibility query."""
import pytest
import torch

from conftest import TPU, assert_close

FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def _histc_both(x, **kw):
    expected = torch.histc(x, **kw)
    actual = torch.histc(x.to(TPU), **kw)
    assert_close(actual, expected, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(100,), (7, 9), (2, 3, 5), (), (0,)])
def test_histc_explicit_range(dtype, shape):
    x = (torch.randn(shape) * 2).to(dtype)  # some values fall outside [-1.5, 2]
    for bins in (1, 7, 64):
        _histc_both(x, bins=bins, min=-1.5, max=2)


@pytest.mark.parametrize("dtype", FLOATS)
def test_histc_data_range(dtype):
    """min == max: the edges are the data's min and max (computed on the device)."""
    x = torch.randn(50, 3).to(dtype)
    _histc_both(x, bins=10)
    _histc_both(x, bins=5, min=3, max=3)
    _histc_both(torch.full((4,), 2.5, dtype=dtype), bins=4)  # one value: edges v-1, v+1
    _histc_both(torch.empty(0, dtype=dtype), bins=3)  # empty: edges -1, 1, all zero


@pytest.mark.parametrize("dtype", FLOATS)
def test_histc_edges_and_nan(dtype):
    # Integral values land exactly on bin edges; the right edge belongs to
    # the last bin; NaN and values outside are not counted.
    x = torch.randint(-2, 13, (200,)).to(dtype)
    _histc_both(x, bins=5, min=0, max=10)
    _histc_both(x, bins=10, min=0, max=10)
    x[::7] = float("nan")
    _histc_both(x, bins=4, min=0, max=10)


def test_histc_non_contiguous():
    x = torch.randn(8, 12)
    _histc_both(x.t(), bins=6, min=-1, max=1)
    _histc_both(x[::2, 1::3], bins=6, min=-1, max=1)
    _histc_both(torch.randn(5, 1).expand(5, 4), bins=3, min=-2, max=2)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.uint8])
def test_histc_integers(dtype):
    """The CPU has no integer histc (CUDA does: the MoE path on a
    non-CPU device counts int32 expert ids); compare with the float count."""
    lo = 0 if dtype == torch.uint8 else -5
    x = torch.randint(lo, 20, (300,), dtype=dtype)
    for bins, mn, mx in [(8, 0, 7), (4, 0, 15), (25, lo, 19), (3, 2, 2)]:
        expected = torch.histc(x.double(), bins=bins, min=mn, max=mx).to(dtype)
        actual = torch.histc(x.to(TPU), bins=bins, min=mn, max=mx)
        assert_close(actual, expected, atol=0, rtol=0)


def test_histc_moe_counts():
    """transformers' grouped_mm experts: sorted int32 expert ids, one bin per expert."""
    experts = 6
    ids = torch.sort(torch.randint(0, experts, (40,), dtype=torch.int32)).values
    counts = torch.histc(ids.to(TPU), bins=experts, min=0, max=experts - 1)
    assert_close(counts, torch.bincount(ids, minlength=experts).to(torch.int32), atol=0, rtol=0)
    offsets = torch.cumsum(counts, 0, dtype=torch.int32)
    assert offsets[-1].item() == 40


def test_histc_out():
    x = torch.randn(30)
    out = torch.empty(0, device=TPU)
    r = torch.histc(x.to(TPU), bins=5, min=-1, max=1, out=out)
    assert r is out
    assert_close(out, torch.histc(x, bins=5, min=-1, max=1), atol=0, rtol=0)
    out = torch.zeros(9, device=TPU)
    with pytest.warns(UserWarning, match="resized"):  # as on the CPU
        torch.histc(x.to(TPU), bins=4, out=out)
    assert_close(out, torch.histc(x, bins=4), atol=0, rtol=0)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.histc(x.to(TPU), bins=4, out=torch.empty(4, device=TPU, dtype=torch.float64))


def test_histc_errors():
    x = torch.randn(10, device=TPU)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        torch.histc(x, bins=0)
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(x, bins=3, min=2, max=1)
    with pytest.raises(RuntimeError, match="not finite"):
        torch.histc(x, bins=3, min=0, max=float("inf"))
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        torch.histc(torch.ones(3, dtype=torch.bool, device=TPU), bins=2)


def test_module_to_keeps_tied_parameters():
    """PrivateUse1 is not one of c10's dense backends: without our
    _has_compatible_shallow_copy_type, Module.to('tpu') would give each
    module its own copy of a shared parameter."""
    emb = torch.nn.Embedding(10, 4)
    head = torch.nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    m = torch.nn.ModuleDict({"emb": emb, "head": head})
    param = emb.weight
    m.to(TPU)
    assert m["head"].weight is m["emb"].weight is param  # moved in place, like CUDA
    assert param.device.type == "tpu"
    ids = torch.randint(0, 10, (3,))
    m["head"](m["emb"](ids.to(TPU))).sum().backward()
    ref = torch.nn.Embedding(10, 4)
    with torch.no_grad():
        ref.weight.copy_(param.cpu())
    torch.nn.functional.linear(ref(ids), ref.weight).sum().backward()
    assert_close(param.grad, ref.weight.grad)  # both uses accumulate into one grad
    m.to("cpu")
    assert m["head"].weight is m["emb"].weight and param.device.type == "cpu"
    assert param.grad.device.type == "cpu"
    assert torch._has_compatible_shallow_copy_type(torch.ones(2), torch.ones(2, device=TPU))
    assert torch._has_compatible_shallow_copy_type(torch.ones(2, device=TPU), torch.ones(2))
    assert not torch._has_compatible_shallow_copy_type(torch.ones(2, device=TPU),
                                                       torch.ones(2).to_sparse())
