"""A request-rate run and a concurrency run of one real vLLM server (CPU build, tiny random
Llama) agree through the serving model (issue 21 item 3): calibrated on either load kind, it
predicts the other's TPOT, TTFT and output tok/s where the other ran (a rate run is read at the
concurrencies its rates ran, never beyond them, as the planner reads it).

Each kind runs twice, in the order closed, open, open, closed (so a server that drifts slower
over the run, as this one does by 20-30% a sweep, weighs on both kinds alike); the model is
calibrated on both sweeps of one kind and its error is taken over every level of both sweeps of
the other: one slowed sweep on this shared box (a CI run once saw a closed sweep 40-70% slow
throughout) is noise of the box, not a miss of the model."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from measurements.probe.config import ProbeConfig
from measurements.run_file import RunFile, read_run_file
from planner.curves.load import CurvePoint, LoadCurve, curve_from_run
from planner.engine.model import CONCURRENCY, RATE, EngineModel, Query, engine_model
from tests.integration.conftest import VllmServer, realtime_client
from tests.integration.test_probe_vllm import ISL, OSL, probe_config, run

pytestmark = pytest.mark.vllm

CONCURRENCIES = (1, 2, 4, 8)
REQUESTS = 48
# Shares of the closed loop's request rate at concurrency 4 the open-loop levels run at (below
# 0.9: a server that slows over the test would push that level into overload, no steady state).
RATE_SHARES = (0.5, 0.8)
# How far the two load kinds may disagree, per metric (relative): the serving model's own miss
# (its validated error on rate runs is 14-19%, README) with room for this shared 2-core box,
# plus the box's own repeatability measured in the same test: how far the two sweeps of one
# kind disagree level by level (a quiet run ~0.1; a run whose server slowed midway, 0.5).
TOLERANCE = {"tpot": 0.25, "ttft": 0.4, "output_tok_s": 0.25}
_FIELDS = {"tpot": ("p50_tpot_ms", "tpot_ms"), "ttft": ("p50_ttft_ms", "ttft_ms")}


def _curve(run_file: RunFile) -> LoadCurve:
    curve = curve_from_run(run_file)
    assert curve is not None, run_file.levels
    return curve


def _sweep(cfg: ProbeConfig, out: Path) -> LoadCurve:
    with realtime_client():
        run(cfg, out)
    return _curve(read_run_file(out))


def _value(point: CurvePoint, metric: str) -> float | None:
    for name in _FIELDS.get(metric, (metric,)):
        if (value := getattr(point, name)) is not None:
            return float(value)
    return None


def _repeatability(sweeps: list[LoadCurve], kind: str) -> dict[str, float]:
    """Per metric, the mean |b / a - 1| over the levels of two sweeps of one kind."""
    first, second = (s.points if kind == CONCURRENCY else s.rate_points for s in sweeps)
    out: dict[str, float] = {}
    for metric in TOLERANCE:
        pairs = [(_value(a, metric), _value(b, metric)) for a, b in zip(first, second, strict=True)]
        ratios = [abs(b / a - 1.0) for a, b in pairs if a and b]
        out[metric] = float(np.mean(ratios)) if ratios else 0.0
    return out


def _errors_over(
    model: EngineModel | str, curves: list[LoadCurve], kind: str, most: float = math.inf
) -> dict[str, list[float]]:
    """`_errors` against every curve, pooled per metric."""
    pooled: dict[str, list[float]] = {}
    for curve in curves:
        for metric, errors in _errors(model, curve, kind, most).items():
            pooled.setdefault(metric, []).extend(errors)
    return pooled


def _errors(
    model: EngineModel | str, curve: LoadCurve, kind: str, most: float = math.inf
) -> dict[str, list[float]]:
    """Relative errors of the model's centre against each level of `curve` of load `kind` (at
    most `most`)."""
    assert not isinstance(model, str), model
    points = curve.points if kind == CONCURRENCY else curve.rate_points
    points = tuple(p for p in points if p.concurrency <= most)
    loads = tuple(p.concurrency for p in points)
    found = model.predict(Query(kind, loads, curve.key.isl or 0, curve.key.osl or 0))
    out: dict[str, list[float]] = {"tpot": [], "ttft": [], "output_tok_s": []}
    for i, point in enumerate(points):
        pairs = (
            ("tpot", point.p50_tpot_ms or point.tpot_ms, found.tpot_ms.mean[i]),
            ("ttft", point.p50_ttft_ms or point.ttft_ms, found.ttft_ms.mean[i]),
            ("output_tok_s", point.output_tok_s, found.output_tok_s.mean[i]),
        )
        for name, truth, guess in pairs:  # truth: the p50 where stated
            if truth and math.isfinite(guess):
                out[name].append(guess / truth - 1.0)
    return out


def test_a_rate_run_and_a_concurrency_run_agree_through_the_serving_model(
    vllm_server: VllmServer, tmp_path: Path
) -> None:
    closed_cfg = probe_config(vllm_server, CONCURRENCIES, requests_per_level=REQUESTS)
    first = _sweep(closed_cfg, tmp_path / "closed-1.json")
    at4 = next(p for p in first.points if p.concurrency == 4)
    assert at4.output_tok_s is not None
    rate4 = at4.output_tok_s / (first.key.osl or 1)
    rates = tuple(round(share * rate4, 2) for share in RATE_SHARES)
    open_cfg = probe_config(vllm_server, (), rates=rates, requests_per_level=REQUESTS)
    opens = [_sweep(open_cfg, tmp_path / f"open-{i}.json") for i in (1, 2)]
    closes = [first, _sweep(closed_cfg, tmp_path / "closed-2.json")]
    assert all(len(o.rate_points) == len(rates) and not o.points for o in opens)

    forward = _errors_over(engine_model(closes, empirical=True), opens, RATE)
    from_rates = engine_model(opens, empirical=True)
    assert not isinstance(from_rates, str), from_rates
    ran = from_rates.predict(Query(RATE, rates, ISL, OSL)).running
    most = 1.25 * max(ran)  # the concurrencies the rates ran, and a little past
    backward = _errors_over(from_rates, closes, CONCURRENCY, most)
    noise = {
        metric: max(closed, opened)
        for (metric, closed), opened in zip(
            _repeatability(closes, CONCURRENCY).items(),
            _repeatability(opens, RATE).values(),
            strict=True,
        )
    }
    seen = {
        "rates_req_s": rates,
        "rates_ran_concurrency": [round(n, 2) for n in ran],
        "tpot_ms_per_sweep": {
            "closed": [[round(p.p50_tpot_ms or 0.0, 2) for p in c.points] for c in closes],
            "open": [[round(p.p50_tpot_ms or 0.0, 2) for p in o.rate_points] for o in opens],
        },
        "sweep_to_sweep": {k: round(v, 3) for k, v in noise.items()},
        "concurrency_to_rate": {k: [round(e, 3) for e in v] for k, v in forward.items()},
        "rate_to_concurrency": {k: [round(e, 3) for e in v] for k, v in backward.items()},
    }
    print(json.dumps(seen))
    record = os.environ.get("CAPPLAN_RATE_AGREEMENT_OUT")
    if record:
        Path(record).write_text(json.dumps(seen, indent=2), encoding="utf-8")
    for direction in (forward, backward):
        for metric, errors in direction.items():
            assert errors, (metric, seen)
            allowed = TOLERANCE[metric] + noise[metric]
            assert float(np.mean(np.abs(errors))) <= allowed, (metric, allowed, seen)
