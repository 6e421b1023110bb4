"""XLSX sheets for reading: units in every header, number formats by unit, fitted column widths,
a bold frozen header row (used by reports.export and reports.render).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from openpyxl import Workbook  # type: ignore[import-untyped]
from openpyxl.styles import Font  # type: ignore[import-untyped]
from openpyxl.utils import get_column_letter  # type: ignore[import-untyped]
from openpyxl.worksheet.worksheet import Worksheet  # type: ignore[import-untyped]

from reports.cells import visible

Cell = str | float | int | None

USD = "$#,##0"
USD_CENTS = "$#,##0.00"
DECIMAL = "#,##0.0"
WHOLE = "#,##0"
PERCENT = '0.0"%"'  # the value is already in percent (12.5 shows as 12.5%)
SHARE = "0%"  # the value is a fraction (0.8 shows as 80%)
UP_TO_3 = "#,##0.###"  # a value whose unit its row names (sensitivity inputs: 0.72, 3.245, 1)
MAX_WIDTH = 60
MIN_WIDTH = 8
# Units of columns whose names do not carry one; the XLSX header says them in brackets. Counts
# named after what they count (nodes, replicas, gpus, monthly_output_tokens) carry theirs.
HEADER_UNITS = {
    "tp": "GPUs",
    "concurrency": "streams",
    "concurrency_per_replica": "streams",
    "budget_capacity": "in budget_capacity_unit",
    "demand_multiplier": "ratio",
}
UNIT_FORMATS = {
    "USD": USD,
    "USD/GPU-hour": USD_CENTS,
    "share": SHARE,
    "%": PERCENT,
    "ms": DECIMAL,
    "s": DECIMAL,
    "h": DECIMAL,
    "tok/s": DECIMAL,
    "req/s": DECIMAL,
    "streams": DECIMAL,
    "ratio": "0.0#",
    "per month": "0.0#",
    "tokens": WHOLE,
    "GPUs": WHOLE,
    "replicas": WHOLE,
    "count": WHOLE,
}
# Scenario keys (dotted, as flattened) -> unit, for the plan workbook's inputs sheet.
_INPUT_UNITS = (
    (r"(^|\.)(isl|osl)$", "tokens"),
    (r"_ms$", "ms"),
    (r"_tok_s$", "tok/s"),
    (r"peak_requests_per_s$", "req/s"),
    (r"peak_concurrent_streams$|max_streams_per_replica$", "streams"),
    (r"monthly_output_tokens$", "tokens"),
    (r"peak_to_average$", "ratio"),
    (r"monthly_usd$", "USD"),
    (r"^pricing\.|usd_per_gpu_hour", "USD/GPU-hour"),
    (r"target_utilization$", "share"),
    (r"gpus_per_node$", "GPUs"),
    (r"redundancy_replicas$|min_replicas$", "replicas"),
    (r"model_updates_per_month$", "per month"),
    (r"hours_per_month$", "h"),
    (r"_s_if_unknown$", "s"),
    (r"_pct$", "%"),
)


def input_unit(key: str) -> str:
    """Unit of one flattened scenario input ('' for text and lists)."""
    return next((unit for pattern, unit in _INPUT_UNITS if re.search(pattern, key)), "")


def header_with_unit(name: str) -> str:
    """The column name with its unit in brackets when the name itself does not carry one."""
    unit = HEADER_UNITS.get(name)
    return f"{name} ({unit})" if unit else name


def number_format(header: str) -> str | None:
    """Excel number format for a column or row named `header` (None: General)."""
    name = header.lower()
    bracket = re.search(r"\(([^)]*)\)$", header)
    if bracket and bracket.group(1) in UNIT_FORMATS:
        return UNIT_FORMATS[bracket.group(1)]
    rules = (
        (r"usd_per_gpu_hour|usd_per_million", USD_CENTS),
        (r"usd", USD),
        (r"_pct$", PERCENT),
        (r"_share$|^sizing_confidence$", SHARE),
        (r"(_ms|_tok_s|_s)(_lo|_hi|_per_replica)?$", DECIMAL),
        (r"^(low|base|high)$", UP_TO_3),
        (r"^(nodes|gpus|replicas)(_planned|_p\d+|_per_replica|_per_node)?$", WHOLE),
        (r"^(run_id|monthly_output_tokens|gpu_hours_per_month)$", WHOLE),
    )
    found = next((fmt for pattern, fmt in rules if re.search(pattern, name)), None)
    if found is None and bracket:  # a demand in its own unit, e.g. "(requests/s at peak)"
        return WHOLE if "tokens" in bracket.group(1) else DECIMAL
    return found


def unit_format(row: Sequence[Cell]) -> str | None:
    """Format of a row whose unit sits in its third column (the inputs sheets)."""
    unit = row[2] if len(row) > 2 else None
    return number_format(f"value ({unit})") if isinstance(unit, str) and unit else None


def write_sheet(
    book: Workbook,
    title: str,
    header: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    *,
    row_format: Callable[[Sequence[Cell]], str | None] | None = None,
) -> Worksheet:
    """A sheet for reading: bold frozen header with units, formatted numbers, fitted widths.

    Each number gets its column's format, or the format `row_format` gives its row (sheets
    whose rows differ in unit). Text starting with '=' stays text: never a formula.
    """
    sheet = book.create_sheet(title)
    titles = [header_with_unit(name) for name in header]
    formats = [number_format(name) for name in titles]
    sheet.append(titles)
    widths = [len(name) for name in titles]
    for row in rows:
        sheet.append([_cell(value) for value in row])
        special = row_format(row) if row_format else None
        for cell in sheet[sheet.max_row]:
            at = cell.column - 1
            fmt = special or (formats[at] if at < len(formats) else None)
            if cell.data_type == "f":
                cell.data_type = "s"
            if _is_number(cell.value) and fmt:
                cell.number_format = fmt
            if at < len(widths):
                widths[at] = max(widths[at], len(_shown(cell.value, fmt)))
            else:
                widths.append(len(_shown(cell.value, fmt)))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    sheet.freeze_panes = "A2"
    for index, width in enumerate(widths, start=1):
        size = min(MAX_WIDTH, max(MIN_WIDTH, width + 2))
        sheet.column_dimensions[get_column_letter(index)].width = size
    return sheet


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _shown(value: object, fmt: str | None) -> str:
    """About what a spreadsheet shows for a cell (for the column width)."""
    if value is None:
        return ""
    if not _is_number(value):
        return str(value)
    number = float(value)  # type: ignore[arg-type]
    shown = {
        USD: f"${number:,.0f}",
        USD_CENTS: f"${number:,.2f}",
        DECIMAL: f"{number:,.1f}",
        WHOLE: f"{number:,.0f}",
        PERCENT: f"{number:.1f}%",
        SHARE: f"{number:.0%}",
    }
    return shown.get(fmt or "", f"{number:.10g}")


def _cell(value: Cell) -> Cell:
    if isinstance(value, str):
        return visible(value)
    return value if not isinstance(value, bool) else ("yes" if value else "no")
