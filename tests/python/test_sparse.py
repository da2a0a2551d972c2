"""Sparse COO tensors on the tpu against the CPU: constructors, coalesce,
to_dense / to_sparse, sums with dense and sparse tensors, products with
dense matrices, sparse gradients of nn.Embedding through SGD, SparseAdam
and Adagrad, and the CPU route for sparse ops without a tpu kernel."""
import pytest
import torch

import torch_pjrt
from conftest import TPU, assert_close

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")


def random_coo(sizes, nnz, dense=(), dtype=torch.float32):
    # Duplicate positions on purpose: an uncoalesced tensor, as user code and
    # autograd make them.
    idx = torch.stack([torch.randint(0, s, (nnz,)) for s in sizes])
    vals = torch.randn(nnz, *dense, dtype=dtype)
    return torch.sparse_coo_tensor(idx, vals, (*sizes, *dense))


def test_constructors_round_trip_and_print():
    s = random_coo((5, 7), 12)
    st = torch.sparse_coo_tensor(s._indices().to(TPU), s._values().to(TPU), s.shape)
    assert st.is_sparse and st.device.type == "tpu" and st.layout == torch.sparse_coo
    assert (st.sparse_dim(), st.dense_dim(), st._nnz()) == (2, 0, 12)
    assert torch.equal(st.to_dense().cpu(), s.to_dense())
    assert torch.equal(s.to(TPU).cpu().to_dense(), s.to_dense())
    assert "nnz=12" in repr(st) and "tpu" in repr(st)
    empty = torch.sparse_coo_tensor(size=(3, 4), device=TPU)
    assert empty._nnz() == 0 and torch.equal(empty.to_dense().cpu(), torch.zeros(3, 4))


@pytest.mark.parametrize("dense", [(), (3,)])
def test_coalesce_is_the_cpus(dense):
    s = random_coo((4, 6), 30, dense)
    c, ct = s.coalesce(), s.to(TPU).coalesce()
    assert ct.is_coalesced() and ct._nnz() == c._nnz()
    assert torch.equal(ct._indices().cpu(), c._indices())
    assert_close(ct._values(), c._values())


def test_dense_to_sparse_finds_the_cpus_entries():
    d = torch.randn(6, 5) * (torch.rand(6, 5) < 0.4)
    for sparse_dim in (2, 1):
        got, want = d.to(TPU).to_sparse(sparse_dim), d.to_sparse(sparse_dim)
        assert got.sparse_dim() == sparse_dim and torch.equal(got._indices().cpu(), want._indices())
        assert torch.equal(got.to_dense().cpu(), d)


def test_sums_with_dense_and_sparse_tensors():
    a, b = random_coo((5, 4), 9), random_coo((5, 4), 7)
    d = torch.randn(5, 4)
    at, bt, dt = a.to(TPU), b.to(TPU), d.to(TPU)
    assert_close(dt + at, d + a)
    assert_close(torch.add(dt, at, alpha=-2.5), torch.add(d, a, alpha=-2.5))
    dt.add_(bt, alpha=3)
    d.add_(b, alpha=3)
    assert_close(dt, d)
    assert_close((at + bt).to_dense(), (a + b).to_dense())
    both = at.coalesce() + bt.coalesce()
    want = a.coalesce() + b.coalesce()
    assert both.is_coalesced() and both._nnz() == want._nnz()
    assert_close(both.to_dense(), want.to_dense())
    with pytest.raises(RuntimeError, match="add\\(sparse, dense\\) is not supported"):
        at + dt
    with pytest.raises(RuntimeError, match="same size"):
        dt + random_coo((4, 4), 3).to(TPU)


