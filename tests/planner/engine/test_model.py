"""planner.engine: the serving model recovers a deployment it generated, agrees with itself
across load kinds (Little's law), queues past its capacity, and answers the brief nothing
measured (1000/300 on the demo data) with the distance and the validated error said."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hardware.gpus import load_gpu_specs
from planner.analysis.capacity import make_plan
from planner.curves.load import H200, BasisError, CurveKey, CurvePoint, LoadCurve
from planner.engine.calibrate import CONCURRENCY, Observation, calibrate
from planner.engine.curves import RATE_ERROR, distance_error, serving_model_curve
from planner.engine.model import EngineModel, Query, deployment_spec, engine_model
from planner.engine.spec import EngineSpec, engine_limits
from planner.engine.step import PRIOR, StepParams, closed_loop, open_loop
from planner.fitting.fit import MAPE_TO_SIGMA
from planner.inputs.prices import load_catalog_csv
from planner.sizing.draws import derived_sigma
from planner.sizing.options import SizedOption
from tests.planner.builders import scenario, silicon_curves

TRUE = StepParams(0.8, 0.4, 0.004, 3e-5, 1.3, 1.2, 10.0)


def _curve(isl: int, osl: int, tp: int = 2) -> LoadCurve:
    key = CurveKey("vllm", "0.9", "meta-llama/Llama-3.1-70B", "fp8", H200, tp, tp, isl, osl)
    return LoadCurve(
        key, (CurvePoint(1.0, output_tok_s=1.0),), None, "imported", None, None, None, tp, ()
    )


def _spec(tp: int = 2) -> EngineSpec:
    spec = deployment_spec(_curve(1024, 1024, tp), load_gpu_specs())
    assert isinstance(spec, EngineSpec)
    return spec


def _levels(spec: EngineSpec, params: StepParams) -> list[Observation]:
    out = []
    for isl, osl in ((1024, 1024), (1024, 8192), (8192, 1024)):
        loads = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
        state = closed_loop(spec, params, loads, np.full(5, float(isl)), np.full(5, float(osl)))
        out.extend(
            Observation(CONCURRENCY, float(c), isl, osl, float(tok), float(ttft), float(tpot))
            for c, tok, ttft, tpot in zip(
                loads, state.output_tok_s, state.ttft_s, state.tpot_s, strict=True
            )
        )
    return out


def test_calibration_recovers_the_deployment_that_made_the_levels() -> None:
    spec = _spec()
    model = EngineModel(spec, calibrate(spec, _levels(spec, TRUE)))
    # A workload none of the levels had: the fitted model reads it as the true one does.
    query = Query(CONCURRENCY, (2.0, 24.0, 48.0), 2000.0, 500.0)
    truth = closed_loop(spec, TRUE, np.array(query.loads), np.full(3, 2000.0), np.full(3, 500.0))
    found = model.predict(query)
    assert np.allclose(found.output_tok_s.mean, truth.output_tok_s, rtol=0.03)
    assert np.allclose(found.tpot_ms.mean, truth.tpot_s * 1000, rtol=0.03)
    assert np.allclose(found.ttft_ms.mean, truth.ttft_s * 1000, rtol=0.05)
    assert all(
        lo <= mid <= hi
        for lo, mid, hi in zip(
            found.tpot_ms.low, found.tpot_ms.mean, found.tpot_ms.high, strict=True
        )
    )


def test_calibration_is_cached_by_its_levels() -> None:
    spec = _spec()
    levels = _levels(spec, TRUE)
    assert calibrate(spec, levels) is calibrate(spec, list(reversed(levels)))


def test_a_rate_and_a_concurrency_give_the_same_state_through_littles_law() -> None:
    spec, isl, osl = _spec(), np.array([1024.0]), np.array([256.0])
    for c in (4.0, 16.0, 48.0):
        closed = closed_loop(spec, PRIOR, np.array([c]), isl, osl)
        opened = open_loop(spec, PRIOR, closed.request_s, isl, osl)
        assert opened.running[0] == pytest.approx(c, rel=1e-3)
        assert opened.tpot_s[0] == pytest.approx(closed.tpot_s[0], rel=1e-3)
        # Poisson arrivals wait for prefill capacity; a closed loop's only wait is its first wave
        assert opened.ttft_s[0] >= closed.ttft_s[0] - closed.burst_s[0] - 1e-12


def test_a_rate_past_capacity_is_not_served() -> None:
    spec, isl, osl = _spec(), np.array([1024.0]), np.array([1024.0])
    most = closed_loop(spec, PRIOR, np.array([1e6]), isl, osl).request_s[0]
    state = open_loop(spec, PRIOR, np.array([most * 0.5, most * 1.5]), isl, osl)
    assert np.isfinite(state.ttft_s[0]) and np.isnan(state.ttft_s[1])


def test_throughput_flattens_and_ttft_queues_past_the_cache() -> None:
    spec = _spec(tp=1)
    loads = np.array([8.0, 32.0, 128.0, 512.0, 1024.0])
    state = closed_loop(spec, PRIOR, loads, np.full(5, 8192.0), np.full(5, 1024.0))
    assert np.all(np.diff(state.output_tok_s) >= -1e-9)
    assert state.queued[-1] > 0 and state.output_tok_s[-1] == pytest.approx(state.output_tok_s[-2])
    assert state.ttft_s[-1] > 1.8 * state.ttft_s[-2]  # twice the queue: about twice the wait


def test_engine_limits_read_the_launch_command_before_the_defaults() -> None:
    budget, seqs, basis = engine_limits("vllm", "vllm serve m --max-num-seqs 64", {})
    assert (budget, seqs) == (8192, 64) and "64 sequences (stated)" in basis
    budget, seqs, _ = engine_limits("tensorrt-llm", "", {"max_num_tokens": "4096"})
    assert (budget, seqs) == (4096, 2048)


def test_an_unknown_model_gets_a_reason_not_a_model() -> None:
    curve = dataclasses.replace(
        _curve(1024, 1024),
        key=dataclasses.replace(_curve(1024, 1024).key, model="acme/unknown-13b"),
    )
    found = engine_model([curve])
    assert isinstance(found, str) and "model facts unknown" in found


def test_the_brief_nothing_measured_is_read_from_each_deployments_serving_model() -> None:
    """1000/300 for Llama-3.1-70B: every demo deployment measured it at 1024/1024, 1024/8192 and
    8192/1024 only; its serving-model curve states the distance and the validated error."""
    groups: dict[tuple[object, ...], list[LoadCurve]] = {}
    for curve in silicon_curves():
        if "70B" in curve.key.model:
            key = curve.key
            groups.setdefault((key.engine, key.gpu, key.tp), []).append(curve)
    assert len(groups) >= 8
    for members in groups.values():
        built = serving_model_curve(members, 1000, 300)
        assert not isinstance(built, str), built
        flag = built.flags[-1]
        assert f"3.4x away, validated error at that distance {distance_error(3.4).text()}" in flag
        assert (built.key.isl, built.key.osl) == (1000, 300)
        assert built.basis_error == distance_error(3.4)
        assert built.provenance == "adjusted"
        tok = [p.output_tok_s for p in built.points]
        assert all(t is not None and t > 0 for t in tok) and tok == sorted(tok)


def test_a_deployment_with_no_stated_workload_has_no_serving_model_curve() -> None:
    bare = dataclasses.replace(
        _curve(1024, 1024), key=dataclasses.replace(_curve(1024, 1024).key, isl=None, osl=None)
    )
    assert isinstance(serving_model_curve([bare], 1000, 300), str)


def test_the_validated_error_never_falls_with_distance() -> None:
    errors = [distance_error(r) for r in (1.5, 3.0, 6.0, 20.0)]
    for metric in ("output_tok_s_pct", "ttft_pct", "tpot_pct"):
        values = [getattr(e, metric) for e in errors]
        assert values == sorted(values)


def test_a_curve_carrying_its_validated_error_draws_it_into_the_plans_samples() -> None:
    adjusted = dataclasses.replace(_curve(1000, 300), provenance="adjusted")
    modelled = dataclasses.replace(adjusted, basis_error=BasisError(7.4, 36.9, 9.9))
    assert derived_sigma(modelled, "ttft_p99") == pytest.approx(MAPE_TO_SIGMA * 0.369)
    assert derived_sigma(modelled, "throughput") == pytest.approx(MAPE_TO_SIGMA * 0.074)
    assert derived_sigma(modelled, "e2e_p99") == derived_sigma(modelled, "ttft_p50")
    assert derived_sigma(adjusted, "tpot") > derived_sigma(_curve(1000, 300), "tpot") == 0.0


def test_a_deployment_measured_only_at_request_rates_is_planned() -> None:
    """A rate-only run (open loop, the way `vllm bench serve --request-rate`, guidellm and
    AIPerf are most often run) gets options, read from its serving model at the same workload."""
    (measured,) = [
        c
        for c in silicon_curves()
        if c.key.engine == "vllm"
        and "70B" in c.key.model
        and c.key.tp == 2
        and c.key.gpu == H200
        and (c.key.isl, c.key.osl) == (1024, 1024)
    ]
    model = engine_model([measured])
    assert not isinstance(model, str)
    rates = (0.5, 1.0, 1.5)
    found = model.predict(Query("rate", rates, 1024, 1024))
    rate_points = tuple(
        CurvePoint(r, output_tok_s=tok, ttft_ms=ttft, tpot_ms=tpot)
        for r, tok, ttft, tpot in zip(
            rates, found.output_tok_s.mean, found.ttft_ms.mean, found.tpot_ms.mean, strict=True
        )
    )
    rate_only = dataclasses.replace(measured, points=(), rate_points=rate_points, flags=())
    plan = make_plan(
        scenario(
            model="meta-llama/Llama-3.1-70B",
            workload={"isl": 1024, "osl": 1024},
            sla={"ttft_p99_ms": 2000, "tpot_p99_ms": 40},
            candidates={"engines": ["vllm"], "gpus": [H200], "tp": [2]},
        ),
        [rate_only],
        load_catalog_csv(),
    )
    (option,) = plan.options
    assert isinstance(option, SizedOption) and option.nodes >= 1
    assert any(
        "read by the serving model from request-rate levels" in f for f in option.curve.flags
    )
    assert option.curve.basis_error == RATE_ERROR
