"""What if demand grows, as people read it: one table row per demand multiplier (demand, what to
buy, nodes, monthly and yearly cost, the budget, whether the pick changes) and one sentence; the
Plan page, the CLI, the XLSX and the PDF's page 1 all show these."""

from __future__ import annotations

from collections.abc import Sequence

from planner.analysis.what_if import WhatIfRow
from reports.names import option_name

Cell = str | float | int | None

COLUMNS = ("Demand", "Pick", "Nodes", "GPUs", "$/month", "$/year", "Budget", "Pick changes")


def multiplier_text(value: float) -> str:
    """'1x', '1.5x', '2x'."""
    return f"{value:g}x"


def amount_text(value: float) -> str:
    """A demand figure as read: '80', '1.5', '12,345', '7,500,000,000' (never 1.2e+04)."""
    return f"{value:,.0f}" if abs(value) >= 1000 or value == int(value) else f"{value:,.3g}"


def demand_text(row: WhatIfRow) -> str:
    """'80 requests/s at peak'."""
    return f"{amount_text(row.demand)} {row.unit}"


def what_if_table(rows: Sequence[WhatIfRow]) -> list[dict[str, Cell]]:
    """Display rows, the demand's own unit as the second column ('Requests/s at peak'): numbers
    stay numbers (the app formats them, the XLSX keeps them)."""
    return [
        {
            "Demand": multiplier_text(row.multiplier),
            row.unit[:1].upper() + row.unit[1:]: row.demand,
            "Pick": option_name(row.option) if row.option else (row.note or "none"),
            "Nodes": row.nodes,
            "GPUs": row.gpus,
            "$/month": row.monthly_usd,
            "$/year": row.yearly_usd,
            "Budget": _budget(row),
            "Pick changes": "yes" if row.pick_changes else "no",
        }
        for row in rows
    ]


def _budget(row: WhatIfRow) -> str:
    if row.within_budget is None:
        return "-" if row.option else ""
    return "within" if row.within_budget else "over"


def what_if_sentence(rows: Sequence[WhatIfRow]) -> str | None:
    """'If demand grows: at 1.5x (60 requests/s at peak) 4 nodes, $81,760/month ($981,120/year);
    at 2x ... The pick stays TensorRT-LLM TP2 on H200 SXM 141GB (FP8).' (None: only 1x)."""
    grown = [row for row in rows if row.multiplier != 1.0]
    if not grown:
        return None
    parts = []
    for row in grown:
        at = f"at {multiplier_text(row.multiplier)} ({demand_text(row)})"
        if row.option is None or row.monthly_usd is None:
            parts.append(f"{at} {row.note or 'no option'}")
            continue
        over = ", over the budget" if row.within_budget is False else ""
        if row.note == "over the power limit":
            over += ", over the power limit"
        nodes = f"{row.nodes} node{'s' if row.nodes != 1 else ''}"
        parts.append(
            f"{at} {nodes}, ${row.monthly_usd:,.0f}/month (${row.yearly_usd or 0:,.0f}/year){over}"
        )
    changed = [(row, row.option) for row in grown if row.pick_changes and row.option]
    base = next((row for row in rows if row.multiplier == 1.0), None)
    if changed:
        first, key = changed[0]
        tail = f" The pick changes at {multiplier_text(first.multiplier)}, to {option_name(key)}."
    elif base is not None and base.option and not any(r.pick_changes for r in grown):
        tail = f" The pick stays {option_name(base.option)}."
    else:
        tail = ""
    return f"If demand grows: {'; '.join(parts)}.{tail}"


def what_if_sheet(rows: Sequence[WhatIfRow]) -> list[dict[str, Cell]]:
    """The same rows for a workbook: headers that carry their units, numbers as numbers."""
    return [
        {
            "demand_multiplier": row.multiplier,
            f"demand ({row.unit})": row.demand,
            "pick": option_name(row.option) if row.option else None,
            "nodes": row.nodes,
            "gpus": row.gpus,
            "total_monthly_cost_usd": row.monthly_usd,
            "total_yearly_cost_usd": row.yearly_usd,
            "budget": _budget(row),
            "pick_changes": row.pick_changes,
            "note": row.note,
        }
        for row in rows
    ]


def what_if_text(rows: Sequence[WhatIfRow]) -> tuple[list[str], list[list[str]]]:
    """Header and rows as text (the PDF's page 1 and the terminal): '2x', '80 requests/s at
    peak', the pick, nodes, '$81,760', '$981,120', 'within', 'no'."""
    header = ["Demand", "Peak demand", "Pick", "Nodes", "$/month", "$/year", "Budget", "Changes"]
    body = [
        [
            multiplier_text(row.multiplier),
            demand_text(row),
            option_name(row.option) if row.option else (row.note or "none"),
            "-" if row.nodes is None else f"{row.nodes:,d}",
            "-" if row.monthly_usd is None else f"${row.monthly_usd:,.0f}",
            "-" if row.yearly_usd is None else f"${row.yearly_usd:,.0f}",
            _budget(row) or "-",
            "yes" if row.pick_changes else "no",
        ]
        for row in rows
    ]
    return header, body
