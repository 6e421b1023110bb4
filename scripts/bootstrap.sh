#!/usr/bin/env bash
# Create .venv (Python 3.11+) and install capplan into it; "dev" also installs the test tools.
set -euo pipefail
cd "$(dirname "$0")/.."
python_bin="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python_bin" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
if [ "${1:-}" = "dev" ]; then
  .venv/bin/python -m pip install --quiet -r requirements-dev.txt
else
  .venv/bin/python -m pip install --quiet -r requirements.txt
fi
.venv/bin/python -m pip install --quiet --no-deps -e .
