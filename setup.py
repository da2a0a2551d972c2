"""Builds the C++ core with CMake (Ninja, ccache when present) against the
installed torch and the PJRT header from the installed xla-cpu-pjrt wheel.
Use `pip install --no-build-isolation .` (or `pip wheel --no-build-isolation
--no-deps -w dist .`) so the build sees that torch."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


# The torch releases this source builds against, as
# python/torch_pjrt/_torch_compat.py lists them (read as a file: the package
# cannot be imported before it is built): csrc/aten/torch_compat.h bridges
# their C++ differences, _torch_compat.py their Python ones. A wheel is
# built against one of them and requires it.
def _torch_compat():
    ns = {}
    exec((ROOT / "python" / "torch_pjrt" / "_torch_compat.py").read_text(), ns)
    return ns


SUPPORTED_TORCH = _torch_compat()["RELEASES"]


def torch_release():
    """The installed torch's major.minor, read without importing torch (an
    import would autoload an installed torch_pjrt)."""
    from importlib.metadata import version
    release = ".".join(version("torch").split("+")[0].split(".")[:2])
    if release not in SUPPORTED_TORCH:
        raise SystemExit(f"torch_pjrt builds against torch {', '.join(SUPPORTED_TORCH)}; the installed torch is "
                         f"{version('torch')}: install one of those first (pip install 'torch=={SUPPORTED_TORCH[-1]}.*')")
    return release


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = Path(os.environ.get("TORCH_PJRT_BUILD_DIR", ROOT / "build" / "release"))
        build_dir.mkdir(parents=True, exist_ok=True)
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.check_call(
            ["cmake", str(ROOT), *gen, f"-DPython3_EXECUTABLE={sys.executable}",
             "-DCMAKE_BUILD_TYPE=Release"], cwd=build_dir)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", ".", "-j", jobs], cwd=build_dir)
        built = [next(build_dir.glob("_C*.so")), build_dir / "_build_info.py"]
        # Keep an in-tree copy so tests can also run from the source tree,
        # unless this build has a folder of its own (another torch release).
        dests = {Path(self.get_ext_fullpath(ext.name)).resolve().parent}
        if "TORCH_PJRT_BUILD_DIR" not in os.environ:
            dests.add((ROOT / "python" / "torch_pjrt").resolve())
        for dest_dir in dests:
            dest_dir.mkdir(parents=True, exist_ok=True)
            for src in built:
                dest = dest_dir / src.name
                tmp = dest.with_name("." + dest.name + ".tmp")
                shutil.copy2(src, tmp)
                os.replace(tmp, dest)  # atomic: running processes keep their mapped copy


setup(
    ext_modules=[CMakeExtension("torch_pjrt._C")],
    cmdclass={"build_ext": CMakeBuild},
    install_requires=[f"torch=={torch_release()}.*", "xla-cpu-pjrt", "numpy"],
)
