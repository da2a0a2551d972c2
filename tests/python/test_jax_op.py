"""torch_pjrt.jax_op: JAX and Pallas functions as tpu ops, checked against
the same functions run by JAX on the CPU on fresh random inputs, in the
pass's eager mode, under torch.compile, through autograd, and on meta /
fake tensors."""
import copy
import itertools
import os
import subprocess
import sys

import pytest
import torch

import torch_pjrt
from conftest import TPU

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

_ids = itertools.count()


def fresh(base):
    """A name no other op of this process has (names are defined once)."""
    return f"{base}_{next(_ids)}"


def by_jax(fn, *tensors, x64=False):
    """fn run by JAX on the CPU on the tensors' values, as torch tensors."""
    with jax.enable_x64(x64):
        out = jax.jit(fn)(*[t.detach().cpu().numpy() for t in tensors])
    return jax.tree_util.tree_map(lambda a: torch.from_numpy(np.array(a)), out)


def mlp(x, w):
    return jnp.tanh(x @ w) * 2 + jnp.sin(x).sum(-1, keepdims=True)


def mlp_by_numpy(x, w):
    """mlp in float64 NumPy: a reference that is not JAX."""
    x, w = x.double().numpy(), w.double().numpy()
    return torch.from_numpy(np.tanh(x @ w) * 2 + np.sin(x).sum(-1, keepdims=True)).float()


def test_function_matches_jax():
    op = torch_pjrt.jax_op(fresh("mlp"), mlp)
    x, w = torch.randn(5, 4), torch.randn(4, 4)
    got = op(x.to(TPU), w.to(TPU))
    assert got.device.type == "tpu" and got.shape == (5, 4) and got.dtype == torch.float32
    torch.testing.assert_close(got.cpu(), by_jax(mlp, x, w), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got.cpu(), mlp_by_numpy(x, w), atol=1e-5, rtol=1e-5)
    # Another shape is another export; the first is reused after it.
    x2, w2 = torch.randn(3, 6), torch.randn(6, 6)
    torch.testing.assert_close(op(x2.to(TPU), w2.to(TPU)).cpu(), by_jax(mlp, x2, w2), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(op(x.to(TPU), w.to(TPU)).cpu(), by_jax(mlp, x, w), atol=1e-5, rtol=1e-5)
    assert len(op._exports) == 2
    # A strided view is read as its values, like any kernel's input.
    got = op(x.to(TPU), w.to(TPU).T)
    torch.testing.assert_close(got.cpu(), by_jax(mlp, x, w.T.contiguous()), atol=1e-5, rtol=1e-5)


def test_with_ops_around_it_and_called_twice():
    # In fused mode all of this is one program: the op's functions are
    # inlined once although it is called twice.
    def f(x):
        return jnp.exp(-x * x) + jnp.cos(x)

    def g(x):
        return jnp.where(x > 0, jnp.sqrt(jnp.abs(x)), x)

    op = torch_pjrt.jax_op(fresh("bump"), f)
    other = torch_pjrt.jax_op(fresh("other"), g)  # its @main must not collide with op's
    x = torch.randn(6, 7)
    got = op(op(x.to(TPU).relu() * 2) - 1) + other(x.to(TPU)) * 0.5
    want = by_jax(f, by_jax(f, x.relu() * 2) - 1) + by_jax(g, x) * 0.5
    torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)


