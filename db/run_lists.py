"""The run list: summaries with level and sample counts (all, or a page the filters keep), the
values each filter can take, counts, and the model names and workloads stored runs cover.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Engine, Select, false, func, or_, select
from sqlalchemy.orm import Session

from db.engine import session_scope
from db.models import Deployment as DeploymentRow
from db.models import LoadLevel, Run
from db.models import RequestSample as SampleRow
from measurements.run_file import LoadKind, Provenance, Source

_Query = TypeVar("_Query", bound=Select[*tuple[Any, ...]])


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
        return _select_summaries(session, filters, _Window(limit, offset))


def run_page(
    engine: Engine,
    filters: RunFilter | None,
    limit: int,
    offset: int = 0,
    *,
    newest_first: bool = False,
) -> RunPage:
    """One page of the runs the filters keep, with how many they keep in all (one snapshot);
    oldest first, or newest first (the Runs page: a run just imported is on its first page)."""
    window = _Window(limit, offset, newest_first)
    with session_scope(engine, write=False) as session:
        total = session.scalar(_filtered(select(func.count(Run.id)), filters)) or 0
        return RunPage(total, tuple(_select_summaries(session, filters, window)))


def run_filter_choices(engine: Engine) -> RunChoices:
    """The distinct engines, GPUs (None: not stated), models and provenances of stored runs."""
    stored = select(DeploymentRow).where(
        select(Run.id)
        .where(Run.deployment_id == DeploymentRow.id, Run.deleted_at.is_(None))
        .exists()
    )
    with session_scope(engine, write=False) as session:
        deployments = session.scalars(stored).all()
        live = select(Run.provenance).where(Run.deleted_at.is_(None))
        provenances = session.scalars(live.distinct()).all()
    return RunChoices(
        engines=tuple(sorted({d.engine for d in deployments})),
        gpus=tuple(sorted({d.gpu for d in deployments}, key=lambda gpu: (gpu is None, gpu or ""))),
        models=tuple(sorted({d.model for d in deployments})),
        provenances=tuple(sorted(provenances)),
    )


def _filtered(query: _Query, filters: RunFilter | None) -> _Query:
    """The query over runs joined to their deployments, narrowed by the filters."""
    query = query.join(DeploymentRow, Run.deployment_id == DeploymentRow.id)
    query = query.where(Run.deleted_at.is_(None))  # the trash is listed by db/trash.py
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


@dataclass(frozen=True, slots=True)
class _Window:
    """Which runs of the filtered list to read: a page (limit None: all) in id order."""

    limit: int | None
    offset: int = 0
    newest_first: bool = False


def _select_summaries(
    session: Session, filters: RunFilter | None, window: _Window
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
    order = Run.id.desc() if window.newest_first else Run.id
    if window.limit is not None:
        page = _filtered(select(Run.id), filters).order_by(order)
        page = page.limit(window.limit).offset(window.offset)
        query = query.where(Run.id.in_(page.scalar_subquery()))
    rows = session.execute(query.order_by(order)).all()
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


def count_runs(engine: Engine, filters: RunFilter | None = None) -> int:
    """How many runs the store holds (those the filters keep, when given)."""
    with session_scope(engine, write=False) as session:
        return session.scalar(_filtered(select(func.count(Run.id)), filters)) or 0


def model_names(engine: Engine) -> list[str]:
    """The distinct model names of stored runs, as stored (one small query on deployments)."""
    stored = select(DeploymentRow.model).where(
        select(Run.id)
        .where(Run.deployment_id == DeploymentRow.id, Run.deleted_at.is_(None))
        .exists()
    )
    with session_scope(engine, write=False) as session:
        return sorted(set(session.scalars(stored.distinct())))


def curve_workloads(engine: Engine) -> list[tuple[str, int | None, int | None]]:
    """Distinct (model, ISL, OSL) of stored runs with at least one concurrency or request-rate
    level: what the Curves page offers (a rate level drawn by its offered rate) without building
    a curve. (A run whose every such level is left out of its curve, e.g. all failed, still
    counts here.)"""
    kinds = (LoadKind.CONCURRENCY.value, LoadKind.RATE.value)
    has_level = (
        select(LoadLevel.id)
        .where(LoadLevel.run_id == Run.id, LoadLevel.load_kind.in_(kinds))
        .exists()
    )
    query = (
        select(DeploymentRow.model, Run.isl, Run.osl)
        .join(DeploymentRow, Run.deployment_id == DeploymentRow.id)
        .where(has_level, Run.deleted_at.is_(None))
        .distinct()
    )
    with session_scope(engine, write=False) as session:
        rows = session.execute(query).all()
    return sorted(
        ((model, isl, osl) for model, isl, osl in rows),
        key=lambda row: (row[0], row[1] is None, row[1] or 0, row[2] is None, row[2] or 0),
    )
