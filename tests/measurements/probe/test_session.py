"""A probe session end to end against the simulated engine: attach or launch, facts, sweep."""

from __future__ import annotations

import asyncio
import shlex
import socket
import sys
from pathlib import Path

import pytest

from errors import InputError
from measurements.probe.request import ProbeRequest
from measurements.probe.session import run_session
from measurements.run_file import read_run_file
from measurements.sim.server import start_in_thread
from tests.ports import free_port


def _request(tmp_path: Path, **extra: object) -> ProbeRequest:
    fields: dict[str, object] = {
        "model": "sim-tiny",
        "isl_tokens": 64,
        "osl_tokens": 16,
        "concurrencies": "1,4",
        "requests_per_level": 12,
        "engine": "vllm",
        "gpu": "H100-SXM-80GB",
        "tp": 1,
        "out_path": tmp_path / "run.json",
        **extra,
    }
    return ProbeRequest.model_validate(fields)


def test_attached_session_labels_a_simulated_engine_and_keeps_the_stated_facts(
    tmp_path: Path,
) -> None:
    base_url, stop = start_in_thread("tiny-fast")
    try:
        outcome = asyncio.run(run_session(_request(tmp_path, base_url=base_url)))
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
    request = _request(tmp_path, launch_command=command, engine="other", check_capabilities=False)
    outcome = asyncio.run(run_session(request))
    assert outcome.complete
    assert outcome.run.startup.cold_start_s is not None and outcome.run.startup.cold_start_s > 0
    assert outcome.run.deployment.launch_command is not None
    assert "sim-server" in outcome.run.deployment.launch_command
    with socket.socket() as sock:  # the server is gone: its port is free again
        sock.bind(("127.0.0.1", port))


def test_a_launched_servers_kv_cache_report_lands_in_the_start_up_facts(tmp_path: Path) -> None:
    # The server prints vLLM's start-up line (as a real vLLM CPU server did), then serves.
    port = free_port()
    line = "INFO [kv_cache_utils.py:2327] GPU KV cache size: 98,304 tokens"
    serve = (
        f"print({line!r}, flush=True); import runpy, sys; "
        "sys.argv = ['cli', 'sim-server', *sys.argv[1:]]; "
        "runpy.run_module('cli', run_name='__main__', alter_sys=True)"
    )
    argv = [sys.executable, "-c", serve, "--port", str(port), "--profile", "tiny-fast"]
    command = shlex.join(argv)
    request = _request(tmp_path, launch_command=command, engine="other", check_capabilities=False)
    outcome = asyncio.run(run_session(request))
    assert outcome.complete and outcome.run.startup.kv_cache_tokens == 98_304
    assert read_run_file(tmp_path / "run.json").startup.kv_cache_tokens == 98_304


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({}, "base_url"),
        (
            {"base_url": "http://127.0.0.1:1", "launch_command": "vllm serve m --port 8000"},
            "launch_command",
        ),
        ({"launch_command": "vllm serve m"}, "launch_command"),
        ({"base_url": "http://127.0.0.1:1", "concurrencies": "1,x"}, "concurrencies"),
    ],
)
def test_bad_requests_name_the_field(tmp_path: Path, extra: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as info:
        _request(tmp_path, **extra)
    assert info.value.field == field and field in str(info.value)


def test_a_model_the_server_does_not_serve_is_named_with_the_ones_it_does(tmp_path: Path) -> None:
    base_url, stop = start_in_thread("tiny-fast")
    try:
        request = _request(tmp_path, base_url=base_url, model="nope")
        with pytest.raises(InputError) as info:
            asyncio.run(run_session(request))
    finally:
        stop()
    assert "sim-tiny" in str(info.value) and info.value.field == "model"
    assert not (tmp_path / "run.json").exists()


def test_an_unset_api_key_variable_stops_the_session_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAPPLAN_TEST_UNSET_KEY", raising=False)
    # Nothing listens on this port: had a request gone out, the error would be a connection one.
    base_url = f"http://127.0.0.1:{free_port()}"
    request = _request(tmp_path, base_url=base_url, api_key_env="CAPPLAN_TEST_UNSET_KEY")
    with pytest.raises(InputError) as info:
        asyncio.run(run_session(request))
    assert "api_key_env" in str(info.value) and "not set" in str(info.value)
    assert not (tmp_path / "run.json").exists()
