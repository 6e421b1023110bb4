"""Pick the curve behind each engine x GPU x TP: same model and precision, closest workload.

Ranking within one candidate: exact ISL/OSL, then provenance (measured > imported > published),
then the number of levels. Everything left out is said in warnings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from planner.curves import LoadCurve, canonical_model
from planner.scenario import Scenario, WorkloadSpec

WORKLOAD_FACTOR = 2.0
_PROVENANCE_RANK = {"measured": 0, "imported": 1, "published": 2}
Rank = tuple[int, int, int, int, str]
Entry = tuple[Rank, LoadCurve, str]
GroupKey = tuple[str, str, int | None, str]  # engine, GPU, TP, precision


@dataclass(frozen=True, slots=True)
class Candidate:
    """The chosen curve for one engine x GPU x TP, with why it was chosen and what it lacks."""

    engine: str
    gpu: str
    tp: int | None
    curve: LoadCurve
    gpus_per_replica: int
    flags: tuple[str, ...]
    # Streams whose KV cache fits one replica's memory (planner.physics estimate); None = unknown.
    max_streams_memory: int | None = None


def workload_match(curve: LoadCurve, workload: WorkloadSpec) -> tuple[int, str | None] | None:
    """(rank, flag) of a curve's ISL/OSL against the scenario's; None when too far to use."""
    isl, osl = curve.key.isl, curve.key.osl
    if isl == workload.isl and osl == workload.osl:
        return 0, None
    if isl is None or osl is None:
        return 1, "workload not stated by source"
    if _within(isl, workload.isl) and _within(osl, workload.osl):
        return 2, (
            f"measured at ISL/OSL {isl}/{osl}, scenario {workload.isl}/{workload.osl}: not adjusted"
        )
    return None


def _within(measured: int, wanted: int) -> bool:
    return max(measured / wanted, wanted / measured) <= WORKLOAD_FACTOR


def select_curves(
    scenario: Scenario, curves: Sequence[LoadCurve]
) -> tuple[list[Candidate], list[str]]:
    """The best curve per engine x GPU x TP for the scenario, and warnings about the rest."""
    skipped: Counter[str] = Counter()
    groups: dict[GroupKey, list[Entry]] = {}
    for curve in curves:
        reason = _exclusion(scenario, curve)
        if reason is not None:
            skipped[reason] += 1
            continue
        match = workload_match(curve, scenario.workload)
        if match is None:
            skipped[f"measured at ISL/OSL {curve.key.isl}/{curve.key.osl}"] += 1
            continue
        gpu = curve.key.gpu or ""
        rank: Rank = (
            match[0],
            _PROVENANCE_RANK.get(curve.provenance, 3),
            -len(curve.points),
            curve.run_id if curve.run_id is not None else 1 << 62,
            curve.label_text(),
        )
        group = (curve.key.engine, gpu, curve.key.tp, curve.key.precision or "")
        groups.setdefault(group, []).append((rank, curve, match[1] or ""))
    candidates = [_candidate(key, entries) for key, entries in sorted(groups.items(), key=_order)]
    candidates = _prefer_stated_workloads(candidates, skipped)
    return candidates, _warnings(scenario, skipped, candidates)


def _prefer_stated_workloads(candidates: list[Candidate], skipped: Counter[str]) -> list[Candidate]:
    """Drop curves of unstated workload where the same engine and GPU were measured with one."""
    stated = {(c.engine, c.gpu) for c in candidates if c.curve.key.isl and c.curve.key.osl}
    kept = []
    for candidate in candidates:
        unstated = not (candidate.curve.key.isl and candidate.curve.key.osl)
        if unstated and (candidate.engine, candidate.gpu) in stated:
            skipped[
                "workload not stated by source, and the same engine and GPU were measured "
                "with a stated ISL/OSL"
            ] += 1
            continue
        kept.append(candidate)
    return kept


def _order(item: tuple[GroupKey, object]) -> tuple[str, str, int, str]:
    (engine, gpu, tp, precision), _ = item
    return engine, gpu, tp or 0, precision


def _exclusion(scenario: Scenario, curve: LoadCurve) -> str | None:
    """Why a curve cannot back any candidate of the scenario (None when it can)."""
    key = curve.key
    wanted = scenario.candidates
    rules = (
        (canonical_model(key.model) != canonical_model(scenario.model), "other model"),
        (
            scenario.precision is not None and (key.precision or "") != scenario.precision,
            f"precision {key.precision or 'not stated'} (scenario {scenario.precision})",
        ),
        (key.engine not in wanted.engines, f"engine {key.engine} not among the candidates"),
        (key.gpu is None, "GPU not stated by source"),
        (key.gpu not in wanted.gpus, f"GPU {key.gpu} not among the candidates"),
        (
            wanted.tp is not None and key.tp not in wanted.tp,
            f"TP {key.tp or 'not stated'} not among the candidate TP sizes",
        ),
        (all(p.output_tok_s is None for p in curve.points), "no output tok/s measured"),
        (
            curve.gpus_per_replica is None,
            "GPUs per replica not stated (neither TP nor GPU count): give --tp or --gpu-count",
        ),
    )
    return next((reason for failed, reason in rules if failed), None)


def _candidate(key: GroupKey, entries: list[Entry]) -> Candidate:
    entries.sort(key=lambda entry: entry[0])
    _, curve, flag = entries[0]
    flags = [flag] if flag else []
    if len(entries) > 1:
        flags.append(
            f"chosen from {len(entries)} runs for this engine, GPU, TP and precision: "
            f"{curve.provenance}, {len(curve.points)} levels, run {curve.run_id}"
        )
    gpus = curve.gpus_per_replica or 1  # _exclusion keeps curves without it out
    return Candidate(key[0], key[1], key[2], curve, gpus, tuple(flags))


def _warnings(scenario: Scenario, skipped: Counter[str], candidates: list[Candidate]) -> list[str]:
    out = [
        f"{count} curve(s) not used: {reason}"
        for reason, count in sorted(skipped.items())
        if reason != "other model"
    ]
    present = {(c.engine, c.gpu) for c in candidates}
    for engine in scenario.candidates.engines:
        for gpu in scenario.candidates.gpus:
            if (engine, gpu) not in present:
                out.append(f"no usable measurements for {engine} on {gpu}: not considered")
    return out
