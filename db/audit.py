"""The audit trail: one row per change, appended by the change's own transaction (`record`), read
by the Audit page and `capplan audit` (`audit_entries`). Nothing here updates or deletes a row."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from db.engine import session_scope
from db.models import AuditEntry
from team.roles import Actor

MAX_AUDIT_ROWS = 10_000  # one read's most rows (the page shows the newest first)


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One change as recorded: when (UTC), who and in which role, what kind of thing, what was
    done to which one, the value before and after (JSON), and one line for people."""

    entry_id: int
    at: datetime
    actor: str
    role: str
    kind: str
    action: str
    target: str
    before: Any
    after: Any
    summary: str


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """Which entries to read: one person, one kind, a time span (UTC, both ends included)."""

    person: str | None = None
    kind: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def record(
    session: Session,
    actor: Actor,
    change: tuple[str, str, str],
    values: tuple[Any, Any],
    summary: str,
) -> None:
    """Append one entry in the caller's transaction: change is (kind, action, target), values
    (before, after) as JSON."""
    kind, action, target = change
    before, after = values
    session.add(
        AuditEntry(
            at=datetime.now(UTC),
            actor=actor.name,
            role=actor.role.value,
            kind=kind,
            action=action,
            target=target,
            before=before,
            after=after,
            summary=summary,
        )
    )


def audit_entries(
    engine: Engine, filters: AuditFilter | None = None, limit: int = MAX_AUDIT_ROWS
) -> list[AuditRecord]:
    """The entries matching filters, newest first, at most `limit`."""
    filters = filters or AuditFilter()
    query = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(min(limit, MAX_AUDIT_ROWS))
    if filters.person:
        query = query.where(AuditEntry.actor == filters.person.strip().lower())
    if filters.kind:
        query = query.where(AuditEntry.kind == filters.kind)
    if filters.since is not None:
        query = query.where(AuditEntry.at >= filters.since)
    if filters.until is not None:
        query = query.where(AuditEntry.at <= filters.until)
    with session_scope(engine, write=False) as session:
        rows = session.scalars(query).all()
        return [
            AuditRecord(
                r.id,
                r.at,
                r.actor,
                r.role,
                r.kind,
                r.action,
                r.target,
                r.before,
                r.after,
                r.summary,
            )
            for r in rows
        ]


def audit_people_and_kinds(engine: Engine) -> tuple[list[str], list[str]]:
    """Everyone who changed something and every kind changed (the page's filter choices)."""
    with session_scope(engine, write=False) as session:
        people = session.scalars(select(AuditEntry.actor).distinct()).all()
        kinds = session.scalars(select(AuditEntry.kind).distinct()).all()
    return sorted(people), sorted(kinds)
