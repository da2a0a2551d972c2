#!/usr/bin/env bash
# torch_pjrt against another torch release: a fresh venv with that torch
# (from the package registry), the wheel built against it in a build folder
# of its own, installed with its `test` extra, then the strict pass over the
# tests that lean most on torch's interfaces (device module, dispatch,
# structured kernels, autograd, AMP, optimizers, Dynamo, c10d, the wheel's
# own checks), from a folder outside the tree.
#   bash scripts/other_torch.sh 2.14.1 [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/other_torch.sh TORCH_VERSION [pytest args]}
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
venv=$work/venv
python3 -m venv "$venv"
pip() {
  "$venv/bin/pip" install -q --disable-pip-version-check "$@" 2>&1 \
    | { grep -v "is ignored: it is neither a file nor a directory" || true; }
}
echo "== torch $version into a fresh venv"
pip "torch==$version" xla-cpu-pjrt numpy setuptools wheel
echo "== the wheel, built against torch $version"
wheel=$(PYTHON=$venv/bin/python DIST=$work/dist TORCH_PJRT_BUILD_DIR=$PWD/build/torch-$version bash scripts/wheel.sh | tail -1)
pip "$wheel[test]"
echo "== Python tests against torch $version, eager mode: strict"
tests=(test_device test_install test_patches test_environment test_elementwise test_elementwise_binary test_storage
       test_amp test_optim_fused test_modes test_compile test_distributed)
paths=()
for t in "${tests[@]}"; do paths+=("tests/python/$t.py"); done
TORCH_PJRT_TEST_INSTALLED=1 TORCH_PJRT_EAGER_MODE=strict "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
  "${paths[@]}" "$@"
