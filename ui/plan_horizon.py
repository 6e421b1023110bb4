"""The Plan page's budget over time: the sidebar's "Months ahead" inputs (demand growth, the
commitment, owning and hosted-API prices, the site's power) and, under the what-if table, every
way to pay over those months: the cheapest with its range, the months where one overtakes
another, the fleet and each way's cumulative cost by month, what a forecast miss costs."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from errors import CapplanError
from planner.analysis.budget import BudgetPlan
from planner.inputs.horizon_spec import MAX_MONTHS, OwningSpec
from planner.inputs.scenario import Scenario
from reports.budget_view import budget_headline, budget_lines, million_tokens
from ui import resources as res
from ui.text import plain

_OWNING = OwningSpec.model_fields
ON = "plan_horizon_on"
BASE = "plan_horizon_base"  # what a loaded scenario's horizon set that no widget shows
# (widget key, horizon field path, default): the fields the sidebar shows.
FIELDS: tuple[tuple[str, tuple[str, ...], float | None], ...] = (
    ("plan_horizon_months", ("months",), 24),
    ("plan_horizon_growth", ("monthly_growth_pct",), 5.0),
    ("plan_horizon_1y", ("commitments", "reserved_1y"), None),
    ("plan_horizon_3y", ("commitments", "reserved_3y"), None),
    ("plan_horizon_node_price", ("owning", "node_price_usd"), None),
    ("plan_horizon_lead", ("owning", "lead_time_months"), _OWNING["lead_time_months"].default),
    ("plan_horizon_kwh", ("owning", "usd_per_kwh"), _OWNING["usd_per_kwh"].default),
    ("plan_horizon_api_in", ("hosted_api", "usd_per_million_input"), None),
    ("plan_horizon_api_out", ("hosted_api", "usd_per_million_output"), None),
    ("plan_horizon_power", ("power_limit_kw",), None),
)


def inputs() -> dict[str, object] | None:
    """The scenario's `horizon` from the sidebar (None: the months ahead are not planned)."""
    bar = st.sidebar
    bar.subheader("Months ahead")
    if not bar.checkbox(
        "Plan the months ahead",
        key=ON,
        help="Size the pick for every month of a growing demand and price every way to pay: "
        "on-demand, 1- and 3-year commitments, owned nodes, a hosted API.",
    ):
        return None
    base: dict[str, object] = dict(st.session_state.get(BASE) or {})
    listed = base.get("monthly_demand")
    if isinstance(listed, list):
        bar.caption(plain(f"Demand for {len(listed)} months as listed in the scenario file."))
    else:
        _number("plan_horizon_months", "Months", (1, MAX_MONTHS, 1), "%d")
        _number("plan_horizon_growth", "Demand growth per month (%)", (-49.0, 100.0, 1.0))
    _number(
        "plan_horizon_1y", "1-year commitment ($/GPU-hour; empty: the catalog's)", (0.01, 1e4, 0.05)
    )
    _number(
        "plan_horizon_3y", "3-year commitment ($/GPU-hour; empty: the catalog's)", (0.01, 1e4, 0.05)
    )
    _number(
        "plan_horizon_node_price",
        "Owned node price ($; empty: owning not priced)",
        (1.0, 1e9, 10_000.0),
    )
    _number("plan_horizon_lead", "Months from order to serving", (0, 36, 1), "%d")
    _number("plan_horizon_kwh", "Electricity ($/kWh)", (0.0, 10.0, 0.01), "%.3f")
    _number(
        "plan_horizon_api_in",
        "Hosted API $ per 1M input tokens (empty: none)",
        (0.0, 1e4, 0.05),
        "%.3f",
    )
    _number("plan_horizon_api_out", "Hosted API $ per 1M output tokens", (0.0, 1e4, 0.05), "%.3f")
    _number(
        "plan_horizon_power", "Site power for the fleet (kW; empty: no limit)", (1.0, 1e7, 10.0)
    )
    return horizon_from(base, {key: st.session_state.get(key) for key, _, _ in FIELDS})


def _number(key: str, label: str, bounds: tuple[float, float, float], fmt: str = "%.2f") -> None:
    """A number box showing FIELDS' default; `bounds`: lowest, highest, step."""
    low, high, step = bounds
    default = next(d for k, _, d in FIELDS if k == key)
    whole = fmt == "%d"
    st.sidebar.number_input(
        label,
        min_value=int(low) if whole else float(low),
        max_value=int(high) if whole else float(high),
        value=(int(default) if whole else float(default)) if default is not None else None,
        step=int(step) if whole else float(step),
        format=fmt,
        key=key,
    )


def horizon_from(base: dict[str, object], values: dict[str, object]) -> dict[str, object]:
    """The horizon mapping: `base` (a loaded scenario's) with the widgets' values over it; a
    section whose first price is empty (owning, hosted API) is left out."""
    horizon: dict[str, object] = {k: (dict(v) if isinstance(v, dict) else v)
                                  for k, v in base.items()}  # fmt: skip
    for key, path, _ in FIELDS:
        value = values.get(key)
        if "monthly_demand" in horizon and path[0] in ("months", "monthly_growth_pct"):
            continue
        section = horizon
        for part in path[:-1]:
            inner = section.setdefault(part, {})
            assert isinstance(inner, dict)
            section = inner
        if value is None:
            section.pop(path[-1], None)
        else:
            section[path[-1]] = value
    for name, first in (("owning", "node_price_usd"), ("hosted_api", "usd_per_million_input")):
        given = horizon.get(name)
        if isinstance(given, dict) and given.get(first) is None:
            del horizon[name]
    api = horizon.get("hosted_api")
    if isinstance(api, dict) and api.get("usd_per_million_output") is None:
        api["usd_per_million_output"] = api["usd_per_million_input"]
    return horizon


