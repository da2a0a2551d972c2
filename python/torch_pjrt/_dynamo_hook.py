"""Wires the tpu device into torch.compile when its parts are first imported
(Dynamo and inductor are slow to import, so `import torch` must not pull
them in):

- Dynamo's backend registry learns `backend="tpu"`. The backend is also
  declared through the `torch_dynamo_backends` entry point, which Dynamo
  reads on its first backend lookup; registering here as well covers a
  source tree on PYTHONPATH (no installed metadata).
- inductor's device registry gets code generators for "tpu" that raise a
  clear error (inductor would otherwise pick its Pallas generator, which
  targets another TPU stack and fails with `No module named 'jax'`).
- Fake tensors learn that `aten._grouped_mm` on tpu takes float32 and
  float16 as well as bfloat16 (torch's meta function admits bfloat16 only,
  what CUDA's kernel takes), so a float32 MoE model traced with
  transformers' grouped_mm experts compiles as it runs eagerly.
"""
import importlib.metadata

from ._on_import import when_imported

# Loaded by Dynamo on first use, like an installed entry point.
_ENTRY = importlib.metadata.EntryPoint(name="tpu", value="torch_pjrt.compiler:tpu_backend",
                                       group="torch_dynamo_backends")


def _dynamo_registry(registry):
    registry._BACKENDS.setdefault("tpu", _ENTRY)


def _inductor_codegen(common):
    from .device_module import _NoInductorCodegen
    if common.get_scheduling_for_device("tpu") is None:
        common.register_backend_for_device("tpu", _NoInductorCodegen, _NoInductorCodegen,
                                           _NoInductorCodegen, _NoInductorCodegen)


def _grouped_mm_fake(fake_impls):
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


when_imported("torch._dynamo.backends.registry", _dynamo_registry)
when_imported("torch._subclasses.fake_impls", _grouped_mm_fake)
when_imported("torch._inductor.codegen.common", _inductor_codegen)
