"""Pick the curve behind each engine x GPU x TP: same model and precision, closest workload.

Ranking within one candidate: the same ISL/OSL (exact first, then within tokenisation rounding:
planner.curves.workload_groups), then the nearest workload (adjusted to the scenario's), then
provenance (measured > imported > published), then the number of levels.
Measured GPUs win over projected ones. Everything left out is said in warnings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from hardware.gpus import GpuSpec, load_gpu_specs
from planner.curves.floor import floored
from planner.curves.load import OFFLINE_ONLY, LoadCurve
from planner.engine.curves import distance_error, reach_ratio, serving_model_curve
from planner.engine.project import adjusted_by_model, project_through_model
from planner.inputs.scenario import Scenario
from planner.physics.dominance import dominates, spec_distance
from planner.physics.identity import relation, twin_label
from planner.physics.roofline import Ceilings, check_curve, curve_ceilings, workload_capacity
from planner.physics.workload_adjust import WorkloadMatch, adjust_curve, match_workload

_PROVENANCE_RANK = {"measured": 0, "imported": 1, "published": 2}
Rank = tuple[int, float, int, int, int, int, str]
Entry = tuple[Rank, LoadCurve, WorkloadMatch]
GroupKey = tuple[str, str, int | None, str, str]  # engine, GPU, TP, precision, DP/EP layout
# Below every point-by-point match (0 same ... 3 adjusted): a curve read from the serving model.
SERVING_MODEL_RANK = 4
CeilingCache = dict[tuple[str, str, int | None, str | None], Ceilings | str]


@dataclass(frozen=True, slots=True)
class Candidate:
    """The chosen curve for one engine x GPU x TP, with why it was chosen and what it lacks."""

    engine: str
    gpu: str
    tp: int | None
    curve: LoadCurve
    gpus_per_replica: int
    flags: tuple[str, ...]
    # Streams whose KV cache fits one replica's memory (planner.physics.roofline estimate); None =
    # unknown.
    max_streams_memory: int | None = None
    # The physics flags of points above a ceiling of the stated hardware (empty: none).
    above_ceiling: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Context:
    """What every step of one selection shares: the scenario, GPU specs, ceilings per deployment."""

    scenario: Scenario
    specs: list[GpuSpec]
    ceilings: CeilingCache

    def ceilings_of(self, curve: LoadCurve) -> Ceilings | str:
        key = curve.key
        index = (key.model, key.gpu or "", key.tp or curve.gpus_per_replica, key.precision)
        if index not in self.ceilings:
            self.ceilings[index] = curve_ceilings(curve, self.specs)
        return self.ceilings[index]


def select_curves(
    scenario: Scenario, curves: Sequence[LoadCurve]
) -> tuple[list[Candidate], list[str]]:
    """The best curve per engine x GPU x TP for the scenario, and warnings about the rest.

    A curve of another ISL/OSL is adjusted to the scenario's (within the validated limit); a
    deployment measured only further away, or only at request rates, is read from its serving
    model (planner.engine); a deployment measured only on another GPU is projected to the
    wanted one; each candidate carries its physics flags and KV-cache stream estimate.
    """
    context = _Context(scenario, load_gpu_specs(), {})
    skipped: Counter[str] = Counter()
    groups: dict[GroupKey, list[Entry]] = {}
    refused: dict[GroupKey, WorkloadMatch] = {}
    far: dict[GroupKey, list[LoadCurve]] = {}
    for curve in with_offline_ceilings(curves):
        reason = _exclusion(scenario, curve)
        if reason is not None:
            skipped[reason] += 1
            continue
        key = curve.key
        group = (key.engine, key.gpu or "", key.tp, key.precision or "", key.parallel_text())
        if not curve.points:  # request-rate levels only: read through the serving model
            far.setdefault(group, []).append(curve)
            continue
        match = match_workload(
            curve, scenario.workload.isl, scenario.workload.osl, context.ceilings_of(curve)
        )
        if match.refused is not None:
            if group not in refused or match.distance < refused[group].distance:
                refused[group] = match
            far.setdefault(group, []).append(curve)
            continue
        twin = relation(key.model, scenario.model) == "twin"
        groups.setdefault(group, []).append((_rank(curve, match, twin), curve, match))
    _add_serving_model_curves(scenario, groups, far)
    wanted = set(scenario.candidates.gpus)
    measured = [
        _candidate(context, key, entries)
        for key, entries in sorted(groups.items(), key=_order)
        if key[1] in wanted
    ]
    kept = _prefer_stated_workloads([c for c in measured if c is not None], skipped)
    projected, sources = _projected(context, groups, kept, skipped)
    _count_unused(groups, sources, refused, skipped, wanted)
    candidates = sorted(
        _prefer_stated_workloads([*kept, *projected], skipped), key=_candidate_order
    )
    return candidates, _warnings(scenario, skipped, candidates)


def _add_serving_model_curves(
    scenario: Scenario, groups: dict[GroupKey, list[Entry]], far: dict[GroupKey, list[LoadCurve]]
) -> None:
    """A deployment measured only at workloads too far to adjust point by point, or only at
    request rates, is read from its serving model (planner.engine), calibrated on all of them,
    at the scenario's ISL/OSL."""
    isl, osl = scenario.workload.isl, scenario.workload.osl
    for group, members in far.items():
        if group in groups:
            continue
        built = serving_model_curve(members, isl, osl)
        if isinstance(built, str):
            continue
        match = WorkloadMatch(SERVING_MODEL_RANK, reach_ratio(built, isl, osl), None)
        groups[group] = [(_rank(built, match), built, match)]


