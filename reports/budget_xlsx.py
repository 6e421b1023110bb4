"""The budget over time in the plan workbook: three sheets a planner can work in.

`budget_inputs` holds every price the money rests on in its own cell (on-demand, 1- and 3-year,
spot, the owned node's price and running costs, the API's per-token prices); `budget_months` has
one row per month with the fleet capplan sized (nodes, node-months on-demand above what is held,
tokens) as values and each way's cost as a formula over those inputs; `budget_paths` sums them
and names the cheapest by formula. Change a price in Excel and every month, total and the
cheapest way follow. What is a decision (nodes committed or bought each month) stays a value:
changing a price does not re-plan the schedule, and the sheet says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from openpyxl.styles import Font  # type: ignore[import-untyped]
from openpyxl.utils import get_column_letter  # type: ignore[import-untyped]

from planner.sizing.costs import uncovered_node_months
from reports.cells import visible
from reports.xlsx_layout import USD, USD_CENTS, WHOLE

if TYPE_CHECKING:
    from openpyxl import Workbook  # type: ignore[import-untyped]
    from openpyxl.worksheet.worksheet import Worksheet  # type: ignore[import-untyped]

    from planner.analysis.budget import BudgetPlan
    from planner.analysis.horizon import MonthFleet

__all__ = ["INPUTS", "MONTHS", "PATHS", "add_budget_sheets"]

INPUTS, MONTHS, PATHS = "budget_inputs", "budget_months", "budget_paths"
_BOLD = Font(bold=True)


def add_budget_sheets(book: Workbook, budget: BudgetPlan) -> None:
    """The three budget sheets, appended to `book`."""
    cells = _inputs(book, budget)
    columns = _months(book, budget, cells)
    _paths(book, budget, columns)


InputRow = tuple[str, float, str, str, str]  # name, value, unit, source, number format


def _input_rows(budget: BudgetPlan) -> list[InputRow]:
    """Every price and fact the formulas read, with its unit and source."""
    pick, horizon = budget.pick, budget.horizon
    packing = budget.months[0].fleet.packing
    rows: list[InputRow] = [
        ("gpus_per_node", packing.gpus_per_node, "GPUs", "", WHOLE),
        ("hours_per_month", packing.hours_per_month, "h", "the scenario's options", "#,##0"),
        ("on_demand_usd_per_gpu_hour", pick.usd_per_gpu_hour, "USD/GPU-hour", pick.price_source,
         USD_CENTS),
    ]  # fmt: skip
    for name, (price, source) in _terms(budget).items():
        rows.append((f"{name}_usd_per_gpu_hour", price, "USD/GPU-hour", source, USD_CENTS))
    spot, share = budget.spot
    rows.append(("spot_usd_per_gpu_hour", spot, "USD/GPU-hour", budget.spot_source, USD_CENTS))
    rows.append(("spot_share_pct", share * 100.0, "%", "the scenario", "0.0"))
    owning = horizon.owning
    if owning is not None:
        rows += [
            ("node_price_usd", owning.node_price_usd, "USD", owning.source or "the scenario", USD),
            ("depreciation_years", owning.depreciation_years, "years", "", "0.0"),
            ("residual_pct", owning.residual_pct, "%", "", "0.0"),
            ("cost_of_capital_pct", owning.cost_of_capital_pct, "%/year", "", "0.0"),
            ("support_pct_per_year", owning.support_pct_per_year, "%/year", "", "0.0"),
            ("usd_per_kwh", owning.usd_per_kwh, "USD/kWh", "", "0.000"),
            ("colocation_usd_per_kw_month", owning.colocation_usd_per_kw_month, "USD/kW-month",
             "", USD_CENTS),
            ("node_it_kw", budget.power.node_it_kw, "kW", budget.power.text, "0.00"),
            ("pue", horizon.pue, "ratio", "", "0.00"),
        ]  # fmt: skip
    api = horizon.hosted_api
    if api is not None:
        source = f"{api.name}; {api.source}, as of {api.as_of}".strip("; ,")
        rows += [
            ("api_usd_per_million_input", api.usd_per_million_input, "USD/1M", source, "$0.000"),
            ("api_usd_per_million_output", api.usd_per_million_output, "USD/1M", source, "$0.000"),
        ]
    return rows


def _inputs(book: Workbook, budget: BudgetPlan) -> dict[str, str]:
    """The inputs sheet; returns each input's absolute cell reference by name."""
    sheet = book.create_sheet(INPUTS)
    sheet.append(["input", "value", "unit", "source"])
    for cell in sheet[1]:
        cell.font = _BOLD
    rows = _input_rows(budget)
    refs: dict[str, str] = {}
    for index, (name, value, unit, source, form) in enumerate(rows, start=2):
        sheet.append([name, value, unit, source])
        _as_text(sheet, index, (1, 3, 4))  # the source is the scenario's or a catalog's text
        sheet.cell(row=index, column=2).number_format = form
        refs[name] = f"{INPUTS}!$B${index}"
    rest = refs["on_demand_usd_per_gpu_hour"]
    spot_ref, share_ref = refs["spot_usd_per_gpu_hour"], refs["spot_share_pct"]
    derived = [
        ("rest_usd_per_gpu_hour", f"=(1-{share_ref}/100)*{rest}+{share_ref}/100*{spot_ref}",
         "USD/GPU-hour", "above the held nodes: on-demand, part spot when allowed", USD_CENTS),
    ]  # fmt: skip
    if "node_price_usd" in refs:
        derived.append(("owned_node_usd_per_month", _owned_formula(refs), "USD/month",
                        "capital annuity + support + power x PUE + hosting", USD))  # fmt: skip
    for index, (name, formula, unit, words, form) in enumerate(derived, start=len(rows) + 2):
        sheet.append([name, formula, unit, words])
        _as_text(sheet, index, (1, 3, 4))
        sheet.cell(row=index, column=2).number_format = form
        refs[name] = f"{INPUTS}!$B${index}"
    for column, width in zip("ABCD", (32, 14, 14, 90), strict=True):
        sheet.column_dimensions[column].width = width
    return refs


