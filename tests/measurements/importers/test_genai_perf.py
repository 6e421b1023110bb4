"""GenAI-Perf importer: golden numbers are the ones GenAI-Perf wrote into the fixture file."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from errors import InputError
from measurements.importers import aiperf, genai_perf
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import LoadKind, Provenance, RunFile

FIXTURE = Path(__file__).parents[2] / "fixtures" / "genai-perf"
EXPORT = FIXTURE / "k8s-dev__profile_export_genai_perf.json"
VLLM = DeploymentOverrides(engine="vllm")


def load() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXPORT.read_text(encoding="utf-8"))
    return doc


def run_of(doc: dict[str, Any], overrides: DeploymentOverrides = VLLM) -> RunFile:
    data = json.dumps(doc).encode()
    (run,) = genai_perf.parse("export.json", doc, data, overrides, Provenance.IMPORTED)
    return run


def test_sniff_recognises_genai_perf_and_aiperf_declines() -> None:
    doc = load()
    assert genai_perf.sniff("x", doc) == "GenAI-Perf profile_export_genai_perf.json"
    assert aiperf.sniff("x", doc) is None
    del doc["input_config"]["perf_analyzer"]
    assert genai_perf.sniff("x", doc) is None


def test_matches_the_numbers_genai_perf_wrote() -> None:
    run = run_of(load())
    (level,) = run.levels
    assert (level.load_kind, level.load_value) == (LoadKind.CONCURRENCY, 1)  # stimulus
    assert level.value("request_s") == 0.4701030011153585  # request_throughput.avg
    assert level.value("output_tok_s") == 12.095750218698175  # output_token_throughput.avg
    assert level.value("mean_ttft_ms") == 1524.6265132  # time_to_first_token.avg
    assert level.value("p99_ttft_ms") == 2342.05304546  # time_to_first_token.p99
    assert level.value("p99_e2e_ms") == 2645.8837561799996  # request_latency.p99
    assert level.value("mean_tpot_ms") == 7.7534012  # inter_token_latency.avg
    assert level.value("stream_tok_s") == 129.22766466149542  # ..._per_user.avg
    assert level.completed == 35  # request_count.avg
    assert level.duration_s is None and level.output_tokens_total is None  # not in the file
    assert (run.workload.isl, run.workload.osl) == (153, 74)  # round(152.657), round(73.514)
    assert run.deployment.model == "openai/gpt-oss-20b"  # input_config.model_names
    assert not [m for m in level.metrics if "_itl_" in m.name or "_icl_" in m.name]


def test_openai_service_kind_ignores_the_default_backend() -> None:
    # input_config.endpoint.backend is "tensorrtllm" (the default) while the URL is vllm-service.
    with pytest.raises(InputError, match="--engine"):
        run_of(load(), DeploymentOverrides())
    assert "'tensorrtllm' ignored" in (run_of(load()).notes or "")


def test_triton_backend_names_the_engine() -> None:
    doc = load()
    doc["input_config"]["endpoint"]["service_kind"] = "triton"
    run = run_of(doc, DeploymentOverrides())
    assert run.deployment.engine == "tensorrt-llm"


def test_request_rate_stimulus_is_an_open_loop_level() -> None:
    doc = load()
    doc["input_config"]["perf_analyzer"]["stimulus"] = {"request_rate": 4.0}
    (level,) = run_of(doc).levels
    assert (level.load_kind, level.load_value) == (LoadKind.RATE, 4.0)


def test_missing_stimulus_names_the_field() -> None:
    doc = load()
    del doc["input_config"]["perf_analyzer"]["stimulus"]
    with pytest.raises(InputError) as info:
        run_of(doc)
    assert info.value.field == "input_config.perf_analyzer.stimulus"


@pytest.mark.parametrize("bad", [math.nan, -3.0])
def test_a_bad_number_names_the_field(bad: float) -> None:
    doc = load()
    doc["time_to_first_token"]["avg"] = bad
    with pytest.raises(InputError) as info:
        run_of(doc)
    assert info.value.field == "time_to_first_token.avg"
