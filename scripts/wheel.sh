#!/usr/bin/env bash
# Builds the binary wheel users install: $DIST/torch_pjrt-<version>-<python>-<platform>.whl
# (DIST defaults to dist), the extension compiled against the torch of
# $PYTHON (default .venv's): the wheel then requires that torch release. Run
# scripts/setup.sh once first. For another torch, give its venv's python and
# a build folder of its own (TORCH_PJRT_BUILD_DIR), as scripts/other_torch.sh
# does: the tree's own extension is then left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
out=${DIST:-dist}
rm -f "$out"/torch_pjrt-*.whl
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
"$PY" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps -w "$out" . 2>&1 \
  | grep -v "is ignored: it is neither a file nor a directory" || true
ls "$out"/torch_pjrt-*.whl
