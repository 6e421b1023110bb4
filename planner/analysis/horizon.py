"""The fleet month by month (the scenario's `horizon`): the plan's pick re-sized at each month's
demand over the plan's own curves, fits, prices and error samples, at the stated confidence, with
the fleets the error samples put at P10 and P90 beside it.

Only the pick is re-sized (one option, not the whole comparison): the horizon answers "how do we
pay for this deployment as it grows", and says so. A month whose factor is 1 is the plan itself,
so a flat forecast is today's plan month after month, to the cent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from errors import PlanningError
from planner.analysis.capacity import Plan, replan
from planner.analysis.what_if import scaled_demand
from planner.inputs.horizon_spec import HorizonSpec
from planner.inputs.prices import scenario_price
from planner.inputs.scenario import Scenario
from planner.sizing.confidence import MISSED
from planner.sizing.costs import Fleet, Packing, cost_model_for
from planner.sizing.nodes import node_shape
from planner.sizing.options import SizedOption
from planner.sizing.selection import select_curves
from planner.sizing.size import Pricing, size_option

__all__ = ["MonthFleet", "NoHorizonError", "Resizer", "horizon_fleets", "option_fleet", "picked"]


class NoHorizonError(PlanningError):
    """The plan has nothing to carry over the months (no option meets the SLA)."""


@dataclass(frozen=True, slots=True, eq=False)
class MonthFleet:
    """One month: its demand, the pick sized for it, and the fleets at P10 / stated / P90."""

    month: int  # 1-based
    factor: float  # demand / the scenario's demand
    demand: float  # in the scenario demand's unit
    option: SizedOption
    fleet: Fleet  # at the stated confidence
    low: Fleet  # the P10 sample's fleet (fewer nodes: the curves were pessimistic)
    high: Fleet  # the P90 sample's fleet
    output_tokens: float
    input_tokens: float

    @property
    def nodes(self) -> int:
        """Nodes at the peak hour, at the stated confidence."""
        return int(self.fleet.hourly_nodes.max())

    @property
    def gpus(self) -> int:
        """GPUs at the peak hour, at the stated confidence."""
        return self.nodes * self.fleet.packing.gpus_per_node

    @property
    def replicas(self) -> int:
        """Replicas at the peak hour, at the stated confidence."""
        return self.option.replicas

    @property
    def low_nodes(self) -> int:
        """Peak-hour nodes of the P10 sample's fleet."""
        return int(self.low.hourly_nodes.max())

    @property
    def high_nodes(self) -> int:
        """Peak-hour nodes of the P90 sample's fleet."""
        return int(self.high.hourly_nodes.max())


def picked(plan: Plan) -> SizedOption:
    """The option the months carry: the recommendation, else the sound option over budget or,
    over the site's power limit, the one needing the least power."""
    rec = plan.recommendation
    found = rec.choice or rec.over_budget or rec.over_power
    if found is None:
        raise NoHorizonError(
            f"no option meets the SLA, so there is no fleet to plan over the months: "
            f"{plan.recommendation.reason}"
        )
    return found


def horizon_fleets(plan: Plan, horizon: HorizonSpec, scale: float = 1.0) -> tuple[MonthFleet, ...]:
    """The pick sized for every month of `horizon` (`scale`: the whole forecast times it, for a
    forecast that misses high or low)."""
    pick = picked(plan)
    resize = Resizer(plan, pick)
    base = plan.scenario.demand.amount
    factors = horizon.demand_factors(base)
    months = []
    for index, trend in enumerate(factors):
        factor = trend * scale
        months.append(_month(index + 1, factor, base, resize(factor), plan))
    return tuple(months)


def option_fleet(option: SizedOption, plan: Plan, hourly: tuple[int, ...] | None = None) -> Fleet:
    """The option's fleet (or another hourly replica count on its packing) as costs.Fleet."""
    opts = plan.scenario.options
    packing = Packing(
        gpu=option.gpu,
        gpus_per_replica=option.gpus_per_replica,
        gpus_per_node=node_shape(opts, option.gpu).gpus,
        replicas_per_node=option.replicas_per_node,
        startup_s=0.0 if option.startup is None else option.startup.seconds,
        hours_per_month=opts.hours_per_month,
        nodes_per_replica=option.nodes_per_replica,
    )
    counts = option.hourly_replicas if hourly is None else hourly
    return Fleet(packing, np.asarray(counts, dtype=np.int64))


class Resizer:
    """The pick sized again at a multiple of the plan's demand: what make_plan does for that one
    candidate (its selection, the plan's fit, prices and error samples), without re-selecting
    and re-sizing every other option (tests hold it equal to a replan's)."""

    def __init__(self, plan: Plan, pick: SizedOption) -> None:
        self.plan, self.pick = plan, pick
        self.sized: dict[float, SizedOption] = {1.0: pick}
        scenario = plan.scenario
        candidates, _ = select_curves(scenario, [pick.curve])
        found = [c for c in candidates if c.curve is pick.curve]
        self.candidate = found[0] if found else None
        price = scenario_price(scenario, plan.prices_used, pick.gpu)
        self.pricing = Pricing(cost_model_for(scenario.options), price)

    def __call__(self, factor: float) -> SizedOption:
        if factor not in self.sized:
            self.sized[factor] = self.size(scaled_demand(self.plan.scenario, factor))
        return self.sized[factor]

    def size(self, scenario: Scenario) -> SizedOption:
        """The pick sized for `scenario`: a change of the plan's own that leaves its model,
        workload and candidates alone (demand, fleet options)."""
        pick = self.pick
        if self.candidate is None:  # not reachable from its own curve: the full re-plan
            moved = replan(replace(self.plan, options=(pick,)), scenario).options
        else:
            sized = size_option(scenario, self.candidate, self.pricing, pick.fit, self.plan.draws)
            moved = (sized,)
        for option in moved:
            if isinstance(option, SizedOption) and option.key == pick.key:
                return option
        raise NoHorizonError(f"{pick.title()} cannot be sized for {scenario.name!r} as changed")


def _month(month: int, factor: float, base: float, option: SizedOption, plan: Plan) -> MonthFleet:
    low, high = _sample_fleets(option)
    workload = plan.scenario.workload
    output = option.monthly_output_tokens
    return MonthFleet(
        month=month,
        factor=factor,
        demand=base * factor,
        option=option,
        fleet=option_fleet(option, plan),
        low=option_fleet(option, plan, low),
        high=option_fleet(option, plan, high),
        output_tokens=output,
        input_tokens=output * workload.isl / workload.osl,
    )


def _sample_fleets(option: SizedOption) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The hourly replicas of the samples at P10 and P90 of cost (a sample that misses the SLA
    everywhere counts as the largest fleet any sample needs)."""
    spread = option.spread
    drawn = set(spread.sample_fleet)
    fleets = [f for i, f in enumerate(spread.fleets) if i in drawn]
    if not fleets:
        return option.hourly_replicas, option.hourly_replicas
    largest = max(fleets, key=lambda f: f.total_usd)
    chosen = [largest if i == MISSED else spread.fleets[i] for i in spread.sample_fleet]
    chosen.sort(key=lambda f: f.total_usd)
    at = [max(0, math.ceil(p / 100.0 * len(chosen)) - 1) for p in (10.0, 90.0)]
    return chosen[at[0]].hourly_replicas, chosen[at[1]].hourly_replicas
