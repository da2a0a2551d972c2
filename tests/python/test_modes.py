"""The three eager modes: same results, where errors surface, thread-local
selection, the fused mode's flushes and the strict mode's launch queue."""
import contextlib
import threading

import pytest
import torch
import torch.nn.functional as F

import torch_pjrt
from conftest import TPU, assert_close

def failing(x):
    return torch.ops.torch_pjrt._failing_op(x)


@pytest.fixture
def restore_mode():
    before = torch_pjrt.get_eager_mode()
    yield
    torch_pjrt.set_eager_mode(before)


@contextlib.contextmanager
def fused_bound(n):
    """Fused mode with a size bound of n pending nodes."""
    prev = torch_pjrt.get_eager_mode()
    torch_pjrt.set_eager_mode("fused")
    torch.tpu.synchronize()
    old = torch_pjrt.fused_stats()["max_nodes"]
    torch_pjrt._C._set_fused_max_nodes(n)
    try:
        yield
    finally:
        torch_pjrt._C._set_fused_max_nodes(old)
        torch_pjrt.set_eager_mode(prev)


def small_program(x, w):
    h = torch.relu(x @ w + 0.5)
    h[:, 0] = h.sum(1)  # an in-place write through a view
    return torch.softmax(h * 2, dim=-1).mean(0)


def test_modes_agree_with_cpu():
    x, w = torch.randn(8, 16), torch.randn(16, 4)
    out = small_program(x.to(TPU), w.to(TPU))
    assert_close(out, small_program(x, w))


def test_outputs_of_one_op_read_together_later():
    """Two outputs of one computed op (var_mean's var and mean, max's values
    and indices) read by one later program, each as itself."""
    x = torch.randn(6, 5)
    xt = x.to(TPU)
    var, mean = torch.var_mean(xt, 0)
    values, idx = xt.max(1)
    torch_pjrt.synchronize()  # computed: the next program takes them as inputs
    got = (var * 3 + mean, values + idx.float() * 0.5, var - mean)
    want_v, want_m = torch.var_mean(x, 0)
    wv, wi = x.max(1)
    for g, w in zip(got, (want_v * 3 + want_m, wv + wi.float() * 0.5, want_v - want_m)):
        assert_close(g, w)


@pytest.mark.once("sets the eager modes it checks itself")
def test_strict_computes_the_results_of_one_op_in_one_program(restore_mode):
    """An op with several results (a norm's output and statistics,
    attention's output and log-sum-exp: F.scaled_dot_product_attention runs
    the fused op that returns both) is one program in strict mode, not one
    per result each computing the op again."""
    torch_pjrt.set_eager_mode("strict")
    n = torch.randint(40, 90, ()).item()  # a fresh shape: its programs compile here
    x, q, kv = torch.randn(n, 37), torch.randn(1, 2, 3, 16), torch.randn(1, 2, n, 16)
    cases = [(lambda x: torch.ops.aten.native_layer_norm(x, [37], None, None, 1e-5), (x,)),
             (lambda q, kv: F.scaled_dot_product_attention(q, kv, kv, scale=0.3), (q, kv))]
    for fn, args in cases:
        on_tpu = [a.to(TPU) for a in args]
        torch.tpu.synchronize()
        before = torch_pjrt.cache_stats()["misses"]
        got = fn(*on_tpu)
        torch.tpu.synchronize()
        assert torch_pjrt.cache_stats()["misses"] - before == 1
        want = fn(*args)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert_close(g, w, atol=1e-5, rtol=1e-5)


@pytest.mark.once("sets the eager modes it checks itself")
def test_strict_error_is_sticky_until_next_sync(restore_mode):
    torch_pjrt.set_eager_mode("strict")
    x = torch.randn(4, device=TPU)
    y = failing(x)  # queued: returns before the program is even compiled
    with pytest.raises(RuntimeError, match="failing_op"):
        torch.tpu.synchronize()
    # raised once, then cleared: the process keeps working
    torch.tpu.synchronize()
    assert_close(x * 3, x.cpu() * 3)
    # the failed value stays failed when read
    with pytest.raises(RuntimeError, match="failing_op"):
        y.cpu()
    assert_close(x + 1, x.cpu() + 1)


