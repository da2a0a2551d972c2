#!/usr/bin/env bash
# The package as users get it: builds the wheel (scripts/wheel.sh) and
# installs it into a fresh virtual environment at $1, outside the tree, that
# holds only torch; there, from a folder outside the tree, the first tensor
# must work before anything else is installed. Then adds the packages the
# test suite needs (the wheel's `test` extra), so the suite can run against
# the installed copy (TORCH_PJRT_TEST_INSTALLED=1 checks that it does).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:?usage: scripts/wheel_venv.sh VENV_DIR}
wheel=$PWD/$(bash scripts/wheel.sh | tail -1)
torch_version=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('torch').split('+')[0])")
rm -rf "$venv"
python3 -m venv "$venv"
pip() {
  "$venv/bin/pip" install -q --disable-pip-version-check "$@" 2>&1 \
    | { grep -v "is ignored: it is neither a file nor a directory" || true; }
}
pip "torch==$torch_version"
pip "$wheel"
cd "$venv"
got=$("$venv/bin/python" -c "import torch; print((torch.arange(4., device='tpu') * 2).sum().item())")
if [ "$got" != "12.0" ]; then
  echo "the installed wheel printed '$got', not 12.0" >&2
  exit 1
fi
echo "== $(basename "$wheel") in a venv with only torch $torch_version: the first tensor works"
pip "$wheel[test]"
