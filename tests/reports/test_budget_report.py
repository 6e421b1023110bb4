"""The capacity report of a scenario with months ahead (issue 33): page 1 names the cheapest way,
its P10-P90 and when it overtakes the others; an appendix has the months; the JSON carries the
horizon; the PDF's first page holds all of it."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reports.budget_view import money_text
from reports.html_page import report_html
from reports.model import Report, build_report
from reports.page_one import page_one
from reports.pdf import report_pdf
from reports.render import report_json
from tests.planner.analysis.test_budget import BRIEF, _budget, _plan

WHEN = datetime(2026, 12, 6, tzinfo=UTC)


def _report() -> Report:
    return build_report(
        _plan(BRIEF.horizon), ranges=None, swings=None, runs=(), generated_at=WHEN, budget=_budget()
    )


def test_page_one_names_the_cheapest_way_its_range_and_crossovers() -> None:
    budget = _budget()
    one = page_one(_report())
    best = budget.cheapest
    assert one.over_time[0].startswith(f"Over 24 months, {best.name} is the cheapest way")
    assert (
        f"(P10-P90 {money_text(best.low_total_usd)}-{money_text(best.high_total_usd)})"
        in (one.over_time[0])
    )
    assert any(re.search(r"from (month \d+|the first month)", line) for line in one.over_time)
    header, *rows = one.over_time_table
    assert header[1] == "24 months" and rows[0][0] == best.name
    assert len(rows) == len(budget.paths)


def test_the_report_json_and_html_carry_the_months() -> None:
    report = _report()
    document = json.loads(report_json(report))
    assert len(document["horizon"]["months"]) == 24
    assert document["horizon"]["cheapest"]["path"] == _budget().cheapest.name
    html = report_html(report, interactive=False)
    assert "Over the months ahead" in html and "Appendix: The months ahead" in html


@pytest.mark.slow
def test_the_pdfs_first_page_holds_the_months_ahead(tmp_path: Path) -> None:
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(report_pdf(_report()))
    first = subprocess.run(
        ["pdftotext", "-f", "1", "-l", "1", "-layout", str(pdf), "-"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "Over the months ahead" in first
    assert "What the cost leaves out" in first  # the rest of page 1 still fits
    assert "cheapest way" in " ".join(first.split())
