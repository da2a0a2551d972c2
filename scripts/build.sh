#!/usr/bin/env bash
# Incremental developer build: compiles into build/release and drops _C*.so
# into python/torch_pjrt so `PYTHONPATH=python` imports it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
# Relative paths in the ccache key: worktrees and fresh clones share hits.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
mkdir -p build/release
cmake -S . -B build/release -G Ninja -DPython3_EXECUTABLE="$("$PY" -c 'import sys; print(sys.executable)')" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "${JOBS:-2}"
# Replace atomically: a running process keeps its mapped copy intact.
# The build record (_build_info.py) goes with the extension it describes.
for f in build/release/_C*.so build/release/_build_info.py; do
  cp "$f" "python/torch_pjrt/.$(basename "$f").tmp" && mv -f "python/torch_pjrt/.$(basename "$f").tmp" "python/torch_pjrt/$(basename "$f")"
done
