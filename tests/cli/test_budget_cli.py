"""`capplan plan` of a scenario with a horizon (issue 33): the terminal shows the ways to pay and
the months; --json carries the same horizon the page's download does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from tests.ui import conftest as ui_conftest

ROOT = Path(__file__).resolve().parents[2]
BRIEF = ROOT / "docs" / "scenarios" / "budget-24-months.yaml"
runner = CliRunner()
store_url = ui_conftest.store_url  # the fixture: a demo store per test, announced as CAPPLAN_DB


@pytest.mark.slow
def test_the_plan_command_prints_and_exports_the_budget_over_time(store_url: str) -> None:
    shown = runner.invoke(app, ["plan", str(BRIEF), "--db", store_url], env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    text = shown.output
    assert "Over 24 months, " in text and "is the cheapest way to serve" in text
    assert "Ways to pay" in text and "Month by month" in text
    for way in ("on-demand", "commitments", "owning", "hosted API"):
        assert way in text
    as_json = runner.invoke(app, ["plan", str(BRIEF), "--db", store_url, "--json"])
    assert as_json.exit_code == 0, as_json.output
    horizon = json.loads(as_json.output)["horizon"]
    assert [p["name"] for p in horizon["paths"]] == ["on-demand", "commitments", "owning",
                                                     "hosted API"]  # fmt: skip
    assert len(horizon["months"]) == 24
    assert horizon["months"][0]["demand"] == pytest.approx(10.0)
    assert horizon["months"][-1]["demand"] == pytest.approx(10.0 * 1.05**23)
    cheapest = horizon["cheapest"]
    totals = {p["name"]: p["total_usd"] for p in horizon["paths"]}
    assert cheapest["total_usd"] == min(totals.values()) == totals[cheapest["path"]]
    assert cheapest["p10_total_usd"] <= cheapest["total_usd"] <= cheapest["p90_total_usd"]
    assert any(c["basis"] == "cumulative cost" for c in horizon["crossovers"])
    lenses = [lens["name"] for lens in horizon["lenses"]]
    assert "owning as entered" in lenses
    assert any("InferenceX" in name for name in lenses)  # the shipped catalog's owning lenses
