"""GPU price catalog: the shipped CSV of $/GPU-hour quotes with source, date and confidence.

Rows whose price is a range ("3.50-5.00") are not usable as a price; they are returned apart
with the reason, so the UI can show why they are missing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Sequence
from dataclasses import astuple, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from errors import InputError, PlanningError
from planner.curves import canonical_gpu
from planner.scenario import PricingMode

if TYPE_CHECKING:
    from planner.scenario import Scenario

DEFAULT_CATALOG = Path(__file__).parent / "data" / "gpu_prices.csv"
# The DESIGN example prices (Nebius on-demand: H100 $2.95, H200 $3.50 per GPU-hour) are the
# defaults when a catalog has no is_default column: one quoted provider keeps plans comparable.
DEFAULT_PROVIDER = "Nebius"
DEFAULT_PRICING_TYPE = "on_demand"
RESERVED_PREFIX = "reserved"  # reserved, reserved_1y, reserved_3y
_REQUIRED = ("provider", "instance_or_sku", "gpu", "pricing_type", "usd_per_gpu_hour")
_TRUE = {"1", "true", "yes", "y"}


@dataclass(frozen=True, slots=True)
class PriceEntry:
    """One price quote for one GPU SKU."""

    provider: str
    sku: str
    gpu: str
    gpus_per_instance: int
    pricing_type: str
    usd_per_gpu_hour: float
    usd_per_instance_hour: float | None
    region: str
    as_of: str
    source: str
    confidence: str
    notes: str
    is_default: bool

    def describe(self) -> str:
        """One-line source description: provider, SKU, pricing type and date."""
        return f"{self.provider} {self.sku} ({self.pricing_type}, as of {self.as_of})"


@dataclass(frozen=True, slots=True)
class SkippedPriceRow:
    """A catalog row that is not usable as a price, and why."""

    line: int
    provider: str
    sku: str
    gpu: str
    value: str
    reason: str


def load_catalog_csv(path: Path | None = None) -> list[PriceEntry]:
    """Usable price rows of a catalog CSV (default: the shipped planner/data/gpu_prices.csv)."""
    return _read_catalog(path or DEFAULT_CATALOG)[0]


def skipped_rows(path: Path | None = None) -> list[SkippedPriceRow]:
    """Rows of a catalog CSV that were left out (price ranges, blanks), with the reason."""
    return _read_catalog(path or DEFAULT_CATALOG)[1]


def default_price(catalog: list[PriceEntry] | tuple[PriceEntry, ...], gpu: str) -> PriceEntry:
    """The catalog's default price for a GPU; PlanningError when it has none."""
    wanted = canonical_gpu(gpu)
    for entry in catalog:
        if entry.gpu == wanted and entry.is_default:
            return entry
    known = sorted({entry.gpu for entry in catalog if entry.is_default})
    raise PlanningError(
        f"no default price for GPU {wanted!r} in the price catalog (defaults exist for "
        f"{', '.join(known) or 'no GPU'}); set pricing: {{{wanted}: USD_PER_GPU_HOUR}} in the "
        "scenario or mark a catalog row is_default"
    )


def reserved_price(
    catalog: list[PriceEntry] | tuple[PriceEntry, ...], gpu: str
) -> PriceEntry | None:
    """The reserved quote of the default price's provider for a GPU (None when there is none).

    Only the default provider's own reserved quote is used: a discount from another provider
    would compare prices that were never offered together.
    """
    wanted = canonical_gpu(gpu)
    default = next((e for e in catalog if e.gpu == wanted and e.is_default), None)
    if default is None:
        return None
    quotes = [
        entry
        for entry in catalog
        if entry.gpu == default.gpu
        and entry.provider == default.provider
        and entry.pricing_type.startswith(RESERVED_PREFIX)
    ]
    return min(quotes, key=lambda entry: entry.usd_per_gpu_hour) if quotes else None


