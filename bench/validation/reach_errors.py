"""The error each reach states, measured on the dev split: per reach (and bucket) and metric, the
MAPE and the 80th percentile of the absolute log error of the product's own answer. The planner
states the MAPE and draws its bands from the 80th percentile (planner/engine/reach_errors.json),
so that 80% of answers at each reach fall inside their band. Never fitted on held-out points.

Run: `python -m bench.validation.reach_errors` (writes the planner's table; prints it).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from bench.validation.cases import (
    GENERATION,
    NEXT_UP,
    OTHER_MODEL,
    SAME_GEN,
    TWIN,
    TWO_UP,
    WORKLOAD,
)
from bench.validation.product import PHYSICS, PLAN, PREDICT
from bench.validation.run import scored_cases
from bench.validation.score import CaseResult
from bench.validation.split import DEV
from planner.engine.reach_errors import TABLE_PATH

# Which of the product's paths answers each reach as a person asks it.
METHOD = {
    NEXT_UP: PREDICT,
    TWO_UP: PREDICT,
    WORKLOAD: PLAN,
    GENERATION: PREDICT,
    SAME_GEN: PREDICT,
    TWIN: PLAN,
    OTHER_MODEL: PHYSICS,
}
METRICS = ("output_tok_s", "ttft_ms", "tpot_ms")
MIN_POINTS = 8  # fewer: the reach keeps the table's other figure for its kind


def _key(result: CaseResult) -> str:
    reach = result.case.reaches[0]
    bucket = result.case.bucket
    if reach == GENERATION:
        return "across generations"
    if reach == SAME_GEN:
        return "same generation"
    return f"{reach} {bucket}".strip()


def measured(results: Sequence[CaseResult]) -> dict[str, dict[str, dict[str, float]]]:
    """Per reach key and metric: n, MAPE % and the 80th percentile of |log error| (as %)."""
    logs: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for result in results:
        reach = result.case.reaches[0]
        method = METHOD.get(reach, PREDICT)
        for point in result.scored:
            if point.method == method and point.guess and point.truth and point.guess > 0:
                logs[_key(result)][point.metric].append(math.log(point.guess / point.truth))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for key, metrics in logs.items():
        out[key] = {
            metric: {
                "n": float(len(values)),
                "mape_pct": round(100.0 * float(np.mean(np.abs(np.expm1(values)))), 1),
                "q80_pct": round(100.0 * math.expm1(float(np.quantile(np.abs(values), 0.8))), 1),
            }
            for metric, values in metrics.items()
            if len(values) >= MIN_POINTS
        }
    return out


def main() -> None:
    """Measure every reach on the dev split and write the planner's table."""
    reaches = tuple(METHOD)
    table = measured(scored_cases((DEV,), quick=False, reaches=reaches))
    TABLE_PATH.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for key, metrics in sorted(table.items()):
        print(key, {m: (v["mape_pct"], v["q80_pct"], int(v["n"])) for m, v in metrics.items()})


if __name__ == "__main__":
    main()
