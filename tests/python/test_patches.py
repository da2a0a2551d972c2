"""Every change torch_pjrt makes to another package (torch_pjrt._on_import's
PATCHES) applies to the installed versions, and when an upstream name it
relies on is gone, the other package keeps importing and working as its
authors wrote it, with one warning naming what was not wired."""
import importlib
import os
import subprocess
import sys
import tomllib

import pytest
import torch

from torch_pjrt import _on_import

pytestmark = pytest.mark.once("checks imports of other packages, not the pass's eager mode")

# For each patched module, an upstream name its patch reads: the tests
# remove it (as a release that renamed it would) before the patch runs.
BREAK = {
    "torch._dynamo.backends.registry": "_BACKENDS",
    "torch._subclasses.fake_impls": "op_implementations_checks",
    "torch._inductor.codegen.common": "get_scheduling_for_device",
    "torch._inductor.compile_fx": "compile_fx",
    "torch.amp.grad_scaler": "GradScaler.unscale_",
    "accelerate.state": "PartialState.set_device",
    "accelerate.utils.modeling": "logger",
    "transformers.integrations.moe": "ExpertsInterface",
    "kernels": "register_kernel_mapping",
}

# In a fresh process: the name goes right after its module executes (or at
# once, for a module `import torch` already loaded), then torch_pjrt loads
# and the module is imported; that import must work, with one warning.
CHILD = """
import importlib, importlib.abc, importlib.util, sys, warnings
NAME, ATTR = sys.argv[1:3]
OWNER, _, LAST = ATTR.rpartition(".")


def remove(module):
    delattr(eval(OWNER, vars(module)) if OWNER else module, LAST)


class Renamed(importlib.abc.MetaPathFinder):
    busy = False

    def find_spec(self, name, path, target=None):
        if name != NAME or self.busy:
            return None
        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            remove(module)

        spec.loader.exec_module = exec_module
        return spec


import torch
if NAME in sys.modules:
    remove(sys.modules[NAME])
else:
    sys.meta_path.insert(0, Renamed())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import torch_pjrt
    module = importlib.import_module(NAME)
ours = [str(w.message) for w in caught if "torch_pjrt could not adapt" in str(w.message)]
assert len(ours) == 1 and NAME in ours[0], ours
assert not hasattr(eval(OWNER, vars(module)) if OWNER else module, LAST)
print("WORKS")
"""


def test_every_patch_is_listed_here_and_applies_to_the_installed_versions():
    patched = {name for name, _, _ in _on_import.PATCHES}
    assert patched == set(BREAK), "a patch without a test that breaks its upstream name, or the reverse"
    for name in sorted(patched):
        try:
            importlib.import_module(name)
        except ImportError:
            pytest.fail(f"{name} is not installed: the suite needs every package torch_pjrt patches")
    assert not _on_import._failed, f"patches that did not apply to the installed versions: {_on_import._failed}"
    for name, action, written_for in _on_import.PATCHES:
        assert written_for and action.__doc__, f"{name}: a patch says what it does and which release it fits"
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    rows = {line.split("|")[1].strip(" `"): line for line in readme.splitlines() if line.startswith("| `")}
    for name, _, written_for in _on_import.PATCHES:
        assert f"`{written_for}`" in rows.get(name, ""), f"README's list of patches lacks {name} ({written_for})"


ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_each_patch_states_the_range_it_was_written_for_and_the_installed_release_is_in_it():
    from packaging.requirements import Requirement
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    hf = {Requirement(r).name: Requirement(r) for r in extras["hf"]}
    pinned = {Requirement(r).name: Requirement(r) for r in extras["test"]}
    for name, action, written_for in _on_import.PATCHES:
        req = Requirement(written_for)
        version = _on_import.installed(written_for)
        assert version is not None and req.specifier.contains(version), (
            f"{name} ({action.__qualname__}) was written for {written_for}; installed: {version}")
        if req.name == "torch":
            continue  # torch's range is the wheel's own requirement (setup.py)
        assert hf.get(req.name) == req, f"pyproject's hf extra states {hf.get(req.name)}, the patch {written_for}"
        assert req.name in pinned and pinned[req.name].specifier.contains(version), (
            f"the test extra must pin {req.name} inside {written_for}")


def test_accelerate_finds_tpu_by_itself():
    """The device reaches accelerate through torch.accelerator: its own
    default_device (not a patch) answers tpu."""
    from accelerate.state import PartialState
    from accelerate.utils.imports import get_torch_accelerator_backend
    assert get_torch_accelerator_backend()[0] == "tpu"
    prop = PartialState.__dict__["default_device"]
    assert prop.fget.__module__ == "accelerate.state"
    assert prop.fget(PartialState.__new__(PartialState)) == torch.device("tpu")


def test_a_failed_patch_names_its_range_and_the_installed_release():
    def breaks(module):
        """A patch whose upstream changed."""
        raise AttributeError("renamed upstream")

    with pytest.warns(RuntimeWarning, match=r"written for accelerate>=0\.1,<0\.2; installed: 1\."):
        _on_import.run_guarded("accelerate", breaks, importlib.import_module("accelerate"), "accelerate>=0.1,<0.2")
    _on_import._failed.clear()


@pytest.mark.parametrize("name", sorted(BREAK))
def test_a_renamed_upstream_name_leaves_the_package_importing(name):
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")  # torch_pjrt loads after the name is gone
    r = subprocess.run([sys.executable, "-c", CHILD, name, BREAK[name]], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0 and "WORKS" in r.stdout, r.stderr[-3000:]


def test_a_failing_patch_leaves_a_module_imported_later_intact(tmp_path, monkeypatch):
    (tmp_path / "upstream_for_the_guard_test.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    applied = []

    def breaks(module):
        """A patch whose upstream changed."""
        applied.append(module.VALUE)
        raise AttributeError("renamed upstream")

    _on_import.when_imported("upstream_for_the_guard_test", breaks, "upstream-for-the-guard-test>=1")
    try:
        with pytest.warns(RuntimeWarning, match="could not adapt upstream_for_the_guard_test"):
            import upstream_for_the_guard_test
        assert upstream_for_the_guard_test.VALUE == 42 and applied == [42]
    finally:
        _on_import.PATCHES[:] = [p for p in _on_import.PATCHES if p[0] != "upstream_for_the_guard_test"]
        _on_import._failed.clear()
        sys.modules.pop("upstream_for_the_guard_test", None)
