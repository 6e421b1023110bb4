"""AIPerf importer: golden numbers are the ones AIPerf wrote into the fixture files."""

from __future__ import annotations

import copy
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from errors import InputError
from measurements.importers import aiperf, genai_perf
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import Level, LoadKind, Provenance, RunFile

FIXTURES = Path(__file__).parents[2] / "fixtures" / "aiperf"
FLAT = FIXTURES / "k8s-dev__profile_export_aiperf.json"
EARLY = FIXTURES / "aiperf-examples-run1__profile_export_aiperf_early-format.json"
VLLM = DeploymentOverrides(engine="vllm")


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def run_of(doc: dict[str, Any], overrides: DeploymentOverrides = VLLM) -> RunFile:
    data = json.dumps(doc).encode()
    (run,) = aiperf.parse("export.json", doc, data, overrides, Provenance.IMPORTED)
    return run


def level_of(doc: dict[str, Any]) -> Level:
    (level,) = run_of(doc).levels
    return level


def test_sniff_tells_the_two_layouts_apart_and_genai_perf_declines() -> None:
    flat, early = load(FLAT), load(EARLY)
    assert "flat layout" in (aiperf.sniff("x", flat) or "")
    assert "early layout" in (aiperf.sniff("x", early) or "")
    assert genai_perf.sniff("x", flat) is None and genai_perf.sniff("x", early) is None
    assert aiperf.sniff("x", {"request_throughput": 1.0}) is None


def test_flat_layout_matches_the_numbers_aiperf_wrote() -> None:
    run = run_of(load(FLAT))
    (level,) = run.levels
    assert (level.load_kind, level.load_value, level.burst) == (LoadKind.CONCURRENCY, 1, False)
    assert level.value("request_s") == 0.19245648570156926  # request_throughput.avg
    assert level.value("output_tok_s") == 54.55756456668085  # output_token_throughput.avg
    assert level.value("mean_ttft_ms") == 82.84651240000001  # time_to_first_token.avg
    assert level.value("p99_ttft_ms") == 99.64934874000001  # time_to_first_token.p99
    assert level.value("p50_e2e_ms") == 5230.033456499999  # request_latency.p50
    assert level.value("stream_tok_s") == 55.485253498122844  # ..._per_user.avg
    assert level.duration_s == 519.597973721  # benchmark_duration.avg (sec)
    assert (level.completed, level.failed) == (100, 0)  # request_count.avg, error_summary []
    assert (level.input_tokens_total, level.output_tokens_total) == (19637, 28348)  # total_isl/osl
    assert (run.workload.isl, run.workload.osl) == (196, 283)  # round(196.37), round(283.48)
    assert run.deployment.model == "openai/gpt-oss-20b"  # input_config.endpoint.model_names
    assert run.environment.gpu_name == "NVIDIA A100-SXM4-80GB"  # telemetry_data
    # min_request_timestamp.avg 1.7684584541734423e+18 ns; start_time "2026-01-15T06:27:34.166"
    assert run.started_at is not None
    assert run.started_at.replace(microsecond=0) == datetime(2026, 1, 15, 6, 27, 34, tzinfo=UTC)


def test_inter_token_latency_is_tpot_and_inter_chunk_latency_is_icl() -> None:
    level = level_of(load(FLAT))
    assert level.value("mean_tpot_ms") == 18.03231861805396  # inter_token_latency.avg
    assert level.value("p99_tpot_ms") == 19.047832429846817  # inter_token_latency.p99
    assert level.value("max_icl_ms") == 140.020324  # inter_chunk_latency.max
    assert not [m for m in level.metrics if "_itl_" in m.name]
    by_name = {m.name: m for m in level.metrics}
    assert by_name["p99_tpot_ms"].source_key == "inter_token_latency.p99"
    assert by_name["p99_tpot_ms"].source_value == 19.047832429846817


def test_early_records_layout_matches_the_numbers_aiperf_wrote() -> None:
    run = run_of(load(EARLY))
    (level,) = run.levels
    assert level.value("mean_ttft_ms") == 2343.219436988764  # records.ttft.avg
    assert level.value("p99_e2e_ms") == 9297.609933759999  # records.request_latency.p99
    assert level.value("mean_tpot_ms") == 27.763065454471807  # records.inter_token_latency.avg
    assert level.value("output_tok_s") == 2320.7222350404572  # records.output_token_throughput
    assert (level.completed, level.failed) == (89, 11)  # request_count, error_request_count
    assert level.duration_s == 9.317788951  # records.benchmark_duration.avg
    # loadgen.concurrency 100 with loadgen.request_count 100: all in flight at once.
    assert (level.load_kind, level.load_value, level.burst) == (LoadKind.CONCURRENCY, 100, True)
    by_name = {m.name: m for m in level.metrics}
    assert by_name["mean_ttft_ms"].source_key == "records.ttft.avg"
    assert "include the 11 failed requests" in (level.notes or "")


def test_percentiles_the_file_lacks_stay_unknown() -> None:
    doc = load(FLAT)
    del doc["time_to_first_token"]["p99"]
    level = level_of(doc)
    assert level.value("p99_ttft_ms") is None
    assert level.value("p95_ttft_ms") == 86.99166514999999


def test_seconds_are_converted_to_ms_and_keep_the_source_value() -> None:
    doc = load(FLAT)
    doc["time_to_first_token"] = {"unit": "s", "avg": 0.25, "p99": 0.5}
    by_name = {m.name: m for m in level_of(doc).metrics}
    assert by_name["mean_ttft_ms"].value == 250.0
    assert by_name["p99_ttft_ms"].source_value == 0.5


def test_request_rate_in_input_config_is_an_open_loop_level() -> None:
    doc = load(FLAT)
    doc["input_config"]["loadgen"]["request_rate"] = 2.5
    level = level_of(doc)
    assert (level.load_kind, level.load_value) == (LoadKind.RATE, 2.5)
    assert "open loop at 2.5 req/s" in (level.notes or "")


def test_without_a_load_in_input_config_nothing_is_guessed() -> None:
    doc = load(FLAT)
    del doc["input_config"]["loadgen"]["concurrency"]
    with pytest.raises(InputError) as info:
        run_of(doc)
    assert info.value.field == "input_config.loadgen.concurrency"
    del doc["input_config"]
    with pytest.raises(InputError) as info:
        run_of(doc)
    assert info.value.field == "input_config"


def test_the_engine_must_come_from_overrides() -> None:
    with pytest.raises(InputError, match="--engine") as info:
        run_of(load(FLAT), DeploymentOverrides())
    assert info.value.field == "engine"


@pytest.mark.parametrize("bad", [math.nan, -1.0, "fast"])
def test_a_bad_number_names_the_field(bad: object) -> None:
    doc = copy.deepcopy(load(FLAT))
    doc["request_latency"]["p90"] = bad
    with pytest.raises(InputError) as info:
        run_of(doc)
    assert info.value.field == "request_latency.p90"


def test_a_cancelled_run_is_marked_incomplete() -> None:
    doc = load(FLAT)
    doc["was_cancelled"] = True
    assert run_of(doc).complete is False
