"""The `capplan` command line: import results, list runs, fit curves, predict and plan capacity,
report, probe a live endpoint, and look after the store.

Every command takes `--db URL` (else $CAPPLAN_DB, else sqlite:///data/capplan.db) and `--json`
(one JSON document on stdout). Bad input exits with code 2 and one line on stderr.
"""

from __future__ import annotations

from collections.abc import Sequence

from cli.common import app

# Importing the command modules registers their commands on `app`, in the order --help lists.
# isort: off
from cli import ingest, curves, plan, report, probe, models, team, admin  # noqa: F401
# isort: on

__all__ = ["app", "main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    app(args=list(argv) if argv is not None else None)
