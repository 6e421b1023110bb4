"""Which input moves the answer most: re-plan with each input moved down and up (tornado data).

Every row says the input, its low/base/high values, the cost and nodes of each option at each
side, and whether the recommendation flips; rows are sorted by effect size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from errors import PlanningError, ScenarioError
from planner.analysis.capacity import Plan, make_plan, replan
from planner.analysis.uncertainty import TIE_USD
from planner.curves.load import LoadCurve
from planner.inputs.prices import PriceEntry
from planner.inputs.scenario import DEMAND_UNITS, Scenario, scenario_from_dict
from planner.inputs.sla_targets import SLA_TARGET_BY_FIELD
from planner.sizing.options import Option, OptionKey, SizedOption

DEFAULT_STEP = 0.1
Path = tuple[
    str, ...
]  # key path inside the scenario mapping, e.g. ("options", "redundancy_replicas")


@dataclass(frozen=True, slots=True)
class OptionSwing:
    """One option's nodes and total monthly cost at the low, base and high input (None: fails)."""

    key: OptionKey
    low_nodes: int | None
    base_nodes: int | None
    high_nodes: int | None
    low_total_monthly_cost_usd: float | None
    base_total_monthly_cost_usd: float | None
    high_total_monthly_cost_usd: float | None


@dataclass(frozen=True, slots=True)
class SensitivityRow:
    """One input moved down and up: the reference option's cost change and any flip."""

    input: str  # dotted scenario path, e.g. "demand.peak_requests_per_s", "pricing.H100-SXM-80GB"
    label: str
    low_value: float
    base_value: float
    high_value: float
    reference: OptionKey | None  # the base plan's recommended option (else its cheapest sized)
    low_change_pct: float | None  # reference cost change; None when it cannot serve that side
    high_change_pct: float | None
    effect_pct: float  # largest |change|; inf when the reference option stops meeting the SLA
    low_choice: OptionKey | None
    high_choice: OptionKey | None
    flips: bool  # the recommendation differs from the base one on either side
    options: tuple[OptionSwing, ...]
    notes: tuple[str, ...]  # clipping and sides that could not be planned

    def reference_swing(self) -> OptionSwing | None:
        """The reference option's nodes and cost at low, base and high."""
        return next((o for o in self.options if o.key == self.reference), None)


@dataclass(frozen=True, slots=True)
class _Move:
    """One input to move: where it sits, its values, and why a side was clipped."""

    path: Path
    label: str
    base: float
    low: float
    high: float
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Side:
    """A re-plan at one side of a move (plan None when the planner refused)."""

    plan: Plan | None
    note: str | None


def sensitivity(
    scenario: Scenario,
    curves: Sequence[LoadCurve],
    prices: Sequence[PriceEntry],
    *,
    step: float = DEFAULT_STEP,
) -> list[SensitivityRow]:
    """Re-plan with each set input moved by -/+step (counts by -/+1), sorted by effect size.

    Inputs: the demand amount, peak_to_average (when it moves the fleet), target utilisation,
    every SLA target set, each candidate GPU's price (every quote for it, scenario and catalog),
    ISL, OSL, the stream cap and budget when set, redundancy replicas and model updates per
    month (+/-1). A move that would leave the valid range is clipped and the row says so.
    """
    if not (math.isfinite(step) and 0 < step < 1):
        raise PlanningError(f"step must be a fraction between 0 and 1 (0.1 = 10%), got {step!r}")
    base = make_plan(scenario, curves, prices)
    reference = _reference(base)
    rows = [
        _row(move, base, reference, *_sides(base, curves, prices, move))
        for move in _moves(scenario, base, step)
    ]
    return sorted(rows, key=lambda r: (-r.effect_pct, not r.flips, r.input))


def _reference(plan: Plan) -> SizedOption | None:
    """The recommended option, else the cheapest one meeting the SLA (over budget), else None."""
    choice = plan.recommendation.choice
    if choice is not None:
        return choice
    return next((o for o in plan.options if isinstance(o, SizedOption)), None)


# --- the moves ------------------------------------------------------------------------------


