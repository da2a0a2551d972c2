#!/usr/bin/env bash
# Builds the binary wheel users install: dist/torch_pjrt-<version>-<python>-<platform>.whl,
# the extension compiled against the torch in .venv (the wheel then requires
# that torch release). Run scripts/setup.sh once first.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
rm -f dist/torch_pjrt-*.whl
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
"$PY" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps -w dist . 2>&1 \
  | grep -v "is ignored: it is neither a file nor a directory" || true
ls dist/torch_pjrt-*.whl
