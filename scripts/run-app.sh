#!/usr/bin/env bash
# Quick start: install capplan and open the app on the embedded SQLite store (demo data on first start).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/capplan app "$@"