def widget_state(scenario: Scenario) -> dict[str, object]:
    """Session-state values that show a scenario's horizon (and keep what no widget shows)."""
    horizon = scenario.horizon
    state: dict[str, object] = {ON: horizon is not None}
    if horizon is None:
        state[BASE] = None
        return state
    dumped = horizon.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    state[BASE] = dumped
    full = horizon.model_dump(mode="json")
    for key, path, default in FIELDS:
        value: object = full
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        state[key] = value if value is not None or path[0] not in ("months",) else default
    return state


def budget_for(scenario: Scenario, url: str, version: int) -> BudgetPlan | CapplanError | None:
    """The scenario's months ahead priced every way (None: not asked; the error in words when
    the plan has nothing to carry over them)."""
    if scenario.horizon is None:
        return None
    try:
        with st.spinner("Pricing the months ahead..."):
            return res.session_for(scenario, url, version).budget
    except CapplanError as exc:
        return exc


def draw(found: BudgetPlan | CapplanError | None) -> None:
    """The months ahead under the what-if table (nothing when they were not asked for)."""
    if found is None:
        return
    st.subheader("Over the months ahead")
    if isinstance(found, CapplanError):
        st.error(plain(str(found)))
        return
    budget = found
    st.markdown(plain(budget_headline(budget)))
    st.dataframe(_ways(budget), hide_index=True, column_config=_WAY_FORMAT)
    left, right = st.columns(2)
    left.plotly_chart(_cumulative_figure(budget), key="plan_horizon_cumulative")
    right.plotly_chart(_fleet_figure(budget), key="plan_horizon_fleet")
    st.caption("\n".join(f"- {plain(line)}" for line in budget_lines(budget)))
    with st.expander("Month by month"):
        st.dataframe(_months(budget), hide_index=True)
    with st.expander("How it is priced"):
        for note in budget.notes:
            st.caption(plain(note))
        for path in budget.paths:
            st.caption(plain(f"{path.name}: {path.basis}"))
            for note in path.notes:
                st.caption(plain(note))
        for lens in budget.lenses:
            st.caption(plain(f"lens: {lens.name} ${lens.usd_per_gpu_hour:.2f}/GPU-hour "
                             f"({lens.source})"))  # fmt: skip
        st.caption(plain(budget.power.text))
    if budget.power.options:
        with st.expander("Power of every option (month 1)"):
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "Option": o.option,
                            "Nodes": o.nodes,
                            "Facility kW": round(o.facility_kw, 1),
                            "kWh per 1M tokens": round(o.kwh_per_million_tokens, 3),
                            "Fits the site": "-" if o.fits is None else ("yes" if o.fits else "no"),
                            "Power from": "measured" if o.measured else "TDP x utilisation",
                        }
                        for o in budget.power.options
                    ]
                ),
                hide_index=True,
            )


_WAY_FORMAT = {
    "Total": st.column_config.NumberColumn(format="$%,.0f"),
    "P10": st.column_config.NumberColumn(format="$%,.0f"),
    "P90": st.column_config.NumberColumn(format="$%,.0f"),
    "$/1M tokens": st.column_config.NumberColumn(format="$%.3f"),
    "Owed after": st.column_config.NumberColumn(format="$%,.0f"),
    "Decisions": st.column_config.TextColumn(width=420),
}


def _ways(budget: BudgetPlan) -> pd.DataFrame:
    tokens = million_tokens(budget)
    return pd.DataFrame(
        [
            {
                "Way": path.name,
                "Total": path.total_usd,
                "P10": path.low_total_usd,
                "P90": path.high_total_usd,
                "$/1M tokens": path.total_usd / tokens,
                "Owed after": path.owed_after_usd,
                "Decisions": path.decisions,
            }
            for path in sorted(budget.paths, key=lambda p: p.total_usd)
        ]
    )


def _months(budget: BudgetPlan) -> pd.DataFrame:
    rows = []
    for index, m in enumerate(budget.months):
        row: dict[str, object] = {
            "Month": m.month,
            "Demand": round(m.demand, 4),
            "Nodes": m.nodes,
            "Nodes P10-P90": f"{m.low_nodes}-{m.high_nodes}",
            "kW": round(budget.power.monthly_kw[index], 1),
        }
        row.update({f"{p.name} $": round(p.months[index].usd) for p in budget.paths})
        rows.append(row)
    return pd.DataFrame(rows)


def _cumulative_figure(budget: BudgetPlan) -> go.Figure:
    months = [m.month for m in budget.months]
    figure = go.Figure()
    for path in budget.paths:
        figure.add_trace(go.Scatter(x=months, y=path.cumulative(), mode="lines", name=path.name))
    figure.update_layout(
        title="Cumulative cost by way", xaxis_title="month", yaxis_title="USD",
        yaxis_tickformat="$,.3s", height=340, margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h"},
    )  # fmt: skip
    return figure


def _fleet_figure(budget: BudgetPlan) -> go.Figure:
    months = [m.month for m in budget.months]
    nodes = [m.nodes for m in budget.months]
    low = [m.nodes - m.low_nodes for m in budget.months]
    high = [m.high_nodes - m.nodes for m in budget.months]
    figure = go.Figure(
        go.Bar(
            x=months, y=nodes, name="nodes",
            error_y={"type": "data", "symmetric": False, "array": high, "arrayminus": low},
        )
    )  # fmt: skip
    figure.update_layout(
        title=f"Nodes at peak by month ({budget.pick.confidence:.0%} confidence, bars P10-P90)",
        xaxis_title="month", yaxis_title="nodes", height=340,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )  # fmt: skip
    return figure
