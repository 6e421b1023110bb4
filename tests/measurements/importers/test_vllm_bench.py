"""vLLM bench serve importer: golden numbers are the ones the tool wrote into the fixture files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from errors import InputError
from measurements.importers import DeploymentOverrides, import_bytes, import_path
from measurements.run_file import Level, LoadKind, Origin
from planner.curves.load import curve_from_run

FIXTURES = Path(__file__).parents[2] / "fixtures"
REAL = FIXTURES / "vllm-cpu-real"
PEERS = FIXTURES / "vllm-bench-serve"
DETAILED = ("c2-detailed.json", "c16-detailed.json", "poisson-rate40-detailed.json")
VLLM = DeploymentOverrides(engine="vllm")


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def dumps(doc: object) -> bytes:
    return json.dumps(doc).encode()


def only_level(data: bytes, overrides: DeploymentOverrides = VLLM) -> Level:
    (run,) = import_bytes("result.json", data, overrides=overrides).runs
    (level,) = run.levels
    return level


def test_c8_matches_the_numbers_vllm_printed() -> None:
    imported = import_path(REAL / "c8.json")
    (run,) = imported.runs
    (level,) = run.levels
    assert imported.format_id == "vllm-bench"
    assert level.value("output_tok_s") == pytest.approx(4958.71, abs=0.01)
    assert level.value("p99_ttft_ms") == pytest.approx(53.61, abs=0.005)
    assert (level.load_kind, level.load_value) == (LoadKind.CONCURRENCY, 8)
    assert (level.requests_sent, level.completed, level.failed) == (64, 64, 0)
    assert (level.input_tokens_total, level.output_tokens_total) == (8210, 4096)
    assert level.duration_s == pytest.approx(0.8260219420000112)
    assert run.workload.isl == round(8210 / 64) and run.workload.osl == 64
    assert run.deployment.engine == "vllm" and run.deployment.model == "tiny-random-llama"
    assert run.started_at == datetime(2026, 11, 29, 18, 33, 59, tzinfo=UTC)
    assert run.environment.client == "vllm bench serve"


def test_each_metric_keeps_the_source_key_and_value() -> None:
    level = only_level((REAL / "c8.json").read_bytes())
    by_name = {m.name: m for m in level.metrics if m.origin == Origin.REPORTED}
    assert by_name["output_tok_s"].source_key == "output_throughput"
    assert by_name["output_tok_s"].source_value == 4958.706048513109
    assert by_name["p50_ttft_ms"].source_key == "median_ttft_ms"
    assert by_name["max_output_tok_s"].value == 4096.0
    assert by_name["max_concurrent_requests"].value == 64


def test_vllm_itl_is_per_chunk_so_it_maps_to_icl_never_itl() -> None:
    level = only_level((REAL / "c8.json").read_bytes())
    assert level.value("mean_icl_ms") == 1.283170815228086
    assert level.value("p99_icl_ms") == 5.245047990023295
    assert not [m for m in level.metrics if "_itl_" in m.name]


def test_latencies_only_keeps_samples_with_just_e2e() -> None:
    doc = load(REAL / "c8.json")
    level = only_level(dumps(doc))
    assert len(level.samples) == 64
    assert all(s.ttft_ms is None and s.e2e_ms is not None for s in level.samples)
    latencies_ms = np.asarray(doc["latencies"]) * 1000
    assert level.value("p99_e2e_ms", Origin.RECOMPUTED) == pytest.approx(
        np.percentile(latencies_ms, 99), rel=1e-12
    )


@pytest.mark.parametrize("name", DETAILED)
def test_recomputed_aggregates_agree_with_vllm_s_own(name: str) -> None:
    doc = load(REAL / name)
    level = only_level((REAL / name).read_bytes())
    assert len(level.samples) == doc["num_prompts"]
    for metric in ("p99_ttft_ms", "p99_tpot_ms", "mean_ttft_ms"):
        recomputed = level.value(metric, Origin.RECOMPUTED)
        assert recomputed == pytest.approx(doc[metric], rel=1e-6)
    assert level.value("p99_icl_ms", Origin.RECOMPUTED) == pytest.approx(
        doc["p99_itl_ms"], rel=1e-6
    )
    assert level.value("output_tok_s", Origin.RECOMPUTED) == pytest.approx(
        doc["output_throughput"], rel=1e-9
    )


def test_detailed_samples_are_in_ms_relative_to_the_first_send() -> None:
    doc = load(REAL / "poisson-rate40-detailed.json")
    level = only_level(dumps(doc))
    first = level.samples[0]
    assert first.ttft_ms == pytest.approx(doc["ttfts"][0] * 1000)
    assert first.chunk_gaps_ms[0] == pytest.approx(doc["itls"][0][0] * 1000)
    assert first.output_tokens == 128 and first.error is None
    starts = doc["start_times"]
    assert min(s.send_s or 0 for s in level.samples) == 0
    assert max(s.send_s or 0 for s in level.samples) == pytest.approx(max(starts) - min(starts))


def test_multi_token_chunks_give_no_per_token_itl() -> None:
    level = only_level((REAL / "c2-detailed.json").read_bytes())
    assert level.value("p99_itl_ms") is None
    assert "per-token itl not recomputed" in (level.notes or "")


def test_one_token_per_chunk_gives_per_token_itl() -> None:
    doc = load(REAL / "c2-detailed.json")
    doc["output_lens"] = [len(gaps) + 1 for gaps in doc["itls"]]
    level = only_level(dumps(doc))
    gaps_ms = [g * 1000 for gaps in doc["itls"] for g in gaps]
    assert level.value("p99_itl_ms") == pytest.approx(np.percentile(gaps_ms, 99), rel=1e-12)
    assert level.value("p99_itl_ms") == level.value("p99_icl_ms", Origin.RECOMPUTED)


def test_failed_requests_stay_as_samples_and_out_of_the_statistics() -> None:
    doc = load(REAL / "c2-detailed.json")
    for key, placeholder in (("ttfts", 0.0), ("latencies", 0.0), ("itls", []), ("output_lens", 0)):
        doc[key][3] = placeholder
    doc["errors"][3] = "ReadTimeout: no response"
    doc["completed"], doc["failed"] = 63, 1
    level = only_level(dumps(doc))
    assert len(level.samples) == 64 and level.failed == 1
    failed = level.samples[3]
    assert failed.error == "ReadTimeout: no response" and failed.ttft_ms is None
    others = [t * 1000 for i, t in enumerate(doc["ttfts"]) if i != 3]
    assert level.value("mean_ttft_ms", Origin.RECOMPUTED) == pytest.approx(np.mean(others))


def test_old_script_keys_are_understood() -> None:
    path = PEERS / "inferencex__concurrency_16_req_rate_inf_gpus_16_ctx_8_gen_8.json"
    imported = import_path(path, overrides=VLLM)
    (run,) = imported.runs
    (level,) = run.levels
    assert "old" in imported.detected and run.environment.client == "benchmark_serving.py (old)"
    assert (level.load_kind, level.load_value) == (LoadKind.CONCURRENCY, 16)
    assert level.value("goodput_request_s") is None  # "request_goodput:" is null in the file
    assert level.value("p90_ttft_ms") == 668.5733429389074
    assert level.value("p99_e2e_ms") == 9977.636895296164
    assert "p99.9_ttft_ms=698.208" in (level.notes or "")  # listed, not dropped


def test_old_goodput_key_with_colon_maps_when_set() -> None:
    doc = load(PEERS / "inferencex__concurrency_16_req_rate_inf_gpus_16_ctx_8_gen_8.json")
    doc["request_goodput:"] = 1.25
    level = only_level(dumps(doc))
    (goodput,) = [m for m in level.metrics if m.name == "goodput_request_s"]
    assert (goodput.value, goodput.source_key) == (1.25, "request_goodput:")


def test_open_loop_rate_file_is_a_rate_level() -> None:
    path = PEERS / "llm-d-benchmark__exp-7_H100_vllm-2replicas__benchmark_2025-05-13_04-55-27.json"
    (run,) = import_path(path, overrides=VLLM).runs
    (level,) = run.levels
    assert (level.load_kind, level.load_value) == (LoadKind.RATE, 3.6)
    assert level.value("output_tok_s") == 696.6005267659943
    assert level.value("p95_ttft_ms") == 257.0488001947524
    assert run.workload.isl == round(1599800 / 200) and run.workload.osl == 200


def test_poisson_rate_40_is_a_rate_level() -> None:
    level = only_level((REAL / "poisson-rate40-detailed.json").read_bytes())
    assert (level.load_kind, level.load_value) == (LoadKind.RATE, 40.0)
    assert level.value("output_tok_s") == 4989.788915454844


def test_infinite_rate_without_concurrency_cap_sends_everything_at_once() -> None:
    doc = load(REAL / "c8.json")
    doc["max_concurrency"] = None
    level = only_level(dumps(doc))
    assert (level.load_kind, level.load_value) == (LoadKind.CONCURRENCY, 64)
    assert "all 64 requests were sent at once" in (level.notes or "")


def test_append_result_json_lines_are_levels_of_one_run() -> None:
    data = b"\n".join((REAL / name).read_bytes().strip() for name in ("c1.json", "c8.json"))
    imported = import_bytes("sweep.jsonl", data)
    (run,) = imported.runs
    assert [level.load_value for level in run.levels] == [1, 8]
    assert [level.value("output_tok_s") for level in run.levels] == [
        898.9566477384187,
        4958.706048513109,
    ]
    assert run.workload.isl == round((1029 + 8210) / (8 + 64))


def test_json_lines_for_two_models_are_two_runs_with_distinct_keys() -> None:
    other = load(REAL / "c8.json") | {"model_id": "other-model"}
    data = (REAL / "c1.json").read_bytes().strip() + b"\n" + dumps(other)
    runs = import_bytes("sweep.jsonl", data).runs
    assert [run.deployment.model for run in runs] == ["tiny-random-llama", "other-model"]
    assert len({run.source_sha256 for run in runs}) == 2


def test_openai_backend_needs_the_engine_from_the_user() -> None:
    path = PEERS / "llm-d-benchmark__exp-7_H100_vllm-2replicas__benchmark_2025-05-13_04-55-27.json"
    with pytest.raises(InputError, match="--engine") as caught:
        import_path(path)
    assert caught.value.field == "engine" and "openai" in str(caught.value)


def test_no_completed_request_imports_no_zero_latencies() -> None:
    doc = load(REAL / "c1.json")
    doc.update(completed=0, failed=8, total_output_tokens=0, output_throughput=0.0)
    doc.pop("latencies")
    level = only_level(dumps(doc))
    assert level.value("mean_ttft_ms") is None and level.value("output_tok_s") == 0
    assert "no request completed" in (level.notes or "")


def test_unreadable_date_is_noted_not_fatal() -> None:
    doc = load(REAL / "c1.json")
    doc["date"] = "yesterday"
    (run,) = import_bytes("r.json", dumps(doc)).runs
    assert run.started_at is None and "'yesterday'" in (run.notes or "")


@pytest.mark.parametrize(
    ("change", "field", "value"),
    [
        ({"completed": 65}, "completed", 65),
        ({"completed": 60, "failed": 5}, "failed", 5),
        ({"duration": -1.0}, "duration", -1.0),
        ({"output_throughput": float("nan")}, "output_throughput", None),
        ({"output_throughput": "fast"}, "output_throughput", "fast"),
        ({"max_concurrency": 0}, "max_concurrency", 0),
        ({"request_rate": "lots", "max_concurrency": None}, "request_rate", "lots"),
        ({"p99_ttft_ms": -3.0}, "p99_ttft_ms", -3.0),
    ],
)
def test_inconsistent_or_bad_values_name_the_field(
    change: dict[str, object], field: str, value: object
) -> None:
    doc = load(REAL / "c8.json") | change
    with pytest.raises(InputError) as caught:
        import_bytes("bad.json", dumps(doc))
    assert caught.value.file == "bad.json" and caught.value.field == field
    if value is not None:
        assert caught.value.value == value


def test_nan_inside_a_per_request_list_names_the_entry() -> None:
    doc = load(REAL / "c2-detailed.json")
    doc["ttfts"][5] = float("nan")
    with pytest.raises(InputError, match="finite") as caught:
        import_bytes("bad.json", dumps(doc))
    assert caught.value.field == "ttfts[5]"


def test_per_request_lists_of_different_lengths_are_refused() -> None:
    doc = load(REAL / "c2-detailed.json")
    doc["latencies"] = doc["latencies"][:-1]
    with pytest.raises(InputError, match="differ in length"):
        import_bytes("bad.json", dumps(doc))


def test_completed_must_match_the_errors_list() -> None:
    doc = load(REAL / "c2-detailed.json")
    doc["errors"][0] = "boom"
    with pytest.raises(InputError) as caught:
        import_bytes("bad.json", dumps(doc))
    assert caught.value.field == "completed"


def test_latency_shorter_than_ttft_is_refused() -> None:
    doc = load(REAL / "c2-detailed.json")
    doc["latencies"][2] = doc["ttfts"][2] / 2
    with pytest.raises(InputError) as caught:
        import_bytes("bad.json", dumps(doc))
    assert caught.value.field == "latencies[2]"


def test_a_finite_rate_with_a_concurrency_cap_is_an_open_loop_level() -> None:
    doc = load(REAL / "c8.json") | {"request_rate": 1.0, "max_concurrency": 256}
    level = only_level(dumps(doc))
    assert level.load_kind is LoadKind.RATE and level.load_value == 1.0
    assert not level.burst
    assert level.notes is not None and "at most 256 in flight" in level.notes


def test_infinite_rate_without_a_cap_is_a_burst_kept_out_of_curves() -> None:
    doc = load(REAL / "c8.json") | {"max_concurrency": None}
    level = only_level(dumps(doc))
    assert level.load_kind is LoadKind.CONCURRENCY and level.load_value == 64
    assert level.burst
    (run,) = import_bytes("burst.json", dumps(doc)).runs
    assert curve_from_run(run) is None


def test_infinite_rate_with_a_cap_is_closed_loop() -> None:
    level = only_level((REAL / "c8.json").read_bytes())
    assert level.load_kind is LoadKind.CONCURRENCY and level.load_value == 8 and not level.burst


# --- TensorRT-LLM's fork of benchmark_serving.py -------------------------------------------

TRT_SERVING = FIXTURES / "trtllm-serving" / "trtllm-serving-c2-detailed.json"
TRT = DeploymentOverrides(engine="tensorrt-llm")


def test_trtllm_serving_result_is_detected_and_its_extras_kept_as_notes() -> None:
    doc = load(TRT_SERVING)
    imported = import_path(TRT_SERVING, overrides=TRT)
    assert imported.detected.startswith("TensorRT-LLM benchmark_serving.py")
    assert "--save-detailed" in imported.detected
    (run,) = imported.runs
    assert run.environment.client == "TensorRT-LLM benchmark_serving.py"
    assert run.deployment.engine == "tensorrt-llm"
    notes = run.notes or ""
    assert f"user_throughput={doc['user_throughput']:g} tok/s" in notes
    assert "TTFT included: not stream_tok_s" in notes
    assert "energy: total_energy_j=1234.5, total_gpu_power_w=310" in notes
    (level,) = run.levels
    assert level.value("output_tok_s") == doc["output_throughput"]
    # min/max statistics (only TRT-LLM's fork writes them) map like mean and median.
    assert level.value("min_ttft_ms") == doc["min_ttft_ms"]
    assert level.value("max_tpot_ms") == doc["max_tpot_ms"]
    assert level.value("p50_icl_ms") == doc["median_itl_ms"]


def test_trtllm_serving_e2els_are_the_per_request_latencies() -> None:
    doc = load(TRT_SERVING)
    level = only_level(TRT_SERVING.read_bytes(), TRT)
    assert [s.e2e_ms for s in level.samples] == pytest.approx([v * 1000 for v in doc["e2els"]])
    recomputed = level.value("mean_e2e_ms", Origin.RECOMPUTED)
    assert recomputed == pytest.approx(np.mean(doc["e2els"]) * 1000)


def test_trtllm_serving_bad_energy_block_names_the_field() -> None:
    doc = load(TRT_SERVING)
    doc["energy"] = {"total_energy_j": -3}
    with pytest.raises(InputError) as caught:
        only_level(dumps(doc), TRT)
    assert caught.value.field == "energy.total_energy_j"
