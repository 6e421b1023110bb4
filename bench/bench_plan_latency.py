"""How long one full plan takes (every engine x GPU x TP candidate of the demo data).

The app recomputes on every slider move, so a plan must return in well under 100 ms. Fits are
cached by their series (planner.fitting.fit), so two numbers matter: a cold plan (every chosen curve
fitted from scratch: the first plan, or one on new curves) and a warm plan (the fits cached:
a slider move that leaves ISL/OSL alone). Both are measured; cold also forgets the serving
model's calibrations (planner.engine.calibrate).
Run: `python bench/bench_plan_latency.py [repeats]`.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from measurements.demo.runs import demo_runs  # noqa: E402
from planner.analysis.capacity import make_plan  # noqa: E402
from planner.curves.load import curve_from_run  # noqa: E402
from planner.engine.calibrate import clear_calibration_cache  # noqa: E402
from planner.fitting.fit import clear_fit_cache  # noqa: E402
from planner.inputs.prices import load_catalog_csv  # noqa: E402
from planner.inputs.scenario import load_scenario  # noqa: E402

SCENARIOS = ROOT / "docs" / "scenarios"


def main(repeats: int = 30) -> None:
    """Print median and worst make_plan time per example scenario over all demo curves."""
    curves = [c for c in (curve_from_run(r, i) for i, r in enumerate(demo_runs())) if c]
    prices = load_catalog_csv()
    print(f"{len(curves)} curves, {repeats} repeats each")
    for path in sorted(SCENARIOS.glob("*.yaml")):
        scenario = load_scenario(path)
        for mode in ("cold", "warm"):
            times_ms = []
            for _ in range(repeats):
                if mode == "cold":
                    clear_fit_cache()
                    clear_calibration_cache()
                start = time.perf_counter()
                plan = make_plan(scenario, curves, prices)
                times_ms.append((time.perf_counter() - start) * 1000)
            print(
                f"{path.name:<28} {mode}  {len(plan.options):>3} options  "
                f"median {statistics.median(times_ms):6.1f} ms  max {max(times_ms):6.1f} ms"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
