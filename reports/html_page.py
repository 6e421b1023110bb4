"""A Report as one self-contained HTML page: summary, the options table finance reads, charts
(plotly inlined, or the SVGs the PDF passes in), assumptions, ranges, sensitivity, provenance,
runs and the scenario to reproduce it. reports.pdf prints this page.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.io as pio

from reports.charts import report_figures
from reports.export import Cell, tie_note
from reports.measurement import measurement_section
from reports.model import Report
from reports.render import Table, report_tables
from reports.xlsx_layout import header_with_unit


def report_html(report: Report, *, interactive: bool = True, svgs: Sequence[str] = ()) -> str:
    """One self-contained HTML page: plotly JS inlined (interactive) or the given SVG charts."""
    parts = [_head(report), _summary_html(report)]
    parts += measurement_section(report.plan.measurement_plan)
    options = _table_html(*_options_brief(report), "options") + _rejected_html(report)
    parts.append(_section("Options", options))
    if interactive:
        charts = [
            f"<h3>{_e(caption)}</h3>"
            + pio.to_html(figure, include_plotlyjs=index == 0, full_html=False)
            for index, (caption, figure) in enumerate(report_figures(report))
        ]
    else:
        charts = [f'<div class="chart">{svg}</div>' for svg in svgs]
    parts.append(_section("Charts", "".join(charts), page_break=True))
    tables = report_tables(report)
    for title, key in (
        ("Assumptions", "inputs"),
        ("Cost ranges (P10 / P50 / P90)", "ranges"),
        ("Sensitivity", "sensitivity"),
        ("Provenance of every curve", "provenance"),
        ("Runs behind the plan", "runs"),
    ):
        if key in tables:
            parts.append(_section(title, _table_html(*tables[key]), page_break=key == "inputs"))
    parts.append(_section("Reproduce", f"<pre>{_e(report.scenario_yaml)}</pre>"))
    return "\n".join([*parts, "</body></html>"])


_CSS = """
@page { size: A4; margin: 14mm; }
body { font-family: 'DejaVu Sans', sans-serif; font-size: 10pt; color: #222; }
table { border-collapse: collapse; margin: 6px 0; font-size: 7pt; width: 100%;
  table-layout: fixed; }
th, td { border: 1px solid #bbb; padding: 2px 4px; text-align: left; vertical-align: top;
  overflow-wrap: break-word; }
th { background: #eee; hyphens: manual; }
tr { page-break-inside: avoid; }
table.options { table-layout: auto; }
table.options td { white-space: nowrap; }
.nowrap { white-space: nowrap; }
.big { font-size: 16pt; font-weight: bold; }
.break { page-break-before: always; }
.chart svg { width: 100%; height: auto; }
"""


def _head(report: Report) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(report.title)}'
        f"</title><style>{_CSS}</style></head><body><h1>{_e(report.title)}</h1>"
        f"<p>Generated {_e(report.generated_at.strftime('%Y-%m-%d %H:%M UTC'))} · "
        f"price catalog {_e(report.catalog_version)}</p>"
    )


def _summary_html(report: Report) -> str:
    s = report.summary
    cost = _usd(s.total_monthly_cost_usd)
    spread = (
        f"P10 {_usd(s.cost_p10_usd)} · P50 {_usd(s.cost_p50_usd)} · P90 {_usd(s.cost_p90_usd)}"
        if s.cost_p50_usd is not None
        else "no range computed"
    )
    rows = [
        ("Recommended", s.choice or "nothing meets the SLA"),
        ("Monthly cost", cost),
        ("Monthly cost range", spread),
        ("Nodes / GPUs", f"{s.nodes} / {s.gpus}"),
        ("Runner-up", s.runner_up or "none"),
        ("Margin", f"{_usd(s.margin_usd)} ({_pct(s.margin_pct)})"),
        ("Limited by", s.binding_text or "-"),
    ]
    body = (
        f'<p class="big">{_e(s.choice or "No option meets the SLA")}: '
        f'<span class="nowrap">{_e(cost)}/month</span></p>'
    )
    body += _table_html(["", ""], [list(r) for r in rows])
    body += f"<p>{_e(s.recommendation)}</p>"
    if (note := tie_note(report.plan, report.ranges)) is not None:
        body += f"<p><strong>{_e(note)}</strong></p>"
    body += "".join(f"<p>{_e(f)}</p>" for f in s.factors_applied)
    if report.warnings:
        body += "<ul>" + "".join(f"<li>{_e(w)}</li>" for w in report.warnings) + "</ul>"
    return _section("Summary", body)


# The options table finance reads (every column is in the XLSX, CSV and JSON): header, format.
_BRIEF: dict[str, tuple[str, str]] = {
    "recommended": ("Pick", "flag"),
    "engine": ("Engine", "text"),
    "gpu": ("GPU", "text"),
    "tp": ("TP", "text"),
    "provenance": ("Data", "text"),
    "meets_sla": ("Meets SLA", "flag"),
    "concurrency_per_replica": ("Streams per replica", "whole"),
    "replicas": ("Replicas", "whole"),
    "gpus": ("GPUs", "whole"),
    "nodes": ("Nodes", "whole"),
    "usd_per_gpu_hour": ("$ per GPU-hour", "cents"),
    "total_monthly_cost_usd": ("$ per month", "dollars"),
    "usd_per_million_output_tokens": ("$ per 1M output tokens", "cents"),
}


def _options_brief(report: Report) -> Table:
    columns = [c for c in _BRIEF if c in report.option_columns]
    index = [report.option_columns.index(c) for c in columns]
    rows = [
        [_brief_cell(row[i], _BRIEF[column][1]) for i, column in zip(index, columns, strict=True)]
        for row in report.option_rows
    ]
    return [_BRIEF[c][0] for c in columns], rows


def _brief_cell(value: Cell, kind: str) -> Cell:
    if value is None:
        return "-"
    if kind == "flag":
        return "yes" if value in (True, "yes") else ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if kind == "dollars":
            return f"${value:,.0f}"
        if kind == "cents":
            return f"${value:,.2f}"
        if kind == "whole":
            return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
    return value


def _rejected_html(report: Report) -> str:
    """Options that are not options, each with its reason (kept out of the narrow table)."""
    if "rejected_reason" not in report.option_columns:
        return ""
    at = report.option_columns.index("rejected_reason")
    title = report.option_columns.index("engine"), report.option_columns.index("gpu")
    items = [
        f"<li>{_e(str(row[title[0]]))} on {_e(str(row[title[1]]))}: {_e(str(row[at]))}</li>"
        for row in report.option_rows
        if row[at]
    ]
    return f"<p>Not options:</p><ul>{''.join(items)}</ul>" if items else ""


def _section(title: str, body: str, *, page_break: bool = False) -> str:
    css = ' class="break"' if page_break else ""
    return f"<section{css}><h2>{_e(title)}</h2>{body}</section>"


def _table_html(
    header: Sequence[str], rows: Sequence[Sequence[Cell]], css_class: str | None = None
) -> str:
    head = "".join(f"<th>{_e(header_with_unit(h).replace('_', ' '))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(_show(v))}</td>" for v in row) + "</tr>" for row in rows
    )
    css = f' class="{css_class}"' if css_class else ""
    return f"<table{css}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _show(value: Cell) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) < 1e6 else f"{value:,.0f}"
    return str(value)


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:,.0f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def _e(text: str) -> str:
    return html.escape(text, quote=True)