def test_products_with_dense_matrices():
    s = random_coo((6, 8), 15)
    m, bias, v = torch.randn(8, 3), torch.randn(6, 3), torch.randn(8)
    st, mt = s.to(TPU), m.to(TPU)
    assert_close(torch.sparse.mm(st, mt), torch.sparse.mm(s, m), atol=1e-5, rtol=1e-5)
    assert_close(st @ mt, s @ m, atol=1e-5, rtol=1e-5)
    assert_close(torch.addmm(bias.to(TPU), st, mt, beta=0.5, alpha=-2), torch.addmm(bias, s, m, beta=0.5, alpha=-2),
                 atol=1e-5, rtol=1e-5)
    assert_close(torch.mv(st, v.to(TPU)), torch.mv(s, v), atol=1e-5, rtol=1e-5)
    # beta = 0 ignores the input, NaNs included.
    nan = torch.full((6, 3), float("nan"))
    assert_close(torch.addmm(nan.to(TPU), st, mt, beta=0), torch.addmm(nan, s, m, beta=0), atol=1e-5, rtol=1e-5)
    # The dense operand's gradient through the product.
    w = torch.randn(8, 3, requires_grad=True)
    wt = w.detach().to(TPU).requires_grad_()
    (torch.sparse.mm(s, w) ** 2).sum().backward()
    (torch.sparse.mm(st, wt) ** 2).sum().backward()
    assert_close(wt.grad, w.grad, atol=1e-4, rtol=1e-5)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        torch.sparse.mm(st, torch.randn(5, 3, device=TPU))


def test_numbers_masks_and_sums():
    s = random_coo((4, 5), 10)
    st = s.to(TPU)
    assert_close((st * 2.5).to_dense(), (s * 2.5).to_dense())
    assert_close((-st).to_dense(), (-s).to_dense())
    assert_close(st.sum(), s.sum())
    d = torch.randn(4, 5)
    got, want = d.to(TPU).sparse_mask(st.coalesce()), d.sparse_mask(s.coalesce())
    assert torch.equal(got._indices().cpu(), want._indices())
    assert_close(got._values(), want._values())


def test_a_huge_sparse_tensor_is_never_densified():
    # 10^10 positions: a dense copy anywhere would run out of memory.
    n = 100_000
    s = random_coo((n, n), 40)
    st = s.to(TPU)
    c = (st + st * 2).coalesce()
    want = (s + s * 2).coalesce()
    assert torch.equal(c._indices().cpu(), want._indices())
    assert_close(c._values(), want._values())
    assert_close(st.sum(), s.sum())
    rows = torch.randn(n, 2)
    assert_close(torch.sparse.mm(st, rows.to(TPU)), torch.sparse.mm(s, rows), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("optimizer", ["SGD", "SparseAdam", "Adagrad"])
def test_sparse_embedding_gradients_train_like_the_cpu(optimizer):
    emb = torch.nn.Embedding(20, 6, sparse=True)
    emb_t = torch.nn.Embedding(20, 6, sparse=True).to(TPU)
    with torch.no_grad():
        emb_t.weight.copy_(emb.weight)
    ids = torch.randint(0, 20, (3, 7))
    for mod, x in ((emb, ids), (emb_t, ids.to(TPU))):
        opt = getattr(torch.optim, optimizer)(mod.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            (mod(x) ** 2).sum().backward()
            opt.step()
    assert emb_t.weight.grad.is_sparse and emb_t.weight.grad.device.type == "tpu"
    assert_close(emb_t.weight, emb.weight, atol=1e-5, rtol=1e-5)


@pytest.mark.allow_fallback("_sparse_softmax", "mul", "pow", "abs", "log1p_")
def test_sparse_ops_without_a_kernel_run_on_the_cpu_and_are_counted():
    s = random_coo((4, 6), 10).coalesce()
    st = s.to(TPU)
    torch_pjrt.reset_fallback_stats()
    got = torch.sparse.softmax(st, 1)
    assert got.is_sparse and got.device.type == "tpu"
    assert_close(got.to_dense(), torch.sparse.softmax(s, 1).to_dense())
    assert_close((st * st).to_dense(), (s * s).to_dense())
    assert_close(st.pow(2).to_dense(), s.pow(2).to_dense())
    # An in-place op keeps its tpu tensor.
    u = st.clone().abs()
    assert u.log1p_() is u and u.device.type == "tpu" and u.is_sparse
    assert_close(u.to_dense(), s.abs().log1p().to_dense())
    u.mul_(u)
    assert_close(u.to_dense(), (s.abs().log1p() ** 2).to_dense())
    stats = torch_pjrt.fallback_stats()
    assert {"_sparse_softmax", "mul.out", "pow.Tensor_Scalar"} <= set(stats), stats
