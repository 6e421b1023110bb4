"""A Report as JSON, CSV (options), XLSX (inputs, options, chart data, ranges, runs) and one
self-contained HTML file with interactive plotly charts. The PDF is in reports.pdf.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime

import plotly.io as pio
from openpyxl import Workbook  # type: ignore[import-untyped]

from reports.charts import report_figures, stat_words, ttft_statistics
from reports.export import (
    Cell,
    plan_to_dict,
    range_rows,
    ranges_to_dict,
    sensitivity_rows,
    tie_note,
)
from reports.model import REPORT_SCHEMA, Report, RunMeta
from reports.xlsx_layout import header_with_unit, number_format, unit_format, write_sheet

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]
Table = tuple[list[str], list[list[Cell]]]
RUN_COLUMNS = (
    "run_id",
    "source",
    "provenance",
    "label",
    "started_at_utc",
    "imported_at_utc",
    "engine",
    "engine_version",
    "gpu",
    "origin_file",
)


def report_json(report: Report) -> str:
    """Everything needed to reproduce and audit the plan, as indented JSON (no NaN/inf)."""
    document: dict[str, object] = {
        "schema": REPORT_SCHEMA,
        "title": report.title,
        "generated_at": report.generated_at.isoformat(),
        "summary": {**asdict(report.summary), "tie_note": tie_note(report.plan, report.ranges)},
        "plan": plan_to_dict(report.plan),
        "ranges": ranges_to_dict(report.ranges) if report.ranges else None,
        "sensitivity": sensitivity_rows(list(report.swings)) if report.swings else None,
        "demand_series": [asdict(s) for s in report.demand_series],
        "assumptions": [asdict(a) for a in report.assumptions],
        "prices": [asdict(p) for p in report.prices],
        "provenance": [asdict(p) for p in report.provenance],
        "runs": [dict(zip(RUN_COLUMNS, _run_cells(run), strict=True)) for run in report.runs],
        "warnings": list(report.warnings),
        "reproduce": {
            "scenario_yaml": report.scenario_yaml,
            "run_ids": list(report.run_ids),
            "catalog_version": report.catalog_version,
        },
    }
    return json.dumps(_finite(document), indent=2, allow_nan=False)


def _finite(value: object) -> JsonValue:
    """JSON-safe copy: tuples become lists, inf/NaN None, anything else its text."""
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, bool | int | str):
        return value
    return str(value)


def report_csv(report: Report) -> str:
    """The options table as CSV (the same columns as reports.export.options_table)."""
    if not report.option_columns:
        return ""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(report.option_columns)
    writer.writerows(report.option_rows)
    return buffer.getvalue()


def report_xlsx(report: Report) -> bytes:
    """Workbook: inputs, options, one sheet per chart's data, ranges, sensitivity, runs; units in
    every header, numbers formatted by unit, a frozen bold header row, widths fitted."""
    book = Workbook()
    book.remove(book.active)
    by_row = {"summary": _named_format, "inputs": unit_format}
    for title, (header, rows) in report_tables(report).items():
        write_sheet(book, title, header, rows, row_format=by_row.get(title))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _named_format(row: Sequence[Cell]) -> str | None:
    """Rows named by their first cell (the summary sheet: total_monthly_cost_usd, nodes...)."""
    return number_format(str(row[0]))


def report_tables(report: Report) -> dict[str, Table]:
    """Every table of the report by sheet name; numbers stay numbers, units in the headers."""
    tables: dict[str, Table] = {
        "summary": _summary_table(report),
        "inputs": _inputs_table(report),
        "options": (list(report.option_columns), [list(r) for r in report.option_rows]),
        "chart_throughput": _curve_table(report, "output_tok_s"),
        "chart_ttft_p99": _curve_table(report, "ttft_ms"),
        "chart_cost_vs_demand": _demand_table(report),
        "chart_nodes": (["option", "nodes"], [[t, n] for t, n in report.nodes_by_option]),
        "provenance": _provenance_table(report),
        "runs": (list(RUN_COLUMNS), [_run_cells(run) for run in report.runs]),
    }
    for name, rows in (
        ("ranges", range_rows(report.ranges) if report.ranges else []),
        ("sensitivity", sensitivity_rows(list(report.swings)) if report.swings else []),
    ):
        if rows:
            tables[name] = (list(rows[0]), [list(row.values()) for row in rows])
    return tables


def _summary_table(report: Report) -> Table:
    summary = asdict(report.summary)
    rows: list[list[Cell]] = [
        [key, "; ".join(value) if isinstance(value, tuple) else value]
        for key, value in summary.items()
    ]
    rows.append(["generated_at_utc", report.generated_at.isoformat()])
    if (note := tie_note(report.plan, report.ranges)) is not None:
        rows.append(["tie_note", note])
    rows += [["warning", text] for text in report.warnings]
    return ["field", "value"], rows


def _inputs_table(report: Report) -> Table:
    rows: list[list[Cell]] = [
        [a.name, _number(a.value), a.unit, a.meaning] for a in report.assumptions
    ]
    for price in report.prices:
        rows.append(
            [f"price.{price.gpu}", price.usd_per_gpu_hour, "USD/GPU-hour", f"{price.source}"]
        )
        rows.append([f"price_as_of.{price.gpu}", price.as_of, "", price.origin])
    rows.append(["price_catalog_version", report.catalog_version, "", ""])
    rows.append(["run_ids", ", ".join(str(i) for i in report.run_ids), "", ""])
    return ["input", "value", "unit", "meaning"], rows


_CURVE_HEADERS = {
    "output_tok_s": (
        "measured_output_tok_s",
        "fit_output_tok_s",
        "fit_lo_output_tok_s",
        "fit_hi_output_tok_s",
    ),
    "ttft_ms": ("measured_ttft_ms", "fit_ttft_ms", "fit_lo_ttft_ms", "fit_hi_ttft_ms"),
}


def _curve_table(report: Report, metric: str) -> Table:
    """Measured points and the fit with its band per option; TTFT says which statistic it is."""
    names = _CURVE_HEADERS[metric]
    ttft = metric == "ttft_ms"
    stats = ttft_statistics(report)
    lead = ["option", "provenance", *(["ttft_statistic"] if ttft else [])]
    header = [*lead, "concurrency_per_replica", "kind", *names, "extrapolated"]
    rows: list[list[Cell]] = []
    for chart, stat in zip(report.charts, stats, strict=True):
        start: list[Cell] = [chart.title, chart.provenance, *([stat_words(stat)] if ttft else [])]
        measured, fit, lo, hi = (
            (chart.measured_p99_ttft_ms, chart.fit_p99_ttft_ms, chart.fit_p99_ttft_ms_lo,
             chart.fit_p99_ttft_ms_hi)
            if ttft
            else (chart.measured_output_tok_s, chart.fit_output_tok_s, chart.fit_output_tok_s_lo,
                  chart.fit_output_tok_s_hi)
        )  # fmt: skip
        for x, y in zip(chart.measured_concurrency, measured, strict=True):
            rows.append([*start, x, "measured", y, None, None, None, None])
        for i, x in enumerate(chart.grid_concurrency):
            flag = "yes" if chart.extrapolated[i] else "no"
            rows.append([*start, x, "fit", None, fit[i], lo[i], hi[i], flag])
    return header, rows


def _demand_table(report: Report) -> Table:
    unit = report.demand_series[0].demand_unit if report.demand_series else "demand"
    header = ["option", "demand_share_pct", f"demand ({unit})", "total_monthly_cost_usd", "nodes"]
    rows: list[list[Cell]] = []
    for line in report.demand_series:
        for i, factor in enumerate(line.demand_factor):
            rows.append(
                [
                    line.title,
                    round(100 * factor, 1),
                    line.demand[i],
                    line.total_monthly_cost_usd[i],
                    line.nodes[i],
                ]
            )
    return header, rows


def _provenance_table(report: Report) -> Table:
    header = ["option", "run_id", "provenance", "curve", "curve_flags", "physics_flags", "notes"]
    rows: list[list[Cell]] = [
        [
            p.option,
            p.run_id,
            p.provenance,
            p.label,
            "; ".join(p.curve_flags),
            "; ".join(p.physics_flags),
            "; ".join(p.physics_notes),
        ]
        for p in report.provenance
    ]
    return header, rows


def _run_cells(run: RunMeta) -> list[Cell]:
    return [
        run.run_id,
        run.source,
        run.provenance,
        run.label,
        _when(run.started_at),
        _when(run.imported_at),
        run.engine,
        run.engine_version,
        run.gpu,
        run.origin_file,
    ]


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="seconds")


def _number(text: str) -> Cell:
    try:
        return float(text) if any(c in text for c in ".e") else int(text)
    except ValueError:
        return text


# ------------------------------------------------------------------------------------ HTML


def report_html(report: Report, *, interactive: bool = True, svgs: Sequence[str] = ()) -> str:
    """One self-contained HTML page: plotly JS inlined (interactive) or the given SVG charts."""
    parts = [_head(report), _summary_html(report)]
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
