"""How long a plan, its ranges and the sensitivity view take on the demo data (every example
scenario). A plan sizes every option over its error samples (planner.sizing.draws); its ranges are
read from those samples (planner.analysis.uncertainty.ranges_of: no re-plan). Run:
`python bench/bench_uncertainty.py [samples]` (default: planner.sizing.draws.SAMPLES).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from measurements.demo.runs import demo_runs  # noqa: E402
from planner.analysis.capacity import make_plan  # noqa: E402
from planner.analysis.sensitivity import sensitivity  # noqa: E402
from planner.analysis.uncertainty import ranges_of  # noqa: E402
from planner.curves.load import curve_from_run  # noqa: E402
from planner.inputs.prices import load_catalog_csv  # noqa: E402
from planner.inputs.scenario import load_scenario  # noqa: E402
from planner.sizing.draws import Draws  # noqa: E402

SCENARIOS = ROOT / "docs" / "scenarios"


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def main(samples: int | None = None) -> None:
    """Print plan, ranges and sensitivity times per example scenario, and the ranges found."""
    curves = [c for c in (curve_from_run(r, i) for i, r in enumerate(demo_runs())) if c]
    prices = load_catalog_csv()
    print(f"{len(curves)} curves, samples: {samples or 'default'}")
    for path in sorted(SCENARIOS.glob("*.yaml")):
        scenario = load_scenario(path)
        draws = Draws(samples=samples) if samples else None
        make_plan(scenario, curves, prices, draws=draws)  # fits cached, as in a session
        start = time.perf_counter()
        plan = make_plan(scenario, curves, prices, draws=draws)
        plan_ms = _ms(start)
        start = time.perf_counter()
        ranges = ranges_of(plan)
        ranges_ms = _ms(start)
        start = time.perf_counter()
        rows = sensitivity(scenario, curves, prices)
        sensitivity_ms = _ms(start)
        print(
            f"{path.name}: {len(plan.options)} options; one plan over {ranges.samples} samples "
            f"{plan_ms:.1f} ms; ranges {ranges_ms:.0f} ms; "
            f"sensitivity {sensitivity_ms:.0f} ms ({len(rows)} inputs)"
        )
        print(
            f"  recommendation {ranges.point_choice.title() if ranges.point_choice else None}; "
            "changes in "
            f"{ranges.choice_change_share:.0%} of samples"
        )
        for option in ranges.options:
            nodes, cost = option.nodes, option.total_monthly_cost_usd
            spread = (
                f"nodes {nodes.p10:g}/{nodes.p50:g}/{nodes.p90:g}, "
                f"${cost.p10:,.0f}/${cost.p50:,.0f}/${cost.p90:,.0f}"
                if nodes and cost
                else "never meets the SLA"
            )
            print(
                f"  {option.title:<45} point {option.point_nodes} nodes; P10/P50/P90 {spread}; "
                f"feasible {option.feasible_share:.0%}, wins {option.pick_share:.0%}"
            )
        for row in rows[:5]:
            print(
                f"  {row.label:<34} {row.low_value:g} / {row.base_value:g} / {row.high_value:g}: "
                f"{_pct(row.low_change_pct)} / {_pct(row.high_change_pct)}, flips {row.flips}"
            )


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1f}%"


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else None)
