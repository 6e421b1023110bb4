"""Synthetic probe-like runs for bench/bench_scale.py: engines, GPUs, models and workloads cycle
with the run index, levels follow the step-time law T(c) = c / (a + b*c), and each level carries
its requests' samples."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from measurements.run_file import (
    Deployment,
    Level,
    LoadKind,
    Metric,
    Provenance,
    RequestSample,
    RunFile,
    Source,
    Workload,
)

CONCURRENCY = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256)
ENGINES = ("vllm", "tensorrt-llm", "sglang")
GPUS = ("H100-SXM-80GB", "H200-SXM-141GB", "A100-SXM-80GB", None)
MODELS = (
    "meta-llama/Llama-3.1-70B-Instruct",
    "meta-llama/Llama-3.1-8B-Instruct",
    "Qwen/Qwen2.5-72B-Instruct",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
)
WORKLOADS = ((1024, 1024), (3000, 300), (128, 2048), (8000, 500))
GAPS_PER_SAMPLE = 8


def synthetic_run(index: int, samples: int, rng: np.random.Generator) -> RunFile:
    """One run shaped like a probe sweep: 1-12 concurrency levels on the step-time law
    T(c) = c / (a + b*c), the usual rate and latency metrics, and `samples` requests."""
    gpu = GPUS[index % len(GPUS)]
    engine = ENGINES[(index // 4) % len(ENGINES)]
    model = MODELS[(index // 12) % len(MODELS)]
    isl, osl = WORKLOADS[(index // 60) % len(WORKLOADS)]
    tp = (8, 4, 2)[(index // 240) % 3]
    a_s = 0.0145 * rng.uniform(0.8, 1.2) * (0.75 if gpu == "H200-SXM-141GB" else 1.0)
    b_s = 0.000156 * rng.uniform(0.8, 1.2)
    n_levels = int(rng.integers(1, 13))
    per_level = np.diff(np.linspace(0, samples, n_levels + 1).astype(int))
    levels = tuple(
        _level(c, Shape(a_s, b_s, isl, osl), int(n), rng)
        for c, n in zip(CONCURRENCY[:n_levels], per_level, strict=True)
    )
    return RunFile(
        source=Source.PROBE,
        provenance=Provenance.MEASURED,
        deployment=Deployment(
            engine=engine,
            engine_version=f"0.{6 + index % 4}.0",
            model=model,
            precision="fp8",
            gpu=gpu,
            gpu_count=tp,
            tp=tp,
        ),
        workload=Workload(isl=isl, osl=osl),
        levels=levels,
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        label=f"bench-{index}",
        notes=f"synthetic scale run {index}",
        origin_file=f"bench/run-{index}.json",
    )


@dataclass(frozen=True, slots=True)
class Shape:
    """A deployment's step-time law T(c) = c / (a + b*c) and its workload."""

    a_s: float
    b_s: float
    isl: int
    osl: int


def _level(c: int, shape: Shape, n: int, rng: np.random.Generator) -> Level:
    isl, osl = shape.isl, shape.osl
    step_ms = (shape.a_s + shape.b_s * c) * 1000
    out_tok_s = c / (shape.a_s + shape.b_s * c)
    ttft_ms = 40.0 + 0.05 * isl * (1 + c / 64)
    values = {
        "output_tok_s": out_tok_s,
        "total_tok_s": out_tok_s * (1 + isl / osl),
        "request_s": out_tok_s / osl,
        "stream_tok_s": 1000 / step_ms,
        "p50_ttft_ms": ttft_ms,
        "p90_ttft_ms": ttft_ms * 1.4,
        "p99_ttft_ms": ttft_ms * 2.0,
        "p50_tpot_ms": step_ms,
        "p99_tpot_ms": step_ms * 1.2,
        "p50_itl_ms": step_ms,
        "p99_itl_ms": step_ms * 1.5,
        "p50_e2e_ms": ttft_ms + step_ms * osl,
        "p99_e2e_ms": (ttft_ms + step_ms * osl) * 1.2,
    }
    metrics = tuple(Metric(name=k, value=round(v, 3)) for k, v in values.items())
    gaps = rng.gamma(4.0, step_ms / 4, size=(n, GAPS_PER_SAMPLE)).round(3)
    samples = tuple(
        RequestSample.model_construct(
            send_s=round(i * 0.01, 3),
            ttft_ms=round(ttft_ms, 3),
            e2e_ms=round(ttft_ms + step_ms * osl, 3),
            input_tokens=isl,
            output_tokens=osl,
            chunk_gaps_ms=tuple(row.tolist()),
            http_status=200,
            error=None,
        )
        for i, row in enumerate(gaps)
    )
    return Level(
        load_kind=LoadKind.CONCURRENCY,
        load_value=c,
        duration_s=60.0,
        requests_sent=n,
        completed=n,
        failed=0,
        metrics=metrics,
        samples=samples,
    )


def batches(runs: int, samples: int, batch: int) -> Iterator[list[RunFile]]:
    """`runs` synthetic runs sharing `samples` requests, `batch` runs per list (seeded)."""
    rng = np.random.default_rng(7)
    per_run = np.diff(np.linspace(0, samples, runs + 1).astype(int))
    for start in range(0, runs, batch):
        stop = min(start + batch, runs)
        yield [synthetic_run(i, int(per_run[i]), rng) for i in range(start, stop)]
