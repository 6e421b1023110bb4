"""A Plan as JSON-safe data, a flat options table, CSV and XLSX (inputs, options, curves).

The only place planner data leaves as plain dicts; everything needed to reproduce the plan
(scenario, prices, catalog version, run ids, fit summaries) goes into plan_to_dict.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from planner.analysis.capacity import Plan
from planner.analysis.sensitivity import SensitivityRow
from planner.analysis.uncertainty import OptionRange, PlanRanges
from planner.fitting.families import family_formula
from planner.fitting.fit import CurveFit, FitResult
from planner.fitting.predict import predict
from planner.inputs.scenario import PricingMode, Scaling, scenario_to_yaml
from planner.sizing.options import Option, RejectedOption, SizedOption
from reports.brief import tie_sentence
from reports.cells import csv_cell
from reports.names import option_name

if TYPE_CHECKING:
    from planner.analysis.budget import BudgetPlan
    from planner.analysis.what_if import WhatIfRow

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]
Cell = str | float | int | None
PLAN_SCHEMA = "capplan-plan/1"
_FIT_SLOTS = ("throughput", "ttft_p50", "ttft_p99", "tpot", "e2e_p99")


def options_table(plan: Plan) -> list[dict[str, Cell]]:
    """One row per option, units in the column names."""
    choice = plan.recommendation.choice
    return [_option_row(option, option is choice) for option in plan.options]


def _option_row(option: Option, recommended: bool) -> dict[str, Cell]:
    s = option if isinstance(option, SizedOption) else None
    return {
        "recommended": recommended,
        "option": option_name(option.key),
        "engine": option.engine,
        "gpu": option.gpu,
        "tp": option.tp,
        "curve": option.curve.label_text(),
        "run_id": option.curve.run_id,
        "provenance": option.curve.provenance,
        "meets_sla": option.meets_sla,
        "above_physical_ceiling": option.above_ceiling,
        "within_budget": s.within_budget if s else None,
        "facility_kw": _finite(s.facility_kw if s else None),
        "fits_power_limit": s.fits_power if s and s.power_limit_kw is not None else None,
        "concurrency_per_replica": s.concurrency_per_replica if s else None,
        "binding_constraint": s.binding_constraint if s else None,
        "output_tok_s_per_replica": _finite(s.output_tok_s_per_replica if s else None),
        "replicas": s.replicas if s else None,
        "gpus_per_replica": option.gpus_per_replica,
        "gpus": s.gpus if s else None,
        "replicas_per_node": option.replicas_per_node,
        "nodes": s.nodes if s else None,
        "usd_per_gpu_hour": option.usd_per_gpu_hour,
        "price_source": option.price_source,
        "monthly_cost_usd": _finite(s.monthly_cost_usd if s else None),
        "ops_cost_usd": _finite(s.ops_cost_usd if s else 0.0),
        "total_monthly_cost_usd": _finite(s.total_monthly_cost_usd if s else None),
        "sizing_confidence": s.confidence if s else None,
        "expected_monthly_cost_usd": _finite(s.expected_monthly_cost_usd if s else None),
        "monthly_output_tokens": _finite(s.monthly_output_tokens if s else None),
        "usd_per_million_output_tokens": _finite(s.usd_per_million_output_tokens if s else None),
        "budget_capacity": _finite(s.budget_capacity if s else None),
        "budget_capacity_unit": option.budget_capacity_unit,
        # A rejected option is not sized: its row has always shown the default fleet and pricing.
        "scaling": str(s.scaling if s else Scaling.STATIC),
        "pricing_mode": str(s.pricing_mode if s else PricingMode.ON_DEMAND),
        "reserved_usd_per_gpu_hour": s.reserved_usd_per_gpu_hour if s else None,
        "compute_on_demand_usd": _finite(s.compute_on_demand_usd if s else None),
        "compute_reserved_usd": _finite(s.compute_reserved_usd if s else None),
        "gpu_hours_per_month": _finite(s.gpu_hours_per_month if s else None),
        "startup_s": s.startup_s if s else None,
        "startup_assumed": s.startup_assumed if s else False,
        "static_monthly_cost_usd": _finite(s.static_monthly_cost_usd if s else None),
        "autoscale_saving_usd": _finite(s.autoscale_saving_usd if s else None),
        "rejected_reason": option.reason if isinstance(option, RejectedOption) else None,
        "flags": "; ".join(option.flags),
        "notes": "; ".join(s.notes if s else ()),
    }


def plan_to_dict(plan: Plan) -> dict[str, object]:
    """Everything needed to reproduce the plan, JSON-safe (no inf/NaN, no objects)."""
    rec = plan.recommendation
    document: dict[str, JsonValue] = {
        "schema": PLAN_SCHEMA,
        "scenario": plan.scenario.model_dump(mode="json"),
        "scenario_yaml": scenario_to_yaml(plan.scenario),
        "catalog_version": plan.catalog_version,
        "prices_used": [_json(asdict(entry)) for entry in plan.prices_used],
        "recommendation": {
            "choice": rec.choice.title() if rec.choice else None,
            "choice_run_id": rec.choice.curve.run_id if rec.choice else None,
            "runner_up": rec.runner_up.title() if rec.runner_up else None,
            "reason": rec.reason,
            "margin_usd": _finite(rec.margin_usd),
            "margin_pct": _finite(rec.margin_pct),
            "binding_text": rec.binding_text,
            "factors_applied": list(rec.factors_applied),
            "overridden_cheapest": (
                rec.overridden_cheapest.title() if rec.overridden_cheapest else None
            ),
            "preference_tolerance_pct": rec.preference_tolerance_pct,
            "verdict": rec.verdict.value,
            "over_budget": rec.over_budget.title() if rec.over_budget else None,
            "over_budget_monthly_cost_usd": (
                rec.over_budget.total_monthly_cost_usd if rec.over_budget else None
            ),
            "over_power": rec.over_power.title() if rec.over_power else None,
            "flagged": rec.flagged.title() if rec.flagged else None,
            "flagged_concerns": list(rec.flagged.concerns) if rec.flagged else [],
        },
        "sizing_confidence": plan.scenario.options.sizing_confidence,
        "warnings": list(plan.warnings),
        "run_ids": [_json(run_id) for run_id in _run_ids(plan)],
        "options": [_option_dict(option, option is rec.choice) for option in plan.options],
        "measurement_plan": _json(asdict(plan.measurement_plan)) if plan.measurement_plan else None,
    }
    return dict(document)


def ranges_to_dict(ranges: PlanRanges) -> dict[str, JsonValue]:
    """P10/P50/P90 per option, win shares and how the ranges were made, JSON-safe."""
    return {
        "samples": ranges.samples,
        "seed": ranges.seed,
        "noise_scale": ranges.noise_scale,
        "method": ranges.method,
        "point_choice": ranges.point_choice.title() if ranges.point_choice else None,
        "choice_change_share": ranges.choice_change_share,
        "no_choice_share": ranges.no_choice_share,
        "flags": list(ranges.flags),
        "options": [_range_dict(option) for option in ranges.options],
    }


def _range_dict(option: OptionRange) -> JsonValue:
    """An option's range with the option named as before its key existed (title, engine...)."""
    fields = asdict(option)
    del fields["key"]
    names = {"title": option.title, "engine": option.engine, "gpu": option.gpu, "tp": option.tp}
    return _json({**names, **fields})


