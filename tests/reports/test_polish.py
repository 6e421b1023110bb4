"""Report polish on the demo store's agent-platform plan: XLSX formats, widths and units, the TTFT
axis naming its statistic, and the note when two options tie on cost."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from openpyxl import load_workbook  # type: ignore[import-untyped]
from openpyxl.worksheet.worksheet import Worksheet  # type: ignore[import-untyped]

from db import run_reads
from db.engine import make_engine, upgrade
from db.prices import list_prices
from db.seed import load_demo_data
from planner.analysis.capacity import Plan, make_plan
from planner.analysis.uncertainty import PlanRanges, ranges_of
from planner.curves.load import curve_from_run
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import load_scenario
from reports.charts import report_figures, ttft_figure, ttft_title
from reports.export import plan_to_xlsx, tie_note
from reports.html_page import report_html
from reports.model import Report, build_report, run_meta
from reports.names import option_name
from reports.render import report_json, report_xlsx
from team.roles import SYSTEM

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "docs" / "scenarios" / "agent-platform.yaml"
WHEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
TP2 = "tensorrt-llm on H200-SXM-141GB (TP 2, fp8)"
TP4 = "tensorrt-llm on H200-SXM-141GB (TP 4, fp8)"


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Plan, PlanRanges, Report]:
    url = f"sqlite:///{tmp_path_factory.mktemp('polish') / 'capplan.db'}"
    upgrade(url)
    engine = make_engine(url)
    load_demo_data(engine, actor=SYSTEM)
    stored = run_reads.load_runs(engine)
    prices = list_prices(engine) or load_catalog_csv()
    engine.dispose()
    curves = [c for c in (curve_from_run(s.run, s.run_id) for s in stored) if c is not None]
    runs = [run_meta(s.run_id, s.imported_at, s.run) for s in stored]
    # At 97% confidence TensorRT-LLM TP 2 and TP 4 both need 3 nodes: a tie to name.
    base = load_scenario(SCENARIO)
    options = base.options.model_copy(update={"sizing_confidence": 0.97})
    scenario = base.model_copy(update={"options": options})
    plan = make_plan(scenario, curves, prices)
    ranges = ranges_of(plan)
    report = build_report(plan, ranges=ranges, swings=None, runs=runs, generated_at=WHEN)
    return plan, ranges, report


def _column(sheet: Worksheet, header: str) -> int:
    names = [cell.value for cell in sheet[1]]
    assert header in names, names
    return names.index(header) + 1


def test_report_xlsx_formats_costs_prices_and_counts_by_unit(
    planned: tuple[Plan, PlanRanges, Report],
) -> None:
    plan, _, report = planned
    book = load_workbook(io.BytesIO(report_xlsx(report)))
    options = book["options"]
    cost = options.cell(row=2, column=_column(options, "total_monthly_cost_usd"))
    assert cost.value == plan.options[0].total_monthly_cost_usd == 61320.0
    assert cost.number_format == "$#,##0"
    price = options.cell(row=2, column=_column(options, "usd_per_gpu_hour"))
    assert (price.value, price.number_format) == (3.5, "$#,##0.00")
    streams = options.cell(row=2, column=_column(options, "concurrency_per_replica (streams)"))
    planned_streams = plan.options[0].concurrency_per_replica  # type: ignore[union-attr]
    assert (streams.value, streams.number_format) == (planned_streams, "#,##0.0")
    nodes = options.cell(row=2, column=_column(options, "nodes"))
    assert (nodes.value, nodes.number_format) == (3, "#,##0")
    inputs = {row[0].value: row[1] for row in book["inputs"].iter_rows(min_row=2)}
    utilisation = inputs["options.target_utilization"]
    assert (utilisation.value, utilisation.number_format) == (0.8, "0%")
    assert inputs["price.H200-SXM-141GB"].number_format == "$#,##0.00"
    assert inputs["sla.ttft_p99_ms"].number_format == "#,##0.0"
    ranges = book["ranges"]
    share = ranges.cell(row=2, column=_column(ranges, "pick_share_pct"))
    assert share.number_format == '0.0"%"' and 0 < share.value <= 100


def test_report_xlsx_has_bold_frozen_headers_fitted_widths_and_no_unformatted_number(
    planned: tuple[Plan, PlanRanges, Report],
) -> None:
    _, _, report = planned
    book = load_workbook(io.BytesIO(report_xlsx(report)))
    for sheet in book.worksheets:
        assert sheet.freeze_panes == "A2", sheet.title
        assert all(cell.font.bold for cell in sheet[1]), sheet.title
        for row in sheet.iter_rows(min_row=2):
            for cell in row:
                if isinstance(cell.value, int | float) and not isinstance(cell.value, bool):
                    assert cell.number_format != "General", (sheet.title, cell.coordinate)
    options = book["options"]
    widths = {
        cell.value: options.column_dimensions[cell.column_letter].width for cell in options[1]
    }
    assert widths["total_monthly_cost_usd"] == len("total_monthly_cost_usd") + 2
    assert widths["notes"] == 60  # long text is capped
    assert widths["tp (GPUs)"] == 11  # header 9 + 2: short numbers never shrink it below


def test_report_xlsx_headers_name_the_units_of_the_chart_data(
    planned: tuple[Plan, PlanRanges, Report],
) -> None:
    plan, _, report = planned
    book = load_workbook(io.BytesIO(report_xlsx(report)))
    throughput = [c.value for c in book["chart_throughput"][1]]
    assert throughput[2:] == [
        "concurrency_per_replica (streams)",
        "kind",
        "measured_output_tok_s",
        "fit_output_tok_s",
        "fit_lo_output_tok_s",
        "fit_hi_output_tok_s",
        "extrapolated",
    ]
    ttft = book["chart_ttft_p99"]
    header = [c.value for c in ttft[1]]
    assert {"fit_lo_ttft_ms", "fit_hi_ttft_ms", "ttft_statistic"} <= set(header)
    at = header.index("ttft_statistic")
    said = {(row[0], row[at]) for row in ttft.iter_rows(min_row=2, values_only=True)}
    expected = {
        option_name(o.key): "p99"
        if o.fit.ttft_p99_stat == "p99"
        else "statistic not stated by the source"
        for o in plan.options
    }
    assert said == set(expected.items())
    assert set(expected.values()) == {"p99", "statistic not stated by the source"}


def test_plan_xlsx_inputs_carry_units_and_formats(planned: tuple[Plan, PlanRanges, Report]) -> None:
    plan, ranges, _ = planned
    book = load_workbook(io.BytesIO(plan_to_xlsx(plan, ranges)))
    inputs = book["inputs"]
    assert [c.value for c in inputs[1]] == ["input", "value", "unit"]
    rows = {row[0].value: row for row in inputs.iter_rows(min_row=2)}
    assert rows["options.gpus_per_node"][2].value == "GPUs"
    assert rows["options.redundancy_replicas"][2].value == "replicas"
    utilisation = rows["options.target_utilization"]
    assert (utilisation[1].value, utilisation[2].value) == (0.8, "share")
    assert utilisation[1].number_format == "0%"
    assert rows["budget.monthly_usd"][1].number_format == "$#,##0"
    assert rows["pricing.H200-SXM-141GB"][1].number_format == "$#,##0.00"
    assert book["options"].freeze_panes == "A2"


def test_ttft_axis_says_the_statistic_is_unstated_when_the_source_did_not_say(
    planned: tuple[Plan, PlanRanges, Report],
) -> None:
    plan, _, report = planned
    assert {o.fit.ttft_p99_stat for o in plan.options if o.meets_sla} == {"unstated"}
    caption, figure = report_figures(report)[1]
    axis = figure.layout.yaxis.title.text
    assert axis == "TTFT (statistic not stated by the source), ms"
    assert "p99" not in axis and "p99" not in figure.layout.title.text
    assert caption.startswith("TTFT (statistic not stated by the source) vs concurrency")


def test_ttft_axis_says_p99_only_when_every_series_is_p99(
    planned: tuple[Plan, PlanRanges, Report],
) -> None:
    _, _, report = planned
    charts = report.charts[:2]
    p99 = ttft_figure(charts, ["p99", "p99"])
    assert p99.layout.yaxis.title.text == "TTFT p99, ms"
    mixed = ttft_figure(charts, ["p99", "unstated"])
    assert mixed.layout.yaxis.title.text == "TTFT (statistic differs by option, see legend), ms"
    names = {trace.name for trace in mixed.data if trace.name}
    assert f"{charts[1].title} · TTFT statistic not stated by the source fit" in names
    assert ttft_figure(charts).layout.yaxis.title.text == "TTFT, ms"  # nothing claimed
    assert ttft_title(["p50"]) == "TTFT p50"


def test_tie_note_names_both_tied_options_and_their_pick_shares(
    planned: tuple[Plan, PlanRanges, Report],
) -> None:
    plan, ranges, report = planned
    choice = plan.recommendation.choice
    assert choice is not None and choice.title() == TP2
    shares = {o.title: o.pick_share for o in ranges.options}
    assert shares[TP2] > 0 and shares[TP4] > 0
    note = tie_note(plan, ranges)
    assert note == (
        "TensorRT-LLM TP2 and TP4 cost the same; each is the pick or tied "
        f"with it in this share of the resampled plans: TP2 {shares[TP2]:.0%}, "
        f"TP4 {shares[TP4]:.0%}."
    )
    assert shares[TP2] == pytest.approx(1 - ranges.choice_change_share)  # one measure
    page = report_html(report)
    assert "TensorRT-LLM TP2 and TP4 cost the same; each is the pick" in page
    summary = {
        row[0]: row[1]
        for row in load_workbook(io.BytesIO(report_xlsx(report)))["summary"].iter_rows(
            min_row=2, values_only=True
        )
    }
    assert summary["tie_note"] == note
    assert json.loads(report_json(report))["summary"]["tie_note"] == note


def test_no_tie_note_without_ranges_or_when_resampling_never_picks_the_other(
    planned: tuple[Plan, PlanRanges, Report],
) -> None:
    plan, ranges, _ = planned
    assert tie_note(plan, None) is None
    only_tp2 = tuple(replace(o, pick_share=1.0 if o.title == TP2 else 0.0) for o in ranges.options)
    assert tie_note(plan, replace(ranges, options=only_tp2)) is None
