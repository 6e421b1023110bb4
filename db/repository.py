"""Saving and deleting runs: one run or a batch per transaction, deduplicated by content sha256,
refused before anything is written when the store could not hold it. Reading runs back is in
db/run_reads.py, listing them in db/run_lists.py, the price catalog in db/prices.py.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

from sqlalchemy import Engine, Table, delete, insert, select
from sqlalchemy.orm import Session

from db import audit
from db.engine import write_transaction
from db.limits import check_fits
from db.models import Deployment as DeploymentRow
from db.models import LevelMetric, LoadLevel, Run
from db.models import RequestSample as SampleRow
from errors import InputError
from measurements.run_file import Deployment, Level, Origin, RunFile
from team.roles import Action, Actor

# The Core tables behind the per-level rows: saves insert them with executemany (no ORM objects).
_LEVELS = cast(Table, LoadLevel.__table__)
_METRICS = cast(Table, LevelMetric.__table__)
_SAMPLES = cast(Table, SampleRow.__table__)


@dataclass(frozen=True, slots=True)
class SaveResult:
    """What save_run did: the run's id, whether it was written now, and a line for people."""

    run_id: int
    created: bool
    message: str


def run_content_sha256(run: RunFile) -> str:
    """The dedupe key: the run's source_sha256, else sha256 of the run's JSON."""
    if run.source_sha256:
        return run.source_sha256
    return hashlib.sha256(run.model_dump_json().encode("utf-8")).hexdigest()


def save_run(engine: Engine, run: RunFile, *, actor: Actor) -> SaveResult:
    """Store one run in one transaction; a run already stored (same sha256) is not written again."""
    actor.require(Action.IMPORT_RUNS)
    return write_transaction(engine, lambda session: _save(session, run, actor))


def save_runs(engine: Engine, runs: Iterable[RunFile], *, actor: Actor) -> list[SaveResult]:
    """Store many runs in ONE transaction: if any fails, none is stored."""
    actor.require(Action.IMPORT_RUNS)
    batch = list(runs)
    return write_transaction(engine, lambda session: [_save(session, r, actor) for r in batch])


def _save(session: Session, run: RunFile, actor: Actor) -> SaveResult:
    sha = run_content_sha256(run)
    found = session.execute(
        select(Run.id, Run.deleted_at, Run.deleted_by, DeploymentRow)
        .join(DeploymentRow, Run.deployment_id == DeploymentRow.id)
        .where(Run.content_sha256 == sha)
    ).first()
    if found is not None:
        existing, deleted_at, deleted_by, stored = found
        _refuse_other_facts(existing, stored, run)
        trash = (
            f", in the trash since {deleted_at:%Y-%m-%d %H:%M} UTC (deleted by {deleted_by}): "
            "undo its delete to use it again"
            if deleted_at is not None
            else ""
        )
        return SaveResult(
            existing,
            False,
            f"already stored as run {existing} (same content sha256 {sha[:12]}…){trash}; "
            "nothing written",
        )
    _check_metrics_unique(run)
    _check_run_fits(run)
    row = _run_row(run, sha, _deployment_id(session, run.deployment))
    row.imported_by = actor.name
    session.add(row)
    session.flush()
    for position, level in enumerate(run.levels):
        _insert_level(session, row.id, position, level)
    samples = sum(len(level.samples) for level in run.levels)
    facts = run_facts(run, sha)
    said = f"run {row.id} imported: {facts['model']} on {facts['gpu']} ({facts['engine']})"
    audit.record(session, actor, ("run", "imported", f"run {row.id}"), (None, facts), said)
    return SaveResult(
        row.id, True, f"stored as run {row.id} ({len(run.levels)} levels, {samples} samples)"
    )


def run_facts(run: RunFile, sha: str) -> dict[str, object]:
    """What the audit trail keeps of a run: enough to know which one it was."""
    deployment = run.deployment
    return {
        "model": deployment.model,
        "gpu": deployment.gpu,
        "gpu_count": deployment.gpu_count,
        "engine": deployment.engine,
        "precision": deployment.precision,
        "isl": run.workload.isl,
        "osl": run.workload.osl,
        "levels": len(run.levels),
        "label": run.label,
        "origin_file": run.origin_file,
        "content_sha256": sha,
    }


def _refuse_other_facts(run_id: int, stored: DeploymentRow, run: RunFile) -> None:
    """The same content with other deployment facts is a correction, never silently dropped."""
    for name, value in run.deployment.model_dump(mode="json").items():
        if getattr(stored, name) != value:
            raise InputError(
                f"this content is already stored as run {run_id} with {name} "
                f"{getattr(stored, name)!r}; delete run {run_id} first to store it with other "
                "deployment facts",
                file=run.origin_file,
                field=f"deployment.{name}",
                value=value,
            )


def _check_metrics_unique(run: RunFile) -> None:
    # The store keeps one value per (metric, origin) and level; say so before the database does.
    for index, level in enumerate(run.levels):
        seen: set[tuple[str, Origin]] = set()
        for metric in level.metrics:
            key = (metric.name, metric.origin)
            if key in seen:
                raise InputError(
                    f"metric {metric.name!r} with origin {metric.origin.value!r} appears twice "
                    f"in level {index} (load {level.load_value:g}); keep one value per origin",
                    file=run.origin_file,
                    field=f"levels[{index}].metrics",
                    value=metric.name,
                )
            seen.add(key)


