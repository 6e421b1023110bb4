"""The budget workbook (reports.budget_xlsx) opened with a formula engine (the `formulas`
package): its formulas give capplan's own totals, and changing a price cell moves every month,
the totals and the cheapest way as Excel would."""

from __future__ import annotations

import io
from pathlib import Path

import formulas
import pytest
from openpyxl import load_workbook  # type: ignore[import-untyped]

from reports.budget_xlsx import INPUTS, PATHS, node_months
from reports.export import plan_to_xlsx
from tests.planner.analysis.test_budget import BRIEF, _budget, _plan


def _cell(sheet: str, ref: str, book: str = "plan.xlsx") -> str:
    return f"'[{book}]{sheet.upper()}'!{ref}"


def _value(solution: dict[str, object], key: str) -> object:
    found = solution[key]
    return found.value[0][0]  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_price_changed_in_the_workbook_moves_the_totals(tmp_path: Path) -> None:
    budget = _budget()
    data = plan_to_xlsx(_plan(BRIEF.horizon), budget=budget)
    path = tmp_path / "plan.xlsx"
    path.write_bytes(data)
    book = load_workbook(io.BytesIO(data))
    rows = {row[0].value: row[0].row for row in book[INPUTS].iter_rows(min_row=2)}
    ways = {row[0].value: row[0].row for row in book[PATHS].iter_rows(min_row=2) if row[0].value}
    model = formulas.ExcelModel().loads(str(path)).finish()
    as_built = model.calculate()
    for priced in budget.paths:
        total = _value(as_built, _cell(PATHS, f"B{ways[priced.name]}"))
        assert total == pytest.approx(priced.total_usd, rel=1e-9), priced.name
    assert _value(as_built, _cell(PATHS, f"B{ways['cheapest']}")) == budget.cheapest.name
    # A dearer on-demand price: the on-demand total is its node-months at the new price.
    price_cell = _cell(INPUTS, f"B{rows['on_demand_usd_per_gpu_hour']}")
    moved = model.calculate(inputs={price_cell: 4.0})
    hours = 8 * 730.0
    want = sum(held[0] * hours * 4.0 + m.option.ops_cost_usd
               for held, m in zip(node_months(budget), budget.months, strict=True))  # fmt: skip
    got = _value(moved, _cell(PATHS, f"B{ways['on-demand']}"))
    assert got == pytest.approx(want, rel=1e-9) and got > budget.paths[0].total_usd
    # A cheap enough API becomes the cheapest way.
    api_in = _cell(INPUTS, f"B{rows['api_usd_per_million_input']}")
    api_out = _cell(INPUTS, f"B{rows['api_usd_per_million_output']}")
    cheap = model.calculate(inputs={api_in: 0.01, api_out: 0.02})
    assert _value(cheap, _cell(PATHS, f"B{ways['cheapest']}")) == "hosted API"
    # The owned node's monthly cost follows its price.
    node_cell = _cell(INPUTS, f"B{rows['node_price_usd']}")
    dearer = model.calculate(inputs={node_cell: 640_000})
    owning = _value(dearer, _cell(PATHS, f"B{ways['owning']}"))
    assert owning > budget.path("owning").total_usd  # type: ignore[union-attr]


@pytest.mark.slow
def test_spot_for_part_of_the_rest_is_priced_alike_in_the_workbook(tmp_path: Path) -> None:
    from planner.analysis.budget import plan_budget
    from tests.planner.analysis.test_budget import CATALOG

    assert BRIEF.horizon is not None
    spot = BRIEF.horizon.commitments.model_copy(update={"spot": 1.0, "spot_max_share_pct": 30})
    horizon = BRIEF.horizon.model_copy(update={"commitments": spot})
    budget = plan_budget(_plan(horizon), CATALOG)
    assert budget.spot == (1.0, 0.3)
    path = tmp_path / "plan.xlsx"
    path.write_bytes(plan_to_xlsx(_plan(horizon), budget=budget))
    book = load_workbook(path)
    ways = {row[0].value: row[0].row for row in book[PATHS].iter_rows(min_row=2) if row[0].value}
    solved = formulas.ExcelModel().loads(str(path)).finish().calculate()
    for priced in budget.paths:
        total = _value(solved, _cell(PATHS, f"B{ways[priced.name]}"))
        assert total == pytest.approx(priced.total_usd, rel=1e-9), priced.name


@pytest.mark.hostile
def test_a_source_written_as_a_formula_stays_text(tmp_path: Path) -> None:
    """A colleague's scenario whose price source reads '=HYPERLINK(...)' cannot put a live
    formula into the workbook someone else opens."""
    from planner.analysis.budget import plan_budget
    from tests.planner.analysis.test_budget import CATALOG

    assert BRIEF.horizon is not None
    trap = '=HYPERLINK("http://example.invalid/x","quote")'
    owning = BRIEF.horizon.owning.model_copy(update={"source": trap})  # type: ignore[union-attr]
    horizon = BRIEF.horizon.model_copy(update={"owning": owning})
    data = plan_to_xlsx(_plan(horizon), budget=plan_budget(_plan(horizon), CATALOG))
    book = load_workbook(io.BytesIO(data))
    cells = [c for sheet in book for row in sheet.iter_rows() for c in row
             if isinstance(c.value, str)]  # fmt: skip
    planted = [c for c in cells if "example.invalid" in c.value]
    assert planted and all(c.data_type == "s" for c in planted)
    inputs = [c for row in book[INPUTS].iter_rows(min_row=2) for c in row[:1]]
    assert all(c.data_type == "s" for c in inputs)
