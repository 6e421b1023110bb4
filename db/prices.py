"""The stored price catalog: read it, count it, see when it last changed, replace it whole."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, func, insert, select, text
from sqlalchemy.orm import Session

from db import audit
from db.engine import session_scope, write_transaction
from db.limits import check_fits
from db.models import Price
from errors import InputError
from hardware.prices import PriceEntry
from team.roles import Action, Actor

_PRICE_FIELDS = tuple(field.name for field in fields(PriceEntry))


def list_prices(engine: Engine) -> list[PriceEntry]:
    """The stored price catalog, in the order it was saved."""
    with session_scope(engine, write=False) as session:
        rows = session.scalars(select(Price).order_by(Price.id)).all()
    return [_price_entry(row) for row in rows]


def count_prices(engine: Engine) -> int:
    """How many price entries the catalog holds."""
    with session_scope(engine, write=False) as session:
        return session.scalar(select(func.count(Price.id))) or 0


def prices_updated_at(engine: Engine) -> datetime | None:
    """When the stored catalog was last replaced (UTC), or None when it is empty."""
    with session_scope(engine, write=False) as session:
        return session.scalar(select(func.max(Price.updated_at)))


def replace_prices(
    engine: Engine, entries: Iterable[PriceEntry], *, actor: Actor, why: str = "changed"
) -> int:
    """Replace the whole catalog with entries in one transaction (an admin's), the catalog
    before and after in the audit trail (undo puts the one before back); returns how many were
    stored. `why`: changed, restored (the shipped catalog), undone."""
    actor.require(Action.CHANGE_PRICES)
    now = datetime.now(UTC)
    entries = list(entries)
    for number, entry in enumerate(entries, start=1):
        if problem := entry.problem():
            field, reason = problem
            where = f"prices row {number} ({entry.provider} {entry.sku})"
            raise InputError(f"{where}: {reason}", field=field, value=getattr(entry, field))
    rows = [_price_row(entry, now) for entry in entries]
    for row in rows:
        check_fits(Price.__table__, row, field_prefix="prices.")

    def replace(session: Session) -> int:
        if session.get_bind().dialect.name == "postgresql":
            # Two replaces at once would each delete only the rows they can see and both
            # insert: the lock makes the second wait for the first (SQLite: BEGIN IMMEDIATE).
            session.execute(text("LOCK TABLE prices IN SHARE ROW EXCLUSIVE MODE"))
        before = [price_json(_price_entry(row)) for row in session.scalars(select(Price))]
        session.execute(delete(Price))
        if rows:
            session.execute(insert(Price), rows)
        after = [price_json(entry) for entry in entries]
        said = f"price catalog {why}: {catalog_change(before, after)}"
        audit.record(session, actor, ("prices", why, "price catalog"), (before, after), said)
        return len(rows)

    return write_transaction(engine, replace)


def _price_row(entry: PriceEntry, now: datetime) -> dict[str, object]:
    return {**{name: getattr(entry, name) for name in _PRICE_FIELDS}, "updated_at": now}


def price_json(entry: PriceEntry) -> dict[str, object]:
    """A price entry as the audit trail keeps it (every field, by name)."""
    return {name: getattr(entry, name) for name in _PRICE_FIELDS}


def catalog_change(before: list[dict[str, object]], after: list[dict[str, object]]) -> str:
    """'2 added, 1 changed, 0 removed (28 -> 29 prices)': rows keyed by provider, SKU,
    pricing type and region."""

    def key(row: dict[str, object]) -> tuple[object, ...]:
        return (row["provider"], row["sku"], row["gpu"], row["pricing_type"], row["region"])

    old = {key(row): row for row in before}
    new = {key(row): row for row in after}
    added = len(new.keys() - old.keys())
    removed = len(old.keys() - new.keys())
    changed = sum(1 for k in new.keys() & old.keys() if new[k] != old[k])
    return (
        f"{added} added, {changed} changed, {removed} removed "
        f"({len(before)} -> {len(after)} prices)"
    )


def _price_entry(row: Price) -> PriceEntry:
    return PriceEntry(*(getattr(row, name) for name in _PRICE_FIELDS))
