"""JAX (and Pallas) functions as torch custom ops on the tpu device.

``jax_op(name, fn)`` makes a torch.library custom op whose tpu kernel is
``fn``: for each input signature the function is exported once with
``jax.export`` for the plugin's platform, and its StableHLO is inlined into
our own programs (csrc/ops/foreign), so it runs in every eager mode, fuses
with the ops around it, and is recorded into ``torch.compile(backend="tpu")``
programs like any other kernel. Shapes for meta / fake tensors come from
``jax.eval_shape``; gradients from ``jax.vjp``, whose backward is exported
and run the same way.

JAX stays optional: nothing here imports it until a ``jax_op`` is made.

This module is public: ``torch_pjrt.jax_interop.jax_op`` and ``JaxOp``. The
package re-exports both, so ``torch_pjrt.jax_op(...)`` is the usual
spelling; the module has a name of its own because ``torch_pjrt.jax_op``
is the function.
"""

from __future__ import annotations

import contextlib
import importlib
import threading

import torch

from . import _C, _platform

__all__ = ["jax_op", "JaxOp"]

_INSTALL_HINT = "torch_pjrt.jax_op needs JAX: pip install jax"


def _jax():
    try:
        jax = importlib.import_module("jax")
        importlib.import_module("jax.export")
    except ImportError as e:  # also raised when sys.modules["jax"] is None
        raise ImportError(f"{_INSTALL_HINT} ({e})") from None
    return jax


# torch dtype <-> numpy / JAX dtype names. bfloat16 comes from ml_dtypes,
# which jax depends on.
_TORCH_TO_NAME = {
    torch.bool: "bool",
    torch.uint8: "uint8",
    torch.uint16: "uint16",
    torch.uint32: "uint32",
    torch.uint64: "uint64",
    torch.int8: "int8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float32: "float32",
    torch.float64: "float64",
    torch.complex64: "complex64",
    torch.complex128: "complex128",
}
_NAME_TO_TORCH = {v: k for k, v in _TORCH_TO_NAME.items()}
_WIDE = {torch.int64, torch.uint64, torch.float64, torch.complex128}


def _jax_dtype(dtype: torch.dtype):
    import jax.numpy as jnp

    name = _TORCH_TO_NAME.get(dtype)
    if name is None:
        raise TypeError(f"jax_op: tensors of dtype {dtype} have no JAX dtype")
    return jnp.dtype(name)


def _torch_dtype(jdtype) -> torch.dtype:
    name = str(jdtype)
    if name not in _NAME_TO_TORCH:
        raise TypeError(f"jax_op: the function returns a {name} array, which has no torch dtype")
    return _NAME_TO_TORCH[name]


def _x64(jax, wide: bool):
    # JAX computes in 32 bits unless x64 is enabled, and would narrow an
    # int64 / float64 input to 32 bits, so the exported signature would not
    # match the torch tensors it is called on (and int64 values past 2**31
    # would be lost). Signatures with a 64-bit input are therefore traced
    # with x64 on, keeping torch's dtypes; the others under the user's own
    # JAX configuration, so the function's defaults (jnp.zeros(n),
    # jnp.arange) are what they would be under plain JAX.
    return jax.enable_x64(True) if wide else contextlib.nullcontext()


class _Signature:
    """One export of the function: for one tuple of input shapes/dtypes."""

    def __init__(self, digest, template, out_avals):
        self.digest = digest
        self.template = template
        self.out_avals = out_avals  # [(shape, torch dtype)]


