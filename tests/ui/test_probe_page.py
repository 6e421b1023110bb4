"""The Probe page end to end: a sweep of the simulator from the app, live table, stored run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import workflows.probe
from db import run_lists, run_reads
from db.engine import make_engine
from errors import InputError
from measurements.probe.outbound import Outbound
from measurements.probe.request import ProbeRequest
from measurements.sim.server import start_in_thread
from tests.ui.conftest import APP, RUN_TIMEOUT_S
from workflows.probe import ProbeResult


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


def test_the_form_builds_one_probe_request_from_its_widgets(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[ProbeRequest] = []
    pinned: list[object] = []

    def stand_in(request: ProbeRequest, *, outbound: Outbound, **_: object) -> ProbeResult:
        built.append(request)
        pinned.append(outbound.target.addresses)
        raise InputError("stopped by the test")

    monkeypatch.setattr(workflows.probe, "probe_endpoint", stand_in)
    monkeypatch.setenv("CAPPLAN_PROBE_ALLOWED_HOSTS", "10.0.0.0/24:8000")
    monkeypatch.setenv("CAPPLAN_PROBE_KEY_VARS", "MY_KEY")
    at = _probe_page(tmp_path, monkeypatch)
    at.text_input(key="probe_base_url").set_value(" http://10.0.0.5:8000 ")
    at.text_input(key="probe_model").set_value(" m ")
    at.text_input(key="probe_levels").set_value("1,4")
    at.text_input(key="probe_api_key_env").set_value("MY_KEY")
    at.selectbox(key="probe_endpoint").set_value("chat")
    at.selectbox(key="fact_GPU").set_value("H100-SXM-80GB")
    at.number_input(key="fact_tp").set_value(2)
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == ["stopped by the test"]
    (request,) = built
    assert pinned == [("10.0.0.5",)]  # the sweep connects to the address that was checked
    assert request.out_path.parent == Path("data") / "probe-runs"
    assert not request.engine_version and not request.precision  # blank facts: not stated
    assert request == ProbeRequest(
        base_url="http://10.0.0.5:8000",
        model="m",
        isl_tokens=1024,
        osl_tokens=256,
        concurrencies=(1, 4),
        api_key_env="MY_KEY",
        endpoint="chat",
        engine="other",
        gpu="H100-SXM-80GB",
        tp=2,
        check_capabilities=False,
        out_path=request.out_path,
        engine_version=request.engine_version,
        precision=request.precision,
    )


def test_a_bad_widget_value_is_an_error_naming_the_field_in_words(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _probe_page(tmp_path, monkeypatch)
    at.text_input(key="probe_model").set_value("m")
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    (error,) = at.error
    assert "base URL" in error.value and "--" not in error.value
    at.text_input(key="probe_base_url").set_value("http://127.0.0.1:9")
    at.text_input(key="probe_levels").set_value("1,x")
    at.button[0].click().run()
    (error,) = at.error
    assert "concurrencies" in error.value and "'1,x'" in error.value and "--" not in error.value
