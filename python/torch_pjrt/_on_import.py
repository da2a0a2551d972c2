"""Runs an action on a module the first time it is imported, or at once if
it already is: how torch_pjrt wires itself into packages that are slow to
import (Dynamo, inductor) or imported after it (accelerate), without
importing them itself.

Every action is guarded: it runs inside the other package's import, so an
exception there (a name upstream renamed) would break that package in every
process that loaded torch_pjrt. A failed action instead leaves the module as
its authors wrote it and warns once, naming what was not wired. An action
that patches should therefore look everything up before it assigns
anything. `PATCHES` lists every place torch_pjrt changes another package."""
import importlib.abc
import importlib.metadata
import importlib.util
import re
import sys
import warnings

# The torch releases the patches of torch itself were written and tested for
# (the wheel's own requirement pins the one it was built against).
from ._torch_compat import TORCH_RELEASES  # noqa: F401  (re-exported)

# Every change torch_pjrt makes to another package, as registered:
# (module, action, the upstream releases it was written for, as a
# requirement such as "accelerate>=1.16,<1.17").
PATCHES = []

_failed = {}  # (module, action name) -> the requirement it was written for


def installed(requirement):
    """The installed version of the distribution a requirement names, or
    None."""
    name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def run_guarded(name, action, module, written_for):
    """Runs action(module); a failure warns once and changes nothing more."""
    try:
        action(module)
    except Exception as err:  # noqa: BLE001  (never break the other package)
        what = getattr(action, "__qualname__", repr(action))
        if (name, what) not in _failed:
            _failed[name, what] = written_for
            warnings.warn(
                f"torch_pjrt could not adapt {name} ({what}: {type(err).__name__}: {err}); {name} works as its "
                f"authors wrote it, without what torch_pjrt adds there. This was written for {written_for}; "
                f"installed: {installed(written_for) or 'unknown'}.",
                RuntimeWarning, stacklevel=2)

_pending = {}  # module name -> (action, written_for) to run once it has executed


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
            for action, written_for in _pending.pop(name, ()):
                run_guarded(name, action, module, written_for)
            if not _pending and self in sys.meta_path:
                sys.meta_path.remove(self)

        spec.loader.exec_module = exec_and_act
        return spec


_hook = _Hook()


def when_imported(name, action, written_for):
    """Runs action(module) once `name` has executed (at once if it has).
    written_for: the upstream releases the action was written for, as a
    requirement ("accelerate>=1.16,<1.17")."""
    PATCHES.append((name, action, written_for))
    if name in sys.modules:
        run_guarded(name, action, sys.modules[name], written_for)
        return
    _pending.setdefault(name, []).append((action, written_for))
    if _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)
