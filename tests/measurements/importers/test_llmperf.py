"""llmperf importer: golden numbers are the ones token_benchmark_ray.py wrote into the fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from errors import InputError
from measurements.importers import llmperf
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import Level, LoadKind, Origin, Provenance, RunFile

FIXTURES = Path(__file__).parents[2] / "fixtures" / "llmperf"
SUMMARY = FIXTURES / "llmperf-leaderboard__summary__anyscale_70b.json"
INDIVIDUAL = FIXTURES / "llmperf-leaderboard__individual__anyscale_70b.json"
VLLM = DeploymentOverrides(engine="vllm")
MODEL = DeploymentOverrides(engine="vllm", model="meta-llama/Llama-2-70b-chat-hf")


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def parse(doc: object, overrides: DeploymentOverrides = VLLM) -> RunFile:
    data = json.dumps(doc).encode()
    (run,) = llmperf.parse("f.json", doc, data, overrides, Provenance.IMPORTED)
    return run


def only_level(doc: object, overrides: DeploymentOverrides = VLLM) -> Level:
    (level,) = parse(doc, overrides).levels
    return level


def test_sniff_tells_summary_from_individual_and_ignores_others() -> None:
    assert "summary" in (llmperf.sniff("s.json", load(SUMMARY)) or "")
    assert "150 requests" in (llmperf.sniff("i.json", load(INDIVIDUAL)) or "")
    assert llmperf.sniff("x.json", {"request_throughput": 1.0}) is None
    assert llmperf.sniff("x.json", [{"ttft_s": 1.0}]) is None
    assert llmperf.sniff("x.json", []) is None


def test_summary_matches_the_numbers_llmperf_wrote() -> None:
    run = parse(load(SUMMARY))
    (level,) = run.levels
    assert (level.load_kind, level.load_value, level.burst) == (LoadKind.CONCURRENCY, 5, False)
    # results_num_requests_started, results_num_completed_requests, results_number_errors
    assert (level.requests_sent, level.completed, level.failed) == (150, 150, 0)
    # results_ttft_s_quantiles_p99 / _mean (seconds)
    assert level.value("p99_ttft_ms") == pytest.approx(0.4745305190600024 * 1000)
    assert level.value("mean_ttft_ms") == pytest.approx(0.24890269464666667 * 1000)
    # results_end_to_end_latency_s_quantiles_p50 / _stddev
    assert level.value("p50_e2e_ms") == pytest.approx(2.259533027999993 * 1000)
    assert level.value("std_e2e_ms") == pytest.approx(0.46357832921211445 * 1000)
    # results_mean_output_throughput_token_per_s; results_num_completed_requests_per_min / 60
    assert level.value("output_tok_s") == 207.52121071152493
    assert level.value("request_s") == pytest.approx(84.73327721639254 / 60)
    assert level.duration_s == pytest.approx(150 / 84.73327721639254 * 60)
    assert run.workload.isl == 550 and run.workload.osl == round(146.94666666666666)
    assert run.deployment.model == "meta-llama/Llama-2-70b-chat-hf"
    assert run.label == "meta-llama-Llama-2-70b-chat-hf_550_150_summary"


def test_llmperf_inter_token_latency_is_e2e_per_token_never_tpot() -> None:
    level = only_level(load(SUMMARY))
    metric = next(m for m in level.metrics if m.name == "p90_e2e_per_token_ms")
    assert metric.source_key == "results_inter_token_latency_s_quantiles_p90"
    assert metric.source_value == 0.01949744089139177
    assert metric.value == pytest.approx(19.49744089139177)
    assert not [m for m in level.metrics if "tpot" in m.name or "_itl_" in m.name]


def test_percentiles_without_a_canonical_name_stay_unknown_and_are_noted() -> None:
    level = only_level(load(SUMMARY))
    names = {m.name for m in level.metrics}
    assert not [n for n in names if n.startswith(("p25", "p75"))]
    assert "quantiles_p25" in (level.notes or "")
    assert "results_request_output_throughput_token_per_s_*" in (level.notes or "")


def test_individual_alone_recomputes_what_the_summary_reported() -> None:
    level = only_level(load(INDIVIDUAL), MODEL)
    assert not level.load_stated and not level.burst and level.duration_s is None
    assert (level.requests_sent, level.completed, level.failed) == (150, 150, 0)
    assert len(level.samples) == 150
    # The matching summary: results_ttft_s_mean, _quantiles_p50 (pandas linear quantile)
    assert level.value("mean_ttft_ms", Origin.RECOMPUTED) == pytest.approx(248.90269464666667)
    assert level.value("p50_ttft_ms", Origin.RECOMPUTED) == pytest.approx(212.82956000001718)
    assert level.value("p99_e2e_ms", Origin.RECOMPUTED) == pytest.approx(3705.7007264000185)
    assert level.value("output_tok_s") is None  # no duration in the file: never invented


def test_individual_sample_units_and_errors() -> None:
    doc = load(INDIVIDUAL)
    doc[1] = {**doc[1], "error_code": 429, "error_msg": "rate limited"}
    level = only_level(doc, MODEL)
    first = level.samples[0]
    assert first.ttft_ms == pytest.approx(0.3148573649999662 * 1000)  # [0].ttft_s
    assert first.e2e_ms == pytest.approx(2.532841702999974 * 1000)  # [0].end_to_end_latency_s
    assert (first.input_tokens, first.output_tokens) == (550, 151)
    assert level.samples[1].error == "429: rate limited"
    assert (level.completed, level.failed) == (149, 1)
    ok = [r["ttft_s"] * 1000 for i, r in enumerate(doc) if i != 1]
    assert level.value("mean_ttft_ms") == pytest.approx(float(np.mean(ok)))


def test_engine_must_come_from_overrides() -> None:
    with pytest.raises(InputError, match="--engine") as caught:
        parse(load(SUMMARY), DeploymentOverrides())
    assert caught.value.field == "engine"


def test_missing_concurrency_names_the_field() -> None:
    doc = load(SUMMARY)
    del doc["num_concurrent_requests"]
    with pytest.raises(InputError) as caught:
        parse(doc)
    assert caught.value.field == "num_concurrent_requests"


@pytest.mark.parametrize("bad", [float("nan"), -0.2, "fast"])
def test_bad_latency_values_are_refused(bad: object) -> None:
    doc = load(SUMMARY)
    doc["results_ttft_s_quantiles_p99"] = bad
    with pytest.raises(InputError) as caught:
        parse(doc)
    assert caught.value.field == "results_ttft_s_quantiles_p99"


def test_completed_plus_errors_over_started_is_refused() -> None:
    doc = load(SUMMARY)
    doc["results_number_errors"] = 1  # 150 completed + 1 error > 150 started
    with pytest.raises(InputError, match="results_num_requests_started") as caught:
        parse(doc)
    assert caught.value.field == "results_num_completed_requests"
