"""A budget over time: the months' fleets (planner.analysis.horizon) priced along every way to pay
(planner.analysis.paths), the cheapest with its P10-P90 range, the months where one way overtakes
another, what a forecast 20% high or low costs under each way's decisions, and the facility power
month by month against what the site has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hardware.prices import PriceEntry
from planner.analysis.capacity import Plan
from planner.analysis.commitments import Schedule, Term
from planner.analysis.horizon import MonthFleet, horizon_fleets, picked
from planner.analysis.measured_power import measured_power
from planner.analysis.owning import NodeEconomics, node_economics
from planner.analysis.paths import (
    API,
    ON_DEMAND,
    OWNED,
    PaymentPath,
    api_path,
    catalog_quote,
    commitment_terms,
    committed_path,
    forecast_miss,
    on_demand_path,
    owned_nodes,
    owned_path,
    schedule_for,
)
from planner.analysis.power import PowerView, option_power, power_view
from planner.inputs.horizon_spec import HorizonSpec
from planner.sizing.costs import Fleet, uncovered_node_months
from planner.sizing.options import SizedOption

__all__ = ["BudgetPlan", "Crossover", "Lens", "plan_budget"]

Months = tuple[MonthFleet, ...]


@dataclass(frozen=True, slots=True)
class Crossover:
    """The month from which `path` stays cheaper than `other` (None: not within the horizon)."""

    path: str
    other: str
    month: int | None
    basis: str  # "cumulative cost", "cumulative cash" or "monthly cost"

    def text(self) -> str:
        """'owning is cheaper than on-demand in cumulative cash from month 14'."""
        if self.month is None:
            return f"{self.path} does not overtake {self.other} ({self.basis}) within the horizon"
        if self.month == 1:
            return f"{self.path} is cheaper than {self.other} ({self.basis}) from the first month"
        return f"{self.path} is cheaper than {self.other} ({self.basis}) from month {self.month}"


@dataclass(frozen=True, slots=True)
class Lens:
    """A published all-in $/GPU-hour to read the paths against (InferenceX's owning lenses)."""

    name: str
    usd_per_gpu_hour: float
    source: str


@dataclass(frozen=True, slots=True)
class BudgetPlan:
    """Every way to pay for the pick over the horizon."""

    horizon: HorizonSpec
    pick: SizedOption
    months: tuple[MonthFleet, ...]
    paths: tuple[PaymentPath, ...]
    crossovers: tuple[Crossover, ...]
    power: PowerView
    lenses: tuple[Lens, ...]
    unavailable: tuple[str, ...]  # ways not priced, and why
    notes: tuple[str, ...]
    terms: tuple[Term, ...] = ()  # the commitment terms offered
    schedule: Schedule | None = None  # the commitments chosen (None: no term priced)
    owned: tuple[int, ...] | None = None  # nodes owned each month (None: owning not priced)
    spot: tuple[float, float] = (0.0, 0.0)  # spot USD per GPU-hour and the share it carries
    spot_source: str = ""

    @property
    def cheapest(self) -> PaymentPath:
        """The way with the least total over the horizon at the stated confidence."""
        return min(self.paths, key=lambda p: p.total_usd)

    def path(self, name: str) -> PaymentPath | None:
        """The path called `name`, if it was priced."""
        return next((p for p in self.paths if p.name == name), None)


def plan_budget(plan: Plan, prices: Sequence[PriceEntry]) -> BudgetPlan:
    """The scenario's horizon over `plan` (PlanningError without a horizon or a pick)."""
    horizon = plan.scenario.horizon
    if horizon is None:
        raise ValueError("the scenario has no horizon: nothing to plan over the months")
    pick = picked(plan)
    ways = _Ways(plan, horizon, prices, pick, horizon_fleets(plan, horizon))
    paths = [ways.on_demand(), *ways.committed(), *ways.owned(), *ways.api()]
    return BudgetPlan(
        horizon=horizon,
        pick=pick,
        months=ways.months,
        paths=tuple(paths),
        crossovers=_crossovers(paths),
        power=replace(
            power_view(horizon, ways.months, pick.gpu, ways.gpus, ways.watts),
            options=option_power(plan, horizon),
        ),
        lenses=_lenses(prices, pick.gpu, ways.node),
        unavailable=tuple(ways.unavailable),
        notes=_notes(plan, pick, ways.months),
        terms=ways.terms,
        schedule=ways.schedule,
        owned=ways.owned_by_month,
        spot=ways.spot,
        spot_source=ways.spot_source,
    )


class _Ways:
    """Prices each way to pay over the months, and again over the forecast's misses."""

    def __init__(
        self,
        plan: Plan,
        horizon: HorizonSpec,
        prices: Sequence[PriceEntry],
        pick: SizedOption,
        months: tuple[MonthFleet, ...],
    ) -> None:
        self.horizon, self.prices, self.pick, self.months = horizon, prices, pick, months
        packing = months[0].fleet.packing
        self.gpus, self.hours = packing.gpus_per_node, packing.hours_per_month
        self.od_price = pick.usd_per_gpu_hour
        self.watts = measured_power(pick)
        self.ratio = horizon.output_input_cost_ratio
        self.rest_price, self.rest_text, self.spot, self.spot_source = _rest_price(
            horizon, prices, pick.gpu, self.od_price
        )
        self.scaled = {s: horizon_fleets(plan, horizon, s) for s in _scales(horizon)}
        self.unavailable: list[str] = []
        self.node: NodeEconomics | None = None
        self.terms: tuple[Term, ...] = ()
        self.schedule: Schedule | None = None
        self.owned_by_month: tuple[int, ...] | None = None

    def on_demand_bill(self, fleet: Fleet, held: int) -> float:
        return uncovered_node_months(fleet, held) * self.gpus * self.hours * self.od_price

    def rest_bill(self, fleet: Fleet, held: int) -> float:
        return uncovered_node_months(fleet, held) * self.gpus * self.hours * self.rest_price

    def on_demand(self) -> PaymentPath:
        basis = f"${self.od_price:g}/GPU-hour on-demand ({self.pick.price_source})"

        def build(months: Months, _decide: Months) -> PaymentPath:
            return on_demand_path(months, self.on_demand_bill, self.ratio, basis)

        return self._missed(build, self.on_demand_bill, lambda _path: lambda _month: 0.0)

    def committed(self) -> list[PaymentPath]:
        terms, missing = commitment_terms(self.horizon, self.prices, self.pick.gpu)
        self.unavailable.extend(missing)
        self.terms = terms
        if not terms:
            return []
        uncovered = self.gpus * self.hours * self.rest_price
        basis = _terms_text(terms)
        basis += f"; the rest {self.rest_text}"
        schedules: dict[int, Schedule] = {}

        def schedule(decide: Months) -> Schedule:
            if id(decide) not in schedules:
                schedules[id(decide)] = schedule_for(decide, terms, uncovered)
            return schedules[id(decide)]

        def build(months: Months, decide: Months) -> PaymentPath:
            return committed_path(months, self.rest_bill, schedule(decide), self.ratio, basis)

        def per_node_month(_path: PaymentPath) -> Callable[[int], float]:
            made = schedule(self.months)

            def cost(month: int) -> float:
                held = made.covered(month)
                return made.committed_usd(month, self.gpus, self.hours) / held if held else 0.0

            return cost

        path = self._missed(build, self.rest_bill, per_node_month)
        self.schedule = schedule(self.months)
        return [path]

    def owned(self) -> list[PaymentPath]:
        owning = self.horizon.owning
        if owning is None:
            self.unavailable.append("owning not priced: the horizon gives no owning.node_price_usd")
            return []
        node = node_economics(
            owning, self.horizon, self.pick.gpu, self.gpus, self.hours, measured=self.watts
        )
        self.node = node
        lead = owning.lead_time_months

        self.owned_by_month = owned_nodes([m.nodes for m in self.months], lead)

        def build(months: Months, decide: Months) -> PaymentPath:
            owned = owned_nodes([m.nodes for m in decide], lead)
            bill, ratio = self.rest_bill, self.ratio
            return owned_path(months, bill, node, owned, lead_months=lead, ratio=ratio)

        return [self._missed(build, self.rest_bill, lambda _path: lambda _month: node.total_usd)]

    def api(self) -> list[PaymentPath]:
        api = self.horizon.hosted_api
        if api is None:
            self.unavailable.append("hosted API not priced: the horizon gives no hosted_api prices")
            return []
        dated = f"{api.source}, as of {api.as_of}" if api.source else "entered in the scenario"
        basis = (
            f"{api.name}: ${api.usd_per_million_input:g} / ${api.usd_per_million_output:g} per "
            f"1M input / output tokens ({dated})"
        )

        def build(months: Months, _decide: Months) -> PaymentPath:
            return api_path(months, api.usd_per_million_input, api.usd_per_million_output, basis)

        return [self._missed(build, lambda _fleet, _held: 0.0, lambda _path: lambda _m: 0.0)]

    def _missed(
        self,
        build: Callable[[Months, Months], PaymentPath],
        bill: Callable[[Fleet, int], float],
        held_cost: Callable[[PaymentPath], Callable[[int], float]],
    ) -> PaymentPath:
        """The path over the forecast, with its totals when the forecast misses high and low:
        its decisions kept, and re-made as if the miss had been foreseen."""
        path = build(self.months, self.months)  # decisions for the forecast itself, kept last
        misses = tuple(
            forecast_miss(
                build(months, self.months),
                months,
                bill,
                scale=scale,
                held_node_month_usd=held_cost(path),
                foreseen_usd=build(months, months).total_usd,
            )
            for scale, months in self.scaled.items()
        )
        return replace(path, misses=misses)


def _terms_text(terms: Sequence[Term]) -> str:
    """'1-year $2.45 and 3-year $1.95/GPU-hour (source)', each source said once."""
    by_source: dict[str, list[Term]] = {}
    for term in terms:
        by_source.setdefault(term.source, []).append(term)
    return "; ".join(
        " and ".join(f"{t.name} ${t.usd_per_gpu_hour:g}" for t in group) + f"/GPU-hour ({source})"
        for source, group in by_source.items()
    )


def _scales(horizon: HorizonSpec) -> tuple[float, ...]:
    error = horizon.forecast_error_pct / 100.0
    return () if error == 0 else (1.0 + error, 1.0 - error)


def _rest_price(
    horizon: HorizonSpec, prices: Sequence[PriceEntry], gpu: str, on_demand: float
) -> tuple[float, str, tuple[float, float], str]:
    """What a node beyond the held ones costs per GPU-hour (on-demand, or partly spot), in
    words, and the spot price and share it used with the price's source."""
    share = horizon.commitments.spot_max_share_pct / 100.0
    spot = horizon.commitments.spot
    source = horizon.commitments.source or "entered in the scenario"
    if spot is None and share > 0:
        quote = catalog_quote(prices, gpu, "spot")
        spot, source = (None, "") if quote is None else (quote.usd_per_gpu_hour, quote.describe())
    if spot is None or share == 0:
        return on_demand, f"on-demand at ${on_demand:g}/GPU-hour", (0.0, 0.0), "none used"
    blended = (1.0 - share) * on_demand + share * spot
    words = (
        f"{share:.0%} spot at ${spot:g}/GPU-hour ({source}) and the rest on-demand at "
        f"${on_demand:g}: ${blended:.2f}/GPU-hour"
    )
    return blended, words, (spot, share), source


def _crossovers(paths: Sequence[PaymentPath]) -> tuple[Crossover, ...]:
    cheapest = min(paths, key=lambda p: p.total_usd)
    found = [
        Crossover(
            cheapest.name,
            other.name,
            _from(cheapest.cumulative(), other.cumulative()),
            "cumulative cost",
        )
        for other in paths
        if other is not cheapest
    ]
    by_name = {p.name: p for p in paths}
    if OWNED in by_name:
        owned, rented = by_name[OWNED], by_name[ON_DEMAND]
        month = _from(owned.cumulative(cash=True), rented.cumulative(cash=True))
        found.append(Crossover(OWNED, ON_DEMAND, month, "cumulative cash"))
    if API in by_name:
        hosted = [p for p in paths if p.name != API]
        best = min(hosted, key=lambda p: p.total_usd)
        monthly = _from([m.usd for m in best.months], [m.usd for m in by_name[API].months])
        found.append(Crossover(best.name, API, monthly, "monthly cost"))
    return tuple(found)


def _from(mine: Sequence[float], theirs: Sequence[float]) -> int | None:
    """The first month (1-based) from which `mine` < `theirs` every month to the end."""
    month = None
    for index in range(len(mine) - 1, -1, -1):
        if mine[index] < theirs[index] - 1e-6:
            month = index + 1
        else:
            break
    return month


def _lenses(prices: Sequence[PriceEntry], gpu: str, node: NodeEconomics | None) -> tuple[Lens, ...]:
    found = [
        Lens(e.provider, e.usd_per_gpu_hour, e.describe())
        for e in prices
        if e.gpu == gpu and e.is_lens
    ]
    if node is not None:
        found.insert(0, Lens("owning as entered", node.usd_per_gpu_hour, "this scenario"))
    return tuple(found)


def _notes(plan: Plan, pick: SizedOption, months: Sequence[MonthFleet]) -> tuple[str, ...]:
    first, last = months[0], months[-1]
    unit = plan.scenario.demand.unit
    return (
        f"the months carry the plan's pick, {pick.title()}, re-sized each month at "
        f"{pick.confidence:.0%} confidence over the plan's own curves and error samples",
        f"demand {first.demand:,.4g} -> {last.demand:,.4g} {unit} over {len(months)} months: "
        f"{first.nodes} -> {last.nodes} node(s) (P10-P90 of the last month "
        f"{last.low_nodes}-{last.high_nodes})",
    )
