"""One plan behind every door (issue 32): for the same scenario and store, the Plan page, `capplan
plan` and `capplan report` hand over byte-identical plans, because all three render one
workflows.session.PlanningSession."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from planner.analysis import what_if
from planner.analysis.capacity import make_plan
from planner.inputs.scenario import load_scenario
from tests.ui import conftest as ui_conftest
from ui import resources as res
from workflows import session as session_module

ROOT = Path(__file__).resolve().parents[2]
BRIEF = ROOT / "docs" / "scenarios" / "finance-brief-chat.yaml"
runner = CliRunner()
store_url = ui_conftest.store_url  # the fixture: a demo store per test, announced as CAPPLAN_DB


def _cli(*args: str) -> None:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output


def _without_time(document: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in document.items() if k != "generated_at"}


@pytest.mark.slow
def test_the_page_the_plan_command_and_the_report_hand_over_the_same_plan(
    store_url: str, tmp_path: Path
) -> None:
    scenario_file = tmp_path / "brief.yaml"
    scenario_file.write_text(BRIEF.read_text(encoding="utf-8"), encoding="utf-8")
    scenario = load_scenario(scenario_file)
    version = res.store_version(store_url)
    # The page: the files its buttons give (the same session the page drew, kept in the app's
    # cache), with the sensitivity it computes when shown.
    later = res.later_for(scenario, store_url, version, with_sensitivity=True)
    page = {suffix: res.plan_file(scenario, store_url, version, suffix, later) for suffix in
            (".json", ".csv", ".xlsx")}  # fmt: skip
    page_report = json.loads(res.report_bytes(scenario, store_url, version, "json"))
    # The CLI, in this process but through its own session over the same store.
    for suffix in (".json", ".csv"):
        target = tmp_path / f"cli{suffix}"
        _cli("plan", str(scenario_file), "--db", store_url, "--sensitivity", "--export",
             str(target))  # fmt: skip
        assert target.read_bytes() == page[suffix], suffix
    report_file = tmp_path / "report.json"
    _cli("report", str(scenario_file), "--db", store_url, "--format", "json", "--out",
         str(report_file))  # fmt: skip
    cli_report = json.loads(report_file.read_text(encoding="utf-8"))
    assert _without_time(cli_report) == _without_time(page_report)
    # The report's plan is the plan document's, key for key.
    document = json.loads(page[".json"])
    assert cli_report["plan"] == {k: v for k, v in document.items() if k in cli_report["plan"]}
    assert cli_report["ranges"] == document["ranges"] is not None
    assert cli_report["sensitivity"] == document["sensitivity"] is not None


@pytest.mark.slow
def test_a_plan_command_exports_what_if_rows_it_made_once(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plan --export x.xlsx` used to re-plan the what-if rows for the workbook after the
    terminal had them; a session makes them once."""
    calls: list[float] = []
    real = what_if.replan_at_demand

    def counted(plan: object, factor: float) -> object:
        calls.append(factor)
        return real(plan, factor)  # type: ignore[arg-type]

    monkeypatch.setattr(what_if, "replan_at_demand", counted)
    _cli("plan", str(BRIEF), "--db", store_url, "--export", str(tmp_path / "plan.xlsx"))
    multiples = [m for m in load_scenario(BRIEF).what_if.demand_multipliers if m != 1.0]
    assert sorted(calls) == sorted(multiples)


def test_the_session_computes_each_stage_once(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from db.engine import make_engine

    made: list[object] = []
    real = make_plan

    def counted(*args: object, **kwargs: object) -> object:
        made.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(session_module, "make_plan", counted)
    planning = session_module.PlanningSession.from_store(
        make_engine(store_url), load_scenario(BRIEF), samples=40
    )
    plan = planning.plan
    ranges = planning.ranges
    rows = planning.what_if()
    planning.document(with_sensitivity=False)
    planning.export(".xlsx", with_sensitivity=False)
    renamed = planning.renamed(plan.scenario.model_copy(update={"name": "other"}))
    assert renamed.plan.scenario.name == "other" and plan.scenario.name != "other"
    assert renamed.ranges is ranges and renamed.what_if() is rows
    assert len(made) == 1
