"""Ways to pay for the months' fleets (planner.analysis.horizon): rented on-demand, a commitment
schedule of 1- and 3-year terms with on-demand (or spot) for the rest, owned nodes bridged
on-demand through their lead time, and a hosted API priced per token. Each path is priced every
month at the fleet of the stated confidence and at the P10 and P90 samples' fleets, in money
per month and per 1M tokens, and again under a forecast that misses high and low with the same
decisions (what is committed or bought stays; the rest is on-demand).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hardware.prices import PriceEntry, quote_rank
from planner.analysis.commitments import Schedule, Term, cheapest_schedule
from planner.analysis.horizon import MonthFleet
from planner.analysis.owning import NodeEconomics
from planner.inputs.horizon_spec import HorizonSpec
from planner.sizing.costs import Fleet

__all__ = [
    "API",
    "COMMITTED",
    "ON_DEMAND",
    "OWNED",
    "ForecastMiss",
    "PathMonth",
    "PaymentPath",
    "api_path",
    "catalog_quote",
    "commitment_terms",
    "committed_path",
    "forecast_miss",
    "on_demand_path",
    "orders",
    "owned_nodes",
    "owned_path",
    "schedule_for",
]

ON_DEMAND = "on-demand"
COMMITTED = "commitments"
OWNED = "owning"
API = "hosted API"


@dataclass(frozen=True, slots=True)
class PathMonth:
    """One month of a path: its cost at the stated confidence and at P10/P90, the cash it pays
    out, the nodes it holds (committed or owned) and its price per 1M tokens."""

    month: int
    usd: float
    low_usd: float
    high_usd: float
    cash_usd: float
    held_nodes: int
    usd_per_m_input: float
    usd_per_m_output: float
    usd_per_m_blended: float


@dataclass(frozen=True, slots=True)
class ForecastMiss:
    """The path's total when the forecast is `scale` x what happened, its decisions kept."""

    scale: float
    total_usd: float
    wasted_usd: float  # held node-months left idle: stranded commitment, idle owned nodes
    premium_usd: float  # on-demand bought above the held nodes (0 where nothing is held)
    foreseen_usd: float  # the total had the decisions been made for this forecast

    @property
    def regret_usd(self) -> float:
        """What the miss costs under the path's decisions: total minus the foreseen total."""
        return self.total_usd - self.foreseen_usd


@dataclass(frozen=True, slots=True)
class PaymentPath:
    """One way to pay, month by month."""

    name: str
    months: tuple[PathMonth, ...]
    basis: str  # how it is priced, with the prices' sources
    notes: tuple[str, ...] = ()
    owed_after_usd: float = 0.0  # commitments still running after the horizon
    misses: tuple[ForecastMiss, ...] = ()
    decisions: str = ""  # what is committed or bought, when

    @property
    def total_usd(self) -> float:
        """The horizon's total at the stated confidence."""
        return sum(m.usd for m in self.months)

    @property
    def low_total_usd(self) -> float:
        """The horizon's total if every month needs the P10 sample's fleet."""
        return sum(m.low_usd for m in self.months)

    @property
    def high_total_usd(self) -> float:
        """The horizon's total if every month needs the P90 sample's fleet."""
        return sum(m.high_usd for m in self.months)

    def cumulative(self, *, cash: bool = False) -> tuple[float, ...]:
        """Running total of cost (or of cash paid out) after each month."""
        out, running = [], 0.0
        for month in self.months:
            running += month.cash_usd if cash else month.usd
            out.append(running)
        return tuple(out)


def commitment_terms(
    horizon: HorizonSpec, prices: Sequence[PriceEntry], gpu: str
) -> tuple[tuple[Term, ...], tuple[str, ...]]:
    """The 1- and 3-year terms to choose from (the scenario's prices, else the catalog's), and
    why a term is missing."""
    entered = horizon.commitments
    source = entered.source or "entered in the scenario"
    terms, missing = [], []
    for name, months, given, kind in (
        ("1-year", 12, entered.reserved_1y, "reserved_1y"),
        ("3-year", 36, entered.reserved_3y, "reserved_3y"),
    ):
        if given is not None:
            dated = f"{source}, as of {entered.as_of}" if entered.as_of else source
            terms.append(Term(name, months, float(given), dated))
            continue
        quote = catalog_quote(prices, gpu, kind)
        if quote is None:
            missing.append(
                f"{name} commitment not priced: no {kind} price for {gpu} in the scenario or "
                "the catalog (horizon.commitments.{kind})".replace("{kind}", kind)
            )
        else:
            terms.append(Term(name, months, quote.usd_per_gpu_hour, quote.describe()))
    return tuple(terms), tuple(missing)


def catalog_quote(prices: Sequence[PriceEntry], gpu: str, kind: str) -> PriceEntry | None:
    """The catalog's quote of one pricing type for a GPU: the most confident, then the latest."""
    found = [e for e in prices if e.gpu == gpu and e.pricing_type == kind]
    return min(found, key=quote_rank, default=None)


Bill = Callable[[Fleet, int], float]  # a fleet's on-demand month beyond `held` nodes, USD


def on_demand_path(
    months: Sequence[MonthFleet], bill: Bill, ratio: float, basis: str
) -> PaymentPath:
    """Every node on-demand for the hours it runs."""
    priced = tuple(_month(m, _beyond(bill, m, 0.0, 0), 0, ratio) for m in months)
    return PaymentPath(ON_DEMAND, priced, basis)