def test_multiple_outputs_in_a_tree():
    def f(x, y):
        return {"sum": x + y, "stats": (jnp.max(x, axis=0), jnp.argmax(y, axis=1)), "total": jnp.sum(x * y)}

    op = torch_pjrt.jax_op(fresh("tree"), f)
    x, y = torch.randn(4, 5), torch.randn(4, 5)
    got = op(x.to(TPU), y.to(TPU))
    want = by_jax(f, x, y)
    assert set(got) == {"sum", "stats", "total"} and isinstance(got["stats"], tuple)
    assert got["total"].shape == ()
    torch.testing.assert_close(got["total"].cpu(), want["total"], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got["sum"].cpu(), want["sum"], atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(got["stats"][0].cpu(), want["stats"][0])
    assert got["stats"][1].dtype == torch.int32
    assert torch.equal(got["stats"][1].cpu(), want["stats"][1])


def test_int_inputs_32_and_64_bit():
    def f(a, b):
        return a * 3 + b // 2, (a > b).astype(jnp.int8)

    op = torch_pjrt.jax_op(fresh("ints"), f)
    for dtype in (torch.int32, torch.int64):
        a, b = torch.randint(-100, 100, (3, 8), dtype=dtype), torch.randint(1, 50, (3, 8), dtype=dtype)
        s, g = op(a.to(TPU), b.to(TPU))
        ws, wg = by_jax(f, a, b, x64=dtype == torch.int64)
        assert s.dtype == dtype and g.dtype == torch.int8  # int64 stays int64: exported under x64
        assert torch.equal(s.cpu(), ws) and torch.equal(g.cpu(), wg)
    # bool inputs and outputs.
    def masked(x, mask):
        return jnp.where(mask, x, -x), ~mask

    mop = torch_pjrt.jax_op(fresh("masked"), masked)
    x, mask = torch.randn(5), torch.rand(5) > 0.5
    y, inv = mop(x.to(TPU), mask.to(TPU))
    assert inv.dtype == torch.bool and torch.equal(inv.cpu(), ~mask)
    assert torch.equal(y.cpu(), torch.where(mask, x, -x))
    # Large int64 values survive (no silent narrowing to 32 bits).
    big = torch.randint(2**40, 2**50, (4,), dtype=torch.int64)
    s, _ = op(big.to(TPU), big.to(TPU))
    assert torch.equal(s.cpu(), big * 3 + big // 2)


def test_float64():
    def f(x):
        return jnp.log1p(x * x) / 3

    op = torch_pjrt.jax_op(fresh("f64"), f)
    x = torch.randn(9, dtype=torch.float64)
    got = op(x.to(TPU))
    assert got.dtype == torch.float64
    torch.testing.assert_close(got.cpu(), by_jax(f, x, x64=True), atol=1e-12, rtol=1e-12)


def test_autograd_matches_jax_grad():
    op = torch_pjrt.jax_op(fresh("mlp_grad"), mlp)
    x, w = torch.randn(5, 4), torch.randn(4, 4)
    xt, wt = x.to(TPU).requires_grad_(), w.to(TPU).requires_grad_()
    weights = torch.randn(5, 4)
    (op(xt, wt) * weights.to(TPU)).sum().backward()

    def loss(x, w, c):
        return (mlp(x, w) * c).sum()

    gx, gw = jax.grad(loss, argnums=(0, 1))(x.numpy(), w.numpy(), weights.numpy())
    torch.testing.assert_close(xt.grad.cpu(), torch.from_numpy(np.array(gx)), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(wt.grad.cpu(), torch.from_numpy(np.array(gw)), atol=1e-5, rtol=1e-5)


def test_gradcheck_and_second_order_in_float64():
    # The backward is itself a jax_op, so it has a backward of its own.
    op = torch_pjrt.jax_op(fresh("mlp_gradcheck"), mlp)
    x = torch.randn(3, 2, dtype=torch.float64, device=TPU, requires_grad=True)
    w = torch.randn(2, 2, dtype=torch.float64, device=TPU, requires_grad=True)
    assert torch.autograd.gradcheck(op, (x, w))
    assert torch.autograd.gradgradcheck(op, (x, w))


def test_complex_gradients_follow_torch_convention():
    # torch's gradient of a complex input is the conjugate of JAX's; the
    # same function written in torch is the reference here.
    def f(z, w):
        return jnp.sin(z) * w + z * jnp.conj(z)

    op = torch_pjrt.jax_op(fresh("complex_grad"), f)
    z, w, c = torch.randn(6, dtype=torch.complex64), torch.randn(6), torch.randn(6, dtype=torch.complex64)
    zt, wt = z.to(TPU).requires_grad_(), w.to(TPU).requires_grad_()
    (op(zt, wt) * c.to(TPU)).real.sum().backward()
    zc, wc = z.clone().requires_grad_(), w.clone().requires_grad_()
    ((torch.sin(zc) * wc + zc * zc.conj()) * c).real.sum().backward()
    torch.testing.assert_close(zt.grad.cpu(), zc.grad, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(wt.grad.cpu(), wc.grad, atol=1e-5, rtol=1e-5)


def test_autograd_with_an_int_input_and_output():
    def f(x, idx):
        return jnp.take(x, idx, axis=0) * 2.0, idx + 1

    op = torch_pjrt.jax_op(fresh("take_grad"), f)
    x = torch.randn(6, 3)
    idx = torch.randint(0, 6, (4,), dtype=torch.int32)
    xt = x.to(TPU).requires_grad_()
    y, nxt = op(xt, idx.to(TPU))
    assert not nxt.requires_grad and torch.equal(nxt.cpu(), idx + 1)
    y.pow(2).sum().backward()
    gx = jax.grad(lambda a: (f(a, idx.numpy())[0] ** 2).sum())(x.numpy())
    torch.testing.assert_close(xt.grad.cpu(), torch.from_numpy(np.array(gx)), atol=1e-5, rtol=1e-5)


class _Block(torch.nn.Module):
    def __init__(self, op):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.op = op

    def forward(self, x, w):
        return self.op(self.lin(x), w).relu() + 1


def test_inside_torch_compile(monkeypatch):
    op = torch_pjrt.jax_op(fresh("mlp_compiled"), mlp)
    block = _Block(op)
    x, w = torch.randn(5, 4), torch.randn(4, 4)
    lin = copy.deepcopy(block.lin)  # the CPU reference
    with torch.no_grad():
        want = torch.relu(by_jax(mlp, lin(x), w)) + 1
    block = block.to(TPU)
    compiled = torch.compile(block, backend="tpu", fullgraph=True)
    # The graph's replay through the tpu kernels runs the op's kernel once
    # (recording it into the program).
    calls = []
    real_call = torch_pjrt._C._foreign_call

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real_call(*args, **kwargs)

    monkeypatch.setattr(torch_pjrt._C, "_foreign_call", counted)
    with torch.no_grad():
        got = compiled(x.to(TPU), w.to(TPU))
        torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)
    assert len(calls) == 1

    # The op was recorded into the graph's program: later calls launch that
    # program and never run the op's kernel again.
    def kernel_ran(*args, **kwargs):
        raise AssertionError("the op's kernel ran outside the compiled program")

    monkeypatch.setattr(torch_pjrt._C, "_foreign_call", kernel_ran)
    x2 = torch.randn(5, 4)
    with torch.no_grad():
        want2 = torch.relu(by_jax(mlp, lin(x2), w)) + 1
        torch.testing.assert_close(compiled(x2.to(TPU), w.to(TPU)).cpu(), want2, atol=1e-5, rtol=1e-5)


def test_torch_compile_dynamic_shapes_specialise():
    def f(x):
        return jnp.tanh(x) * 2

    op = torch_pjrt.jax_op(fresh("dynamic"), f)
    g = torch.compile(lambda x: op(x) + 1, backend="tpu", dynamic=True)
    for n in (3, 5):
        x = torch.randn(n, 4)
        torch.testing.assert_close(g(x.to(TPU)).cpu(), by_jax(f, x) + 1, atol=1e-6, rtol=1e-6)


def test_torch_compile_training_step():
    op = torch_pjrt.jax_op(fresh("mlp_train"), mlp)
    x, w = torch.randn(5, 4), torch.randn(4, 4)

    def step(x, w):
        return op(x, w).square().mean()

    wt = w.to(TPU).requires_grad_()
    torch.compile(step, backend="tpu", fullgraph=True)(x.to(TPU), wt).backward()
    gw = jax.grad(lambda w: (mlp(x.numpy(), w) ** 2).mean())(w.numpy())
    torch.testing.assert_close(wt.grad.cpu(), torch.from_numpy(np.array(gw)), atol=1e-5, rtol=1e-5)


def test_pallas_interpret_kernels():
    pl = pytest.importorskip("jax.experimental.pallas")

    def add_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...] * 2

    def add(x, y):
        return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x, y)

    def matmul_kernel(a_ref, b_ref, o_ref):
        o_ref[...] = jnp.dot(a_ref[...], b_ref[...])

    def matmul(a, b):
        shape = jax.ShapeDtypeStruct((a.shape[0], b.shape[1]), a.dtype)
        return pl.pallas_call(matmul_kernel, out_shape=shape, interpret=True)(a, b)

    add_op = torch_pjrt.jax_op(fresh("pallas_add"), add)
    mm_op = torch_pjrt.jax_op(fresh("pallas_matmul"), matmul)
    x, y = torch.randn(8, 16), torch.randn(8, 16)
    torch.testing.assert_close(add_op(x.to(TPU), y.to(TPU)).cpu(), x + y * 2, atol=1e-6, rtol=1e-6)
    a, b = torch.randn(8, 16), torch.randn(16, 4)
    got = mm_op(a.to(TPU), b.to(TPU))
    torch.testing.assert_close(got.cpu(), by_jax(matmul, a, b), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got.cpu(), a @ b, atol=1e-4, rtol=1e-4)


def test_donated_input_is_consumed_in_place():
    def f(x, y):
        return x * 2 + y

    op = torch_pjrt.jax_op(fresh("donate"), f, donate_argnums=(0,))
    # Rows no other process uses: a program of the same key that another
    # process left in the shared disk cache without donating would serve
    # this call (a cached variant costs less than a compile), and nothing
    # would be donated.
    rows = 64 + os.getpid() % 4096
    x, y = torch.randn(rows, 32), torch.randn(rows, 32)
    xt, yt = x.to(TPU), y.to(TPU)
    torch.tpu.synchronize()
    before = torch_pjrt._C._donated_buffers()
    got = op(xt, yt)
    torch.tpu.synchronize()
    assert xt.numel() == 0 and yt.shape == (rows, 32)  # x was given up, y kept
    # Debug mode launches the op while x still holds its buffer, so only the
    # asynchronous modes consume it in place.
    if torch_pjrt.get_eager_mode() != "debug":
        assert torch_pjrt._C._donated_buffers() > before
    torch.testing.assert_close(got.cpu(), x * 2 + y, atol=1e-6, rtol=1e-6)
    # A tensor that shares its storage keeps the value: nothing is consumed.
    xt = x.to(TPU)
    keep = xt.view(-1)
    torch.testing.assert_close(op(xt, yt).cpu(), x * 2 + y, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(keep.cpu(), x.view(-1))
    with pytest.raises(ValueError, match="argument positions"):
        torch_pjrt.jax_op(fresh("donate_bad"), f, donate_argnums=(-1,))


@pytest.mark.once("shape inference runs no device work")
def test_meta_and_fake_tensors():
    from torch._subclasses.fake_tensor import FakeTensorMode

    def f(x, w):
        return (x @ w).astype(jnp.bfloat16), jnp.sum(x, axis=0)

    op = torch_pjrt.jax_op(fresh("shapes"), f)
    a, b = op(torch.empty(3, 5, device="meta"), torch.empty(5, 2, device="meta"))
    assert (a.shape, a.dtype, a.device.type) == ((3, 2), torch.bfloat16, "meta")
    assert (b.shape, b.dtype) == ((5,), torch.float32)
    with FakeTensorMode():
        a, b = op(torch.empty(7, 4, device=TPU), torch.empty(4, 6, device=TPU))
        assert (a.shape, a.dtype, a.device.type) == ((7, 6), torch.bfloat16, "tpu")
        assert b.shape == (4,)


@pytest.mark.once("runs JAX on the host only")
def test_cpu_tensors_run_through_jax_on_the_host():
    op = torch_pjrt.jax_op(fresh("mlp_host"), mlp)
    x, w = torch.randn(5, 4), torch.randn(4, 4)
    got = op(x, w)
    assert got.device.type == "cpu" and got.dtype == torch.float32 and got.shape == (5, 4)
    torch.testing.assert_close(got, mlp_by_numpy(x, w), atol=1e-5, rtol=1e-5)


def test_bad_calls_are_clear_errors():
    op = torch_pjrt.jax_op(fresh("bad"), mlp)
    x = torch.randn(2, 3, device=TPU)
    with pytest.raises(TypeError, match="pass tensors only"):
        op(x, 3.0)
    with pytest.raises(TypeError):  # jax's own shape error, from tracing
        op(x, torch.randn(4, 4, device=TPU))
    with pytest.raises(ValueError, match="already exists"):
        torch_pjrt.jax_op(op.name, mlp)
    with pytest.raises(TypeError, match="callable"):
        torch_pjrt.jax_op(fresh("notfn"), 3)
    with pytest.raises(RuntimeError, match="tpu tensor"):
        torch_pjrt._C._foreign_call(op._export(op._key([x, x.T])).digest, [x.cpu(), x.T.cpu()])


def test_text_the_plugin_rejects_is_a_python_error():
    # What a jaxlib newer than the plugin would produce: an op the plugin's
    # StableHLO does not know. The failure is an exception, never a crash.
    text = """module @m {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = stablehlo.frobnicate %arg0 : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}"""
    digest, ins, outs = torch_pjrt._C._foreign_add(text)
    assert ins == [([3], "f32")] and outs == [([3], "f32")]
    with pytest.raises(RuntimeError, match="frobnicate|jax_op"):
        (y,) = torch_pjrt._C._foreign_call(digest, [torch.randn(3, device=TPU)])
        y.cpu()
    # The device keeps working.
    assert (torch.ones(2, device=TPU) * 2).sum().item() == 4
    with pytest.raises(RuntimeError, match="start with 'module'"):
        torch_pjrt._C._foreign_add("func.func @main() { }")


def _python(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.once("imports in a fresh process")
def test_import_never_loads_jax_and_missing_jax_is_a_clear_error():
    r = _python("import sys, torch_pjrt; assert 'jax' not in sys.modules, 'jax imported'; print('ok')")
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
    r = _python(
        "import sys\n"
        "sys.modules['jax'] = None\n"
        "import torch_pjrt\n"
        "try:\n"
        "    torch_pjrt.jax_op('f', lambda x: x)\n"
        "except ImportError as e:\n"
        "    print('error:', e)\n"
    )
    assert r.returncode == 0, r.stderr
    assert "error:" in r.stdout and "pip install jax" in r.stdout, r.stdout


CACHED = r"""
import torch, torch_pjrt, jax.numpy as jnp
def f(x, w):
    return jnp.tanh(x @ w) * 2 + jnp.sin(x).sum(-1, keepdims=True)
op = torch_pjrt.jax_op("cached", f)
x, w = torch.randn(5, 4), torch.randn(4, 4)
got = op(x.to("tpu"), w.to("tpu")).cpu()
assert torch.allclose(got, torch.tanh(x @ w) * 2 + torch.sin(x).sum(-1, keepdim=True), atol=1e-5), "wrong result"
s = torch_pjrt.cache_stats()
print("STATS", s["misses"], s["disk_hits"])
"""


@pytest.mark.once("the disk cache's files and processes do not depend on the eager mode")
def test_second_process_compiles_nothing(tmp_path):
    # The node's key is a digest of the function's text without locations:
    # the same function defined on other lines is the same program.
    def run(code):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), TORCH_PJRT_CACHE_DIR=str(tmp_path),
                   TORCH_PJRT_EAGER_MODE="strict")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("STATS")][0]
        return [int(v) for v in line.split()[1:]]

    misses, disk_hits = run(CACHED)
    assert misses > 0 and disk_hits == 0
    misses, disk_hits = run("\n\n\n# moved\n" + CACHED)
    assert misses == 0 and disk_hits > 0
