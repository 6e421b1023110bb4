"""Cross-GPU projection through the serving model: the deployment's model, calibrated on its
measured curve, moved to the target GPU (its bandwidth, FLOPS at the precision the kernels run
in there, memory and limits; the efficiencies stay with the engine), and the measured points
scaled by how much the model says each metric changes at the same load. One model gives the
point and, through its reach's validated error, the band.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import fields, replace

import numpy as np

from hardware.gpus import GpuSpec, load_gpu_specs
from planner.curves.load import LATENCY_ATTRS, CurvePoint, LoadCurve
from planner.engine.model import (
    CONCURRENCY,
    EngineModel,
    EnginePrediction,
    Query,
    deployment_spec,
    engine_model,
)
from planner.engine.reach_errors import reach_error
from planner.engine.step import Array
from planner.engine.transfer import GENERATION_EXPONENTS, project_model
from planner.physics.dominance import kernel_path
from planner.physics.projection import project_curve
from planner.physics.roofline import Ceilings, curve_ceilings

# Which model ratio scales each CurvePoint attribute.
_RATIO_OF = {"output_tok_s": "output_tok_s"} | {
    attr: metric for metric, stats in LATENCY_ATTRS.items() for attr in stats.values()
}


def model_ratios(curve: LoadCurve, target: GpuSpec, source: GpuSpec) -> dict[str, np.ndarray] | str:
    """Per metric (output_tok_s, ttft, tpot, e2e): the target model's value over the source
    model's at each of the curve's concurrencies; or why there is no model."""
    model = engine_model([curve])
    if isinstance(model, str):
        return model
    spec = deployment_spec(replace(curve, key=replace(curve.key, gpu=target.gpu)))
    if isinstance(spec, str):
        return spec
    across = (source.architecture or "?") != (target.architecture or "?")
    bw_exp, flops_exp = GENERATION_EXPONENTS if across else (1.0, 1.0)
    moved = project_model(model, spec, bw_exp, flops_exp)
    return _ratios(model, moved, curve)


def _ratios(model: EngineModel, moved: EngineModel, curve: LoadCurve) -> dict[str, Array]:
    loads = curve.concurrencies()
    query = Query(CONCURRENCY, loads, float(curve.key.isl or 1), float(curve.key.osl or 1))
    return _divide(model.predict(query), moved.predict(query))


def _divide(here: EnginePrediction, there: EnginePrediction) -> dict[str, Array]:
    """there / here per metric (nan where either is not a positive finite number)."""
    out: dict[str, Array] = {}
    for metric in ("output_tok_s", "ttft_ms", "tpot_ms", "e2e_ms"):
        a = np.array(getattr(here, metric).mean)
        b = np.array(getattr(there, metric).mean)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[metric.removesuffix("_ms")] = np.where((a > 0) & np.isfinite(b), b / a, np.nan)
    return out


def scaled_points(curve: LoadCurve, ratios: dict[str, Array]) -> tuple[CurvePoint, ...]:
    """The curve's points with each value times its metric's model ratio at that load."""
    out = []
    for i, point in enumerate(curve.points):
        changes: dict[str, float | None] = {}
        for f in fields(CurvePoint):
            metric = _RATIO_OF.get(f.name)
            value = getattr(point, f.name)
            if metric is None or value is None:
                continue
            ratio = float(ratios[metric][i])
            changes[f.name] = value * ratio if math.isfinite(ratio) else None
        out.append(replace(point, **changes))  # type: ignore[arg-type]
    return tuple(out)


def workload_ratios(
    curves: Sequence[LoadCurve], curve: LoadCurve, isl: int, osl: int
) -> dict[str, Array] | str:
    """Per metric: the deployment's model (calibrated on every curve of it) at isl/osl over the
    model at `curve`'s own workload, at each of `curve`'s concurrencies; or why no model."""
    model = engine_model(list(curves))
    if isinstance(model, str):
        return model
    loads = curve.concurrencies()
    here = model.predict(
        Query(CONCURRENCY, loads, float(curve.key.isl or 1), float(curve.key.osl or 1))
    )
    there = model.predict(Query(CONCURRENCY, loads, float(isl), float(osl)))
    return _divide(here, there)


def monotone(points: Sequence[CurvePoint]) -> tuple[CurvePoint, ...]:
    """Derived points that obey the physics along the load: throughput, TTFT and TPOT never
    fall as concurrency rises (a running maximum; past the cache's capacity they stay flat)."""
    best: dict[str, float] = {}
    out = []
    for point in sorted(points, key=lambda p: p.concurrency):
        changes: dict[str, float] = {}
        for name in _RATIO_OF:
            value = getattr(point, name)
            if value is None:
                continue
            if name in best and value < best[name]:
                changes[name] = best[name]
            best[name] = max(best.get(name, value), value)
        out.append(replace(point, **changes) if changes else point)
    return tuple(out)


def adjusted_by_model(
    curves: Sequence[LoadCurve], nearest: LoadCurve, isl: int, osl: int
) -> tuple[CurvePoint, ...] | str:
    """`nearest`'s points moved to isl/osl by the deployment's serving model (each value times
    the model's change at its load), monotone along the load and under the deployment's
    roofline at isl/osl; or why there is no model."""
    ratios = workload_ratios(curves, nearest, isl, osl)
    if isinstance(ratios, str):
        return ratios
    points = monotone(scaled_points(nearest, ratios))
    ceil = curve_ceilings(nearest)
    return points if isinstance(ceil, str) else under_roofline(points, ceil, isl, osl)


_TTFT_ATTRS = tuple(LATENCY_ATTRS["ttft"].values())
_TPOT_ATTRS = tuple(LATENCY_ATTRS["tpot"].values())


def under_roofline(
    points: Sequence[CurvePoint], ceil: Ceilings, isl: int, osl: int
) -> tuple[CurvePoint, ...]:
    """Derived points kept on the physical side of the deployment's roofline: output tok/s at
    most its ceiling at that concurrency, one stream no faster than the single-stream decode
    ceiling, TTFT no shorter than the prefill floor."""
    floor = ceil.min_prefill_ms(isl)
    fastest_tpot = 1000.0 / ceil.decode_tok_s_single_stream
    out = []
    for point in points:
        changes: dict[str, float] = {}
        most = ceil.max_output_tok_s(point.concurrency, isl, osl)
        if point.output_tok_s is not None and point.output_tok_s > most:
            changes["output_tok_s"] = most
        for name, low in ((a, floor) for a in _TTFT_ATTRS):
            value = getattr(point, name)
            if value is not None and low is not None and value < low:
                changes[name] = low
        for name in _TPOT_ATTRS:
            value = getattr(point, name)
            if value is not None and value < fastest_tpot:
                changes[name] = fastest_tpot
        out.append(replace(point, **changes) if changes else point)
    return tuple(out)


def project_through_model(
    curve: LoadCurve, target_gpu: str, specs: list[GpuSpec] | None = None
) -> LoadCurve | str:
    """The curve on another GPU, or why it cannot be: the physics' projection (planner.physics.
    projection: labels, capacity, the per-point scaling where there is no model) with every
    point read through the serving model where the deployment has one (model_ratios), monotone
    along the load and under the target's roofline, stating the measured error of its reach."""
    projected = project_curve(curve, target_gpu, specs)
    if isinstance(projected, str):
        return projected
    by_name = {spec.gpu: spec for spec in (specs if specs is not None else load_gpu_specs())}
    source, target = by_name.get(curve.key.gpu or ""), by_name.get(projected.key.gpu or "")
    ceil = curve_ceilings(projected, list(by_name.values()))
    if source is None or target is None or isinstance(ceil, str):
        return projected
    ratios = model_ratios(curve, target, source)
    if isinstance(ratios, str):
        return projected
    points = under_roofline(monotone(scaled_points(curve, ratios)), ceil, *curve.workload())
    first = len(curve.flags)
    flags = [*projected.flags[:first], _how(curve, source, target), *projected.flags[first + 1 :]]
    error = projected.basis_error
    if error is not None:
        stated = reach_error("across generations", error)
        flags = [f.replace(error.text(), stated.text()) for f in flags]
        error = stated
    return replace(projected, points=points, flags=tuple(flags), basis_error=error)


def _how(curve: LoadCurve, source: GpuSpec, target: GpuSpec) -> str:
    precision = curve.key.precision
    here, there = kernel_path(source, precision), kernel_path(target, precision)
    return (
        f"PROJECTED from {curve.label_text()} through the serving model calibrated on it: "
        f"{target.gpu} has {target.mem_bw_tb_s / source.mem_bw_tb_s:.2f}x the bandwidth and "
        f"{there.tflops / here.tflops:.2f}x the FLOPS the kernels run at ({here.words} on "
        f"{source.gpu}, {there.words} on {target.gpu}); each measured point times the model's "
        "change at its load"
    )
