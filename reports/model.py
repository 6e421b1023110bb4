"""The capacity report: one frozen model of a Plan that every format renders (reports.render,
html_page, pdf): summary, options, chart data, cost-vs-demand re-plans, assumptions, provenance,
runs and what is needed to reproduce the plan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from measurements.run_file import RunFile
from planner.analysis.budget import BudgetPlan
from planner.analysis.capacity import Plan
from planner.analysis.sensitivity import SensitivityRow
from planner.analysis.uncertainty import PlanRanges
from planner.analysis.what_if import (
    MONTHS_PER_YEAR,
    WhatIfRow,
    replan_at_demand,
    what_if_demand,
)
from planner.fitting.predict import predict
from planner.inputs.scenario import Scenario, scenario_to_yaml
from planner.inputs.sla_targets import SLA_TARGET_BY_FIELD
from planner.physics.roofline import check_curve
from planner.sizing.options import Option, OptionKey, SizedOption
from reports.export import Cell, options_table
from reports.names import option_name
from reports.price_rows import PriceRow, price_rows

REPORT_SCHEMA = "capplan-report/1"
DEMAND_FACTORS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
GRID_POINTS = 40


@dataclass(frozen=True, slots=True)
class RunMeta:
    """One stored run behind the plan: who measured it, when, on what."""

    run_id: int
    source: str
    provenance: str
    label: str | None
    started_at: datetime | None
    imported_at: datetime | None
    engine: str
    engine_version: str | None
    gpu: str | None
    origin_file: str | None


def run_meta(run_id: int, imported_at: datetime | None, run: RunFile) -> RunMeta:
    """RunMeta of a stored run file (the store's StoredRun gives all three)."""
    deployment = run.deployment
    return RunMeta(
        run_id=run_id,
        source=str(run.source),
        provenance=str(run.provenance),
        label=run.label,
        started_at=run.started_at,
        imported_at=imported_at,
        engine=deployment.engine,
        engine_version=deployment.engine_version,
        gpu=deployment.gpu,
        origin_file=run.origin_file,
    )


@dataclass(frozen=True, slots=True)
class Summary:
    """The finance page: the choice, its monthly cost and range, and why."""

    scenario_name: str
    recommendation: str
    verdict: str  # recommended / no data / data not sound / SLA not met / over budget
    choice: str | None
    runner_up: str | None
    total_monthly_cost_usd: float | None
    total_yearly_cost_usd: float | None  # twelve months of total_monthly_cost_usd
    expected_monthly_cost_usd: float | None  # the median fleet over the error samples
    cost_p10_usd: float | None
    cost_p50_usd: float | None
    cost_p90_usd: float | None
    nodes: int | None
    gpus: int | None
    binding_text: str | None
    factors_applied: tuple[str, ...]
    margin_usd: float | None
    margin_pct: float | None


@dataclass(frozen=True, slots=True)
class OptionChart:
    """One option's measured points and its fit with band on a concurrency grid."""

    title: str
    provenance: str
    measured_concurrency: tuple[float, ...]
    measured_output_tok_s: tuple[float | None, ...]
    measured_p99_ttft_ms: tuple[float | None, ...]
    grid_concurrency: tuple[float, ...]
    fit_output_tok_s: tuple[float | None, ...]
    fit_output_tok_s_lo: tuple[float | None, ...]
    fit_output_tok_s_hi: tuple[float | None, ...]
    fit_p99_ttft_ms: tuple[float | None, ...]
    fit_p99_ttft_ms_lo: tuple[float | None, ...]
    fit_p99_ttft_ms_hi: tuple[float | None, ...]
    extrapolated: tuple[bool, ...]
    chosen_concurrency: float | None


@dataclass(frozen=True, slots=True)
class DemandSeries:
    """One option's nodes and total monthly cost when the demand is scaled (None: cannot serve)."""

    title: str
    demand_factor: tuple[float, ...]
    demand: tuple[float, ...]
    demand_unit: str
    total_monthly_cost_usd: tuple[float | None, ...]
    nodes: tuple[int | None, ...]


@dataclass(frozen=True, slots=True)
class Assumption:
    """One input the plan rests on, with its unit and what it means in plain words."""

    name: str
    value: str
    unit: str
    meaning: str


@dataclass(frozen=True, slots=True)
class CurveOrigin:
    """Where one option's curve came from and what the physics check says about it."""

    option: str
    run_id: int | None
    provenance: str  # measured / imported / published / projected / adjusted
    label: str
    curve_flags: tuple[str, ...]
    physics_flags: tuple[str, ...]
    physics_notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Report:
    """Everything each report format renders; `plan` is kept whole for the JSON."""

    title: str
    generated_at: datetime
    summary: Summary
    option_columns: tuple[str, ...]
    option_rows: tuple[tuple[Cell, ...], ...]
    charts: tuple[OptionChart, ...]
    demand_series: tuple[DemandSeries, ...]
    nodes_by_option: tuple[tuple[str, int | None], ...]
    assumptions: tuple[Assumption, ...]
    prices: tuple[PriceRow, ...]
    provenance: tuple[CurveOrigin, ...]
    runs: tuple[RunMeta, ...]
    warnings: tuple[str, ...]
    scenario_yaml: str
    run_ids: tuple[int, ...]
    catalog_version: str
    plan: Plan
    ranges: PlanRanges | None
    swings: tuple[SensitivityRow, ...] | None
    what_if: tuple[WhatIfRow, ...] = ()  # the plan at the scenario's demand multipliers
    budget: BudgetPlan | None = None  # the months ahead priced every way (None: not asked)


def build_report(
    plan: Plan,
    *,
    ranges: PlanRanges | None,
    swings: Sequence[SensitivityRow] | None,
    runs: Sequence[RunMeta],
    generated_at: datetime,
    what_if: Sequence[WhatIfRow] | None = None,
    budget: BudgetPlan | None = None,
) -> Report:
    """The report model of a plan: re-plans the demand from 25% to 200% for the cost chart; the
    what-if rows are the ones given (made from the plan when not given)."""
    table = options_table(plan)
    columns = tuple(table[0]) if table else ()
    run_ids = tuple(sorted({o.curve.run_id for o in plan.options if o.curve.run_id is not None}))
    return Report(
        title=f"Capacity plan: {plan.scenario.name}",
        generated_at=generated_at,
        summary=_summary(plan, ranges),
        option_columns=columns,
        option_rows=tuple(tuple(row.values()) for row in table),
        charts=tuple(_chart(option) for option in plan.options),
        demand_series=demand_series(plan),
        nodes_by_option=tuple((option_name(o.key), _sized_nodes(o)) for o in plan.options),
        assumptions=_assumptions(plan.scenario),
        prices=price_rows(plan, generated_at),
        provenance=tuple(_origin(option) for option in plan.options),
        runs=tuple(r for r in runs if r.run_id in run_ids),
        warnings=plan.warnings,
        scenario_yaml=scenario_to_yaml(plan.scenario),
        run_ids=run_ids,
        catalog_version=plan.catalog_version,
        plan=plan,
        ranges=ranges,
        swings=None if swings is None else tuple(swings),
        what_if=tuple(what_if) if what_if is not None else what_if_demand(plan),
        budget=budget,
    )


def _summary(plan: Plan, ranges: PlanRanges | None) -> Summary:
    rec = plan.recommendation
    choice = rec.choice
    spread = None
    if ranges is not None and choice is not None:
        match = next((o for o in ranges.options if o.key == choice.key), None)
        spread = match.total_monthly_cost_usd if match else None
    return Summary(
        scenario_name=plan.scenario.name,
        recommendation=rec.reason,
        verdict=rec.verdict.value,
        choice=option_name(choice.key) if choice else None,
        runner_up=option_name(rec.runner_up.key) if rec.runner_up else None,
        total_monthly_cost_usd=choice.total_monthly_cost_usd if choice else None,
        total_yearly_cost_usd=choice.total_monthly_cost_usd * MONTHS_PER_YEAR if choice else None,
        expected_monthly_cost_usd=choice.expected_monthly_cost_usd if choice else None,
        cost_p10_usd=spread.p10 if spread else None,
        cost_p50_usd=spread.p50 if spread else None,
        cost_p90_usd=spread.p90 if spread else None,
        nodes=choice.nodes if choice else None,
        gpus=choice.gpus if choice else None,
        binding_text=rec.binding_text,
        factors_applied=rec.factors_applied,
        margin_usd=rec.margin_usd,
        margin_pct=rec.margin_pct,
    )


def _chart(option: Option) -> OptionChart:
    points = option.curve.points
    measured = [p.concurrency for p in points]
    chosen = option.concurrency_per_replica if isinstance(option, SizedOption) else None
    top = max([*measured, chosen or 0.0, 1.0])
    # Past the last level by a quarter, so the extrapolated stretch shows (marked as such).
    grid = np.unique(np.concatenate([np.linspace(1.0, top * 1.25, GRID_POINTS), measured]))
    preds = predict(option.fit, grid.tolist())
    return OptionChart(
        title=option_name(option.key),
        provenance=option.curve.provenance,
        measured_concurrency=tuple(measured),
        measured_output_tok_s=tuple(p.output_tok_s for p in points),
        measured_p99_ttft_ms=tuple(p.p99_ttft_ms or p.ttft_ms for p in points),
        grid_concurrency=tuple(p.concurrency for p in preds),
        fit_output_tok_s=tuple(p.output_tok_s for p in preds),
        fit_output_tok_s_lo=tuple(p.output_tok_s_lo for p in preds),
        fit_output_tok_s_hi=tuple(p.output_tok_s_hi for p in preds),
        fit_p99_ttft_ms=tuple(p.p99_ttft_ms for p in preds),
        fit_p99_ttft_ms_lo=tuple(p.p99_ttft_ms_lo for p in preds),
        fit_p99_ttft_ms_hi=tuple(p.p99_ttft_ms_hi for p in preds),
        extrapolated=tuple(p.extrapolated for p in preds),
        chosen_concurrency=chosen,
    )


def demand_series(
    plan: Plan, factors: Sequence[float] = DEMAND_FACTORS
) -> tuple[DemandSeries, ...]:
    """Each option re-planned at each share of the demand, reusing the plan's curves and fits."""
    demand = plan.scenario.demand
    base = demand.amount
    plans = [replan_at_demand(plan, f) for f in factors]
    return tuple(
        DemandSeries(
            title=option_name(option.key),
            demand_factor=tuple(factors),
            demand=tuple(base * f for f in factors),
            demand_unit=demand.unit,
            total_monthly_cost_usd=tuple(_cost(p, option.key) for p in plans),
            nodes=tuple(_nodes(p, option.key) for p in plans),
        )
        for option in plan.options
    )


def _cost(plan: Plan | None, key: OptionKey) -> float | None:
    option = _sized(plan, key)
    return None if option is None else option.total_monthly_cost_usd


def _nodes(plan: Plan | None, key: OptionKey) -> int | None:
    option = _sized(plan, key)
    return None if option is None else option.nodes


def _sized(plan: Plan | None, key: OptionKey) -> SizedOption | None:
    """The re-plan's option with this key, when it is sized (None: absent or rejected)."""
    if plan is None:
        return None
    option = next((o for o in plan.options if o.key == key), None)
    return option if isinstance(option, SizedOption) else None


def _sized_nodes(option: Option) -> int | None:
    return option.nodes if isinstance(option, SizedOption) else None


def _assumptions(scenario: Scenario) -> tuple[Assumption, ...]:
    rows = [
        Assumption("model", scenario.model, "", "the model served"),
        Assumption("precision", scenario.precision or "any", "", "weights and activations"),
        Assumption("workload.isl", str(scenario.workload.isl), "tokens", "mean prompt length"),
        Assumption("workload.osl", str(scenario.workload.osl), "tokens", "mean output length"),
        Assumption(
            f"demand.{scenario.demand.kind}",
            f"{scenario.demand.amount:g}",
            scenario.demand.unit,
            "peak demand to serve",
        ),
        Assumption(
            "demand.peak_to_average",
            f"{scenario.demand.peak_to_average:g}",
            "ratio",
            "peak load over average load",
        ),
        Assumption(
            "demand.hourly_profile",
            "set" if scenario.demand.hourly_profile else "flat",
            "",
            "load shape over the day",
        ),
    ]
    for name, value in scenario.sla.targets().items():
        target = SLA_TARGET_BY_FIELD[name]
        meaning = f"{target.report_label}: {target.meaning}"
        rows.append(Assumption(f"sla.{name}", f"{value:g}", target.unit, meaning))
    if scenario.budget is not None:
        rows.append(Assumption("budget.monthly_usd", f"{scenario.budget.monthly_usd:g}", "USD", ""))
    opts = scenario.options
    rows += [
        Assumption("options.target_utilization", f"{opts.target_utilization:g}", "share", ""),
        Assumption("options.redundancy_replicas", str(opts.redundancy_replicas), "replicas", ""),
        Assumption(
            "options.gpus_per_node",
            "per GPU" if opts.gpus_per_node is None else str(opts.gpus_per_node),
            "GPUs",
            "unset: each GPU's node shape from the catalog (8 per HGX node, 4 per NVL72 tray)",
        ),
        Assumption("options.hours_per_month", f"{opts.hours_per_month:g}", "h", "billed hours"),
        Assumption("options.scaling", opts.scaling, "", "static fleet or autoscaled"),
        Assumption("options.pricing_mode", opts.pricing_mode, "", "on-demand, reserved or mix"),
    ]
    return tuple(rows)


def _origin(option: Option) -> CurveOrigin:
    check = check_curve(option.curve)
    return CurveOrigin(
        option=option_name(option.key),
        run_id=option.curve.run_id,
        provenance=option.curve.provenance,
        label=option.curve.label_text(),
        curve_flags=option.curve.flags,
        physics_flags=check.flags,
        physics_notes=check.notes,
    )
