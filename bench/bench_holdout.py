"""The held-out benchmark in one run: every prediction check of issue 15 over the silicon sample,
beside its naive baseline and its target, with the verdict.

Checks (each from the script that owns it, which says how it holds data out):
- interior levels, leave-one-level-out (bench_fit_accuracy): output tok/s, TTFT, TPOT, with
  AIConfigurator 0.12.0's error on the same levels as the baseline;
- next level up and one level past the KV capacity (bench_knee): the previous latency families
  as the baseline; how often the truth lies in the 80% band;
- H100 <-> H200 projection per direction (bench_projection): the source numbers used as they
  are ("no scaling") as the baseline;
- workload pairs within the 2x adjustment limit (bench_workload_adjust): the curve used as is
  as the baseline.
Run: `python bench/bench_holdout.py [--quick] [--json]` (--quick: the component scripts' quick
subsets; the projection and workload checks have none and run in full).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bench_fit_accuracy, bench_knee, bench_projection, bench_workload_adjust
from bench.bench_projection import H100, H200


@dataclass(frozen=True, slots=True)
class Check:
    """One row: what was predicted, our error, the baseline's, the target and the verdict."""

    check: str
    ours_pct: float | None
    baseline: str
    baseline_pct: float | None
    target: str
    target_pct: float | None
    worst_pct: float | None = None
    n: int = 0

    @property
    def met(self) -> bool | None:
        """True when our error is within the target (None: no target or no data)."""
        if self.target_pct is None or self.ours_pct is None:
            return None
        return self.ours_pct <= self.target_pct


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def interior_checks(quick: bool) -> list[Check]:
    """Leave-one-level-out on the Llama-3.1-70B curves, beside AIConfigurator's error."""
    found = bench_fit_accuracy.report(quick=quick)
    aic = bench_fit_accuracy.aiconfigurator_points()
    rows = []
    targets = {"output_tok_s": 1.5, "ttft_ms": 10.0, "tpot_ms": 5.0}
    for metric, target in targets.items():
        points = [p for p in found.points if p.metric == metric]
        errors = [p.error_pct() for p in points]
        theirs = [
            100.0 * abs(pair[1] - pair[0]) / pair[0]
            for p in points
            if (pair := aic.get((p.engine, p.setting, metric))) is not None
        ]
        rows.append(
            Check(
                f"interior {metric}",
                _mean(errors),
                "AIConfigurator 0.12.0",
                _mean(theirs),
                f"<= {target:g}%",
                target,
                max(errors, default=None),
                len(errors),
            )
        )
    return rows


def knee_checks(quick: bool) -> list[Check]:
    """Next level up and one past the knee, beside the previous families; 80% band coverage."""
    found = bench_knee.report(quick=quick)
    rows = []
    targets = {"next level up tok/s": 3.0, "next level up TPOT": None, "next level up TTFT": None}
    for label in ("next level up", "past the knee"):
        for _, name in bench_knee.METRIC_NAMES:
            key = f"{label} {name}"
            after, before = found.get(f"{key} after", {}), found.get(f"{key} before", {})
            target = targets.get(key)
            rows.append(
                Check(
                    key,
                    _float(after.get("mape_pct")),
                    "previous families",
                    _float(before.get("mape_pct")),
                    f"<= {target:g}%" if target is not None else "-",
                    target,
                    _float(after.get("worst_pct")),
                    int(after.get("n") or 0),
                )
            )
            coverage = _float(after.get("in80_pct"))
            rows.append(
                Check(
                    f"{key}: truth inside the 80% band (% of levels)",
                    None if coverage is None else abs(coverage - 80.0),
                    "previous bands, distance from 80",
                    _distance(before.get("in80_pct")),
                    "within 10 points of 80%",
                    10.0,
                    coverage,
                    int(after.get("n") or 0),
                )
            )
    return rows


def projection_checks() -> list[Check]:
    """H100 <-> H200 per direction, over every engine, beside 'no scaling'."""
    curves = bench_projection.load_curves()
    rows = []
    for source, target in ((H100, H200), (H200, H100)):
        found = bench_projection.direction(curves, source, target, None)
        for metric in ("output_tok_s", "tpot_ms", "ttft_ms"):
            ours = found.get("projected all", {}).get(metric, [])
            naive = found.get("no scaling all", {}).get(metric, [])
            rows.append(
                Check(
                    f"projection {source} -> {target} {metric}",
                    _mean(ours),
                    "no scaling",
                    _mean(naive),
                    "<= 8%",
                    8.0,
                    max(ours, default=None),
                    len(ours),
                )
            )
    return rows


def workload_checks() -> list[Check]:
    """Workload pairs within 2x: the adjustment beside the curve used as is (output tok/s)."""
    table = bench_workload_adjust.cross_workload_errors(bench_workload_adjust.all_curves())
    within = [errors for (_, isl_x, osl_x), errors in table.items() if max(isl_x, osl_x) <= 2.0]
    rows = []
    for metric in bench_workload_adjust.METRICS:
        ours = [v for e in within for v in e["adjusted"][metric]]
        naive = [v for e in within for v in e["as is"][metric]]
        rows.append(
            Check(
                f"workload pairs within 2x {metric}",
                _mean(ours),
                "used as is",
                _mean(naive),
                "-",
                None,
                max(ours, default=None),
                len(ours),
            )
        )
    return rows


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _distance(value: object) -> float | None:
    found = _float(value)
    return None if found is None else abs(found - 80.0)


def report(quick: bool = False) -> list[Check]:
    """Every check, in the order of the table."""
    return [
        *interior_checks(quick),
        *knee_checks(quick),
        *projection_checks(),
        *workload_checks(),
    ]


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main(argv: list[str] | None = None) -> None:
    """Run every check and print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    checks = report(quick=args.quick)
    if args.json:
        print(json.dumps([asdict(c) | {"met": c.met} for c in checks], indent=1))
        return
    print(f"{'check':<62}{'ours %':>8}{'worst':>9}{'n':>6}  {'baseline':<34}{'%':>7}  target")
    for c in checks:
        verdict = {True: "met", False: "MISSED", None: ""}[c.met]
        print(
            f"{c.check:<62}{_cell(c.ours_pct):>8}{_cell(c.worst_pct):>9}{c.n:>6}  "
            f"{c.baseline:<34}{_cell(c.baseline_pct):>7}  {c.target} {verdict}"
        )


if __name__ == "__main__":
    main()
