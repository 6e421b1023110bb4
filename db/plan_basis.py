"""What a recorded plan rested on, checked now: the runs it used (deleted since, in the trash,
or stored with other content) and its prices (changed in the catalog or gone), so a report can
say "these measurements, these prices, as of then" and what has moved since."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Engine, select

from db.engine import session_scope
from db.models import Price, Run
from errors import PlanningError
from hardware.prices import PriceEntry

if TYPE_CHECKING:  # db.scenarios imports prices_sha256 from here
    from db.scenarios import PlanRecord


@dataclass(frozen=True, slots=True)
class BasisNow:
    """How a recorded plan's basis stands now: one line per run or price that moved, and
    whether the record kept hashes at all (records made before migration 0006 did not)."""

    moved: tuple[str, ...]
    hashed: bool

    @property
    def unchanged(self) -> bool:
        """True when every run and price it used is as it was."""
        return not self.moved


def prices_sha256(entries: tuple[PriceEntry, ...]) -> str:
    """The sha256 of a plan's prices (each entry's fields, in order)."""
    text = json.dumps([asdict(entry) for entry in entries], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def refuse_missing_runs(engine: Engine, record: PlanRecord) -> None:
    """PlanningError naming the runs a record used that were deleted since."""
    wanted = list(record.basis_run_ids)
    with session_scope(engine, write=False) as session:
        query = select(Run.id).where(Run.id.in_(wanted), Run.deleted_at.is_(None))
        found = set(session.scalars(query).all())
    missing = [run_id for run_id in wanted if run_id not in found]
    if missing:
        raise PlanningError(
            f"plan record {record.record_id} cannot be regenerated: run(s) "
            f"{', '.join(map(str, missing))} it used were deleted since; undo the delete (while "
            "in the trash), re-import them, or record a new plan"
        )


def basis_now(engine: Engine, record: PlanRecord) -> BasisNow:
    """Each run the record used: gone, in the trash, or another content hash than recorded;
    each price: no longer in the catalog at the recorded value."""
    wanted = sorted({*record.run_ids, *record.basis_run_ids})
    with session_scope(engine, write=False) as session:
        rows = session.execute(
            select(Run.id, Run.content_sha256, Run.deleted_at, Run.deleted_by).where(
                Run.id.in_(wanted)
            )
        ).all()
        catalog = {_price_key(row) for row in session.scalars(select(Price))}
    found = {row[0]: row for row in rows}
    recorded = dict(record.run_hashes)
    moved: list[str] = []
    for run_id in wanted:
        row = found.get(run_id)
        if row is None:
            moved.append(f"run {run_id}: deleted for good since")
        elif row[2] is not None:
            moved.append(f"run {run_id}: deleted by {row[3]} on {row[2]:%Y-%m-%d} (in the trash)")
        elif run_id in recorded and recorded[run_id] != row[1]:
            moved.append(f"run {run_id}: its content changed since")
    for entry in record.prices_used:
        if _entry_key(entry) not in catalog:
            moved.append(
                f"price {entry.provider} {entry.gpu} {entry.pricing_type}: "
                f"${entry.usd_per_gpu_hour:.2f}/GPU-h then, not in the catalog at that now"
            )
    return BasisNow(tuple(moved), bool(record.run_hashes))


def _price_key(row: Price) -> tuple[object, ...]:
    return (row.provider, row.sku, row.gpu, row.pricing_type, row.region, row.usd_per_gpu_hour)


def _entry_key(entry: PriceEntry) -> tuple[object, ...]:
    return (
        entry.provider,
        entry.sku,
        entry.gpu,
        entry.pricing_type,
        entry.region,
        entry.usd_per_gpu_hour,
    )
