"""Queries for runs (save, list, page, load, delete) and the price catalog; saved scenarios
and their plan history are in db/scenarios.py. Callers get RunFile, PriceEntry and the frozen
dataclasses below, never rows.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from pydantic import ValidationError
from sqlalchemy import (
    ColumnElement,
    Engine,
    Select,
    Table,
    delete,
    false,
    func,
    insert,
    or_,
    select,
    text,
    true,
)
from sqlalchemy.orm import InstrumentedAttribute, Session

from db.engine import session_scope, write_transaction
from db.limits import check_fits
from db.models import Deployment as DeploymentRow
from db.models import LevelMetric, LoadLevel, Price, Run
from db.models import RequestSample as SampleRow
from errors import InputError, StoreError
from hardware.prices import PriceEntry
from measurements.run_file import (
    Capabilities,
    Deployment,
    Environment,
    Level,
    LoadKind,
    Metric,
    Origin,
    Provenance,
    RequestSample,
    RunFile,
    Source,
    Startup,
    Workload,
)

_LEVEL_COLUMNS = tuple(name for name in Level.model_fields if name not in ("metrics", "samples"))
_PRICE_FIELDS = tuple(field.name for field in fields(PriceEntry))
_PerLevel = TypeVar("_PerLevel", Metric, RequestSample)
_Query = TypeVar("_Query", bound=Select[*tuple[Any, ...]])
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


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One stored run as the run list shows it (no levels loaded, counts only)."""

    run_id: int
    source: Source
    provenance: Provenance
    label: str | None
    engine: str
    engine_version: str | None
    model: str
    precision: str | None
    gpu: str | None
    gpu_count: int | None
    tp: int | None
    isl: int | None
    osl: int | None
    levels: int
    samples: int
    imported_at: datetime
    started_at: datetime | None
    origin_file: str | None
    complete: bool


@dataclass(frozen=True, slots=True)
class RunFilter:
    """Which runs to list; an empty choice keeps any value. gpus may hold None (GPU not
    stated); text matches label, origin file, notes, model or GPU, ignoring case."""

    engines: tuple[str, ...] = ()
    gpus: tuple[str | None, ...] = ()
    models: tuple[str, ...] = ()
    provenances: tuple[str, ...] = ()
    text: str = ""


@dataclass(frozen=True, slots=True)
class RunPage:
    """One page of listed runs and how many runs the filters keep in all."""

    total: int
    summaries: tuple[RunSummary, ...]