def _rank(curve: LoadCurve, match: WorkloadMatch, twin: bool = False) -> Rank:
    return (
        match.rank,
        match.distance,
        int(twin),  # the model's own measurements before a twin's at the same workload
        _PROVENANCE_RANK.get(curve.provenance, 3),
        -len(curve.points),
        curve.run_id if curve.run_id is not None else 1 << 62,
        curve.label_text(),
    )


def _projected(
    context: _Context,
    groups: dict[GroupKey, list[Entry]],
    measured: list[Candidate],
    skipped: Counter[str],
) -> tuple[list[Candidate], set[GroupKey]]:
    """Candidates for engine x GPU pairs with no measured curve, projected from the same
    deployment on the measured GPU nearest the wanted one (planner.physics.dominance), never
    behind a measured GPU it has every resource of; and the groups they were projected from."""
    measured_pairs = {(c.engine, c.gpu) for c in measured}
    by_name = {spec.gpu: spec for spec in context.specs}
    have: set[GroupKey] = set()
    out = []
    sources: set[GroupKey] = set()
    for gpu in context.scenario.candidates.gpus:
        for key, entries in _nearest_first(groups, by_name.get(gpu), by_name):
            engine, source_gpu, tp, precision, layout = key
            skip = source_gpu == gpu or (engine, gpu) in measured_pairs
            if skip or (engine, gpu, tp, precision, layout) in have:
                continue
            source = _candidate(context, key, list(entries))
            if source is None:
                continue
            projected = project_through_model(source.curve, gpu, context.specs)
            if isinstance(projected, str):
                skipped[projected] += 1
                continue
            have.add((engine, gpu, tp, precision, layout))
            sources.add(key)
            projected = _floored(context, groups, key, gpu, projected)
            flag = f"projected from {source_gpu} measurements (not measured)"
            candidate = replace(source, gpu=gpu, curve=projected, flags=(*source.flags, flag))
            out.append(_with_memory(context, candidate))
    return out, sources


