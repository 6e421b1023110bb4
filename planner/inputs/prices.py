"""Prices for a plan: the catalog's default and reserved quotes for a GPU, and the price a
scenario plans with (typed in the scenario, or the catalog's default with its source). The
catalog itself (PriceEntry, the CSV reader, its version) is hardware/prices.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from errors import PlanningError

# The catalog's types and reader live in hardware.prices (the store reads them too); they are
# re-exported here, where the planner's callers have always found them.
from hardware.prices import DEFAULT_CATALOG as DEFAULT_CATALOG  # noqa: PLC0414
from hardware.prices import DEFAULT_PRICING_TYPE, RESERVED_PREFIX
from hardware.prices import PriceEntry as PriceEntry  # noqa: PLC0414
from hardware.prices import SkippedPriceRow as SkippedPriceRow  # noqa: PLC0414
from hardware.prices import catalog_version as catalog_version  # noqa: PLC0414
from hardware.prices import load_catalog_csv as load_catalog_csv  # noqa: PLC0414
from hardware.prices import parse_catalog as parse_catalog  # noqa: PLC0414
from hardware.prices import skipped_rows as skipped_rows  # noqa: PLC0414
from planner.curves.names import canonical_gpu
from planner.inputs.scenario import PricingMode

if TYPE_CHECKING:
    from planner.inputs.pricing_spec import PriceQuoteSpec
    from planner.inputs.scenario import Scenario


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
    quote = _quoted(prices, gpu, scenario.price_quote(gpu), on_demand)
    if on_demand is not None and quote is not None:
        base = ScenarioPrice(on_demand, f"scenario pricing, picked: {quote.describe()}", quote)
    elif on_demand is not None:
        base = _typed_price(on_demand, prices, gpu)
    else:
        entry = default_price(tuple(prices), gpu)
        base = ScenarioPrice(entry.usd_per_gpu_hour, f"catalog default: {entry.describe()}", entry)
    if scenario.options.pricing_mode is PricingMode.ON_DEMAND:
        return base
    reserved = scenario.reserved_price(gpu)
    picked = _quoted(prices, gpu, scenario.price_quote(gpu, reserved=True), reserved)
    if reserved is not None and picked is not None:
        note = f"{gpu}: reserved ${reserved:g}/GPU-hour, picked: {picked.describe()}"
        return replace(
            base, reserved_usd_per_gpu_hour=reserved, reserved_note=note, reserved_entry=picked
        )
    return _with_reserved(base, reserved, tuple(prices), gpu)


def find_quote(
    prices: Sequence[PriceEntry], gpu: str, provider: str, sku: str, pricing_type: str
) -> PriceEntry | None:
    """The catalog row for a GPU with this provider, SKU and pricing type (None: not in it)."""
    wanted = canonical_gpu(gpu)
    return next(
        (
            e
            for e in prices
            if e.gpu == wanted
            and (e.provider, e.sku, e.pricing_type) == (provider, sku, pricing_type)
        ),
        None,
    )


def _quoted(
    prices: Sequence[PriceEntry], gpu: str, quote: PriceQuoteSpec | None, price: float | None
) -> PriceEntry | None:
    """The picked catalog row, when it is still in the catalog at the price the scenario holds
    (a catalog edited since is cited as a typed price, not as a quote it no longer matches)."""
    if quote is None or price is None:
        return None
    entry = find_quote(prices, gpu, quote.provider, quote.sku, quote.pricing_type)
    return entry if entry is not None and abs(entry.usd_per_gpu_hour - price) < 1e-9 else None


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
