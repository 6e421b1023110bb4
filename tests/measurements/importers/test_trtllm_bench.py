"""trtllm-bench importer: golden numbers are the ones written into the hand-made report fixture
(see tests/fixtures/trtllm-bench/SOURCES.md), checked key by key against the file itself."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from errors import InputError
from measurements.importers import trtllm_bench
from measurements.importers.common import NO_OVERRIDES, DeploymentOverrides
from measurements.run_file import Level, LoadKind, Origin, Provenance, RunFile, Source

REPORT = Path(__file__).parents[2] / "fixtures" / "trtllm-bench" / "report.json"


def load() -> Any:
    return json.loads(REPORT.read_text(encoding="utf-8"))


def parse(doc: object, overrides: DeploymentOverrides = NO_OVERRIDES) -> RunFile:
    data = json.dumps(doc).encode()
    (run,) = trtllm_bench.parse("report.json", doc, data, overrides, Provenance.IMPORTED)
    return run


def only_level(doc: object) -> Level:
    (level,) = parse(doc).levels
    return level


def test_sniff_recognises_reports_and_ignores_others() -> None:
    doc = load()
    assert (
        trtllm_bench.sniff("r.json", doc) == "trtllm-bench --report_json (with streaming metrics)"
    )
    del doc["streaming_metrics"]
    assert "no streaming metrics" in (trtllm_bench.sniff("r.json", doc) or "")
    assert (
        trtllm_bench.sniff("x.json", {"request_throughput": 1.0, "output_throughput": 2.0}) is None
    )
    assert trtllm_bench.sniff("x.json", {**load(), "performance": None}) is None
    assert trtllm_bench.sniff("x.json", [load()]) is None


def test_deployment_and_workload_come_from_the_report() -> None:
    run = parse(load())
    assert run.source is Source.TRTLLM_BENCH
    d = run.deployment
    # engine.version "1.2.0rc1", engine.model, engine.quantization "FP8"
    assert (d.engine, d.engine_version, d.model) == (
        "tensorrt-llm",
        "1.2.0rc1",
        "meta-llama/Llama-3.1-70B-Instruct",
    )
    assert d.precision == "fp8"
    # machine.name "NVIDIA H100 80GB HBM3"; world_info tp_size 8, pp_size 1, world_size 8
    assert (d.gpu, d.tp, d.pp, d.gpu_count) == ("H100-SXM-80GB", 8, 1, 8)
    assert run.environment.gpu_name == "NVIDIA H100 80GB HBM3"
    assert run.environment.client == "trtllm-bench"
    # request_info avg_input_length 1024.0 / avg_output_length 128.0; dataset min == max
    w = run.workload
    assert (w.isl, w.osl, w.isl_distribution, w.osl_distribution) == (1024, 128, "fixed", "fixed")


def test_metrics_match_the_numbers_the_report_holds() -> None:
    doc = load()
    perf, streaming = doc["performance"], doc["streaming_metrics"]
    level = only_level(doc)
    assert level.value("output_tok_s") == perf["system_output_throughput_tok_s"]
    assert level.value("output_tok_s") == pytest.approx(512 * 128 / 61.44)
    assert level.value("total_tok_s") == pytest.approx(512 * 1152 / 61.44)
    assert level.value("request_s") == pytest.approx(512 / 61.44)
    assert level.duration_s == pytest.approx(61.44)  # total_latency_ms 61440
    assert (level.requests_sent, level.completed, level.failed) == (512, 512, None)
    pairs = {"average": "mean", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99"}
    pairs |= {"minimum": "min", "maximum": "max"}
    for key, stat in pairs.items():
        assert level.value(f"{stat}_e2e_ms") == perf["request_latency_percentiles_ms"][key]
        assert level.value(f"{stat}_ttft_ms") == streaming["ttft_percentiles"][key]
        assert level.value(f"{stat}_tpot_ms") == streaming["tpot_percentiles"][key]
    assert level.value("p99_ttft_ms") == 2788.75
    assert level.value("p99_tpot_ms") == 69.125
    assert level.value("stream_tok_s") == streaming["token_output_speed_tok_s"] == 21.0625
    assert all(m.origin is Origin.REPORTED for m in level.metrics)
    p99 = next(m for m in level.metrics if m.name == "p99_e2e_ms")
    assert p99.source_key == "performance.request_latency_percentiles_ms.p99"


def test_per_user_throughput_with_ttft_is_only_a_note() -> None:
    level = only_level(load())
    # output_throughput_per_user_tok_s 18.4505 includes TTFT: never stream_tok_s
    assert level.value("stream_tok_s") != 18.4505
    assert "output_throughput_per_user_tok_s=18.4505" in (level.notes or "")
    assert "output_throughput_per_gpu_tok_s=133.333" in (level.notes or "")
    assert "nearest-rank" in (level.notes or "")


def test_a_report_without_a_concurrency_setting_is_an_offline_level_not_a_concurrency() -> None:
    # Issue 15 item 6: the average in flight used to be stored as an (unstated) concurrency.
    level = only_level(load())
    assert (level.load_kind, level.load_value, level.load_stated) == (
        LoadKind.OFFLINE,
        512,
        True,
    )
    assert "avg_num_concurrent_requests=57.8125" in (level.notes or "")
    assert "offline (max-throughput)" in (level.notes or "")


def test_a_stated_concurrency_setting_is_a_stated_level() -> None:
    doc = load()
    doc["world_info"]["concurrency"] = 64
    level = only_level(doc)
    assert (level.load_kind, level.load_value, level.load_stated) == (
        LoadKind.CONCURRENCY,
        64,
        True,
    )


def test_without_streaming_there_is_no_ttft_or_tpot() -> None:
    doc = load()
    del doc["streaming_metrics"]
    level = only_level(doc)
    assert level.value("p99_ttft_ms") is None
    assert level.value("p99_tpot_ms") is None
    assert level.value("stream_tok_s") is None
    assert level.value("p99_e2e_ms") == 9531.0
    assert "--streaming" in (level.notes or "")


@pytest.mark.parametrize(
    ("name", "gpu"),
    [
        ("NVIDIA H200", "H200-SXM-141GB"),
        ("NVIDIA H100 PCIe", None),
        ("NVIDIA A100-SXM4-80GB", None),
    ],
)
def test_gpu_is_set_only_for_h100_h200_sxm_names(name: str, gpu: str | None) -> None:
    doc = load()
    doc["machine"]["name"] = name
    run = parse(doc)
    assert run.deployment.gpu == gpu
    assert run.environment.gpu_name == name
    if gpu is None:
        assert "gpu left unset" in (run.notes or "")


def test_null_machine_leaves_gpu_unknown() -> None:
    doc = load()
    doc["machine"] = None
    run = parse(doc)
    assert (run.deployment.gpu, run.environment.gpu_name) == (None, None)


def test_overrides_replace_the_file_and_conflicts_are_noted() -> None:
    run = parse(load(), DeploymentOverrides(gpu="H200-SXM-141GB", tp=4))
    assert (run.deployment.gpu, run.deployment.tp) == ("H200-SXM-141GB", 4)
    assert "tp: file said 8, user set 4" in (run.notes or "")


def test_precision_falls_back_to_dtype_without_quantization() -> None:
    doc = load()
    doc["engine"]["quantization"] = None
    assert parse(doc).deployment.precision == "bf16"


def _broken(path: tuple[str, ...], value: object) -> Any:
    doc = copy.deepcopy(load())
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("performance", "system_output_throughput_tok_s"), "fast", "performance."),
        (("performance", "request_throughput_req_s"), -1.0, "performance."),
        (("performance", "total_latency_ms"), 0, "performance.total_latency_ms"),
        (("performance", "request_latency_percentiles_ms"), [1, 2], "performance."),
        (("streaming_metrics", "ttft_percentiles", "p99"), "x", "streaming_metrics."),
        (("request_info", "avg_num_concurrent_requests"), 0, "request_info."),
        (("request_info", "avg_num_concurrent_requests"), None, "request_info."),
        (("request_info", "num_requests"), 1.5, "request_info.num_requests"),
        (("world_info", "tp_size"), 0, "world_info.tp_size"),
        (("world_info", "concurrency"), 0, "world_info.concurrency"),
        (("engine", "version"), 1.2, "engine.version"),
        (("machine",), "H100", "machine"),
        (("streaming_metrics",), [], "streaming_metrics"),
    ],
)
def test_bad_values_name_the_file_and_field(
    path: tuple[str, ...], value: object, field: str
) -> None:
    with pytest.raises(InputError) as caught:
        parse(_broken(path, value))
    assert caught.value.file == "report.json"
    assert (caught.value.field or "").startswith(field)


def test_a_report_without_a_model_asks_for_one() -> None:
    doc = _broken(("engine", "model"), None)
    with pytest.raises(InputError, match="--model") as caught:
        parse(doc)
    assert caught.value.field == "model"
    assert parse(doc, DeploymentOverrides(model="m")).deployment.model == "m"


def test_parse_refuses_other_documents() -> None:
    with pytest.raises(InputError, match="not a trtllm-bench"):
        parse({"performance": {}})
