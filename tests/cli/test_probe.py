"""`capplan probe` builds one ProbeRequest from its flags (each default the model's own) and
names its flags, not the request's fields, when something is refused."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import workflows.probe
from cli import app
from cli import probe as probe_cli
from errors import InputError
from measurements.probe.request import ProbeRequest
from workflows.probe import ProbeResult

runner = CliRunner()
NOT_FLAGS = {"--db", "--json"}


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[ProbeRequest]:
    requests: list[ProbeRequest] = []

    def stand_in(request: ProbeRequest, **_: object) -> ProbeResult:
        requests.append(request)
        raise InputError("stopped by the test")

    monkeypatch.setattr(workflows.probe, "probe_endpoint", stand_in)
    return requests


def _probe_params() -> dict[str, Any]:
    """The probe command's options by flag (typer's own click objects)."""
    probe = getattr(typer.main.get_command(app), "commands", {})["probe"]
    return {param.opts[0]: param for param in probe.params}


def test_every_request_field_has_a_flag_and_every_flag_a_field() -> None:
    fields = {field for field in probe_cli.FLAGS if field in ProbeRequest.model_fields}
    assert fields == set(ProbeRequest.model_fields)
    assert set(_probe_params()) - NOT_FLAGS == set(probe_cli.FLAGS.values())


def test_each_flag_default_is_the_request_default() -> None:
    params = _probe_params()
    for field, info in ProbeRequest.model_fields.items():
        param = params[probe_cli.FLAGS[field]]
        assert param.required == info.is_required(), field
        if field in ("concurrencies", "rates_req_s"):  # text flags: none given is no levels
            assert param.default is None and info.default == ()
        elif not info.is_required():
            assert param.default == info.default, field


def test_the_fewest_flags_build_the_request_with_its_defaults(
    built: list[ProbeRequest], tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    args = ["--model", "m", "--isl", "8", "--osl", "4", "--out", str(out)]
    result = runner.invoke(app, ["probe", *args, "--base-url", "http://h:1", "--concurrency", "1"])
    assert result.exit_code == 2 and "stopped by the test" in result.stderr
    expected = ProbeRequest(
        model="m",
        isl_tokens=8,
        osl_tokens=4,
        out_path=out,
        base_url="http://h:1",
        concurrencies=(1,),
    )
    assert built == [expected]


def test_every_flag_reaches_its_field(built: list[ProbeRequest], tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    args = (
        f"probe --model m --isl 8 --osl 4 --out {out} --engine tensorrt-llm "
        "--launch 'trtllm-serve m --port 8123' --rate 1,2.5 --arrival gamma --burstiness 0.5 "
        "--duration-per-level 30 --endpoint chat --length-distribution lognormal "
        "--isl-stddev 2 --osl-stddev 1 --shape agent-loop --no-ignore-eos "
        "--tokenizer /models/m --api-key-env MY_KEY --no-stop-at-saturation --min-gain-pct 7 "
        "--ttft-blowup 20 --no-check-capabilities --lora-adapter ad --engine-version 1.0 "
        "--precision fp8 --gpu H100-SXM-80GB --gpu-count 2 --tp 2 --pp 1"
    )
    result = runner.invoke(app, shlex.split(args))
    assert result.exit_code == 2, result.output
    assert built == [
        ProbeRequest(
            model="m",
            isl_tokens=8,
            osl_tokens=4,
            out_path=out,
            engine="tensorrt-llm",
            launch_command="trtllm-serve m --port 8123",
            rates_req_s=(1.0, 2.5),
            arrival="gamma",
            burstiness=0.5,
            duration_per_level_s=30,
            endpoint="chat",
            length_distribution="lognormal",
            isl_stddev_tokens=2,
            osl_stddev_tokens=1,
            shape="agent-loop",
            ignore_eos=False,
            tokenizer="/models/m",
            api_key_env="MY_KEY",
            stop_at_saturation=False,
            min_gain_pct=7,
            ttft_blowup_factor=20,
            check_capabilities=False,
            lora_adapter="ad",
            engine_version="1.0",
            precision="fp8",
            gpu="H100-SXM-80GB",
            gpu_count=2,
            tp=2,
            pp=1,
        )
    ]


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        ([], "--base-url"),
        (["--base-url", "http://127.0.0.1:1", "--launch", "vllm serve m --port 8000"], "--launch"),
        (["--launch", "vllm serve m"], "--launch"),
        (["--base-url", "http://127.0.0.1:1", "--concurrency", "1,x"], "--concurrency"),
        (["--base-url", "http://127.0.0.1:1", "--concurrency", "1", "--tp", "0"], "--tp"),
    ],
)
def test_a_refused_flag_is_named_as_typed(
    built: list[ProbeRequest], tmp_path: Path, extra: list[str], flag: str
) -> None:
    args = ["probe", "--model", "m", "--isl", "8", "--osl", "8", "--out", str(tmp_path / "r.json")]
    result = runner.invoke(app, [*args, *extra])
    assert result.exit_code == 2 and f"field '{flag}'" in result.stderr, result.stderr
    assert built == []  # refused before anything was started
