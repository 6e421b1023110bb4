"""planner.engine.transfer: a deployment nothing measured soundly is estimated from its model's
physics with the efficiencies other models showed on the same engine and GPU, labelled
physics-only with its validated error, and the no-data answer carries that estimate."""

from __future__ import annotations

import numpy as np
import pytest

from errors import NoDataError
from hardware.gpus import load_gpu_specs
from planner.analysis.capacity import make_plan
from planner.analysis.measurement_plan import MeasurementPlan
from planner.curves.load import H200
from planner.engine.reach_errors import reach_error
from planner.engine.transfer import PHYSICS_ONLY, TRANSFER_ERROR, Target, physics_only_curve
from planner.inputs.prices import load_catalog_csv
from tests.planner.builders import scenario, silicon_curves

CURVES = silicon_curves()
GPUS = {spec.gpu: spec for spec in load_gpu_specs()}


# The error a physics-only estimate states: the dev split's measured "another model" figure.
STATED = reach_error("another model", TRANSFER_ERROR)


def _target(model: str, engine: str = "vllm", tp: int = 2) -> Target:
    return Target(model, "fp8", engine, GPUS[H200], tp, 1024, 1024)


def test_a_model_nothing_measured_gets_a_labelled_physics_only_curve() -> None:
    built = physics_only_curve(_target("meta-llama/Llama-3.3-70B-Instruct"), CURVES)
    assert not isinstance(built, str), built
    assert built.provenance == PHYSICS_ONLY and built.basis_error == STATED
    (flag,) = built.flags
    assert flag.startswith("PHYSICS-ONLY estimate") and "vllm on H200-SXM-141GB at TP2" in flag
    tok = [p.output_tok_s for p in built.points]
    assert all(t is not None and t > 0 for t in tok) and tok == sorted(tok)
    assert all(
        p.p99_ttft_ms and p.p50_ttft_ms and p.p99_ttft_ms > p.p50_ttft_ms for p in built.points
    )


def test_a_model_without_facts_gets_a_reason() -> None:
    found = physics_only_curve(_target("mistralai/Mixtral-8x7B"), CURVES)
    assert isinstance(found, str) and "no physics-only estimate" in found


def test_borrowed_efficiencies_land_near_a_model_left_out() -> None:
    """Llama-3.1-70B on vLLM, H200, TP2 left out: the other models' efficiencies at its physics
    read its measured 1024/1024 curve within the validated error (mean over the levels)."""
    (measured,) = [
        c
        for c in CURVES
        if c.key.engine == "vllm" and "70B" in c.key.model and c.key.tp == 2
        and c.key.gpu == H200 and (c.key.isl, c.key.osl) == (1024, 1024)
    ]  # fmt: skip
    built = physics_only_curve(_target("meta-llama/Llama-3.1-70B"), CURVES, exclude_model=True)
    assert not isinstance(built, str)
    guesses = {p.concurrency: p.output_tok_s for p in built.points}
    errors = [
        abs(guesses[p.concurrency] / p.output_tok_s - 1)
        for p in measured.points
        if p.output_tok_s and guesses.get(p.concurrency)
    ]
    assert errors and float(np.mean(errors)) <= 2 * STATED.output_tok_s_pct / 100


def test_no_data_says_what_to_measure_and_what_physics_estimates() -> None:
    brief = scenario(
        model="Qwen/Qwen3-8B",  # no curve of it or of a twin
        workload={"isl": 3000, "osl": 300},
        sla={"ttft_p99_ms": 1000, "tpot_p99_ms": 50},
        candidates={"engines": ["vllm", "tensorrt-llm"], "gpus": ["H100-SXM-80GB", H200]},
    )
    with pytest.raises(NoDataError) as info:
        make_plan(brief, CURVES, load_catalog_csv())
    measurements = info.value.measurement_plan
    assert isinstance(measurements, MeasurementPlan) and measurements.no_data
    assert measurements.sweeps  # the probe commands stay
    estimate = measurements.estimate
    assert estimate is not None and estimate.startswith("A physics-only estimate")
    assert STATED.text() in estimate and "/month at 90% confidence" in estimate
