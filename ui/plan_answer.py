"""The Plan page's answer: the recommendation in two sentences plus bullets, the options table a
person decides on (every other column behind "details"), and the plan's warnings grouped."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from planner.analysis.capacity import Plan
from planner.analysis.uncertainty import PlanRanges
from planner.analysis.what_if import MONTHS_PER_YEAR
from planner.inputs.scenario import Scenario
from reports.brief import node_gpus, recommendation_brief, tie_sentence, unstable_sentence
from reports.export import options_table, range_rows
from reports.flag_text import group_warnings
from reports.lead_table import options_lead_table
from reports.names import option_name
from reports.price_rows import mix_flags, price_rows
from reports.what_if_view import amount_text
from ui.text import plain
from workflows.curves import target_text

# Widths in pixels that fit the page at 1440 px beside the sidebar, every column in view.
LEAD_FORMAT = {
    "Option": st.column_config.TextColumn(width=290),
    "Meets SLA": st.column_config.TextColumn(width=130),
    "Nodes": st.column_config.NumberColumn(width=55),
    "GPUs": st.column_config.NumberColumn(width=55),
    "Cost ($/month)": st.column_config.NumberColumn(format="$%,.0f", width=105),
    "Cost per 1M output tokens ($)": st.column_config.NumberColumn(
        "$/1M output tokens", format="$%.2f", width=120
    ),
    "Limited by": st.column_config.TextColumn(width=210),
}


RANGE_COLUMNS = {  # reports.export.range_rows' fields as the page heads them
    "option": "Option",
    "nodes_planned": "Nodes planned",
    "nodes_p10": "Nodes P10",
    "nodes_p50": "Nodes P50",
    "nodes_p90": "Nodes P90",
    "usd_per_month_p10": "Cost P10 ($/month)",
    "usd_per_month_p50": "Cost P50 ($/month)",
    "usd_per_month_p90": "Cost P90 ($/month)",
    "meets_sla_share_pct": "Meets the SLA (% of samples)",
    "pick_share_pct": "Picked or tied (% of samples)",
}
RANGE_FORMAT = {
    **{name: st.column_config.NumberColumn(format="$%,.0f") for name in RANGE_COLUMNS.values()
       if name.startswith("Cost")},
    **{name: st.column_config.NumberColumn(format="%.0f%%") for name in RANGE_COLUMNS.values()
       if name.endswith("samples)")},
}  # fmt: skip


def range_table(ranges: PlanRanges) -> pd.DataFrame:
    """The cost ranges as the page shows them: headers in words, nodes and dollars whole,
    shares in whole percent; a cost no fleet reaches (that share misses the SLA) blank."""
    frame = pd.DataFrame(range_rows(ranges)).rename(columns=RANGE_COLUMNS)
    for name in frame.columns:
        if name.startswith(("Nodes", "Cost", "Meets", "Picked")):
            numbers = pd.to_numeric(frame[name], errors="coerce")
            numbers = numbers.where(numbers.abs() != float("inf"))
            frame[name] = numbers.round().astype("Int64")
    return frame


def whole_counts(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """Count columns as whole numbers with gaps (pandas would make '3' with a gap '3.00')."""
    for column in columns:
        if column in frame.columns:
            frame[column] = frame[column].astype("Int64")
    return frame


def md(text: str) -> str:
    """Text for st.markdown and the alert boxes, shown as written (ui/text.py)."""
    return plain(text)


def recommendation(plan: Plan) -> None:
    """What to run (success box) or that nothing is recommended (warning), with its bullets and
    the money in three figures."""
    brief = recommendation_brief(plan)
    box = st.success if brief.sound else st.warning
    box(md(brief.headline))
    st.caption(md(planned_for(plan.scenario)))
    if brief.bullets:
        st.markdown("\n".join(f"- {md(line)}" for line in brief.bullets))
    rec = plan.recommendation
    if rec.choice is None:
        return
    cost, yearly, nodes, margin = st.columns(4)
    choice = rec.choice
    monthly, expected = choice.total_monthly_cost_usd, choice.expected_monthly_cost_usd
    cost.metric(
        "Monthly cost ($)",
        f"${monthly:,.0f}",
        _expected_delta(monthly, expected),
        delta_color="inverse",  # a cost: lower is better (green, arrow down)
        help=f"The fleet meets the SLA at the planned demand with {choice.confidence:.0%} "
        "probability given the fits' held-out error (sizing confidence); the expected cost is "
        "the median fleet over the same error samples.",
    )
    yearly.metric(
        "Yearly cost ($)",
        f"${monthly * MONTHS_PER_YEAR:,.0f}",
        _expected_delta(monthly * MONTHS_PER_YEAR, expected * MONTHS_PER_YEAR),
        delta_color="inverse",
        help=f"Twelve months of the monthly cost (the fleet sized to meet the SLA with "
        f"{choice.confidence:.0%} probability) at today's prices and demand.",
    )
    per_node = node_gpus(plan, choice)
    nodes.metric(
        f"Nodes billed ({choice.node_words}s)",
        f"{choice.nodes:d} x {per_node:d} GPUs",
        f"{choice.nodes * per_node:d} GPUs billed, {choice.gpus:d} used "
        f"({choice.replicas:d} replicas)",
        delta_color="off",
        delta_arrow="off",
        help="The bill is for whole nodes; GPUs used are those the replicas run on (the rest "
        "of the last node is paid for but idle).",
    )
    if rec.margin_usd is not None and rec.runner_up is not None:
        overridden = rec.overridden_cheapest is not None
        label = "Premium over the cheapest" if overridden else "Margin over the runner-up"
        margin.metric(
            f"{label} ($/month)",
            f"${rec.margin_usd:,.0f}",
            f"{rec.margin_pct or 0:.1f}% vs {option_name(rec.runner_up.key)}",
            delta_color="off",
        )


def planned_for(scenario: Scenario) -> str:
    """'Planned for 10 requests/s at peak, ISL 1,024 / OSL 1,024 tokens, TTFT p99 <= 1000 ms,
    no budget.' and that a number outside its field's range is not applied: the browser keeps
    such a value out of the page, so this line is where a person sees what was planned."""
    demand = scenario.demand
    targets = [target_text(name, limit) for name, limit in scenario.sla.targets().items()]
    budget = scenario.budget
    money = f"a ${budget.monthly_usd:,.0f}/month budget" if budget else "no budget"
    parts = [
        f"{amount_text(demand.amount)} {demand.unit}",
        f"ISL {scenario.workload.isl:,} / OSL {scenario.workload.osl:,} tokens",
        *targets,
        money,
    ]
    return (
        f"Planned for {', '.join(parts)}. A number typed outside its field's range is not "
        "applied: the field goes back to its last value and this plan stays as it was."
    )


def _expected_delta(planned_usd: float, expected_usd: float) -> str | None:
    """'-$8,000: expected $52,000' (signed: st.metric draws its arrow from the sign); None when
    the expected fleet is the planned one (no arrow for a difference of $0)."""
    gap = expected_usd - planned_usd
    if abs(gap) < 0.5:
        return None
    sign = "-" if gap < 0 else "+"
    return f"{sign}${abs(gap):,.0f}: expected ${expected_usd:,.0f}"


def stability_note(plan: Plan, ranges: PlanRanges | None) -> str | None:
    """A tie the resampling splits, or a pick that changes often, in one sentence (else None)."""
    return unstable_sentence(plan, ranges) or tie_sentence(plan, ranges)


def options(plan: Plan) -> None:
    """The lead table (seven columns), then every column behind a 'details' expander."""
    lead = whole_counts(pd.DataFrame(options_lead_table(plan)), ("Nodes", "GPUs"))
    st.dataframe(lead, hide_index=True, column_config=LEAD_FORMAT)
    with st.expander("Details: every column (as in the CSV, XLSX and JSON exports)"):
        full = pd.DataFrame(options_table(plan))
        counts = ("tp", "replicas", "gpus_per_replica", "gpus", "replicas_per_node", "nodes")
        st.dataframe(whole_counts(full, counts), hide_index=True)


def warnings(plan: Plan) -> None:
    """The plan's warnings, repeats merged, in one box."""
    lines = group_warnings(plan.warnings)
    if len(lines) == 1:
        st.warning(md(lines[0]))
    elif lines:
        st.warning("\n".join(f"- {md(line)}" for line in lines))


def price_notes(plan: Plan) -> None:
    """Quotes older than six months, undated, or of different kinds and sizes side by side: said
    on the page, not only in the reports (the Prices page holds the dated catalog)."""
    rows = price_rows(plan, datetime.now(UTC))
    lines = [*(flag for row in rows for flag in row.flags), *mix_flags(rows)]
    if lines:
        st.warning(
            "\n".join(f"- {md(line)}" for line in lines)
            + "\n\nCheck these prices on the Prices page, or type current ones under "
            "Candidates and prices.",
            icon=":material/schedule:",
        )