def _nearest_first(
    groups: dict[GroupKey, list[Entry]], target: GpuSpec | None, by_name: dict[str, GpuSpec]
) -> list[tuple[GroupKey, list[Entry]]]:
    """The groups in deployment order, each deployment's GPUs nearest the target first."""

    def distance(key: GroupKey) -> float:
        source = by_name.get(key[1])
        if target is None or source is None:
            return float("inf")
        return spec_distance(target, source, key[3] or None)

    return sorted(groups.items(), key=lambda item: (_deployment(item[0]), distance(item[0])))


def _deployment(key: GroupKey) -> tuple[str, int, str, str]:
    return key[0], key[2] or 0, key[3], key[4]


def _floored(
    context: _Context,
    groups: dict[GroupKey, list[Entry]],
    source: GroupKey,
    gpu: str,
    projected: LoadCurve,
) -> LoadCurve:
    """The projection floored by the measured curve of the same deployment on the GPU it
    dominates that is nearest to it (the strongest bound), if any."""
    by_name = {spec.gpu: spec for spec in context.specs}
    target, tp = by_name.get(gpu), source[2] or projected.gpus_per_replica or 1
    if target is None:
        return projected
    bounds = [
        (spec_distance(target, by_name[key[1]], key[3] or None), key)
        for key in groups
        if _deployment(key) == _deployment(source)
        and key[1] in by_name
        and dominates(target, by_name[key[1]], key[3] or None, tp)
    ]
    if not bounds:
        return projected
    _, nearest = min(bounds)
    bound = _candidate(context, nearest, list(groups[nearest]))
    return projected if bound is None else floored(projected, bound.curve)


def _count_unused(
    groups: dict[GroupKey, list[Entry]],
    sources: set[GroupKey],
    refused: dict[GroupKey, WorkloadMatch],
    skipped: Counter[str],
    wanted: set[str],
) -> None:
    """Say which groups did not back a candidate: other GPUs, workloads too far."""
    for key, entries in groups.items():
        if key[1] not in wanted and key not in sources:
            skipped[f"GPU {key[1]} not among the candidates"] += len(entries)
    # One warning per nearest workload, naming every deployment it leaves out.
    by_reason: dict[str, dict[str, list[str]]] = {}
    for key, match in sorted(refused.items(), key=_order):
        engine, gpu, tp, _, _ = key
        if key not in groups and match.refused is not None:
            where = by_reason.setdefault(match.refused, {}).setdefault(f"{engine} on {gpu}", [])
            where.append(f"TP{tp or '?'}")
    for reason, deployments in by_reason.items():
        listed = "; ".join(f"{name} {', '.join(tps)}" for name, tps in deployments.items())
        count = sum(len(tps) for tps in deployments.values())
        skipped[
            f"{listed}: nearest {reason}; measure this workload or choose one closer to it"
        ] += count


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


def _order(item: tuple[GroupKey, object]) -> tuple[str, str, int, str, str]:
    (engine, gpu, tp, precision, layout), _ = item
    return engine, gpu, tp or 0, precision, layout


def _candidate_order(candidate: Candidate) -> tuple[str, str, int, str]:
    return candidate.engine, candidate.gpu, candidate.tp or 0, candidate.curve.key.precision or ""


def with_offline_ceilings(curves: Sequence[LoadCurve]) -> list[LoadCurve]:
    """The curves, each sweep without an offline ceiling of its own given the highest offline
    (max-throughput) output tok/s of the same deployment and workload, where one was stored."""
    found: dict[tuple[object, ...], float] = {}
    for curve in curves:
        if curve.ceiling_output_tok_s is not None:
            key = _ceiling_key(curve)
            found[key] = max(found.get(key, 0.0), curve.ceiling_output_tok_s)
    return [
        _with_ceiling(curve, found[_ceiling_key(curve)])
        if curve.points and curve.ceiling_output_tok_s is None and _ceiling_key(curve) in found
        else curve
        for curve in curves
    ]


