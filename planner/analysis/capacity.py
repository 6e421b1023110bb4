"""Scenario + curves + prices -> one Option per engine x GPU x TP, and the Plan that ranks them.

Each candidate is sized by planner.sizing.size (SLA -> concurrency per replica -> replicas -> nodes)
and priced by one CostModel (planner.sizing.costs) chosen from the scenario, or passed in.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from errors import NoDataError
from hardware.gpus import load_gpu_specs
from planner.analysis.measurement_plan import TP_SIZES as PHYSICS_TP_SIZES
from planner.analysis.measurement_plan import MeasurementPlan, plan_measurements
from planner.analysis.recommend import Recommendation, Verdict, recommend
from planner.analysis.site_power import with_power_limit
from planner.curves.load import LoadCurve
from planner.curves.spelling import engine_name, gpu_name
from planner.engine.reach_errors import reach_error
from planner.engine.transfer import TRANSFER_ERROR, Target, physics_only_curve
from planner.fitting.fit import CurveFit
from planner.fitting.shapes import shaped_fitter
from planner.inputs.prices import PriceEntry, catalog_version, scenario_price
from planner.inputs.scenario import Scenario
from planner.physics.identity import same_or_twin
from planner.sizing.costs import CostModel, cost_model_for
from planner.sizing.draws import Draws
from planner.sizing.options import Option, SizedOption
from planner.sizing.selection import select_curves
from planner.sizing.size import Pricing, size_option


@dataclass(frozen=True, slots=True)
class Plan:
    """Options cheapest first (rejected ones last), the recommendation and plan-wide warnings."""

    scenario: Scenario
    options: tuple[Option, ...]
    recommendation: Recommendation
    warnings: tuple[str, ...]
    catalog_version: str
    prices_used: tuple[PriceEntry, ...]
    # What to measure where no sound curve backs an engine x GPU pair (None: every pair has one).
    measurement_plan: MeasurementPlan | None = None
    draws: Draws = field(default_factory=Draws)  # the error samples every option was sized over
    # When nothing is recommended and the model's curves at other precisions were left out: the
    # sentence that says so (the binding reason a person acts on first).
    precision_note: str | None = None


def make_plan(
    scenario: Scenario,
    curves: Sequence[LoadCurve],
    prices: Sequence[PriceEntry],
    *,
    fitter: Callable[[LoadCurve], CurveFit] | None = None,
    cost_model: CostModel | None = None,
    draws: Draws | None = None,
) -> Plan:
    """Size and price every candidate for the scenario and recommend the cheapest that fits.

    Each chosen curve's output tok/s is corrected by the shared shape of its sibling curves
    (planner.fitting.shapes, said in its flags). `fitter` replaces that fit, `cost_model` the one
    the scenario's pricing_mode names (planner.sizing.costs), `draws` the error samples every option
    is sized over (planner.sizing.draws; default: Draws()).
    """
    candidates, warnings = select_curves(scenario, curves)
    if not candidates:
        measurements = _with_estimate(
            plan_measurements(scenario, (), curves), scenario, curves, prices
        )
        message = _no_candidate_message(scenario, curves, warnings)
        note = precision_left_out(scenario, curves)
        raise NoDataError(f"{note} {message}" if note else message, measurements)
    price_by_gpu = {
        gpu: scenario_price(scenario, prices, gpu) for gpu in sorted({c.gpu for c in candidates})
    }
    fit = fitter or shaped_fitter(curves, [c.curve for c in candidates])
    costs = cost_model or cost_model_for(scenario.options)
    drawn = draws or Draws()
    options = [
        size_option(scenario, c, Pricing(costs, price_by_gpu[c.gpu]), fit(c.curve), drawn)
        for c in candidates
    ]
    warnings.extend(note for p in price_by_gpu.values() for note in costs.price_warnings(p))
    options = with_power_limit(options, scenario)
    options.sort(key=_sort_key)
    budget = scenario.budget.monthly_usd if scenario.budget else None
    used = tuple(e for p in price_by_gpu.values() for e in (p.entry, p.reserved_entry) if e)
    rec = recommend(
        options,
        budget,
        factors=scenario.factors,
        preference_tolerance_pct=scenario.factors.preference_tolerance_pct,
    )
    measurements = plan_measurements(scenario, options, curves)
    no_data = measurements is not None and measurements.no_data
    if no_data:
        measurements = _with_estimate(measurements, scenario, curves, prices)
    return Plan(
        scenario=scenario,
        options=tuple(options),
        recommendation=_said(rec, warnings, no_data),
        warnings=tuple(warnings),
        catalog_version=catalog_version(tuple(prices)),
        prices_used=used,
        measurement_plan=measurements,
        draws=drawn,
        precision_note=None if rec.choice else precision_left_out(scenario, curves),
    )


def precision_left_out(scenario: Scenario, curves: Sequence[LoadCurve]) -> str | None:
    """'The scenario asks for FP8; 62 curves of this model measured at FP4 were not used...'
    when a stated precision left the model's own (or its twins') curves out; else None."""
    if scenario.precision is None:
        return None
    other = Counter(
        curve.key.precision or "not stated"
        for curve in curves
        if (curve.key.precision or "") != scenario.precision
        and (curve.points or curve.rate_points)
        and same_or_twin(curve.key.model, scenario.model)
    )
    if not other:
        return None
    listed = ", ".join(
        f"{count} at {precision.upper()}" for precision, count in other.most_common()
    )
    return (
        f"The scenario asks for {scenario.precision.upper()}: this model's curves measured "
        f"{listed} were not used. Plan at that precision (or any precision) to use them."
    )


def _said(rec: Recommendation, warnings: list[str], no_data: bool) -> Recommendation:
    """No data backing any option is the binding reason; otherwise, when nothing fits, what was
    never considered (too far a workload, no data) belongs in the answer, not only in the
    warnings."""
    if rec.choice is not None:
        return rec
    if no_data:
        return replace(rec, verdict=Verdict.NO_DATA)
    if rec.flagged is None and warnings and rec.verdict is not Verdict.OVER_POWER:
        return replace(rec, reason=f"{rec.reason} Not considered: {' '.join(warnings)}")
    return rec


def replan(plan: Plan, scenario: Scenario, prices: Sequence[PriceEntry] | None = None) -> Plan:
    """`scenario`, a change of `plan`'s own that leaves its model, workload and candidates alone
    (demand, SLA, budget, fleet options, prices), planned over the curves and fits `plan` chose,
    its error samples and (unless given) the prices it used: nothing is selected or fitted again,
    so a what-if or a sensitivity move costs a sizing, not a plan."""
    curves = list({id(o.curve): o.curve for o in plan.options}.values())
    fits = {id(o.curve): o.fit for o in plan.options}

    def fitter(curve: LoadCurve) -> CurveFit:
        found = fits.get(id(curve))  # a curve the selection made anew: fitted as make_plan would
        return found if found is not None else shaped_fitter(curves, [curve])(curve)

    used = plan.prices_used if prices is None else prices
    return make_plan(scenario, curves, used, fitter=fitter, draws=plan.draws)


def _with_estimate(
    measurements: MeasurementPlan | None,
    scenario: Scenario,
    curves: Sequence[LoadCurve],
    prices: Sequence[PriceEntry],
) -> MeasurementPlan | None:
    """The measurement plan with the physics-only estimate beside it (no data: nothing of this
    model was measured soundly), when the model's facts allow one."""
    if measurements is None or not measurements.no_data:
        return measurements
    estimate = physics_only_estimate(scenario, curves, prices)
    return replace(measurements, estimate=estimate)


