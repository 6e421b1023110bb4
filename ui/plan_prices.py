"""The Plan page's prices: per GPU, pick any catalog row (provider, SKU, on-demand or reserved)
or type a price; the pick goes into the scenario's pricing (with the row it came from), so the
saved scenario and every plan recorded from it cite that quote. Widgets -> raw pricing, and a
saved scenario -> widget state."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from hardware.prices import MAX_USD_PER_GPU_HOUR
from planner.inputs.prices import PriceEntry
from planner.inputs.pricing_spec import PriceQuoteSpec
from planner.inputs.scenario import Scenario
from reports.names import gpu_name

TYPED = "type a price"
MATCH = "match the catalog"  # a loaded typed price: shown as the catalog row of that price
CATALOG_RESERVED = "the catalog's reserved quote of the same provider"
RESERVED_MODES = ("reserved", "mix")


def quote_id(entry: PriceEntry) -> str:
    """A catalog row's stable choice value: provider | SKU | pricing type."""
    return f"{entry.provider} | {entry.sku} | {entry.pricing_type}"


def quote_label(entry: PriceEntry) -> str:
    """'$2.69/GPU-h · RunPod H100 SXM5 (Secure Cloud) · on demand · 1 GPU · as of 2026' (the
    price first: a narrow sidebar cuts the end)."""
    default = " · catalog default" if entry.is_default else ""
    gpus = f"{entry.gpus_per_instance} GPU{'s' if entry.gpus_per_instance != 1 else ''}"
    return (
        f"${entry.usd_per_gpu_hour:,.2f}/GPU-h · {entry.provider} {entry.sku} · "
        f"{entry.pricing_type.replace('_', ' ')} · {gpus} · as of {entry.as_of}{default}"
    )


def pricing(gpus: Sequence[str], catalog: Sequence[PriceEntry]) -> dict[str, object]:
    """The scenario's `pricing` and `price_quotes` per chosen GPU: the picked quote (on-demand,
    and reserved when the pricing mode needs one) or a typed price; a GPU left at its catalog
    default is not written (the plan cites the default itself)."""
    prices: dict[str, object] = {}
    quotes: dict[str, object] = {}
    for gpu in gpus:
        rows = sorted(
            (e for e in catalog if e.gpu == gpu and not e.is_lens),
            key=lambda e: (not e.is_default, e.provider),
        )
        price, quote = _gpu_pricing(gpu, rows)
        if price is not None:
            prices[gpu] = price
        if quote:
            quotes[gpu] = quote
    return {"pricing": prices, "price_quotes": quotes}


Picked = tuple[float | dict[str, float] | None, dict[str, object] | None]


def _gpu_pricing(gpu: str, rows: list[PriceEntry]) -> Picked:
    bar = st.sidebar
    _settle(gpu, rows)
    by_id = {quote_id(e): e for e in rows}
    picked = bar.selectbox(
        f"{gpu_name(gpu)} price",
        [*by_id, TYPED],
        format_func=lambda value: quote_label(by_id[value]) if value in by_id else value,
        key=f"plan_price_quote_{gpu}",
        help="A quote from the price catalog (Prices page), any provider and kind; the plan "
        "cites its source and date. Or type a price of your own.",
    )
    if picked == TYPED:
        default = next((e for e in rows if e.is_default), None)
        typed = bar.number_input(
            f"{gpu_name(gpu)} price ($/GPU-hour)",
            min_value=0.01,
            max_value=MAX_USD_PER_GPU_HOUR,
            value=default.usd_per_gpu_hour if default else None,
            step=0.05,
            key=f"plan_price_{gpu}",
            help="What one GPU costs per hour of rent, as you were quoted it.",
        )
        return (None if typed is None else float(typed)), None
    entry = by_id[picked]
    reserved = _reserved_pick(gpu, rows)
    if reserved is None and entry.is_default:
        return None, None
    if reserved is None:
        return entry.usd_per_gpu_hour, {"on_demand": _quote(entry)}
    price = {"on_demand": entry.usd_per_gpu_hour, "reserved": reserved.usd_per_gpu_hour}
    return price, {"on_demand": _quote(entry), "reserved": _quote(reserved)}


def _reserved_pick(gpu: str, rows: list[PriceEntry]) -> PriceEntry | None:
    """The reserved quote picked for a reserved or mixed fleet (None: the catalog's own)."""
    if st.session_state.get("plan_pricing_mode") not in RESERVED_MODES:
        return None
    reserved = {quote_id(e): e for e in rows if e.pricing_type.startswith("reserved")}
    if not reserved:
        return None
    picked = st.sidebar.selectbox(
        f"{gpu_name(gpu)} reserved price",
        [CATALOG_RESERVED, *reserved],
        format_func=lambda value: quote_label(reserved[value]) if value in reserved else value,
        key=f"plan_price_reserved_{gpu}",
        help="The quote reserved GPUs are priced at; by default the reserved quote of the "
        "on-demand price's own provider.",
    )
    return reserved.get(picked)


def _quote(entry: PriceEntry) -> dict[str, str]:
    return {"provider": entry.provider, "sku": entry.sku, "pricing_type": entry.pricing_type}


def widget_state(scenario: Scenario) -> dict[str, object]:
    """Session-state values that make the price pickers show a saved scenario's prices (the
    pickers match them to catalog rows when they are drawn; see _settle)."""
    state: dict[str, object] = {}
    for gpu in scenario.pricing:
        quote = scenario.price_quote(gpu)
        state[f"plan_price_{gpu}"] = scenario.on_demand_price(gpu)
        state[f"plan_price_quote_{gpu}"] = _id_of(quote) if quote else MATCH
        reserved = scenario.price_quote(gpu, reserved=True)
        if reserved is not None:
            state[f"plan_price_reserved_{gpu}"] = _id_of(reserved)
    return state


def _id_of(quote: PriceQuoteSpec) -> str:
    return f"{quote.provider} | {quote.sku} | {quote.pricing_type}"


def _settle(gpu: str, rows: list[PriceEntry]) -> None:
    """A loaded scenario's pick as one of this catalog's rows: its quote when still there at
    its price, else the on-demand row with its typed price (the default first), else typed."""
    key, price = f"plan_price_quote_{gpu}", st.session_state.get(f"plan_price_{gpu}")
    picked = st.session_state.get(key)
    ids = {quote_id(e): e for e in rows}
    if picked is None or picked == TYPED:
        return
    if picked in ids and (price is None or ids[picked].usd_per_gpu_hour == price):
        return
    same = [e for e in rows if e.pricing_type == "on_demand" and e.usd_per_gpu_hour == price]
    st.session_state[key] = quote_id(same[0]) if picked == MATCH and same else TYPED
    reserved = f"plan_price_reserved_{gpu}"
    if st.session_state.get(reserved) not in (None, CATALOG_RESERVED, *ids):
        st.session_state[reserved] = CATALOG_RESERVED