def _moves(scenario: Scenario, base: Plan, step: float) -> list[_Move]:
    demand, opts = scenario.demand, scenario.options
    moves = [
        _scaled(("demand", demand.kind), DEMAND_UNITS[demand.kind], demand.amount, step),
        _scaled(
            ("options", "target_utilization"),
            "target utilisation",
            opts.target_utilization,
            step,
            high_limit=1.0,
        ),
        _counted(
            ("options", "redundancy_replicas"), "redundancy replicas", opts.redundancy_replicas
        ),
        _counted(
            ("options", "model_updates_per_month"),
            "model updates per month",
            opts.model_updates_per_month,
        ),
        _scaled(("workload", "isl"), "ISL, tokens", scenario.workload.isl, step, whole=True),
        _scaled(("workload", "osl"), "OSL, tokens", scenario.workload.osl, step, whole=True),
    ]
    if demand.hourly_profile is None and (
        demand.kind == "monthly_output_tokens" or "peak_to_average" in demand.model_fields_set
    ):
        moves.append(
            _scaled(
                ("demand", "peak_to_average"),
                "peak-to-average ratio",
                demand.peak_to_average,
                step,
                low_limit=1.0,
            )
        )
    for name, target in scenario.sla.targets().items():
        moves.append(
            _scaled(("sla", name), SLA_TARGET_BY_FIELD[name].sensitivity_label, target, step)
        )
    if opts.max_streams_per_replica is not None:
        moves.append(
            _scaled(
                ("options", "max_streams_per_replica"),
                "max streams per replica",
                opts.max_streams_per_replica,
                step,
                whole=True,
                low_limit=1.0,
            )
        )
    if scenario.budget is not None:
        moves.append(
            _scaled(
                ("budget", "monthly_usd"), "monthly budget, USD", scenario.budget.monthly_usd, step
            )
        )
    for gpu, price in _gpu_prices(base).items():
        moves.append(_scaled(("pricing", gpu), f"price of {gpu}, USD per GPU-hour", price, step))
    return moves


def _gpu_prices(plan: Plan) -> dict[str, float]:
    """USD per GPU-hour each candidate GPU was priced at in the base plan."""
    prices: dict[str, float] = {}
    for option in plan.options:
        prices.setdefault(option.gpu, option.usd_per_gpu_hour)
    return dict(sorted(prices.items()))


def _scaled(
    path: Path,
    label: str,
    base: float,
    step: float,
    *,
    whole: bool = False,
    low_limit: float | None = None,
    high_limit: float | None = None,
) -> _Move:
    """base x (1 -/+ step), rounded when the input is a whole number, clipped to its limits."""
    low, high = base * (1 - step), base * (1 + step)
    if whole:
        low, high = max(float(round(low)), 1.0), float(round(high))
    notes = []
    if low_limit is not None and low < low_limit:
        notes.append(f"{label}: -{step:.0%} gives {low:g}, below {low_limit:g}; clipped to it")
        low = low_limit
    if high_limit is not None and high > high_limit:
        notes.append(f"{label}: +{step:.0%} gives {high:g}, above {high_limit:g}; clipped to it")
        high = high_limit
    return _Move(path, label, float(base), low, high, tuple(notes))


def _counted(path: Path, label: str, base: float) -> _Move:
    """A count moved by -/+1; the low side stays at the base when that would go below 0."""
    if base < 1:
        note = f"{label}: {base:g} - 1 is below 0; the low side stays at {base:g}"
        return _Move(path, label, float(base), float(base), base + 1.0, (note,))
    return _Move(path, label, float(base), base - 1.0, base + 1.0, ())


# --- re-planning ----------------------------------------------------------------------------


def _sides(
    base: Plan, curves: Sequence[LoadCurve], prices: Sequence[PriceEntry], move: _Move
) -> tuple[_Side, _Side]:
    return (
        _replan(base, curves, prices, move, move.low),
        _replan(base, curves, prices, move, move.high),
    )


def _replan(
    base: Plan,
    curves: Sequence[LoadCurve],
    prices: Sequence[PriceEntry],
    move: _Move,
    value: float,
) -> _Side:
    """One side of a move. A moved ISL or OSL chooses and fits curves again (another workload
    may read other data); every other input re-sizes the base plan's own curves and fits."""
    if value == move.base:
        return _Side(base, None)
    scenario = base.scenario
    try:
        if move.path[0] == "pricing":
            gpu, factor = move.path[1], value / move.base
            moved = _scaled_pricing(scenario, gpu, factor)
            return _Side(replan(base, moved, _scaled_prices(prices, gpu, factor)), None)
        changed = _with(scenario, move.path, value)
        if move.path[0] == "workload":
            return _Side(make_plan(changed, curves, prices), None)
        return _Side(replan(base, changed, prices), None)
    except (PlanningError, ScenarioError) as exc:
        return _Side(None, f"{move.label} = {value:g}: no plan ({exc})")


