"""Reading stored runs back as RunFiles: one, some or all in four queries, or every run a chunk
at a time (optionally of some models and one workload). Callers get StoredRun, never rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from pydantic import ValidationError
from sqlalchemy import ColumnElement, Engine, or_, select, true
from sqlalchemy.orm import InstrumentedAttribute, Session

from db.engine import session_scope
from db.models import Deployment as DeploymentRow
from db.models import LevelMetric, LoadLevel, Run
from db.models import RequestSample as SampleRow
from errors import InputError, StoreError
from measurements.run_file import (
    Capabilities,
    Deployment,
    Environment,
    Level,
    Metric,
    Provenance,
    RequestSample,
    RunFile,
    Source,
    Startup,
    Workload,
)

_LEVEL_COLUMNS = tuple(name for name in Level.model_fields if name not in ("metrics", "samples"))
_PerLevel = TypeVar("_PerLevel", Metric, RequestSample)


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run read back from the store, with its id and when it was stored."""

    run_id: int
    imported_at: datetime
    run: RunFile


def get_run(engine: Engine, run_id: int, with_samples: bool = True) -> StoredRun:
    """One stored run, samples included unless with_samples=False; InputError if absent."""
    return load_runs(engine, [run_id], with_samples=with_samples)[0]


def load_runs(
    engine: Engine, run_ids: Sequence[int] | None = None, with_samples: bool = False
) -> list[StoredRun]:
    """Runs with levels and metrics (and samples if asked) in four queries, whatever the count.

    run_ids=None loads every run, oldest first; otherwise runs come back in the order asked.
    """
    wanted = None if run_ids is None else list(dict.fromkeys(run_ids))
    by_id = _load_found(engine, wanted, with_samples)
    if wanted is None:
        return list(by_id.values())
    missing = [run_id for run_id in wanted if run_id not in by_id]
    if missing:
        listed = ", ".join(str(run_id) for run_id in missing)
        raise InputError(
            f"no run with id {listed} (`capplan runs` lists the stored runs)", field="run_id"
        )
    return [by_id[run_id] for run_id in wanted]


def iter_runs(
    engine: Engine,
    chunk: int = 500,
    *,
    models: Sequence[str] | None = None,
    workload: tuple[int | None, int | None] | None = None,
) -> Iterator[StoredRun]:
    """Every stored run with levels and metrics (never samples), oldest first, `chunk` runs per
    read so memory holds one chunk of RunFiles at a time; a run deleted meanwhile is skipped.

    `models` keeps runs of those stored model names only; `workload` keeps runs of that
    (ISL, OSL), and (None, None) keeps those that do not state one or both."""
    query = select(Run.id).where(Run.deleted_at.is_(None)).order_by(Run.id)
    if models is not None:
        query = query.join(DeploymentRow, Run.deployment_id == DeploymentRow.id).where(
            DeploymentRow.model.in_(list(models))
        )
    if workload is not None:
        isl, osl = workload
        if isl is None or osl is None:
            query = query.where(or_(Run.isl.is_(None), Run.osl.is_(None)))
        else:
            query = query.where(Run.isl == isl, Run.osl == osl)
    with session_scope(engine, write=False) as session:
        ids = list(session.scalars(query))
    for start in range(0, len(ids), chunk):
        yield from _load_found(engine, ids[start : start + chunk], False).values()


def _load_found(
    engine: Engine, wanted: list[int] | None, with_samples: bool
) -> dict[int, StoredRun]:
    """The wanted runs that exist (all when None), by id in id order, in one read transaction."""
    with session_scope(engine, write=False) as session:
        runs = _select_runs(session, wanted)
        levels = _select_levels(session, wanted)
        metrics = _select_metrics(session, wanted)
        samples = _select_samples(session, wanted) if with_samples else {}
    return {
        run.id: StoredRun(
            run.id,
            run.imported_at,
            _run_file(run, deployment, levels[run.id], metrics, samples),
        )
        for run, deployment in runs
    }