def schedule_for(
    months: Sequence[MonthFleet], terms: Sequence[Term], uncovered_usd: float
) -> Schedule:
    """The cheapest commitment schedule for the months' fleets at the stated confidence
    (`uncovered_usd`: an on-demand node-month)."""
    packing = months[0].fleet.packing
    node_hours = packing.gpus_per_node * packing.hours_per_month
    return cheapest_schedule([m.nodes for m in months], terms, uncovered_usd, node_hours)


def committed_path(
    months: Sequence[MonthFleet], bill: Bill, schedule: Schedule, ratio: float, basis: str
) -> PaymentPath:
    """`schedule`'s commitments, the rest on-demand."""
    packing = months[0].fleet.packing
    gpus, hours = packing.gpus_per_node, packing.hours_per_month
    priced = []
    for m in months:
        held = schedule.covered(m.month)
        fixed = schedule.committed_usd(m.month, gpus, hours)
        priced.append(_month(m, _beyond(bill, m, fixed, held), held, ratio))
    return PaymentPath(
        COMMITTED,
        tuple(priced),
        basis,
        owed_after_usd=schedule.owed_after(gpus, hours),
        decisions=schedule.text(),
    )


def owned_nodes(needs: Sequence[int], lead_months: int) -> tuple[int, ...]:
    """Nodes owned each month: bought `lead_months` ahead for each month's need from the first
    month an order can arrive; never sold within the horizon."""
    owned, most = [], 0
    for index, need in enumerate(needs):
        if index >= lead_months:
            most = max(most, need)
        owned.append(most)
    return tuple(owned)


def orders(owned: Sequence[int], lead_months: int) -> dict[int, int]:
    """Month (1-based) of each order -> nodes ordered (serving lead_months later)."""
    found: dict[int, int] = {}
    previous = 0
    for index, count in enumerate(owned):
        if count > previous:
            at = index - lead_months + 1
            found[at] = found.get(at, 0) + count - previous
            previous = count
    return found


def owned_path(
    months: Sequence[MonthFleet],
    bill: Bill,
    node: NodeEconomics,
    owned: Sequence[int],
    *,
    lead_months: int,
    ratio: float,
) -> PaymentPath:
    """`owned` nodes each month (bought ahead), on-demand until they arrive and above them; cost
    is their capital charge and running costs, cash the price paid at order and the running
    costs."""
    bought = orders(owned, lead_months)
    priced = []
    for index, m in enumerate(months):
        held = owned[index]
        month = _month(m, _beyond(bill, m, held * node.total_usd, held), held, ratio)
        capex = bought.get(m.month, 0) * node.price_usd
        cash = month.usd - held * node.capital_usd + capex
        priced.append(replace(month, cash_usd=cash))
    words = "; ".join(
        f"order {count} node(s) in month {at} (serving from month {at + lead_months})"
        for at, count in sorted(bought.items())
    )
    basis = f"${node.usd_per_gpu_hour:.2f}/GPU-hour levelised (node busy all month)"
    return PaymentPath(OWNED, tuple(priced), basis, node.notes, decisions=words or "nothing bought")


def api_path(
    months: Sequence[MonthFleet], usd_in: float, usd_out: float, basis: str
) -> PaymentPath:
    """Every token through a hosted API at its per-token prices."""
    priced = []
    for m in months:
        usd = m.input_tokens / 1e6 * usd_in + m.output_tokens / 1e6 * usd_out
        priced.append(
            PathMonth(
                month=m.month,
                usd=usd,
                low_usd=usd,
                high_usd=usd,
                cash_usd=usd,
                held_nodes=0,
                usd_per_m_input=usd_in,
                usd_per_m_output=usd_out,
                usd_per_m_blended=usd / ((m.input_tokens + m.output_tokens) / 1e6),
            )
        )
    return PaymentPath(API, tuple(priced), basis)


def forecast_miss(
    scaled: PaymentPath,
    months: Sequence[MonthFleet],
    bill: Bill,
    *,
    scale: float,
    held_node_month_usd: Callable[[int], float],
    foreseen_usd: float,
) -> ForecastMiss:
    """A path priced over another forecast's `months` with its decisions kept (`scaled`): its
    total, the held node-months left idle (at `held_node_month_usd(month)` each) and the
    on-demand bought above the held nodes."""
    premium = wasted = 0.0
    holds = any(priced.held_nodes for priced in scaled.months)
    for priced, m in zip(scaled.months, months, strict=True):
        premium += bill(m.fleet, priced.held_nodes) if holds else 0.0
        wasted += max(priced.held_nodes - m.nodes, 0) * held_node_month_usd(m.month)
    return ForecastMiss(scale, scaled.total_usd, wasted, premium, foreseen_usd)


def _beyond(bill: Bill, m: MonthFleet, fixed: float, held: int) -> Callable[[Fleet], float]:
    """A month's cost on any of its fleets: the held nodes' fixed cost, the on-demand beyond
    them, and the engine operations."""
    return lambda fleet: fixed + bill(fleet, held) + m.option.ops_cost_usd


def _month(m: MonthFleet, cost: Callable[[Fleet], float], held: int, ratio: float) -> PathMonth:
    usd = cost(m.fleet)
    per_in = usd / ((m.input_tokens + ratio * m.output_tokens) / 1e6)
    return PathMonth(
        month=m.month,
        usd=usd,
        low_usd=cost(m.low),
        high_usd=cost(m.high),
        cash_usd=usd,
        held_nodes=held,
        usd_per_m_input=per_in,
        usd_per_m_output=per_in * ratio,
        usd_per_m_blended=usd / ((m.input_tokens + m.output_tokens) / 1e6),
    )
