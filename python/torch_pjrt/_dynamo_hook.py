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
import importlib.abc
import importlib.metadata
import importlib.util
import sys

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


_ON_IMPORT = {
    "torch._dynamo.backends.registry": _dynamo_registry,
    "torch._inductor.codegen.common": _inductor_codegen,
}


class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in self.pending:
            return None
        action = _ON_IMPORT[name]
        self.pending.discard(name)  # the lookup below must not come back here
        if not self.pending:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            action(module)

        spec.loader.exec_module = exec_and_register
        return spec


_hook = _Hook()
_hook.pending = set()
for _name, _action in _ON_IMPORT.items():
    if _name in sys.modules:
        _action(sys.modules[_name])
    else:
        _hook.pending.add(_name)
if _hook.pending:
    sys.meta_path.insert(0, _hook)