def physics_only_estimate(
    scenario: Scenario, curves: Sequence[LoadCurve], prices: Sequence[PriceEntry]
) -> str | None:
    """One sentence: the cheapest option meeting the SLA on physics-only curves (the model's
    config with other models' efficiencies, planner.engine.transfer); None when none can be
    built or none meets it."""
    estimated = [
        built
        for target in _targets(scenario)
        if not isinstance(built := physics_only_curve(target, curves), str)
    ]
    if not estimated:
        return None
    plan = make_plan(scenario, estimated, prices)
    choice = plan.recommendation.choice
    if choice is None:
        return None
    cost = choice.spread.percentiles()["total_monthly_cost_usd"]
    span = "" if cost is None else f" (P10-P90 ${cost.p10:,.0f}-${cost.p90:,.0f})"
    error = reach_error("another model", TRANSFER_ERROR).text()
    return (
        f"A physics-only estimate, with no sound measurement of these deployments (validated error "
        f"{error}): {engine_name(choice.engine)} TP{choice.key.tp} on "
        f"{choice.nodes} node(s) of {gpu_name(choice.gpu)}, ${choice.total_monthly_cost_usd:,.0f}"
        f"/month at {choice.spread.confidence:.0%} confidence{span}; measure it to replace the "
        "estimate."
    )


def _targets(scenario: Scenario) -> list[Target]:
    specs = {spec.gpu: spec for spec in load_gpu_specs()}
    wanted = scenario.candidates
    return [
        Target(scenario.model, scenario.precision, engine, specs[gpu], tp, *_workload(scenario))
        for engine in wanted.engines
        for gpu in wanted.gpus
        if gpu in specs
        for tp in (wanted.tp or PHYSICS_TP_SIZES)
    ]


def _workload(scenario: Scenario) -> tuple[int, int]:
    return scenario.workload.isl, scenario.workload.osl


def _sort_key(option: Option) -> tuple[int, float, int, int]:
    if isinstance(option, SizedOption):
        return 0, option.total_monthly_cost_usd, option.gpus, option.replicas
    return 1, math.inf, 0, 0


def _no_candidate_message(
    scenario: Scenario, curves: Sequence[LoadCurve], warnings: list[str]
) -> str:
    wanted = scenario.model_id
    models = sorted({c.key.model_id for c in curves})
    if not any(same_or_twin(model, wanted) for model in models):
        known = ", ".join(models[:12]) or "none"
        return (
            f"no measured curve matches model {scenario.model!r} (compared as {wanted!r}); "
            f"models with curves: {known}. Import or probe runs for this model first"
        )
    detail = "; ".join(warnings[:6])
    return f"no curve for {scenario.model!r} fits the scenario's candidates: {detail}"