class JaxOp:
    """A JAX function as a torch op. Call it with tensors, as ``fn`` would be
    called with arrays; it returns what ``fn`` returns (a tensor, or a tuple /
    list / dict of them). ``.op`` is the underlying torch custom op, taking
    and returning lists of tensors."""

    def __init__(self, name: str, fn, donate_argnums=()):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"jax_op: name must be a Python identifier, got {name!r}")
        if not callable(fn):
            raise TypeError(f"jax_op: fn must be callable, got {type(fn).__name__}")
        self._jax = _jax()
        self.name = name
        self.fn = fn
        if isinstance(donate_argnums, int):
            donate_argnums = (donate_argnums,)
        self.donate_argnums = tuple(sorted(set(donate_argnums)))
        if any(not isinstance(i, int) or i < 0 for i in self.donate_argnums):
            raise ValueError(f"jax_op: donate_argnums must be argument positions, got {donate_argnums!r}")
        self._lock = threading.Lock()
        self._exports = {}  # signature key -> _Signature
        self._shapes = {}  # signature key -> (output template, out avals) from eval_shape
        self._templates = {}  # signature key -> output template
        self._backward = None
        self.op = self._define()

    # ---- the torch custom op

    def _define(self):
        qualname = f"torch_pjrt_jax::{self.name}"
        if qualname in _DEFINED:
            raise ValueError(f"jax_op: an op named {self.name!r} already exists; give each function its own name")
        op = torch.library.custom_op(
            qualname, self._host_kernel, mutates_args=(), schema="(Tensor[] args) -> Tensor[]"
        )
        op.register_kernel("tpu")(self._tpu_kernel)
        op.register_fake(self._fake_kernel)
        op.register_autograd(self._backward_fn, setup_context=self._setup_context)
        _DEFINED.add(qualname)
        return op

    def _key(self, args):
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                raise TypeError(
                    f"jax_op {self.name}: argument {i} is a {type(a).__name__}; pass tensors only "
                    "(bind other arguments with functools.partial)"
                )
        # int(): a symbolic size (torch.compile's dynamic shapes) is
        # specialised, as the tpu's compiled graphs are: an export is for
        # concrete shapes.
        return tuple((tuple(int(d) for d in a.shape), a.dtype) for a in args)

    def _specs(self, key):
        jax = self._jax
        return [jax.ShapeDtypeStruct(shape, _jax_dtype(dt)) for shape, dt in key]

    def _wide(self, key):
        return any(dt in _WIDE for _, dt in key)

    def _shape_of(self, key):
        """(output template, [(shape, torch dtype)]) of fn for a signature."""
        with self._lock:
            hit = self._shapes.get(key)
        if hit is not None:
            return hit
        jax = self._jax
        with _x64(jax, self._wide(key)):
            out = jax.eval_shape(self.fn, *self._specs(key))
        leaves, tree = jax.tree_util.tree_flatten(out)
        avals = [(tuple(leaf.shape), _torch_dtype(leaf.dtype)) for leaf in leaves]
        template = _plain(jax.tree_util.tree_unflatten(tree, list(range(len(leaves)))), self.name)
        with self._lock:
            self._shapes[key] = (template, avals)
        # Read lock-free by __call__, which torch.compile traces.
        self._templates[key] = template
        return template, avals

    def _export(self, key) -> _Signature:
        with self._lock:
            hit = self._exports.get(key)
        if hit is not None:
            return hit
        jax = self._jax
        from jax import export

        with _x64(jax, self._wide(key)):
            # keep_unused: jit would drop arguments the function ignores (a
            # backward often does), and the module must take every input.
            jitted = jax.jit(self.fn, keep_unused=True)
            exported = export.export(jitted, platforms=[_platform.jax_platform()])(*self._specs(key))
            text = exported.mlir_module()
        if exported.nr_devices != 1:
            raise ValueError(f"jax_op {self.name}: the function must run on one device (it uses {exported.nr_devices})")
        digest, ins, outs = _C._foreign_add(text)
        if len(ins) != len(key):
            # Effects (tokens) or shape polymorphism add arguments of their own.
            raise ValueError(
                f"jax_op {self.name}: the exported function takes {len(ins)} arguments for {len(key)} inputs "
                "(functions with side effects are not supported)"
            )
        template, avals = self._shape_of(key)
        sig = _Signature(digest, template, avals)
        with self._lock:
            self._exports[key] = sig
        return sig

    def _tpu_kernel(self, args):
        args = list(args)
        key = self._key(args)
        sig = self._export(key)
        outs = _C._foreign_call(sig.digest, args, [i for i in self.donate_argnums if i < len(args)])
        return list(outs)

    def _fake_kernel(self, args):
        key = self._key(args)
        _, avals = self._shape_of(key)
        device = args[0].device if args else torch.device("tpu")
        return [torch.empty(shape, dtype=dt, device=device) for shape, dt in avals]

    def _host_kernel(self, args):
        # On CPU tensors the function runs through JAX on the host, so the
        # op works (and can be compared) wherever its inputs live.
        import numpy as np

        for a in args:
            if a.device.type != "cpu":
                raise RuntimeError(f"jax_op {self.name}: no kernel for tensors on {a.device}")
        jax = self._jax
        key = self._key(list(args))
        self._shape_of(key)  # the output template __call__ reads
        with _x64(jax, self._wide(key)):
            arrays = [_to_numpy(a) for a in args]
            out = jax.jit(self.fn)(*arrays)
            leaves = jax.tree_util.tree_leaves(out)
            return [_from_numpy(np.asarray(leaf)) for leaf in leaves]

    # ---- autograd through jax.vjp

    def _setup_context(self, ctx, inputs, output):
        (args,) = inputs
        ctx.save_for_backward(*args)

    def _backward_fn(self, ctx, grads):
        primals = list(ctx.saved_tensors)
        key = self._key(primals)
        _, avals = self._shape_of(key)
        diff_in = [i for i, (_, dt) in enumerate(key) if dt.is_floating_point or dt.is_complex]
        diff_out = [i for i, (_, dt) in enumerate(avals) if dt.is_floating_point or dt.is_complex]
        cts = []
        for i in diff_out:
            g = grads[i]
            if g is None:
                shape, dt = avals[i]
                g = torch.zeros(shape, dtype=dt, device=primals[0].device)
            cts.append(g)
        if not diff_in:
            return ([None] * len(primals),)
        bwd = self._backward_op(tuple(diff_in), tuple(diff_out))
        got = bwd.op(primals + cts)
        result = [None] * len(primals)
        for i, g in zip(diff_in, got):
            result[i] = g
        return (result,)

    def _backward_op(self, diff_in, diff_out) -> "JaxOp":
        with self._lock:
            cache = self._backward = self._backward or {}
            hit = cache.get((diff_in, diff_out))
        if hit is not None:
            return hit
        jax = self._jax
        fn = self.fn

        def backward(*args):
            import jax.numpy as jnp
            import numpy as np

            n = len(args) - len(diff_out)
            primals, cts = list(args[:n]), args[n:]

            def on_diff(*xs):
                full = list(primals)
                for i, x in zip(diff_in, xs):
                    full[i] = x
                return fn(*full)

            out, vjp = jax.vjp(on_diff, *[primals[i] for i in diff_in])
            leaves, tree = jax.tree_util.tree_flatten(out)
            # Integer outputs take float0 cotangents (they have no gradient).
            ct_leaves = [np.zeros(leaf.shape, dtype=jax.dtypes.float0) for leaf in leaves]
            # torch's complex gradients are the conjugates of JAX's
            # cotangents (conj(x) is x for real values).
            for i, ct in zip(diff_out, cts):
                ct_leaves[i] = jnp.conj(ct)
            return [jnp.conj(g) for g in vjp(jax.tree_util.tree_unflatten(tree, ct_leaves))]

        suffix = "_".join(map(str, diff_in)) + "__" + "_".join(map(str, diff_out))
        op = JaxOp(f"{self.name}__vjp_{suffix}", backward)
        with self._lock:
            cache[(diff_in, diff_out)] = op
        return op

    # ---- calling

    def __call__(self, *args):
        # Plain Python around the op (no JAX, no locks) so torch.compile
        # traces it into one graph: every kernel of the op (tpu, fake, host)
        # has recorded the output template of this signature by the time
        # it returns.
        key = self._key(args)
        outs = self.op(list(args))
        return _rebuild(self._templates[key], outs)

    def __repr__(self):
        return f"JaxOp({self.name!r}, {getattr(self.fn, '__name__', self.fn)!r})"