def _with(scenario: Scenario, path: Path, value: float) -> Scenario:
    """The scenario with one nested value replaced (validated again)."""
    raw = scenario.model_dump()
    node = raw
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = int(value) if _is_int(scenario, path) else value
    return scenario_from_dict(raw, scenario.name)


def _is_int(scenario: Scenario, path: Path) -> bool:
    node: object = scenario
    for key in path:
        node = getattr(node, key, None)
    return isinstance(node, int) and not isinstance(node, bool)


def _scaled_pricing(scenario: Scenario, gpu: str, factor: float) -> Scenario:
    """The scenario with its own prices for the GPU (if any) multiplied by factor."""
    if gpu not in scenario.pricing:
        return scenario
    raw = scenario.model_dump()
    price = raw["pricing"][gpu]
    if isinstance(price, dict):
        raw["pricing"][gpu] = {k: v * factor if v is not None else None for k, v in price.items()}
    else:
        raw["pricing"][gpu] = price * factor
    return scenario_from_dict(raw, scenario.name)


def _scaled_prices(prices: Sequence[PriceEntry], gpu: str, factor: float) -> list[PriceEntry]:
    """Every catalog quote for the GPU multiplied by factor."""
    return [
        replace(
            entry,
            usd_per_gpu_hour=entry.usd_per_gpu_hour * factor,
            usd_per_instance_hour=None
            if entry.usd_per_instance_hour is None
            else entry.usd_per_instance_hour * factor,
        )
        if entry.gpu == gpu
        else entry
        for entry in prices
    ]


# --- rows -----------------------------------------------------------------------------------


def _row(
    move: _Move, base: Plan, reference: SizedOption | None, low: _Side, high: _Side
) -> SensitivityRow:
    ref = reference.key if reference is not None else None
    base_cost = reference.total_monthly_cost_usd if reference is not None else None
    low_change = _change(_cost(low.plan, ref), base_cost)
    high_change = _change(_cost(high.plan, ref), base_cost)
    base_choice = _choice(base)
    low_choice, high_choice = _choice(low.plan), _choice(high.plan)
    return SensitivityRow(
        input=".".join(move.path),
        label=move.label,
        low_value=move.low,
        base_value=move.base,
        high_value=move.high,
        reference=ref,
        low_change_pct=low_change,
        high_change_pct=high_change,
        effect_pct=_effect(ref, low_change, high_change),
        low_choice=low_choice,
        high_choice=high_choice,
        flips=_flipped(base_choice, low.plan) or _flipped(base_choice, high.plan),
        options=tuple(_swing(o, low.plan, high.plan) for o in base.options),
        notes=move.notes + tuple(n for n in (low.note, high.note) if n),
    )


def _flipped(base_choice: OptionKey | None, plan: Plan | None) -> bool:
    """The moved plan recommends something else, and not merely an option tied on cost."""
    choice = _choice(plan)
    if choice == base_choice:
        return False
    if plan is None or base_choice is None or choice is None:
        return True
    chosen, base = _cost(plan, choice), _cost(plan, base_choice)
    return chosen is None or base is None or abs(chosen - base) > TIE_USD


def _choice(plan: Plan | None) -> OptionKey | None:
    choice = plan.recommendation.choice if plan is not None else None
    return choice.key if choice is not None else None


def _find(plan: Plan | None, key: OptionKey | None) -> SizedOption | None:
    if plan is None or key is None:
        return None
    return next((o for o in plan.options if o.key == key and isinstance(o, SizedOption)), None)


def _cost(plan: Plan | None, key: OptionKey | None) -> float | None:
    option = _find(plan, key)
    return option.total_monthly_cost_usd if option is not None else None


def _change(cost: float | None, base: float | None) -> float | None:
    if cost is None or base is None or base <= 0:
        return None
    return 100.0 * (cost - base) / base


def _effect(reference: OptionKey | None, low: float | None, high: float | None) -> float:
    if reference is None:
        return 0.0
    if low is None or high is None:
        return math.inf
    return max(abs(low), abs(high))


def _swing(option: Option, low: Plan | None, high: Plan | None) -> OptionSwing:
    lo, hi = _find(low, option.key), _find(high, option.key)
    base = option if isinstance(option, SizedOption) else None
    return OptionSwing(
        key=option.key,
        low_nodes=lo.nodes if lo else None,
        base_nodes=base.nodes if base else None,
        high_nodes=hi.nodes if hi else None,
        low_total_monthly_cost_usd=lo.total_monthly_cost_usd if lo else None,
        base_total_monthly_cost_usd=base.total_monthly_cost_usd if base else None,
        high_total_monthly_cost_usd=hi.total_monthly_cost_usd if hi else None,
    )
