"""The per-session upload budget (ui/upload_budget.py) on the pages through AppTest: the file
that passes it is refused with a message naming it and the budget, whichever uploader holds
the others; the server's own check is in tests/ui/test_doors.py."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from db import run_lists
from db.engine import make_engine
from planner.physics.catalog import CONFIG_DIR
from tests.ui.conftest import APP, FIXTURES, RUN_TIMEOUT_S, shown
from ui.upload_budget import DEFAULT_SESSION_BUDGET_MB, server_refusal, session_budget_mb

C8 = (FIXTURES / "vllm-cpu-real" / "c8.json").read_bytes()  # 3.7 KB
BUDGET_MB = "0.01"  # 10,485 bytes: two copies of c8.json fit, a third does not


def _runs_page() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.switch_page("ui/runs.py").run()
    at.selectbox(key="fact_GPU").set_value("H100-SXM-80GB")
    at.number_input(key="fact_tp").set_value(1)
    return at


def test_the_file_that_passes_the_session_budget_is_refused_by_name(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPPLAN_MAX_SESSION_UPLOAD_MB", BUDGET_MB)
    engine = make_engine(store_url)
    before = run_lists.count_runs(engine)
    at = _runs_page()
    at.file_uploader(key="upload_files").set_value(
        [("a.json", C8, "application/json"), ("b.json", C8, "application/json")]
    )
    # The third file sits in the other uploader: the budget counts them all.
    at.file_uploader(key="upload_folder").set_value([("run/c.json", C8, "application/json")])
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1, errors
    assert errors[0] == (
        "run/c.json: not read: 3.6 KiB more would pass this session's 0.01 MiB upload budget "
        "(CAPPLAN_MAX_SESSION_UPLOAD_MB; 7.2 KiB held by the uploaders already); remove files "
        "from the uploaders, or import in parts"
    )
    assert run_lists.count_runs(engine) == before + 1  # a.json; b.json is the same run
    engine.dispose()


def test_the_models_and_plan_pages_refuse_a_file_past_the_budget(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPPLAN_MAX_SESSION_UPLOAD_MB", "0.0005")  # 524 bytes
    config = (CONFIG_DIR / "Qwen--Qwen3-8B_config.json").read_bytes()
    scenario = (FIXTURES / "scenarios" / "agent-brief.yaml").read_bytes()
    assert min(len(config), len(scenario)) > 524
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.file_uploader(key="plan_yaml").set_value([("brief.yaml", scenario, "text/yaml")]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(shown(e.value).startswith("brief.yaml: not read:") for e in at.error), at.error
    at.switch_page("ui/models.py").run()
    at.file_uploader(key="model_files").set_value([("config.json", config, "application/json")])
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(shown(e.value).startswith("config.json: not read:") for e in at.error), at.error
    assert not at.success


def test_a_bad_budget_setting_is_reported_and_nothing_is_read(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPPLAN_MAX_SESSION_UPLOAD_MB", "lots")
    at = _runs_page()
    at.file_uploader(key="upload_files").set_value([("a.json", C8, "application/json")])
    at.button[0].click().run()
    assert any("CAPPLAN_MAX_SESSION_UPLOAD_MB" in shown(e.value) for e in at.error), at.error


def test_the_server_refuses_past_the_budget_and_before_sign_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CAPPLAN_MAX_SESSION_UPLOAD_MB", raising=False)
    assert session_budget_mb() == DEFAULT_SESSION_BUDGET_MB
    budget = int(DEFAULT_SESSION_BUDGET_MB * 1024 * 1024)
    assert server_refusal(budget - 1, signed_in=True) is None
    assert "200 MiB budget" in (server_refusal(budget, signed_in=True) or "")
    assert "sign in first" in (server_refusal(0, signed_in=False) or "")
