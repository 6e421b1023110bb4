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

from measurements.importers import import_path  # noqa: E402
from measurements.run_file import Provenance  # noqa: E402
from planner.curves import LoadCurve, canonical_gpu, curve_from_run  # noqa: E402
from planner.fit import fit_curve, fit_latency, fit_throughput  # noqa: E402

SILICON_CSV = ROOT / "measurements" / "data" / "silicon_sample_h100_h200.csv"


def load_curves(path: Path = SILICON_CSV) -> list[LoadCurve]:
    """Every concurrency curve of the silicon sample, through the real curve-CSV importer."""
    runs = import_path(path, provenance=Provenance.PUBLISHED).runs
    curves = (curve_from_run(run) for run in runs)
    return [curve for curve in curves if curve is not None]


def held_out_errors(curve: LoadCurve) -> dict[str, list[float]]:
    """Absolute % errors predicting each level from the others, per metric."""
    errors: dict[str, list[float]] = {"output_tok_s": [], "ttft_ms": [], "tpot_ms": []}
    for metric, fitter in (
        ("output_tok_s", fit_throughput),
        ("ttft_ms", fit_latency),
        ("tpot_ms", fit_latency),
    ):
        pairs = [(p.concurrency, getattr(p, metric)) for p in curve.points]  # bare stat columns
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


AIC_CSV = ROOT / "planner" / "data" / "aiconfigurator_vs_silicon.csv"
AIC_BACKENDS = {"vllm": "vllm", "trtllm": "tensorrt-llm"}


def aiconfigurator_errors(path: Path = AIC_CSV) -> dict[tuple[str, str], dict[str, list[float]]]:
    """AIConfigurator 0.12.0's absolute % errors on the same silicon points (its own file)."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    table: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in csv.DictReader(lines):
        if row["model"] != "meta-llama/Llama-3.1-70B" or row["backend"] not in AIC_BACKENDS:
            continue
        key = (AIC_BACKENDS[row["backend"]], canonical_gpu(row["system"]))
        for metric, column in (
            ("output_tok_s", "tok_s_err_pct"),
            ("ttft_ms", "ttft_err_pct"),
            ("tpot_ms", "tpot_err_pct"),
        ):
            if row[column].strip():
                table[key][metric].append(abs(float(row[column])))
    return table


def _cells(metrics: dict[str, list[float]]) -> list[str]:
    return [
        f"{np.mean(metrics[m]):>8.1f} ({np.median(metrics[m]):4.1f})" if metrics[m] else "-"
        for m in ("output_tok_s", "ttft_ms", "tpot_ms")
    ]


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
    aic = aiconfigurator_errors()
    for (engine, gpu), metrics in sorted(table.items()):
        cells = _cells(metrics)
        n = len(metrics["output_tok_s"])
        print(f"{engine:<14}{gpu:<17}{cells[0]:>16}{cells[1]:>16}{cells[2]:>16}{n:>8}")
        if (engine, gpu) in aic:
            peer = _cells(aic[(engine, gpu)])
            n_peer = len(aic[(engine, gpu)]["ttft_ms"])
            print(f"{'  AIConfigurator':<31}{peer[0]:>16}{peer[1]:>16}{peer[2]:>16}{n_peer:>8}")
    everything = load_curves()
    start = time.perf_counter()
    for curve in everything:
        fit_curve(curve)
    elapsed_ms = (time.perf_counter() - start) * 1000
    print(f"fit_curve on all {len(everything)} curves: {elapsed_ms:.0f} ms")


if __name__ == "__main__":
    main()
