"""guidellm importer: golden numbers are the ones guidellm wrote into the fixture files."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from errors import InputError
from measurements import importers
from measurements.importers import guidellm
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import LoadKind, Provenance, RunFile

FIXTURES = Path(__file__).parents[2] / "fixtures" / "guidellm"
V2 = FIXTURES / "llm-d-benchmark__guidellm_report_v2.json"
OLD_JSON = FIXTURES / "guidellm__benchmarks_stripped_v0.2-era.json"
OLD_YAML = FIXTURES / "guidellm__benchmarks_stripped_v0.2-era.yaml"
VLLM_FILE = FIXTURES.parent / "vllm-cpu-real" / "c8.json"
VLLM = DeploymentOverrides(engine="vllm")


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def parse_doc(
    doc: object, name: str = "benchmarks.json", overrides: DeploymentOverrides = VLLM
) -> RunFile:
    data = json.dumps(doc).encode()
    (run,) = guidellm.parse(name, doc, data, overrides, Provenance.IMPORTED)
    return run


def with_strategy(strategy: dict[str, Any]) -> dict[str, Any]:
    """The v2 fixture with its first benchmark's strategy replaced (one benchmark kept)."""
    doc = copy.deepcopy(load(V2))
    doc["benchmarks"] = doc["benchmarks"][:1]
    doc["benchmarks"][0]["config"]["strategy"] = strategy
    return doc


def test_v2_report_imports_both_benchmarks_with_the_numbers_guidellm_wrote() -> None:
    doc = load(V2)
    assert guidellm.sniff(V2.name, doc) == "guidellm report v2 (0.7+), JSON, 2 benchmarks"
    run = parse_doc(doc, V2.name)
    first, second = run.levels
    # benchmarks[i].config.strategy: {"type_": "constant", "rate": 2.0 / 4.0}
    assert [(lv.load_kind, lv.load_value) for lv in run.levels] == [
        (LoadKind.RATE, 2.0),
        (LoadKind.RATE, 4.0),
    ]
    # benchmarks[0].metrics.request_totals {successful 2, errored 0, incomplete 0, total 2}
    assert (first.requests_sent, first.completed, first.failed, first.incomplete) == (2, 2, 0, 0)
    assert first.duration_s == pytest.approx(5.01964807510376)  # benchmarks[0].duration
    # metrics.time_to_first_token_ms.successful: mean, median, percentiles.p99
    assert first.value("mean_ttft_ms") == pytest.approx(11.481165885925293)
    assert first.value("p50_ttft_ms") == pytest.approx(11.276006698608398)
    assert first.value("p99_ttft_ms") == pytest.approx(11.686325073242188)
    # metrics.inter_token_latency_ms.successful.mean is guidellm's (last - first) / (N - 1)
    assert first.value("mean_tpot_ms") == pytest.approx(1.1508464813232422)
    # metrics.request_latency.successful.mean is in seconds: 0.01978909969329834
    assert first.value("mean_e2e_ms") == pytest.approx(19.78909969329834)
    # metrics.time_per_output_token_ms.successful.mean (0.4+: e2e / N)
    assert first.value("mean_e2e_per_token_ms") == pytest.approx(2.4421364068984985)
    # metrics.{requests,output_tokens}_per_second.successful.mean
    assert first.value("request_s") == pytest.approx(0.39843430656414264)
    assert first.value("output_tok_s") == pytest.approx(3.1950675815128577)
    assert second.value("mean_ttft_ms") == pytest.approx(9.78386402130127)
    assert second.value("output_tok_s") == pytest.approx(6.377131566888984)
    assert run.deployment.model == "e2e-mock-model"  # config.backend.model
    assert run.environment.client_version == "0.8.0.dev18"  # metadata.guidellm_version
    assert run.started_at == datetime.fromtimestamp(1786678148.2526348, tz=UTC)


def test_each_metric_keeps_the_key_path_and_the_value_as_written() -> None:
    (level, _) = parse_doc(load(V2)).levels
    by_name = {m.name: m for m in level.metrics}
    e2e = by_name["p99_e2e_ms"]
    assert e2e.source_key == "metrics.request_latency.successful.percentiles.p99"
    assert e2e.source_value == pytest.approx(0.020308971405029297)
    assert e2e.value == pytest.approx(20.308971405029297)
    assert by_name["mean_tpot_ms"].source_key == "metrics.inter_token_latency_ms.successful.mean"


