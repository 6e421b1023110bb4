"""Held-out accuracy of the planner's fits on aiconfigurator's measured silicon sample.

Each Llama-3.1-70B vLLM / TensorRT-LLM curve (one per GPU, TP and ISL/OSL) loses one concurrency
level at a time; the rest are fitted and the missing level is predicted. Prints MAPE per
engine x GPU for output tok/s, TTFT and TPOT. Run: `python bench/bench_fit_accuracy.py`.
"""

from __future__ import annotations

import csv
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.curves import CurveKey, CurvePoint, LoadCurve, canonical_gpu  # noqa: E402
from planner.fit import fit_curve, fit_latency, fit_throughput  # noqa: E402

SILICON_CSV = ROOT / "measurements" / "data" / "silicon_sample_h100_h200.csv"
GROUP_COLUMNS = ("engine", "engine_version", "model", "precision", "gpu", "gpu_count", "tp")


def _number(text: str) -> float | None:
    return float(text) if text.strip() else None


def _int(text: str) -> int | None:
    return int(text) if text.strip() else None


def load_curves(path: Path = SILICON_CSV) -> list[LoadCurve]:
    """Every concurrency curve of the silicon sample (output tok/s = the file's derived column)."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    groups: dict[tuple[str, ...], list[dict[str, str]]] = defaultdict(list)
    for row in csv.DictReader(lines):
        if row["load_type"] == "concurrency":
            groups[tuple(row[c] for c in (*GROUP_COLUMNS, "isl", "osl"))].append(row)
    return [_curve(rows) for rows in groups.values()]


def _curve(rows: list[dict[str, str]]) -> LoadCurve:
    first = rows[0]
    key = CurveKey(
        engine=first["engine"],
        engine_version=first["engine_version"] or None,
        model=first["model"],
        precision=first["precision"] or None,
        gpu=canonical_gpu(first["gpu"]),
        gpu_count=_int(first["gpu_count"]),
        tp=_int(first["tp"]),
        isl=_int(first["isl"]),
        osl=_int(first["osl"]),
    )
    points = tuple(
        sorted(
            (
                CurvePoint(
                    concurrency=float(row["concurrency_or_rate"]),
                    output_tok_s=_number(row["output_tok_s"] or row["derived_output_tok_s"]),
                    ttft_ms=_number(row["ttft_ms"]),
                    tpot_ms=_number(row["tpot_ms"]),
                )
                for row in rows
            ),
            key=lambda p: p.concurrency,
        )
    )
    gpus = key.tp or key.gpu_count or 1
    return LoadCurve(key, points, None, "published", "silicon sample", None, None, gpus, ())


def held_out_errors(curve: LoadCurve) -> dict[str, list[float]]:
    """Absolute % errors predicting each level from the others, per metric."""
    errors: dict[str, list[float]] = {"output_tok_s": [], "ttft_ms": [], "tpot_ms": []}
    for metric, fitter in (
        ("output_tok_s", fit_throughput),
        ("ttft_ms", fit_latency),
        ("tpot_ms", fit_latency),
    ):
        pairs = [(p.concurrency, getattr(p, metric)) for p in curve.points]
        pairs = [(c, v) for c, v in pairs if v is not None]
        for i, (c_out, v_out) in enumerate(pairs):
            rest = pairs[:i] + pairs[i + 1 :]
            result = fitter([c for c, _ in rest], [v for _, v in rest])
            if result is None:
                continue
            predicted = float(result.eval([c_out])[0])
            if np.isfinite(predicted):
                errors[metric].append(100.0 * abs(predicted - v_out) / v_out)
            else:
                errors[metric].append(100.0)  # predicted blow-up past saturation: count as 100%
    return errors


def main() -> None:
    """Print held-out MAPE per engine x GPU and how long fitting every curve takes."""
    curves = [
        c
        for c in load_curves()
        if c.key.model.endswith("Llama-3.1-70B") and c.key.engine in ("vllm", "tensorrt-llm")
    ]
    table: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for curve in curves:
        for metric, errs in held_out_errors(curve).items():
            table[(curve.key.engine, curve.key.gpu or "?")][metric].extend(errs)
    print(f"{len(curves)} Llama-3.1-70B curves from {SILICON_CSV.name}")
    print("held-out absolute % error, mean (median)")
    print(f"{'engine':<14}{'gpu':<17}{'output tok/s':>16}{'TTFT':>16}{'TPOT':>16}{'levels':>8}")
    for (engine, gpu), metrics in sorted(table.items()):
        cells = [
            f"{np.mean(metrics[m]):>8.1f} ({np.median(metrics[m]):4.1f})" if metrics[m] else "-"
            for m in ("output_tok_s", "ttft_ms", "tpot_ms")
        ]
        n = len(metrics["output_tok_s"])
        print(f"{engine:<14}{gpu:<17}{cells[0]:>16}{cells[1]:>16}{cells[2]:>16}{n:>8}")
    everything = load_curves()
    start = time.perf_counter()
    for curve in everything:
        fit_curve(curve)
    elapsed_ms = (time.perf_counter() - start) * 1000
    print(f"fit_curve on all {len(everything)} curves: {elapsed_ms:.0f} ms")


if __name__ == "__main__":
    main()
