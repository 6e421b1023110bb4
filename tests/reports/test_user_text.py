"""Every document of a plan reads as plain text: the PDF, HTML, XLSX and CSV reports, the plan's
own XLSX export and `capplan plan`'s terminal output name no source-tree file and show no raw
markdown (the finance brief and the same at 80 req/s over $50k, on the demo store)."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from openpyxl import load_workbook  # type: ignore[import-untyped]
from typer.testing import CliRunner

from cli import app
from db.engine import make_engine
from planner.inputs.scenario import BudgetSpec, load_scenario, scenario_to_yaml
from reports.formats import render_report
from reports.html_page import report_html
from tests.stores import Stores
from tests.user_text import problems
from workflows.session import PlanningSession

ROOT = Path(__file__).resolve().parents[2]
BRIEF = ROOT / "docs" / "scenarios" / "finance-brief-chat.yaml"
runner = CliRunner()


@pytest.fixture(scope="module")
def demo_url(stores: Stores) -> str:
    return stores.demo()


def _briefs(tmp: Path) -> list[Path]:
    tight = load_scenario(BRIEF)
    demand = tight.demand.model_copy(update={"peak_requests_per_s": 80.0})
    tight = tight.model_copy(update={"demand": demand, "budget": BudgetSpec(monthly_usd=50_000)})
    second = tmp / "brief-80-50k.yaml"
    second.write_text(scenario_to_yaml(tight), encoding="utf-8")
    return [BRIEF, second]


def _workbook_text(data: bytes) -> str:
    book = load_workbook(io.BytesIO(data))
    return "\n".join(
        str(cell)
        for sheet in book.worksheets
        for row in sheet.iter_rows(values_only=True)
        for cell in row
        if isinstance(cell, str)
    )


def test_no_document_names_a_source_file_or_shows_markdown(demo_url: str, tmp_path: Path) -> None:
    engine = make_engine(demo_url)
    for path in _briefs(tmp_path):
        scenario = load_scenario(path)
        session = PlanningSession.from_store(engine, scenario, samples=40)
        report = session.report(with_sensitivity=True)
        pdf = tmp_path / f"{path.stem}.pdf"
        pdf.write_bytes(render_report(report, "pdf"))
        texts = {
            "pdf": subprocess.run(
                ["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True
            ).stdout,
            "html": report_html(report, interactive=False),
            "xlsx": _workbook_text(render_report(report, "xlsx")),
            "csv": render_report(report, "csv").decode("utf-8"),
            "plan xlsx": _workbook_text(session.export(".xlsx", with_sensitivity=True)),
        }
        result = runner.invoke(app, ["plan", str(path), "--db", demo_url, "--samples", "40"])
        assert result.exit_code == 0, result.output
        texts["capplan plan"] = result.output
        for name, text in texts.items():
            assert not problems(text), (path.name, name, problems(text)[:5])
    engine.dispose()


def test_the_check_finds_a_source_file_and_raw_markdown() -> None:
    assert problems("validated in bench/bench_workload_adjust.py on the sample")
    assert problems("see shared/reference/benchmark-formats.md")
    assert problems("**c8.json**: stored") and problems("run `capplan probe`")
    assert not problems("results/vllm-H100-tp2/vllm-bench-c*.json # vLLM on H100, TP 2")
