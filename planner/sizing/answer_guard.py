"""The runtime guard: an answer (a fit's or the serving model's predictions, a computed curve)
that breaks physics (planner.physics.invariants) is refused with the reasons, never shown.

check_answer / check_engine_answer / check_curve_answer return the reasons (empty: sound);
refuse_broken raises PlanningError with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from errors import PlanningError
from hardware.gpus import GpuSpec, load_gpu_specs
from planner.curves.load import LoadCurve
from planner.curves.names import canonical_gpu
from planner.engine.model import EnginePrediction, Metric
from planner.fitting.predict import Prediction
from planner.physics.dominance import dominates
from planner.physics.invariants import (
    Band,
    Series,
    bands_hold,
    no_worse,
    throughput_rises,
    ttft_rises,
    under_roofline,
)
from planner.physics.roofline import Ceilings, curve_ceilings

# Slack for answers that carry measured levels (a fit reads the measured value where it has no
# series): repeat runs of one level differ by about this much, physics by none.
ANSWER_TOLERANCE = 0.02
# Provenances that are data, not capplan's answers: a measured curve above a ceiling is
# flagged (planner.physics.roofline.check_curve), never refused.
_DATA = frozenset({"measured", "imported", "published"})


def label_of(curve: LoadCurve) -> str:
    """The deployment in words: engine, model, precision, TP x GPU, ISL/OSL."""
    key = curve.key
    tp = key.tp or curve.gpus_per_replica or "?"
    return (
        f"{key.engine} {key.model} {key.precision or '?'} on {tp} x {key.gpu or '?'} "
        f"(ISL {key.isl or '?'}, OSL {key.osl or '?'})"
    )


def prediction_series(predictions: Sequence[Prediction], label: str, p99: bool = False) -> Series:
    """Fitted predictions as a concurrency series (TTFT: p50, or p99 when `p99`)."""
    ordered = sorted(predictions, key=lambda p: p.concurrency)
    ttft = "p99_ttft_ms" if p99 else "p50_ttft_ms"

    def band(attr: str) -> Band:
        return Band(
            tuple(getattr(p, attr) for p in ordered),
            tuple(getattr(p, f"{attr}_lo") for p in ordered),
            tuple(getattr(p, f"{attr}_hi") for p in ordered),
        )

    return Series(
        label=label,
        load_kind="concurrency",
        loads=tuple(p.concurrency for p in ordered),
        output_tok_s=band("output_tok_s"),
        ttft_ms=band(ttft),
        tpot_ms=band("tpot_ms"),
    )


def engine_series(prediction: EnginePrediction, label: str) -> Series:
    """The serving model's answer as a series (centres: the means)."""

    def band(metric: Metric) -> Band:
        return Band(metric.mean, metric.low, metric.high)

    return Series(
        label=label,
        load_kind=prediction.query.load_kind,
        loads=prediction.query.loads,
        output_tok_s=band(prediction.output_tok_s),
        ttft_ms=band(prediction.ttft_ms),
        tpot_ms=band(prediction.tpot_ms),
        running=prediction.running,
        e2e_ms=band(prediction.e2e_ms),
    )


def curve_series(curve: LoadCurve) -> Series:
    """A curve's concurrency levels as a series (TTFT and TPOT: p50, else unstated, else mean)."""
    points = sorted(curve.points, key=lambda p: p.concurrency)
    return Series(
        label=f"{label_of(curve)} [{curve.provenance}]",
        load_kind="concurrency",
        loads=tuple(p.concurrency for p in points),
        output_tok_s=Band(tuple(p.output_tok_s for p in points)),
        ttft_ms=Band(tuple(_first(p.p50_ttft_ms, p.ttft_ms, p.mean_ttft_ms) for p in points)),
        tpot_ms=Band(tuple(_first(p.p50_tpot_ms, p.tpot_ms, p.mean_tpot_ms) for p in points)),
    )


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def series_reasons(
    series: Series,
    ceil: Ceilings | str | None,
    workload: tuple[int | None, int | None],
    capacity_seqs: float | None = None,
    tol: float = ANSWER_TOLERANCE,
) -> list[str]:
    """Every physics one series breaks: bands, rising throughput and TTFT, the roofline (when
    the ceilings and the workload are known)."""
    reasons = [
        *bands_hold(series),
        *throughput_rises(series, capacity_seqs, tol),
        *ttft_rises(series, tol),
    ]
    isl, osl = workload
    if isinstance(ceil, Ceilings) and isl and osl:
        reasons.extend(under_roofline(series, ceil, isl, osl))
    return reasons


