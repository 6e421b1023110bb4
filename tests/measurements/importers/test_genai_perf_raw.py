"""GenAI-Perf raw profile_export.json importer: goldens come from the constructed fixture's
timestamps and SSE bodies (see tests/fixtures/genai-perf/SOURCES-h2.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from errors import InputError
from measurements.importers import genai_perf_raw, import_bytes
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import LoadKind, Origin, Provenance, RunFile, Source

FIXTURES = Path(__file__).parents[2] / "fixtures"
FIXTURE = FIXTURES / "genai-perf" / "raw" / "constructed__profile_export.json"
ENGINE = DeploymentOverrides(engine="vllm")
MS = 1_000_000


def load() -> Any:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def parse(doc: object, overrides: DeploymentOverrides = ENGINE) -> RunFile:
    data = json.dumps(doc).encode()
    (run,) = genai_perf_raw.parse("pe.json", doc, data, overrides, Provenance.IMPORTED)
    return run


def first_request(doc: Any) -> Any:
    return doc["experiments"][0]["requests"][0]


def test_sniff_and_auto_detection() -> None:
    expected = "GenAI-Perf raw profile_export.json (2 experiments, service_kind openai)"
    assert genai_perf_raw.sniff("pe.json", load()) == expected
    assert genai_perf_raw.sniff("pe.json", {"experiments": []}) is None
    assert genai_perf_raw.sniff("pe.json", {"experiments": [{"requests": []}]}) is None
    imported = import_bytes("pe.json", FIXTURE.read_bytes(), overrides=ENGINE)
    assert imported.format_id == "genai-perf-raw"


def test_model_from_the_payload_and_engine_from_the_user() -> None:
    run = parse(load())
    assert run.source is Source.GENAI_PERF
    assert (run.deployment.engine, run.deployment.model) == (
        "vllm",
        "meta-llama/Llama-3.1-8B-Instruct",
    )
    with pytest.raises(InputError, match="--engine"):
        parse(load(), DeploymentOverrides())


def test_one_level_per_experiment_with_the_stated_load() -> None:
    levels = parse(load()).levels
    assert [(lv.load_kind, lv.load_value, lv.load_stated) for lv in levels] == [
        (LoadKind.CONCURRENCY, 2.0, True),
        (LoadKind.RATE, 4.0, True),
    ]
    assert [lv.duration_s for lv in levels] == [0.072, 0.255]


def test_streamed_samples_skip_role_usage_and_done_chunks() -> None:
    level = parse(load()).levels[0]
    a, b = level.samples
    # A: content at +30, +40, +55 ms; B (sent 5 ms later): +35, +45, +55, +65 ms after its send
    assert (a.ttft_ms, a.e2e_ms, a.chunk_gaps_ms) == (30.0, 55.0, (10.0, 15.0))
    assert (b.ttft_ms, b.e2e_ms, b.chunk_gaps_ms) == (35.0, 65.0, (10.0, 10.0, 10.0))
    assert (a.output_tokens, a.input_tokens, b.output_tokens, b.input_tokens) == (3, 12, 4, 10)
    assert (a.send_s, b.send_s) == (0.0, 0.005)


def test_first_level_metrics_are_recomputed() -> None:
    level = parse(load()).levels[0]
    assert all(m.origin is Origin.RECOMPUTED for m in level.metrics)
    assert level.value("mean_ttft_ms") == pytest.approx(32.5)
    assert level.value("mean_tpot_ms") == pytest.approx((12.5 + 10.0) / 2)
    assert level.value("mean_icl_ms") == pytest.approx(11.0)
    assert level.value("mean_itl_ms") == pytest.approx(11.0)  # one token per chunk
    assert level.value("output_tok_s") == pytest.approx(7 / 0.072)
    assert level.value("total_tok_s") == pytest.approx(29 / 0.072)


def test_without_usage_tokens_stay_unknown_and_errors_count() -> None:
    level = parse(load()).levels[1]
    ok, failed = level.samples
    assert (ok.ttft_ms, ok.e2e_ms, ok.output_tokens) == (20.0, 30.0, None)
    assert failed.error == "server overloaded"
    assert (level.completed, level.failed) == (1, 1)
    assert level.value("mean_tpot_ms") is None and level.value("output_tok_s") is None
    assert level.value("request_s") == pytest.approx(1 / 0.255)
    assert "output tokens unknown for 1 of 1" in (level.notes or "")


def test_single_non_streamed_body_gives_e2e_but_no_ttft() -> None:
    doc = load()
    request = first_request(doc)
    body = {"choices": [{"message": {"content": "Hi"}}], "usage": {"completion_tokens": 1}}
    request["response_timestamps"] = [request["timestamp"] + 40 * MS]
    request["response_outputs"] = [{"response": json.dumps(body)}]
    sample = parse(doc).levels[0].samples[0]
    assert (sample.ttft_ms, sample.e2e_ms, sample.output_tokens) == (None, 40.0, 1)


def test_triton_text_outputs_are_chunks() -> None:
    doc = load()
    request = first_request(doc)
    start = request["timestamp"]
    request["response_timestamps"] = [start + 3 * MS, start + 5 * MS, start + 8 * MS]
    request["response_outputs"] = [{"text_output": t} for t in ("I", " like", " dogs")]
    sample = parse(doc).levels[0].samples[0]
    assert (sample.ttft_ms, sample.e2e_ms, sample.chunk_gaps_ms) == (3.0, 8.0, (2.0, 3.0))


def test_request_without_responses_is_failed() -> None:
    doc = load()
    first_request(doc).update(response_timestamps=[], response_outputs=[])
    assert parse(doc).levels[0].samples[0].error == "no response"


def test_several_models_leave_the_model_to_the_user() -> None:
    doc = load()
    payload = json.loads(first_request(doc)["request_inputs"]["payload"])
    first_request(doc)["request_inputs"]["payload"] = json.dumps({**payload, "model": "other"})
    with pytest.raises(InputError, match="--model"):
        parse(doc)
    run = parse(doc, DeploymentOverrides(engine="vllm", model="m"))
    assert "several models" in (run.notes or "")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["experiments"][0]["experiment"].update(mode="sweep"), "mode"),
        (lambda d: d["experiments"][0]["experiment"].update(value=0), "value"),
        (lambda d: d["experiments"][0]["experiment"].pop("value"), "value"),
        (lambda d: d["experiments"][0].update(requests=[]), "requests"),
        (lambda d: first_request(d).update(timestamp="now"), "timestamp"),
        (lambda d: first_request(d).update(timestamp=float("inf")), "timestamp"),
        (lambda d: first_request(d)["response_timestamps"].reverse(), "response_timestamps"),
        (lambda d: first_request(d)["response_outputs"].pop(), "response_outputs"),
        (lambda d: first_request(d)["response_outputs"].__setitem__(1, {"x": 1}), "response"),
        (
            lambda d: first_request(d)["response_outputs"].__setitem__(
                1, {"response": "data: {broken\n\n"}
            ),
            "response",
        ),
    ],
)
def test_bad_values_name_the_file_and_field(change: Any, field: str) -> None:
    doc = load()
    change(doc)
    with pytest.raises(InputError) as info:
        parse(doc)
    assert info.value.file == "pe.json"
    assert (info.value.field or "").endswith(field)
    assert (info.value.field or "").startswith("experiments[0]")


JSON_VALUES = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats() | st.text()


def _mutate(doc: Any, path_picks: list[int], value: Any) -> Any:
    """Replace (or delete) one value found by walking the document with `path_picks`."""
    doc = copy.deepcopy(doc)
    node = doc
    for pick in path_picks:
        keys = sorted(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            return doc
        key = keys[pick % len(keys)]
        child = node[key]
        if not isinstance(child, dict | list) or pick % 3 == 0:
            if value == "<delete>" and isinstance(node, dict):
                del node[key]
            else:
                node[key] = value
            return doc
        node = child
    return doc


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.lists(st.integers(0, 99), min_size=1, max_size=6),
    value=JSON_VALUES | st.just("<delete>"),
)
def test_mutated_documents_import_or_raise_input_error(path: list[int], value: Any) -> None:
    data = json.dumps(_mutate(load(), path, value)).encode()
    try:
        imported = import_bytes("fuzz", data, overrides=ENGINE)
    except InputError as exc:
        assert exc.file == "fuzz" and exc.message
        return
    assert imported.runs and all(run.levels for run in imported.runs)
