"""A Report as one self-contained HTML page: summary, the options table finance reads, charts
(plotly inlined, or the SVGs the PDF passes in), assumptions, ranges, sensitivity, provenance,
runs and the scenario to reproduce it. reports.pdf prints this page.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.io as pio

from reports.budget_view import budget_lines, money_text
from reports.charts import report_figures
from reports.export import Cell
from reports.flag_text import group_warnings
from reports.lead_table import OPTION_LEAD_COLUMNS, options_lead_table
from reports.measurement import measurement_section
from reports.model import Report
from reports.names import gpu_name, rejected_lines
from reports.page_one import page_one, site_of, source_flags
from reports.render import Table, report_tables
from reports.xlsx_layout import header_with_unit


def report_html(report: Report, *, interactive: bool = True, svgs: Sequence[str] = ()) -> str:
    """One self-contained HTML page: plotly JS inlined (interactive) or the given SVG charts.
    Page 1 is what finance signs; the rest are appendices, the command lines last."""
    parts = [_head(report), _summary_html(report), _details_html(report), _months_html(report)]
    options = _table_html(*_options_brief(report), "options") + _rejected_html(report)
    parts.append(_section("Appendix B: Options", options, page_break=True))
    if interactive:
        charts = [
            f"<h3>{_e(caption)}</h3>"
            + pio.to_html(figure, include_plotlyjs=index == 0, full_html=False)
            for index, (caption, figure) in enumerate(report_figures(report))
        ]
    else:
        charts = [f'<div class="chart">{svg}</div>' for svg in svgs]
    parts.append(_section("Appendix C: Charts", "".join(charts), page_break=True))
    tables = report_tables(report)
    for title, key in (
        ("Appendix D: Assumptions", "inputs"),
        ("Cost ranges (P10 / P50 / P90)", "ranges"),
        ("Sensitivity", "sensitivity"),
    ):
        if key in tables:
            parts.append(_section(title, _table_html(*tables[key]), page_break=key == "inputs"))
    parts.append(_section("Data flags, by source", _flags_html(report)))
    parts.append(_section("Runs behind the plan", _table_html(*_runs_table(tables["runs"]))))
    parts += measurement_section(report.plan.measurement_plan, title="Appendix E: What to measure")
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
table.options td:last-child { white-space: normal; min-width: 30mm; }
.nowrap { white-space: nowrap; }
.big { font-size: 13pt; font-weight: bold; margin: 4px 0; }
p.price { font-size: 9pt; margin: 2px 0 4px 0; }
h2 { font-size: 13pt; margin: 10px 0 4px 0; }
h3 { font-size: 10pt; }
.break { page-break-before: always; }
.chart svg { width: 100%; height: auto; }
section.summary { font-size: 8.5pt; }
section.summary h3 { margin: 8px 0 2px 0; font-size: 10pt; }
section.summary ul { margin: 2px 0; padding-left: 16px; }
section.summary p { margin: 3px 0; }
table.money { font-size: 9pt; }
table.money td:first-child { width: 30%; font-weight: bold; }
table.what-if { font-size: 8pt; table-layout: auto; }
"""


def _head(report: Report) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(report.title)}'
        f"</title><style>{_CSS}</style></head><body><h1>{_e(report.title)}</h1>"
        f"<p>Generated {_e(report.generated_at.strftime('%Y-%m-%d %H:%M UTC'))} · "
        f"price catalog {_e(report.catalog_version)}</p>"
    )


def _summary_html(report: Report) -> str:
    """Page 1: what to buy at what price (source, date, warnings), the money, the budget
    verdict, how sure, every stale or mixed quote, and what the cost leaves out."""
    one = page_one(report)
    body = f'<p class="big">{_e(one.buy)}</p>'
    body += "".join(f'<p class="price">{_e(line)}</p>' for line in one.buy_price)
    body += _table_html(["", ""], [list(row) for row in one.money], "money")
    body += "<h3>How sure</h3>" + _list([*one.sureness, one.basis[0]])
    if one.price_summary:
        body += "<h3>Price warnings</h3>" + _list(one.price_summary)
    if one.what_if:
        body += "<h3>What if demand grows</h3>"
        body += _table_html(list(one.what_if[0]), [list(r) for r in one.what_if[1:]], "what-if")
    if one.over_time:
        table = one.over_time_table
        body += f"<h3>Over the months ahead</h3><p>{_e(one.over_time[0])}</p>"
        body += _table_html(list(table[0]), [list(r) for r in table[1:]], "what-if")
        body += _list(one.over_time[1:])
    body += f"<h3>What the cost leaves out</h3><p>{_e(one.left_out)}</p>"
    body += "<p>Appendix A says why this option, what the numbers rest on and every price; "
    body += "the options, charts, assumptions, runs and what to measure follow.</p>"
    return _section("Summary", body, css="summary")


