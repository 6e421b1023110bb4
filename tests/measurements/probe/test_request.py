"""ProbeRequest: one default per field, errors that name the field and the value (secrets
masked), and the sweep config and launch spec it turns into."""

from __future__ import annotations

from pathlib import Path

import pytest

from errors import InputError
from measurements.probe.defaults import PROBE_DEFAULTS
from measurements.probe.request import ProbeRequest

KEY = "sk-live-0123456789abcdef"
REQUIRED: dict[str, object] = {
    "model": "m",
    "isl_tokens": 64,
    "osl_tokens": 16,
    "out_path": Path("run.json"),
}
ATTACHED: dict[str, object] = {
    **REQUIRED,
    "base_url": "http://127.0.0.1:8000",
    "concurrencies": "1,2",
}


def test_every_field_says_what_it_is() -> None:
    missing = [name for name, info in ProbeRequest.model_fields.items() if not info.description]
    assert missing == []


def test_the_defaults_are_the_models_own() -> None:
    request = ProbeRequest.model_validate(ATTACHED)
    for name, info in ProbeRequest.model_fields.items():
        if not info.is_required() and name not in ATTACHED:
            assert getattr(request, name) == info.default == getattr(PROBE_DEFAULTS, name), name
    optional = {name for name, info in ProbeRequest.model_fields.items() if not info.is_required()}
    assert optional == set(PROBE_DEFAULTS.__dataclass_fields__)  # one default for each, no more


def test_a_request_becomes_the_sweep_it_asks_for() -> None:
    request = ProbeRequest.model_validate(
        {
            **REQUIRED,
            "base_url": " http://10.0.0.5:8000/ ",
            "rates_req_s": "0.5, 1,2",
            "arrival": "gamma",
            "burstiness": 0.5,
            "length_distribution": "normal",
            "isl_stddev_tokens": 8,
            "stop_at_saturation": False,
            "min_gain_pct": 12.5,
        }
    )
    config = request.probe_config()
    assert config.base_url == "http://10.0.0.5:8000" and config.rates == (0.5, 1.0, 2.0)
    assert config.concurrencies == () and not config.closed_loop
    assert (config.arrival, config.burstiness) == ("gamma", 0.5)
    assert config.workload.isl == 64 and config.workload.osl == 16
    assert config.workload.isl_distribution == config.workload.osl_distribution == "normal"
    assert config.workload.isl_stddev == 8
    assert not config.saturation.enabled and config.saturation.min_gain_pct == 12.5
    assert request.launch_spec() is None


def test_a_launch_command_gives_the_server_to_start_and_the_url_to_sweep() -> None:
    request = ProbeRequest.model_validate(
        {
            **REQUIRED,
            "engine": "sglang",
            "launch_command": "HF_TOKEN=x vllm serve m --port 8123",
            "concurrencies": [1, 4],
        }
    )
    launch = request.launch_spec()
    assert launch is not None and launch.engine == "other" and launch.port == 8123
    assert launch.env == {"HF_TOKEN": "x"} and launch.command == (
        "vllm",
        "serve",
        "m",
        "--port",
        "8123",
    )
    assert request.probe_config().base_url == "http://127.0.0.1:8123"


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"base_url": None}, "base_url", "base URL of a running server"),
        ({"base_url": "  "}, "base_url", "base URL of a running server"),
        ({"base_url": "10.0.0.5:8000"}, "base_url", "must start with http://"),
        ({"launch_command": "vllm serve m --port 8000"}, "launch_command", "not both"),
        ({"model": ""}, "model", "served model name"),
        ({"isl_tokens": 0}, "isl_tokens", "greater than or equal to 1"),
        ({"concurrencies": "1,x"}, "concurrencies", "comma-separated whole numbers"),
        ({"concurrencies": "1.5"}, "concurrencies", "comma-separated whole numbers"),
        ({"concurrencies": "4,2"}, "concurrencies", "strictly increasing"),
        ({"concurrencies": "0,1"}, "concurrencies", "greater than or equal to 1"),
        ({"concurrencies": ""}, "concurrencies", "concurrency levels"),
        ({"rates_req_s": "1,2"}, "rates_req_s", "not both"),
        ({"concurrencies": None, "rates_req_s": "1,-2"}, "rates_req_s", "greater than 0"),
        ({"arrival": "bursty"}, "arrival", "'poisson', 'gamma' or 'constant'"),
        ({"burstiness": 0.5}, "burstiness", "gamma arrivals only"),
        ({"requests_per_level": 8, "duration_per_level_s": 30}, "duration_per_level_s", "not both"),
        ({"endpoint": "responses"}, "endpoint", "'completions' or 'chat'"),
        ({"length_distribution": "file"}, "length_distribution", "'fixed', 'normal'"),
        ({"ttft_blowup_factor": 1.0}, "ttft_blowup_factor", "greater than 1"),
        ({"gpu_count": 0}, "gpu_count", "greater than or equal to 1"),
        ({"surprise": 1}, "surprise", "Extra inputs are not permitted"),
    ],
)
def test_a_bad_value_is_refused_naming_its_field(
    changes: dict[str, object], field: str, words: str
) -> None:
    with pytest.raises(InputError) as info:
        ProbeRequest.model_validate({**ATTACHED, **changes})
    assert info.value.field == field, str(info.value)
    assert words in info.value.message
    assert "--" not in info.value.message.replace("--port", "")  # words, not CLI flags


def test_the_refused_value_is_quoted() -> None:
    with pytest.raises(InputError) as info:
        ProbeRequest.model_validate({**ATTACHED, "concurrencies": "1,x"})
    assert info.value.value == "1,x" and "(got '1,x')" in str(info.value)


@pytest.mark.parametrize(
    "changes",
    [
        {"api_key_env": KEY},
        {"base_url": f"ftp://user:{KEY}@h"},
        {"base_url": None, "launch_command": f"vllm serve m --api-key {KEY}"},
        {"base_url": None, "launch_command": f"vllm serve m --port 99999 --api-key {KEY}"},
    ],
)
def test_a_secret_in_a_refused_value_is_never_echoed(changes: dict[str, object]) -> None:
    with pytest.raises(InputError) as info:
        ProbeRequest.model_validate({**ATTACHED, **changes})
    assert KEY not in str(info.value) and KEY not in repr(info.value.value)
    assert info.value.field in {"api_key_env", "base_url", "launch_command"}
