"""The GPU price catalog: $/GPU-hour quotes with provider, SKU, pricing type, source, as-of date
and confidence, read from the shipped CSV (hardware/data/gpu_prices.csv) or a user's copy.
The planner prices plans with these entries (planner/inputs/prices.py) and the store keeps the
editable catalog (db/prices.py); both read the types here.

Rows whose price is a range ("3.50-5.00") are not usable as a price; they are returned apart
with the reason, so the UI can show why they are missing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from dataclasses import astuple, dataclass, replace
from pathlib import Path

from errors import InputError
from hardware.gpus import gpu_catalog

DEFAULT_CATALOG = Path(__file__).with_name("data") / "gpu_prices.csv"
# The design notes' example prices (Nebius on-demand: H100 $2.95, H200 $3.50 per GPU-hour) are the
# defaults when a catalog has no is_default column: one quoted provider keeps plans comparable.
DEFAULT_PROVIDER = "Nebius"
DEFAULT_PRICING_TYPE = "on_demand"
RESERVED_PREFIX = "reserved"  # reserved, reserved_1y, reserved_3y
# An all-in owning cost per GPU-hour (InferenceX's tco_own_hyperscaler, tco_own_neocloud): a lens
# a budget reads owning against, never a price anyone rents at.
LENS_PREFIX = "tco_"
_CONFIDENCE_RANK = {"high": 0, "medium": 1, "low": 2}
_REQUIRED = ("provider", "instance_or_sku", "gpu", "pricing_type", "usd_per_gpu_hour")
_TRUE = {"1", "true", "yes", "y"}
# Far above any quote (a B200 rents for about $6 per GPU-hour), so a typo or an attack such as
# 1e308 is refused rather than priced; scenarios and the Prices page allow the same.
MAX_USD_PER_GPU_HOUR = 1e4
MAX_GPUS_PER_INSTANCE = 1024  # an NVL72 rack is 72; a pod of racks fits


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

    def problem(self) -> tuple[str, str] | None:
        """(field, reason) when a number of this quote is outside what a real quote can be."""
        if not 1 <= self.gpus_per_instance <= MAX_GPUS_PER_INSTANCE:
            return "gpus_per_instance", f"must be 1 to {MAX_GPUS_PER_INSTANCE}"
        if not 0 < self.usd_per_gpu_hour <= MAX_USD_PER_GPU_HOUR:
            return "usd_per_gpu_hour", f"must be above 0 and at most {MAX_USD_PER_GPU_HOUR:g}"
        instance = self.usd_per_instance_hour
        limit = MAX_USD_PER_GPU_HOUR * self.gpus_per_instance
        if instance is not None and not 0 < instance <= limit:
            return "usd_per_instance_hour", f"must be above 0 and at most {limit:g}"
        return None

    @property
    def is_lens(self) -> bool:
        """True for an owning-cost lens (LENS_PREFIX), which no fleet is rented at."""
        return self.pricing_type.startswith(LENS_PREFIX)

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
    """Usable price rows of a catalog CSV (default: the shipped hardware/data/gpu_prices.csv)."""
    return _read_catalog(path or DEFAULT_CATALOG)[0]


def skipped_rows(path: Path | None = None) -> list[SkippedPriceRow]:
    """Rows of a catalog CSV that were left out (price ranges, blanks), with the reason."""
    return _read_catalog(path or DEFAULT_CATALOG)[1]


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
            if problem := result.problem():  # a number no quote could be: left out, as a range is
                field, reason = problem
                value = row.get(field) or ""
                result = SkippedPriceRow(
                    line, result.provider, result.sku, result.gpu, value, f"{field} {reason}"
                )
                skipped.append(result)
                continue
            entries.append(result)
        else:
            skipped.append(result)
    if not has_default_column:
        entries = _fallback_defaults(entries)
    return entries, skipped


def _fallback_defaults(entries: list[PriceEntry]) -> list[PriceEntry]:
    """For a GPU the default provider does not quote (B200, GB200 in 2026): its best on-demand
    quote as the default, by confidence, then the latest date, then the lowest price."""
    has_default = {e.gpu for e in entries if e.is_default}
    best: dict[str, PriceEntry] = {}
    for entry in entries:
        if entry.gpu in has_default or entry.pricing_type != DEFAULT_PRICING_TYPE:
            continue
        held = best.get(entry.gpu)
        if held is None or quote_rank(entry) < quote_rank(held):
            best[entry.gpu] = entry
    chosen = {id(e) for e in best.values()}
    return [replace(e, is_default=True) if id(e) in chosen else e for e in entries]


def quote_rank(entry: PriceEntry) -> tuple[int, str, float]:
    """How a quote sorts among others of its GPU: the most confident, then the latest, then the
    cheapest first."""
    trust = _CONFIDENCE_RANK.get(entry.confidence.strip().lower(), len(_CONFIDENCE_RANK))
    dated = "".join(ch for ch in entry.as_of if ch.isdigit() or ch == "-")[:10]
    # Latest first: negate the date's characters so a plain ascending sort prefers it.
    return trust, "".join(chr(255 - ord(ch)) for ch in dated.ljust(10, "0")), entry.usd_per_gpu_hour


def _entry(
    row: dict[str, str], line: int, name: str, has_default_column: bool
) -> PriceEntry | SkippedPriceRow:
    def get(column: str) -> str:
        return (row.get(column) or "").strip()

    raw_price = get("usd_per_gpu_hour")
    gpu = _canonical_gpu(get("gpu"))
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
    if not 0 < value <= MAX_USD_PER_GPU_HOUR:
        return f"price must be > 0 and at most {MAX_USD_PER_GPU_HOUR:g} USD per GPU-hour ({raw})"
    return None


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


def _canonical_gpu(name: str) -> str:
    """The GPU catalog's name for any spelling it knows, else the name as given."""
    spec = gpu_catalog().find(name)
    return spec.gpu if spec is not None else name.strip()
