"""inference-perf importer: golden numbers are the ones inference-perf wrote into the fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from errors import InputError
from measurements.importers import inference_perf
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import Level, LoadKind, Origin, Provenance, RunFile

FIXTURES = Path(__file__).parents[2] / "fixtures" / "inference-perf"
STAGE = FIXTURES / "kubecon-demo_vllm-v0_engine__stage_0_lifecycle_metrics.json"
SUMMARY = FIXTURES / "kubecon-demo_vllm-v0_engine__summary_lifecycle_metrics.json"
PROMETHEUS = FIXTURES / "kubecon-demo_vllm-v0_engine__stage_0_prometheus_metrics.json"
PER_REQUEST = (
    FIXTURES / "test-corpus_v0_5_0-clean-two-stage-run__per_request_lifecycle_metrics.json"
)
VLLM = DeploymentOverrides(engine="vllm", model="Qwen/Qwen3-0.6B")


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def parse(doc: object, overrides: DeploymentOverrides = VLLM) -> RunFile:
    data = json.dumps(doc).encode()
    (run,) = inference_perf.parse("f.json", doc, data, overrides, Provenance.IMPORTED)
    return run


def only_level(doc: object) -> Level:
    (level,) = parse(doc).levels
    return level


def test_sniff_accepts_lifecycle_files_and_never_the_prometheus_file() -> None:
    assert "one stage" in (inference_perf.sniff("s", load(STAGE)) or "")
    assert "summary" in (inference_perf.sniff("s", load(SUMMARY)) or "")
    assert "6 requests" in (inference_perf.sniff("p", load(PER_REQUEST)) or "")
    assert inference_perf.sniff("p", load(PROMETHEUS)) is None
    assert inference_perf.sniff("x", {"request_throughput": 1}) is None


def test_stage_matches_the_numbers_inference_perf_wrote() -> None:
    run = parse(load(STAGE))
    (level,) = run.levels
    # load_summary.requested_rate
    assert (level.load_kind, level.load_value, level.burst) == (LoadKind.RATE, 1.0, False)
    # load_summary.count, successes.count, failures.count
    assert (level.requests_sent, level.completed, level.failed) == (60, 60, 0)
    # successes.latency.time_to_first_token.p99 / .median (seconds)
    assert level.value("p99_ttft_ms") == pytest.approx(0.05342410152545194 * 1000)
    assert level.value("p50_ttft_ms") == pytest.approx(0.03706111456267536 * 1000)
    # successes.latency.time_per_output_token.mean -> TPOT
    assert level.value("mean_tpot_ms") == pytest.approx(0.003660987556800102 * 1000)
    # successes.latency.normalized_time_per_output_token.p90 -> e2e per token
    assert level.value("p90_e2e_per_token_ms") == pytest.approx(0.008943238705380841 * 1000)
    # successes.latency.inter_token_latency.median: per token, microseconds inside chunks
    assert level.value("p50_itl_ms") == pytest.approx(9.201245848089457e-05 * 1000)
    # successes.latency.request_latency.max
    assert level.value("max_e2e_ms") == pytest.approx(0.5627801311202347 * 1000)
    # successes.throughput.*
    assert level.value("output_tok_s") == 64.43010588682867
    assert level.value("total_tok_s") == 271.40621917977643
    assert level.value("input_tok_s") == 206.97611329294773
    assert level.value("request_s") == 1.034191105727587
    # successes.prompt_len.mean, output_len.mean
    assert (run.workload.isl, run.workload.osl) == (200, 62)


def test_metrics_keep_the_source_key_and_value() -> None:
    level = only_level(load(STAGE))
    metric = next(m for m in level.metrics if m.name == "p99_e2e_ms")
    assert metric.source_key == "successes.latency.request_latency.p99"
    assert metric.source_value == 0.5624601929076016
    assert metric.origin == Origin.REPORTED


def test_percentiles_without_a_canonical_name_stay_unknown() -> None:
    level = only_level(load(STAGE))
    assert not [m for m in level.metrics if m.name.startswith(("p25", "p75", "p1_", "p5_"))]
    assert "p99.9" in (level.notes or "")


def test_summary_over_all_stages_is_kept_out_of_fits() -> None:
    level = only_level(load(SUMMARY))
    assert not level.load_stated and not level.burst
    assert level.load_value == 59.119902302318366  # successes.throughput.requests_per_sec
    assert level.completed == 49792  # successes.count
    assert level.value("p99_tpot_ms") == pytest.approx(0.014143334756706394 * 1000)


def test_per_request_records_become_samples() -> None:
    run = parse(load(PER_REQUEST))
    (level,) = run.levels
    assert len(level.samples) == 6 and (level.completed, level.failed) == (5, 1)
    first = level.samples[0]
    # [0]: start 0.0, end 1.0, first chunk 0.1111, 8 chunks 1/9 s apart, 100 input, 8 output
    assert first.ttft_ms == pytest.approx(1000 / 9)
    assert first.e2e_ms == pytest.approx(1000.0)
    assert (first.input_tokens, first.output_tokens) == (100, 8)
    assert first.chunk_gaps_ms == pytest.approx([1000 / 9] * 7)
    assert level.samples[3].error == "HTTP Error 500: boom"
    assert level.duration_s == pytest.approx(12.0)  # 0.0 .. 12.0
    # e2e of the five successes: 1.0, 1.3, 1.2, 1.0, 1.5 s
    assert level.value("mean_e2e_ms") == pytest.approx(1200.0)
    assert level.value("output_tok_s") == pytest.approx((8 + 12 + 6 + 8 + 10) / 12.0)


def test_engine_and_model_must_come_from_overrides() -> None:
    with pytest.raises(InputError, match="--engine") as caught:
        parse(load(STAGE), DeploymentOverrides(model="m"))
    assert caught.value.field == "engine"


def test_missing_success_count_names_the_field() -> None:
    doc = load(STAGE)
    del doc["successes"]["count"]
    with pytest.raises(InputError) as caught:
        parse(doc)
    assert caught.value.field == "successes.count"


@pytest.mark.parametrize("bad", [float("nan"), -0.5, "slow"])
def test_bad_latency_values_are_refused(bad: object) -> None:
    doc = load(STAGE)
    doc["successes"]["latency"]["time_to_first_token"]["p99"] = bad
    with pytest.raises(InputError) as caught:
        parse(doc)
    assert caught.value.field == "successes.latency.time_to_first_token.p99"


def test_chunk_times_before_the_send_are_refused() -> None:
    doc = load(PER_REQUEST)
    doc[0]["info"]["response_metrics"]["chunk_times"][0] = -1.0
    with pytest.raises(InputError) as caught:
        parse(doc)
    assert caught.value.field == "request 1: info.response_metrics.chunk_times"
