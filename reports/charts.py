"""Plotly figures of a Report (pure: report data in, figures out), shared by HTML and PDF.

Measured points are markers, the fit a line (dotted where extrapolated past the measured range),
the band a filled area; only options that meet the SLA are drawn (up to MAX_OPTIONS).
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from planner.inputs.sla_targets import SLA_TARGET_BY_FIELD
from planner.sizing.sla import target_text
from reports import figures
from reports.model import DemandSeries, OptionChart, Report
from reports.names import option_name, provenance_word

MAX_OPTIONS = 6
PALETTE = figures.PALETTE
_STAT_WORDS = {
    "p99": "p99",
    "p50": "p50",
    "unstated": "statistic not stated by the source",
    None: "not measured",
}


def report_figures(report: Report) -> list[tuple[str, go.Figure]]:
    """The report's charts in order, each with its caption."""
    shown = _shown(report)
    titles = {chart.title for chart in shown}
    series = [s for s in report.demand_series if s.title in titles]
    meeting = _meeting_count(report)
    some = f" (the {len(shown)} cheapest of {meeting} options meeting the SLA)"
    note = some if meeting > len(shown) else ""
    scenario = report.plan.scenario
    throughput = throughput_figure(shown)
    operating = _operating_point(report)
    if operating is not None:
        throughput.add_trace(
            go.Scatter(
                x=[operating[0]],
                y=[operating[1]],
                mode="markers",
                name="recommended operating point (at the plan's confidence)",
                marker={"symbol": "star", "size": 16, "color": "black"},
            )
        )
    stats = dict(zip((c.title for c in report.charts), ttft_statistics(report), strict=True))
    shown_stats = [stats[chart.title] for chart in shown]
    ttft = ttft_figure(shown, shown_stats)
    for field, limit in scenario.sla.targets().items():
        if SLA_TARGET_BY_FIELD[field].metric == "ttft":
            ttft.add_hline(
                y=limit, line_dash="dot", annotation_text=f"SLA: {target_text(field, limit)}"
            )
    cost = cost_vs_demand_figure(series)
    cost.add_vline(
        x=scenario.demand.amount,
        line_dash="dot",
        annotation_text=f"this plan: {scenario.demand.amount:g} {scenario.demand.unit}",
    )
    made = [
        (f"Output throughput vs concurrency per replica{note}", throughput),
        (f"{ttft_title(shown_stats)} vs concurrency per replica{note}", ttft),
        (f"Total monthly cost vs demand{note}", cost),
        ("Nodes per option", nodes_figure(report.nodes_by_option)),
    ]
    return [(caption, figures.escaped_labels(chart)) for caption, chart in made]


def _meeting_count(report: Report) -> int:
    if "meets_sla" not in report.option_columns:
        return len(report.charts)
    index = report.option_columns.index("meets_sla")
    return sum(1 for row in report.option_rows if row[index] is True)


def _operating_point(report: Report) -> tuple[float, float] | None:
    """(streams per replica, output tok/s per replica) the recommended option is planned at."""
    choice = report.plan.recommendation.choice
    if choice is None or choice.concurrency_per_replica is None:
        return None
    if choice.output_tok_s_per_replica is None:
        return None
    return choice.concurrency_per_replica, choice.output_tok_s_per_replica


def _shown(report: Report) -> list[OptionChart]:
    if "meets_sla" not in report.option_columns:
        return list(report.charts[:MAX_OPTIONS])
    index = report.option_columns.index("meets_sla")
    rows = zip(report.charts, report.option_rows, strict=True)
    return [chart for chart, row in rows if row[index] is True][:MAX_OPTIONS]


def throughput_figure(charts: Sequence[OptionChart]) -> go.Figure:
    """Output tok/s per replica: measured points, fit and band per option."""
    figure = _figure("Output throughput", "concurrency per replica", "output tok/s")
    for index, chart in enumerate(charts):
        _add(figure, chart, index, _throughput(chart))
    return figure


def ttft_statistics(report: Report) -> tuple[str | None, ...]:
    """Per chart (report order): which TTFT statistic its p99 slot holds: 'p99', 'unstated' (the
    source did not say) or None (no TTFT); the fit records it (CurveFit.ttft_p99_stat)."""
    by_title = {option_name(option.key): option.fit.ttft_p99_stat for option in report.plan.options}
    return tuple(by_title.get(chart.title) for chart in report.charts)


def stat_words(stat: str | None) -> str:
    """A TTFT statistic in plain words ('p99', 'statistic not stated by the source', ...)."""
    return _STAT_WORDS.get(stat, stat or "not measured")


