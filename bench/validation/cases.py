"""The cases of every reach: what the product is given (the store), what it is asked (model,
GPU, workload, concurrencies) and the measured truth it is scored against."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from bench.validation.data import Gpus, deployment_key, workload
from bench.validation.split import DEV, gpu_split_of, held_out_gpu, split_of
from planner.curves.load import LoadCurve
from planner.curves.names import canonical_model
from planner.curves.workload_groups import same_workload
from planner.physics.roofline import Ceilings, curve_ceilings

INTERIOR = "interior"
NEXT_UP = "next level up"
TWO_UP = "two levels up"
PAST_KNEE = "past the knee"
WORKLOAD = "another workload"
SAME_GEN = "another GPU, same generation"
GENERATION = "another generation"
TWIN = "twin"
OTHER_MODEL = "another model"
REACHES = (INTERIOR, NEXT_UP, TWO_UP, PAST_KNEE, WORKLOAD, SAME_GEN, GENERATION, TWIN, OTHER_MODEL)
MIN_LEVELS = 3  # k >= 3 levels imported before reading k+1 and k+2
PLATEAU_GAIN = 1.05  # less than 5% more tok/s past the last imported level: the plateau
# A re-release with no stored run: Llama-3.1-70B relabelled (no config ships for Llama-3.3).
SYNTHETIC_TWINS = {"llama-3.1-70b": "meta-llama/Llama-3.3-70B-Instruct"}


@dataclass(frozen=True, slots=True)
class Case:
    """One question: the store the product gets, the model/GPU/workload asked and the truth."""

    reaches: tuple[str, ...]  # every reach this case counts for (a next level may be past the knee)
    bucket: str  # the reach's sub-kind: workload distance, GPU pair, "" for none
    split: str
    store: tuple[LoadCurve, ...]  # first curve: the one `capplan predict` reads
    target: LoadCurve  # measured truth, of the asked model
    levels: tuple[float, ...]  # the target's concurrencies scored
    project_to: str | None = None  # the GPU asked for, when another than the store's
    bandwidth_ratio: float | None = None  # target / source, for the bandwidth baseline

    @property
    def model(self) -> str:
        """The model asked for."""
        return self.target.key.model


def _trimmed(curve: LoadCurve, keep: Sequence[float]) -> LoadCurve:
    """The curve with only the levels at `keep`, imported as if nothing else was measured."""
    points = tuple(p for p in curve.points if p.concurrency in set(keep))
    return replace(curve, points=points, ceiling_output_tok_s=None)


def level_cases(reps: Sequence[LoadCurve]) -> Iterator[Case]:
    """Interior (leave one inner level out), next level up and two levels up (first k >= 3)."""
    for curve in reps:
        levels = curve.concurrencies()
        split = split_of(curve.key.model)
        for i in range(1, len(levels) - 1):
            if len(levels) >= MIN_LEVELS:
                kept = levels[:i] + levels[i + 1 :]
                yield Case((INTERIOR,), "", split, (_trimmed(curve, kept),), curve, (levels[i],))
        for k in range(MIN_LEVELS, len(levels)):
            store = (_trimmed(curve, levels[:k]),)
            past = _past_knee(curve, k)
            yield Case((NEXT_UP, *((PAST_KNEE,) if past else ())), "", split, store, curve,
                       (levels[k],))  # fmt: skip
            if k + 1 < len(levels):
                yield Case((TWO_UP,), "", split, store, curve, (levels[k + 1],))


def _past_knee(curve: LoadCurve, k: int) -> bool:
    """Whether level k (0-based) lies past the KV capacity (the product's estimate) or on the
    measured throughput plateau."""
    point, last = curve.points[k], curve.points[k - 1]
    if (
        point.output_tok_s
        and last.output_tok_s
        and point.output_tok_s < PLATEAU_GAIN * (last.output_tok_s)
    ):
        return True
    ceil = curve_ceilings(curve)
    isl, osl = workload(curve)
    return isinstance(ceil, Ceilings) and point.concurrency > ceil.streams_for(isl, osl)


def ratio_bucket(ratio: float) -> str:
    """The workload-distance bucket of validation.md."""
    for limit, name in ((2.0, "1-2x"), (4.0, "2-4x"), (8.0, "4-8x")):
        if ratio <= limit:
            return name
    return ">8x"


def workload_cases(reps: Sequence[LoadCurve]) -> Iterator[Case]:
    """One workload of a deployment stored; another measured workload of it asked."""
    by: dict[tuple[object, ...], list[LoadCurve]] = defaultdict(list)
    for curve in reps:
        by[deployment_key(curve.key)].append(curve)
    for group in by.values():
        for source in group:
            for target in group:
                if same_workload(workload(source), workload(target)):
                    continue
                (si, so), (ti, to) = workload(source), workload(target)
                ratio = max(max(si, ti) / min(si, ti), max(so, to) / min(so, to))
                split = split_of(target.key.model)
                yield Case((WORKLOAD,), ratio_bucket(ratio), split, (source,), target,
                           target.concurrencies())  # fmt: skip


def gpu_kind(gpus: Gpus, source: str, target: str) -> tuple[str, str]:
    """(reach, bucket) of a GPU pair: same generation by pair, else the direction."""
    a, b = gpus.architecture(source), gpus.architecture(target)
    if a and a == b:
        pair = " <-> ".join(sorted((_short(source), _short(target))))
        return SAME_GEN, pair
    return GENERATION, f"{a or '?'} -> {b or '?'}"


def _short(gpu: str) -> str:
    return gpu.split("-", 1)[0]


def gpu_cases(reps: Sequence[LoadCurve], gpus: Gpus) -> Iterator[Case]:
    """A deployment measured on one GPU, asked on another it was measured on too, workload by
    workload; the store holds every workload of the source GPU's deployment."""
    by: dict[tuple[object, ...], dict[str, list[LoadCurve]]] = defaultdict(
        lambda: defaultdict(list)
    )
    measured_on: dict[str, set[str]] = defaultdict(set)
    for curve in reps:
        by[deployment_key(curve.key)[:-1]][curve.key.gpu or "?"].append(curve)
        measured_on[canonical_model(curve.key.model)].add(curve.key.gpu or "?")
    for per_gpu in by.values():
        for source_gpu, sources in per_gpu.items():
            for target_gpu, targets in per_gpu.items():
                if source_gpu != target_gpu:
                    yield from _gpu_pair(gpus, sources, targets, measured_on)


def _gpu_pair(
    gpus: Gpus,
    sources: list[LoadCurve],
    targets: list[LoadCurve],
    measured_on: dict[str, set[str]],
) -> Iterator[Case]:
    source_gpu, target_gpu = sources[0].key.gpu or "?", targets[0].key.gpu or "?"
    reach, bucket = gpu_kind(gpus, source_gpu, target_gpu)
    model = targets[0].key.model
    held = held_out_gpu(model, measured_on[canonical_model(model)])
    split = gpu_split_of(model, (source_gpu, target_gpu), held)
    ratio = gpus.bandwidth_ratio(source_gpu, target_gpu)
    for target in targets:
        same = [s for s in sources if same_workload(workload(s), workload(target))]
        if not same:
            continue
        others = tuple(s for s in sources if s is not same[0])
        yield Case((reach,), bucket, split, (same[0], *others), target, target.concurrencies(),
                   target_gpu, ratio)  # fmt: skip


def twin_cases(reps: Sequence[LoadCurve]) -> Iterator[Case]:
    """Model A's curve stored, model B asked: DeepSeek-V3 <-> R1 (identical configs) and
    SYNTHETIC_TWINS (a curve relabelled to its re-release)."""
    by: dict[tuple[object, ...], dict[str, LoadCurve]] = defaultdict(dict)
    for curve in reps:
        name = canonical_model(curve.key.model)
        if name in ("deepseek-v3", "deepseek-r1"):
            rest = (*deployment_key(curve.key)[:1], *deployment_key(curve.key)[2:])
            by[(*rest, *workload(curve))][name] = curve
        if name in SYNTHETIC_TWINS:
            twin = replace(curve, key=replace(curve.key, model=SYNTHETIC_TWINS[name]))
            yield Case((TWIN,), "re-release (synthetic)", split_of(curve.key.model), (curve,),
                       twin, curve.concurrencies())  # fmt: skip
    for pair in by.values():
        for a, source in pair.items():
            for b, target in pair.items():
                if a != b:
                    yield Case((TWIN,), "DeepSeek-V3 <-> R1", split_of(target.key.model),
                               (source,), target, target.concurrencies())  # fmt: skip


def other_model_cases(reps: Sequence[LoadCurve], every: Sequence[LoadCurve]) -> Iterator[Case]:
    """Every other family's curves stored; the physics-only estimate of this deployment, one
    workload (the most levels) per deployment."""
    best: dict[tuple[object, ...], LoadCurve] = {}
    for curve in reps:
        key = deployment_key(curve.key)
        if key not in best or len(curve.points) > len(best[key].points):
            best[key] = curve
    for target in best.values():
        if len(target.points) < 2:  # one level says nothing of a curve
            continue
        name = split_of(target.key.model)
        others = tuple(c for c in every if _family(c) != _family(target))
        yield Case((OTHER_MODEL,), "", name, others, target, target.concurrencies())


def _family(curve: LoadCurve) -> str:
    from bench.validation.split import family

    return family(curve.key.model)


def all_cases(reps: Sequence[LoadCurve], every: Sequence[LoadCurve], gpus: Gpus) -> list[Case]:
    """Every case of every reach, in a stable order."""
    return [
        *level_cases(reps),
        *workload_cases(reps),
        *gpu_cases(reps, gpus),
        *twin_cases(reps),
        *other_model_cases(reps, every),
    ]


def is_dev(case: Case) -> bool:
    """Whether a case is on the dev side of the split."""
    return case.split == DEV


def finite(value: float | None) -> bool:
    """A number that can be scored."""
    return value is not None and math.isfinite(value)
