"""torch.compile(backend="tpu"): graphs as one program through the eager kernels."""
import copy
import subprocess
import sys
import os

import pytest
import torch

import torch_pjrt
import torch_pjrt.compiler
from conftest import TPU, assert_close

torch._dynamo.config.recompile_limit = 64


def _reset():
    torch._dynamo.reset()


def _grown(before):
    """What the backend did since `before` (a copy of compiler.stats)."""
    return {k: torch_pjrt.compiler.stats[k] - before[k] for k in ("graphs", "splits", "programs")}


def _compiles():
    """Programs compiled or loaded from the disk cache (not found in memory)."""
    s = torch_pjrt.cache_stats()
    return s["misses"] + s["disk_hits"]


@pytest.mark.once("checks a fresh process's start")
def test_backend_listed_after_import_torch_alone():
    code = "import torch; print('tpu' in torch._dynamo.list_backends())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
    assert out.stdout.strip() == "True", out.stderr[-2000:]


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.b = torch.nn.Linear(32, 8)

    def forward(self, x):
        return torch.softmax(self.b(torch.nn.functional.gelu(self.a(x))), -1) * 2 + x[:, :8]


def test_inference_one_program_and_replay():
    _reset()
    torch.manual_seed(0)
    m = MLP()
    x = torch.randn(5, 16)
    ref = m(x)
    mt = MLP().to("tpu")
    mt.load_state_dict(m.state_dict())
    f = torch.compile(mt, backend="tpu")
    with torch.no_grad():
        out = f(x.to("tpu"))
        torch.testing.assert_close(out.cpu(), ref.detach(), rtol=1e-5, atol=1e-5)
        # The inputs settle first: in fused mode an upload is itself a
        # pending program, not part of the compiled graph.
        xs = [torch.randn(5, 16) for _ in range(3)]
        xts = [x2.to("tpu") for x2 in xs]
        torch_pjrt.synchronize()
        before = torch_pjrt.cache_stats()
        outs = [f(x2t) for x2t in xts]
        after = torch_pjrt.cache_stats()
        for x2, out in zip(xs, outs):
            torch.testing.assert_close(out.cpu(), m(x2), rtol=1e-5, atol=1e-5)
    # Replays launch the cached program: nothing is compiled or looked up.
    assert after["misses"] == before["misses"]


def test_many_row_matmuls_read_weights_from_in_out_copies():
    """On XLA:CPU an inference graph's x @ W.T of many rows reads W from an
    [in, out] copy made once per weight (and again after it changes); one
    row keeps reading W itself. Values are the CPU's either way."""
    from torch_pjrt import _dot_layout
    if torch_pjrt.runtime_info()["platform"] != "cpu":
        pytest.skip("a layout choice of the XLA:CPU plugin only")
    _reset()
    torch.manual_seed(0)
    m = MLP()
    mt = MLP().to("tpu")
    mt.load_state_dict(m.state_dict())
    f = torch.compile(mt, backend="tpu")
    weights = {(id(mt.a.weight), "in_out"), (id(mt.b.weight), "in_out")}
    copies = lambda: weights & set(_dot_layout.copies)  # noqa: E731
    with torch.no_grad():
        x1 = torch.randn(1, 16)
        torch.testing.assert_close(f(x1.to("tpu")).cpu(), m(x1), rtol=1e-5, atol=1e-5)
        assert not copies()  # one row: W as it is
        x = torch.randn(64, 16)
        torch.testing.assert_close(f(x.to("tpu")).cpu(), m(x), rtol=1e-5, atol=1e-5)
        assert copies() == weights
        made = _dot_layout.copies[id(mt.a.weight), "in_out"][2]
        f(x.to("tpu"))
        assert _dot_layout.copies[id(mt.a.weight), "in_out"][2] is made  # made once
        # A changed weight gets a new copy: the graph never reads a stale one.
        mt.a.weight.mul_(-2)
        m.a.weight.mul_(-2)
        torch.testing.assert_close(f(x.to("tpu")).cpu(), m(x), rtol=1e-5, atol=1e-5)
        assert _dot_layout.copies[id(mt.a.weight), "in_out"][2] is not made
    # The copies go with the weights.
    del f, mt
    _reset()
    import gc
    gc.collect()
    assert not copies()