def _wanted(column: InstrumentedAttribute[int], wanted: list[int] | None) -> ColumnElement[bool]:
    return column.in_(wanted) if wanted is not None else true()


def _select_runs(session: Session, wanted: list[int] | None) -> list[tuple[Run, DeploymentRow]]:
    query = (
        select(Run, DeploymentRow)
        .join(DeploymentRow, Run.deployment_id == DeploymentRow.id)
        .where(_wanted(Run.id, wanted), Run.deleted_at.is_(None))
        .order_by(Run.id)
    )
    return [(run, deployment) for run, deployment in session.execute(query)]


def _select_levels(session: Session, wanted: list[int] | None) -> dict[int, list[LoadLevel]]:
    query = (
        select(LoadLevel)
        .where(_wanted(LoadLevel.run_id, wanted))
        .order_by(LoadLevel.run_id, LoadLevel.position)
    )
    grouped: dict[int, list[LoadLevel]] = defaultdict(list)
    for level in session.scalars(query):
        grouped[level.run_id].append(level)
    return grouped


def _select_metrics(session: Session, wanted: list[int] | None) -> dict[int, list[Metric]]:
    return _select_per_level(session, wanted, LevelMetric, Metric)


def _select_samples(session: Session, wanted: list[int] | None) -> dict[int, list[RequestSample]]:
    return _select_per_level(session, wanted, SampleRow, RequestSample)


def _select_per_level(
    session: Session,
    wanted: list[int] | None,
    table: type[LevelMetric | SampleRow],
    model: type[_PerLevel],
) -> dict[int, list[_PerLevel]]:
    # Columns are named like the pydantic fields. Plain rows, not ORM objects: building tens of
    # thousands of instances costs more than the query itself.
    names = list(model.model_fields)
    query = (
        select(table.level_id, *(getattr(table, name) for name in names))
        .join(LoadLevel, table.level_id == LoadLevel.id)
        .where(_wanted(LoadLevel.run_id, wanted))
        .order_by(table.level_id, table.position)
    )
    grouped: dict[int, list[_PerLevel]] = defaultdict(list)
    for level_id, *values in session.execute(query):
        grouped[level_id].append(model.model_validate(dict(zip(names, values, strict=True))))
    return grouped


def _run_file(
    run: Run,
    deployment: DeploymentRow,
    levels: list[LoadLevel],
    metrics: dict[int, list[Metric]],
    samples: dict[int, list[RequestSample]],
) -> RunFile:
    try:
        return RunFile(
            source=Source(run.source),
            provenance=Provenance(run.provenance),
            deployment=Deployment.model_validate(_fields(deployment, Deployment.model_fields)),
            workload=Workload.model_validate(
                {**run.workload_extra, "isl": run.isl, "osl": run.osl}
            ),
            environment=Environment.model_validate(run.environment),
            startup=Startup.model_validate(_fields(run, Startup.model_fields)),
            capabilities=Capabilities.model_validate(run.capabilities),
            levels=tuple(_level(row, metrics, samples) for row in levels),
            started_at=run.started_at,
            complete=run.complete,
            label=run.label,
            notes=run.notes,
            origin_file=run.origin_file,
            source_sha256=run.source_sha256,
        )
    except (ValidationError, ValueError) as exc:
        raise StoreError(f"stored run {run.id} does not read back as a RunFile v1: {exc}") from exc


def _level(
    row: LoadLevel, metrics: dict[int, list[Metric]], samples: dict[int, list[RequestSample]]
) -> Level:
    columns = _fields(row, _LEVEL_COLUMNS)
    return Level.model_validate(
        {**columns, "metrics": metrics.get(row.id, ()), "samples": samples.get(row.id, ())}
    )


def _fields(row: object, names: Iterable[str]) -> dict[str, object]:
    """The row's attributes of these names (model columns are named like the fields)."""
    return {name: getattr(row, name) for name in names}
