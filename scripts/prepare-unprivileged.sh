#!/usr/bin/env bash
# Let an unprivileged user (nobody) run capplan from this checkout, so the permission tests
# (tests/cli/test_permissions.py) can drop root: as root, read-only files and folders refuse
# nothing. Adds only the search (x) bit for others on the folders above the Python interpreter
# and the checkout that lack it (e.g. /root, 0700, when Python lives under /root/.pyenv); never
# a read or write bit. Prints each folder it changed. Does nothing when not run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || exit 0
python_bin="$(.venv/bin/python -c 'import sys, os; print(os.path.realpath(sys.executable))')"
base_prefix="$(.venv/bin/python -c 'import sys; print(sys.base_prefix)')"
for start in "$python_bin" "$base_prefix" "$PWD"; do
  dir="$(dirname "$start")"
  [ -d "$start" ] && dir="$start"
  while [ "$dir" != "/" ]; do
    if [ "$(( $(stat -c '%#a' "$dir") & 1 ))" = 0 ]; then
      chmod o+x "$dir"
      echo "prepare-unprivileged: others may now search (not list) $dir"
    fi
    dir="$(dirname "$dir")"
  done
done