def _grouped_attention(q, k, v, mask):
    """transformers' SDPA path under torch.compile for grouped-query
    attention: each key/value head repeated for its query heads."""
    def repeat_kv(x, n):
        b, h, s, d = x.shape
        return x[:, :, None, :, :].expand(b, h, n, s, d).reshape(b, h * n, s, d)
    groups = q.shape[1] // k.shape[1]
    return torch.nn.functional.scaled_dot_product_attention(q, repeat_kv(k, groups), repeat_kv(v, groups),
                                                            attn_mask=mask, scale=0.125)


@pytest.mark.parametrize("queries", [1, 5])
def test_grouped_attention_reads_key_value_heads_unrepeated(queries):
    """The repeat of grouped keys/values before SDPA is dropped from the
    compiled program (the tpu SDPA serves each query group from its key/value
    head): values and gradients stay the CPU's."""
    _reset()
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 8, queries, 64), torch.randn(3, 2, 11, 64), torch.randn(3, 2, 11, 64)
    mask = torch.randn(3, 1, queries, 11) > -1.0
    f = torch.compile(_grouped_attention, backend="tpu")
    before = torch_pjrt.compiler.stats["kv_repeats_dropped"]
    with torch.no_grad():
        out = f(*(t.to("tpu") for t in (q, k, v, mask)))
    assert torch_pjrt.compiler.stats["kv_repeats_dropped"] == before + 1
    torch.testing.assert_close(out.cpu(), _grouped_attention(q, k, v, mask), rtol=1e-5, atol=1e-5)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    dev = [t.detach().to("tpu").requires_grad_() for t in leaves]
    _grouped_attention(*leaves, mask).square().sum().backward()
    f(*dev, mask.to("tpu")).square().sum().backward()
    assert torch_pjrt.compiler.stats["kv_repeats_dropped"] == before + 2
    for a, b in zip(dev, leaves):
        torch.testing.assert_close(a.grad.cpu(), b.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_grouped_mm_compiles_in_every_dtype_the_device_takes(dtype):
    # torch's fake-tensor rule for _grouped_mm admits bfloat16 only; a tpu
    # graph takes what the eager kernel takes (transformers' grouped_mm
    # experts in a float32 model), and bad shapes still fail torch's checks.
    _reset()
    groups = sorted(torch.randint(0, 11, (3,)).tolist())
    offs = torch.tensor(groups[:2] + [11], dtype=torch.int32)
    a, b = torch.randn(11, 16).to(dtype), torch.randn(3, 16, 8).to(dtype)
    f = torch.compile(lambda a, b, o: torch._grouped_mm(a, b, offs=o), backend="tpu", fullgraph=True)
    out = f(a.to("tpu"), b.to("tpu"), offs.to("tpu"))
    starts = [0] + offs.tolist()[:-1]
    ref = torch.cat([a[s:e].float() @ b[i].float() for i, (s, e) in enumerate(zip(starts, offs.tolist()))])
    assert out.dtype == dtype
    tol = dict(atol=1e-4, rtol=1e-4) if dtype == torch.float32 else dict(atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(out.cpu().float(), ref, **tol)
    with pytest.raises(Exception, match="contraction dimension of mat_a and mat_b must match"):
        f(a.to("tpu"), torch.randn(3, 15, 8).to(dtype).to("tpu"), offs.to("tpu"))


def test_output_views_and_noncontiguous_inputs():
    _reset()

    def f(x, y):
        z = x.t() @ y
        return z, z[1:, ::2], x.sum()

    x = torch.randn(6, 4)
    f_t = torch.compile(f, backend="tpu")
    xt = x.to("tpu")
    base = torch.randn(6, 10)
    yt = base.to("tpu")[:, ::2]
    got = f_t(xt, yt)
    want = f(x, base[:, ::2])
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.stride() == w.stride()
        torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-5)


def test_input_mutation_writes_back_in_place():
    _reset()

    def step(cache, pos, kv, w):
        cache.index_copy_(2, pos, kv)
        w.mul_(0.5)
        return (cache * 2).sum(-1)

    cache = torch.zeros(1, 2, 8, 4)
    w = torch.randn(3, 3)
    cache_t, w_t = cache.to("tpu"), w.to("tpu")
    f = torch.compile(step, backend="tpu", fullgraph=True)
    donated0 = torch.tpu.memory_stats()["num_donated_buffers"]
    for i in range(4):
        kv = torch.randn(1, 2, 1, 4)
        pos = torch.tensor([i])
        want = step(cache, pos, kv, w)
        got = f(cache_t, pos.to("tpu"), kv.to("tpu"), w_t)
        torch.testing.assert_close(got.cpu(), want)
        torch.testing.assert_close(cache_t.cpu(), cache)
        torch.testing.assert_close(w_t.cpu(), w)
    # The cache and w are consumed by the program (reused buffers), not copied.
    assert torch.tpu.memory_stats()["num_donated_buffers"] - donated0 >= 6


def test_mutated_input_still_held_elsewhere_keeps_old_value():
    _reset()

    def f(x):
        x.add_(1)
        return x * 2

    x = torch.randn(4, 4).to("tpu")
    alias_old = x.clone()
    f_t = torch.compile(f, backend="tpu")
    f_t(x)
    ex = x.cpu()
    # A queued op still reading the old value sees it; x gets the new one.
    y = x.detach()
    keep = y + 0
    out = f_t(x)
    torch.testing.assert_close(keep.cpu(), ex)
    torch.testing.assert_close(x.cpu(), ex + 1)
    torch.testing.assert_close(out.cpu(), (ex + 1) * 2)
    torch.testing.assert_close(alias_old.cpu() + 1, ex)


def test_view_inputs_at_any_offset_share_one_program():
    _reset()

    def f(x, t):
        return x * t + t

    x = torch.randn(4, 3)
    ts = torch.randn(6)
    xt, tst = x.to("tpu"), ts.to("tpu")
    f_t = torch.compile(f, backend="tpu")
    programs = torch_pjrt.compiler.stats["programs"]
    for i in range(6):
        torch.testing.assert_close(f_t(xt, tst[i]).cpu(), f(x, ts[i]))
    # The same for rows of a matrix: a view read by value, whatever its offset.
    rows = torch.randn(5, 3)
    rt = rows.to("tpu")
    for i in range(5):
        torch.testing.assert_close(f_t(xt, rt[i]).cpu(), f(x, rows[i]))
    assert torch_pjrt.compiler.stats["programs"] - programs == 2


def test_view_inputs_written_or_returned_keep_their_storage():
    _reset()

    def write(v, y):
        v.add_(y)
        return v.sum()

    def ret(v):
        return v, v * 2

    base = torch.randn(4, 5)
    bt = base.to("tpu")
    w_t, r_t = torch.compile(write, backend="tpu"), torch.compile(ret, backend="tpu")
    for i in (1, 3):
        y = torch.randn(5)
        torch.testing.assert_close(w_t(bt[i], y.to("tpu")).cpu(), write(base[i], y))
        torch.testing.assert_close(bt.cpu(), base)  # the row was updated in place
    view, doubled = r_t(bt[2])
    torch.testing.assert_close(doubled.cpu(), base[2] * 2)
    bt[2].fill_(7.0)
    torch.testing.assert_close(view.cpu(), torch.full((5,), 7.0))  # still a view of bt


def test_same_cache_entry_as_fused_mode():
    _reset()

    def f(x, y):
        return torch.sin(x * y) + 1.5

    # Shapes no other test uses: the first program of this graph is fused mode's.
    x = torch.randn(7, 13).to("tpu")
    y = torch.randn(7, 13).to("tpu")
    torch_pjrt.synchronize()
    with torch_pjrt.eager_mode("fused"):
        want = f(x, y)
        m0 = _compiles()
        torch_pjrt.synchronize()  # the pending values, as one program
        m1 = _compiles()
    f_t = torch.compile(f, backend="tpu")
    got = f_t(x, y)
    m2 = _compiles()
    torch.testing.assert_close(got.cpu(), want.cpu())
    assert m1 - m0 == 1  # fused mode compiled it
    assert m2 == m1  # the compiled graph found fused mode's program


def test_unknown_mode_and_options():
    _reset()
    f = torch.compile(lambda x: x + 1, backend="tpu", options={"max_autotune": True})
    with pytest.raises(Exception, match="takes no options"):
        f(torch.ones(2, device="tpu"))
    _reset()
    torch_pjrt.compiler._noted.clear()  # the note is once per process
    g = torch.compile(lambda x: x + 2, backend="tpu", mode="reduce-overhead")
    with pytest.warns(UserWarning, match="has no effect"):
        out = g(torch.ones(3, device="tpu"))
    torch.testing.assert_close(out.cpu(), torch.full((3,), 3.0))


@pytest.mark.allow_fallback("special_bessel_j0", "special_bessel_y0")
def test_fallback_op_splits_the_graph():
    _reset()

    def f(x):
        return torch.special.bessel_j0(torch.sin(x) * 3) * 2 + x

    x = torch.randn(5, 7)
    before = dict(torch_pjrt.compiler.stats)
    got = torch.compile(f, backend="tpu")(x.to("tpu"))
    torch.testing.assert_close(got.cpu(), f(x), rtol=1e-5, atol=1e-5)
    # One graph, split around the fallback op: its two device stretches
    # (sin * 3, then * 2 + x) are programs.
    assert _grown(before) == {"graphs": 1, "splits": 1, "programs": 2}

    # A composite op (its functional form calls an out= kernel the tpu lacks)
    # is found by the trace meeting the fallback: the graph splits there.
    def g(x):
        return torch.special.bessel_y0(torch.sin(x).abs() + 1) * 2 + x

    g_t = torch.compile(g, backend="tpu")
    before = dict(torch_pjrt.compiler.stats)
    for _ in range(2):
        x = torch.randn(5, 7)
        torch.testing.assert_close(g_t(x.to("tpu")).cpu(), g(x), rtol=1e-5, atol=1e-5)
    assert _grown(before) == {"graphs": 1, "splits": 1, "programs": 2}  # the second call reuses them


def test_fallback_op_under_fullgraph_names_it():
    _reset()

    def f(x):
        return torch.special.bessel_j0(x * 3) + 1

    with pytest.raises(Exception, match="special_bessel_j0.*no native tpu kernel"):
        torch.compile(f, backend="tpu", fullgraph=True)(torch.randn(4, device="tpu"))


def test_graph_breaks_item_print_and_data_dependent_shapes():
    _reset()

    def f(x):
        y = x * 2
        print("between graphs")
        s = y.sum().item()
        z = y[y > 0]
        return z * s + 1

    x = torch.randn(6, 5)
    before = dict(torch_pjrt.compiler.stats)
    got = torch.compile(f, backend="tpu")(x.to("tpu"))
    torch.testing.assert_close(got.cpu(), f(x), rtol=1e-5, atol=1e-5)
    # Dynamo breaks the graph at print, .item() and the data-dependent
    # shape: four graphs, each one whole program (nothing split).
    assert _grown(before) == {"graphs": 4, "splits": 0, "programs": 4}


def test_dynamic_shapes_recompile_per_shape_with_a_log_line(capfd):
    _reset()

    def f(x):
        return torch.relu(x) @ x.t()

    f_t = torch.compile(f, backend="tpu", dynamic=True)
    for n in (3, 5, 9):
        x = torch.randn(n, 4)
        torch.testing.assert_close(f_t(x.to("tpu")).cpu(), f(x), rtol=1e-5, atol=1e-5)
    err = capfd.readouterr().err
    assert err.count("gets a program for new inputs") == 2, err


def test_rng_reproducible_and_advances_like_eager():
    _reset()

    def f(x):
        return torch.nn.functional.dropout(x, 0.5, training=True) + torch.rand_like(x)

    x = torch.randn(64, 32).to("tpu")
    f_t = torch.compile(f, backend="tpu")
    torch.manual_seed(123)
    a = f_t(x).cpu()
    b = f_t(x).cpu()
    after = torch.rand(4, device="tpu").cpu()
    assert not torch.equal(a, b)  # each call draws new numbers
    torch.manual_seed(123)
    torch.testing.assert_close(f_t(x).cpu(), a, rtol=0, atol=0)
    torch.testing.assert_close(f_t(x).cpu(), b, rtol=0, atol=0)
    torch.testing.assert_close(torch.rand(4, device="tpu").cpu(), after, rtol=0, atol=0)
    # Eager draws the same streams: the compiled graph advanced the
    # generator exactly as the eager ops do.
    torch.manual_seed(123)
    ea, eb = f(x).cpu(), f(x).cpu()
    torch.testing.assert_close(ea, a, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(eb, b, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(torch.rand(4, device="tpu").cpu(), after, rtol=0, atol=0)


def test_default_backend_runs_tpu_graphs_through_the_tpu_backend():
    _reset()
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    tm = copy.deepcopy(m).to(TPU)
    x = torch.randn(5, 8)
    programs = torch_pjrt.compiler.stats["programs"]
    f = torch.compile(tm, fullgraph=True)  # no backend: what code written for CUDA does
    assert_close(f(x.to(TPU)), m(x))
    assert torch_pjrt.compiler.stats["programs"] > programs
    # Training: the backward graph takes the same way.
    loss = f(x.to(TPU)).square().sum()
    loss.backward()
    m(x).square().sum().backward()
    for a, b in zip(tm.parameters(), m.parameters()):
        assert_close(a.grad, b.grad)
    # inductor's modes are noted, not refused.
    _reset()
    g = torch.compile(lambda t: t.sin() * 2, mode="reduce-overhead")
    y = torch.randn(7)
    assert_close(g(y.to(TPU)), y.sin() * 2)


@pytest.mark.once("inductor on CPU tensors does not depend on the tpu's eager mode")
def test_default_backend_on_cpu_tensors_is_still_inductor():
    from torch._dynamo.utils import counters
    _reset()
    counters.clear()
    programs = torch_pjrt.compiler.stats["programs"]
    g = torch.compile(lambda x: x * 2 + 1)
    torch.testing.assert_close(g(torch.ones(3)), torch.full((3,), 3.0))
    assert torch_pjrt.compiler.stats["programs"] == programs
    assert counters["inductor"], "the CPU graph did not reach inductor"


_SECOND_PROCESS = r"""
import json, time, torch, torch_pjrt
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(24, 48), torch.nn.Tanh(), torch.nn.Linear(48, 24)).to("tpu")
f = torch.compile(m, backend="tpu")
x = torch.randn(3, 24).to("tpu")
with torch.no_grad():
    y = f(x).cpu()
print(json.dumps({"misses": torch_pjrt.cache_stats()["misses"], "sum": float(y.sum())}))
"""


@pytest.mark.once("checks a fresh process's start")
def test_second_process_compiles_no_program(tmp_path):
    env = dict(os.environ, TORCH_PJRT_CACHE_DIR=str(tmp_path))
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", _SECOND_PROCESS], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]
        import json
        runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    assert runs[0]["misses"] >= 1
    assert runs[1]["misses"] == 0
    assert runs[0]["sum"] == runs[1]["sum"]
