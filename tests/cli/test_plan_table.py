"""`capplan plan`'s terminal output: the recommendation first in plain words, a table that fits
in 100 columns with one line per sized option, proper names and whole counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from cli.common import out
from tests.stores import Stores

SCENARIO = Path(__file__).resolve().parents[2] / "docs" / "scenarios" / "agent-platform.yaml"
runner = CliRunner()


@pytest.fixture(scope="module")
def demo_db(stores: Stores) -> str:
    url = stores.empty("plan-table")
    result = runner.invoke(app, ["demo-data", "--db", url, "--json"])
    assert result.exit_code == 0, result.output
    return url


def document_options(db: str) -> list[dict[str, object]]:
    result = runner.invoke(app, ["plan", str(SCENARIO), "--db", db, "--json", "--samples", "0"])
    options: list[dict[str, object]] = json.loads(result.stdout)["options"]
    return options


def test_plan_table_fits_in_100_columns_one_line_per_option(
    demo_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(out, "_width", 100)
    result = runner.invoke(app, ["plan", str(SCENARIO), "--db", demo_db, "--samples", "10"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert re.match(r"Run TensorRT-LLM TP2 on \d+ 8-GPU nodes? of H200 SXM 141GB", lines[0])
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("option"))
    for word in ("GPU", "SLA", "nodes", "GPUs", "$/month", "$/1M", "limited by", "P10-P90"):
        assert word in lines[header], word
    table = lines[header : header + 2 + len(document_options(demo_db))]
    assert max(len(line) for line in table) <= 100  # the table; commands print unwrapped
    rows = [line for line in lines[header + 2 :] if re.search(r" (yes|flag) ", line)]
    assert re.match(r"\*  TensorRT-LLM TP2  H200 SXM 141GB  yes  \d+ ", rows[0])
    document = json.loads(
        runner.invoke(app, ["plan", str(SCENARIO), "--db", demo_db, "--json"]).stdout
    )
    assert len(rows) == sum(1 for o in document["options"] if o["meets_sla"])
    assert all(re.search(r"\d+k-\d+k$", row.rstrip()) for row in rows)  # no row wraps
    assert not any("3.00" in row or "tensorrt-llm" in row or "H200-SXM" in row for row in rows)
    assert re.search(r" \d{2,3},\d{3} ", rows[0])  # $/month with a thousands separator


def test_what_if_plans_each_demand_multiple_side_by_side(
    demo_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(out, "_width", 80)
    argv = ["plan", str(SCENARIO), "--db", demo_db, "--samples", "20"]
    result = runner.invoke(app, [*argv, "--what-if", "1, 2x,4"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("What if demand grows")))
    table = lines[start : start + 12]
    assert all(len(line) <= 80 for line in table), table
    assert [line.split()[0] for line in table if re.match(r"^\d+(\.\d+)?x ", line)] == [
        "1x",
        "2x",
        "4x",
    ]
    document = json.loads(runner.invoke(app, [*argv, "--json", "--what-if", "1,2,4"]).stdout)
    rows = document["what_if"]
    assert [row["demand_multiplier"] for row in rows] == [1.0, 2.0, 4.0]
    base = document["scenario"]["demand"]["peak_requests_per_s"]
    assert [row["demand (requests/s at peak)"] for row in rows] == [base, 2 * base, 4 * base]
    # 1x is the plan itself; more demand never buys fewer nodes; a year is twelve months.
    choice = next(o for o in document["options"] if o["recommended"])
    assert rows[0]["nodes"] == choice["nodes"]
    assert rows[0]["total_monthly_cost_usd"] == choice["total_monthly_cost_usd"]
    assert rows[0]["nodes"] <= rows[1]["nodes"] <= rows[2]["nodes"]
    for row in rows:
        assert row["total_yearly_cost_usd"] == pytest.approx(12 * row["total_monthly_cost_usd"])
    assert rows[2]["nodes"] > rows[0]["nodes"]


def test_what_if_refuses_a_bad_multiplier_naming_it(demo_db: str) -> None:
    argv = ["plan", str(SCENARIO), "--db", demo_db, "--samples", "0", "--what-if"]
    for text, said in (("1,abc", "'abc'"), ("0,2", "above 0"), ("-1", "above 0")):
        result = runner.invoke(app, [*argv, text])
        assert result.exit_code != 0
        assert "--what-if" in result.output and said in result.output, result.output
