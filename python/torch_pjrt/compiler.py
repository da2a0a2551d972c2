"""The `tpu` backend of torch.compile, and the splitter that runs a graph's
CPU-only and CPU-fallback parts between its device programs.

Dynamo captures a graph, AOTAutograd turns it into ATen forward / backward
graphs (functional, with input mutations kept as trailing copies), and each
ATen graph becomes one program of the engine: it is run once per input
signature through the ordinary tpu kernels on placeholder storages (types,
no data), the values it stores are planned and keyed as the fused eager
mode would key the same ops, and later calls only launch the cached
executable on the caller's buffers (see csrc/aten/compiled.cc). Before
that, the graph rewrites of fx_passes.py run on each ATen graph.
"""
import itertools
import logging
import re
import sys
import time
import warnings

import torch

from . import _C, _dot_layout, _env, fx_passes

log = logging.getLogger("torch_pjrt.compile")

_counter = itertools.count()
_noted = set()

# Graphs handed to the backend (forward, backward or inference), graphs
# split around work that runs outside a program, programs traced (one per
# graph or piece and input signature) and the seconds spent tracing them
# through the kernels and compiling (or loading) each program; attention
# calls that read grouped keys/values without their repeat.
stats = {"graphs": 0, "splits": 0, "programs": 0, "trace_seconds": 0.0, "xla_compile_seconds": 0.0,
         "kv_repeats_dropped": 0}

# Modes that only select inductor strategies (cudagraphs, autotuning): every
# tpu graph already runs as one cached XLA program, so they change nothing.
_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def _note_once(msg):
    if msg not in _noted:
        _noted.add(msg)
        warnings.warn(msg, stacklevel=3)


def _log_recompiles():
    return _env.flag("TORCH_PJRT_LOG_RECOMPILES")


def _describe(args):
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(f"{str(a.dtype).replace('torch.', '')}{list(a.shape)}@{a.device.type}")
        else:
            out.append(repr(a))
    return out


class _FallbackOp(RuntimeError):
    pass


_found_fallback = set()  # ops a trace found running through the CPU fallback


def _has_native_kernel(op):
    if op._opname in _found_fallback:
        return False
    name = op.name()
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    # Composite kernels run on any device through the ops they call (a
    # structured op's functional form calls its out= kernel, a *_copy op
    # its view). Where one of those has no tpu kernel, the trace meets the
    # fallback and the graph is split there (see _Program.__call__).
    return any(has(name, k) for k in ("PrivateUse1", "CompositeExplicitAutograd", "CompositeImplicitAutograd",
                                      "CompositeExplicitAutogradNonFunctional"))


def _fallback_nodes(gm):
    """Nodes of an ATen graph that would run through the CPU fallback."""
    bad = []
    for n in gm.graph.nodes:
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload):
            if n.target.namespace in ("aten", "prims") and not _has_native_kernel(n.target):
                bad.append(n)
    return bad


def _op_name(node):
    t = node.target
    return f"{t.namespace}::{t._opname}" + (f".{t._overloadname}" if t._overloadname != "default" else "")