def range_rows(ranges: PlanRanges) -> list[dict[str, Cell]]:
    """One row per option: nodes and monthly cost at P10/P50/P90, and how often it wins."""
    rows: list[dict[str, Cell]] = []
    for option in ranges.options:
        nodes, cost = option.nodes, option.total_monthly_cost_usd
        rows.append(
            {
                "option": option_name(option.key),
                "nodes_planned": option.point_nodes,
                "nodes_p10": nodes.p10 if nodes else None,
                "nodes_p50": nodes.p50 if nodes else None,
                "nodes_p90": nodes.p90 if nodes else None,
                "usd_per_month_p10": cost.p10 if cost else None,
                "usd_per_month_p50": cost.p50 if cost else None,
                "usd_per_month_p90": cost.p90 if cost else None,
                "meets_sla_share_pct": round(100 * option.feasible_share, 1),
                "pick_share_pct": round(100 * option.pick_share, 1),
            }
        )
    return rows


def tie_note(plan: Plan, ranges: PlanRanges | None) -> str | None:
    """Plain words when the choice costs the same as another option (within TIE_USD) that the
    resampled plans also pick (brief.tie_sentence); None otherwise."""
    return tie_sentence(plan, ranges)


def sensitivity_rows(rows: list[SensitivityRow]) -> list[dict[str, Cell]]:
    """The tornado's data: each input moved down/up and the recommended option's cost change."""
    return [
        {
            "input": row.label,
            "low": row.low_value,
            "base": row.base_value,
            "high": row.high_value,
            "cost_change_low_pct": _finite(row.low_change_pct),
            "cost_change_high_pct": _finite(row.high_change_pct),
            "recommendation_flips": row.flips,
            "notes": "; ".join(row.notes),
        }
        for row in rows
    ]


