#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the tests and benchmarks (Debian's postgresql package,
# installed by scripts/install-system.sh): its own data folder, loopback only, trust auth for the
# local `postgres` role. Idempotent: a server already answering on the port is left running.
# Prints the admin URL to use as CAPPLAN_TEST_PG_URL.
#   CAPPLAN_PG_PORT  port (default 54329)       CAPPLAN_PG_DIR  data folder (default /tmp/capplan-pg)
set -euo pipefail
port="${CAPPLAN_PG_PORT:-54329}"
data="${CAPPLAN_PG_DIR:-/tmp/capplan-pg}"
url="postgresql+psycopg://postgres@127.0.0.1:${port}/postgres"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
if [ -z "$bin" ]; then
  echo "PostgreSQL server binaries not found under /usr/lib/postgresql: run scripts/install-system.sh" >&2
  exit 1
fi
as_postgres() {
  # initdb and the server refuse to run as root; the package creates the `postgres` user.
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if as_postgres "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
  echo "$url"
  exit 0
fi
mkdir -p "$data"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$data"
if [ ! -s "$data/PG_VERSION" ]; then
  as_postgres "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
fi
# Tests make and drop many databases: fsync off is safe for a throwaway server and much faster.
as_postgres "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 start \
  -o "-h 127.0.0.1 -p $port -k /tmp -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >/dev/null
echo "$url"
