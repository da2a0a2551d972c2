"""Finding a PJRT plugin. Plugins are pip packages, never part of torch_pjrt:
  cpu  -> xla-cpu-pjrt      (XLA:CPU, the default where no TPU is found)
  tpu  -> libtpu            (TPU VMs)
  cuda -> jax-cuda13-pjrt / xla-cuda13-pjrt (XLA:GPU on NVIDIA)
(the extras torch_pjrt[tpu] and torch_pjrt[cuda] install them)
or TORCH_PJRT_PLUGIN=/path/to/plugin.so."""
import collections
import glob
import importlib
import os

from . import _env

INSTALL_HINT = {
    "cpu": "install it with `pip install xla-cpu-pjrt`",
    "tpu": "install it with `pip install torch_pjrt[tpu]` (libtpu, on a TPU VM)",
    "cuda": "install it with `pip install torch_pjrt[cuda]` (jax-cuda13-pjrt, on an NVIDIA GPU machine)",
}


def _module_dir(name):
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _first(paths):
    for p in paths:
        if p and os.path.exists(p):
            return p
    return ""


def _cpu_path():
    d = _module_dir("xla_plugins.xla_cpu_pjrt")
    if d is None:
        d = _module_dir("jax_plugins.xla_cpu_pjrt")
    return _first([os.path.join(d, "xla_cpu_pjrt.so")] if d else [])


def _tpu_path():
    d = _module_dir("libtpu")
    return _first([os.path.join(d, "libtpu.so")] if d else [])


def _cuda_path():
    # jax-cuda13-pjrt (and -cuda12-) lay the plugin out as
    # jax_plugins/xla_cuda13/xla_cuda_plugin.so; xla-cuda13-pjrt as
    # xla-cpu-pjrt does, xla_plugins/xla_cuda13_pjrt/<name>.so. The named file
    # first, then any shared object in the package's folder.
    cands = []
    for mod in ("jax_plugins.xla_cuda13", "xla_plugins.xla_cuda13_pjrt", "jax_plugins.xla_cuda12"):
        d = _module_dir(mod)
        if d:
            named = [os.path.join(d, n) for n in ("xla_cuda_plugin.so", "xla_cuda13_pjrt.so")]
            cands += named + sorted(set(glob.glob(os.path.join(d, "*.so"))) - set(named))
    return _first(cands)


def _has_tpu_chips():
    return bool(glob.glob("/dev/accel*") or glob.glob("/dev/vfio/[0-9]*"))


def _has_nvidia_gpus():
    return bool(glob.glob("/dev/nvidia[0-9]*"))


Choice = collections.namedtuple("Choice", "name path hint reason")
Choice.__doc__ = """The plugin in use: name (cpu, tpu, cuda, path), path ('' when not
installed), hint (how to install it), reason (why it was chosen)."""


def resolve(name=None):
    """Chooses the plugin: `name`, else TORCH_PJRT_PLUGIN, else the first of
    TPU (libtpu installed and chips present), GPU (an XLA:GPU plugin installed
    and an NVIDIA device present), XLA:CPU."""
    reason = f"asked for '{name}'" if name else ""
    if not name and _env.get("TORCH_PJRT_PLUGIN"):
        name = _env.get("TORCH_PJRT_PLUGIN")
        reason = f"TORCH_PJRT_PLUGIN={name}"
    if not name:
        if _tpu_path() and _has_tpu_chips():
            name, reason = "tpu", "libtpu is installed and TPU chips are present"
        elif _cuda_path() and _has_nvidia_gpus():
            name, reason = "cuda", "an XLA:GPU plugin is installed and NVIDIA GPUs are present"
        else:
            name, reason = "cpu", "the default: no TPU chips or NVIDIA GPUs with their plugin installed"
    finders = {"cpu": _cpu_path, "tpu": _tpu_path, "cuda": _cuda_path, "gpu": _cuda_path}
    if name in finders:
        key = "cuda" if name == "gpu" else name
        return Choice(key, finders[name](), INSTALL_HINT[key], reason)
    return Choice("path", name, f"no PJRT plugin at '{name}'", reason)
