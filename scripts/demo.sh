#!/usr/bin/env bash
# Quick start 1/2: set everything up, then run the demo on the tpu device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python examples/demo.py "$@"
