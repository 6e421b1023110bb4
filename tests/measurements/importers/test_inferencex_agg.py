"""InferenceX aggregated record importer: seconds -> ms, per-GPU -> per-replica (DERIVED)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from errors import InputError
from measurements.importers import DeploymentOverrides, import_bytes, import_path
from measurements.run_file import LoadKind, Origin

AGG = (
    Path(__file__).parents[2]
    / "fixtures/vllm-bench-serve/inferencex__agg_kimik2.5_1k1k_int4_vllm_conc4.json"
)


def record() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(AGG.read_bytes())
    return doc


def test_deployment_and_workload_come_from_the_record() -> None:
    imported = import_path(AGG)
    (run,) = imported.runs
    assert imported.format_id == "inferencex-agg"
    d = run.deployment
    assert (d.engine, d.model, d.precision, d.gpu, d.tp) == (
        "vllm",
        "moonshotai/Kimi-K2.5",
        "int4",
        "mi355x",
        8,
    )
    assert d.engine_version == "0.21.0" and d.engine_args["spec_decoding"] == "mtp"
    assert (run.workload.isl, run.workload.osl) == (1024, 1024)
    assert "ep: 1" in (run.notes or "") and "dp_attention: false" in (run.notes or "")


def test_latencies_in_seconds_become_ms() -> None:
    (run,) = import_path(AGG).runs
    (level,) = run.levels
    assert (level.load_kind, level.load_value) == (LoadKind.CONCURRENCY, 4)
    assert level.value("p99_ttft_ms") == pytest.approx(0.5859901384473777 * 1000)
    assert level.value("p50_tpot_ms") == pytest.approx(0.017393898241078155 * 1000)
    assert level.value("mean_icl_ms") == pytest.approx(0.04869889880906398 * 1000)
    assert level.value("p90_e2e_ms") == pytest.approx(17.897407873393966 * 1000)
    assert "p99.9_ttft" in (level.notes or "")


def test_per_gpu_throughput_times_tp_is_derived_with_its_source() -> None:
    (run,) = import_path(AGG).runs
    (level,) = run.levels
    (output,) = [m for m in level.metrics if m.name == "output_tok_s"]
    assert output.origin == Origin.DERIVED
    assert output.value == pytest.approx(27.678011491816765 * 8)
    assert (output.source_key, output.source_value) == ("output_tput_per_gpu", 27.678011491816765)
    assert level.value("total_tok_s") == pytest.approx(55.62670336516291 * 8)
    assert level.value("stream_tok_s", Origin.DERIVED) == 57.49142521935413


def test_gpu_override_replaces_hw_and_is_noted() -> None:
    overrides = DeploymentOverrides(gpu="MI355X-288GB")
    (run,) = import_path(AGG, overrides=overrides).runs
    assert run.deployment.gpu == "MI355X-288GB"
    assert "gpu: file said mi355x, user set MI355X-288GB" in (run.notes or "")


def test_trt_framework_is_tensorrt_llm() -> None:
    doc = record() | {"framework": "trt"}
    (run,) = import_bytes("agg.json", json.dumps(doc).encode()).runs
    assert run.deployment.engine == "tensorrt-llm"


@pytest.mark.parametrize(
    ("change", "field"),
    [({"p99_ttft": -0.1}, "p99_ttft"), ({"conc": 0}, "conc"), ({"tp": "eight"}, "tp")],
)
def test_bad_values_name_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as caught:
        import_bytes("agg.json", json.dumps(record() | change).encode())
    assert caught.value.field == field
