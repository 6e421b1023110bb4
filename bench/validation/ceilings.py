"""The guard's recorded ceilings (ceilings.json beside this file): per reach, product method and
metric, the dev MAPE of the --quick subset plus a margin, and the invariant breaks it had.
Lower them as accuracy improves: `python -m bench.validation.ceilings` rewrites the file from
a fresh quick dev run (then review the diff; never raise a ceiling to pass)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from bench.validation.product import ANSWERS, METRICS
from bench.validation.split import DEV
from bench.validation.summary import Group, GroupStats

PATH = Path(__file__).with_name("ceilings.json")
MARGIN_RELATIVE = 0.15  # 15% of the figure
MARGIN_POINTS = 1.0  # plus one percentage point
Ceilings = dict[str, dict[str, dict[str, float]]]  # reach -> method -> metric (or "breaks")


def current(stats: dict[Group, GroupStats]) -> Ceilings:
    """Per reach and product method: each metric's dev MAPE and the invariant breaks."""
    out: Ceilings = {}
    for (reach, bucket, split, method), found in sorted(stats.items()):
        if bucket or split != DEV or method not in ANSWERS:
            continue
        row = {m: s.mape_pct for m in METRICS if (s := found.metrics.get(m)) and s.mape_pct}
        out.setdefault(reach, {})[method] = {**row, "breaks": float(sum(found.breaks.values()))}
    return out


def with_margin(figures: Ceilings) -> Ceilings:
    """The figures with the margin on every MAPE (breaks: as they are)."""
    return {
        reach: {
            method: {
                k: v
                if k == "breaks"
                else math.ceil(10 * (v * (1 + MARGIN_RELATIVE) + MARGIN_POINTS)) / 10
                for k, v in row.items()
            }
            for method, row in methods.items()
        }
        for reach, methods in figures.items()
    }


def load() -> Ceilings:
    """The recorded ceilings."""
    found: Ceilings = json.loads(PATH.read_text(encoding="utf-8"))
    return found


def main() -> None:
    """Rewrite ceilings.json from a quick dev run."""
    from bench.validation.run import evaluate

    PATH.write_text(json.dumps(with_margin(current(evaluate((DEV,), quick=True))), indent=1) + "\n")
    print(f"wrote {PATH}")


if __name__ == "__main__":
    main()
