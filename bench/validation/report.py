"""The validation tables (one per reach, dev and held-out side by side) and the JSON file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from bench.validation.cases import REACHES
from bench.validation.product import METRICS
from bench.validation.summary import Group, GroupStats, MetricStats

SHORT = {"output_tok_s": "tok/s", "ttft_ms": "TTFT", "tpot_ms": "TPOT"}


def _cell(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _split_cells(stats: GroupStats | None) -> str:
    """n, MAPE x3, median signed x3, in band, in stated (tok/s), refused, unknown, breaks."""
    if stats is None:
        return f"{'(none)':<74}"
    m: dict[str, MetricStats] = stats.metrics
    empty = MetricStats(0, 0, None, None, None, None, None, None)
    got = [m.get(metric, empty) for metric in METRICS]
    mape = "/".join(_cell(s.mape_pct) for s in got)
    signed = "/".join(_cell(s.median_signed_pct) for s in got)
    band = "/".join(_cell(s.in_band_pct, 0) for s in got)
    stated = "/".join(_cell(s.in_stated_pct, 0) for s in got)
    unknown = sum(s.unknown for s in got)
    breaks = sum(stats.breaks.values())
    return (
        f"{got[0].n:>5} {mape:>17} {signed:>18} {band:>11} {stated:>11} "
        f"{stats.refused:>4} {unknown:>4} {breaks:>4}"
    )


def table(stats: dict[Group, GroupStats], splits: Sequence[str]) -> list[str]:
    """Lines of the tables: per reach, per bucket and method, each split's cells."""
    head = (
        f"{'n':>5} {'MAPE tok/TTFT/TPOT':>17} {'median signed %':>18} {'in band %':>11} "
        f"{'in stated %':>11} {'ref':>4} {'unk':>4} {'brk':>4}"
    )
    lines = [f"{'bucket / method':<40}" + " | ".join(f"{s}: {head}" for s in splits)]
    for reach in REACHES:
        keys = sorted({(b, m) for (r, b, _, m) in stats if r == reach})
        if not keys:
            lines.append(f"== {reach}: no case")
            continue
        lines.append(f"== {reach}")
        for bucket, method in keys:
            cells = " | ".join(
                f"{s}: {_split_cells(stats.get((reach, bucket, s, method)))}" for s in splits
            )
            lines.append(f"{(bucket or 'all') + ' / ' + method:<40}{cells}")
    return lines


def worst_and_reasons(stats: dict[Group, GroupStats], splits: Sequence[str]) -> list[str]:
    """Per reach and product method: the worst tok/s point, refusal reasons and breaks."""
    lines = []
    for (reach, bucket, split, method), found in sorted(stats.items()):
        if bucket or split not in splits:
            continue
        worst = found.metrics.get("output_tok_s")
        if worst is not None and worst.worst_deployment:
            lines.append(
                f"{reach} [{split}] {method}: worst tok/s {_cell(worst.worst_pct)}% at "
                f"{worst.worst_deployment}"
            )
        for why, count in found.reasons.most_common(3):
            lines.append(f"{reach} [{split}] {method}: refused {count}x: {why}")
        for kind, count in found.breaks.most_common():
            lines.append(f"{reach} [{split}] {method}: invariant '{kind}' broken {count}x")
    return lines


def to_json(stats: dict[Group, GroupStats]) -> list[dict[str, object]]:
    """Every group as a JSON-safe row."""
    rows: list[dict[str, object]] = []
    for (reach, bucket, split, method), found in sorted(stats.items()):
        rows.append(
            {
                "reach": reach,
                "bucket": bucket,
                "split": split,
                "method": method,
                "cases": found.cases,
                "refused": found.refused,
                "refusal_reasons": dict(found.reasons),
                "invariant_breaks": dict(found.breaks),
                "metrics": {k: asdict(v) for k, v in found.metrics.items()},
            }
        )
    return rows
