"""Terminal tables that read in any width: numbers keep their whole width (never '2,206...'),
text wraps at spaces and folds long words (never 'concu...'), the frame is the light one that
leaves the most room, and where the columns cannot all fit the least important ones are left out
(the caption names them; --json always has every column)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich loads when a command prints a table
    from rich.console import Console
    from rich.table import Column, Table

_NUMBER = re.compile(r"^[-+$]?[\d,]*\.?\d+(?:[%xk]|e[-+]?\d+)?$|^[-?]$|^[\d?]+/[\d?]+$")
MAX_TEXT = 36  # a text column's natural width at most: longer cells wrap
MAX_WORD = 14  # a longer word of text may fold
GAP = 2  # between two columns


def readable(table: Table, console: Console, drop_order: Sequence[str] = ()) -> Table:
    """`table` set up for `console`'s width. `drop_order` names columns that may be left out,
    the first to go first, while the others do not fit."""
    from rich import box  # noqa: PLC0415

    table.box = box.SIMPLE_HEAD
    table.pad_edge = False
    table.collapse_padding = True
    left_out: list[str] = []
    for name in drop_order:
        if _width(table.columns) <= console.width:
            break
        table.columns = [c for c in table.columns if str(c.header) != name]
        left_out.append(name)
    for column in table.columns:
        cells = _cells(column)
        # Wrapping is allowed everywhere (a header wraps at its spaces); min_width keeps every
        # number whole and a word of text whole up to MAX_WORD. Rich counts the padding in it.
        column.no_wrap = False
        column.overflow = "fold"
        if cells and all(_NUMBER.match(cell.strip()) for cell in cells):
            column.min_width = max(len(cell) for cell in [*cells, _longest_word(column)]) + 1
        else:
            words = [w for cell in cells for w in cell.split()] + [_longest_word(column)]
            column.min_width = min(max(len(word) for word in words), MAX_WORD) + 1
    if left_out:
        table.caption = f"left out at this width: {', '.join(left_out)} (--json has every column)"
    return table


def _cells(column: Column) -> list[str]:
    return [str(cell) for cell in column._cells]  # rich keeps a column's cells here


def _longest_word(column: Column) -> str:
    return max(str(column.header).split() or [""], key=len)


def _width(columns: Sequence[Column]) -> int:
    """The columns' natural width: each as wide as its widest cell (text up to MAX_TEXT)."""
    total = 0
    for column in columns:
        cells = _cells(column)
        numeric = cells and all(_NUMBER.match(cell.strip()) for cell in cells)
        widest = max([len(cell) for cell in cells] + [len(_longest_word(column))])
        total += widest if numeric else min(widest, MAX_TEXT)
    return total + GAP * max(len(columns) - 1, 0)
