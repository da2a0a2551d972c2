"""Runs an action on a module the first time it is imported, or at once if
it already is: how torch_pjrt wires itself into packages that are slow to
import (Dynamo, inductor) or imported after it (accelerate), without
importing them itself."""
import importlib.abc
import importlib.util
import sys

_pending = {}  # module name -> actions to run once it has executed


class _Hook(importlib.abc.MetaPathFinder):
    def __init__(self):
        self._resolving = set()  # names being looked up by the finders below us

    def find_spec(self, name, path, target=None):
        if name not in _pending or name in self._resolving:
            return None
        self._resolving.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._resolving.discard(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        # The actions run when the module executes, not when it is found: a
        # lookup alone (importlib.util.find_spec, as availability checks
        # do) leaves them for the import that follows.
        def exec_and_act(module):
            exec_module(module)
            for action in _pending.pop(name, ()):
                action(module)
            if not _pending and self in sys.meta_path:
                sys.meta_path.remove(self)

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
