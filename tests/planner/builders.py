"""Curves and scenarios for the planner tests: the seed article numbers, the silicon sample."""

from __future__ import annotations

import csv
import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from planner.curves.kv_report import EngineKvReport
from planner.curves.load import CurveKey, CurvePoint, LoadCurve
from planner.curves.names import canonical_gpu
from planner.inputs.scenario import Scenario, scenario_from_dict
from planner.sizing.options import Option

ROOT = Path(__file__).resolve().parents[2]
SILICON_CSV = ROOT / "measurements" / "demo" / "data" / "silicon_sample_h100_h200.csv"
SEED_STREAMS = (1, 16, 64, 128)
# The seed article's throughput table (tok/s at 1/16/64/128 streams), shared/seed-article.txt.
SEED_VLLM = (68.2, 1010.0, 2840.0, 3710.0)
SEED_TRTLLM = (81.4, 1240.0, 3620.0, 4890.0)


def seed_curve(
    engine: str, values: tuple[float, ...], engine_build_s: float | None = None
) -> LoadCurve:
    """A seed-article curve: one H100, TP not stated, ISL/OSL not stated."""
    version = "0.7.3" if engine == "vllm" else "0.17.0"
    key = CurveKey(
        engine,
        version,
        "meta-llama/Llama-3.1-70B-Instruct",
        "fp8",
        "H100-SXM-80GB",
        1,
        None,
        None,
        None,
    )
    points = tuple(
        CurvePoint(float(c), output_tok_s=v) for c, v in zip(SEED_STREAMS, values, strict=True)
    )
    return LoadCurve(
        key,
        points,
        None,
        "published",
        "seed article",
        None,
        engine_build_s,
        1,
        ("GPUs per replica not stated; assumed 1",),
    )


def seed_curves() -> list[LoadCurve]:
    """vLLM and TensorRT-LLM (14-minute engine build) from the seed article."""
    return [seed_curve("vllm", SEED_VLLM), seed_curve("tensorrt-llm", SEED_TRTLLM, 840.0)]


def scenario(**overrides: object) -> Scenario:
    """Seed scenario: Llama-3.1-70B fp8, 20 req/s at OSL 500, 40 tok/s per stream (overridable)."""
    raw: dict[str, object] = {
        "name": "seed",
        "model": "meta-llama/Llama-3.1-70B",
        "precision": "fp8",
        "workload": {"isl": 1000, "osl": 500},
        "demand": {"peak_requests_per_s": 20},
        "sla": {"min_stream_tok_s": 40},
        "candidates": {"engines": ["vllm", "tensorrt-llm"], "gpus": ["H100-SXM-80GB"]},
        "pricing": {"H100-SXM-80GB": 2.95, "H200-SXM-141GB": 3.50},
    }
    raw.update(overrides)
    return scenario_from_dict(raw, "test-scenario")


def _number(text: str) -> float | None:
    return float(text) if text.strip() else None


def _int(text: str) -> int | None:
    return int(text) if text.strip() else None


def silicon_curves() -> list[LoadCurve]:
    """Every concurrency curve of the measured silicon sample (TTFT/TPOT of unstated statistic)."""
    lines = [line for line in SILICON_CSV.read_text().splitlines() if not line.startswith("#")]
    groups: dict[tuple[str, ...], list[dict[str, str]]] = defaultdict(list)
    columns = (
        "engine",
        "engine_version",
        "model",
        "precision",
        "gpu",
        "gpu_count",
        "tp",
        "isl",
        "osl",
    )
    for row in csv.DictReader(lines):
        groups[tuple(row[c] for c in columns)].append(row)
    curves = []
    for run_id, rows in enumerate(groups.values(), start=1):
        first = rows[0]
        key = CurveKey(
            first["engine"],
            first["engine_version"] or None,
            first["model"],
            first["precision"],
            canonical_gpu(first["gpu"]),
            _int(first["gpu_count"]),
            _int(first["tp"]),
            _int(first["isl"]),
            _int(first["osl"]),
        )
        points = sorted(
            (
                CurvePoint(
                    float(row["concurrency_or_rate"]),
                    output_tok_s=_number(row["derived_output_tok_s"]),
                    ttft_ms=_number(row["ttft_ms"]),
                    tpot_ms=_number(row["tpot_ms"]),
                )
                for row in rows
            ),
            key=lambda p: p.concurrency,
        )
        curves.append(
            LoadCurve(
                key, tuple(points), run_id, "published", "silicon", None, None, key.tp or 1, ()
            )
        )
    return curves


def trusted(options: Sequence[Option]) -> list[Option]:
    """The options with their data taken at its word (workload stated as the seed scenario's
    1000/500, nothing above a ceiling): for tests of how `recommend` chooses among options whose
    data it would otherwise refuse to recommend on (SizedOption.concerns)."""
    out: list[Option] = []
    for option in options:
        key = dataclasses.replace(option.curve.key, isl=1000, osl=500)
        curve = dataclasses.replace(option.curve, key=key)
        out.append(dataclasses.replace(option, curve=curve, above_ceiling=False))
    return out


# vLLM, 70B FP8 on one H200 at 12,000/4,096: 14,048 tokens a stream; the estimate says 14 fit,
# all the memory at 1 byte a value at most 34.
ISSUE_31_KEY = CurveKey(
    "vllm", None, "meta-llama/Llama-3.1-70B", "fp8", "H200-SXM-141GB", 1, 1, 12000, 4096
)


def issue_31_curve(report: EngineKvReport | None = None) -> LoadCurve:
    """Issue 31 item 5: five levels up to 16 streams, each TTFT well under 3x the one below
    (all clean), above the 14-stream estimate."""
    levels = ((1, 1000, 22), (2, 1050, 23), (4, 1150, 25), (8, 1350, 29), (16, 1700, 36))
    points = tuple(
        CurvePoint(float(c), output_tok_s=c * 1000.0 / tpot, p50_ttft_ms=ttft, p50_tpot_ms=tpot)
        for c, ttft, tpot in levels
    )
    return LoadCurve(
        ISSUE_31_KEY, points, None, "measured", None, None, None, 1, (), engine_kv=report
    )
