"""A Report as JSON, CSV (options) and XLSX (inputs, options, chart data, ranges, runs), and the
tables those and the HTML page share. The HTML page is in reports.html_page, the PDF in
reports.pdf.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime

from openpyxl import Workbook  # type: ignore[import-untyped]

from reports.budget_view import budget_to_dict
from reports.cells import csv_row
from reports.charts import stat_words, ttft_statistics
from reports.export import (
    Cell,
    plan_to_dict,
    range_rows,
    ranges_to_dict,
    sensitivity_rows,
    tie_note,
)
from reports.model import REPORT_SCHEMA, Report, RunMeta
from reports.what_if_view import what_if_sheet
from reports.xlsx_layout import number_format, unit_format, write_sheet

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
        "horizon": None if report.budget is None else budget_to_dict(report.budget),
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
    writer.writerow(csv_row(report.option_columns))
    writer.writerows(csv_row(row) for row in report.option_rows)
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
        ("what_if", what_if_sheet(report.what_if)),
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
