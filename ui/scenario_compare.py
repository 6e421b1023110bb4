"""Side-by-side comparison of saved scenarios: the inputs that differ, each plan's answer, and one
grouped bar chart of monthly cost per engine x GPU; plus plan-history rows. No streamlit here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from planner.analysis.capacity import Plan
from planner.inputs.scenario import Scenario
from planner.sizing.options import SizedOption
from reports.names import engine_name, gpu_name, option_name
from ui.input_labels import input_label
from workflows.history import Regenerated
from workflows.store import PlanRecord

Cell = str | int | float | bool | None
Row = dict[str, Cell]


def flat_inputs(scenario: Scenario) -> dict[str, str]:
    """Every set input of a scenario as dotted key -> text (`sla.ttft_p99_ms` -> '300.0')."""
    out: dict[str, str] = {}
    _flatten("", scenario.model_dump(mode="json", exclude_none=True, exclude={"name"}), out)
    return out


def _flatten(prefix: str, value: object, out: dict[str, str]) -> None:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    elif isinstance(value, list):
        out[prefix] = ", ".join(str(item) for item in value)
    else:
        out[prefix] = str(value)


def inputs_diff_rows(scenarios: Sequence[Scenario]) -> list[Row]:
    """One row per input that differs between the scenarios (unset shows as '—'), one column
    per scenario name."""
    flats = [flat_inputs(scenario) for scenario in scenarios]
    keys = sorted(set().union(*flats))
    rows: list[Row] = []
    for key in keys:
        values = [flat.get(key, "—") for flat in flats]
        if len(set(values)) > 1:
            row: Row = {"input": input_label(key)}
            row.update({s.name: v for s, v in zip(scenarios, values, strict=True)})
            rows.append(row)
    return rows


def results_rows(plans: Sequence[Plan]) -> list[Row]:
    """One row per scenario: recommended option, nodes, $/month, $/1M output tokens and the
    constraint that binds it. Over budget, the cheapest option meeting the SLA is shown with its
    cost and named as over budget; blank only when nothing meets the SLA."""
    rows: list[Row] = []
    for plan in plans:
        choice = plan.recommendation.choice
        # Over budget: the cheapest sound option and its cost; flagged-only: no cost to show.
        shown = choice or plan.recommendation.over_budget
        rows.append(
            {
                "scenario": plan.scenario.name,
                "recommended": _answer(plan, choice, shown),
                "nodes": shown.nodes if shown else None,
                "usd_per_month": shown.total_monthly_cost_usd if shown else None,
                "usd_per_1m_output_tokens": (
                    shown.usd_per_million_output_tokens if shown else None
                ),
                "binding_constraint": "budget" if shown and not choice else _binding(choice),
            }
        )
    return rows


def _answer(plan: Plan, choice: SizedOption | None, shown: SizedOption | None) -> str:
    if choice is not None:
        return option_name(choice.key)
    if (flagged := plan.recommendation.flagged) is not None:
        return f"nothing sound meets the SLA; only on flagged data: {option_name(flagged.key)}"
    if shown is None:
        return "nothing meets the SLA"
    budget = plan.scenario.budget
    limit = f" ${budget.monthly_usd:,.0f}/month" if budget else ""
    return f"over the{limit} budget: cheapest meeting the SLA is {option_name(shown.key)}"


def _binding(choice: SizedOption | None) -> str | None:
    return choice.binding_constraint if choice else None


def cost_rows(plans: Sequence[Plan]) -> list[Row]:
    """Monthly cost per scenario per engine x GPU (the cheapest TP of each), SLA met or not."""
    rows: list[Row] = []
    for plan in plans:
        best: dict[str, tuple[float, bool]] = {}
        for option in plan.options:
            if not isinstance(option, SizedOption):
                continue  # a rejected option has no cost to draw
            cost = option.total_monthly_cost_usd
            label = f"{engine_name(option.engine)} · {gpu_name(option.gpu)}"
            if label not in best or cost < best[label][0]:
                best[label] = (cost, option.meets_sla)
        for label, (cost, meets) in sorted(best.items()):
            rows.append(
                {
                    "scenario": plan.scenario.name,
                    "option": label,
                    "usd_per_month": cost,
                    "meets_sla": meets,
                }
            )
    return rows


def cost_chart(plans: Sequence[Plan]) -> go.Figure:
    """Grouped bars: monthly cost (USD) per engine x GPU, one bar group per option, one colour
    per scenario."""
    rows = cost_rows(plans)
    figure = go.Figure()
    for plan in plans:
        mine = [row for row in rows if row["scenario"] == plan.scenario.name]
        figure.add_bar(
            name=plan.scenario.name,
            x=[row["option"] for row in mine],
            y=[row["usd_per_month"] for row in mine],
            hovertext=["meets SLA" if row["meets_sla"] else "misses SLA" for row in mine],
        )
    figure.update_layout(
        barmode="group",
        title="Monthly cost per engine x GPU (cheapest TP)",
        xaxis_title="engine · GPU",
        yaxis_title="total cost (USD / month)",
        legend_title="scenario",
    )
    return figure


def history_rows(records: Sequence[PlanRecord]) -> list[Row]:
    """One row per recorded plan: when, the choice, its cost and nodes, runs, catalog version."""
    return [
        {
            "record_id": record.record_id,
            "recorded_at_utc": record.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            "choice": record.summary.choice_title or "nothing meets the SLA",
            "usd_per_month": record.summary.total_monthly_cost_usd,
            "nodes": record.summary.nodes,
            "run_ids": ", ".join(map(str, record.run_ids)),
            "catalog_version": record.catalog_version,
            "recorded_by": record.created_by or "",
        }
        for record in records
    ]


def regenerated_rows(result: Regenerated) -> list[Row]:
    """Recorded vs regenerated summary, field by field, with whether each matches."""
    recorded, now = result.record.summary, result.summary
    fields: list[tuple[str, Cell, Cell]] = [
        ("choice", recorded.choice_title, now.choice_title),
        ("usd_per_month", recorded.total_monthly_cost_usd, now.total_monthly_cost_usd),
        ("nodes", recorded.nodes, now.nodes),
        ("recommendation", recorded.recommendation, now.recommendation),
    ]
    # Text columns: one column mixes names, dollars and counts (Arrow needs one type).
    return [
        {"field": name, "recorded": _text(old), "regenerated": _text(new), "matches": old == new}
        for name, old, new in fields
    ]


def _text(value: Cell) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)