@pytest.mark.once("sets the eager modes it checks itself")
def test_strict_error_raises_at_next_dispatch_or_read(restore_mode):
    torch_pjrt.set_eager_mode("strict")
    x = torch.randn(4, device=TPU)
    failing(x)
    with pytest.raises(RuntimeError, match="failing_op"):
        # whichever comes first after the executor has failed: a dispatch or the read
        for _ in range(1000):
            x = x + 1
        x.cpu()
    assert_close(torch.ones(3, device=TPU) * 2, torch.full((3,), 2.0))


@pytest.mark.once("sets the eager modes it checks itself")
def test_debug_mode_raises_on_the_failing_line(restore_mode):
    torch_pjrt.set_eager_mode("debug")
    x = torch.randn(4, device=TPU)
    with pytest.raises(RuntimeError, match=r"failing_op.*4xf32"):
        failing(x)
    assert_close(x - 1, x.cpu() - 1)


@pytest.mark.once("sets the eager modes it checks itself")
def test_fused_mode_raises_at_sync(restore_mode):
    torch_pjrt.set_eager_mode("fused")
    x = torch.randn(4, device=TPU)
    y = failing(x)
    with pytest.raises(RuntimeError, match="failing_op"):
        torch.tpu.synchronize()
    del y
    torch.tpu.synchronize()
    assert_close(x * 2, x.cpu() * 2)


@pytest.mark.once("sets the eager modes it checks itself")
def test_fused_mode_defers_until_the_host_needs_data(restore_mode):
    torch_pjrt.set_eager_mode("fused")
    torch.tpu.synchronize()
    before = torch_pjrt.fused_stats()["flushes"]
    x0 = torch.randn(64)
    x = x0.to(TPU)
    for _ in range(20):
        x = torch.sin(x) * 0.5 + 0.1
    assert torch_pjrt.fused_stats()["flushes"] == before  # nothing ran yet
    assert torch_pjrt.fused_stats()["pending_nodes"] > 20
    ref = x0.clone()
    for _ in range(20):
        ref = torch.sin(ref) * 0.5 + 0.1
    assert_close(x, ref)  # the whole 60-op program, against the CPU
    assert torch_pjrt.fused_stats()["flushes"] == before + 1  # one program for all of it


@pytest.mark.once("sets the eager modes it checks itself")
def test_fused_size_bound_flushes(restore_mode):
    with fused_bound(10):
        before = torch_pjrt.fused_stats()["flushes"]
        x = torch.zeros(8, device=TPU)
        for _ in range(50):
            x += 1
        assert torch_pjrt.fused_stats()["flushes"] > before
        assert_close(x, torch.full((8,), 50.0))


@pytest.mark.once("sets the eager modes it checks itself")
def test_eager_mode_context_is_thread_local(restore_mode):
    torch_pjrt.set_eager_mode("strict")
    seen = {}

    def other():
        seen["other"] = torch_pjrt.get_eager_mode()

    with torch_pjrt.eager_mode("fused"):
        assert torch_pjrt.get_eager_mode() == "fused"
        t = threading.Thread(target=other)
        t.start()
        t.join()
        x = torch.randn(5, device=TPU)
        y = x * 2
        assert torch_pjrt.fused_stats()["pending_nodes"] > 0  # recorded, not run
    assert torch_pjrt.get_eager_mode() == "strict"
    assert seen["other"] == "strict"
    assert_close(y, x.cpu() * 2)


@pytest.mark.once("sets the eager modes it checks itself")
def test_strict_queue_from_several_threads(restore_mode):
    torch_pjrt.set_eager_mode("strict")
    xs = [torch.randn(32, device=TPU) for _ in range(4)]
    results, errors = {}, []

    def work(i):
        try:
            v = xs[i]
            for _ in range(200):
                v = v * 0.999 + 0.001
            results[i] = v
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(4):
        ref = xs[i].cpu()
        for _ in range(200):
            ref = ref * 0.999 + 0.001
        assert_close(results[i], ref)


@pytest.mark.once("sets the eager modes it checks itself")
def test_in_place_chain_then_read_sees_every_update(restore_mode):
    torch_pjrt.set_eager_mode("strict")
    x = torch.zeros(16, device=TPU)
    for i in range(300):
        x.add_(i)
    assert x[0].item() == sum(range(300))


