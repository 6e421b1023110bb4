"""Exports: strict JSON with everything to reproduce the plan, CSV and XLSX read back."""

from __future__ import annotations

import csv
import io
import json

import pytest
from openpyxl import load_workbook  # type: ignore[import-untyped]

from planner.analysis.capacity import Plan, make_plan
from planner.inputs.prices import catalog_version, load_catalog_csv
from planner.inputs.scenario import scenario_from_dict
from reports.cells import csv_cell
from reports.export import options_table, plan_to_csv, plan_to_dict, plan_to_xlsx
from tests.planner.builders import scenario, seed_curves, silicon_curves

CATALOG = load_catalog_csv()


def _plan() -> Plan:
    sc = scenario(
        workload={"isl": 1024, "osl": 1024},
        sla={"ttft_p99_ms": 2000, "tpot_p99_ms": 30},
        pricing={"H100-SXM-80GB": 2.95},
        candidates={"gpus": ["H100-SXM-80GB", "H200-SXM-141GB"]},
        budget={"monthly_usd": 100_000},
    )
    return make_plan(sc, silicon_curves(), CATALOG)


def test_plan_dict_is_strict_json_and_reproduces_the_scenario() -> None:
    plan = _plan()
    document = json.loads(json.dumps(plan_to_dict(plan), allow_nan=False))
    assert scenario_from_dict(document["scenario"], "from-json") == plan.scenario
    assert document["catalog_version"] == catalog_version(CATALOG)
    # H200 from the catalog; the typed H100 price equals the catalog quote it is cited as.
    assert [p["provider"] for p in document["prices_used"]] == ["Nebius", "Nebius"]
    assert document["recommendation"]["reason"] == plan.recommendation.reason
    first = document["options"][0]
    assert first["run_id"] in document["run_ids"]
    assert first["fits"]["throughput"]["family"] in {"step-time", "saturating", "step-time-power"}
    assert first["fits"]["series"]["tpot"] == "unstated"
    assert len(first["points"]) == len(plan.options[0].curve.points)


def test_options_table_has_units_in_column_names_and_one_row_per_option() -> None:
    plan = _plan()
    rows = options_table(plan)
    assert len(rows) == len(plan.options)
    for column in (
        "monthly_cost_usd",
        "usd_per_gpu_hour",
        "output_tok_s_per_replica",
        "usd_per_million_output_tokens",
    ):
        assert column in rows[0]
    assert sum(bool(row["recommended"]) for row in rows) == 1


def test_csv_reads_back_with_the_same_numbers() -> None:
    plan = _plan()
    rows = list(csv.DictReader(io.StringIO(plan_to_csv(plan))))
    assert len(rows) == len(plan.options)
    first = plan.options[0]
    assert float(rows[0]["monthly_cost_usd"]) == first.monthly_cost_usd
    assert rows[0]["engine"] == first.engine


def test_xlsx_has_inputs_options_and_curves_with_numbers_as_numbers() -> None:
    plan = make_plan(scenario(), seed_curves(), CATALOG)
    book = load_workbook(io.BytesIO(plan_to_xlsx(plan)))
    assert book.sheetnames == ["inputs", "options", "curves", "what_if"]
    what_if = list(book["what_if"].iter_rows(values_only=True))
    assert [row[0] for row in what_if[1:]] == [1.0, 1.5, 2.0]  # the default demand multiples
    inputs = {row[0]: row[1] for row in book["inputs"].iter_rows(min_row=2, values_only=True)}
    assert inputs["workload.osl"] == 500 and inputs["sla.min_stream_tok_s"] == 40
    options = list(book["options"].iter_rows(values_only=True))
    header = options[0]
    cost = options[1][header.index("monthly_cost_usd")]
    assert isinstance(cost, int | float) and cost == plan.options[0].monthly_cost_usd
    curves = list(book["curves"].iter_rows(values_only=True))
    header = curves[0]
    assert "fitted_output_tok_s_lo" in header and "measured_output_tok_s" in header
    measured = [r for r in curves[1:] if r[header.index("is_measured_level")] == "yes"]
    assert len(measured) == 8  # the seed's 4 levels for each engine
    values = {r[header.index("measured_output_tok_s")] for r in measured}
    assert {68.2, 4890.0} <= values


def test_text_starting_with_equals_is_stored_as_text_not_a_formula() -> None:
    sc = scenario(name='=HYPERLINK("http://example.invalid")')
    plan = make_plan(sc, seed_curves(), CATALOG)
    book = load_workbook(io.BytesIO(plan_to_xlsx(plan)))
    cells = [c for row in book["inputs"].iter_rows() for c in row if str(c.value).startswith("=")]
    assert cells and all(c.data_type == "s" for c in cells)


def test_control_characters_in_text_are_written_escaped_to_xlsx() -> None:
    # openpyxl refuses a workbook holding ESC (IllegalCharacterError): shown as \x1b instead.
    # A scenario read from a file refuses such a name; the writer still escapes whatever text
    # reaches it (model_copy skips validation, as a caller's own Scenario might).
    named = scenario().model_copy(update={"name": "evil\x1b[2Jname"})
    plan = make_plan(named, seed_curves(), CATALOG)
    book = load_workbook(io.BytesIO(plan_to_xlsx(plan)))
    values = [str(c.value) for row in book["inputs"].iter_rows() for c in row]
    assert "evil\\x1b[2Jname" in values


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ('=HYPERLINK("http://e.vil")', '\'=HYPERLINK("http://e.vil")'),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tcmd", "'\tcmd"),
        ("vLLM TP2", "vLLM TP2"),
        ("a\x1bb", "a\\x1bb"),
    ],
)
def test_csv_text_a_spreadsheet_would_run_is_quoted(value: str, written: str) -> None:
    assert csv_cell(value) == written
    assert csv_cell(-5.0) == -5.0  # numbers stay numbers
