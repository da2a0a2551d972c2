"""Runs an action on a module the first time it is imported, or at once if
it already is: how torch_pjrt wires itself into packages that are slow to
import (Dynamo, inductor) or imported after it (accelerate), without
importing them itself."""
import importlib.abc
import importlib.util
import sys

_pending = {}  # module name -> actions to run once it has executed


class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        actions = _pending.pop(name, None)  # popped: the lookup below must not come back here
        if actions is None:
            return None
        if not _pending:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_act(module):
            exec_module(module)
            for action in actions:
                action(module)

        spec.loader.exec_module = exec_and_act
        return spec


_hook = _Hook()


def when_imported(name, action):
    if name in sys.modules:
        action(sys.modules[name])
        return
    _pending.setdefault(name, []).append(action)
    if _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)