@pytest.mark.once("sets the eager modes it checks itself")
def test_strict_loop_longer_than_the_launch_queue(restore_mode):
    # 3000 ops fill the bounded queue (1024) and make the producer wait
    # for it to drain; every op still runs, in order.
    torch_pjrt.set_eager_mode("strict")
    x = torch.zeros(4, device=TPU)
    for _ in range(3000):
        x = x + 1
    torch.tpu.synchronize()
    assert x[0].item() == 3000


@pytest.mark.once("sets the eager modes it checks itself")
def test_fused_clusters_cut_at_the_bound_run_while_recording_goes_on(restore_mode):
    # Clusters cut at the size bound are launched from the queue; values read
    # later (and values of earlier clusters used by later ones) are right.
    with fused_bound(25):
        x = torch.randn(64, device=TPU)
        ref = x.cpu()
        outs, refs = [], []
        for i in range(40):
            x = torch.tanh(x * 1.01 + 0.01 * i)
            ref = torch.tanh(ref * 1.01 + 0.01 * i)
            if i % 10 == 0:
                outs.append(x)
                refs.append(ref)
        for o, r in zip(outs, refs):
            assert_close(o, r)
        assert_close(x, ref)


@pytest.mark.once("sets the eager modes it checks itself")
def test_fused_read_launches_the_work_it_does_not_need_behind_it(restore_mode):
    # A read computes what its value needs in a program of its own; pending
    # work that shares nothing with it is launched behind it, not waited for
    # (a decoding loop reading its "all done" flag records the next step
    # while the device runs this one).
    torch_pjrt.set_eager_mode("fused")
    torch.tpu.synchronize()
    a, b = torch.randn(32, 48), torch.randn(48, 16)
    live = torch.ones(5, dtype=torch.long, device=TPU)
    prod = torch.tanh(a.to(TPU) @ b.to(TPU))
    live = live & ~torch.full((5,), False, device=TPU)
    before = torch_pjrt.fused_stats()["flushes"]
    assert not bool(live.max() == 0)
    assert torch_pjrt.fused_stats()["flushes"] == before + 2  # the flag's program, then the rest
    assert_close(prod, torch.tanh(a @ b))
    # Work the read shares goes with it: one program.
    x = torch.randn(16)
    s = torch.sin(x.to(TPU))
    total = s.sum() * 2
    before = torch_pjrt.fused_stats()["flushes"]
    # An absolute bound too: a sum of 16 sines can land near 0, where float32
    # rounding in another order exceeds any relative one.
    assert total.item() == pytest.approx(float(torch.sin(x).sum() * 2), rel=1e-5, abs=1e-5)
    assert torch_pjrt.fused_stats()["flushes"] == before + 1
    assert_close(s, torch.sin(x))


@pytest.mark.once("sets the eager modes it checks itself")
def test_fused_read_never_shows_data_a_held_check_rejects(restore_mode):
    torch_pjrt.set_eager_mode("fused")
    torch.tpu.synchronize()
    table = torch.randn(8, 4, device=TPU)
    # Computed on the device (an index copied from the host raises at the call).
    bad = torch.tensor([1, 9]).to(TPU) + 0
    # A check the read does not need is held for the next read or sync: the
    # flag is right whatever the lookup finds.
    rows = table[bad]
    live = torch.ones(3, dtype=torch.long, device=TPU) & ~torch.full((3,), False, device=TPU)
    assert bool(live.max() == 1)
    with pytest.raises(IndexError, match="out of range|out of bounds"):
        torch.tpu.synchronize()
    del rows
    # Data computed from the bad index raises at its read, pending work or not.
    base = torch.randn(64)
    other = torch.cos(base.to(TPU))
    rows = table[bad]
    with pytest.raises(IndexError, match="out of range|out of bounds"):
        rows.sum().item()
    assert_close(other, torch.cos(base))
    torch.tpu.synchronize()
    # Held until the next read, which raises it though it reads something else.
    rows = table[bad]
    live = torch.ones(3, dtype=torch.long, device=TPU) & ~torch.full((3,), False, device=TPU)
    assert bool(live.max() == 1)
    with pytest.raises(IndexError, match="out of range|out of bounds"):
        torch.ones(2, device=TPU).sum().item()
    torch.tpu.synchronize()
