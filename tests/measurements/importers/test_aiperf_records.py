"""AIPerf profile_export.jsonl importer: goldens are the per-request values written into the
constructed fixture (see tests/fixtures/aiperf/SOURCES-h2.md); aggregates are recomputed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from errors import InputError
from measurements.importers import aiperf_records, import_bytes
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import Level, LoadKind, Origin, Provenance, RunFile, Source

FIXTURE = Path(__file__).parents[2] / "fixtures" / "aiperf" / "constructed__profile_export.jsonl"
DEPLOYMENT = DeploymentOverrides(engine="vllm", model="openai/gpt-oss-20b")


def load() -> list[Any]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def as_jsonl(records: list[Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def parse(doc: object, overrides: DeploymentOverrides = DEPLOYMENT) -> RunFile:
    data = json.dumps(doc).encode()
    (run,) = aiperf_records.parse("pe.jsonl", doc, data, overrides, Provenance.IMPORTED)
    return run


def level_of(doc: object) -> Level:
    (level,) = parse(doc).levels
    return level


def test_sniff_accepts_records_and_a_one_line_file() -> None:
    detected = "AIPerf profile_export.jsonl ({} per-request records)"
    assert aiperf_records.sniff("x", load()) == detected.format(5)
    assert aiperf_records.sniff("x", load()[1]) == detected.format(1)
    assert aiperf_records.sniff("x", [{"metrics": {}, "metadata": {}}]) is None
    assert aiperf_records.sniff("x", [{"request_throughput": 1.0}]) is None


def test_auto_detection_of_json_lines_and_of_one_line() -> None:
    imported = import_bytes("pe.jsonl", FIXTURE.read_bytes(), overrides=DEPLOYMENT)
    assert imported.format_id == "aiperf-records"
    one = import_bytes("one.jsonl", as_jsonl(load()[1:2]), overrides=DEPLOYMENT)
    assert one.format_id == "aiperf-records"
    assert one.runs[0].levels[0].requests_sent == 1


def test_vllm_bench_json_lines_are_not_claimed() -> None:
    result = {"date": "x", "request_throughput": 1.0, "output_throughput": 2.0, "mean_ttft_ms": 3}
    assert aiperf_records.sniff("r.jsonl", [result, result]) is None


def test_deployment_comes_from_the_user() -> None:
    run = parse(load())
    assert run.source is Source.AIPERF and run.environment.client == "aiperf"
    assert (run.deployment.engine, run.deployment.model) == ("vllm", "openai/gpt-oss-20b")
    with pytest.raises(InputError, match=r"profile_export_aiperf\.json"):
        parse(load(), DeploymentOverrides(engine="vllm"))


def test_warmup_is_skipped_and_samples_keep_the_tool_values() -> None:
    level = level_of(load())
    assert (level.requests_sent, level.completed, level.failed) == (4, 3, 1)
    assert "1 warmup-phase records skipped" in (level.notes or "")
    ok = level.samples[:3]
    assert [s.ttft_ms for s in ok] == [100.0, 150.0, 90.0]
    assert [s.e2e_ms for s in ok] == [300.0, 400.0, 250.0]
    assert [s.output_tokens for s in ok] == [5, 6, 5]
    assert [s.input_tokens for s in ok] == [550, 500, 600]
    assert ok[2].chunk_gaps_ms == (40.0,) * 4
    assert [s.send_s for s in level.samples] == [0.0, 0.01, 0.02, 0.03]


def test_failed_record_keeps_error_and_status() -> None:
    failed = level_of(load()).samples[3]
    assert failed.error == "InternalServerError: Server encountered an internal error"
    assert (failed.http_status, failed.ttft_ms, failed.e2e_ms) == (500, None, None)


def test_aggregates_are_recomputed() -> None:
    level = level_of(load())
    assert all(m.origin is Origin.RECOMPUTED for m in level.metrics)
    assert level.value("mean_ttft_ms") == pytest.approx(340 / 3)
    assert level.value("mean_tpot_ms") == pytest.approx((50 + 50 + 40) / 3)
    assert level.value("mean_itl_ms") == pytest.approx((4 * 50 + 5 * 50 + 4 * 40) / 13)
    assert level.duration_s == pytest.approx(0.41)
    assert level.value("request_s") == pytest.approx(3 / 0.41)
    assert level.value("output_tok_s") == pytest.approx(16 / 0.41)
    assert "inter_token_latency" in (level.notes or "")  # not read: recomputed


def test_load_is_not_stated_unless_the_user_gives_it() -> None:
    level = level_of(load())
    assert (level.load_kind, level.load_stated) == (LoadKind.RATE, False)
    assert level.load_value == pytest.approx(4 / 0.41)
    rated = DeploymentOverrides(engine="vllm", model="m", request_rate=5.0)
    (given,) = parse(load(), rated).levels
    assert (given.load_kind, given.load_value, given.load_stated) == (LoadKind.RATE, 5.0, True)


def test_units_are_converted_to_ms() -> None:
    doc = load()
    doc[1]["metrics"]["time_to_first_token"] = {"value": 100_000_000, "unit": "ns"}
    doc[1]["metrics"]["request_latency"] = {"value": 0.3, "unit": "sec"}
    sample = level_of(doc).samples[0]
    assert sample.ttft_ms == pytest.approx(100.0)
    assert sample.e2e_ms == pytest.approx(300.0)


def test_only_warmup_is_refused() -> None:
    with pytest.raises(InputError, match="warmup"):
        parse(load()[:1])


def test_cancelled_without_error_is_failed() -> None:
    doc = load()
    doc[2]["metadata"]["was_cancelled"] = True
    assert level_of(doc).samples[1].error == "cancelled"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r["metadata"].update(benchmark_phase="cooldown"), "metadata.benchmark_phase"),
        (lambda r: r["metadata"].update(request_start_ns=None), "metadata.request_start_ns"),
        (lambda r: r["metadata"].update(request_end_ns=5), "metadata.request_end_ns"),
        (lambda r: r["metadata"].update(request_start_ns="t"), "metadata.request_start_ns"),
        (lambda r: r["metrics"]["time_to_first_token"].update(unit="tokens"), "unit"),
        (lambda r: r["metrics"]["time_to_first_token"].update(value=float("nan")), "value"),
        (lambda r: r["metrics"]["request_latency"].pop("unit"), "request_latency.unit"),
        (lambda r: r["metrics"]["output_sequence_length"].update(value=-2), "value"),
        (lambda r: r["metrics"]["inter_chunk_latency"].update(value=3), "value"),
        (lambda r: r["metrics"]["inter_chunk_latency"]["value"].append("x"), "value[4]"),
        (lambda r: r["metrics"].update(time_to_first_token=7), "time_to_first_token"),
        (lambda r: r.update(metrics=[1]), "metrics"),
    ],
)
def test_bad_values_name_the_file_and_field(change: Any, field: str) -> None:
    doc = load()
    change(doc[1])
    with pytest.raises(InputError) as info:
        parse(doc)
    assert info.value.file == "pe.jsonl"
    assert (info.value.field or "").startswith("line 2: ")
    assert (info.value.field or "").endswith(field)


JSON_VALUES = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats() | st.text()


def _mutate(records: list[Any], path: list[int], value: Any) -> list[Any]:
    """Replace (or delete) one value found by walking the records with `path`."""
    records = copy.deepcopy(records)
    node: Any = records
    for pick in path:
        keys = sorted(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            return records
        key = keys[pick % len(keys)]
        if not isinstance(node[key], dict | list) or pick % 3 == 0:
            if value == "<delete>" and isinstance(node, dict):
                del node[key]
            else:
                node[key] = value
            return records
        node = node[key]
    return records


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.lists(st.integers(0, 99), min_size=2, max_size=5),
    value=JSON_VALUES | st.just("<delete>"),
)
def test_mutated_records_import_or_raise_input_error(path: list[int], value: Any) -> None:
    data = as_jsonl(_mutate(load(), path, value))
    try:
        imported = import_bytes("fuzz", data, overrides=DEPLOYMENT)
    except InputError as exc:
        assert exc.file == "fuzz" and exc.message
        return
    assert imported.runs and all(run.levels for run in imported.runs)
