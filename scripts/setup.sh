#!/usr/bin/env bash
# Sets everything up on a fresh machine: system build tools (when root),
# a virtual environment with torch and the XLA:CPU PJRT plugin, and the
# torch_pjrt build (editable install). Idempotent: a second run only rebuilds.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v ccache >/dev/null || need+=(ccache)
command -v g++ >/dev/null || need+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "== installing system packages: ${need[*]}"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null
  else
    echo "== missing system packages (install them as root): ${need[*]}" >&2
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$PY" -m venv .venv
fi
echo "== installing Python dependencies"
.venv/bin/pip install -q --disable-pip-version-check torch==2.13.0 xla-cpu-pjrt numpy transformers==5.25.0 kernels==0.19.1 accelerate==1.16.0 diffusers safetensors pytest expecttest matplotlib \
  jax==0.10.2 jaxlib==0.10.2 clang-format==23.1.5 2>&1 \
  | grep -v "is ignored: it is neither a file nor a directory" || true
echo "== building torch_pjrt"
export CCACHE_BASEDIR=$PWD
.venv/bin/pip install -q --disable-pip-version-check --no-build-isolation --no-deps -e . 2>&1 \
  | grep -v "is ignored: it is neither a file nor a directory" || true
.venv/bin/python -c "import torch_pjrt" 