def _check_run_fits(run: RunFile) -> None:
    """Text the columns cannot hold on every backend is refused before anything is written."""
    file = run.origin_file
    check_fits(
        DeploymentRow.__table__, run.deployment.model_dump(), field_prefix="deployment.", file=file
    )
    texts = {"label": run.label, "notes": run.notes, "origin_file": run.origin_file}
    check_fits(Run.__table__, texts, file=file)
    for index, level in enumerate(run.levels):
        where = f"levels[{index}]."
        check_fits(LoadLevel.__table__, {"notes": level.notes}, field_prefix=where, file=file)
        for number, metric in enumerate(level.metrics):
            check_fits(
                LevelMetric.__table__,
                {"name": metric.name, "source_key": metric.source_key},
                field_prefix=f"{where}metrics[{number}].",
                file=file,
            )
        for number, sample in enumerate(level.samples):
            if sample.error:
                check_fits(
                    SampleRow.__table__,
                    {"error": sample.error},
                    field_prefix=f"{where}samples[{number}].",
                    file=file,
                )


def _deployment_key(deployment: Deployment) -> str:
    canonical = json.dumps(deployment.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _deployment_id(session: Session, deployment: Deployment) -> int:
    key = _deployment_key(deployment)
    found = session.scalar(select(DeploymentRow.id).where(DeploymentRow.identity_key == key))
    if found is not None:
        return found
    row = DeploymentRow(identity_key=key, **deployment.model_dump(mode="json"))
    session.add(row)
    session.flush()
    return row.id


def _run_row(run: RunFile, sha: str, deployment_id: int) -> Run:
    return Run(
        deployment_id=deployment_id,
        schema_version=run.schema_version,
        source=run.source.value,
        provenance=run.provenance.value,
        label=run.label,
        content_sha256=sha,
        source_sha256=run.source_sha256,
        origin_file=run.origin_file,
        started_at=run.started_at,
        imported_at=datetime.now(UTC),
        complete=run.complete,
        notes=run.notes,
        isl=run.workload.isl,
        osl=run.workload.osl,
        workload_extra=run.workload.model_dump(mode="json", exclude={"isl", "osl"}),
        environment=run.environment.model_dump(mode="json"),
        cold_start_s=run.startup.cold_start_s,
        engine_build_s=run.startup.engine_build_s,
        vram_idle_gb=run.startup.vram_idle_gb,
        kv_cache_tokens=run.startup.kv_cache_tokens,
        max_concurrency=run.startup.max_concurrency,
        max_concurrency_at_tokens=run.startup.max_concurrency_at_tokens,
        capabilities=run.capabilities.model_dump(mode="json"),
    )


def _insert_level(session: Session, run_id: int, position: int, level: Level) -> None:
    # Core statements, not the ORM: the level's id comes back from RETURNING, and metrics and
    # samples go as one executemany each (no ORM objects or identity map per row).
    columns = level.model_dump(mode="json", exclude={"metrics", "samples"})
    level_id = session.execute(
        insert(_LEVELS).values(run_id=run_id, position=position, **columns).returning(_LEVELS.c.id)
    ).scalar_one()
    if level.metrics:
        metrics = [
            {"level_id": level_id, "position": index, **metric.model_dump(mode="json")}
            for index, metric in enumerate(level.metrics)
        ]
        session.execute(insert(_METRICS), metrics)
    if level.samples:
        samples = [
            {"level_id": level_id, "position": index, **sample.model_dump(mode="json")}
            for index, sample in enumerate(level.samples)
        ]
        session.execute(insert(_SAMPLES), samples)


def delete_run(engine: Engine, run_id: int, *, actor: Actor) -> bool:
    """Move a run to the trash (an admin's): every read leaves it out until its delete is undone
    or it is purged (db/trash.py); False when there is no such run outside the trash."""
    actor.require(Action.DELETE_RUNS)

    def remove(session: Session) -> bool:
        query = select(Run, DeploymentRow).join(
            DeploymentRow, Run.deployment_id == DeploymentRow.id
        )
        found = session.execute(query.where(Run.id == run_id, Run.deleted_at.is_(None))).first()
        if found is None:
            return False
        row, deployment = found
        row.deleted_at, row.deleted_by = datetime.now(UTC), actor.name
        before = {
            "model": deployment.model,
            "gpu": deployment.gpu,
            "engine": deployment.engine,
            "label": row.label,
            "content_sha256": row.content_sha256,
        }
        said = f"run {run_id} deleted: {deployment.model} on {deployment.gpu} ({deployment.engine})"
        audit.record(session, actor, ("run", "deleted", f"run {run_id}"), (before, None), said)
        return True

    return write_transaction(engine, remove)


def purge_run(session: Session, run_id: int) -> None:
    """Delete a run for good with its levels, metrics and samples (db/trash.py's purge); its
    deployment goes too when no other run uses it."""
    deployment_id = session.scalar(select(Run.deployment_id).where(Run.id == run_id))
    if deployment_id is None:
        return
    session.execute(delete(Run).where(Run.id == run_id))
    still_used = select(Run.id).where(Run.deployment_id == deployment_id).exists()
    session.execute(delete(DeploymentRow).where(DeploymentRow.id == deployment_id, ~still_used))