def _with_ceiling(curve: LoadCurve, ceiling: float) -> LoadCurve:
    flag = (
        f"offline (max-throughput) output {ceiling:,.0f} tok/s of the same deployment and "
        "workload (another run): a ceiling on the curve"
    )
    return replace(curve, ceiling_output_tok_s=ceiling, flags=(*curve.flags, flag))


def _ceiling_key(curve: LoadCurve) -> tuple[object, ...]:
    key = curve.key
    return (
        key.engine,
        key.model_id,
        key.precision,
        key.gpu,
        key.tp,
        key.isl,
        key.osl,
    )


def _exclusion(scenario: Scenario, curve: LoadCurve) -> str | None:
    """Why a curve cannot back any candidate of the scenario (None when it can)."""
    key = curve.key
    wanted = scenario.candidates
    rules = (
        (relation(key.model, scenario.model) is None, "other model"),
        (not curve.points and not curve.rate_points, OFFLINE_ONLY),
        (
            scenario.precision is not None and (key.precision or "") != scenario.precision,
            f"precision {key.precision or 'not stated'} (scenario {scenario.precision})",
        ),
        (key.engine not in wanted.engines, f"engine {key.engine} not among the candidates"),
        (key.gpu is None, "GPU not stated by source"),
        (
            wanted.tp is not None and key.tp not in wanted.tp,
            f"TP {key.tp or 'not stated'} not among the candidate TP sizes",
        ),
        (
            all(p.output_tok_s is None for p in (*curve.points, *curve.rate_points)),
            "no output tok/s measured",
        ),
        (
            curve.gpus_per_replica is None,
            "GPUs per replica not stated (neither TP nor GPU count): give --tp or --gpu-count",
        ),
    )
    return next((reason for failed, reason in rules if failed), None)


def _candidate(context: _Context, key: GroupKey, entries: list[Entry]) -> Candidate | None:
    entries.sort(key=lambda entry: entry[0])
    _, curve, match = entries[0]
    flags = [match.flag] if match.flag else []
    if relation(curve.key.model, context.scenario.model) == "twin":
        flags.insert(0, twin_label(curve.key.model))
    if len(entries) > 1:
        flags.append(
            f"chosen from {len(entries)} runs for this engine, GPU, TP and precision: "
            f"{curve.provenance}, {len(curve.points)} levels, run {curve.run_id}"
        )
    gpus = curve.gpus_per_replica or 1  # _exclusion keeps curves without it out
    candidate = Candidate(key[0], key[1], key[2], curve, gpus, tuple(flags))
    if match.needs_adjustment:
        workload = context.scenario.workload
        adjusted = adjust_curve(curve, workload.isl, workload.osl, context.ceilings_of(curve))
        if isinstance(adjusted, str):
            return None
        error = distance_error(reach_ratio(curve, workload.isl, workload.osl))
        moved = adjusted_by_model([curve], curve, workload.isl, workload.osl)
        points = adjusted.points if isinstance(moved, str) else moved
        candidate = replace(candidate, curve=replace(adjusted, points=points, basis_error=error))
    return _with_physics(context, candidate, curve)


def _with_physics(context: _Context, candidate: Candidate, measured: LoadCurve) -> Candidate:
    """The candidate with the above-ceiling flags and notes of the measured curve behind it."""
    check = check_curve(measured, context.specs)
    flags = tuple(dict.fromkeys((*candidate.flags, *check.flags, *check.notes)))
    return _with_memory(context, replace(candidate, flags=flags, above_ceiling=check.flags))


def _with_memory(context: _Context, candidate: Candidate) -> Candidate:
    """The candidate with the estimated streams whose KV cache fits for the scenario's ISL+OSL."""
    ceil = context.ceilings_of(candidate.curve)
    if isinstance(ceil, str):
        return candidate
    workload = context.scenario.workload
    found = workload_capacity(ceil, candidate.curve, workload.isl, workload.osl)
    return replace(candidate, max_streams_memory=found.streams)


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
