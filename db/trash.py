"""The trash: deleted runs, scenarios and model configs stay, hidden from every read, for a
stated time (TRASH_DAYS, 30 by default: CAPPLAN_TRASH_DAYS) with an undo; the purge after that
deletes them for good. Undo, purge and a price change's undo are recorded in the audit trail."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from db import audit
from db.engine import session_scope, write_transaction
from db.models import AuditEntry, ModelConfig, Run, Scenario
from db.prices import replace_prices
from db.repository import purge_run
from errors import InputError
from hardware.prices import PriceEntry
from team.roles import Action, Actor

TrashKind = Literal["run", "scenario", "model"]
TRASH_KINDS: tuple[TrashKind, ...] = ("run", "scenario", "model")
DEFAULT_TRASH_DAYS = 30


def trash_days() -> int:
    """How long a delete can be undone: CAPPLAN_TRASH_DAYS (1 to 3650), else 30 days."""
    text = os.environ.get("CAPPLAN_TRASH_DAYS", "").strip()
    if not text:
        return DEFAULT_TRASH_DAYS
    if not text.isdigit() or not 1 <= int(text) <= 3650:
        raise InputError(
            "must be a whole number of days, 1 to 3650", field="CAPPLAN_TRASH_DAYS", value=text
        )
    return int(text)


@dataclass(frozen=True, slots=True)
class TrashItem:
    """One thing in the trash: its kind and key (a run's id, a scenario's or model's name), what
    it is, who deleted it when, and when the purge takes it (UTC)."""

    kind: TrashKind
    key: str
    label: str
    deleted_at: datetime
    deleted_by: str | None
    purge_at: datetime
    owner: str | None = None


def list_trash(engine: Engine) -> list[TrashItem]:
    """Everything in the trash, most recently deleted first."""
    keep = timedelta(days=trash_days())
    items: list[TrashItem] = []
    with session_scope(engine, write=False) as session:
        for run in session.scalars(select(Run).where(Run.deleted_at.isnot(None))):
            label = run.label or run.origin_file or f"run {run.id}"
            items.append(_item("run", str(run.id), label, (run.deleted_at, run.deleted_by), keep))
        for row in session.scalars(select(Scenario).where(Scenario.deleted_at.isnot(None))):
            items.append(
                _item(
                    "scenario",
                    row.name,
                    row.name,
                    (row.deleted_at, row.deleted_by),
                    keep,
                    owner=row.created_by,
                )
            )
        for cfg in session.scalars(select(ModelConfig).where(ModelConfig.deleted_at.isnot(None))):
            deleted = (cfg.deleted_at, cfg.deleted_by)
            items.append(_item("model", cfg.name, cfg.source, deleted, keep))
    return sorted(items, key=lambda item: item.deleted_at, reverse=True)


def _item(
    kind: TrashKind,
    key: str,
    label: str,
    deleted: tuple[datetime | None, str | None],
    keep: timedelta,
    *,
    owner: str | None = None,
) -> TrashItem:
    deleted_at, by = deleted
    assert deleted_at is not None  # the queries select deleted rows only
    return TrashItem(kind, key, label, deleted_at, by, deleted_at + keep, owner)


def undo_delete(engine: Engine, kind: TrashKind, key: str, *, actor: Actor) -> str:
    """Bring a deleted run, scenario or model back (whoever may delete it may); returns one line
    for people; InputError when it is not in the trash."""

    def undo(session: Session) -> str:
        row = _trashed(session, kind, key)
        if isinstance(row, Run):
            actor.require(Action.DELETE_RUNS)
        elif isinstance(row, Scenario):
            actor.require_change(row.created_by, f"scenario {row.name!r}")
            if (
                session.scalar(
                    select(Scenario.id).where(
                        Scenario.name == row.name,
                        Scenario.deleted_at.is_(None),
                        Scenario.id != row.id,
                    )
                )
                is not None
            ):
                raise InputError(f"a scenario named {row.name!r} exists again", field="name")
        else:
            actor.require(Action.REMOVE_MODELS)
        was = {
            "deleted_at": row.deleted_at.isoformat() if row.deleted_at else None,
            "deleted_by": row.deleted_by,
        }
        row.deleted_at, row.deleted_by = None, None
        said = f"{kind} {key} brought back from the trash"
        audit.record(session, actor, (kind, "undeleted", f"{kind} {key}"), (was, None), said)
        return said

    return write_transaction(engine, undo)


def _trashed(session: Session, kind: TrashKind, key: str) -> Run | Scenario | ModelConfig:
    row: Run | Scenario | ModelConfig | None
    if kind == "run":
        if not key.strip().isdigit():
            raise InputError("a run is named by its id", field="run", value=key)
        row = session.get(Run, int(key), with_for_update=True)
    elif kind == "scenario":
        query = select(Scenario).where(Scenario.name == key.strip())
        row = session.scalar(query.where(Scenario.deleted_at.isnot(None)).with_for_update())
    elif kind == "model":
        row = session.scalar(select(ModelConfig).where(ModelConfig.name == key).with_for_update())
    else:
        raise InputError(f"expected one of {list(TRASH_KINDS)}", field="kind", value=kind)
    if row is None or row.deleted_at is None:
        raise InputError(f"no {kind} {key!r} in the trash", field=kind, value=key)
    return row


def purge_trash(engine: Engine, *, actor: Actor, now: datetime | None = None) -> list[str]:
    """Delete for good what has been in the trash longer than trash_days(); each purge recorded.
    Returns what went, one line each."""
    actor.require(Action.PURGE_TRASH)
    cutoff = (now or datetime.now(UTC)) - timedelta(days=trash_days())

    def purge(session: Session) -> list[str]:
        gone: list[str] = []
        for run in session.scalars(select(Run).where(Run.deleted_at < cutoff)).all():
            deleted = (run.deleted_at, run.deleted_by)
            gone.append(_purged(session, actor, ("run", str(run.id)), deleted))
            purge_run(session, run.id)
        old: list[tuple[TrashKind, Scenario | ModelConfig]] = [
            *(
                ("scenario", row)
                for row in session.scalars(select(Scenario).where(Scenario.deleted_at < cutoff))
            ),
            *(
                ("model", row)
                for row in session.scalars(
                    select(ModelConfig).where(ModelConfig.deleted_at < cutoff)
                )
            ),
        ]
        for kind, row in old:
            deleted = (row.deleted_at, row.deleted_by)
            gone.append(_purged(session, actor, (kind, row.name), deleted))
            session.delete(row)
        return gone

    return write_transaction(engine, purge)


def _purged(
    session: Session,
    actor: Actor,
    what: tuple[str, str],
    deleted: tuple[datetime | None, str | None],
) -> str:
    kind, key = what
    at, by = deleted
    said = f"{kind} {key} purged: in the trash over {trash_days()} days"
    was = {"deleted_at": at.isoformat() if at else None, "deleted_by": by}
    audit.record(session, actor, (kind, "purged", f"{kind} {key}"), (was, None), said)
    return said


def undo_price_change(engine: Engine, entry_id: int, *, actor: Actor) -> int:
    """Put back the catalog a recorded price change replaced (an admin's; itself recorded as
    'undone'); returns how many prices are stored. InputError when the entry is no price change."""
    with session_scope(engine, write=False) as session:
        entry = session.get(AuditEntry, entry_id)
        before = None if entry is None or entry.kind != "prices" else entry.before
    if not isinstance(before, list):
        raise InputError(
            f"audit entry {entry_id} is not a price change", field="entry", value=entry_id
        )
    entries = [PriceEntry(**row) for row in before]
    return replace_prices(engine, entries, actor=actor, why="undone")
