"""The probe use case: a ProbeRequest swept into a RunFile (written after every level) and,
when a store is given, stored like any import."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from db import repository
from db.access import check_store_writable
from db.backup import store_files
from db.engine import Engine
from db.repository import SaveResult
from errors import InputError, PermissionDeniedError, StoreError
from measurements.probe.level_run import ProgressEvent
from measurements.probe.outbound import Outbound
from measurements.probe.request import ProbeRequest
from measurements.probe.session import run_session
from measurements.probe.sweep import ProbeOutcome
from team.roles import Action, Actor
from workflows.outputs import OutputRule, check_output
from workflows.probe_guard import AppProbePolicy, guard

OnProgress = Callable[[ProgressEvent], None]
RUN_FILE = OutputRule(flag="out_path", what="run file", extensions=(".json",))


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One probe session's result: the sweep's outcome (the run, whether it finished, why it
    stopped, the knee), where its RunFile is, and what storing it did (None: not stored)."""

    outcome: ProbeOutcome
    out_path: Path
    stored: SaveResult | None


def probe_endpoint(
    request: ProbeRequest,
    *,
    open_store: Callable[[], Engine] | None = None,
    on_progress: OnProgress | None = None,
    store_url: str | None = None,
    outbound: Outbound | None = None,
    actor: Actor | None = None,
) -> ProbeResult:
    """Run the session the request asks for, then store the run when open_store is given.

    The run file's path is checked first (workflows.outputs: never the store `store_url`
    names, never an existing file unless request.force). The store is opened only after the
    sweep, so a sweep's RunFile is on disk even when the store then refuses it (the error says
    where the run is kept); a SQLite file this user cannot write is refused before the sweep.
    InputError (a bad request, a server that is not there) comes before the first measured
    request; a server that dies mid-sweep gives an incomplete outcome, the levels measured so
    far kept. `outbound` (the app, workflows.probe_guard) limits where requests go.
    """
    if open_store is not None:  # storing is a planner's: refused before the sweep, not after
        if actor is None:
            raise PermissionDeniedError("storing a probed run needs the person it is stored for")
        actor.require(Action.IMPORT_RUNS)
    protected = store_files(store_url) if store_url is not None else ()
    check_output(request.out_path, RUN_FILE, force=request.force, protected=protected)
    if open_store is not None and store_url is not None:
        check_store_writable(store_url)  # a read-only SQLite file is said before the sweep
    outcome = asyncio.run(run_session(request, on_progress, outbound))
    stored = None
    if open_store is not None:
        try:
            assert actor is not None  # checked before the sweep
            stored = repository.save_run(open_store(), outcome.run, actor=actor)
        except (StoreError, InputError) as exc:
            raise StoreError(
                f"{exc}; the measured run is kept in {request.out_path}: store it later with "
                f"`capplan import {request.out_path}`"
            ) from exc
    return ProbeResult(outcome=outcome, out_path=request.out_path, stored=stored)


def probe_actor(store_url: str) -> Actor:
    """Who a probe from the command line stores its run as: a SQLite file this user cannot write
    is refused first (as probe_endpoint would), then the store's roles for this login."""
    from workflows.store import open_store  # noqa: PLC0415 - the store's modules
    from workflows.team import cli_actor  # noqa: PLC0415

    check_store_writable(store_url)
    return cli_actor(open_store(store_url))


def probe_from_app(
    request: ProbeRequest,
    policy: AppProbePolicy,
    *,
    open_store: Callable[[], Engine],
    actor: Actor,
    on_progress: OnProgress | None = None,
) -> ProbeResult:
    """The Probe page's sweep: the request checked against the app's policy first (host, key
    variable), then run with requests going to the checked addresses only, and stored."""
    outbound = guard(request, policy)
    return probe_endpoint(
        request, open_store=open_store, on_progress=on_progress, outbound=outbound, actor=actor
    )
