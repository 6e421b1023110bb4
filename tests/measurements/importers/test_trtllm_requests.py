"""trtllm-bench --request_json importer: goldens come from the constructed fixture's timestamps
(see tests/fixtures/trtllm-bench/SOURCES-h2.md); aggregates are recomputed from the samples."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from errors import InputError
from measurements.importers import import_bytes, trtllm_requests
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import Level, LoadKind, Origin, Provenance, RunFile, Source

FIXTURE = Path(__file__).parents[2] / "fixtures" / "trtllm-bench" / "constructed__request_json.json"
MODEL = DeploymentOverrides(model="meta-llama/Llama-3.1-8B-Instruct")


def load() -> Any:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def parse(doc: object, overrides: DeploymentOverrides = MODEL) -> RunFile:
    data = json.dumps(doc).encode()
    (run,) = trtllm_requests.parse("req.json", doc, data, overrides, Provenance.IMPORTED)
    return run


def level_of(doc: object, overrides: DeploymentOverrides = MODEL) -> Level:
    (level,) = parse(doc, overrides).levels
    return level


def test_sniff_recognises_request_records_only() -> None:
    assert trtllm_requests.sniff("r.json", load()) == "trtllm-bench --request_json (4 requests)"
    assert trtllm_requests.sniff("r.json", load()[0]) is None
    assert trtllm_requests.sniff("r.json", []) is None
    assert trtllm_requests.sniff("r.json", [{"start_time": 1, "end_time": 2, "info": {}}]) is None


def test_auto_detection_picks_this_importer() -> None:
    imported = import_bytes("req.json", FIXTURE.read_bytes(), overrides=MODEL)
    assert imported.format_id == "trtllm-requests"


def test_engine_is_tensorrt_llm_and_model_comes_from_the_user() -> None:
    run = parse(load())
    assert run.source is Source.TRTLLM_BENCH
    assert (run.deployment.engine, run.deployment.model) == (
        "tensorrt-llm",
        "meta-llama/Llama-3.1-8B-Instruct",
    )
    assert run.environment.client == "trtllm-bench"
    with pytest.raises(InputError, match="--model") as info:
        parse(load(), DeploymentOverrides())
    assert info.value.field == "model"


def test_samples_come_from_the_ns_timestamps() -> None:
    level = level_of(load())
    # (start, first token, end) ms: (0, 50, 90), (10, 70, 130), (20, 80, 140), (30, 100, 115)
    assert [s.ttft_ms for s in level.samples] == [50.0, 60.0, 60.0, 70.0]
    assert [s.e2e_ms for s in level.samples] == [90.0, 120.0, 120.0, 85.0]
    assert [s.send_s for s in level.samples] == [0.0, 0.01, 0.02, 0.03]
    assert [s.output_tokens for s in level.samples] == [5, 4, 6, 2]
    assert [s.input_tokens for s in level.samples] == [100, 120, 80, 100]
    assert all(s.chunk_gaps_ms == () for s in level.samples)


def test_aggregates_are_recomputed_by_canonical_definitions() -> None:
    level = level_of(load())
    assert all(m.origin is Origin.RECOMPUTED for m in level.metrics)
    assert level.value("mean_ttft_ms") == pytest.approx(60.0)
    # tpot per request = (end - first) / (n - 1): 10, 20, 12, 15
    assert level.value("mean_tpot_ms") == pytest.approx(14.25)
    assert level.value("output_tok_s") == pytest.approx(17 / 0.14)
    assert level.value("total_tok_s") == pytest.approx((17 + 400) / 0.14)
    assert level.value("request_s") == pytest.approx(4 / 0.14)
    assert level.value("mean_itl_ms") is None and level.value("mean_icl_ms") is None
    assert (level.requests_sent, level.completed, level.failed) == (4, 4, 0)
    assert level.duration_s == pytest.approx(0.14)


def test_load_is_not_stated_unless_the_user_gives_it() -> None:
    level = level_of(load())
    assert (level.load_kind, level.load_stated) == (LoadKind.RATE, False)
    assert level.load_value == pytest.approx(4 / 0.14)
    assert "not stated" in (level.notes or "")
    given = level_of(load(), DeploymentOverrides(model="m", concurrency=8))
    assert (given.load_kind, given.load_value, given.load_stated) == (
        LoadKind.CONCURRENCY,
        8.0,
        True,
    )


def test_workload_means_come_from_the_records() -> None:
    assert (parse(load()).workload.isl, parse(load()).workload.osl) == (100, 4)


@pytest.mark.parametrize("first", [-1, 0])
def test_unrecorded_first_token_leaves_ttft_unknown(first: int) -> None:
    doc = load()
    doc[0]["first_token_timestamp"] = first
    level = level_of(doc)
    assert level.samples[0].ttft_ms is None
    assert level.value("mean_ttft_ms") == pytest.approx((60 + 60 + 70) / 3)
    assert "ttft unknown for 1 requests" in (level.notes or "")


def test_non_streaming_first_token_at_the_end_is_not_a_ttft() -> None:
    doc = load()
    for record in doc:
        record["first_token_timestamp"] = record["end_timestamp"]
    level = level_of(doc)
    assert all(s.ttft_ms is None for s in level.samples)
    assert level.value("mean_ttft_ms") is None and level.value("mean_tpot_ms") is None
    assert level.value("mean_e2e_ms") == pytest.approx(103.75)


def test_error_tokens_mark_the_request_failed() -> None:
    doc = load()
    doc[1]["error_tokens"] = 2
    level = level_of(doc)
    assert (level.completed, level.failed) == (3, 1)
    assert "error_tokens" in (level.samples[1].error or "")


def test_token_list_length_is_used_without_num_output_tokens() -> None:
    doc = load()
    del doc[0]["num_output_tokens"]
    assert level_of(doc).samples[0].output_tokens == 5


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("start_timestamp", None, "request 1: start_timestamp"),
        ("start_timestamp", -1, "request 1: start_timestamp"),
        ("end_timestamp", "late", "request 1: end_timestamp"),
        ("end_timestamp", 1, "request 1: end_timestamp"),
        ("first_token_timestamp", float("nan"), "request 1: first_token_timestamp"),
        ("first_token_timestamp", 10**30, "request 1: first_token_timestamp"),
        ("num_input_tokens", -5, "request 1: num_input_tokens"),
        ("num_output_tokens", 2.5, "request 1: num_output_tokens"),
        ("error_tokens", "x", "request 1: error_tokens"),
    ],
)
def test_bad_values_name_the_file_and_field(key: str, value: object, field: str) -> None:
    doc = load()
    doc[0][key] = value
    with pytest.raises(InputError) as info:
        parse(doc)
    assert (info.value.file, info.value.field) == ("req.json", field)


def test_zero_span_is_refused() -> None:
    doc = load()[:1]
    doc[0]["end_timestamp"] = doc[0]["first_token_timestamp"] = doc[0]["start_timestamp"]
    with pytest.raises(InputError, match="same instant"):
        parse(doc)


JSON_VALUES = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats() | st.text()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    picks=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 99), JSON_VALUES | st.just("<delete>")),
        min_size=1,
        max_size=4,
    )
)
def test_mutated_records_import_or_raise_input_error(picks: list[tuple[int, int, Any]]) -> None:
    doc = copy.deepcopy(load())
    for row, key_pick, value in picks:
        record = doc[row]
        key = sorted(record)[key_pick % len(record)]
        if value == "<delete>":
            del record[key]
        else:
            record[key] = value
    try:
        imported = import_bytes("fuzz", json.dumps(doc).encode(), overrides=MODEL)
    except InputError as exc:
        assert exc.file == "fuzz" and exc.message
        return
    assert imported.runs and all(run.levels for run in imported.runs)