# Ops made in this process (a name is defined once per process).
_DEFINED: set = set()


def _plain(template, name):
    """The output structure as plain Python containers of leaf indices."""
    if template is None or isinstance(template, int):
        return template
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*(_plain(v, name) for v in template))
    if isinstance(template, (tuple, list)):
        return type(template)(_plain(v, name) for v in template)
    if isinstance(template, dict):
        return {k: _plain(v, name) for k, v in template.items()}
    raise TypeError(
        f"jax_op {name}: the function returns a {type(template).__name__}; return arrays, or tuples, "
        "lists, dicts or named tuples of them"
    )


def _rebuild(template, outs):
    if template is None:
        return None
    if isinstance(template, int):
        return outs[template]
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*[_rebuild(v, outs) for v in template])
    if isinstance(template, tuple):
        return tuple(_rebuild(v, outs) for v in template)
    if isinstance(template, list):
        return [_rebuild(v, outs) for v in template]
    return {k: _rebuild(v, outs) for k, v in template.items()}


def _to_numpy(t: torch.Tensor):
    import ml_dtypes

    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def _from_numpy(a) -> torch.Tensor:
    import numpy as np

    if str(a.dtype) == "bfloat16":
        return torch.from_numpy(np.array(a).view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.array(a))  # a writable copy: JAX's arrays are read-only


def jax_op(name: str, fn, *, donate_argnums=()) -> JaxOp:
    """Makes ``fn`` (a JAX function of arrays) a torch op named
    ``torch_pjrt_jax::<name>``, run on tpu tensors as part of our programs.

    ``donate_argnums``: inputs the caller gives up, as with ``jax.jit``. On a
    tpu call each such tensor is emptied (it becomes a 0-element tensor,
    like a deleted JAX array), so when nothing else shares its storage the
    op's program consumes the buffer in place. Tensors that require grad
    are kept (autograd needs them), and torch.compile ignores donation.
    """
    return JaxOp(name, fn, donate_argnums)