def test_v0_2_era_json_is_one_synchronous_level() -> None:
    doc = load(OLD_JSON)
    assert guidellm.sniff(OLD_JSON.name, doc) == (
        "guidellm <= v0.3 (benchmarks only), JSON, 1 benchmarks"
    )
    run = parse_doc(doc, OLD_JSON.name)
    (level,) = run.levels
    # args.strategy.type_ synchronous: one request in flight
    assert (level.load_kind, level.load_value) == (LoadKind.CONCURRENCY, 1.0)
    # request_totals {successful 46, errored 0, incomplete 1, total 47}
    assert (level.requests_sent, level.completed, level.failed, level.incomplete) == (47, 46, 0, 1)
    # prompt_token_count / output_token_count .successful.total_sum: 11827.0, 5888.0
    assert (level.input_tokens_total, level.output_tokens_total) == (11827, 5888)
    assert level.value("p99_ttft_ms") == pytest.approx(21.281957626342773)
    assert level.value("mean_tpot_ms") == pytest.approx(4.941609043733832)
    assert level.value("mean_e2e_ms") == pytest.approx(644.4743664368339)  # 0.6444743664368339 s
    assert level.value("request_s") == pytest.approx(1.5481806532737452)
    assert run.workload.isl == 257 and run.workload.osl == 128  # round(257.1087), round(128.0)
    assert run.deployment.model == "example_model"  # worker.backend_model


def test_old_time_per_output_token_is_not_e2e_per_token() -> None:
    (level,) = parse_doc(load(OLD_JSON)).levels
    assert level.value("mean_e2e_per_token_ms") is None
    assert level.notes is not None and "time_per_output_token_ms not mapped" in level.notes


def test_yaml_gives_the_same_levels_as_the_json() -> None:
    text = OLD_YAML.read_text(encoding="utf-8")
    assert guidellm.sniff(OLD_YAML.name, text) == (
        "guidellm <= v0.3 (benchmarks only), YAML, 1 benchmarks"
    )
    data = OLD_YAML.read_bytes()
    (from_yaml,) = guidellm.parse(OLD_YAML.name, text, data, VLLM, Provenance.IMPORTED)
    # Decoded by the caller too (the tests' own yaml.safe_load), as the brief's callers may do.
    (from_dict,) = guidellm.parse(
        OLD_YAML.name, yaml.safe_load(text), data, VLLM, Provenance.IMPORTED
    )
    from_json = parse_doc(load(OLD_JSON))
    assert from_yaml.levels == from_json.levels == from_dict.levels


def test_other_documents_are_not_guidellm() -> None:
    assert guidellm.sniff(VLLM_FILE.name, load(VLLM_FILE)) is None
    assert guidellm.sniff("notes.txt", "benchmarks: []") is None
    assert guidellm.sniff("broken.yaml", "benchmarks: [unclosed") is None
    assert guidellm.sniff("x.json", {"benchmarks": [{"type_": "other"}]}) is None


def test_engine_must_come_from_overrides() -> None:
    with pytest.raises(InputError, match="--engine"):
        parse_doc(load(V2), overrides=DeploymentOverrides())
    run = parse_doc(load(V2), overrides=DeploymentOverrides(engine="trtllm"))
    assert run.deployment.engine == "tensorrt-llm"


def test_concurrent_strategy_is_its_streams() -> None:
    (level,) = parse_doc(with_strategy({"type_": "concurrent", "streams": 8})).levels
    assert (level.load_kind, level.load_value, level.burst) == (LoadKind.CONCURRENCY, 8.0, False)


def test_poisson_strategy_is_a_rate_with_a_note() -> None:
    (level,) = parse_doc(with_strategy({"type_": "poisson", "rate": 3.5})).levels
    assert (level.load_kind, level.load_value) == (LoadKind.RATE, 3.5)
    assert level.notes is not None and "poisson arrivals" in level.notes


