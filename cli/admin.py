"""`capplan demo-data`, `capplan db upgrade|backup|restore` and `capplan app`."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.common import (
    DbOption,
    JsonOption,
    acting,
    app,
    db_app,
    guard,
    open_engine,
    out,
    print_json,
    within,
)
from workflows.limits import PORT


@app.command("demo-data")
def demo_data_cmd(
    reset_prices: Annotated[
        bool, typer.Option(help="Replace the price catalog with the shipped one.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Load the published demo runs (seed article, AIConfigurator silicon sample) and prices."""
    from workflows.store import load_demo_data  # noqa: PLC0415

    engine = open_engine(db)
    actor = acting(engine)
    result = guard(lambda: load_demo_data(engine, actor=actor, reset_prices=reset_prices))
    if as_json:
        print_json(
            {
                "runs_created": result.runs_created,
                "runs_already_present": result.runs_already_present,
                "prices_loaded": result.prices_loaded,
            }
        )
        return
    out.print(result.message(), markup=False, highlight=False)


@db_app.command("upgrade")
def db_upgrade_cmd(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Apply the database migrations (Alembic upgrade head)."""
    from workflows.store import redact, resolve_db_url, upgrade  # noqa: PLC0415

    url = resolve_db_url(db)
    revision = guard(lambda: upgrade(url))
    if as_json:
        print_json({"db": redact(url), "revision": revision})
        return
    out.print(f"{redact(url)} is at revision {revision}", markup=False, highlight=False)


@db_app.command("backup")
def db_backup_cmd(
    out_file: Annotated[Path, typer.Option("--out", help="Backup file to write (.jsonl.gz).")],
    force: Annotated[
        bool, typer.Option("--force", help="Replace an existing --out file (else refused).")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Export the whole store (every table, ids kept) to one portable file."""
    from workflows.outputs import OutputRule, check_output  # noqa: PLC0415
    from workflows.store import backup, redact, resolve_db_url, store_files  # noqa: PLC0415

    url = resolve_db_url(db)
    rule = OutputRule("--out", "backup", (".jsonl.gz", ".gz"))
    guard(lambda: check_output(out_file, rule, force=force, protected=store_files(url)))
    summary = guard(lambda: backup(url, out_file))
    if as_json:
        print_json({"db": redact(url), "out": str(out_file), **dataclasses.asdict(summary)})
        return
    out.print(f"{summary.message('backed up')} -> {out_file}", markup=False, highlight=False)


@db_app.command("restore")
def db_restore_cmd(
    backup_file: Annotated[Path, typer.Argument(help="A file written by `capplan db backup`.")],
    replace: Annotated[
        bool, typer.Option(help="Delete everything in the database first (else it must be empty).")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Restore a backup into an empty database (or --replace), keeping every id."""
    from workflows.store import redact, resolve_db_url, restore  # noqa: PLC0415

    url = resolve_db_url(db)
    from workflows.team import restore_actor  # noqa: PLC0415

    actor = guard(lambda: restore_actor(url))  # the target's roles (a new store: its admin)
    summary = guard(lambda: restore(url, backup_file, actor=actor, replace=replace))
    if as_json:
        print_json({"db": redact(url), **dataclasses.asdict(summary)})
        return
    out.print(f"{redact(url)}: {summary.message('restored')}", markup=False, highlight=False)


# The Streamlit entry script sits beside the cli package (the project root, or site-packages
# for a wheel install), and its pages (ui/*.py) resolve relative to it.
APP_SCRIPT = Path(__file__).resolve().parents[1] / "app.py"


@app.command("app")
def app_cmd(
    port: Annotated[int, typer.Option(help="Port for the web app.", callback=within(PORT))] = 8501,
    address: Annotated[
        str,
        typer.Option(
            help="Interface to listen on: 127.0.0.1 for this machine only, 0.0.0.0 to serve a "
            "team (put it behind TLS and sign-in, as docs/SECURITY.md says)."
        ),
    ] = "127.0.0.1",
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="A host name browsers reach the app at (a proxy's public name); repeat for "
            "more. localhost, 127.0.0.1, ::1, --address and, with 0.0.0.0, this machine's names "
            "are always allowed; a page at any other name is refused (DNS rebinding).",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Start the web app (Streamlit); a new store gets the demo data on first start."""
    from measurements.importers import MAX_IMPORT_BYTES  # noqa: PLC0415
    from workflows.store import ensure_demo_data, redact, resolve_db_url  # noqa: PLC0415

    url = resolve_db_url(db)
    engine = open_engine(db)
    loaded = guard(lambda: ensure_demo_data(engine))
    if loaded is not None:
        out.print(loaded.message(), markup=False, highlight=False)
    hosts = allowed_hosts(address, allowed_host or [])
    command = [
        sys.executable,
        "-m",
        "ui.serve",  # streamlit's command line, the pages' imports loaded first
        "run",
        str(APP_SCRIPT),
        "--server.port",
        str(port),
        "--server.address",
        address,
        "--server.maxUploadSize",
        str(MAX_IMPORT_BYTES // (1024 * 1024)),
        *DOORS,
        *(arg for host in hosts for arg in ("--server.allowedHosts", host)),
    ]
    shown = "localhost" if address in WILDCARDS or address == "127.0.0.1" else address
    out.print(f"capplan on http://{shown}:{port} (store: {redact(url)})", markup=False)
    out.print(f"allowed host names: {', '.join(hosts)}", markup=False, highlight=False)
    raise typer.Exit(subprocess.call(command, env=_app_env(url)))


# Streamlit settings `capplan app` always passes (docs/SECURITY.md, "The app's doors"): no
# cross-origin WebSocket or upload, XSRF tokens on uploads, no traceback (server paths) and no
# developer menu or Deploy button shown to visitors, no usage statistics sent.
DOORS = (
    "--server.headless",
    "true",
    "--server.enableCORS",
    "true",
    "--server.enableXsrfProtection",
    "true",
    "--client.showErrorDetails",
    "none",
    "--client.toolbarMode",
    "minimal",  # "viewer" still shows the Deploy button
    "--browser.gatherUsageStats",
    "false",
)
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def allowed_hosts(address: str, extra: list[str]) -> list[str]:
    """The Host names the app's WebSocket accepts (Streamlit's server.allowedHosts): this
    machine's loopback names, the address it listens on (with 0.0.0.0: the machine's own
    names) and the --allowed-host names, each once."""
    import socket  # noqa: PLC0415

    own = [socket.gethostname(), socket.getfqdn()] if address in WILDCARDS else [address]
    names = [*LOCAL_HOSTS, *own, *(name.strip() for name in extra)]
    return list(dict.fromkeys(name.lower() for name in names if name))


def _app_env(url: str) -> dict[str, str]:
    import os  # noqa: PLC0415

    return {**os.environ, "CAPPLAN_DB": url}