def _run_ids(plan: Plan) -> list[int]:
    return sorted({o.curve.run_id for o in plan.options if o.curve.run_id is not None})


def _option_dict(option: Option, recommended: bool) -> JsonValue:
    row: dict[str, JsonValue] = dict(_option_row(option, recommended))
    row["flags"] = list(option.flags)
    if isinstance(option, SizedOption):
        row["notes"], row["failed_targets"] = list(option.notes), []
        row["hourly_replicas"] = list(option.hourly_replicas)
    else:
        row["notes"], row["failed_targets"] = [], list(option.failed_targets)
        row["hourly_replicas"] = []
    row["curve_key"] = _json(asdict(option.curve.key))
    row["points"] = [_json(asdict(point)) for point in option.curve.points]
    row["fits"] = _fits_dict(option.fit)
    return row


def _fits_dict(fit: CurveFit) -> JsonValue:
    out: dict[str, JsonValue] = {}
    for slot in _FIT_SLOTS:
        result: FitResult | None = getattr(fit, slot)
        if result is None:
            out[slot] = None
            continue
        summary: dict[str, JsonValue] = {k: _json(v) for k, v in result.summary().items()}
        summary["formula"] = family_formula(result.family)
        out[slot] = summary
    out["series"] = {
        "ttft_p50": fit.ttft_p50_stat,
        "ttft_p99": fit.ttft_p99_stat,
        "tpot": fit.tpot_stat,
    }
    out["flags"] = list(fit.flags)
    return out


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _json(value: object) -> JsonValue:
    """Recursively make a value JSON-safe: tuples -> lists, inf/NaN -> None."""
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, float):
        return _finite(value)
    if value is None or isinstance(value, bool | int | str):
        return value
    return str(value)


def plan_to_csv(plan: Plan) -> str:
    """The options table as CSV text."""
    rows = options_table(plan)
    buffer = io.StringIO()
    if not rows:
        return ""
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: csv_cell(value) for key, value in row.items()} for row in rows)
    return buffer.getvalue()


