"""The serving model's one entry point: a deployment's curves -> EngineModel -> predict(Query).

EngineModel.predict gives output tok/s, TTFT, TPOT and e2e (means, p50, p90, p99, and an 80%
band from the calibrated parameters' covariance plus what the model still misses) at any
concurrency or request rate and ISL/OSL, with the running and queued sequences behind it.
Curves, sizing and projection ask here; a deployment without physics facts gets the reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from hardware.gpus import GpuSpec, load_gpu_specs
from planner.curves.load import CurvePoint, LoadCurve
from planner.engine.calibrate import (
    CONCURRENCY,
    RATE,
    Calibration,
    Observation,
    calibrate,
    steady,
)
from planner.engine.spec import EngineSpec, empirical_spec, engine_spec
from planner.engine.step import Array, StepParams
from planner.physics.roofline import curve_capacity, curve_ceilings

# z of the 10th/90th percentile, and p90's share of the way from the centre to p99 (log space).
Z80 = 1.2816
_P90_SHARE = 0.6
_BAND_SAMPLES = 48


@dataclass(frozen=True, slots=True)
class Query:
    """Where to read the model: loads of one kind at one workload."""

    load_kind: str  # "concurrency" or "rate"
    loads: tuple[float, ...]
    isl: float
    osl: float


@dataclass(frozen=True, slots=True)
class Metric:
    """One metric at each load: centre (mean), tails and the 80% band of the centre."""

    mean: tuple[float, ...]
    p50: tuple[float, ...]
    p90: tuple[float, ...]
    p99: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class EnginePrediction:
    """The model's answer at each load of a query; nan where the engine cannot serve the load
    (a request rate beyond its capacity)."""

    query: Query
    output_tok_s: Metric
    ttft_ms: Metric
    tpot_ms: Metric
    e2e_ms: Metric
    running: tuple[float, ...]
    queued: tuple[float, ...]
    capacity_seqs: float  # sequences the cache or the engine admits at this workload


@dataclass(frozen=True, slots=True)
class EngineModel:
    """A calibrated serving model of one deployment."""

    spec: EngineSpec
    calibration: Calibration

    @property
    def params(self) -> StepParams:
        """The calibrated parameters."""
        return self.calibration.params

    def predict(self, query: Query) -> EnginePrediction:
        """Metrics at the query's loads, with tails and bands."""
        loads = np.array(query.loads, dtype=np.float64)
        isl = np.full_like(loads, query.isl)
        osl = np.full_like(loads, query.osl)
        kind = query.load_kind
        centre = steady(self.spec, self.params, kind, loads, isl=isl, osl=osl)
        # Every parameter draw at once: each parameter a column (draws x 1) against the loads
        # (the step law is elementwise), one array per metric of draws x loads.
        draws = _param_draws(cal := self.calibration)
        stacked = StepParams(*(draws[:, [i]] for i in range(draws.shape[1])))  # type: ignore[arg-type]
        sampled = steady(self.spec, stacked, kind, loads, isl=isl, osl=osl)
        metrics = {}
        for name, field, scale, ratio in (
            ("output_tok_s", "output_tok_s", 1.0, 1.0),
            ("ttft", "ttft_s", 1000.0, cal.ttft_p99_ratio),
            ("tpot", "tpot_s", 1000.0, cal.tpot_p99_ratio),
            ("e2e", "e2e_s", 1000.0, math.sqrt(cal.tpot_p99_ratio * cal.ttft_p99_ratio)),
        ):
            values = getattr(centre, field) * scale
            spread = np.broadcast_to(getattr(sampled, field) * scale, (len(draws), len(loads)))
            metrics[name] = _metric(values, spread, ratio, cal.spread_of(_spread_key(name)))
        cap = float(self.spec.capacity_seqs(query.isl, query.osl) * self.params.kv_scale)
        return EnginePrediction(
            query=query,
            output_tok_s=metrics["output_tok_s"],
            ttft_ms=metrics["ttft"],
            tpot_ms=metrics["tpot"],
            e2e_ms=metrics["e2e"],
            running=tuple(float(v) for v in centre.running),
            queued=tuple(float(v) for v in centre.queued),
            capacity_seqs=min(cap, float(self.spec.max_seqs)),
        )


@lru_cache(maxsize=1024)
def _param_draws(calibration: Calibration) -> Array:
    """Parameter draws from the calibration's covariance, one row each (seeded: the same every
    call, made once per calibration)."""
    cov = np.array(calibration.log_cov)
    centre = np.log(calibration.params.vector())
    rng = np.random.default_rng(20261202)
    draws: Array = np.exp(rng.multivariate_normal(centre, cov, size=_BAND_SAMPLES, method="eigh"))
    draws.setflags(write=False)
    return draws


def _spread_key(name: str) -> str:
    return {"e2e": "tpot"}.get(name, name)


