"""The package as installed: a load that fails in any way leaves `import
torch` working with one warning naming the cause, `torch.tpu.is_available()`
False and `import torch_pjrt` raising the same message; the diagnostic
command; an extension that carries no path of the machine that built it.

Each failure is made in a copy of the package in use (the installed wheel or
the source tree), put first on PYTHONPATH of a fresh process: torch's
autoload entry point then imports the copy."""
import json
import os
import shutil
import subprocess
import sys

import _torch_pjrt_autoload
import pytest
import torch

import torch_pjrt

pytestmark = pytest.mark.once("checks fresh processes' start, not the pass's eager mode")

PACKAGE_DIR = os.path.dirname(os.path.abspath(torch_pjrt.__file__))
WARNING = "RuntimeWarning: torch_pjrt could not load"

# What the child reports: torch's own CPU work, the stand-in torch.tpu, the
# message `import torch_pjrt` raises, and what torch.tpu's other names raise.
PROBE = """
import json, torch
out = {"cpu_sum": torch.ones(3).add(1).sum().item(), "available": torch.tpu.is_available(),
       "count": torch.tpu.device_count()}
try:
    import torch_pjrt
    out["import_error"] = None
except ImportError as e:
    out["import_error"] = str(e)
try:
    torch.tpu.synchronize()
except RuntimeError as e:
    out["use_error"] = str(e)
print(json.dumps(out))
"""


def package_copy(tmp_path):
    """A copy of the package in use and of its autoload module under tmp_path."""
    shutil.copytree(PACKAGE_DIR, tmp_path / "torch_pjrt", ignore=shutil.ignore_patterns("__pycache__", ".*.tmp"))
    shutil.copy2(_torch_pjrt_autoload.__file__, tmp_path)
    return tmp_path


def run(args, path=None, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_PJRT_")}
    e.update(env)
    if path is not None:
        e["PYTHONPATH"] = str(path)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=e, timeout=300, cwd=path)


def check_failed_load(r, *needles):
    """One warning naming the cause; torch works; the same message from
    `import torch_pjrt` and from torch.tpu; returns that message."""
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stderr.count(WARNING) == 1, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["cpu_sum"] == 6.0
    assert out["available"] is False and out["count"] == 0
    message = out["import_error"]
    assert message and message in r.stderr
    assert out["use_error"] == message
    for n in needles:
        assert n in message, message
    return message


def test_a_missing_subpackage_leaves_torch_working(tmp_path):
    d = package_copy(tmp_path)
    shutil.rmtree(d / "torch_pjrt" / "kernels")
    check_failed_load(run(["-c", PROBE], d), "incomplete", "torch_pjrt/kernels/__init__.py", "Reinstall")
    # The same when the program imports torch_pjrt before torch.
    first = "try:\n    import torch_pjrt\nexcept ImportError:\n    pass\n" + PROBE
    check_failed_load(run(["-c", first], d), "incomplete", "torch_pjrt/kernels/__init__.py")


def test_a_missing_extension_leaves_torch_working(tmp_path):
    d = package_copy(tmp_path)
    for so in (d / "torch_pjrt").glob("_C*.so"):
        so.unlink()
    check_failed_load(run(["-c", PROBE], d), "native extension", "not installed")


def test_an_extension_built_for_another_torch_is_named(tmp_path):
    d = package_copy(tmp_path)
    info = d / "torch_pjrt" / "_build_info.py"
    text = info.read_text()
    built = torch.__version__.split("+")[0]
    info.write_text(text.replace(f'torch_version = "{built}"', 'torch_version = "2.12.1"'))
    check_failed_load(run(["-c", PROBE], d), f"built for torch 2.12.1; this is {built}", "torch==2.12.*")


def test_an_extension_that_cannot_load_is_named(tmp_path):
    d = package_copy(tmp_path)
    for so in (d / "torch_pjrt").glob("_C*.so"):
        so.write_bytes(b"not an ELF file")
    check_failed_load(run(["-c", PROBE], d), "native extension could not be loaded")


def test_a_missing_plugin_names_how_to_install_it(tmp_path):
    if torch_pjrt._plugins.resolve("tpu").path:
        pytest.skip("libtpu is installed here")  # never in CI: the test needs a plugin that is absent
    m = check_failed_load(run(["-c", PROBE], tmp_path, TORCH_PJRT_PLUGIN="tpu"), "PJRT plugin", "torch_pjrt[tpu]")
    assert "TORCH_PJRT_PLUGIN=tpu" not in m  # the message says what is missing; info says why it was chosen
    check_failed_load(run(["-c", PROBE], tmp_path, TORCH_PJRT_PLUGIN="/nonexistent/plugin.so"),
                      "/nonexistent/plugin.so")


def test_a_library_that_is_not_a_plugin_is_refused(tmp_path):
    not_plugin = os.path.join(os.path.dirname(torch.__file__), "lib", "libc10.so")
    check_failed_load(run(["-c", PROBE], tmp_path, TORCH_PJRT_PLUGIN=not_plugin), "not a PJRT plugin", not_plugin)