def ttft_title(stats: Sequence[str | None]) -> str:
    """'TTFT p99' only when every drawn series is known to be p99; else it says what it is."""
    known = {stat for stat in stats if stat is not None}
    if len(known) > 1:
        return "TTFT (statistic differs by option, see legend)"
    if not known:
        return "TTFT"
    (stat,) = known
    return f"TTFT {stat}" if stat in ("p50", "p99") else f"TTFT ({stat_words(stat)})"


def ttft_figure(
    charts: Sequence[OptionChart], stats: Sequence[str | None] | None = None
) -> go.Figure:
    """TTFT in ms per replica: measured points, fit and band per option. `stats` (per chart)
    names the statistic; without it nothing is claimed beyond 'TTFT'."""
    stats = list(stats) if stats is not None else [None] * len(charts)
    title = ttft_title(stats)
    figure = _figure(title, "concurrency per replica", f"{title}, ms")
    mixed = len({stat for stat in stats if stat is not None}) > 1
    for index, (chart, stat) in enumerate(zip(charts, stats, strict=True)):
        suffix = f" · TTFT {stat_words(stat)}" if mixed else ""
        _add(figure, chart, index, _ttft(chart), suffix)
    return figure


Series = tuple[
    tuple[float | None, ...],
    tuple[float | None, ...],
    tuple[float | None, ...],
    tuple[float | None, ...],
]


def _throughput(chart: OptionChart) -> Series:
    return (
        chart.measured_output_tok_s,
        chart.fit_output_tok_s,
        chart.fit_output_tok_s_lo,
        chart.fit_output_tok_s_hi,
    )


def _ttft(chart: OptionChart) -> Series:
    return (
        chart.measured_p99_ttft_ms,
        chart.fit_p99_ttft_ms,
        chart.fit_p99_ttft_ms_lo,
        chart.fit_p99_ttft_ms_hi,
    )


def _add(
    figure: go.Figure, chart: OptionChart, index: int, values: Series, suffix: str = ""
) -> None:
    measured, fit, lo, hi = values
    color = PALETTE[index % len(PALETTE)]
    name = f"{chart.title}{suffix}"
    xs = list(chart.grid_concurrency)
    inside = [None if e else v for v, e in zip(fit, chart.extrapolated, strict=True)]
    outside = [v if e else None for v, e in zip(fit, chart.extrapolated, strict=True)]
    group = chart.title
    figure.add_trace(
        go.Scatter(x=xs, y=list(hi), mode="lines", line={"width": 0}, legendgroup=group,
                   showlegend=False, hoverinfo="skip")
    )  # fmt: skip
    figure.add_trace(
        go.Scatter(x=xs, y=list(lo), mode="lines", line={"width": 0}, fill="tonexty",
                   fillcolor=figures.translucent(color), legendgroup=group, showlegend=False,
                   hoverinfo="skip")
    )  # fmt: skip
    figure.add_trace(
        go.Scatter(x=xs, y=inside, mode="lines", name=f"{name} fit",
                   line={"color": color}, legendgroup=group)
    )  # fmt: skip
    figure.add_trace(
        go.Scatter(x=xs, y=outside, mode="lines", name=f"{name} extrapolated",
                   line={"color": color, "dash": "dot"}, legendgroup=group, showlegend=False)
    )  # fmt: skip
    figure.add_trace(
        go.Scatter(x=list(chart.measured_concurrency), y=list(measured), mode="markers",
                   name=f"{name} {provenance_word(chart.provenance)}", marker={"color": color},
                   legendgroup=group)
    )  # fmt: skip


def cost_vs_demand_figure(series: Sequence[DemandSeries]) -> go.Figure:
    """Total monthly cost in USD per option as the demand is scaled from 25% to 200%."""
    unit = series[0].demand_unit if series else "demand"
    figure = _figure("Total monthly cost vs demand", f"demand, {unit}", "USD per month")
    for index, line in enumerate(series):
        figure.add_trace(
            go.Scatter(
                x=list(line.demand),
                y=list(line.total_monthly_cost_usd),
                mode="lines+markers",
                name=line.title,
                line={"color": PALETTE[index % len(PALETTE)], "shape": "hv"},
            )
        )
    return figure


def nodes_figure(nodes: Sequence[tuple[str, int | None]]) -> go.Figure:
    """Nodes each option needs (options that cannot serve the demand are left out)."""
    sized = [(title, count) for title, count in nodes if count is not None]
    figure = _figure("Nodes per option", "nodes", "")
    figure.add_trace(
        go.Bar(
            x=[count for _, count in sized],
            y=[title for title, _ in sized],
            orientation="h",
            marker={"color": PALETTE[0]},
        )
    )
    figure.update_layout(
        yaxis={"autorange": "reversed", "automargin": True}, height=max(300, 28 * len(sized) + 120)
    )
    return figure


def _figure(title: str, x_title: str, y_title: str) -> go.Figure:
    return figures.figure(title, x_title, y_title, figures.PAGE_LAYOUT)
