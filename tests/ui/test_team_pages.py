"""The team app in AppTest, signed in through Streamlit's [auth] test user with the operator's
[roles] mapping: each page offers a person only the controls their role may use, and what it
offers works (Runs, Prices, Plan, Scenarios, Models, Probe, Audit), on the backend under test."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from db import scenarios
from db.audit import audit_entries
from db.engine import make_engine
from db.prices import list_prices, replace_prices
from team.roles import Actor, Role
from tests.db.test_team_store import ADMIN, AGENT_YAML
from tests.ui.conftest import APP, RUN_TIMEOUT_S, shown
from tests.ui.test_sign_in import AUTH

ROLES = {"admins": ["ada@example.com"], "planners": ["pat@example.com"]}
ALICE = Actor("alice@example.com", Role.PLANNER, "test")


def _signed_in(email: str, page: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S)
    at.secrets["auth"] = AUTH
    at.secrets["roles"] = ROLES
    at.user = {"is_logged_in": True, "name": email.split("@", maxsplit=1)[0], "email": email}
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _captions(at: AppTest) -> str:
    return " | ".join(shown(c.value) for c in at.caption)


def _labels(at: AppTest) -> set[str]:
    return {b.label for b in at.button}


@pytest.fixture
def engine(store_url: str) -> Engine:
    return make_engine(store_url)


def test_a_viewer_is_offered_no_change_anywhere(store_url: str) -> None:
    runs = _signed_in("vic@example.com", "ui/runs.py")
    assert not runs.get("file_uploader")
    assert not [b for b in runs.button if b.label.startswith("Delete run")]
    assert "Your role (viewer) cannot import or probe runs" in _captions(runs)
    assert "Your role (viewer) cannot delete runs" in _captions(runs)
    assert "Role: viewer (the role of everyone the mapping does not name)" in _captions(runs)
    prices = _signed_in("vic@example.com", "ui/prices.py")
    assert not {"Save catalog", "Restore shipped catalog"} & _labels(prices)
    assert "cannot change or restore the price catalog" in _captions(prices)
    models = _signed_in("vic@example.com", "ui/models.py")
    assert not models.get("file_uploader") and "Remove" not in _labels(models)
    probe = _signed_in("vic@example.com", "ui/probe.py")
    assert "Run the sweep" not in [b.label for b in probe.get("form_submit_button")]
    audit = _signed_in("vic@example.com", "ui/audit.py")
    assert "Set the role" not in _labels(audit)
    assert "cannot manage roles" in _captions(audit)


def test_a_planner_uploads_but_deletes_no_run_and_edits_no_price(store_url: str) -> None:
    runs = _signed_in("pat@example.com", "ui/runs.py")
    assert len(runs.get("file_uploader")) == 2
    assert not [b for b in runs.button if b.label.startswith("Delete run")]
    assert "Your role (planner) cannot delete runs" in _captions(runs)
    prices = _signed_in("pat@example.com", "ui/prices.py")
    assert not prices.get("data_editor") or "Save catalog" not in _labels(prices)
    assert "Save catalog" not in _labels(prices)


def test_a_planner_changes_only_their_own_scenarios(store_url: str, engine: Engine) -> None:
    scenarios.save_scenario(engine, "alice-plan", "name: alice-plan\n", actor=ALICE)
    page = _signed_in("pat@example.com", "ui/scenarios.py")
    owners = page.dataframe[0].value
    assert owners.loc[owners["scenario"] == "alice-plan", "owner"].item() == "alice@example.com"
    page.selectbox(key="manage_name").set_value("alice-plan").run()
    assert not {"Rename", "Delete"} & _labels(page)
    assert "'alice-plan' is alice@example.com's: only its owner or an admin" in _captions(page)
    assert "Clone" in _labels(page)
    page.text_input(key="manage_new_name").set_value("pat-plan").run()
    page.button(key="clone").click().run()
    assert "cloned 'alice-plan' as 'pat-plan'" in [s.value for s in page.success]
    page.selectbox(key="manage_name").set_value("pat-plan").run()
    page.checkbox(key="delete_confirm").check().run()
    page.button(key="delete").click().run()
    assert any("deleted 'pat-plan' (in the trash" in s.value for s in page.success)
    assert [s.name for s in scenarios.list_scenarios(engine)] == ["alice-plan"]
    said = [(e.actor, e.kind, e.action, e.target) for e in audit_entries(engine)[:2]]
    assert said == [
        ("pat@example.com", "scenario", "deleted", "scenario 'pat-plan'"),
        ("pat@example.com", "scenario", "cloned", "scenario 'pat-plan'"),
    ]


def test_saving_over_anothers_scenario_asks_first_and_a_planner_is_refused(
    store_url: str, engine: Engine
) -> None:
    scenarios.save_scenario(engine, "alice-plan", "name: alice-plan\n", actor=ALICE)
    page = _signed_in("pat@example.com", "ui/plan.py")
    page.text_input(key="plan_name").set_value("alice-plan").run()
    page.button(key="plan_save").click().run()
    warned = " ".join(shown(w.value) for w in page.warning)
    assert "a scenario named 'alice-plan' already exists (alice@example.com's" in warned
    assert page.button(key="plan_save").label == "Replace scenario 'alice-plan'"
    page.button(key="plan_save").click().run()
    refused = " ".join(shown(e.value) for e in page.error)
    assert "'alice-plan' is alice@example.com's; only its owner or an admin" in refused
    assert scenarios.get_scenario(engine, "alice-plan").yaml_text == "name: alice-plan\n"


def test_an_admin_edits_prices_and_restores_the_catalog_with_an_undo(
    store_url: str, engine: Engine
) -> None:
    prices = _signed_in("ada@example.com", "ui/prices.py")
    assert {"Save catalog", "Restore shipped catalog"} <= _labels(prices)
    next(b for b in prices.button if b.label == "Restore shipped catalog").click().run()
    assert any("shipped catalog restored" in s.value for s in prices.success)
    change = audit_entries(engine)[0]
    assert (change.actor, change.kind, change.action) == ("ada@example.com", "prices", "restored")
    audit = _signed_in("ada@example.com", "ui/audit.py")
    audit.selectbox(key="audit_entry").set_value(change.entry_id).run()
    audit.button(key="audit_undo_prices").click().run()
    assert any("price catalog put back" in s.value for s in audit.success)
    assert audit_entries(engine)[0].action == "undone"
    audit.text_input(key="role_person").set_value("Vic@Example.com").run()
    audit.selectbox(key="role_choice").set_value("planner").run()
    audit.button(key="role_set").click().run()
    assert any("role of vic@example.com: planner" in s.value for s in audit.success)
    runs = _signed_in("vic@example.com", "ui/runs.py")
    assert len(runs.get("file_uploader")) == 2  # the stored role raised vic above the default


def test_a_recorded_plan_says_what_it_rested_on_and_what_moved_since(
    store_url: str, engine: Engine
) -> None:
    scenarios.save_scenario(engine, "agent-platform", AGENT_YAML, actor=ALICE)
    page = _signed_in("pat@example.com", "ui/scenarios.py")
    page.selectbox(key="history_name").set_value("agent-platform").run()
    page.button(key="record_now").click().run()
    assert not page.exception, [e.value for e in page.exception]
    assert "every one of them is as it was" in _captions(page)
    doubled = [replace(p, usd_per_gpu_hour=2 * p.usd_per_gpu_hour) for p in list_prices(engine)]
    replace_prices(engine, doubled, actor=ADMIN)
    page.run()
    moved = " ".join(shown(w.value) for w in page.warning)
    assert "Since then: price " in moved and "then, not in the catalog" in moved
