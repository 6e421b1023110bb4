"""Saturation: when a sweep stops climbing (output tok/s flat, or p50 TTFT exploded over the
first level's) and where the knee was. Pure: judged from each finished level's numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from measurements.probe.config import SaturationConfig


@dataclass(frozen=True, slots=True)
class SaturationPoint:
    """What saturation looks at in one finished level."""

    load_value: float
    output_tok_s: float | None
    p50_ttft_ms: float | None


@dataclass(frozen=True, slots=True)
class SaturationVerdict:
    """Whether to stop, the knee (last load value before saturation) and why, in words."""

    saturated: bool
    knee: float | None
    reason: str


def assess(
    points: Sequence[SaturationPoint], config: SaturationConfig, unit: str = "concurrency"
) -> SaturationVerdict:
    """Judge the sweep so far: TTFT blow-up first, then `patience` flat levels in a row.

    A level is flat when its output tok/s grew less than min_gain_pct over the previous
    level's (a level without throughput is flat). The knee is the last level before the flat
    run, or before the level whose TTFT blew up."""
    if not config.enabled or len(points) < 2:
        return SaturationVerdict(False, None, "")
    blowup = _ttft_blowup(points, config, unit)
    if blowup is not None:
        return blowup
    flat = 0
    for earlier, later in zip(reversed(points[:-1]), reversed(points), strict=False):
        if _gain_pct(earlier, later) >= config.min_gain_pct:
            break
        flat += 1
    if flat < config.patience:
        return SaturationVerdict(False, None, "")
    knee, last = points[-1 - flat], points[-1]
    return SaturationVerdict(
        True,
        knee.load_value,
        f"saturated: output tok/s grew less than {config.min_gain_pct:g}% per level for "
        f"{flat} level(s) after {unit} {knee.load_value:g} "
        f"({_tok_s(knee)} -> {_tok_s(last)} at {unit} {last.load_value:g}); "
        f"knee at {unit} {knee.load_value:g}",
    )


def _ttft_blowup(
    points: Sequence[SaturationPoint], config: SaturationConfig, unit: str
) -> SaturationVerdict | None:
    first, last = points[0], points[-1]
    if not first.p50_ttft_ms or last.p50_ttft_ms is None:
        return None
    if last.p50_ttft_ms <= config.ttft_blowup_factor * first.p50_ttft_ms:
        return None
    knee = points[-2]
    return SaturationVerdict(
        True,
        knee.load_value,
        f"saturated: p50 TTFT {last.p50_ttft_ms:.1f} ms at {unit} {last.load_value:g} is more "
        f"than {config.ttft_blowup_factor:g}x the {first.p50_ttft_ms:.1f} ms at {unit} "
        f"{first.load_value:g}; knee at {unit} {knee.load_value:g}",
    )


def _gain_pct(earlier: SaturationPoint, later: SaturationPoint) -> float:
    if later.output_tok_s is None:
        return 0.0
    if not earlier.output_tok_s:
        return float("inf")
    return 100.0 * (later.output_tok_s - earlier.output_tok_s) / earlier.output_tok_s


def _tok_s(point: SaturationPoint) -> str:
    return "no throughput" if point.output_tok_s is None else f"{point.output_tok_s:.1f} tok/s"