def _metric(values: Array, samples: Array, p99_ratio: float, residual_sd: float) -> Metric:
    """Centre, tails and the 80% band: parameter spread and residual spread in quadrature."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(samples)
        param_sd = np.nanstd(np.where(np.isfinite(logs), logs, np.nan), axis=0)
    param_sd = np.where(np.isfinite(param_sd), param_sd, 0.0)
    sd = np.sqrt(param_sd**2 + residual_sd**2)
    p99 = values * p99_ratio
    p90 = values * p99_ratio**_P90_SHARE
    return Metric(
        mean=_tuple(values),
        p50=_tuple(values),
        p90=_tuple(p90),
        p99=_tuple(p99),
        low=_tuple(values * np.exp(-Z80 * sd)),
        high=_tuple(values * np.exp(Z80 * sd)),
    )


def _tuple(values: Array) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


def deployment_spec(curve: LoadCurve, specs: Sequence[GpuSpec] | None = None) -> EngineSpec | str:
    """The physics of a curve's deployment, or why there is none."""
    found = curve_ceilings(curve, list(specs) if specs is not None else None)
    if isinstance(found, str):
        return found.replace("no physics check", "no serving model")
    gpu = next(g for g in (specs or load_gpu_specs()) if g.gpu == found.gpu)
    return engine_spec(found, gpu, curve.key.engine)


def observations(curves: Sequence[LoadCurve]) -> list[Observation]:
    """Every concurrency and request-rate point of the curves (with a stated ISL/OSL) as
    calibration levels."""
    out: list[Observation] = []
    for curve in curves:
        isl, osl = curve.key.isl, curve.key.osl
        if not isl or not osl:
            continue
        out.extend(point_observation(point, CONCURRENCY, isl, osl) for point in curve.points)
        out.extend(point_observation(point, RATE, isl, osl) for point in curve.rate_points)
    return out


def point_observation(point: CurvePoint, kind: str, isl: float, osl: float) -> Observation:
    """One curve point as a level: the centre is the mean, else p50, else the unstated value
    (a rate point's `concurrency` is its rate)."""
    ttft = _first(point.mean_ttft_ms, point.p50_ttft_ms, point.ttft_ms)
    tpot = _first(point.mean_tpot_ms, point.p50_tpot_ms, point.tpot_ms)
    return Observation(
        load_kind=kind,
        load=point.concurrency,
        isl=float(isl),
        osl=float(osl),
        output_tok_s=point.output_tok_s,
        ttft_s=None if ttft is None else ttft / 1000.0,
        tpot_s=None if tpot is None else tpot / 1000.0,
        p99_ttft_s=None if point.p99_ttft_ms is None else point.p99_ttft_ms / 1000.0,
        p99_tpot_s=None if point.p99_tpot_ms is None else point.p99_tpot_ms / 1000.0,
    )


def engine_model(curves: Sequence[LoadCurve], *, empirical: bool = False) -> EngineModel | str:
    """The serving model of the deployment behind `curves` (one engine, GPU, TP, precision and
    model; every workload and load kind of it), calibrated on their levels, or why there is
    none. `empirical`: without physics facts, scale the step law to the levels (for reading
    another load of a measured workload only)."""
    if not curves:
        return "no serving model: no measured curve"
    levels = observations(curves)
    if not levels:
        return "no serving model: no level with a stated ISL/OSL to calibrate on"
    spec = deployment_spec(curves[0])
    if isinstance(spec, str) and empirical:
        spec = _empirical(curves[0], levels) or spec
    if isinstance(spec, str):
        return spec
    spec = _with_stated_cache(spec, curves[0])
    return EngineModel(spec, calibrate(spec, levels))


def _with_stated_cache(spec: EngineSpec, curve: LoadCurve) -> EngineSpec:
    """The spec with the cache the engine itself reported at start-up (its KV tokens), where it
    did: the report beats the memory rule's estimate (planner.physics.memory)."""
    found = curve_capacity(curve)
    isl, osl = curve.key.isl, curve.key.osl
    if found is None or found.source != "stated" or not isl or not osl:
        return spec
    estimate = spec.capacity_seqs(isl, osl)
    if estimate <= 0 or not math.isfinite(estimate) or estimate >= spec.max_seqs:
        return spec
    return replace(spec, kv_budget_bytes=spec.kv_budget_bytes * found.streams / estimate)


def _empirical(curve: LoadCurve, levels: list[Observation]) -> EngineSpec | None:
    tpots = [o.tpot_s for o in levels if o.tpot_s]
    ttfts = [o.ttft_s for o in levels if o.ttft_s]
    if not tpots or not ttfts:
        return None
    tp = curve.key.tp or curve.gpus_per_replica or 1
    isl = min(o.isl for o in levels)
    return empirical_spec(
        curve.key.engine, curve.key.gpu or "?", tp, isl=isl, fastest=(min(tpots), min(ttfts))
    )


def with_spec(model: EngineModel, spec: EngineSpec) -> EngineModel:
    """The same calibrated efficiencies on other hardware (projection)."""
    return replace(model, spec=spec)


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


__all__ = ["CONCURRENCY", "RATE", "EngineModel", "EnginePrediction", "Query", "engine_model"]