def _as_text(sheet: Worksheet, row: int, columns: tuple[int, ...]) -> None:
    """Text that came from a scenario or a catalog stays text in those cells: never a formula
    (a source "=HYPERLINK(...)" would run in Excel), hidden characters escaped (reports.cells)."""
    for column in columns:
        cell = sheet.cell(row=row, column=column)
        if isinstance(cell.value, str):
            cell.value = visible(cell.value)
            cell.data_type = "s"


def _owned_formula(refs: dict[str, str]) -> str:
    price, years = refs["node_price_usd"], refs["depreciation_years"]
    residual, rate = refs["residual_pct"], refs["cost_of_capital_pct"]
    r = f"({rate}/1200)"
    n = f"ROUND({years}*12,0)"
    present = f"({price}-{price}*{residual}/100/(1+{r})^{n})"
    capital = f"IF({rate}=0,({price}-{price}*{residual}/100)/{n},{present}*{r}/(1-(1+{r})^(-{n})))"
    support = f"{price}*{refs['support_pct_per_year']}/1200"
    kw = refs["node_it_kw"]
    hours = refs["hours_per_month"]
    power = f"{kw}*{refs['pue']}*{hours}*{refs['usd_per_kwh']}"
    hosting = f"{kw}*{refs['colocation_usd_per_kw_month']}"
    return f"={capital}+{support}+{power}+{hosting}"


def _terms(budget: BudgetPlan) -> dict[str, tuple[float, str]]:
    """The commitment terms the schedule used, by name ('reserved_1y': (price, source))."""
    found: dict[str, tuple[float, str]] = {}
    committed = budget.path("commitments")
    if committed is None:
        return found
    for months, name in ((12, "reserved_1y"), (36, "reserved_3y")):
        term = next((t for t in budget.terms if t.months == months), None)
        if term is not None:
            found[name] = (term.usd_per_gpu_hour, term.source)
    return found


Column = tuple[str, Callable[[int, "MonthFleet"], object]]


def _value_columns(budget: BudgetPlan) -> list[Column]:
    """The month sheet's value columns: the fleet capplan sized and the nodes each way holds."""
    held = node_months(budget)
    values: list[Column] = [
        ("month", lambda i, m: m.month),
        ("demand", lambda i, m: m.demand),
        ("nodes", lambda i, m: m.nodes),
        ("nodes_p10", lambda i, m: m.low_nodes),
        ("nodes_p90", lambda i, m: m.high_nodes),
        ("input_tokens", lambda i, m: m.input_tokens),
        ("output_tokens", lambda i, m: m.output_tokens),
        ("engine_ops_usd", lambda i, m: m.option.ops_cost_usd),
        ("on_demand_node_months", lambda i, m: held[i][0]),
    ]
    if budget.path("commitments") is not None:
        by_term = committed_by_term(budget)
        values += [
            ("committed_1y_nodes", lambda i, m: by_term[i].get(12, 0)),
            ("committed_3y_nodes", lambda i, m: by_term[i].get(36, 0)),
            ("node_months_above_committed", lambda i, m: held[i][1]),
        ]
    if budget.owned is not None and budget.path("owning") is not None:
        owned = budget.owned
        values += [
            ("owned_nodes", lambda i, m: owned[i]),
            ("node_months_above_owned", lambda i, m: held[i][2]),
        ]
    return values


