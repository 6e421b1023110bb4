"""The capacity report built from the demo store (agent-platform scenario) in every format."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from openpyxl import load_workbook  # type: ignore[import-untyped]

from db import run_reads
from db.engine import make_engine
from db.prices import list_prices
from planner.analysis.capacity import Plan, make_plan
from planner.analysis.sensitivity import sensitivity
from planner.analysis.uncertainty import plan_ranges
from planner.curves.load import LoadCurve, curve_from_run
from planner.inputs.prices import PriceEntry, load_catalog_csv
from planner.inputs.scenario import Scenario, load_scenario, scenario_from_yaml
from reports.charts import report_figures
from reports.export import options_table, plan_to_dict
from reports.html_page import report_html
from reports.model import Report, RunMeta, build_report, run_meta
from reports.names import option_name
from reports.page_one import page_one
from reports.pdf import report_pdf
from reports.render import report_csv, report_json, report_xlsx
from tests.stores import Stores

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "docs" / "scenarios" / "agent-platform.yaml"
WHEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
Inputs = tuple[Scenario, list[LoadCurve], list[PriceEntry], list[RunMeta]]


@pytest.fixture(scope="module")
def inputs(stores: Stores) -> Inputs:
    engine = make_engine(stores.demo("report"))
    stored = run_reads.load_runs(engine)
    prices = list_prices(engine) or load_catalog_csv()
    engine.dispose()
    curves = [c for c in (curve_from_run(s.run, s.run_id) for s in stored) if c is not None]
    runs = [run_meta(s.run_id, s.imported_at, s.run) for s in stored]
    return load_scenario(SCENARIO), curves, prices, runs


@pytest.fixture(scope="module")
def plan(inputs: Inputs) -> Plan:
    scenario, curves, prices, _ = inputs
    return make_plan(scenario, curves, prices)


@pytest.fixture(scope="module")
def report(inputs: Inputs, plan: Plan) -> Report:
    scenario, curves, prices, runs = inputs
    ranges = plan_ranges(scenario, curves, prices, samples=60)
    swings = sensitivity(scenario, curves, prices)
    return build_report(plan, ranges=ranges, swings=swings, runs=runs, generated_at=WHEN)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_summary_states_the_recommended_option_its_cost_and_range(
    report: Report, plan: Plan
) -> None:
    choice = plan.recommendation.choice
    assert choice is not None and choice.total_monthly_cost_usd is not None
    summary = report.summary
    assert summary.choice == option_name(choice.key)
    assert summary.total_monthly_cost_usd == choice.total_monthly_cost_usd
    assert summary.nodes == choice.nodes
    assert summary.cost_p10_usd is not None and summary.cost_p90_usd is not None
    assert summary.cost_p10_usd <= summary.cost_p50_usd <= summary.cost_p90_usd  # type: ignore[operator]
    assert summary.binding_text and "TTFT p99" in summary.binding_text


def test_cost_vs_demand_at_full_demand_matches_the_plan(report: Report, plan: Plan) -> None:
    by_title = {option_name(o.key): o for o in plan.options}
    feasible = [s for s in report.demand_series if by_title[s.title].meets_sla]
    assert feasible
    for line in feasible:
        option = by_title[line.title]
        full = line.demand_factor.index(1.0)
        assert line.total_monthly_cost_usd[full] == option.total_monthly_cost_usd
        assert line.nodes[full] == option.nodes
        assert line.demand[full] == 20.0  # peak requests/s of the scenario
        costs = [c for c in line.total_monthly_cost_usd if c is not None]
        assert costs == sorted(costs), line.title  # more demand never costs less


def test_chart_fit_is_marked_extrapolated_only_past_the_measured_levels(report: Report) -> None:
    for chart in report.charts:
        if not chart.measured_concurrency:
            continue
        top = max(chart.measured_concurrency)
        for x, extrapolated in zip(chart.grid_concurrency, chart.extrapolated, strict=True):
            if x > top:
                assert extrapolated, (chart.title, x)
        assert len(chart.fit_output_tok_s) == len(chart.grid_concurrency)


def test_provenance_names_every_curve_and_the_physics_flag(report: Report, plan: Plan) -> None:
    assert [p.option for p in report.provenance] == [option_name(o.key) for o in plan.options]
    assert {p.provenance for p in report.provenance} == {"published"}
    flagged = [p for p in report.provenance if p.physics_flags]
    assert flagged and "ceiling" in flagged[0].physics_flags[0]


def test_csv_has_the_options_table_columns_and_rows(report: Report, plan: Plan) -> None:
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    table = options_table(plan)
    assert list(rows[0]) == list(table[0])
    assert len(rows) == len(plan.options)
    assert float(rows[0]["total_monthly_cost_usd"]) == table[0]["total_monthly_cost_usd"]


def test_json_reproduces_the_scenario_and_names_the_runs(report: Report, plan: Plan) -> None:
    document = json.loads(report_json(report))
    reproduce = document["reproduce"]
    again = scenario_from_yaml(reproduce["scenario_yaml"], "report")
    assert again == plan.scenario
    assert reproduce["run_ids"] == plan_to_dict(plan)["run_ids"]
    assert [run["run_id"] for run in document["runs"]] == reproduce["run_ids"]
    assert reproduce["catalog_version"] == plan.catalog_version
    # The plan document keeps the canonical title (JSON keys and values stay canonical).
    choice = plan.recommendation.choice
    assert choice is not None
    assert document["plan"]["recommendation"]["choice"] == choice.title()
    assert report.summary.choice == option_name(choice.key)
    assert len(document["ranges"]["options"]) == len(plan.options)
    assert document["sensitivity"]


def test_xlsx_has_every_sheet_with_numbers_as_numbers(report: Report) -> None:
    book = load_workbook(io.BytesIO(report_xlsx(report)))
    for name in ("inputs", "options", "chart_throughput", "chart_ttft_p99"):
        assert name in book.sheetnames
    for name in ("chart_cost_vs_demand", "chart_nodes", "ranges", "sensitivity", "runs"):
        assert name in book.sheetnames
    options = book["options"]
    header = [c.value for c in options[1]]
    cost = options.cell(row=2, column=header.index("total_monthly_cost_usd") + 1).value
    assert cost == report.summary.total_monthly_cost_usd
    demand = list(book["chart_cost_vs_demand"].iter_rows(min_row=2, values_only=True))
    assert demand and all(isinstance(row[2], int | float) for row in demand)
    assert {row[3] for row in demand} & {report.summary.total_monthly_cost_usd}
    runs = [row[0] for row in book["runs"].iter_rows(min_row=2, values_only=True)]
    assert runs == list(report.run_ids)
    inputs = {row[0]: row[1] for row in book["inputs"].iter_rows(min_row=2, values_only=True)}
    assert inputs["sla.ttft_p99_ms"] == 1000.0
    assert inputs["price.H200-SXM-141GB"] == 3.5


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.scripts += tag == "script"
        self.links += [value or "" for name, value in attrs if name in {"src", "href"}]


def test_html_is_self_contained_and_escapes_the_scenario_name(inputs: Inputs, plan: Plan) -> None:
    scenario, curves, prices, runs = inputs
    hostile = scenario.model_copy(update={"name": "<script>alert(1)</script>"})
    odd = make_plan(hostile, curves, prices)
    page = report_html(build_report(odd, ranges=None, swings=None, runs=runs, generated_at=WHEN))
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    parser = _Links()
    parser.feed(page)
    assert parser.links == []  # no external script, stylesheet or image
    assert parser.scripts >= 4  # plotly.js inlined once, then one script per chart
    assert "Plotly.newPlot" in page


def test_xlsx_keeps_a_formula_like_scenario_name_as_text(inputs: Inputs) -> None:
    scenario, curves, prices, runs = inputs
    odd = make_plan(scenario.model_copy(update={"name": "=1+1"}), curves, prices)
    report = build_report(odd, ranges=None, swings=None, runs=runs, generated_at=WHEN)
    book = load_workbook(io.BytesIO(report_xlsx(report)))
    cells = [c for row in book["summary"].iter_rows() for c in row if c.value == "=1+1"]
    assert cells and all(c.data_type == "s" for c in cells)


def test_pdf_has_the_summary_options_assumptions_and_runs(report: Report, tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(report_pdf(report))
    text = subprocess.run(
        ["pdftotext", str(path), "-"], check=True, capture_output=True, text=True
    ).stdout
    flat = _squash(text)
    summary = report.summary
    assert summary.choice is not None
    assert _squash(page_one(report).buy) in flat
    assert _squash(f"${summary.total_monthly_cost_usd:,.0f}/month") in flat
    assert _squash(f"P10 ${summary.cost_p10_usd:,.0f}") in flat
    assert _squash(f"P90 ${summary.cost_p90_usd:,.0f}") in flat
    for title, _nodes in report.nodes_by_option:
        assert _squash(title) in flat, title
    for needle in ("Assumptions", "sla.ttft_p99_ms", "sla.tpot_p99_ms", "Dataflags", "Reproduce"):
        assert needle in flat, needle
    assert f"{report.run_ids[0]}curve-csv" in flat or f"{report.run_ids[0]}published" in flat
    pages = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True, text=True)
    assert "A4" in pages.stdout


def test_charts_mark_the_sla_the_operating_point_and_the_planned_demand(
    report: Report, plan: Plan
) -> None:
    (throughput, ttft, cost, _) = [figure for _, figure in report_figures(report)]
    choice = plan.recommendation.choice
    assert choice is not None
    (star,) = [t for t in throughput.data if (t.name or "").startswith("recommended operating")]
    planned = (choice.concurrency_per_replica, choice.output_tok_s_per_replica)
    assert (star.x[0], star.y[0]) == planned
    sla = plan.scenario.sla.ttft_p99_ms
    assert [shape.y0 for shape in ttft.layout.shapes] == [sla]
    assert [shape.x0 for shape in cost.layout.shapes] == [plan.scenario.demand.amount]
