"""Held-out accuracy of the planner's fits on aiconfigurator's measured silicon sample.

Each Llama-3.1-70B vLLM / TensorRT-LLM curve (one per GPU, TP and ISL/OSL) loses one concurrency
level at a time; the rest are fitted and the missing level is predicted with its 95% band.
Output tok/s is read as the planner reads it: the curve's fit times the shared shape of its
sibling curves (planner.fitting.shapes; the other curves of the same engine x GPU x ISL/OSL, fitted
in full — never the held-out curve), and also plain, without the shape ('output_tok_s_plain').
Reports MAPE per engine x GPU for output tok/s, TTFT and TPOT, and engine-ranking agreement at
equal settings, each beside AIConfigurator 0.12.0's errors on the same points.
Run: `python bench/bench_fit_accuracy.py [--quick] [--json]` (--quick: the 1024/1024 curves).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from measurements.importers import import_path  # noqa: E402
from measurements.run_file import Provenance  # noqa: E402
from planner.curves.load import LoadCurve, curve_from_run  # noqa: E402
from planner.curves.names import canonical_gpu  # noqa: E402
from planner.fitting.fit import CurveFit, FitResult, fit_curve, fit_latency, fit_throughput  # noqa: E402
from planner.fitting.shapes import Shape, shape_for  # noqa: E402

SILICON_CSV = ROOT / "measurements" / "demo" / "data" / "silicon_sample_h100_h200.csv"
AIC_CSV = ROOT / "planner" / "physics" / "data" / "aiconfigurator_vs_silicon.csv"
AIC_BACKENDS = {"vllm": "vllm", "trtllm": "tensorrt-llm"}
AIC_MODEL = "meta-llama/Llama-3.1-70B"
QUICK_WORKLOAD = (1024, 1024)
METRICS = ("output_tok_s", "ttft_ms", "tpot_ms")
PLAIN = "output_tok_s_plain"  # output tok/s without the sibling shape
AIC_COLUMNS = {
    "output_tok_s": ("silicon_derived_output_tok_s", "aic_derived_output_tok_s"),
    "ttft_ms": ("silicon_ttft_ms", "aic_ttft_ms"),
    "tpot_ms": ("silicon_tpot_ms", "aic_tpot_ms"),
}
# Setting: (gpu, tp, isl, osl, concurrency); engines are compared at equal settings.
Setting = tuple[str, int, int, int, float]


@dataclass(frozen=True, slots=True)
class HeldOut:
    """One level predicted from the rest of its curve, with the 95% band of that prediction."""

    engine: str
    setting: Setting
    metric: str
    measured: float
    predicted: float
    lo: float
    hi: float

    def error_pct(self) -> float:
        """Absolute % error; a predicted blow-up past saturation (inf) counts as 100%."""
        if not math.isfinite(self.predicted):
            return 100.0
        return 100.0 * abs(self.predicted - self.measured) / self.measured


def load_curves(path: Path = SILICON_CSV, quick: bool = False) -> list[LoadCurve]:
    """The Llama-3.1-70B vLLM / TensorRT-LLM curves, through the real curve-CSV importer."""
    runs = import_path(path, provenance=Provenance.PUBLISHED).runs
    curves = [c for c in (curve_from_run(run) for run in runs) if c is not None]
    return [
        c
        for c in curves
        if c.key.model.endswith("Llama-3.1-70B")
        and c.key.engine in ("vllm", "tensorrt-llm")
        and (not quick or (c.key.isl, c.key.osl) == QUICK_WORKLOAD)
    ]


def held_out(curve: LoadCurve, shape: Shape | None = None) -> list[HeldOut]:
    """Every level of every metric predicted from the other levels of the same curve; output
    tok/s also times `shape` (the siblings' shape, built without this curve)."""
    out: list[HeldOut] = []
    key = curve.key
    for metric in METRICS:
        fitter = fit_throughput if metric == "output_tok_s" else fit_latency
        pairs = [(p.concurrency, getattr(p, metric)) for p in curve.points]  # bare stat columns
        pairs = [(c, v) for c, v in pairs if v is not None]
        for i, (c_out, v_out) in enumerate(pairs):
            rest = pairs[:i] + pairs[i + 1 :]
            result = fitter([c for c, _ in rest], [v for _, v in rest])
            if result is None:
                continue
            setting = (key.gpu or "?", key.tp or 0, key.isl or 0, key.osl or 0, c_out)
            if metric == "output_tok_s":
                out.append(HeldOut(key.engine, setting, PLAIN, v_out, *_read(result, c_out)))
                if shape is not None:
                    result = replace(result, shape=shape.pairs())
            out.append(HeldOut(key.engine, setting, metric, v_out, *_read(result, c_out)))
    return out


def _read(result: FitResult, c: float) -> tuple[float, float, float]:
    lo, hi = result.eval_band([c])
    return float(result.eval([c])[0]), float(lo[0]), float(hi[0])


def all_held_out(curves: list[LoadCurve], fits: list[CurveFit]) -> list[HeldOut]:
    """Held-out levels of every curve, output tok/s corrected by its siblings' full fits."""
    return [p for curve in curves for p in held_out(curve, shape_for(curve, fits))]


def aiconfigurator_points(
    path: Path = AIC_CSV,
) -> dict[tuple[str, Setting, str], tuple[float, float]]:
    """(engine, setting, metric) -> (measured, AIConfigurator's prediction), from its own file."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    table: dict[tuple[str, Setting, str], tuple[float, float]] = {}
    for row in csv.DictReader(lines):
        if row["model"] != AIC_MODEL or row["backend"] not in AIC_BACKENDS:
            continue
        gpu = canonical_gpu(row["system"])
        setting = (gpu, int(row["tp"]), int(row["isl"]), int(row["osl"]), float(row["concurrency"]))
        for metric, (measured, predicted) in AIC_COLUMNS.items():
            if row[measured].strip() and row[predicted].strip():
                key = (AIC_BACKENDS[row["backend"]], setting, metric)
                table[key] = (float(row[measured]), float(row[predicted]))
    return table


def mape_table(
    points: list[HeldOut], aic: dict[tuple[str, Setting, str], tuple[float, float]]
) -> dict[str, dict[str, dict[str, float | int | None]]]:
    """Per 'engine gpu' and metric: our MAPE, median and level count, and AIConfigurator's
    MAPE on the subset of those same levels it predicted."""
    groups: dict[tuple[str, str], list[HeldOut]] = defaultdict(list)
    for p in points:
        groups[(f"{p.engine} {p.setting[0]}", p.metric)].append(p)
    table: dict[str, dict[str, dict[str, float | int | None]]] = defaultdict(dict)
    for (group, metric), rows in sorted(groups.items()):
        ours = [p.error_pct() for p in rows]
        theirs = [
            100.0 * abs(pair[1] - pair[0]) / pair[0]
            for p in rows
            if (pair := aic.get((p.engine, p.setting, _aic_metric(metric)))) is not None
        ]
        table[group][metric] = {
            "mape_pct": float(np.mean(ours)),
            "median_pct": float(np.median(ours)),
            "levels": len(ours),
            "aic_mape_pct": float(np.mean(theirs)) if theirs else None,
            "aic_levels": len(theirs),
        }
    return dict(table)


def _aic_metric(metric: str) -> str:
    """AIConfigurator's column for a metric: plain output tok/s is compared with the same."""
    return "output_tok_s" if metric == PLAIN else metric


def ranking(
    points: list[HeldOut], aic: dict[tuple[str, Setting, str], tuple[float, float]]
) -> dict[str, dict[str, float | int | None]]:
    """vLLM vs TensorRT-LLM at equal settings, per metric: pairs whose measured gap exceeds
    the two held-out bands' half-widths together ('decisive'), the share of those our
    held-out predictions order as measured, and AIConfigurator's share on the same pairs."""
    by_key = {(p.engine, p.setting, p.metric): p for p in points}
    out: dict[str, dict[str, float | int | None]] = {}
    for metric in (*METRICS, PLAIN):
        decisive = agree = aic_pairs = aic_agree = 0
        for (engine, setting, m), vllm in by_key.items():
            trt = by_key.get(("tensorrt-llm", setting, metric))
            if engine != "vllm" or m != metric or trt is None:
                continue
            gap = vllm.measured - trt.measured
            if abs(gap) <= (vllm.hi - vllm.lo) / 2 + (trt.hi - trt.lo) / 2:
                continue
            decisive += 1
            agree += int(np.sign(vllm.predicted - trt.predicted) == np.sign(gap))
            theirs = _aic_metric(metric)
            peers = (aic.get(("vllm", setting, theirs)), aic.get(("tensorrt-llm", setting, theirs)))
            if peers[0] is not None and peers[1] is not None:
                aic_pairs += 1
                aic_agree += int(np.sign(peers[0][1] - peers[1][1]) == np.sign(gap))
        out[metric] = {
            "decisive_pairs": decisive,
            "agreement_pct": 100.0 * agree / decisive if decisive else None,
            "aic_pairs": aic_pairs,
            "aic_agreement_pct": 100.0 * aic_agree / aic_pairs if aic_pairs else None,
        }
    return out


@dataclass(frozen=True, slots=True)
class Report:
    """The benchmark's result: MAPE table, ranking agreement, fit timing, every held-out level."""

    quick: bool
    curves: int
    mape: dict[str, dict[str, dict[str, float | int | None]]]
    ranking: dict[str, dict[str, float | int | None]]
    fit_curve_ms: float
    points: list[HeldOut]

    def to_json(self) -> str:
        """JSON text; a non-finite prediction (a blow-up past saturation) reads null."""
        rows = [
            {
                k: (v if not isinstance(v, float) or math.isfinite(v) else None)
                for k, v in asdict(p).items()
            }
            for p in self.points
        ]
        body = {
            "source": SILICON_CSV.name,
            "quick": self.quick,
            "curves": self.curves,
            "mape": self.mape,
            "ranking": self.ranking,
            "fit_curve_ms": self.fit_curve_ms,
            "held_out": rows,
        }
        return json.dumps(body, indent=1, allow_nan=False)


def report(quick: bool = False) -> Report:
    """Run the benchmark (quick: only the 1024/1024 curves)."""
    curves = load_curves(quick=quick)
    start = time.perf_counter()
    fits = [fit_curve(curve) for curve in curves]
    fit_ms = (time.perf_counter() - start) * 1000
    points = all_held_out(curves, fits)
    aic = aiconfigurator_points()
    return Report(quick, len(curves), mape_table(points, aic), ranking(points, aic), fit_ms, points)


def _cell(stats: dict[str, float | int | None] | None, prefix: str = "") -> str:
    value = None if stats is None else stats[f"{prefix}mape_pct"]
    return "-" if value is None else f"{value:.1f}"


def _print(result: Report) -> None:
    print(f"{result.curves} Llama-3.1-70B curves from {SILICON_CSV.name}")
    print("held-out MAPE % (AIConfigurator 0.12.0 on the same levels, where it predicted them)")
    print("output tok/s: the fit times the siblings' shared shape (plain: the fit alone)")
    header = ("output tok/s", "plain", "TTFT", "TPOT")
    print(f"{'engine gpu':<30}" + "".join(f"{h:>16}" for h in header) + f"{'levels':>8}")
    for group, metrics in result.mape.items():
        cells = [
            f"{_cell(metrics.get(m))} ({_cell(metrics.get(m), 'aic_')})"
            for m in ("output_tok_s", PLAIN, "ttft_ms", "tpot_ms")
        ]
        levels = metrics["output_tok_s"]["levels"] if "output_tok_s" in metrics else "-"
        print(f"{group:<30}" + "".join(f"{c:>16}" for c in cells) + f"{levels:>8}")
    print("engine ranking vLLM vs TensorRT-LLM at equal settings (gap beyond the bands)")
    for metric, row in result.ranking.items():
        ours, theirs = row["agreement_pct"], row["aic_agreement_pct"]
        print(
            f"  {metric:<14}{row['decisive_pairs']:>4} pairs: ours "
            f"{'-' if ours is None else f'{ours:.0f}%'}; AIConfigurator "
            f"{'-' if theirs is None else f'{theirs:.0f}%'} on {row['aic_pairs']} of them"
        )
    print(f"fit_curve on these {result.curves} curves: {result.fit_curve_ms:.0f} ms")


def main(argv: list[str] | None = None) -> None:
    """Print the benchmark, or its JSON with --json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="only the 1024/1024 curves")
    parser.add_argument("--json", action="store_true", help="print the full result as JSON")
    args = parser.parse_args(argv)
    result = report(quick=args.quick)
    if args.json:
        print(result.to_json())
    else:
        _print(result)


if __name__ == "__main__":
    main()