@dataclass(frozen=True, slots=True)
class RunChoices:
    """The values each run filter can take (GPU None: not stated)."""

    engines: tuple[str, ...]
    gpus: tuple[str | None, ...]
    models: tuple[str, ...]
    provenances: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run read back from the store, with its id and when it was stored."""

    run_id: int
    imported_at: datetime
    run: RunFile


# ---------------------------------------------------------------- runs: write


def run_content_sha256(run: RunFile) -> str:
    """The dedupe key: the run's source_sha256, else sha256 of the run's JSON."""
    if run.source_sha256:
        return run.source_sha256
    return hashlib.sha256(run.model_dump_json().encode("utf-8")).hexdigest()


def save_run(engine: Engine, run: RunFile) -> SaveResult:
    """Store one run in one transaction; a run already stored (same sha256) is not written again."""
    return write_transaction(engine, lambda session: _save(session, run))


def save_runs(engine: Engine, runs: Iterable[RunFile]) -> list[SaveResult]:
    """Store many runs in ONE transaction: if any fails, none is stored."""
    batch = list(runs)
    return write_transaction(engine, lambda session: [_save(session, run) for run in batch])


def _save(session: Session, run: RunFile) -> SaveResult:
    sha = run_content_sha256(run)
    found = session.execute(
        select(Run.id, DeploymentRow)
        .join(DeploymentRow, Run.deployment_id == DeploymentRow.id)
        .where(Run.content_sha256 == sha)
    ).first()
    if found is not None:
        existing, stored = found
        _refuse_other_facts(existing, stored, run)
        return SaveResult(
            existing,
            False,
            f"already stored as run {existing} (same content sha256 {sha[:12]}…); nothing written",
        )
    _check_metrics_unique(run)
    _check_run_fits(run)
    row = _run_row(run, sha, _deployment_id(session, run.deployment))
    session.add(row)
    session.flush()
    for position, level in enumerate(run.levels):
        _insert_level(session, row.id, position, level)
    samples = sum(len(level.samples) for level in run.levels)
    return SaveResult(
        row.id, True, f"stored as run {row.id} ({len(run.levels)} levels, {samples} samples)"
    )


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


def delete_run(engine: Engine, run_id: int) -> bool:
    """Delete a run with its levels, metrics and samples; False when there was no such run.

    Its deployment goes too when no other run uses it; a run of that deployment stored at the
    same moment makes the delete retry, and then the deployment stays."""

    def remove(session: Session) -> bool:
        deployment_id = session.scalar(select(Run.deployment_id).where(Run.id == run_id))
        if deployment_id is None:
            return False
        session.execute(delete(Run).where(Run.id == run_id))
        still_used = select(Run.id).where(Run.deployment_id == deployment_id).exists()
        session.execute(delete(DeploymentRow).where(DeploymentRow.id == deployment_id, ~still_used))
        return True

    return write_transaction(engine, remove)


# ---------------------------------------------------------------- runs: read


def list_runs(
    engine: Engine,
    filters: RunFilter | None = None,
    *,
    limit: int | None = None,
    offset: int = 0,
) -> list[RunSummary]:
    """Stored runs with level and sample counts, oldest first: all of them, or a page
    (limit/offset) of those the filters keep."""
    with session_scope(engine, write=False) as session:
        return _select_summaries(session, filters, limit, offset)


def run_page(engine: Engine, filters: RunFilter | None, limit: int, offset: int = 0) -> RunPage:
    """One page of the runs the filters keep, with how many they keep in all (one snapshot)."""
    with session_scope(engine, write=False) as session:
        total = session.scalar(_filtered(select(func.count(Run.id)), filters)) or 0
        return RunPage(total, tuple(_select_summaries(session, filters, limit, offset)))


def run_filter_choices(engine: Engine) -> RunChoices:
    """The distinct engines, GPUs (None: not stated), models and provenances of stored runs."""
    stored = select(DeploymentRow).where(
        select(Run.id).where(Run.deployment_id == DeploymentRow.id).exists()
    )
    with session_scope(engine, write=False) as session:
        deployments = session.scalars(stored).all()
        provenances = session.scalars(select(Run.provenance).distinct()).all()
    return RunChoices(
        engines=tuple(sorted({d.engine for d in deployments})),
        gpus=tuple(sorted({d.gpu for d in deployments}, key=lambda gpu: (gpu is None, gpu or ""))),
        models=tuple(sorted({d.model for d in deployments})),
        provenances=tuple(sorted(provenances)),
    )


def _filtered(query: _Query, filters: RunFilter | None) -> _Query:
    """The query over runs joined to their deployments, narrowed by the filters."""
    query = query.join(DeploymentRow, Run.deployment_id == DeploymentRow.id)
    if filters is None:
        return query
    if filters.engines:
        query = query.where(DeploymentRow.engine.in_(filters.engines))
    if filters.models:
        query = query.where(DeploymentRow.model.in_(filters.models))
    if filters.provenances:
        query = query.where(Run.provenance.in_(filters.provenances))
    if filters.gpus:
        named = [gpu for gpu in filters.gpus if gpu is not None]
        unstated = DeploymentRow.gpu.is_(None) if None in filters.gpus else false()
        query = query.where(or_(DeploymentRow.gpu.in_(named), unstated))
    if text := filters.text.strip():
        searched = (Run.label, Run.origin_file, Run.notes, DeploymentRow.model, DeploymentRow.gpu)
        query = query.where(or_(*(column.icontains(text, autoescape=True) for column in searched)))
    return query


def _select_summaries(
    session: Session, filters: RunFilter | None, limit: int | None, offset: int
) -> list[RunSummary]:
    # One statement: the page of run ids first, then the counts for those runs only, so a page
    # of 250 never walks the samples index of every run (10M rows at scale).
    levels = select(func.count(LoadLevel.id)).where(LoadLevel.run_id == Run.id).scalar_subquery()
    # count(*), not count(id): (level_id, position) alone answers it, so Postgres can count
    # from the index without visiting the samples' rows.
    samples = (
        select(func.count())
        .select_from(SampleRow)
        .join(LoadLevel, SampleRow.level_id == LoadLevel.id)
        .where(LoadLevel.run_id == Run.id)
        .scalar_subquery()
    )
    query = _filtered(select(Run, DeploymentRow, levels, samples), filters)
    if limit is not None:
        page = _filtered(select(Run.id), filters).order_by(Run.id).limit(limit).offset(offset)
        query = query.where(Run.id.in_(page.scalar_subquery()))
    rows = session.execute(query.order_by(Run.id)).all()
    return [
        _summary(run, deployment, n_levels, n_samples)
        for run, deployment, n_levels, n_samples in rows
    ]


def _summary(run: Run, deployment: DeploymentRow, levels: int, samples: int) -> RunSummary:
    return RunSummary(
        run_id=run.id,
        source=Source(run.source),
        provenance=Provenance(run.provenance),
        label=run.label,
        engine=deployment.engine,
        engine_version=deployment.engine_version,
        model=deployment.model,
        precision=deployment.precision,
        gpu=deployment.gpu,
        gpu_count=deployment.gpu_count,
        tp=deployment.tp,
        isl=run.isl,
        osl=run.osl,
        levels=levels,
        samples=samples,
        imported_at=run.imported_at,
        started_at=run.started_at,
        origin_file=run.origin_file,
        complete=run.complete,
    )


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
    query = select(Run.id).order_by(Run.id)
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


def model_names(engine: Engine) -> list[str]:
    """The distinct model names of stored runs, as stored (one small query on deployments)."""
    stored = select(DeploymentRow.model).where(
        select(Run.id).where(Run.deployment_id == DeploymentRow.id).exists()
    )
    with session_scope(engine, write=False) as session:
        return sorted(set(session.scalars(stored.distinct())))


def curve_workloads(engine: Engine) -> list[tuple[str, int | None, int | None]]:
    """Distinct (model, ISL, OSL) of stored runs with at least one concurrency level: what the
    Curves page offers without building a curve. (A run whose every concurrency level is left
    out of its curve, e.g. all failed, still counts here.)"""
    has_level = (
        select(LoadLevel.id)
        .where(LoadLevel.run_id == Run.id, LoadLevel.load_kind == LoadKind.CONCURRENCY.value)
        .exists()
    )
    query = (
        select(DeploymentRow.model, Run.isl, Run.osl)
        .join(DeploymentRow, Run.deployment_id == DeploymentRow.id)
        .where(has_level)
        .distinct()
    )
    with session_scope(engine, write=False) as session:
        rows = session.execute(query).all()
    return sorted(
        ((model, isl, osl) for model, isl, osl in rows),
        key=lambda row: (row[0], row[1] is None, row[1] or 0, row[2] is None, row[2] or 0),
    )


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
        .where(_wanted(Run.id, wanted))
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


# ---------------------------------------------------------------- prices


def list_prices(engine: Engine) -> list[PriceEntry]:
    """The stored price catalog, in the order it was saved."""
    with session_scope(engine, write=False) as session:
        rows = session.scalars(select(Price).order_by(Price.id)).all()
    return [_price_entry(row) for row in rows]


def count_runs(engine: Engine, filters: RunFilter | None = None) -> int:
    """How many runs the store holds (those the filters keep, when given)."""
    with session_scope(engine, write=False) as session:
        return session.scalar(_filtered(select(func.count(Run.id)), filters)) or 0


def count_prices(engine: Engine) -> int:
    """How many price entries the catalog holds."""
    with session_scope(engine, write=False) as session:
        return session.scalar(select(func.count(Price.id))) or 0


def prices_updated_at(engine: Engine) -> datetime | None:
    """When the stored catalog was last replaced (UTC), or None when it is empty."""
    with session_scope(engine, write=False) as session:
        return session.scalar(select(func.max(Price.updated_at)))


def replace_prices(engine: Engine, entries: Iterable[PriceEntry]) -> int:
    """Replace the whole catalog with entries in one transaction; returns how many were stored."""
    now = datetime.now(UTC)
    rows = [_price_row(entry, now) for entry in entries]
    for row in rows:
        check_fits(Price.__table__, row, field_prefix="prices.")

    def replace(session: Session) -> int:
        if session.get_bind().dialect.name == "postgresql":
            # Two replaces at once would each delete only the rows they can see and both
            # insert: the lock makes the second wait for the first (SQLite: BEGIN IMMEDIATE).
            session.execute(text("LOCK TABLE prices IN SHARE ROW EXCLUSIVE MODE"))
        session.execute(delete(Price))
        if rows:
            session.execute(insert(Price), rows)
        return len(rows)

    return write_transaction(engine, replace)


def _price_row(entry: PriceEntry, now: datetime) -> dict[str, object]:
    return {**_fields(entry, _PRICE_FIELDS), "updated_at": now}


def _price_entry(row: Price) -> PriceEntry:
    return PriceEntry(*(getattr(row, name) for name in _PRICE_FIELDS))