def plan_to_xlsx(
    plan: Plan,
    ranges: PlanRanges | None = None,
    swings: list[SensitivityRow] | None = None,
    what_if: Sequence[WhatIfRow] | None = None,
    budget: BudgetPlan | None = None,
) -> bytes:
    """Workbook with sheets inputs, options and curves (numbers as numbers, units in headers),
    plus cost ranges and sensitivity when given, the what-if rows (made from the plan when
    not given) and the budget over time (reports.budget_xlsx) when given."""
    # openpyxl only when a workbook is asked for: plan_to_dict/plan_to_csv stay light.
    from openpyxl import Workbook  # type: ignore[import-untyped]  # noqa: PLC0415

    from planner.analysis.what_if import what_if_demand  # noqa: PLC0415
    from reports.what_if_view import what_if_sheet  # noqa: PLC0415
    from reports.xlsx_layout import input_unit, unit_format, write_sheet  # noqa: PLC0415

    book = Workbook()
    book.remove(book.active)
    inputs: list[list[Cell]] = [
        [key, value, input_unit(key)]
        for key, value in _flatten(plan.scenario.model_dump(mode="json"))
    ]
    inputs.append(["price_catalog_version", plan.catalog_version, ""])
    for entry in plan.prices_used:
        price_key = f"catalog_price_usd_per_gpu_hour.{entry.gpu}"
        inputs.append([price_key, entry.usd_per_gpu_hour, "USD/GPU-hour"])
        source = f"{entry.describe()} {entry.source}"
        inputs.append([f"catalog_price_source.{entry.gpu}", source, ""])
    inputs.append(["recommendation", plan.recommendation.reason, ""])
    write_sheet(book, "inputs", ["input", "value", "unit"], inputs, row_format=unit_format)
    rows = options_table(plan)
    header = list(rows[0]) if rows else []
    write_sheet(book, "options", header, [list(row.values()) for row in rows])
    curves = [line for option in plan.options for line in _curve_rows(option)]
    write_sheet(book, "curves", list(_CURVE_COLUMNS), curves)
    extra = (
        ("ranges", range_rows(ranges) if ranges else []),
        ("sensitivity", sensitivity_rows(swings) if swings else []),
        ("what_if", what_if_sheet(what_if if what_if is not None else what_if_demand(plan))),
    )
    for title, table in extra:
        if table:
            write_sheet(book, title, list(table[0]), [list(row.values()) for row in table])
    if budget is not None:
        from reports.budget_xlsx import add_budget_sheets  # noqa: PLC0415

        add_budget_sheets(book, budget)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _cell(value: Cell) -> Cell:
    return value if not isinstance(value, bool) else ("yes" if value else "no")


def _flatten(value: object, prefix: str = "") -> list[tuple[str, Cell]]:
    if isinstance(value, dict):
        out: list[tuple[str, Cell]] = []
        for key, item in value.items():
            out.extend(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list):
        return [(prefix, ", ".join(str(v) for v in value))]
    if value is None or isinstance(value, str | int | float):
        return [(prefix, _cell(value))]
    return [(prefix, str(value))]


_CURVE_COLUMNS = (
    "option",
    "run_id",
    "concurrency",
    "is_measured_level",
    "extrapolated",
    "measured_output_tok_s",
    "fitted_output_tok_s",
    "fitted_output_tok_s_lo",
    "fitted_output_tok_s_hi",
    "measured_p99_ttft_ms",
    "fitted_p99_ttft_ms",
    "fitted_p99_ttft_ms_lo",
    "fitted_p99_ttft_ms_hi",
    "measured_tpot_ms",
    "fitted_tpot_ms",
    "fitted_tpot_ms_lo",
    "fitted_tpot_ms_hi",
)


def _curve_rows(option: Option) -> list[list[Cell]]:
    """Measured points and fitted values (at each level and at the chosen concurrency)."""
    by_c = {point.concurrency: point for point in option.curve.points}
    extra = [option.concurrency_per_replica] if isinstance(option, SizedOption) else []
    xs = sorted(set(by_c) | set(extra))
    rows: list[list[Cell]] = []
    for prediction in predict(option.fit, xs):
        point = by_c.get(prediction.concurrency)
        ttft = None if point is None else (point.p99_ttft_ms or point.ttft_ms)
        tpot = None if point is None else (point.p99_tpot_ms or point.tpot_ms or point.p50_tpot_ms)
        rows.append(
            [
                option_name(option.key),
                option.curve.run_id,
                prediction.concurrency,
                "yes" if point is not None else "no",
                "yes" if prediction.extrapolated else "no",
                None if point is None else point.output_tok_s,
                prediction.output_tok_s,
                prediction.output_tok_s_lo,
                prediction.output_tok_s_hi,
                ttft,
                prediction.p99_ttft_ms,
                prediction.p99_ttft_ms_lo,
                prediction.p99_ttft_ms_hi,
                tpot,
                prediction.tpot_ms,
                prediction.tpot_ms_lo,
                prediction.tpot_ms_hi,
            ]
        )
    return rows
