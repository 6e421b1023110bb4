"""Page 1 of the PDF, the page finance signs: what to buy, the money, the verdict, how sure, what
the data is, what the cost leaves out, the prices and their flags; flags said once per source."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from db import run_reads
from db.engine import make_engine
from db.prices import list_prices
from hardware.gpus import gpu_catalog
from planner.analysis.capacity import make_plan
from planner.analysis.uncertainty import plan_ranges
from planner.curves.load import curve_from_run
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import BudgetSpec, load_scenario, scenario_from_dict
from planner.sizing.options import RejectedOption
from reports.html_page import report_html
from reports.model import Report, build_report, run_meta
from reports.names import gpu_name
from reports.page_one import LEFT_OUT, page_one, source_flags
from reports.pdf import report_pdf
from reports.price_rows import STALE_MONTHS, age_months, mix_flags, price_rows
from tests.stores import Stores
from ui.plan_form import DEFAULT_MODEL
from workflows.session import PlanningSession

ROOT = Path(__file__).resolve().parents[2]
WHEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def report(stores: Stores) -> Report:
    engine = make_engine(stores.demo("page-one"))
    stored = run_reads.load_runs(engine)
    prices = list_prices(engine) or load_catalog_csv()
    engine.dispose()
    curves = [c for c in (curve_from_run(s.run, s.run_id) for s in stored) if c is not None]
    runs = [run_meta(s.run_id, s.imported_at, s.run) for s in stored]
    scenario = load_scenario(ROOT / "docs" / "scenarios" / "agent-platform.yaml")
    plan = make_plan(scenario, curves, prices)
    ranges = plan_ranges(scenario, curves, prices, samples=40)
    return build_report(plan, ranges=ranges, swings=None, runs=runs, generated_at=WHEN)


def _page_one_text(report: Report, tmp_path: Path) -> str:
    path = tmp_path / "report.pdf"
    path.write_bytes(report_pdf(report))
    text = subprocess.run(
        ["pdftotext", "-f", "1", "-l", "1", str(path), "-"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return re.sub(r"\s+", " ", text)


def test_page_one_says_what_to_buy_the_money_the_verdict_and_what_is_left_out(
    report: Report, tmp_path: Path
) -> None:
    choice = report.plan.recommendation.choice
    assert choice is not None
    text = _page_one_text(report, tmp_path)
    assert f"Buy {choice.nodes} x 8-GPU nodes of H200 SXM 141GB" in text
    monthly = choice.total_monthly_cost_usd
    assert f"${monthly:,.0f}/month" in text
    assert f"${monthly * 12:,.0f}/year" in text
    assert "Expected cost (median fleet)" in text
    assert "WITHIN the $150,000/month budget" in text
    assert "The pick holds in" in text and "P10 $" in text and "P90 $" in text
    assert "How this is measured:" in text and "The pick changes" not in text
    assert "rests on published data" in text
    for item in LEFT_OUT:
        assert item in text, item
    assert "/work/" not in text and ".csv" not in text  # no internal paths


def test_the_budget_verdict_says_over_with_the_cheapest_cost(report: Report) -> None:
    scenario = report.plan.scenario.model_copy(update={"budget": BudgetSpec(monthly_usd=10_000)})
    curves = [o.curve for o in report.plan.options]
    plan = make_plan(scenario, curves, report.plan.prices_used, fitter=lambda c: _fit(report, c))
    assert plan.recommendation.choice is None
    over = replace(report, plan=plan)
    (verdict,) = [value for label, value in page_one(over).money if label == "Budget"]
    assert verdict.startswith("OVER: the cheapest option meeting the SLA costs $")
    assert "over the $10,000/month budget" in verdict


def _fit(report: Report, curve: object) -> object:
    return next(o.fit for o in report.plan.options if o.curve is curve)


def test_prices_show_kind_size_and_age_and_flag_stale_and_mixed_quotes(report: Report) -> None:
    rows = {row.gpu: row for row in report.prices}
    h100, h200 = rows["H100-SXM-80GB"], rows["H200-SXM-141GB"]
    assert (h100.kind, h100.gpus_per_quote) == ("on_demand", 8)
    assert (h200.kind, h200.gpus_per_quote) == ("on_demand", 1)
    assert h200.age_months == 13  # 2025-10-22 -> 2026-11
    assert any("older than 6 months" in flag for flag in h200.flags)
    (mixed,) = mix_flags(report.prices)
    assert "8-GPU and a 1-GPU instance" in mixed
    assert mixed in page_one(report).price_flags
    page = report_html(report, interactive=False)
    assert "Mixed quotes" in page and "14 months" not in page and "13 months" in page


def test_a_fresh_quote_of_one_kind_raises_no_flag(report: Report) -> None:
    fresh = [replace(e, as_of="2026-10-01", gpus_per_instance=8) for e in report.plan.prices_used]
    plan = replace(report.plan, prices_used=tuple(fresh))
    rows = price_rows(plan, WHEN)
    assert rows and all(not row.flags for row in rows)
    assert mix_flags(rows) == []


@pytest.mark.parametrize(
    ("as_of", "months"),
    [("2026-05-18", 6), ("2026-05", 6), ("late 2024", 23), ("2026", 4),
     ("pre-2025-06 list price", 17), ("not stated", None)],
)  # fmt: skip
def test_quote_age_in_months(as_of: str, months: int | None) -> None:
    assert age_months(as_of, WHEN.date()) == months


def test_flags_are_said_once_per_source_not_once_per_option(report: Report) -> None:
    groups = source_flags(report.plan.options)
    (sample,) = [g for g in groups if g.source.startswith("aiconfigurator-silicon-sample")]
    assert len(sample.options) >= 10 and sample.flags
    page = report_html(report, interactive=False)
    section = page.split("Data flags, by source")[1].split("Runs behind the plan")[0]
    for flag in sample.flags:
        assert section.count(flag) == 1, flag  # once for the source, not once per curve


def test_not_options_name_the_tp(report: Report) -> None:
    rejected = [o for o in report.plan.options if isinstance(o, RejectedOption)]
    assert rejected
    page = report_html(report, interactive=False)
    for option in rejected:
        tp = f"TP{option.tp}" if option.tp else "(TP unknown)"
        assert f"TensorRT-LLM {tp} on" in page or f"vLLM {tp} on" in page


def test_nothing_to_buy_says_why(report: Report) -> None:
    scenario = report.plan.scenario.model_copy(update={"budget": BudgetSpec(monthly_usd=10_000)})
    curves = [o.curve for o in report.plan.options]
    plan = make_plan(scenario, curves, report.plan.prices_used, fitter=lambda c: _fit(report, c))
    assert page_one(replace(report, plan=plan)).buy == (
        "Nothing to buy yet: over budget: what meets the SLA costs more than the budget"
    )


@pytest.fixture(scope="module")
def default_report(stores: Stores) -> Report:
    """The Plan page's first plan (every catalog default GPU, both engines): measurement gaps,
    four quotes of three sizes, every one older than six months by the report's date."""
    engine = make_engine(stores.demo("page-one-default"))
    scenario = scenario_from_dict(
        {
            "name": "my-plan",
            "model": DEFAULT_MODEL,
            "workload": {"isl": 1024, "osl": 1024},
            "demand": {"peak_requests_per_s": 10.0},
            "candidates": {
                "engines": ["vllm", "tensorrt-llm"],
                "gpus": list(gpu_catalog().default_names()),
            },
        }
    )
    session = PlanningSession.from_store(engine, scenario, samples=40)
    made = session.report(
        with_sensitivity=False, generated_at=datetime(2026, 12, 5, 12, tzinfo=UTC)
    )
    engine.dispose()
    return made


