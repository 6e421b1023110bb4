"""The prices a report states: per GPU the $/GPU-hour planned, its source, kind (on-demand,
reserved...), how many GPUs the quote is for, its age, and flags for quotes older than six months
or of kinds that do not compare (an 8-GPU node quote beside a 1-GPU VM, on-demand beside
reserved).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from errors import PlanningError
from hardware.prices import PriceEntry
from planner.analysis.capacity import Plan
from planner.inputs.prices import scenario_price
from reports.names import gpu_name

STALE_MONTHS = 6
_DATE = re.compile(r"(20\d\d)(?:-(\d\d))?(?:-(\d\d))?")


@dataclass(frozen=True, slots=True)
class PriceRow:
    """The price each GPU was costed at, where it came from, of what kind and how old."""

    gpu: str
    usd_per_gpu_hour: float
    source: str  # provider, SKU, kind and date, or 'typed in the scenario'
    as_of: str
    origin: str  # "scenario" (typed in) or "catalog"
    kind: str = ""  # on_demand, reserved_1y, ... ('' when typed)
    gpus_per_quote: int | None = None  # GPUs the quoted instance has (None when typed)
    age_months: int | None = None  # months between the quote's date and the report
    reference: str = ""  # the quote's own source (URL or repository + path)
    flags: tuple[str, ...] = ()


def price_rows(plan: Plan, today: datetime) -> tuple[PriceRow, ...]:
    """One row per GPU the plan prices, with its flags (each row knows about the others)."""
    rows = [_row(plan, gpu, today) for gpu in sorted({o.gpu for o in plan.options})]
    found = [row for row in rows if row is not None]
    return tuple(found)


def _row(plan: Plan, gpu: str, today: datetime) -> PriceRow | None:
    try:
        price = scenario_price(plan.scenario, plan.prices_used, gpu)
    except PlanningError:
        return None
    entry = price.entry
    if entry is None:
        typed = "typed in the scenario (no catalog quote)"
        return PriceRow(gpu, price.usd_per_gpu_hour, typed, "not dated", "scenario")
    origin = "scenario" if plan.scenario.on_demand_price(gpu) is not None else "catalog"
    age = age_months(entry.as_of, today.date())
    return PriceRow(
        gpu=gpu,
        usd_per_gpu_hour=price.usd_per_gpu_hour,
        source=entry.describe(),
        as_of=entry.as_of,
        origin=origin,
        kind=entry.pricing_type,
        gpus_per_quote=entry.gpus_per_instance,
        age_months=age,
        reference=entry.source,
        flags=tuple(_age_flags(entry, age)),
    )


def age_months(as_of: str, today: date) -> int | None:
    """Whole months from a quote's date ('2026-05-18', '2026-05', 'late 2024', '2026') to today;
    a year alone counts from its middle. None when no year is given."""
    match = _DATE.search(as_of)
    if match is None:
        return None
    year = int(match[1])
    month = int(match[2]) if match[2] else (12 if "late" in as_of.lower() else 7)
    return max(0, (today.year - year) * 12 + today.month - month)


def _age_flags(entry: PriceEntry, age: int | None) -> list[str]:
    gpu = gpu_name(entry.gpu)
    if age is None:
        return [f"{gpu}: the quote has no date ({entry.as_of or 'blank'}); check it is current"]
    if age > STALE_MONTHS:
        return [
            f"{gpu}: the quote is {age} months old (as of {entry.as_of}), older than "
            f"{STALE_MONTHS} months; check the current price"
        ]
    return []


def mix_flags(rows: Sequence[PriceRow]) -> list[str]:
    """One line per pair of GPUs whose quotes are of different kinds or instance sizes (an 8-GPU
    node beside a 1-GPU VM, on-demand beside reserved): their options do not compare evenly."""
    flags = []
    for index, row in enumerate(rows):
        for other in rows[index + 1 :]:
            pair = f"{gpu_name(row.gpu)} and {gpu_name(other.gpu)}"
            sizes = row.gpus_per_quote, other.gpus_per_quote
            if sizes[0] and sizes[1] and sizes[0] != sizes[1]:
                flags.append(
                    f"Mixed quotes: {pair} are priced from a {sizes[0]}-GPU and a {sizes[1]}-GPU "
                    "instance; node and VM prices may not compare"
                )
            if row.kind and other.kind and row.kind != other.kind:
                flags.append(
                    f"Mixed kinds: {pair} are priced {row.kind.replace('_', ' ')} and "
                    f"{other.kind.replace('_', ' ')}; the options do not compare on equal terms"
                )
    return flags
