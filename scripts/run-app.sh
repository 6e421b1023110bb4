#!/usr/bin/env bash
# Quick start: install capplan and open the app on the embedded SQLite store (demo data on first start).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system.sh
bash scripts/bootstrap.sh
exec .venv/bin/capplan app "$@"
