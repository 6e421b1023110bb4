"""The serving model of a deployment nothing measured: the model's physics (config x GPU x TP)
with the calibrated efficiencies of other models measured on the same engine and GPU (the
donors), else on the same engine, else the physics priors. Its curves are "physics-only",
labelled so, and carry the validated error of that transfer (bench/bench_engine.py, leave one
model out) into a plan's samples.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from hardware.gpus import GpuSpec
from planner.curves.load import BasisError, CurveKey, CurvePoint, LoadCurve
from planner.curves.names import canonical_model
from planner.engine.calibrate import Calibration
from planner.engine.model import CONCURRENCY, EngineModel, Query, engine_model, with_spec
from planner.engine.reach_errors import reach_error
from planner.engine.spec import EngineSpec, engine_spec
from planner.engine.step import PRIOR_LOG_SD, PRIOR_MEDIAN, StepParams
from planner.physics.roofline import ceilings

PHYSICS_ONLY = "physics-only"
# Leave one model out on the silicon sample (bench/bench_engine.py, "other model"): the
# efficiencies of the other models on the same engine, GPU and TP read at this one's physics,
# MAPE % of output tok/s, TTFT and TPOT, the larger of DEV (31.4 / 60.6 / 39.7) and HOLDOUT
# (31.3 / 44.0 / 43.9).
TRANSFER_ERROR = BasisError(31.4, 60.6, 43.9)
_LOADS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
# How a deployment's achieved bandwidth and FLOPS move to another GPU generation: the datasheet
# ratio to these powers (bench/bench_generations.py fits them on the dev models).
GENERATION_EXPONENTS = (1.0, 0.5)

Deployment = tuple[str, str, str | None, str | None, int | None]


@dataclass(frozen=True, slots=True)
class Donors:
    """The efficiencies a deployment borrows, and whose they are."""

    params: StepParams
    log_sd: tuple[float, ...]
    basis: str  # "3 models on vLLM and H200 SXM 141GB", or "the physics priors"


def donors(
    curves: Sequence[LoadCurve], engine: str, gpu: str, tp: int, exclude: str = ""
) -> Donors:
    """The calibrated efficiencies of the measured deployments on `engine` and `gpu` at TP `tp`
    (else at any TP, else on `engine` alone), other than of the model `exclude`; the priors
    when there are none. TP first: its communication shows in the overheads."""
    groups: dict[Deployment, list[LoadCurve]] = defaultdict(list)
    for curve in curves:
        key = curve.key
        if (exclude and key.model_id == canonical_model(exclude)) or (key.engine != engine):
            continue
        if curve.points or curve.rate_points:
            groups[(key.engine, key.model_id, key.precision, key.gpu, key.tp)].append(curve)
    for scope in ("tp", "gpu", "engine"):
        chosen = [
            g
            for d, g in groups.items()
            if scope == "engine" or (d[3] == gpu and (scope == "gpu" or d[4] == tp))
        ]
        found = [m for m in (engine_model(g) for g in chosen) if isinstance(m, EngineModel)]
        if found:
            logs = np.log(np.array([m.params.vector() for m in found]))
            spread = np.maximum(logs.std(axis=0), 0.1)
            models = len({m[0].key.model_id for m in chosen})
            where = {
                "tp": f"{engine} on {gpu} at TP{tp}",
                "gpu": f"{engine} on {gpu}",
                "engine": f"{engine} (other GPUs)",
            }[scope]
            return Donors(
                StepParams.from_vector(np.exp(logs.mean(axis=0))),
                tuple(float(v) for v in spread),
                f"efficiencies of {len(found)} measured deployment(s) of {models} "
                f"model(s) on {where}",
            )
    return Donors(StepParams(*PRIOR_MEDIAN), PRIOR_LOG_SD, "the physics priors")


def transferred(borrowed: Donors) -> Calibration:
    """A calibration made of borrowed efficiencies (no level of its own)."""
    cov = np.diag(np.square(np.array(borrowed.log_sd)))
    return Calibration(
        params=borrowed.params,
        log_cov=tuple(tuple(float(v) for v in row) for row in cov),
        spread=(
            ("output_tok_s", TRANSFER_ERROR.output_tok_s_pct / 100),
            ("tpot", TRANSFER_ERROR.tpot_pct / 100),
            ("ttft", TRANSFER_ERROR.ttft_pct / 100),
        ),
        ttft_p99_ratio=1.8,
        tpot_p99_ratio=1.15,
        ratios_measured=False,
        levels=0,
        workloads=0,
        max_concurrency=None,
        max_rate=None,
    )


@dataclass(frozen=True, slots=True)
class Target:
    """A deployment to estimate: model, precision, engine, GPU, TP and workload."""

    model: str
    precision: str | None
    engine: str
    gpu: GpuSpec
    tp: int
    isl: int
    osl: int


def physics_only_curve(
    target: Target, curves: Sequence[LoadCurve], *, exclude_model: bool = False
) -> LoadCurve | str:
    """The target's closed-loop curve from physics and donors' efficiencies, or why none.
    `exclude_model`: borrow from other models only (how its error was validated); by default
    the same model on the same engine elsewhere may lend too."""
    ceil = ceilings(target.model, target.precision, target.gpu, target.tp, engine=target.engine)
    if isinstance(ceil, str):
        return ceil.replace("no physics check", "no physics-only estimate")
    spec = engine_spec(ceil, target.gpu, target.engine)
    if isinstance(spec, str):
        return spec
    exclude = target.model if exclude_model else ""
    borrowed = donors(curves, target.engine, target.gpu.gpu, target.tp, exclude=exclude)
    model = EngineModel(spec, transferred(borrowed))
    most = model.spec.capacity_seqs(target.isl, target.osl) * borrowed.params.kv_scale
    if most < 1:
        where = f"{target.tp} x {target.gpu.gpu}"
        return f"no physics-only estimate: the weights leave no KV cache on {where}"
    loads = tuple(float(c) for c in _LOADS if c <= max(1.0, most))
    found = model.predict(Query(CONCURRENCY, loads, target.isl, target.osl))
    points = tuple(
        CurvePoint(
            concurrency=loads[i],
            output_tok_s=_finite(found.output_tok_s.mean[i]),
            **{
                f"{stat}_{metric}_ms": _finite(getattr(values, stat)[i])
                for metric, values in (
                    ("ttft", found.ttft_ms),
                    ("tpot", found.tpot_ms),
                    ("e2e", found.e2e_ms),
                )
                for stat in ("p50", "p90", "p99", "mean")
            },
        )
        for i in range(len(loads))
    )
    key = CurveKey(
        target.engine, None, target.model, target.precision, target.gpu.gpu, target.tp,
        target.tp, target.isl, target.osl,
    )  # fmt: skip
    error = reach_error("another model", TRANSFER_ERROR)
    flag = (
        f"PHYSICS-ONLY estimate: no sound measurement of this deployment; the model's config on "
        f"{target.tp} x "
        f"{target.gpu.gpu} with the {borrowed.basis}; p99s from assumed tail ratios; "
        f"validated error {error.text()}"
    )
    return LoadCurve(
        key=key,
        points=points,
        run_id=None,
        provenance=PHYSICS_ONLY,
        label="physics-only estimate",
        cold_start_s=None,
        engine_build_s=None,
        gpus_per_replica=target.tp,
        flags=(flag,),
        basis_error=error,
    )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def project_model(
    model: EngineModel, target: EngineSpec, bw_exponent: float, flops_exponent: float
) -> EngineModel:
    """A calibrated deployment moved to another GPU: the target's memory and limits, and its
    bandwidth and FLOPS as the source's achieved ones times the datasheet ratio raised to the
    exponents (1: efficiencies carry over unchanged; 0: per-GPU speed unchanged)."""
    source = model.spec
    bw = source.mem_bw_bytes_s * (target.mem_bw_bytes_s / source.mem_bw_bytes_s) ** bw_exponent
    flops = source.peak_flops * (target.peak_flops / source.peak_flops) ** flops_exponent
    return with_spec(model, replace(target, mem_bw_bytes_s=bw, peak_flops=flops))
