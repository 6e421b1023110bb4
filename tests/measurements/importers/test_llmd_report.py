"""llm-d-benchmark benchmark report importer: golden numbers are typed from the upstream example
(tests/fixtures/llm-d-benchmark-report/SOURCES.md), in the file's own units (seconds)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from errors import InputError
from measurements.importers import decode, llmd_report
from measurements.importers.common import NO_OVERRIDES, DeploymentOverrides
from measurements.run_file import Level, LoadKind, Origin, Provenance, RunFile, Source

FIXTURE = (
    Path(__file__).parents[2] / "fixtures" / "llm-d-benchmark-report" / "br_v0_2_1_example.yaml"
)
NAME = "br_v0_2_1_example.yaml"


def load() -> Any:
    return yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))


def parse_dict(doc: object, overrides: DeploymentOverrides = NO_OVERRIDES) -> RunFile:
    data = json.dumps(doc).encode()
    (run,) = llmd_report.parse("report.json", doc, data, overrides, Provenance.IMPORTED)
    return run


def parse_fixture(overrides: DeploymentOverrides = NO_OVERRIDES) -> RunFile:
    data = FIXTURE.read_bytes()
    doc = decode(NAME, data)
    (run,) = llmd_report.parse(NAME, doc, data, overrides, Provenance.IMPORTED)
    return run


def only_level(doc: object) -> Level:
    (level,) = parse_dict(doc).levels
    return level


def test_sniff_yaml_text_and_json_dict() -> None:
    data = FIXTURE.read_bytes()
    doc = decode(NAME, data)
    assert isinstance(doc, str)  # decode hands YAML over as text
    assert llmd_report.sniff(NAME, doc) == "llm-d-benchmark benchmark report v0.2.1 (YAML)"
    assert llmd_report.sniff("x.json", load()) == "llm-d-benchmark benchmark report v0.2.1 (JSON)"
    renamed = llmd_report.sniff("report.txt", doc)  # content check, not the name
    assert renamed == "llm-d-benchmark benchmark report v0.2.1 (YAML)"


@pytest.mark.parametrize(
    "doc",
    [
        {"version": "0.1", "results": {"request_performance": {}}, "scenario": {}},
        {"version": "0.2.1", "results": {}, "scenario": {}},
        {"version": "0.2.1", "results": {"request_performance": {}}},
        [1, 2],
        "name,value\n1,2\n",
        "results: [\nscenario: version: {",  # looks like the report, is not YAML
    ],
)
def test_sniff_rejects_other_documents(doc: object) -> None:
    assert llmd_report.sniff("x.yaml", doc) is None


def test_deployment_workload_and_environment_from_the_report() -> None:
    run = parse_fixture()
    dep = run.deployment
    assert dep.engine == "vllm"  # stack tool llm-d (image llm-d-cuda) serves vLLM
    assert dep.engine_version == "ghcr.io/llm-d/llm-d-cuda:0.3.1"
    assert dep.model == "Qwen/Qwen3-0.6B"
    assert dep.gpu == "NVIDIA-H100-80GB-HBM3"
    assert (dep.gpu_count, dep.tp, dep.pp) == (8, 8, 1)
    assert (run.workload.isl, run.workload.osl) == (2148, 1000)
    assert (run.workload.isl_distribution, run.workload.osl_distribution) == ("fixed", "gaussian")
    assert run.source is Source.INFERENCE_PERF
    assert (run.environment.client, run.environment.client_version) == ("inference-perf", "0.3.0")
    assert run.started_at == datetime(2025, 11, 5, 18, 0, 42, tzinfo=UTC)
    assert run.label == "Baseline latency test for Qwen3-0.6B on inference-scheduling stack"
    assert run.origin_file == NAME


def test_level_load_counts_and_duration() -> None:
    (level,) = parse_fixture().levels
    assert level.load_kind is LoadKind.RATE
    assert level.load_value == 10.0  # rate_qps; concurrency is .inf (unbounded)
    assert level.load_stated
    assert (level.requests_sent, level.completed, level.failed) == (500, 500, 0)
    assert level.duration_s == pytest.approx(49.97206788184121)  # PT49.97206788184121S
    assert "stage 3" in (level.notes or "")


def test_latency_converted_from_seconds_to_ms() -> None:
    (level,) = parse_fixture().levels
    expected_s = {
        "mean_ttft_ms": 0.0368578234128654,
        "p50_ttft_ms": 0.03622930939309299,
        "p90_ttft_ms": 0.04262634576298297,
        "p95_ttft_ms": 0.045246614259667695,
        "p99_ttft_ms": 0.05029489721637218,
        "min_ttft_ms": 0.027276142966002226,
        "max_ttft_ms": 0.0574655020609498,
        "mean_tpot_ms": 0.0368578234128654,
        "mean_itl_ms": 0.0368578234128654,
        "mean_e2e_ms": 0.0368578234128654,
        "mean_e2e_per_token_ms": 0.0368578234128654,
    }
    for name, seconds in expected_s.items():
        assert level.value(name, Origin.REPORTED) == pytest.approx(seconds * 1000), name
    p99 = next(m for m in level.metrics if m.name == "p99_ttft_ms")
    assert p99.source_value == 0.05029489721637218
    assert p99.source_key == (
        "results.request_performance.aggregate.latency.time_to_first_token.p99"
    )


def test_throughput_means() -> None:
    (level,) = parse_fixture().levels
    for name in ("output_tok_s", "total_tok_s", "input_tok_s", "request_s"):
        assert level.value(name) == 2262.448, name


def test_json_dict_gives_the_same_numbers_as_yaml() -> None:
    from_yaml = parse_fixture().levels[0]
    from_json = only_level(json.loads(json.dumps(load())))
    assert from_json.metrics == from_yaml.metrics


def test_millisecond_units_are_kept() -> None:
    doc = load()
    ttft = doc["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]
    # The same statistics written in milliseconds (every one: a file's stats share a unit).
    seconds_p99 = ttft["p99"]
    ttft.update({k: v * 1000 for k, v in ttft.items() if isinstance(v, int | float)}, units="ms")
    assert only_level(doc).value("p99_ttft_ms") == pytest.approx(seconds_p99 * 1000)


def test_vllm_benchmark_itl_is_per_chunk() -> None:
    doc = load()
    doc["scenario"]["load"]["standardized"]["tool"] = "vllm-benchmark"
    run = parse_dict(doc)
    assert run.source is Source.VLLM_BENCH
    assert run.levels[0].value("mean_icl_ms") == pytest.approx(36.8578234128654)
    assert run.levels[0].value("mean_itl_ms") is None


def test_concurrency_level_when_no_rate() -> None:
    doc = load()
    standard = doc["scenario"]["load"]["standardized"]
    standard.update(concurrency=32, rate_qps=None)
    level = only_level(doc)
    assert (level.load_kind, level.load_value, level.load_stated) == (
        LoadKind.CONCURRENCY,
        32.0,
        True,
    )


def test_load_not_stated_uses_achieved_rate() -> None:
    doc = load()
    standard = doc["scenario"]["load"]["standardized"]
    del standard["rate_qps"]
    standard["concurrency"] = math.inf
    level = only_level(doc)
    assert level.load_kind is LoadKind.RATE
    assert level.load_value == 2262.448
    assert not level.load_stated


def test_engine_from_overrides_when_stack_has_none() -> None:
    doc = load()
    doc["scenario"]["stack"] = []
    with pytest.raises(InputError, match="engine"):
        parse_dict(doc)
    run = parse_dict(doc, DeploymentOverrides(engine="trtllm", model="m"))
    assert (run.deployment.engine, run.deployment.model) == ("tensorrt-llm", "m")


def test_override_wins_and_conflict_is_noted() -> None:
    run = parse_fixture(DeploymentOverrides(gpu="H100-SXM-80GB"))
    assert run.deployment.gpu == "H100-SXM-80GB"
    assert "gpu: file said NVIDIA-H100-80GB-HBM3" in (run.notes or "")


def _set(doc: Any, path: str, value: object) -> None:
    *parents, last = path.split(".")
    for key in parents:
        doc = doc[key]
    doc[last] = value


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (
            "results.request_performance.aggregate.latency.time_to_first_token.units",
            "fortnights",
            "time_to_first_token.units",
        ),
        (
            "results.request_performance.aggregate.latency.time_to_first_token.p99",
            "fast",
            "time_to_first_token.p99",
        ),
        (
            "results.request_performance.aggregate.throughput.request_rate.units",
            "tokens/s",
            "request_rate.units",
        ),
        ("results.request_performance.aggregate.requests.failures", 501, "requests.failures"),
        ("results.request_performance.aggregate.requests.total", -1, "requests.total"),
        ("scenario.load.standardized.rate_qps", 0, "rate_qps"),
        ("scenario.load.standardized.input_seq_len", 7, "input_seq_len"),
        ("run.time.duration", "49 seconds", "run.time.duration"),
        ("run.time.start", "yesterday", "run.time.start"),
        ("scenario.stack", {"a": 1}, "scenario.stack"),
        ("scenario.load", None, "scenario.load"),
    ],
)
def test_bad_values_name_file_and_field(path: str, value: object, field: str) -> None:
    doc = load()
    _set(doc, path, value)
    with pytest.raises(InputError) as info:
        parse_dict(doc)
    message = str(info.value)
    assert "report.json" in message
    assert field in message


def test_invalid_yaml_named_yaml_is_an_input_error() -> None:
    text = "version: 0.2.1\nresults: [\n"
    assert llmd_report.sniff("bad.yaml", text) is None
    with pytest.raises(InputError, match=r"bad\.yaml.*YAML"):
        llmd_report.parse("bad.yaml", text, text.encode(), NO_OVERRIDES, Provenance.IMPORTED)


def test_not_a_report_is_an_input_error() -> None:
    with pytest.raises(InputError, match="llm-d-benchmark"):
        parse_dict({"version": "0.2.1"})


def test_unmapped_latency_is_noted_and_unquoted_yaml_time_read() -> None:
    text = FIXTURE.read_text(encoding="utf-8").replace(
        "start: '2025-11-05T18:00:42Z'", "start: 2025-11-05T18:00:42Z"
    )
    text = text.replace("        request_latency:", "        queue_time:", 1)
    (run,) = llmd_report.parse(NAME, text, text.encode(), NO_OVERRIDES, Provenance.IMPORTED)
    assert run.started_at == datetime(2025, 11, 5, 18, 0, 42, tzinfo=UTC)
    assert "latency not mapped: queue_time" in (run.levels[0].notes or "")
    assert run.levels[0].value("mean_e2e_ms") is None