def _details_html(report: Report) -> str:
    """Appendix A: why this option, how the range is measured, what the data is, every price
    with its flags, and the plan's warnings."""
    one = page_one(report)
    body = "<h3>Why this option</h3>" if report.plan.recommendation.choice else ""
    body += _list(one.bullets)
    if one.what_if_note:
        body += f"<h3>What if demand grows</h3><p>{_e(one.what_if_note)}</p>"
    body += "<h3>What the numbers rest on</h3>" + _list(one.basis)
    body += "<h3>Prices</h3>" + _table_html(*_price_table(report))
    body += _list(one.price_flags)
    warnings = group_warnings(report.warnings)
    if warnings:
        body += "<h3>Warnings</h3>" + _list(warnings)
    return _section("Appendix A: Details", body, page_break=True, css="summary")


def _months_html(report: Report) -> str:
    """Appendix: the months ahead, month by month, and how each way is priced."""
    budget = report.budget
    if budget is None:
        return ""
    header = ["Month", "Demand", "Nodes", "P10-P90", "kW", *(p.name for p in budget.paths)]
    rows: list[list[Cell]] = [
        [
            m.month, f"{m.demand:,.4g}", m.nodes, f"{m.low_nodes}-{m.high_nodes}",
            f"{budget.power.monthly_kw[i]:,.0f}",
            *(money_text(p.months[i].usd) for p in budget.paths),
        ]
        for i, m in enumerate(budget.months)
    ]  # fmt: skip
    body = _table_html(header, rows, "what-if")
    body += "<h3>How each way is priced</h3>"
    priced = [f"{p.name}: {p.basis}" for p in budget.paths]
    priced += [note for p in budget.paths for note in p.notes]
    body += _list([*priced, *budget.notes, *budget_lines(budget), budget.power.text])
    return _section("Appendix: The months ahead", body, page_break=True, css="summary")


def _price_table(report: Report) -> Table:
    header = ["GPU", "$ per GPU-hour", "quote", "kind", "GPUs per quote", "as of", "age", "source"]
    rows: list[list[Cell]] = [
        [
            gpu_name(p.gpu),
            f"${p.usd_per_gpu_hour:,.2f}",
            p.source.split(" (")[0],
            p.kind.replace("_", " ") or "typed",
            p.gpus_per_quote,
            p.as_of,
            "-" if p.age_months is None else f"{p.age_months} months",
            site_of(p.reference),
        ]
        for p in report.prices
    ]
    return header, rows


def _list(lines: Sequence[str]) -> str:
    return "<ul>" + "".join(f"<li>{_e(line)}</li>" for line in lines) + "</ul>" if lines else ""


def _flags_html(report: Report) -> str:
    """Each source's flags once, with the options built on it."""
    parts = []
    for group in source_flags(report.plan.options):
        head = f"{group.source} ({group.kind}): {', '.join(group.options)}"
        parts.append(f"<p><strong>{_e(head)}</strong></p>{_list(group.flags)}")
    return "".join(parts)


def _options_brief(report: Report) -> Table:
    """The seven columns finance reads (every column is in the XLSX, CSV and JSON)."""
    money = {"Cost ($/month)": "${:,.0f}", "Cost per 1M output tokens ($)": "${:,.2f}"}
    rows = [
        [
            money[name].format(value) if name in money and isinstance(value, int | float) else value
            for name, value in row.items()
        ]
        for row in options_lead_table(report.plan)
    ]
    return list(OPTION_LEAD_COLUMNS), rows


def _rejected_html(report: Report) -> str:
    """Options that are not options, each named with its TP and with its reason."""
    items = rejected_lines(report.plan.options)
    return f"<p>Not options:</p>{_list(items)}" if items else ""


def _runs_table(table: Table) -> Table:
    """The runs without where their files were on disk (no internal paths in a report)."""
    header, rows = table
    keep = [i for i, name in enumerate(header) if name != "origin_file"]
    return [header[i] for i in keep], [[row[i] for i in keep] for row in rows]


def _section(title: str, body: str, *, page_break: bool = False, css: str = "") -> str:
    classes = " ".join(c for c in ("break" if page_break else "", css) if c)
    attr = f' class="{classes}"' if classes else ""
    return f"<section{attr}><h2>{_e(title)}</h2>{body}</section>"


def _table_html(
    header: Sequence[str], rows: Sequence[Sequence[Cell]], css_class: str | None = None
) -> str:
    head = "".join(f"<th>{_e(header_with_unit(h).replace('_', ' '))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(_show(v))}</td>" for v in row) + "</tr>" for row in rows
    )
    css = f' class="{css_class}"' if css_class else ""
    thead = f"<thead><tr>{head}</tr></thead>" if any(header) else ""
    return f"<table{css}>{thead}<tbody>{body}</tbody></table>"


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