class _Program:
    """One ATen graph: a native runner keyed by input signature, traced on
    first use of each signature."""

    _boxed_call = True

    def __init__(self, gm, name, fullgraph=False):
        self.gm = gm
        self.name = name
        self.fullgraph = fullgraph
        self.native = _C.CompiledGraph(name)
        self.last = None
        self.split = None
        self._boxed_call = True

    def __call__(self, *args):
        args = _unbox(args)
        if self.split is not None:
            return self.split(args)
        out = self.native.call(args)
        if out is None:
            try:
                out = self._trace(args)
            except RuntimeError as e:
                # An op the graph scan took for native ran through the CPU
                # fallback: split the graph there from now on.
                m = re.search(r"tpu: (\w+)(\.\w+)? has no native tpu kernel", str(e))
                if not m or self.fullgraph:
                    raise
                _found_fallback.add(m.group(1))
                place = _classify(self.gm)
                if not any(k == "eager" for k in place.values()):
                    raise
                self.split = _split(self.gm, place, self.name)
                return self.split(args)
        return out

    def _trace(self, args):
        desc = _describe(args)
        if self.last is not None and (_log_recompiles() or self.native.programs):
            diff = [f"arg {i}: {a} -> {b}" for i, (a, b) in enumerate(zip(self.last, desc)) if a != b]
            print(f"torch_pjrt: compiled graph '{self.name}' gets a program for new inputs "
                  f"({'; '.join(diff[:6]) or 'same shapes, new layout or storage'})", file=sys.stderr)
        self.last = desc
        t0, c0 = time.perf_counter(), _C._cache_stats()["compile_seconds"]
        out = None
        # A second trace happens when an input first passed by value (a
        # view) turns out to be written or returned by the graph.
        for _ in range(len(args) + 1):
            placeholders = self.native.begin(args)
            try:
                with torch.no_grad():
                    outs = self.gm(*placeholders)
            except BaseException:
                self.native.abort()
                raise
            if not isinstance(outs, (list, tuple)):
                outs = (outs,)
            out = self.native.finish(args, list(outs))
            if out is not None:
                break
        stats["programs"] += 1
        stats["trace_seconds"] += time.perf_counter() - t0
        stats["xla_compile_seconds"] += _C._cache_stats()["compile_seconds"] - c0
        return out


def _unbox(args):
    """Boxed (one list, which AOTAutograd may empty) or plain arguments, as a list."""
    return args[0] if len(args) == 1 and isinstance(args[0], list) else list(args)


def _eager(gm):
    def run(*args):
        return gm(*_unbox(args))
    run._boxed_call = True
    return run


def _on_tpu(node):
    v = node.meta.get("val") if hasattr(node, "meta") else None
    vals = v if isinstance(v, (list, tuple)) else [v]
    return any(isinstance(x, torch.Tensor) and x.device.type == "tpu" for x in vals)


def _is_tensor(node):
    v = node.meta.get("val")
    vals = v if isinstance(v, (list, tuple)) else [v]
    return any(isinstance(x, torch.Tensor) for x in vals)


def _reads_device_data(node):
    """.item() and ops whose output shape depends on data (fullgraph=True
    captures them): the host must wait for the device there."""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    if node.target is torch.ops.aten._local_scalar_dense.default:
        return True
    v = node.meta.get("val")
    try:
        return bool(free_unbacked_symbols(v))
    except Exception:  # noqa: BLE001  (not a value symbols can be read from)
        return False


def _classify(gm):
    """Each call_function node's place: 'device' (in a tpu program), 'host'
    (CPU-only work such as an optimizer's step count, run by PyTorch at each
    call), 'eager' (a CPU-fallback op or a device-to-host read, run by
    PyTorch between programs), or 'host_last' (a write into a CPU input,
    run after everything read its old value)."""
    place, device_valued = {}, set()
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "get_attr"):
            if _on_tpu(n):
                device_valued.add(n)
            continue
        if n.op != "call_function":
            continue
        from_device = any(i in device_valued for i in n.all_input_nodes)
        fallback = isinstance(n.target, torch._ops.OpOverload) and n.target.namespace in ("aten", "prims") \
            and not _has_native_kernel(n.target) and (from_device or _on_tpu(n))
        if fallback or (from_device and _reads_device_data(n)):
            place[n] = "eager"
        elif _on_tpu(n) or (from_device and not _is_tensor(n)):
            place[n] = "device"
        elif from_device:
            place[n] = "eager"  # a tensor read back to the host
        elif n.target is torch.ops.aten.copy_.default and n.args[0].op == "placeholder":
            place[n] = "host_last"
        else:
            place[n] = "host"
        if place[n] in ("device", "eager") and (_on_tpu(n) or from_device):
            device_valued.add(n)
    return place


