"""Scenarios page through AppTest on a real SQLite demo store: empty state, compare two saved
scenarios side by side, rename (and a refused rename), delete with a confirm, and the plan
history's record and regenerate."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from db import scenarios
from db.engine import Engine, make_engine
from team.roles import SYSTEM
from tests.ui.conftest import APP, ROOT, RUN_TIMEOUT_S

SCENARIOS = ROOT / "docs" / "scenarios"


@pytest.fixture
def engine(store_url: str) -> Engine:
    return make_engine(store_url)


@pytest.fixture
def saved(engine: Engine) -> list[str]:
    """The two shipped scenarios saved in the store."""
    names = ["agent-platform", "seed-article-h100"]
    for name in names:
        scenarios.save_scenario(
            engine, name, (SCENARIOS / f"{name}.yaml").read_text("utf-8"), actor=SYSTEM
        )
    return names


def _page() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.switch_page("ui/scenarios.py").run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _frame(at: AppTest, column: str) -> pd.DataFrame:
    frames = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(frames) == 1, f"expected one table with column {column!r}, found {len(frames)}"
    frame: pd.DataFrame = frames[0]
    return frame


def test_empty_store_says_how_to_save_a_scenario(store_url: str) -> None:
    at = _page()
    assert at.title[0].value == "Scenarios"
    assert "No saved scenarios yet" in at.info[0].value
    assert "Save scenario as" in at.info[0].value


def test_comparing_two_scenarios_shows_both_columns_and_one_chart(saved: list[str]) -> None:
    at = _page()
    assert "Pick two or more" in " ".join(i.value for i in at.info)
    at.multiselect(key="compare_names").set_value(saved).run()
    _ok(at)
    assert not at.error, [e.value for e in at.error]
    diff = _frame(at, "input").set_index("input")
    assert list(diff.columns) == saved
    # Inputs by their plain names, never the scenario's dotted keys.
    assert diff.loc["Peak requests per second (req/s)", "seed-article-h100"] == "100.0"
    assert not [name for name in diff.index if "." in name or "_" in name], list(diff.index)
    assert diff.loc["Prompt length, ISL (tokens)", "agent-platform"] == "1024"
    assert "Model" not in diff.index  # the same in both: not listed
    assert not [name for name in diff.index if name.startswith("Price of H100")]
    results = _frame(at, "binding_constraint").set_index("scenario")
    assert list(results.index) == saved
    agent = results.loc["agent-platform"]
    assert agent["recommended"] == "TensorRT-LLM TP2 on H200 SXM 141GB (FP8)"
    assert (agent["nodes"], agent["usd_per_month"]) == (2, pytest.approx(40880.0))
    # The seed article's 3000/500 is read from the serving model (issue 21): vLLM on H100.
    seed = results.loc["seed-article-h100"]
    assert seed["nodes"] >= 1 and not math.isnan(seed["usd_per_month"])
    assert str(seed["recommended"]).startswith("vLLM TP")
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    figure = json.loads(charts[0].proto.spec)
    assert [trace["name"] for trace in figure["data"]] == saved
    assert figure["layout"]["barmode"] == "group"


def test_rename_works_and_a_taken_name_is_refused_in_place(
    engine: Engine, saved: list[str]
) -> None:
    at = _page()
    at.selectbox(key="manage_name").set_value("agent-platform")
    at.text_input(key="manage_new_name").set_value("seed-article-h100")
    at.button(key="rename").click().run()
    _ok(at)
    assert "a scenario named 'seed-article-h100' already exists" in at.error[0].value
    at.text_input(key="manage_new_name").set_value("agents-q3")
    at.button(key="rename").click().run()
    _ok(at)
    assert [r.name for r in scenarios.list_scenarios(engine)] == [
        "agents-q3",
        "seed-article-h100",
    ]
    assert at.success[0].value == "renamed 'agent-platform' to 'agents-q3'"


def test_delete_needs_the_confirm_box(engine: Engine, saved: list[str]) -> None:
    at = _page()
    at.selectbox(key="manage_name").set_value("seed-article-h100").run()
    assert at.button(key="delete").disabled
    at.checkbox(key="delete_confirm").check().run()
    at.button(key="delete").click().run()
    _ok(at)
    assert [r.name for r in scenarios.list_scenarios(engine)] == ["agent-platform"]


def test_record_a_plan_then_regenerate_it_matches(engine: Engine, saved: list[str]) -> None:
    at = _page()
    at.selectbox(key="history_name").set_value("agent-platform").run()
    assert "No plan of 'agent-platform' recorded yet" in " ".join(i.value for i in at.info)
    at.button(key="record_now").click().run()
    _ok(at)
    history = _frame(at, "catalog_version")
    assert len(history) == 1
    assert history.loc[0, "usd_per_month"] == pytest.approx(40880.0)
    assert history.loc[0, "nodes"] == 2
    (record,) = scenarios.plan_history(engine, "agent-platform")
    assert history.loc[0, "run_ids"] == ", ".join(map(str, record.run_ids))
    at.button(key="regenerate").click().run()
    _ok(at)
    assert "Regenerated plan matches the record." in [s.value for s in at.success]
    assert _frame(at, "regenerated")["matches"].all()
    at.button(key="record_report_build").click().run()
    _ok(at)
    labels = [getattr(b, "label", None) for b in at.get("download_button")]
    assert f"Download the report of plan record {record.record_id}" in labels


def test_a_saved_scenario_is_edited_in_place_and_opened_on_the_plan_page(
    saved: list[str], engine: Engine
) -> None:
    at = _page()
    at.selectbox(key="edit_name").set_value("agent-platform").run()
    _ok(at)
    key = "edit_agent-platform"
    at.number_input(key=f"{key}_demand").set_value(123.0)
    at.number_input(key=f"{key}_sla_ttft_p99_ms").set_value(750.0)
    at.number_input(key=f"{key}_budget").set_value(90_000.0)
    at.text_input(key=f"{key}_what_if").set_value("1, 3")
    at.button[[b.label for b in at.button].index("Save changes")].click().run()
    _ok(at)
    assert any("saved the changes to 'agent-platform'" in s.value for s in at.success)
    stored = scenarios.get_scenario(engine, "agent-platform").yaml_text
    assert "peak_concurrent_streams: 123" in stored or "123.0" in stored, stored
    assert "ttft_p99_ms: 750.0" in stored and "monthly_usd: 90000.0" in stored
    assert "- 3.0" in stored
    # A bad multiple is said, and nothing is saved.
    at.text_input(key=f"{key}_what_if").set_value("1, lots")
    at.button[[b.label for b in at.button].index("Save changes")].click().run()
    assert any("'lots'" in e.value for e in at.error)
    assert scenarios.get_scenario(engine, "agent-platform").yaml_text == stored
    # Every input as YAML.
    (yaml_box,) = [t for t in at.text_area if t.label == "Scenario YAML"]
    assert "- 3.0" in yaml_box.value  # the saved changes, not the YAML first shown
    yaml_box.set_value(yaml_box.value.replace("ttft_p99_ms: 750.0", "ttft_p99_ms: 640.0"))
    at.button(key="edit_yaml_save_agent-platform").click().run()
    _ok(at)
    assert "ttft_p99_ms: 640.0" in scenarios.get_scenario(engine, "agent-platform").yaml_text
    assert at.number_input(key=f"{key}_sla_ttft_p99_ms").value == 640.0  # the form follows
    # Open on the Plan page: the inputs are the edited scenario's.
    at.button(key="edit_open_agent-platform").click().run()
    _ok(at)
    assert at.number_input(key="plan_sla_ttft_p99_ms").value == 640.0
    assert at.text_input(key="plan_name").value == "agent-platform"
