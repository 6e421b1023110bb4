"""Predictions the fits cannot make (a run of one level, a concurrency past every fitted
series, a projected curve), read from the deployment's serving model instead; every value
still unknown says why. Used by `capplan predict`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from planner.curves.load import LoadCurve
from planner.engine.model import (
    CONCURRENCY,
    EngineModel,
    EnginePrediction,
    Query,
    deployment_spec,
    engine_model,
    with_spec,
)
from planner.fitting.predict import Prediction

SERVING_MODEL = "serving model"


def model_for(curve: LoadCurve, measured: LoadCurve | None = None) -> EngineModel | str:
    """The serving model of `curve`: calibrated on `measured` (the measured curve behind a
    projected one) and moved to `curve`'s GPU, else on `curve` itself; or why there is none."""
    source = measured if measured is not None else curve
    model = engine_model([source])
    if isinstance(model, str) or measured is None:
        return model
    target = deployment_spec(curve)
    return target if isinstance(target, str) else with_spec(model, target)


def fill_unknowns(
    predictions: Sequence[Prediction], curve: LoadCurve, model: EngineModel | str
) -> tuple[list[Prediction], list[str]]:
    """The predictions with every missing throughput or latency read from the serving model,
    and notes that say which were, or why the rest stay unknown."""
    missing = [p for p in predictions if _lacks(p)]
    if not missing:
        return list(predictions), []
    where = ", ".join(f"{p.concurrency:g}" for p in missing)
    if isinstance(model, str):
        return list(predictions), [
            f"unknown at concurrency {where}: no fit reads there, and {model}"
        ]
    if not curve.key.isl or not curve.key.osl:
        why = "no fit reads there, and the workload (ISL/OSL) is not stated for the serving model"
        return list(predictions), [f"unknown at concurrency {where}: {why}"]
    query = Query(CONCURRENCY, tuple(p.concurrency for p in missing), curve.key.isl, curve.key.osl)
    found = model.predict(query)
    filled = {p.concurrency: _filled(p, found, i) for i, p in enumerate(missing)}
    note = (
        f"at concurrency {where} no fit reads: the values there are the serving model's "
        f"({model.spec.physics}; calibrated on {model.calibration.levels} level(s)), not the fits'"
    )
    return [filled.get(p.concurrency, p) for p in predictions], [note]


def _lacks(p: Prediction) -> bool:
    return p.output_tok_s is None or p.tpot_ms is None or p.p50_ttft_ms is None


def _filled(p: Prediction, found: EnginePrediction, i: int) -> Prediction:
    tok, ttft, tpot = found.output_tok_s, found.ttft_ms, found.tpot_ms

    def pick(old: float | None, new: float) -> float | None:
        return old if old is not None else (new if math.isfinite(new) else None)

    output = pick(p.output_tok_s, tok.mean[i])
    return replace(
        p,
        output_tok_s=output,
        output_tok_s_lo=pick(p.output_tok_s_lo, tok.low[i]),
        output_tok_s_hi=pick(p.output_tok_s_hi, tok.high[i]),
        p50_ttft_ms=pick(p.p50_ttft_ms, ttft.p50[i]),
        p50_ttft_ms_lo=pick(p.p50_ttft_ms_lo, ttft.low[i]),
        p50_ttft_ms_hi=pick(p.p50_ttft_ms_hi, ttft.high[i]),
        p99_ttft_ms=pick(p.p99_ttft_ms, ttft.p99[i]),
        tpot_ms=pick(p.tpot_ms, tpot.mean[i]),
        tpot_ms_lo=pick(p.tpot_ms_lo, tpot.low[i]),
        tpot_ms_hi=pick(p.tpot_ms_hi, tpot.high[i]),
        stream_tok_s=p.stream_tok_s if p.stream_tok_s is not None else _per(output, p.concurrency),
        basis=SERVING_MODEL,
    )


def _per(total: float | None, concurrency: float) -> float | None:
    return None if total is None or concurrency <= 0 else total / concurrency
