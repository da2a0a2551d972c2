"""The Python package's shape, read from its source with `ast` (nothing is
imported): its modules import each other without circles, and the
developer tools stay out of what `import torch_pjrt` loads."""
import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.once("reads the package's source; no device work")

ROOT = Path(__file__).resolve().parents[2] / "python" / "torch_pjrt"
# Modules that are not Python source: the native extension, and what the
# build writes (nothing they import comes back into the package).
NATIVE = {"torch_pjrt._C", "torch_pjrt._build_info"}


def _modules():
    """{dotted name: (path, is a package)} of every .py file in the package."""
    mods = {}
    for f in ROOT.rglob("*.py"):
        parts = list(f.relative_to(ROOT.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (f, is_pkg)
    return mods


MODULES = _modules()


def _imports(name, module_level_only):
    """The package's modules `name` imports: at module level only, or
    anywhere (inside functions too)."""
    path, is_pkg = MODULES[name]
    pkg = name if is_pkg else name.rsplit(".", 1)[0]
    found = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if module_level_only and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = pkg.split(".")[:len(pkg.split(".")) - (child.level - 1)]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                for a in child.names:
                    # `from package import submodule` imports the submodule
                    sub = f"{mod}.{a.name}"
                    if sub not in NATIVE:
                        found.add(sub if sub in MODULES else mod)
            visit(child)

    visit(ast.parse(path.read_text()))
    return {m for m in found if m in MODULES and m != name}


def _cycles(graph):
    cycles, done, stack = [], set(), []

    def walk(m):
        if m in stack:
            cycles.append(stack[stack.index(m):] + [m])
            return
        if m in done:
            return
        stack.append(m)
        for n in sorted(graph[m]):
            walk(n)
        stack.pop()
        done.add(m)

    for m in sorted(graph):
        walk(m)
    return cycles


def test_the_module_list_is_read():
    assert {"torch_pjrt", "torch_pjrt.compiler", "torch_pjrt.device_module", "torch_pjrt.streams"} <= set(MODULES)
    assert "torch_pjrt._devices" in _imports("torch_pjrt.streams", module_level_only=True)


@pytest.mark.parametrize("module_level_only", [True, False], ids=["module_level", "anywhere"])
def test_no_import_circles(module_level_only):
    # A circle at module level breaks whichever side is imported first; one
    # through a function's deferred import still ties the two modules into
    # one, which the package's layout avoids too.
    graph = {m: _imports(m, module_level_only) for m in MODULES}
    assert not _cycles(graph), _cycles(graph)


def test_developer_tools_are_not_loaded_by_the_package():
    # tools/ (the benchmarks and the conformance runner, which need
    # torch.testing._internal and models) is reached only from the command
    # line (__main__.py), never by `import torch_pjrt`.
    for name in MODULES:
        if name.startswith("torch_pjrt.tools") or name == "torch_pjrt.__main__":
            continue
        tools = {m for m in _imports(name, module_level_only=False) if m.startswith("torch_pjrt.tools")}
        assert not tools, f"{name} imports {sorted(tools)}"
        assert "torch.testing._internal" not in MODULES[name][0].read_text(), name
