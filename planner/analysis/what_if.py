"""What if demand grows: the plan re-made at each of the scenario's demand multipliers
(what_if.demand_multipliers; 1x is the plan itself), each row saying what would be bought, for how
much per month and per year, and whether the pick differs from the 1x one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from errors import PlanningError
from planner.analysis.capacity import Plan, replan
from planner.analysis.recommend import Verdict
from planner.inputs.scenario import Scenario
from planner.sizing.options import OptionKey, SizedOption

MONTHS_PER_YEAR = 12


@dataclass(frozen=True, slots=True)
class WhatIfRow:
    """The plan at `multiplier` x the demand.

    `option` is the recommendation, else (over budget) the cheapest option meeting the SLA on
    sound data, else None; `verdict` says which. `pick_changes` is True when that option differs
    from the 1x row's. `note` says why there is no option (or no plan at all).
    """

    multiplier: float
    demand: float  # in `unit`
    unit: str
    verdict: Verdict | None  # None: the planner refused this demand (see note)
    option: OptionKey | None
    nodes: int | None
    gpus: int | None
    monthly_usd: float | None
    within_budget: bool | None
    pick_changes: bool
    note: str | None

    @property
    def yearly_usd(self) -> float | None:
        """Twelve months of the monthly cost."""
        return None if self.monthly_usd is None else self.monthly_usd * MONTHS_PER_YEAR


def what_if_demand(plan: Plan, multipliers: Sequence[float] | None = None) -> tuple[WhatIfRow, ...]:
    """One row per multiplier (default: the scenario's what_if.demand_multipliers), 1x being
    `plan` itself, the others re-planned over its curves, fits, prices and error samples."""
    wanted = tuple(multipliers or plan.scenario.what_if.demand_multipliers)
    picked = _picked(plan)
    reference = picked.key if picked is not None else None
    rows = []
    for multiplier in wanted:
        moved = plan if multiplier == 1.0 else replan_at_demand(plan, multiplier)
        note = None if moved is not None else f"no plan at {multiplier:g}x the demand"
        rows.append(_row(plan.scenario, multiplier, moved, note, reference))
    return tuple(rows)


def replan_at_demand(plan: Plan, factor: float) -> Plan | None:
    """The plan re-made at `factor` x its demand, reusing its curves, fits, prices and error
    samples (None when the planner refuses that demand)."""
    try:
        return replan(plan, scaled_demand(plan.scenario, factor))
    except PlanningError:
        return None


def scaled_demand(scenario: Scenario, factor: float) -> Scenario:
    """The scenario with its demand figure multiplied by `factor` (whatever its kind)."""
    demand = scenario.demand
    update: dict[str, float] = {demand.kind: demand.amount * factor}
    return scenario.model_copy(update={"demand": demand.model_copy(update=update)})


def _picked(plan: Plan) -> SizedOption | None:
    """What a row shows: the recommendation, else the sound option over budget or over the
    site's power limit."""
    rec = plan.recommendation
    return rec.choice or rec.over_budget or rec.over_power


def _row(
    scenario: Scenario,
    multiplier: float,
    plan: Plan | None,
    note: str | None,
    reference: OptionKey | None,
) -> WhatIfRow:
    demand, unit = scenario.demand.amount * multiplier, scenario.demand.unit
    option = _picked(plan) if plan is not None else None
    changes = (option.key if option else None) != reference
    if plan is None or option is None:
        verdict = plan.recommendation.verdict if plan is not None else None
        why = note or (
            "only data with concerns meets the SLA"
            if verdict is Verdict.NOT_SOUND
            else "no option meets the SLA"
        )
        return WhatIfRow(
            multiplier, demand, unit, verdict, None, None, None, None, None, changes, why
        )
    verdict = plan.recommendation.verdict
    over = {Verdict.OVER_BUDGET: "over the budget", Verdict.OVER_POWER: "over the power limit"}
    return WhatIfRow(
        multiplier=multiplier,
        demand=demand,
        unit=unit,
        verdict=plan.recommendation.verdict,
        option=option.key,
        nodes=option.nodes,
        gpus=option.gpus,
        monthly_usd=option.total_monthly_cost_usd,
        within_budget=option.within_budget,
        pick_changes=changes,
        note=over.get(verdict),
    )