def _cost_formulas(budget: BudgetPlan, refs: dict[str, str]) -> list[tuple[str, str]]:
    """Each way's monthly cost as a formula template over the month's value columns."""
    node_hours = f"{refs['gpus_per_node']}*{refs['hours_per_month']}"
    rest = refs["rest_usd_per_gpu_hour"]
    found = [
        ("on-demand", f"={{on_demand_node_months}}*{node_hours}*"
                      f"{refs['on_demand_usd_per_gpu_hour']}+{{engine_ops_usd}}"),
    ]  # fmt: skip
    if budget.path("commitments") is not None:
        reserved = [
            f"{{committed_{term}_nodes}}*{refs[f'reserved_{term}_usd_per_gpu_hour']}"
            for term in ("1y", "3y")
            if f"reserved_{term}_usd_per_gpu_hour" in refs
        ]
        held = "+".join(reserved) or "0"
        found.append(
            ("commitments", f"=({held})*{node_hours}+{{node_months_above_committed}}*"
                            f"{node_hours}*{rest}+{{engine_ops_usd}}")
        )  # fmt: skip
    if "owned_node_usd_per_month" in refs and budget.owned is not None:
        found.append(
            ("owning", f"={{owned_nodes}}*{refs['owned_node_usd_per_month']}+"
                       f"{{node_months_above_owned}}*{node_hours}*{rest}+{{engine_ops_usd}}")
        )  # fmt: skip
    if "api_usd_per_million_input" in refs:
        found.append(
            ("hosted API", f"={{input_tokens}}/1000000*{refs['api_usd_per_million_input']}+"
                           f"{{output_tokens}}/1000000*{refs['api_usd_per_million_output']}")
        )  # fmt: skip
    return found


def _months(book: Workbook, budget: BudgetPlan, refs: dict[str, str]) -> dict[str, str]:
    """One row per month; returns each path's cost column letter by path name."""
    sheet = book.create_sheet(MONTHS)
    values = _value_columns(budget)
    formulas = _cost_formulas(budget, refs)
    names = [name for name, _ in values]
    col = {name: get_column_letter(index + 1) for index, name in enumerate(names)}
    header = [*names, *(f"{name} USD" for name, _ in formulas)]
    sheet.append(header)
    for cell in sheet[1]:
        cell.font = _BOLD
    first = len(names) + 1
    for index, month in enumerate(budget.months):
        row = index + 2
        cells: list[object] = [get(index, month) for _, get in values]
        cells += [text.format(**{k: f"{v}{row}" for k, v in col.items()}) for _, text in formulas]
        sheet.append(cells)
        for column in range(first, first + len(formulas)):
            sheet.cell(row=row, column=column).number_format = USD
    sheet.freeze_panes = "B2"
    for index in range(1, len(header) + 1):
        sheet.column_dimensions[get_column_letter(index)].width = 16
    return {name: get_column_letter(first + index) for index, (name, _) in enumerate(formulas)}


def node_months(budget: BudgetPlan) -> tuple[tuple[float, float, float], ...]:
    """Per month, node-months run on-demand: with nothing held, above the commitments, above
    the owned nodes (what the workbook's formulas price)."""
    out = []
    for index, m in enumerate(budget.months):
        committed = 0 if budget.schedule is None else budget.schedule.covered(m.month)
        owned = 0 if budget.owned is None else budget.owned[index]
        out.append(
            (
                uncovered_node_months(m.fleet, 0),
                uncovered_node_months(m.fleet, committed),
                uncovered_node_months(m.fleet, owned),
            )
        )
    return tuple(out)


def committed_by_term(budget: BudgetPlan) -> tuple[dict[int, int], ...]:
    """Per month, nodes committed by term length in months."""
    commitments = () if budget.schedule is None else budget.schedule.commitments
    out = []
    for m in budget.months:
        found: dict[int, int] = {}
        for c in commitments:
            if c.covers(m.month):
                found[c.term.months] = found.get(c.term.months, 0) + c.nodes
        out.append(found)
    return tuple(out)


def _paths(book: Workbook, budget: BudgetPlan, columns: dict[str, str]) -> None:
    sheet = book.create_sheet(PATHS)
    sheet.append(["way", "total USD", "P10 total USD", "P90 total USD", "decisions", "basis"])
    for cell in sheet[1]:
        cell.font = _BOLD
    last = len(budget.months) + 1
    by_name = {p.name: p for p in budget.paths}
    names = [name for name in columns if name in by_name]
    for name in names:
        path = by_name[name]
        letter = columns[name]
        sheet.append([
            name, f"=SUM({MONTHS}!{letter}2:{letter}{last})", path.low_total_usd,
            path.high_total_usd, path.decisions, path.basis,
        ])  # fmt: skip
        _as_text(sheet, sheet.max_row, (1, 5, 6))  # the basis quotes the sources' text
    end = len(names) + 1
    sheet.append([])
    sheet.append(["cheapest", f"=INDEX(A2:A{end},MATCH(MIN(B2:B{end}),B2:B{end},0))", None, None,
                  "recomputed from the totals above; P10/P90 and decisions are capplan's, at "
                  "the prices it planned with"])  # fmt: skip
    for row in sheet.iter_rows(min_row=2, max_row=end, min_col=2, max_col=4):
        for cell in row:
            cell.number_format = USD
    for column, width in zip("ABCDEF", (14, 16, 16, 16, 60, 90), strict=True):
        sheet.column_dimensions[column].width = width
