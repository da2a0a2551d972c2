"""The environment table: every variable torch_pjrt, its C++ core or its
build reads, with its default and what it does. The README's table is
generated from it (`python -m torch_pjrt env`) and a test keeps the two
equal, and checks that every variable the sources read is in it.

The TORCH_PJRT_* variables are declared in csrc/engine/env.cc, which the
core reads them through; the Python side reads them through get() and
value() here. Reading a name the table does not declare is an error, so a
variable cannot be added without its documentation.

The foreign ones (FOREIGN) belong to other programs (XLA, libtpu, the
system, torchrun, accelerate) or to the build and its scripts (read before
any of the package exists, so they are declared here, not in the core)."""
import os

from . import _C

# Variables of others, and of the build: name -> (default, meaning).
FOREIGN = {
    "XLA_FLAGS": ("unset", "foreign (XLA): the compiler flags the plugins read; part of the compilation cache's "
                  "key, reported by `runtime_info()`; with the XLA:CPU plugin `--xla_cpu_use_xnnpack=false` is "
                  "added unless the flags choose"),
    "LIBTPU_INIT_ARGS": ("unset", "foreign (libtpu): its flags; part of the compilation cache's key"),
    "NPROC": ("every core the process may use",
              "foreign (XLA:CPU): the size of XLA:CPU's thread pool, read by the plugin when it starts; the "
              "native functions programs call take as many threads"),
    "XDG_CACHE_HOME": ("unset", "foreign: when set, the default compilation cache directory is "
                       "`$XDG_CACHE_HOME/torch_pjrt`"),
    "HOME": ("set by the system", "foreign: the default compilation cache directory is `$HOME/.cache/torch_pjrt`"),
    "LOCAL_RANK": ("unset", "foreign (torchrun, accelerate): a process launched as a rank; accelerate then runs on "
                   "tpu with the `tpu_dist` backend"),
    "ACCELERATE_TORCH_DEVICE": ("unset", "foreign (accelerate): a device other than `tpu` keeps accelerate's own "
                                "choice for a launched rank"),
    "ACCELERATE_BYPASS_DEVICE_MAP": ("unset", "foreign (accelerate): torch_pjrt sets it to `true`, where unset, in a "
                                     "rank launched on tpu"),
    "TORCH_PJRT_BUILD_DIR": ("`build/release`", "build time: the CMake build directory `pip install` (setup.py) "
                             "builds the extension in; when set, the tree's own copy of the extension is left "
                             "alone (a build against another torch release)"),
    "DIST": ("`dist`", "build time: the folder `scripts/wheel.sh` writes the wheel to"),
    "CMAKE_BUILD_PARALLEL_LEVEL": ("the machine's cores", "build time: parallel jobs of the build setup.py runs"),
    "PYTHON": ("`.venv/bin/python`", "build time: the Python `scripts/build.sh` and `scripts/wheel.sh` build for"),
    "JOBS": ("2", "build time: parallel jobs of `scripts/build.sh` and `scripts/test.sh`"),
    "CCACHE_BASEDIR": ("the source tree", "build time: ccache's base directory (`scripts/build.sh`, `scripts/wheel.sh`)"),
    "PY": ("`.venv/bin/python`", "tests: the Python `scripts/test.sh` runs the suite with"),
    "PJRT_INCLUDE_DIR": ("the xla-cpu-pjrt wheel's", "build time: the folder of `pjrt_c_api.h` for "
                         "`scripts/device-check.sh` where no installed package ships it"),
    "DEVICE_CHECK_BUILD_DIR": ("`build/torch-MAJOR.MINOR`", "device check: the build folder of "
                               "`scripts/device-check.sh`"),
    "DEVICE_CHECK_TESTS": ("device, modes, compile, kernels, distributed", "device check: the test files "
                           "(names without `.py`) `scripts/device-check.sh` runs"),
    "DEVICE_CHECK_BENCH": ("`bench-llama 16 3 fused`", "device check: the decode bench of `scripts/device-check.sh`: "
                           "model, new tokens, repeats, eager modes (`tiny 4 3` for a small machine)"),
    "DEVICE_CHECK_TIMEOUT_<STEP>": ("per step, 8 minutes in all", "device check: the seconds a step of "
                                    "`scripts/device-check.sh` may take (BUILD, ENV, CPP, PYTEST, DEMO, BENCH)"),
}

_CORE = {name: (fallback, doc) for name, fallback, doc in _C._environment()}
_DECLARED = {**_CORE, **FOREIGN}


def get(name, default=None):
    """The variable's value, or default when unset or empty."""
    if name not in _DECLARED:
        raise KeyError(f"{name} is not declared in the environment table (csrc/engine/env.cc, _env.FOREIGN)")
    value = os.environ.get(name, "")
    return value if value else default


def value(name):
    """The variable's value, or the default the table states for it (for a
    variable whose default is a value)."""
    return get(name, _DECLARED[name][0] if name in _DECLARED else None)


def flag(name) -> bool:
    """On: the value, else the table's default, is "1" or another text but
    "0" (a default of "unset" is off), as the core's env::flag."""
    set_value = get(name)
    if set_value is not None:
        return set_value != "0"
    return _DECLARED[name][0] == "1"


def markdown_table() -> str:
    """The README's table of environment variables."""
    rows = ["| Variable | Default | Meaning |", "|---|---|---|"]
    for name, (fallback, doc) in _DECLARED.items():
        rows.append(f"| `{name}` | {fallback} | {doc} |")
    return "\n".join(rows) + "\n"
