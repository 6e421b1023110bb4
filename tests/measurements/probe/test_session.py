"""A probe session end to end against the simulated engine: attach or launch, facts, sweep."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import pytest

from errors import InputError
from measurements.probe.session import run_session, session_plan_from_flags
from measurements.run_file import read_run_file
from measurements.sim.server import start_in_thread
from tests.ports import free_port


def _flags(tmp_path: Path, **extra: object) -> dict[str, object]:
    return {
        "model": "sim-tiny",
        "isl": 64,
        "osl": 16,
        "concurrency": "1,4",
        "requests_per_level": 12,
        "engine": "vllm",
        "gpu": "H100-SXM-80GB",
        "tp": 1,
        "out": tmp_path / "run.json",
        **extra,
    }


def test_attached_session_labels_a_simulated_engine_and_keeps_the_stated_facts(
    tmp_path: Path,
) -> None:
    base_url, stop = start_in_thread("tiny-fast")
    try:
        plan = session_plan_from_flags(_flags(tmp_path, base_url=base_url))
        outcome = asyncio.run(run_session(plan))
    finally:
        stop()
    run = read_run_file(tmp_path / "run.json")
    assert outcome.complete and run == outcome.run
    assert [level.load_value for level in run.levels] == [1, 4]
    assert "SIMULATED" in (run.label or "")
    assert run.deployment.engine_args["simulated"] == "true"
    assert run.deployment.gpu == "H100-SXM-80GB" and run.deployment.tp == 1
    assert run.capabilities.structured_output.status == "supported"
    assert run.environment.client == "capplan probe"


def test_launched_session_times_the_cold_start_and_stops_the_server(tmp_path: Path) -> None:
    port = free_port()
    command = f"{sys.executable} -m cli sim-server --port {port} --profile tiny-fast"
    plan = session_plan_from_flags(
        _flags(tmp_path, launch=command, engine="other", check_capabilities=False)
    )
    outcome = asyncio.run(run_session(plan))
    assert outcome.complete
    assert outcome.run.startup.cold_start_s is not None and outcome.run.startup.cold_start_s > 0
    assert outcome.run.deployment.launch_command is not None
    assert "sim-server" in outcome.run.deployment.launch_command
    with socket.socket() as sock:  # the server is gone: its port is free again
        sock.bind(("127.0.0.1", port))


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({}, "--base-url"),
        ({"base_url": "http://127.0.0.1:1", "launch": "vllm serve m --port 8000"}, "--launch"),
        ({"launch": "vllm serve m"}, "--launch"),
        ({"base_url": "http://127.0.0.1:1", "concurrency": "1,x"}, "--concurrency"),
    ],
)
def test_bad_flags_name_the_flag(tmp_path: Path, extra: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as info:
        session_plan_from_flags(_flags(tmp_path, **extra))
    assert field in str(info.value)


def test_a_model_the_server_does_not_serve_is_named_with_the_ones_it_does(tmp_path: Path) -> None:
    base_url, stop = start_in_thread("tiny-fast")
    try:
        plan = session_plan_from_flags(_flags(tmp_path, base_url=base_url, model="nope"))
        with pytest.raises(InputError) as info:
            asyncio.run(run_session(plan))
    finally:
        stop()
    assert "sim-tiny" in str(info.value) and "--model" in str(info.value)
    assert not (tmp_path / "run.json").exists()


def test_an_unset_api_key_variable_stops_the_session_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAPPLAN_TEST_UNSET_KEY", raising=False)
    # Nothing listens on this port: had a request gone out, the error would be a connection one.
    base_url = f"http://127.0.0.1:{free_port()}"
    flags = _flags(tmp_path, base_url=base_url, api_key_env="CAPPLAN_TEST_UNSET_KEY")
    with pytest.raises(InputError) as info:
        asyncio.run(run_session(session_plan_from_flags(flags)))
    assert "api_key_env" in str(info.value) and "not set" in str(info.value)
    assert not (tmp_path / "run.json").exists()
