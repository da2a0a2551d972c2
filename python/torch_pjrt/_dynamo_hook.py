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


when_imported("torch._dynamo.backends.registry", _dynamo_registry)
when_imported("torch._inductor.codegen.common", _inductor_codegen)