def other_reserved_quotes(
    catalog: list[PriceEntry] | tuple[PriceEntry, ...], gpu: str
) -> list[PriceEntry]:
    """Reserved quotes for a GPU from any provider, cheapest first (to point users at)."""
    wanted = canonical_gpu(gpu)
    quotes = [e for e in catalog if e.gpu == wanted and e.pricing_type.startswith(RESERVED_PREFIX)]
    return sorted(quotes, key=lambda entry: entry.usd_per_gpu_hour)


def catalog_version(entries: list[PriceEntry] | tuple[PriceEntry, ...]) -> str:
    """Short sha256 of the sorted catalog content, so a saved plan records which catalog it used."""
    rows = sorted(repr(astuple(entry)) for entry in entries)
    return hashlib.sha256("\n".join(rows).encode("utf-8")).hexdigest()[:12]


def _read_catalog(path: Path) -> tuple[list[PriceEntry], list[SkippedPriceRow]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read price catalog: {exc}", file=str(path)) from exc
    return parse_catalog(text, str(path))


def parse_catalog(text: str, name: str) -> tuple[list[PriceEntry], list[SkippedPriceRow]]:
    """Parse catalog CSV text (`#` lines are comments): usable entries and skipped rows."""
    numbered = [
        (number, line)
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not numbered:
        raise InputError("price catalog has no header row", file=name)
    reader = csv.DictReader(io.StringIO("\n".join(line for _, line in numbered)))
    missing = [column for column in _REQUIRED if column not in (reader.fieldnames or [])]
    if missing:
        raise InputError("price catalog lacks columns", file=name, field=missing[0], value=missing)
    has_default_column = "is_default" in (reader.fieldnames or [])
    entries: list[PriceEntry] = []
    skipped: list[SkippedPriceRow] = []
    # csv may join physical lines inside quotes; line_num tracks the reader's own position.
    for row in reader:
        line = numbered[min(reader.line_num, len(numbered)) - 1][0]
        result = _entry(row, line, name, has_default_column)
        if isinstance(result, PriceEntry):
            entries.append(result)
        else:
            skipped.append(result)
    return entries, skipped


def _entry(
    row: dict[str, str], line: int, name: str, has_default_column: bool
) -> PriceEntry | SkippedPriceRow:
    def get(column: str) -> str:
        return (row.get(column) or "").strip()

    raw_price = get("usd_per_gpu_hour")
    gpu = canonical_gpu(get("gpu"))
    reason = _price_problem(raw_price)
    if reason:
        sku = get("instance_or_sku")
        return SkippedPriceRow(line, get("provider"), sku, gpu, raw_price, reason)
    provider, pricing_type = get("provider"), get("pricing_type")
    if has_default_column:
        is_default = get("is_default").lower() in _TRUE
    else:
        is_default = provider == DEFAULT_PROVIDER and pricing_type == DEFAULT_PRICING_TYPE
    return PriceEntry(
        provider=provider,
        sku=get("instance_or_sku"),
        gpu=gpu,
        gpus_per_instance=_int(get("gpus_per_instance"), 1, name, line),
        pricing_type=pricing_type,
        usd_per_gpu_hour=float(raw_price),
        usd_per_instance_hour=_optional_float(get("usd_per_instance_hour"), name, line),
        region=get("region"),
        as_of=get("as_of"),
        source=get("source"),
        confidence=get("confidence"),
        notes=get("notes"),
        is_default=is_default,
    )


def _price_problem(raw: str) -> str | None:
    if not raw:
        return "no per-GPU price given"
    try:
        value = float(raw)
    except ValueError:
        if "-" in raw:
            return f"a price range ({raw}), not a single price"
        return f"not a number ({raw!r})"
    if not math.isfinite(value):
        return f"not a finite price ({raw})"
    return None if value > 0 else f"price must be > 0 USD per GPU-hour ({raw})"


def _int(raw: str, default: int, name: str, line: int) -> int:
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise InputError(
            f"line {line}: expected a whole number", file=name, field="gpus_per_instance", value=raw
        ) from exc


def _optional_float(raw: str, name: str, line: int) -> float | None:
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError as exc:
        raise InputError(
            f"line {line}: expected a number", file=name, field="usd_per_instance_hour", value=raw
        ) from exc


@dataclass(frozen=True, slots=True)
class ScenarioPrice:
    """The prices one GPU is planned at: on-demand, reserved (None: none known), and sources."""

    usd_per_gpu_hour: float
    source: str
    entry: PriceEntry | None
    reserved_usd_per_gpu_hour: float | None = None
    reserved_note: str | None = None  # where the reserved price came from, or why there is none
    reserved_entry: PriceEntry | None = None


def scenario_price(scenario: Scenario, prices: Sequence[PriceEntry], gpu: str) -> ScenarioPrice:
    """On-demand price from the scenario or the catalog default; reserved when the pricing
    mode needs one (the scenario's, else the default provider's own quote, else none)."""
    on_demand = scenario.on_demand_price(gpu)
    if on_demand is not None:
        base = _typed_price(on_demand, prices, gpu)
    else:
        entry = default_price(tuple(prices), gpu)
        base = ScenarioPrice(entry.usd_per_gpu_hour, f"catalog default: {entry.describe()}", entry)
    if scenario.options.pricing_mode is PricingMode.ON_DEMAND:
        return base
    return _with_reserved(base, scenario.reserved_price(gpu), tuple(prices), gpu)


def _typed_price(price: float, prices: Sequence[PriceEntry], gpu: str) -> ScenarioPrice:
    """A price the scenario types: cited as the catalog entry it equals (source and as-of date
    kept), else as typed, beside the catalog default it replaces."""
    quotes = [
        e
        for e in prices
        if canonical_gpu(e.gpu) == gpu
        and e.pricing_type == DEFAULT_PRICING_TYPE
        and abs(e.usd_per_gpu_hour - price) < 1e-9
    ]
    if quotes:
        entry = min(quotes, key=lambda e: not e.is_default)  # the default quote when it matches
        return ScenarioPrice(price, f"scenario pricing, the catalog's {entry.describe()}", entry)
    try:
        default = default_price(tuple(prices), gpu)
    except PlanningError:
        return ScenarioPrice(price, "scenario pricing (typed; no catalog price for this GPU)", None)
    instead = f"${default.usd_per_gpu_hour:g}, {default.describe()}"
    return ScenarioPrice(price, f"scenario pricing (typed; catalog default {instead})", None)


def _with_reserved(
    base: ScenarioPrice, given: float | None, catalog: tuple[PriceEntry, ...], gpu: str
) -> ScenarioPrice:
    """The reserved price: the scenario's, else the catalog default provider's, else none."""
    if given is not None:
        note = f"{gpu}: reserved ${given:g}/GPU-hour from the scenario pricing"
        return replace(base, reserved_usd_per_gpu_hour=given, reserved_note=note)
    entry = reserved_price(catalog, gpu)
    if entry is not None:
        note = f"{gpu}: reserved ${entry.usd_per_gpu_hour:g}/GPU-hour, {entry.describe()}"
        return replace(
            base,
            reserved_usd_per_gpu_hour=entry.usd_per_gpu_hour,
            reserved_note=note,
            reserved_entry=entry,
        )
    others = ", ".join(
        f"{q.provider} ${q.usd_per_gpu_hour:g} ({q.pricing_type})"
        for q in other_reserved_quotes(catalog, gpu)[:3]
    )
    note = (
        f"{gpu}: no reserved price from the price's own provider, so reserved GPUs are priced "
        f"on-demand (no discount invented)"
        + (f"; the catalog quotes other providers: {others}" if others else "")
        + f". Set pricing: {{{gpu}: {{on_demand: USD, reserved: USD}}}} to use one"
    )
    return replace(base, reserved_note=note)
