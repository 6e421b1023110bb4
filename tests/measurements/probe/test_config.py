"""ProbeConfig refuses what the probe could not run and derives the defaults it documents."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from measurements.probe.config import ProbeConfig
from measurements.probe.workloads import WorkloadConfig

WORKLOAD = WorkloadConfig(isl=128, osl=64)


def config(**fields: object) -> ProbeConfig:
    base: dict[str, object] = {"base_url": "http://127.0.0.1:8000", "model": "m"}
    base.setdefault("workload", WORKLOAD)
    if "rates" not in fields:
        base["concurrencies"] = (1, 2, 4)
    return ProbeConfig.model_validate({**base, **fields})


def test_default_requests_per_level_scale_with_the_load() -> None:
    probe = config(concurrencies=(1, 8, 64))
    assert [probe.requests_for(c) for c in probe.levels] == [32, 64, 512]
    assert config(requests_per_level=10).requests_for(64) == 10
    assert config(duration_per_level_s=30).requests_for(64) is None
    assert config(rates=(2.5,)).requests_for(2.5) == 32


@pytest.mark.parametrize(
    ("base_url", "endpoint", "url"),
    [
        ("http://h:8000", "completions", "http://h:8000/v1/completions"),
        ("http://h:8000/v1/", "chat", "http://h:8000/v1/chat/completions"),
        (" https://h/proxy ", "completions", "https://h/proxy/v1/completions"),
    ],
)
def test_endpoint_url(base_url: str, endpoint: str, url: str) -> None:
    assert config(base_url=base_url, endpoint=endpoint).url == url


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"rates": (1.0,), "concurrencies": (1,)}, "exactly one of"),
        ({"concurrencies": ()}, "exactly one of"),
        ({"concurrencies": (1, 4, 2)}, "strictly increasing"),
        ({"concurrencies": (0, 1)}, "greater than or equal to 1"),
        ({"requests_per_level": 10, "duration_per_level_s": 5}, "not both"),
        ({"burstiness": 0.5}, "arrival='gamma' only"),
        ({"api_key_env": "sk-live-1234"}, "NAME of an environment variable"),
        ({"base_url": "127.0.0.1:8000"}, "http:// or https://"),
        ({"ramp_fraction": 0.45, "drain_fraction": 0.45}, "leave a window"),
        ({"max_failure_rate": 1.5}, "less than or equal to 1"),
        ({"concurrency": 4}, "Extra inputs are not permitted"),
    ],
)
def test_bad_configs_are_refused_with_the_reason(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        config(**fields)


def test_gamma_arrivals_take_a_burstiness() -> None:
    probe = config(rates=(1.0, 2.0), arrival="gamma", burstiness=0.5)
    assert not probe.closed_loop and probe.levels == (1.0, 2.0)
