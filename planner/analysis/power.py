"""Power for a budget over time: the pick's facility kW month by month against the site's limit
(how many nodes fit, the months over it), energy per 1M tokens, and every sized option of the
plan in power at the scenario's own demand."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from planner.analysis.capacity import Plan
from planner.analysis.horizon import MonthFleet, option_fleet
from planner.analysis.measured_power import MeasuredPower, measured_power
from planner.analysis.owning import node_it_kw
from planner.inputs.horizon_spec import HorizonSpec
from planner.sizing.costs import uncovered_node_months
from planner.sizing.options import SizedOption

__all__ = ["OptionPower", "PowerView", "option_power", "power_view"]


@dataclass(frozen=True, slots=True)
class OptionPower:
    """One sized option of the plan at the scenario's own demand, in power."""

    option: str
    nodes: int
    facility_kw: float  # nodes x IT kW x PUE x (1 + headroom)
    kwh_per_million_tokens: float
    fits: bool | None  # within the site's limit (None: no limit given)
    measured: bool = False  # its power per GPU is a run's measurement (else TDP x utilisation)


@dataclass(frozen=True, slots=True)
class PowerView:
    """The fleet's facility power month by month, against the site's limit."""

    node_it_kw: float
    node_facility_kw: float  # IT x PUE x (1 + headroom): what one node takes from the limit
    monthly_kw: tuple[float, ...]  # the stated-confidence fleet's peak, facility kW
    kwh_per_million_tokens: tuple[float, ...]
    limit_kw: float | None
    months_over: tuple[int, ...]  # months whose fleet needs more than the limit
    max_nodes: int | None  # nodes that fit in the limit
    text: str
    options: tuple[OptionPower, ...] = ()  # every sized option of the plan, month 1
    measured: bool = False  # the node's power is a run's measurement (else TDP x utilisation)


def power_view(
    horizon: HorizonSpec,
    months: Sequence[MonthFleet],
    gpu: str,
    gpus: int,
    measured: MeasuredPower | None = None,
) -> PowerView:
    """The pick's facility power month by month against the site's limit."""
    it_kw, text = node_it_kw(gpu, gpus, horizon, measured)
    per_node = it_kw * horizon.pue * (1.0 + horizon.power_headroom_pct / 100.0)
    monthly = tuple(m.nodes * per_node for m in months)
    hours = months[0].fleet.packing.hours_per_month
    energy = tuple(
        uncovered_node_months(m.fleet, 0)
        * hours
        * it_kw
        * horizon.pue
        / ((m.input_tokens + m.output_tokens) / 1e6)
        for m in months
    )
    limit = horizon.power_limit_kw
    over = (
        ()
        if limit is None
        else tuple(m.month for m, kw in zip(months, monthly, strict=True) if kw > limit + 1e-9)
    )
    most = None if limit is None else math.floor(limit / per_node + 1e-9)
    words = (
        f"{text}; facility {per_node:.1f} kW per node with PUE {horizon.pue:g} and "
        f"{horizon.power_headroom_pct:g}% headroom"
    )
    return PowerView(
        it_kw, per_node, monthly, energy, limit, over, most, words, measured=measured is not None
    )


def option_power(plan: Plan, horizon: HorizonSpec) -> tuple[OptionPower, ...]:
    """Facility kW and energy per 1M tokens of every sized option at the scenario's demand."""
    found = []
    for option in plan.options:
        if not isinstance(option, SizedOption):
            continue
        fleet = option_fleet(option, plan)
        gpus, hours = fleet.packing.gpus_per_node, fleet.packing.hours_per_month
        watts = measured_power(option)
        it_kw, _ = node_it_kw(option.gpu, gpus, horizon, watts)
        per_node = it_kw * horizon.pue * (1.0 + horizon.power_headroom_pct / 100.0)
        nodes = int(fleet.hourly_nodes.max())
        workload = plan.scenario.workload
        tokens = option.monthly_output_tokens * (1.0 + workload.isl / workload.osl)
        energy = uncovered_node_months(fleet, 0) * hours * it_kw * horizon.pue / (tokens / 1e6)
        limit = horizon.power_limit_kw
        fits = None if limit is None else nodes * per_node <= limit + 1e-9
        found.append(
            OptionPower(option.title(), nodes, nodes * per_node, energy, fits, watts is not None)
        )
    return tuple(found)
