"""RunFile -> LoadCurve: concurrency levels only, failures kept out with a flag, names canonical."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

from measurements.run_file import (
    Deployment,
    Level,
    LoadKind,
    Metric,
    Origin,
    Provenance,
    RunFile,
    Source,
    Startup,
    Workload,
)
from planner.curves.load import CurveKey, curve_from_run
from planner.curves.names import canonical_engine, canonical_gpu, canonical_model
from planner.fitting.fit import fit_curve


def _level(
    kind: LoadKind, value: float, tok_s: float, *, failed: int = 0, extra: tuple[Metric, ...] = ()
) -> Level:
    return Level(
        load_kind=kind,
        load_value=value,
        completed=100,
        failed=failed,
        metrics=(Metric(name="output_tok_s", value=tok_s), *extra),
    )


def _run(levels: tuple[Level, ...], **deployment: object) -> RunFile:
    dep = {"engine": "TensorRT-LLM", "model": "meta-llama/Llama-3.1-70B", "gpu": "H100 SXM"}
    dep.update(deployment)
    return RunFile(
        source=Source.TRTLLM_BENCH,
        provenance=Provenance.IMPORTED,
        deployment=Deployment.model_validate(dep),
        workload=Workload(isl=1024, osl=1024),
        startup=Startup(engine_build_s=840.0, cold_start_s=30.0),
        levels=levels,
    )


def test_rate_levels_are_skipped_and_flagged() -> None:
    run = _run(
        (
            _level(LoadKind.CONCURRENCY, 8, 500.0),
            _level(LoadKind.RATE, 2.0, 300.0),
            _level(LoadKind.CONCURRENCY, 1, 80.0),
        ),
        tp=2,
    )
    curve = curve_from_run(run, run_id=7)
    assert curve is not None
    assert curve.concurrencies() == (1.0, 8.0)  # sorted, rate level gone
    assert any("request-rate level" in flag for flag in curve.flags)
    assert curve.run_id == 7 and curve.provenance == "imported"
    assert curve.engine_build_s == 840.0 and curve.cold_start_s == 30.0


def test_level_above_failure_threshold_is_dropped_with_its_rate() -> None:
    run = _run(
        (
            _level(LoadKind.CONCURRENCY, 1, 80.0),
            _level(LoadKind.CONCURRENCY, 64, 2000.0, failed=10),
        ),
        tp=1,
    )
    curve = curve_from_run(run)
    assert curve is not None and curve.concurrencies() == (1.0,)
    assert any("concurrency 64 left out" in f and "9.1%" in f for f in curve.flags)
    # A looser threshold keeps it.
    loose = curve_from_run(run, max_failure_rate=0.2)
    assert loose is not None and loose.concurrencies() == (1.0, 64.0)


def test_rate_levels_are_kept_apart_from_the_concurrency_points() -> None:
    # Issue 21 item 3: request-rate runs are planned (through the serving model), never read
    # as if their rate were a concurrency.
    levels = (_level(LoadKind.RATE, 2.0, 20.0), _level(LoadKind.RATE, 1.0, 10.0))
    curve = curve_from_run(_run(levels))
    assert curve is not None and curve.points == ()
    assert [p.concurrency for p in curve.rate_points] == [1.0, 2.0]
    assert any("request-rate levels at 1, 2 requests/s" in f for f in curve.flags)


def test_reported_value_wins_over_recomputed_and_stats_are_kept_apart() -> None:
    metrics = (
        Metric(name="p99_ttft_ms", value=120.0),
        Metric(name="p99_ttft_ms", value=999.0, origin=Origin.RECOMPUTED),
        Metric(name="ttft_ms", value=80.0),
        Metric(name="p99_tpot_ms", value=25.0, origin=Origin.DERIVED),
    )
    run = _run((_level(LoadKind.CONCURRENCY, 4, 300.0, extra=metrics),), tp=1)
    curve = curve_from_run(run)
    assert curve is not None
    point = curve.points[0]
    assert point.p99_ttft_ms == 120.0 and point.ttft_ms == 80.0 and point.p99_tpot_ms == 25.0
    assert point.p50_ttft_ms is None and point.tpot_ms is None


def test_a_mean_latency_is_kept_as_a_mean_not_dropped_or_relabelled() -> None:
    metrics = (Metric(name="mean_ttft_ms", value=95.0), Metric(name="mean_tpot_ms", value=21.0))
    run = _run((_level(LoadKind.CONCURRENCY, 4, 300.0, extra=metrics),), tp=1)
    curve = curve_from_run(run)
    assert curve is not None
    point = curve.points[0]
    assert point.mean_ttft_ms == 95.0 and point.mean_tpot_ms == 21.0
    assert point.ttft_ms is None and point.p50_ttft_ms is None and point.tpot_ms is None


def test_the_stated_kv_cache_dtype_travels_with_the_curve() -> None:
    level = _level(LoadKind.CONCURRENCY, 4, 300.0)
    stated = curve_from_run(_run((level,), tp=1, engine_args={"kv_cache_dtype": "fp8"}))
    unstated = curve_from_run(_run((level,), tp=1))
    assert stated is not None and stated.kv_cache_dtype == "fp8"
    assert unstated is not None and unstated.kv_cache_dtype is None


def test_the_engines_kv_cache_report_travels_with_the_curve() -> None:
    level = _level(LoadKind.CONCURRENCY, 4, 300.0)
    run = _run((level,), tp=1)
    said = run.model_copy(
        update={"startup": Startup(max_concurrency=12.5, max_concurrency_at_tokens=8192)}
    )
    reported = curve_from_run(said)
    assert reported is not None and reported.engine_kv is not None
    assert reported.engine_kv.tokens == 102_400.0  # 12.5 requests of 8,192 tokens
    plain = curve_from_run(run)
    assert plain is not None and plain.engine_kv is None


@pytest.mark.parametrize(
    ("deployment", "gpus", "flag"),
    [
        ({"tp": 4, "pp": 2, "gpu_count": 8}, 8, None),
        ({"tp": 2}, 2, None),
        ({"gpu_count": 4}, 4, "TP not given; 4 GPU(s) per replica from its GPU count"),
        ({}, None, "GPUs per replica not stated (neither TP nor GPU count): cannot be sized"),
    ],
)
def test_gpus_per_replica_is_never_guessed(
    deployment: dict[str, int], gpus: int | None, flag: str | None
) -> None:
    curve = curve_from_run(_run((_level(LoadKind.CONCURRENCY, 1, 50.0),), **deployment))
    assert curve is not None and curve.gpus_per_replica == gpus
    if flag is None:
        assert not any("per replica" in f for f in curve.flags)
    else:
        assert flag in curve.flags


def test_curve_key_is_canonical_and_labelled() -> None:
    curve = curve_from_run(
        _run((_level(LoadKind.CONCURRENCY, 1, 50.0),), engine_version="0.17.0", gpu_count=1)
    )
    assert curve is not None
    assert curve.key.engine == "tensorrt-llm" and curve.key.gpu == "H100-SXM-80GB"
    assert curve.label_text() == "tensorrt-llm 0.17.0 · H100-SXM-80GB x1 · TP? · 1024/1024"


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("meta-llama/Llama-3.1-70B", "llama-3.1-70b"),
        ("nvidia/Llama-3.1-70B-Instruct-FP8", "llama-3.1-70b"),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("/models/Qwen3-32B/", "qwen3-32b"),
        ("/models/models--openai--gpt-oss-120b/snapshots/b5c939de8f75", "gpt-oss-120b"),
        ("/data/hf/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f2", "llama-3.1-8b"),
    ],
)
def test_canonical_model(name: str, canonical: str) -> None:
    assert canonical_model(name) == canonical
    assert canonical_model(canonical) == canonical  # an identity stays itself


def test_a_curve_key_holds_its_model_identity_from_where_it_is_built() -> None:
    key = CurveKey("vllm", None, "nvidia/Llama-3.1-70B-Instruct-FP8", "fp8", None, 8, 8, 1, 1)
    assert key.model_id == "llama-3.1-70b"
    moved = replace(key, model="/models/models--openai--gpt-oss-120b/snapshots/b5c9", isl=2)
    assert moved.model_id == "gpt-oss-120b"  # a changed key is built again, never stale
    assert replace(key, isl=2).model_id == "llama-3.1-70b"
    assert key == replace(key) and hash(key) == hash(replace(key))
    assert "model_id" not in repr(key)
    assert pickle.loads(pickle.dumps(key)).model_id == "llama-3.1-70b"  # Streamlit's caches


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("H100-SXM5-80GB", "H100-SXM-80GB"),
        ("h100_sxm", "H100-SXM-80GB"),
        ("H100 SXM", "H100-SXM-80GB"),
        ("NVIDIA H100 80GB HBM3", "H100-SXM-80GB"),
        ("H200-SXM-141GB", "H200-SXM-141GB"),
        ("NVIDIA H200", "H200-SXM-141GB"),
        ("GH200", "GH200"),
        ("H100 PCIe", "H100 PCIe"),
        ("A100-80GB", "A100-80GB"),
    ],
)
def test_canonical_gpu(name: str, canonical: str) -> None:
    assert canonical_gpu(name) == canonical


def test_canonical_engine() -> None:
    assert canonical_engine("TRTLLM") == "tensorrt-llm"
    assert canonical_engine("TensorRT-LLM") == "tensorrt-llm"
    assert canonical_engine("vLLM") == "vllm"
    assert canonical_engine("sglang") == "sglang"


def _offline_run(offline_tok_s: float) -> RunFile:
    # SYNTHETIC sweep (not measured): T(c) = c / (0.012 + 0.00018 c) at 1-64 streams, with a
    # trtllm-bench throughput run of 512 requests (an offline level) beside it.
    levels = tuple(
        _level(LoadKind.CONCURRENCY, c, c / (0.012 + 0.00018 * c)) for c in (1, 4, 16, 64)
    )
    return _run((*levels, _level(LoadKind.OFFLINE, 512, offline_tok_s)), tp=8)


def test_an_offline_level_is_a_ceiling_on_the_curve_never_a_concurrency() -> None:
    curve = curve_from_run(_offline_run(4_500.0))
    assert curve is not None
    assert curve.concurrencies() == (1.0, 4.0, 16.0, 64.0)  # 512 is a request count, not a level
    assert curve.ceiling_output_tok_s == 4_500.0
    assert any("offline (max-throughput) output 4,500 tok/s" in flag for flag in curve.flags)
    fit = fit_curve(curve)
    assert fit.throughput is not None
    assert float(fit.throughput.eval([10_000.0])[0]) <= 4_500.0  # past the data, never above it
    assert not any("disagree" in flag for flag in fit.flags)


def test_a_level_above_the_offline_ceiling_is_flagged_and_the_fit_capped() -> None:
    curve = curve_from_run(_offline_run(2_000.0))  # c=64 measured 2,721 tok/s
    assert curve is not None
    fit = fit_curve(curve)
    assert fit.throughput is not None
    assert float(fit.throughput.eval([64.0])[0]) == 2_000.0
    assert any("above the offline (max-throughput) 2,000" in flag for flag in fit.flags)
    assert any("capped at the offline maximum" in flag for flag in fit.flags)