def test_an_unusable_cache_dir_keeps_the_device_working(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    code = "import torch; x = torch.arange(4., device='tpu'); print((x * 2).sum().item())"
    r = run(["-c", code], tmp_path, TORCH_PJRT_CACHE_DIR=str(blocker))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "12.0"
    assert "disk cache disabled" in r.stderr and str(blocker) in r.stderr
    # A cache folder holding garbage where programs were: each is discarded.
    cache = tmp_path / "cache"
    r = run(["-c", code], tmp_path, TORCH_PJRT_CACHE_DIR=str(cache))
    assert r.returncode == 0, r.stderr
    entries = list(cache.rglob("*.exe"))
    assert entries
    for e in entries:
        e.write_bytes(os.urandom(64))
    r = run(["-c", code], tmp_path, TORCH_PJRT_CACHE_DIR=str(cache))
    assert r.returncode == 0 and r.stdout.strip() == "12.0", r.stderr
    assert "discarding corrupt compilation cache entry" in r.stderr


def test_info_reports_a_working_install(tmp_path):
    r = run(["-m", "torch_pjrt", "info", "--json"], tmp_path, TORCH_PJRT_CACHE_DIR=str(tmp_path / "c"))
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["loaded"] is True
    assert info["torch_pjrt"] == torch_pjrt.__version__
    assert info["torch"] == torch.__version__
    assert info["built_for_torch"] == torch.__version__.split("+")[0]
    assert info["package_dir"] == PACKAGE_DIR
    assert info["plugin"]["name"] == "cpu" and info["plugin"]["path"] == torch_pjrt.plugin_choice.path
    assert "default" in info["plugin"]["chosen_because"]
    assert info["plugin"]["pjrt_api_version"].startswith("0.")
    assert info["devices"] >= 1
    assert info["eager_mode"] in ("strict", "fused", "debug")
    assert info["compilation_cache"]["dir"].startswith(str(tmp_path / "c"))
    assert info["environment"]["TORCH_PJRT_CACHE_DIR"] == str(tmp_path / "c")
    text = run(["-m", "torch_pjrt", "info"], tmp_path)
    assert text.returncode == 0 and "status: loaded" in text.stdout and "plugin: cpu" in text.stdout


def test_info_reports_a_failed_load(tmp_path):
    d = package_copy(tmp_path)
    shutil.rmtree(d / "torch_pjrt" / "kernels")
    r = run(["-m", "torch_pjrt", "info"], d)
    assert r.returncode == 1, r.stderr
    assert "status: NOT LOADED" in r.stdout and "torch_pjrt/kernels/__init__.py" in r.stdout
    assert f"torch {torch.__version__}" in r.stdout and "plugin: cpu" in r.stdout


def test_the_plugin_choice_follows_the_environment():
    assert torch_pjrt._plugins.resolve("cpu").reason == "asked for 'cpu'"
    os.environ["TORCH_PJRT_PLUGIN"] = "cuda"
    try:
        c = torch_pjrt._plugins.resolve()
    finally:
        del os.environ["TORCH_PJRT_PLUGIN"]
    assert c.name == "cuda" and c.reason == "TORCH_PJRT_PLUGIN=cuda" and "torch_pjrt[cuda]" in c.hint
    assert torch_pjrt.runtime_info()["plugin_choice"] == torch_pjrt.plugin_choice.reason


@pytest.mark.parametrize("package,names", [
    ("jax_plugins/xla_cuda13", ["xla_cuda_plugin.so", "other.so"]),  # jax-cuda13-pjrt
    ("xla_plugins/xla_cuda13_pjrt", ["xla_cuda13_pjrt.so"]),  # xla-cuda13-pjrt
])
def test_the_cuda_plugin_is_found_in_its_package_layout(tmp_path, monkeypatch, package, names):
    d = tmp_path.joinpath(*package.split("/"))
    d.mkdir(parents=True)
    (d / "__init__.py").write_text("")
    for n in names:
        (d / n).write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path))
    # The namespace packages are looked up afresh on the new path.
    for mod in ("jax_plugins", "xla_plugins"):
        monkeypatch.delitem(sys.modules, mod, raising=False)
    assert torch_pjrt._plugins.resolve("cuda").path == str(d / names[0])


def test_the_build_record_lists_every_file_of_the_package():
    from torch_pjrt import _build_info

    found = sorted(os.path.relpath(os.path.join(root, n), PACKAGE_DIR).replace(os.sep, "/")
                   for root, _, names in os.walk(PACKAGE_DIR) for n in names
                   if n.endswith(".py") and n != "_build_info.py")
    assert sorted(_build_info.files) == found
    assert _build_info.torch_version == torch.__version__.split("+")[0]


def test_the_extension_names_no_folder_of_the_building_machine():
    so = next(p for p in os.listdir(PACKAGE_DIR) if p.startswith("_C.") and p.endswith(".so"))
    data = open(os.path.join(PACKAGE_DIR, so), "rb").read()
    assert b"$ORIGIN/../torch/lib" in data  # torch's libraries found beside the package, wherever it is
    for folder in {os.path.dirname(torch.__file__), sys.prefix, os.path.dirname(os.path.dirname(PACKAGE_DIR))}:
        assert folder.encode() not in data, f"the extension names {folder}"
