#!/usr/bin/env bash
# Quick start 2/2: set everything up, then run the whole test suite
# (C++ GoogleTest for the core, pytest for everything seen from Python, in
# each eager mode; TORCH_PJRT_TEST_MODES="strict" runs just one). The first
# pass tests the package as users install it: the wheel, in a fresh venv
# outside the tree; the others test the developer's editable install. Then
# the same package built against the other torch releases listed in
# TORCH_PJRT_TEST_TORCH (unset: 2.14.1, the newest the registry serves; empty:
# none), each in a venv of its own (scripts/other_torch.sh; about 25 minutes
# on two cores, most of it the second build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PYTHONUNBUFFERED=1
PLUGIN=$(.venv/bin/python -c "import torch_pjrt._plugins as p; print(p.resolve('cpu')[1])")
echo "== C++ style: clang-format (.clang-format)"
find csrc tests/cpp bench \( -name '*.cc' -o -name '*.h' \) -print0 | xargs -0 .venv/bin/clang-format --dry-run --Werror
echo "== C++ core tests"
cmake --build build/release --target core_tests -j "${JOBS:-2}" >/dev/null
# A fresh cache: the engine tests count compiles.
TORCH_PJRT_CACHE_DIR=$(mktemp -d) TORCH_PJRT_PLUGIN_PATH=$PLUGIN build/release/core_tests --gtest_brief=1
# The whole Python suite in every eager mode: one lowering must give the
# same results however ops are grouped into programs.
# Every package setup.sh installs is required: a test skipped for want of
# one fails. -rs lists every skip with its reason.
export TORCH_PJRT_TEST_REQUIRE=${TORCH_PJRT_TEST_REQUIRE-transformers,accelerate,diffusers,safetensors,expecttest,matplotlib,jax}
pass() {
  TORCH_PJRT_EAGER_MODE=$1 "${PY:-.venv/bin/python}" -m pytest -q -rs -p no:cacheprovider tests/python "${@:2}"
}
modes=(${TORCH_PJRT_TEST_MODES:-strict fused debug})
echo "== the wheel, installed into a fresh venv outside the tree"
installed=$(mktemp -d)
trap 'rm -rf "$installed"' EXIT
bash scripts/wheel_venv.sh "$installed/venv"
# The first pass runs alone: it holds the tests marked once (timings and
# memory peaks among them), and it runs against the installed wheel (the
# conftest fails the pass if the tree's copy was imported instead). The
# others run side by side, each on one of the two cores a pass mostly keeps
# busy, their output shown when both end.
echo "== Python tests, eager mode: ${modes[0]}, against the installed wheel"
PY=$installed/venv/bin/python TORCH_PJRT_TEST_INSTALLED=1 pass "${modes[0]}" "$@"
logs=$(mktemp -d)
pids=()
for mode in "${modes[@]:1}"; do
  pass "$mode" "$@" >"$logs/$mode.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!pids[@]}"; do
  mode=${modes[$((i + 1))]}
  rc=0
  wait "${pids[$i]}" || rc=$?
  echo "== Python tests, eager mode: $mode (exit status $rc)"
  cat "$logs/$mode.log"
  [ "$rc" = 0 ] || status=$rc
done
for version in ${TORCH_PJRT_TEST_TORCH-2.14.1}; do
  rc=0
  bash scripts/other_torch.sh "$version" "$@" || rc=$?
  echo "== torch $version: exit status $rc"
  [ "$rc" = 0 ] || status=$rc
done
exit "$status"
