"""How torch_pjrt loads, and what a failed load leaves behind.

torch imports every installed device backend while `import torch` runs
(the `torch.backends` entry point) and turns any exception into a failure of
torch itself. A broken torch_pjrt install must never break PyTorch, so the
entry point is this module, outside the package: importing it cannot fail,
and `load()` catches what the package's import raises. A failed load then
leaves:
- `import torch` working, with one warning that says what failed and how to
  fix it;
- `torch.tpu.is_available()` False (a stand-in `torch.tpu` whose other
  attributes raise the same message);
- `import torch_pjrt` raising ImportError with that same message, every time
  (the first failure is kept: a second attempt would meet the half-done
  registrations of the first and report something else).
"""
import os
import sys
import types
import warnings

# The message of the failed load, once one failed; None otherwise.
error = None

_REINSTALL = "Reinstall torch_pjrt (`pip install --force-reinstall` with its wheel or source)"


class BuildMismatch(ImportError):
    """The installed package does not fit this environment (another torch, a
    missing file): raised before anything is registered."""


class PluginUnavailable(RuntimeError):
    """The PJRT plugin is not installed, or is not one this build can use."""


def load():
    """The `torch.backends` entry point: loads torch_pjrt, never raises."""
    try:
        import torch_pjrt  # noqa: F401
    except Exception as err:  # noqa: BLE001  (any failure must leave torch working)
        fail(err) if error is None else _stand_in()  # (a load tried before torch was imported made no stand-in)
        warnings.warn(error, RuntimeWarning, stacklevel=2)


def check_build(package_dir):
    """Compares the build record the extension was built with
    (_build_info.py, written by the build) with what is installed: the torch
    release and every file of the package. Raises BuildMismatch."""
    if not any(n.startswith("_C.") and n.endswith((".so", ".pyd")) for n in os.listdir(package_dir)):
        raise BuildMismatch(
            f"its native extension (torch_pjrt/_C*.so) is not installed in {package_dir}. "
            f"{_REINSTALL}; from a source checkout, run `bash scripts/build.sh`")
    try:
        from torch_pjrt import _build_info as info
    except ImportError:
        return  # an extension built before the record existed: nothing to compare
    missing = [f for f in info.files if not os.path.exists(os.path.join(package_dir, f))]
    if missing:
        shown = ", ".join("torch_pjrt/" + f for f in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise BuildMismatch(
            f"the installed package is incomplete: {len(missing)} of its files are missing ({shown}). {_REINSTALL}")
    import torch

    running = torch.__version__.split("+")[0]
    if running.split(".")[:2] != info.torch_version.split(".")[:2]:
        raise BuildMismatch(
            f"torch_pjrt was built for torch {info.torch_version}; this is {running}: reinstall torch_pjrt "
            f"for this torch (or install torch=={'.'.join(info.torch_version.split('.')[:2])}.*). "
            "Its extension calls torch's C++ functions, which change between releases")


def explain(err):
    """One message for a failed load: what failed and how to fix it."""
    text = str(err)
    if isinstance(err, BuildMismatch):
        cause = text
    elif isinstance(err, PluginUnavailable):
        cause = f"its PJRT plugin cannot be used: {text}"
    elif isinstance(err, ImportError) and (err.name == "torch_pjrt._C" or "/_C." in text or "undefined symbol" in text):
        cause = (f"its native extension could not be loaded ({text}). It was built for another torch or is "
                 "damaged: reinstall torch_pjrt for the installed torch")
    elif isinstance(err, ImportError):
        cause = f"a part of the package could not be imported ({type(err).__name__}: {text}). {_REINSTALL}"
    else:
        cause = f"{type(err).__name__}: {text}"
    return (f"torch_pjrt could not load, so the 'tpu' device is not available: {cause}. "
            "`python -m torch_pjrt info` reports the installation; TORCH_DEVICE_BACKEND_AUTOLOAD=0 "
            "stops torch from loading it.")


def fail(err):
    """Records a failed load and replaces torch.tpu with a stand-in that
    says so. Returns the message."""
    global error
    error = explain(err)
    _stand_in()
    return error


def _stand_in():
    """torch.tpu for a failed load: not available, no devices, and every
    other name raises the load's message."""
    torch = sys.modules.get("torch")
    if torch is None or getattr(getattr(torch, "tpu", None), "load_error", None) == error:
        return
    stand_in = types.ModuleType("torch.tpu", "The tpu device module: torch_pjrt failed to load.")
    stand_in.is_available = lambda: False
    stand_in.device_count = lambda: 0
    stand_in.is_initialized = lambda: False
    stand_in.load_error = error

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(error)

    stand_in.__getattr__ = __getattr__
    torch.tpu = stand_in
    sys.modules["torch.tpu"] = stand_in