def check_answer(
    predictions: Sequence[Prediction],
    curve: LoadCurve,
    *,
    capacity_seqs: float | None = None,
    specs: Sequence[GpuSpec] | None = None,
) -> list[str]:
    """Why a curve's predictions (workflows.predict.read_fit's answer) break physics; empty when
    they are sound. `capacity_seqs`: the sequences the cache admits, past which throughput must
    be flat (None: only that it never falls)."""
    label = label_of(curve)
    ceil = curve_ceilings(curve, list(specs) if specs is not None else None)
    workload = (curve.key.isl, curve.key.osl)
    centre = series_reasons(prediction_series(predictions, label), ceil, workload, capacity_seqs)
    p99 = prediction_series(predictions, f"{label} p99", p99=True)
    tail = replace(p99, output_tok_s=Band(()), tpot_ms=Band(()))  # checked with the centres
    return [*centre, *bands_hold(tail), *ttft_rises(tail, ANSWER_TOLERANCE)]


def check_engine_answer(
    prediction: EnginePrediction, ceil: Ceilings | str | None, label: str = "serving model"
) -> list[str]:
    """Why one answer of the serving model breaks physics; empty when it is sound."""
    query = prediction.query
    workload = (round(query.isl), round(query.osl))
    capacity = prediction.capacity_seqs if query.load_kind == "concurrency" else None
    return series_reasons(engine_series(prediction, label), ceil, workload, capacity)


def check_curve_answer(
    curve: LoadCurve, measured: Sequence[LoadCurve] = (), specs: Sequence[GpuSpec] | None = None
) -> list[str]:
    """Why a computed curve (projected, physics-only, the serving model's) breaks physics: its
    own shape and roofline, and any measured curve of the same deployment on a GPU its GPU
    dominates that it falls short of. Data (measured, imported, published) is never refused."""
    if curve.provenance in _DATA:
        return []
    spec_list = list(specs) if specs is not None else load_gpu_specs()
    series = curve_series(curve)
    ceil = curve_ceilings(curve, spec_list)
    reasons = series_reasons(series, ceil, (curve.key.isl, curve.key.osl))
    for bound in _dominated(curve, measured, spec_list):
        reasons.extend(no_worse(series, curve_series(bound), ANSWER_TOLERANCE))
    return reasons


def _dominated(
    curve: LoadCurve, measured: Sequence[LoadCurve], specs: list[GpuSpec]
) -> list[LoadCurve]:
    """The measured curves of the curve's deployment and workload on GPUs its GPU dominates."""
    by_name = {spec.gpu: spec for spec in specs}
    key = curve.key
    gpu = by_name.get(canonical_gpu(key.gpu or ""))
    tp = key.tp or curve.gpus_per_replica or 1
    if gpu is None:
        return []
    return [
        other
        for other in measured
        if other.provenance in _DATA
        and _same_deployment(curve, other)
        and (slower := by_name.get(canonical_gpu(other.key.gpu or ""))) is not None
        and dominates(gpu, slower, key.precision, tp)
    ]


def _same_deployment(a: LoadCurve, b: LoadCurve) -> bool:
    ka, kb = a.key, b.key
    return (
        ka.engine == kb.engine
        and ka.model_id == kb.model_id
        and ka.precision == kb.precision
        and (ka.tp or a.gpus_per_replica) == (kb.tp or b.gpus_per_replica)
        and (ka.isl, ka.osl) == (kb.isl, kb.osl)
        and ka.attention_dp == kb.attention_dp
    )


def refuse_broken(reasons: Sequence[str], what: str) -> None:
    """Raise PlanningError naming every broken physics of `what`; nothing when none."""
    if reasons:
        listed = "; ".join(reasons[:5]) + (
            f"; and {len(reasons) - 5} more" if len(reasons) > 5 else ""
        )
        raise PlanningError(
            f"{what} refused: it breaks physics no answer may break ({listed}). "
            "Report it with the deployment and loads: the model or projection behind it is wrong."
        )


__all__ = [
    "ANSWER_TOLERANCE",
    "check_answer",
    "check_curve_answer",
    "check_engine_answer",
    "refuse_broken",
]