def _split(gm, place, name):
    """Compiles the device stretches of a graph as programs; PyTorch runs
    the rest between them."""
    from torch.fx.passes.split_module import split_module

    stats["splits"] += 1
    ids, part, last, device_parts = {}, 0, None, set()
    for n in gm.graph.nodes:
        if n not in place:
            continue
        kind = place[n]
        if kind == "host":
            ids[n] = 0
            continue
        if kind == "host_last":
            continue
        if kind != last or kind == "eager":
            part += 1
        ids[n] = part
        last = kind
        if kind == "device":
            device_parts.add(part)
    for n, kind in place.items():
        if kind == "host_last":
            ids[n] = part + 1
    split = split_module(gm, None, lambda n: ids[n], keep_original_order=True)
    for child_name, child in list(split.named_children()):
        if child_name != f"submod_{child_name.rsplit('_', 1)[-1]}" or \
                int(child_name.rsplit("_", 1)[-1]) not in device_parts:
            continue
        ret = child.graph.output_node().args[0]
        multi = isinstance(ret, (tuple, list))
        if not multi:
            # The runner returns a list: make the graph return one too.
            child.graph.output_node().args = ((ret,),)
            child.recompile()
        setattr(split, child_name, _Piece(_Program(child, f"{name}.{child_name}"), multi))
    return _eager(split)


class _Piece(torch.nn.Module):
    """A compiled piece of a split graph, called like the submodule it replaces."""

    def __init__(self, program, multi):
        super().__init__()
        self.program = program
        self.multi = multi

    def forward(self, *a):
        out = self.program(list(a))
        return out[0] if len(out) == 1 and not self.multi else tuple(out)


def _with_weight_copies(program, copies):
    def run(*args):
        args = _unbox(args)
        return program(args + [make(args[i]) for i, make in copies])
    run._boxed_call = True
    return run


def _graph_compiler(kind, fullgraph):
    def compile_graph(gm, example_inputs):
        name = f"{kind}{next(_counter)}"
        devices = {a.device.type for a in example_inputs if isinstance(a, torch.Tensor)}
        if "tpu" not in devices:
            return _eager(gm)  # nothing on the device: PyTorch runs it as written
        stats["kv_repeats_dropped"] += fx_passes.sdpa_reads_kv_heads(gm)
        if kind == "inference" and _dot_layout.applies():
            positions = fx_passes.weights_in_dot_layout(gm)
            if positions:
                return _with_weight_copies(compile_graph_as_is(gm, name), positions)
        return compile_graph_as_is(gm, name)

    def compile_graph_as_is(gm, name):
        stats["graphs"] += 1
        place = _classify(gm)
        bad = sorted({_op_name(n) for n, k in place.items()
                      if k == "eager" and isinstance(n.target, torch._ops.OpOverload)})
        if bad and fullgraph:
            raise _FallbackOp(
                f"torch.compile(backend='tpu', fullgraph=True): {', '.join(bad)} cannot run inside a tpu "
                "program (no native tpu kernel: it runs through the CPU fallback, or it reads device data "
                "on the host); drop fullgraph=True to split the graph there")
        if any(k != "device" for k in place.values()):
            if bad:
                log.info("tpu compile: %s runs outside the compiled programs", ", ".join(bad))
            return _split(gm, place, name)
        return _Program(gm, name, fullgraph)
    return compile_graph


def _is_fullgraph():
    try:
        from torch._dynamo.symbolic_convert import InstructionTranslator
        tx = InstructionTranslator.current_tx()
        return bool(getattr(tx, "one_graph", False))
    except Exception:  # noqa: BLE001  (no translator: not called from Dynamo)
        return False


def tpu_backend(gm, example_inputs, mode=None, options=None):
    """Dynamo backend: `torch.compile(model, backend="tpu")`."""
    from torch._dynamo.backends.common import aot_autograd

    if mode not in (None,) + _MODES:
        raise ValueError(f"torch.compile(backend='tpu'): unknown mode {mode!r} (expected one of {_MODES})")
    if mode not in (None, "default"):
        _note_once(f"torch.compile(backend='tpu'): mode={mode!r} has no effect on the tpu backend: "
                   "every graph already runs as one cached XLA program")
    if options:
        raise ValueError(f"torch.compile(backend='tpu') takes no options (got {sorted(options)}); "
                         "they are inductor settings")
    fullgraph = _is_fullgraph()
    return aot_autograd(
        fw_compiler=_graph_compiler("forward", fullgraph),
        bw_compiler=_graph_compiler("backward", fullgraph),
        inference_compiler=_graph_compiler("inference", fullgraph),
        keep_inference_input_mutations=True,
    )(gm, example_inputs)