def test_throughput_strategy_is_its_max_concurrency_with_a_note() -> None:
    doc = with_strategy({"type_": "throughput", "max_concurrency": 1})
    (level,) = parse_doc(doc).levels
    assert (level.load_kind, level.load_value, level.burst) == (LoadKind.CONCURRENCY, 1.0, False)
    assert level.notes is not None and "max_concurrency" in level.notes


def test_throughput_cap_above_the_requests_sent_is_a_burst() -> None:
    doc = with_strategy({"type_": "throughput", "max_concurrency": 512})
    (level,) = parse_doc(doc).levels
    assert (level.load_value, level.burst) == (512.0, True)  # only 2 requests were sent


def test_throughput_without_cap_is_a_burst_of_the_requests_sent() -> None:
    (level,) = parse_doc(with_strategy({"type_": "throughput"})).levels
    assert (level.load_value, level.burst) == (2.0, True)  # metrics.request_totals.total


def test_unknown_strategy_names_the_field() -> None:
    with pytest.raises(InputError) as err:
        parse_doc(with_strategy({"type_": "replay"}))
    assert err.value.field == "benchmarks[0].config.strategy.type_"
    assert err.value.value == "replay"


def test_concurrent_without_streams_names_the_field() -> None:
    with pytest.raises(InputError) as err:
        parse_doc(with_strategy({"type_": "concurrent"}))
    assert err.value.field == "benchmarks[0].config.strategy.streams"


def test_missing_metrics_names_the_field() -> None:
    doc = load(OLD_JSON)
    del doc["benchmarks"][0]["metrics"]
    with pytest.raises(InputError, match="missing") as err:
        parse_doc(doc)
    assert err.value.field == "benchmarks[0].metrics"


@pytest.mark.parametrize("bad", [float("nan"), -3.0, "12"])
def test_bad_latency_value_names_the_field(bad: object) -> None:
    doc = load(OLD_JSON)
    doc["benchmarks"][0]["metrics"]["time_to_first_token_ms"]["successful"]["mean"] = bad
    with pytest.raises(InputError) as err:
        parse_doc(doc)
    assert err.value.field == "benchmarks[0].metrics.time_to_first_token_ms.successful.mean"


def test_a_percentile_the_file_lacks_stays_unknown() -> None:
    doc = load(OLD_JSON)
    del doc["benchmarks"][0]["metrics"]["time_to_first_token_ms"]["successful"]["percentiles"][
        "p99"
    ]
    (level,) = parse_doc(doc).levels
    assert level.value("p99_ttft_ms") is None
    assert level.value("p95_ttft_ms") == pytest.approx(19.00935173034668)


def test_invalid_yaml_is_an_input_error() -> None:
    with pytest.raises(InputError, match="YAML"):
        guidellm.parse("b.yaml", "benchmarks: [unclosed", b"", VLLM, Provenance.IMPORTED)


def test_an_empty_successful_distribution_is_unknown_not_zero() -> None:
    doc = load(OLD_JSON)
    ttft = doc["benchmarks"][0]["metrics"]["time_to_first_token_ms"]["successful"]
    ttft.update(count=0, mean=0.0, median=0.0, min=0.0, max=0.0, std_dev=0.0)
    ttft["percentiles"] = dict.fromkeys(ttft["percentiles"], 0.0)
    (level,) = parse_doc(doc).levels
    assert level.value("mean_ttft_ms") is None and level.value("p99_ttft_ms") is None
    assert level.value("mean_tpot_ms") == pytest.approx(4.941609043733832)
    assert level.notes is not None and "no successful request" in level.notes


def test_report_v1_layout_is_named_and_imports() -> None:
    doc = load(V2)
    doc["metadata"]["version"] = 1
    assert guidellm.sniff("b.json", doc) == "guidellm report v1 (0.5-0.6), JSON, 2 benchmarks"
    assert len(parse_doc(doc).levels) == 2


def test_import_bytes_dispatches_here_once_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(importers.IMPORTERS, guidellm.FORMAT_ID, guidellm)
    imported = importers.import_path(OLD_YAML, overrides=VLLM)
    assert imported.format_id == "guidellm"
    (run,) = imported.runs
    assert run.origin_file == OLD_YAML.name and run.source == "guidellm"