def _pdf_text(report: Report, tmp_path: Path) -> tuple[str, list[str]]:
    """Page 1's text (spaces collapsed) and every page's."""
    path = tmp_path / "report.pdf"
    path.write_bytes(report_pdf(report))
    text = subprocess.run(
        ["pdftotext", str(path), "-"], check=True, capture_output=True, text=True
    ).stdout
    pages = [re.sub(r"\s+", " ", page) for page in text.split("\f")]
    return pages[0], pages


def test_page_one_names_the_price_it_rests_on_with_source_date_and_warnings(
    default_report: Report, tmp_path: Path
) -> None:
    choice = default_report.plan.recommendation.choice
    assert choice is not None
    (row,) = [p for p in default_report.prices if p.gpu == choice.gpu]
    first, pages = _pdf_text(default_report, tmp_path)
    assert f"Priced at ${row.usd_per_gpu_hour:,.2f}/GPU-hour" in first, first
    assert row.source.split(" (")[0] in first and f"as of {row.as_of}" in first
    assert row.age_months is not None and row.age_months > STALE_MONTHS
    assert f"the quote is {row.age_months} months old" in first
    assert f"a {row.gpus_per_quote}-GPU quote" in first  # the bill is for 4-GPU trays
    # Every stale and mixed quote is said on page 1, in a line each.
    for price in default_report.prices:
        assert f"{gpu_name(price.gpu)} {price.age_months} months" in first, price.gpu
    assert "Mixed quote sizes:" in first and "node and VM prices may not compare" in first
    assert "What the cost leaves out" in first and "Budget" in first
    assert "Appendix A says why this option" in first  # page 1's last line: nothing spilled
    # The rest are appendices; the probe commands a compact one, not pages under a big heading.
    rest = " ".join(pages[1:])
    assert "Appendix A" in rest and "What to measure" in rest and "What to measure" not in first
    commands = [i for i, page in enumerate(pages) if "capplan probe --launch" in page]
    assert commands and len(commands) <= 1 and commands[0] >= len(pages) - 3, commands


def test_page_one_says_a_one_gpu_quote_behind_an_eight_gpu_node(
    report: Report, tmp_path: Path
) -> None:
    choice = report.plan.recommendation.choice
    assert choice is not None and choice.gpu == "H200-SXM-141GB"
    first, _ = _pdf_text(report, tmp_path)
    assert "Priced at $3.50/GPU-hour" in first and "as of 2025-10-22" in first
    assert "the quote is 13 months old" in first
    assert "a 1-GPU quote, while the bill is for 8-GPU nodes" in first
