"""The runtime guard refuses an answer that breaks physics, with the reason, and passes a sound
one (planner.sizing.answer_guard)."""

from __future__ import annotations

import dataclasses

import pytest

from errors import PlanningError
from hardware.gpus import load_gpu_specs
from planner.curves.load import CurveKey, CurvePoint, LoadCurve
from planner.engine.model import EngineModel, Query
from planner.engine.spec import engine_spec
from planner.engine.step import PRIOR, PRIOR_LOG_SD
from planner.engine.transfer import Donors, transferred
from planner.fitting.predict import Prediction
from planner.physics.roofline import ceilings
from planner.sizing.answer_guard import (
    check_answer,
    check_curve_answer,
    check_engine_answer,
    refuse_broken,
)

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
LOADS = (1.0, 4.0, 16.0, 64.0)


def _curve(gpu: str = "H100-SXM-80GB", provenance: str = "measured") -> LoadCurve:
    key = CurveKey("vllm", None, MODEL, "bf16", gpu, 1, 1, 1000, 500)
    points = tuple(
        CurvePoint(c, output_tok_s=100.0 * c**0.8, ttft_ms=40.0 + c, tpot_ms=10.0 + c / 10)
        for c in LOADS
    )
    return LoadCurve(key, points, 1, provenance, "test", None, None, 1, ())


def _prediction(c: float, tok_s: float, ttft: float, tpot: float) -> Prediction:
    return Prediction(
        concurrency=c,
        output_tok_s=tok_s, output_tok_s_lo=0.9 * tok_s, output_tok_s_hi=1.1 * tok_s,
        p50_ttft_ms=ttft, p50_ttft_ms_lo=0.9 * ttft, p50_ttft_ms_hi=1.1 * ttft,
        p99_ttft_ms=2 * ttft, p99_ttft_ms_lo=1.8 * ttft, p99_ttft_ms_hi=2.2 * ttft,
        tpot_ms=tpot, tpot_ms_lo=0.9 * tpot, tpot_ms_hi=1.1 * tpot,
        stream_tok_s=tok_s / c, extrapolated=False,
    )  # fmt: skip


def _sound() -> list[Prediction]:
    return [_prediction(c, 100.0 * c**0.8, 40.0 + c, 10.0 + c / 10) for c in LOADS]


def test_a_sound_answer_passes() -> None:
    assert check_answer(_sound(), _curve()) == []


def test_throughput_falling_with_concurrency_is_refused() -> None:
    broken = _sound()
    broken[3] = _prediction(64.0, 500.0, 104.0, 16.4)
    (reason,) = check_answer(broken, _curve())
    assert "output tok/s falls as concurrency rises" in reason
    assert "at 64" in reason


def test_ttft_falling_with_concurrency_is_refused() -> None:
    broken = _sound()
    broken[2] = _prediction(16.0, 100.0 * 16**0.8, 20.0, 11.6)
    reasons = check_answer(broken, _curve())
    assert any("TTFT falls as concurrency rises" in r for r in reasons)


def test_a_centre_outside_its_band_is_refused() -> None:
    broken = _sound()
    broken[0] = dataclasses.replace(broken[0], tpot_ms_hi=5.0)
    (reason,) = check_answer(broken, _curve())
    assert "TPOT ms 10.1 at concurrency 1 lies outside its own band" in reason


def test_throughput_above_the_roofline_is_refused() -> None:
    broken = [_prediction(c, 1e7 * c, 40.0 + c, 10.0 + c / 10) for c in LOADS]
    reasons = check_answer(broken, _curve())
    assert any("above the roofline" in r for r in reasons)


def test_throughput_moving_past_the_capacity_is_refused() -> None:
    reasons = check_answer(_sound(), _curve(), capacity_seqs=16.0)
    assert any("does not flatten past the capacity of 16" in r for r in reasons)


def test_refuse_broken_raises_with_every_reason_and_passes_none() -> None:
    refuse_broken([], "the answer")
    with pytest.raises(PlanningError, match=r"the answer refused: .*falls as concurrency"):
        refuse_broken(["x: output tok/s falls as concurrency rises"], "the answer")


def _serving_model() -> tuple[EngineModel, object]:
    gpu = next(g for g in load_gpu_specs() if g.gpu == "H100-SXM-80GB")
    ceil = ceilings(MODEL, "bf16", gpu, 1, engine="vllm")
    assert not isinstance(ceil, str)
    spec = engine_spec(ceil, gpu, "vllm")
    assert not isinstance(spec, str)
    return EngineModel(spec, transferred(Donors(PRIOR, PRIOR_LOG_SD, "priors"))), ceil


def test_a_sound_serving_model_answer_passes_and_a_doctored_one_is_refused() -> None:
    model, ceil = _serving_model()
    found = model.predict(Query("concurrency", (1.0, 8.0, 64.0, 512.0), 1000, 500))
    assert check_engine_answer(found, ceil) == []  # type: ignore[arg-type]
    doctored = dataclasses.replace(
        found, ttft_ms=dataclasses.replace(found.ttft_ms, mean=(9e9, 1.0, 2.0, 3.0))
    )
    reasons = check_engine_answer(doctored, ceil)  # type: ignore[arg-type]
    assert any("TTFT falls as concurrency rises" in r for r in reasons)
    assert any("outside its own band" in r for r in reasons)


def test_a_projection_slower_than_the_measured_gpu_it_dominates_is_refused() -> None:
    measured = _curve("H100-SXM-80GB")
    slower = tuple(
        dataclasses.replace(p, output_tok_s=0.5 * (p.output_tok_s or 0)) for p in measured.points
    )
    projected = dataclasses.replace(_curve("H200-SXM-141GB", provenance="projected"), points=slower)
    reasons = check_curve_answer(projected, [measured])
    assert any("on the faster GPU" in r and "H100-SXM-80GB" in r for r in reasons)
    sound = _curve("H200-SXM-141GB", provenance="projected")
    assert check_curve_answer(sound, [measured]) == []


def test_data_is_never_refused() -> None:
    broken = dataclasses.replace(_curve(), points=tuple(reversed(_curve().points)))
    falling = dataclasses.replace(
        broken,
        points=tuple(
            dataclasses.replace(p, output_tok_s=1e9 / p.concurrency) for p in broken.points
        ),
    )
    assert check_curve_answer(falling) == []
    assert check_curve_answer(dataclasses.replace(falling, provenance="projected")) != []
