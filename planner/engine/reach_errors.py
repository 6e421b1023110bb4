"""The error each reach of an answer states (next level up, two levels up, a workload 2-4x away,
another GPU generation, a twin, a physics-only estimate), measured on the dev split of the
validation protocol by bench/validation/reach_errors.py and kept in reach_errors.json beside
this file: the MAPE a plan states and the error 80% of answers stayed within, which its bands
and error draws take (so an 80% band covers about 80% of the truth at that reach).
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

from planner.curves.load import BasisError

TABLE_PATH = Path(__file__).with_name("reach_errors.json")
Z80 = 1.2816  # z of the 10th / 90th percentile
_METRICS = ("output_tok_s", "ttft_ms", "tpot_ms")


@cache
def _table() -> dict[str, dict[str, dict[str, float]]]:
    if not TABLE_PATH.exists():
        return {}
    loaded: dict[str, dict[str, dict[str, float]]] = json.loads(TABLE_PATH.read_text("utf-8"))
    return loaded


def reach_error(key: str, fallback: BasisError) -> BasisError:
    """The measured error of a reach ('next level up', 'another workload 4-8x', 'across
    generations', 'twin', 'another model'...), each metric the table lacks from `fallback`."""
    row = _table().get(key, {})
    mape = [_figure(row, m, "mape_pct", fallback, i) for i, m in enumerate(_METRICS)]
    band = [_figure(row, m, "q80_pct", fallback, i, band=True) for i, m in enumerate(_METRICS)]
    return BasisError(mape[0], mape[1], mape[2], (band[0], band[1], band[2]))


def band_sigma(pct: float) -> float:
    """The log-space sigma of a lognormal error that 80% of answers stay within `pct` % of."""
    return math.log1p(pct / 100.0) / Z80


def _figure(
    row: dict[str, dict[str, float]],
    metric: str,
    name: str,
    fallback: BasisError,
    index: int,
    *,
    band: bool = False,
) -> float:
    found = row.get(metric, {}).get(name)
    if found is not None:
        return float(found)
    values = (fallback.output_tok_s_pct, fallback.ttft_pct, fallback.tpot_pct)
    if band and fallback.band80_pct is not None:
        return fallback.band80_pct[index]
    # A lognormal error of this MAPE: its 80% bound (MAPE ~ 0.8 sigma).
    sigma = math.sqrt(math.pi / 2) * values[index] / 100.0
    return round(100.0 * math.expm1(Z80 * sigma), 1) if band else values[index]


def workload_bucket(ratio: float) -> str:
    """The validation's distance bucket of a workload reach ratio (max of ISL and OSL ratios)."""
    for limit, name in ((2.0, "1-2x"), (4.0, "2-4x"), (8.0, "4-8x")):
        if ratio <= limit:
            return name
    return ">8x"


def levels_up_error(octaves: float) -> BasisError:
    """The error of an answer `octaves` doublings of concurrency past the measured levels: the
    next level's up to one, two levels' up to two, growing with the distance past that."""
    fallback = BasisError(10.0, 35.0, 10.0)
    if octaves <= 1.05:
        return reach_error("next level up", fallback)
    two = reach_error("two levels up", fallback)
    if octaves <= 2.05 or two.band80_pct is None:
        return two
    grow = octaves / 2.0
    tok, ttft, tpot = two.band80_pct
    return BasisError(
        two.output_tok_s_pct * grow,
        two.ttft_pct * grow,
        two.tpot_pct * grow,
        (tok * grow, ttft * grow, tpot * grow),
    )
