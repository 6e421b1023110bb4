"""The Probe page end to end: a sweep of the simulator from the app, live table, stored run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from db import run_lists, run_reads
from db.engine import make_engine
from measurements.sim_server import start_in_thread
from tests.ui.conftest import APP, RUN_TIMEOUT_S


@pytest.fixture
def sim_url() -> Iterator[str]:
    base_url, stop = start_in_thread("tiny-fast")
    yield base_url
    stop()


def _probe_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.chdir(tmp_path)  # run files go to ./data/probe-runs
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.switch_page("ui/probe.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_sweep_from_the_app_is_stored_with_every_level(
    store_url: str, sim_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = len(run_lists.list_runs(make_engine(store_url)))
    at = _probe_page(tmp_path, monkeypatch)
    at.text_input(key="probe_base_url").set_value(sim_url)
    at.text_input(key="probe_model").set_value("sim-tiny")
    at.number_input(key="probe_isl").set_value(64)
    at.number_input(key="probe_osl").set_value(16)
    at.text_input(key="probe_levels").set_value("1,4")
    at.number_input(key="probe_requests").set_value(8)
    at.selectbox(key="fact_Engine").set_value("vllm")
    at.selectbox(key="fact_GPU").set_value("H100-SXM-80GB")
    at.number_input(key="fact_tp").set_value(1)
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == []
    (done,) = at.success
    assert "Sweep complete" in done.value and "stored as run" in done.value
    runs = run_lists.list_runs(make_engine(store_url))
    assert len(runs) == before + 1
    stored = run_reads.get_run(make_engine(store_url), runs[-1].run_id).run
    assert [level.load_value for level in stored.levels] == [1, 4]
    assert all(level.completed == 8 and level.value("output_tok_s") for level in stored.levels)
    assert stored.deployment.gpu == "H100-SXM-80GB" and stored.deployment.model == "sim-tiny"
    assert list((tmp_path / "data" / "probe-runs").glob("probe-*.json"))


def test_an_unreachable_endpoint_is_an_error_in_place_and_stores_nothing(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = len(run_lists.list_runs(make_engine(store_url)))
    at = _probe_page(tmp_path, monkeypatch)
    at.text_input(key="probe_base_url").set_value("http://127.0.0.1:9")
    at.text_input(key="probe_model").set_value("nothing-here")
    at.text_input(key="probe_levels").set_value("1")
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.error and not at.success
    assert len(run_lists.list_runs(make_engine(store_url))) == before
