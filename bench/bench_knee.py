"""Latency past the knee, held out, on the silicon sample (every model, engine and GPU).

Interior: each interior level of each curve left out and predicted from the rest (TPOT and
TTFT). Next level up: the first k levels fitted, level k+1 predicted (k >= 3), and apart from it
the first level past the KV capacity (planner.physics.memory, from the fitted levels only). Before:
the latency families as they were (no TPOT that flattens, no knee, bands not widened outside the
data); after: fit_tpot, planner.fitting.knee and the widened bands. MAPE, worst signed error and how
often the truth lies in the 80% and 95% bands.
Run: `python bench/bench_knee.py [--quick] [--json]` (--quick: Llama-3.1-70B at 8192/1024,
three of the nine first levels past the knee).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import planner.fitting.fit as fit_module  # noqa: E402
from measurements.importers import import_path  # noqa: E402
from measurements.run_file import Provenance  # noqa: E402
from planner.curves.load import LoadCurve, curve_from_run  # noqa: E402
from planner.fitting.fit import (  # noqa: E402
    CurveFit,
    FitResult,
    fit_latency,
    fit_throughput,
    fit_tpot,
)
from planner.fitting.knee import knee_streams, past_knee  # noqa: E402

SILICON_CSV = ROOT / "measurements" / "demo" / "data" / "silicon_sample_h100_h200.csv"
Z80, Z95 = 1.2816, 1.96
QUICK = (8192, 1024)
METRIC_NAMES = (("output_tok_s", "tok/s"), ("ttft_ms", "TTFT"), ("tpot_ms", "TPOT"))
Fitter = Callable[[list[float], list[float]], FitResult | None]


@dataclass(frozen=True, slots=True)
class Read:
    """One held-out value: measured, predicted and whether each band holds it."""

    measured: float
    predicted: float
    in80: bool
    in95: bool

    def signed_pct(self) -> float:
        """Signed % error; a blow-up (inf) counts as +100%."""
        if not math.isfinite(self.predicted):
            return 100.0
        return 100.0 * (self.predicted - self.measured) / self.measured


def load_curves(quick: bool = False) -> list[LoadCurve]:
    """Every silicon-sample curve with 4+ levels (--quick: Llama-3.1-70B at 8192/1024)."""
    runs = import_path(SILICON_CSV, provenance=Provenance.PUBLISHED).runs
    curves = [c for c in (curve_from_run(run) for run in runs) if c is not None]
    return [
        c
        for c in curves
        if len(c.points) >= 4
        and (
            not quick or (c.key.model.endswith("Llama-3.1-70B") and (c.key.isl, c.key.osl) == QUICK)
        )
    ]


def _read(result: FitResult, c: float, measured: float) -> Read:
    lo80, hi80 = result.eval_band([c], z=Z80)
    lo95, hi95 = result.eval_band([c], z=Z95)
    predicted = float(result.eval([c])[0])
    return Read(
        measured,
        predicted,
        bool(lo80[0] <= measured <= hi80[0]),
        bool(lo95[0] <= measured <= hi95[0]),
    )


def _pairs(curve: LoadCurve, attr: str) -> list[tuple[float, float]]:
    return [(p.concurrency, v) for p in curve.points if (v := getattr(p, attr)) is not None]


def interior(curves: list[LoadCurve], attr: str, fitter: Fitter) -> list[Read]:
    """Each interior level predicted from the other levels of its curve."""
    out: list[Read] = []
    for curve in curves:
        pairs = _pairs(curve, attr)
        for i in range(1, len(pairs) - 1):
            rest = pairs[:i] + pairs[i + 1 :]
            result = fitter([c for c, _ in rest], [v for _, v in rest])
            if result is not None:
                out.append(_read(result, *pairs[i]))
    return out


def _sub_fit(curve: LoadCurve, k: int, after: bool) -> CurveFit:
    """The first k levels fitted the old way (before) or the new way with the knee (after)."""
    sub = replace(curve, points=curve.points[:k])

    def of(attr: str, fitter: Fitter) -> FitResult | None:
        pairs = _pairs(sub, attr)
        return fitter([x for x, _ in pairs], [v for _, v in pairs]) if len(pairs) >= 3 else None

    fit = CurveFit(
        curve=sub,
        throughput=of("output_tok_s", fit_throughput),
        ttft_p50=of("ttft_ms", fit_latency),
        ttft_p99=None,
        tpot=of("tpot_ms", fit_tpot if after else fit_latency),
    )
    return past_knee(fit, knee_streams(fit)) if after else fit


def next_level(curves: list[LoadCurve], after: bool, knee_only: bool) -> dict[str, list[Read]]:
    """Level k+1 predicted from the first k (k >= 3); knee_only: only the first level past the
    KV capacity estimated from the first k."""
    out: dict[str, list[Read]] = {"ttft_ms": [], "tpot_ms": [], "output_tok_s": []}
    for curve in curves:
        for k in range(3, len(curve.points)):
            fit = _sub_fit(curve, k, after)
            target = curve.points[k]
            if knee_only and not _first_past_knee(fit, target.concurrency):
                continue
            slots = {"ttft_ms": fit.ttft_p50, "tpot_ms": fit.tpot, "output_tok_s": fit.throughput}
            for attr, result in slots.items():
                measured = getattr(target, attr)
                if result is not None and measured is not None:
                    out[attr].append(_read(result, target.concurrency, measured))
    return out


def _first_past_knee(fit: CurveFit, c: float) -> bool:
    streams = knee_streams(fit)
    return streams is not None and max(fit.curve.concurrencies()) <= streams < c


def summary(reads: list[Read]) -> dict[str, float | int | None]:
    """MAPE, worst signed error and band coverage (%) of held-out reads."""
    if not reads:
        return {"n": 0, "mape_pct": None, "median_pct": None, "worst_pct": None}
    errors = [r.signed_pct() for r in reads]
    return {
        "n": len(reads),
        "mape_pct": sum(abs(e) for e in errors) / len(errors),
        "median_pct": statistics.median(abs(e) for e in errors),
        "worst_pct": max(errors, key=abs),
        "in80_pct": 100.0 * sum(r.in80 for r in reads) / len(reads),
        "in95_pct": 100.0 * sum(r.in95 for r in reads) / len(reads),
    }


def report(quick: bool = False) -> dict[str, dict[str, float | int | None]]:
    """Every row of the benchmark: (check, metric, before/after) -> summary."""
    curves = load_curves(quick)
    rows: dict[str, dict[str, float | int | None]] = {}
    widening = fit_module.EXTRAPOLATION_REL_PER_DOUBLING
    for when in ("before", "after"):
        after = when == "after"
        # The bands as they were: no widening outside the measured range.
        fit_module.EXTRAPOLATION_REL_PER_DOUBLING = widening if after else 0.0
        try:
            tpot_fitter = fit_tpot if after else fit_latency
            rows[f"interior TPOT {when}"] = summary(interior(curves, "tpot_ms", tpot_fitter))
            rows[f"interior TTFT {when}"] = summary(interior(curves, "ttft_ms", fit_latency))
            for label, knee_only in (("next level up", False), ("past the knee", True)):
                reads = next_level(curves, after, knee_only)
                for attr, name in METRIC_NAMES:
                    rows[f"{label} {name} {when}"] = summary(reads[attr])
        finally:
            fit_module.EXTRAPOLATION_REL_PER_DOUBLING = widening
    rows["curves"] = {"n": len(curves)}
    return rows


def _print(rows: dict[str, dict[str, float | int | None]]) -> None:
    print(f"{rows['curves']['n']} curves from {SILICON_CSV.name}")
    head = ("n", "MAPE %", "median %", "worst %", "in 80%", "in 95%")
    print(f"{'check':<34}" + "".join(f"{h:>10}" for h in head))
    for name, row in rows.items():
        if name == "curves":
            continue
        keys = ("mape_pct", "median_pct", "worst_pct", "in80_pct", "in95_pct")
        cells = [row.get(k) for k in keys]
        text = "".join(f"{c:>10.1f}" if isinstance(c, float) else f"{'-':>10}" for c in cells)
        print(f"{name:<34}{row['n']:>10}{text}")


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="only Llama-3.1-70B at 8192/1024")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    rows = report(args.quick)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        _print(rows)


if __name__ == "__main__":
    main()
