"""Wires the tpu device into torch.compile when its parts are first imported
(Dynamo and inductor are slow to import, so `import torch` must not pull
them in):

- Dynamo's backend registry learns `backend="tpu"`. The backend is also
  declared through the `torch_dynamo_backends` entry point, which Dynamo
  reads on its first backend lookup; registering here as well covers a
  source tree on PYTHONPATH (no installed metadata).
- torch.compile's default backend sends graphs on tpu to backend="tpu"
  (_default_backend), and inductor's device registry gets code generators
  for "tpu" that raise a clear error where inductor is reached another way
  (it would otherwise pick its Pallas generator, which targets another TPU
  stack and fails with `No module named 'jax'`). The device module
  (torch.tpu) names the same generators, where inductor's backend
  registration looks for a device's own.
- Fake tensors learn that `aten._grouped_mm` on tpu takes float32 and
  float16 as well as bfloat16 (torch's meta function admits bfloat16 only,
  what CUDA's kernel takes), so a float32 MoE model traced with
  transformers' grouped_mm experts compiles as it runs eagerly.
"""
import importlib.metadata

from ._on_import import TORCH_RELEASES, when_imported

_NO_INDUCTOR = ("torch.compile's default backend (inductor) cannot generate code for the tpu device; "
                "use torch.compile(model, backend=\"tpu\"), which runs each captured graph on the tpu as one program")


class _NoInductorMeta(type):
    def __getattr__(cls, name):
        raise RuntimeError(_NO_INDUCTOR)


class _NoInductorCodegen(metaclass=_NoInductorMeta):
    """torch.compile's default backend, inductor, looks up each device's code
    generators (Scheduling, PythonWrapperCodegen, ...). It has none for the
    tpu: fail at once with the way out, not deep inside inductor."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(_NO_INDUCTOR)


# Loaded by Dynamo on first use, like an installed entry point.
_ENTRY = importlib.metadata.EntryPoint(name="tpu", value="torch_pjrt.compiler:tpu_backend",
                                       group="torch_dynamo_backends")


def _dynamo_registry(registry):
    """backend="tpu" in Dynamo's registry where no installed metadata declares it."""
    registry._BACKENDS.setdefault("tpu", _ENTRY)


def _inductor_codegen(common):
    """inductor's code generators for "tpu": a clear error, not its Pallas path."""
    if common.get_scheduling_for_device("tpu") is None:
        common.register_backend_for_device("tpu", _NoInductorCodegen, _NoInductorCodegen,
                                           _NoInductorCodegen, _NoInductorCodegen)


def _grouped_mm_fake(fake_impls):
    """Fake aten._grouped_mm on tpu takes float32 and float16 too."""
    import torch
    grouped_mm = torch.ops.aten._grouped_mm.default

    def wider_dtypes(fake_mode, func, mat_a, mat_b, offs=None, bias=None, out_dtype=None):
        if mat_a.device.type != "tpu" or mat_a.dtype not in (torch.float32, torch.float16):
            return NotImplemented  # torch's own meta function decides
        # torch's checks of shapes, offsets and bias, run on bfloat16
        # stand-ins; the result takes the inputs' dtype.
        def stand_in(t):
            return None if t is None else torch.empty_strided(
                t.shape, t.stride(), dtype=torch.bfloat16 if t.dtype == mat_a.dtype else t.dtype, device="meta")
        with fake_impls.in_kernel_invocation_manager(fake_mode):
            r = func(stand_in(mat_a), stand_in(mat_b), stand_in(offs), stand_in(bias), None)
            r = torch.empty_strided(r.shape, r.stride(), dtype=out_dtype or mat_a.dtype, device="meta")
        return fake_mode.fake_tensor_converter.from_meta_and_device(fake_mode, r, mat_a.device)

    fake_impls.op_implementations_checks.append((lambda func: func is grouped_mm, wider_dtypes))


def _runs_on_tpu(gm, example_inputs):
    """Whether a Dynamo graph computes on tpu: an input, or a value the
    graph makes (a factory with device='tpu'), lives there."""
    import torch

    def on_tpu(v):
        return isinstance(v, torch.Tensor) and v.device.type == "tpu"

    if any(on_tpu(x) for x in example_inputs):
        return True
    graph = getattr(gm, "graph", None)
    return graph is not None and any(on_tpu(n.meta.get("val")) for n in graph.nodes)


def _default_backend(compile_fx_module):
    """torch.compile's default backend (inductor, through compile_fx) on a
    graph whose tensors are on tpu runs it through backend="tpu", so code
    written for CUDA compiles unchanged; other graphs go to inductor as
    before. inductor's options and modes are its own and have no effect here
    (every graph already runs as one cached program)."""
    import functools

    inductor = compile_fx_module.compile_fx
    if getattr(inductor, "_torch_pjrt", False):
        return

    @functools.wraps(inductor)
    def compile_fx(model_, example_inputs_, *args, **kwargs):
        if not _runs_on_tpu(model_, example_inputs_):
            return inductor(model_, example_inputs_, *args, **kwargs)
        from .compiler import _note_once, tpu_backend
        if kwargs.get("config_patches"):
            _note_once("torch.compile on tpu: inductor's mode and options have no effect; the graph runs through "
                       "backend='tpu' as one cached XLA program")
        return tpu_backend(model_, example_inputs_)

    compile_fx._torch_pjrt = True
    compile_fx_module.compile_fx = compile_fx


when_imported("torch._dynamo.backends.registry", _dynamo_registry, TORCH_RELEASES)
when_imported("torch._subclasses.fake_impls", _grouped_mm_fake, TORCH_RELEASES)
when_imported("torch._inductor.codegen.common", _inductor_codegen, TORCH_RELEASES)
when_imported("torch._inductor.compile_fx", _default_backend, TORCH_RELEASES)
