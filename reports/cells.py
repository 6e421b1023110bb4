"""Cells as spreadsheets read them safely: a CSV text cell that starts with = + - @ (or a tab or
carriage return) is a formula to Excel and LibreOffice ("CSV injection") and is written with a
leading apostrophe; control characters, which XLSX cannot hold (openpyxl refuses the workbook),
are written as \\xNN and bidi controls as \\uNNNN (measurements.safe_text)."""

from __future__ import annotations

from measurements.safe_text import escape_hidden

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def visible(text: str) -> str:
    """Control characters (ESC, NUL, CR, C1 ...) as \\xNN escapes and bidi controls (U+202E ...)
    as \\uNNNN; tabs and newlines kept: the one rule for cells, the app's text (ui/text.py) and
    the terminal (cli/common.py)."""
    return escape_hidden(text)


def csv_cell(value: object) -> object:
    """A value for a CSV cell: text that a spreadsheet would run as a formula is quoted."""
    if not isinstance(value, str):
        return value
    text = visible(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_row(row: object) -> list[object]:
    """csv_cell on every value of a row (a sequence)."""
    return [csv_cell(v) for v in row] if isinstance(row, list | tuple) else [csv_cell(row)]
