"""The product's answers to a case, through its own entry points: `capplan predict`'s core
(workflows.predict.predict_levels, `--project-to` included), `capplan plan`'s core
(planner.analysis.capacity.make_plan: no SLA, candidates fixed to the asked deployment, the chosen
option's fit read at the target's levels) and the physics-only estimate a plan with no data of
its model offers (planner.engine.transfer.physics_only_curve)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from bench.validation.cases import OTHER_MODEL, Case
from errors import CapplanError
from hardware.gpus import load_gpu_specs
from planner.analysis.capacity import make_plan
from planner.curves.load import LoadCurve
from planner.engine.transfer import Target, physics_only_curve
from planner.fitting.fit import CurveFit
from planner.fitting.predict import Prediction
from planner.inputs.prices import PriceEntry, load_catalog_csv
from planner.inputs.scenario import Scenario
from planner.sizing.draws import DERIVED_MAPE_PCT, Draws
from workflows.predict import predict_levels, read_fit

PREDICT = "predict"
PLAN = "plan"
PHYSICS = "physics-only"
METRICS = ("output_tok_s", "ttft_ms", "tpot_ms")
# metric -> the fitted series whose stated error (planner.sizing.draws.SLOTS) covers it
SLOTS = {"output_tok_s": "throughput", "ttft_ms": "ttft_p50", "tpot_ms": "tpot"}
# The plan's sizing draws do not move its fits; a few keep each plan cheap.
PLAN_DRAWS = Draws(samples=8)


@dataclass(frozen=True, slots=True)
class Answer:
    """The product's predictions at the read levels (the target's and the stored ones, sorted)
    and the error it states for each metric (None: it states none)."""

    predictions: tuple[Prediction, ...]
    curve: LoadCurve  # the curve the answer was read from (measured, projected, adjusted...)
    stated_pct: dict[str, float | None]


def read_levels(case: Case) -> tuple[float, ...]:
    """The target's levels and the first stored curve's, for the invariants along the curve."""
    return tuple(sorted({*case.levels, *case.store[0].concurrencies()}))


def stated_error(curve: LoadCurve, fit: CurveFit) -> dict[str, float | None]:
    """The error the product states per metric: a derived curve's validated error (its own, or
    its provenance's), else the fitted series' held-out (leave-one-out) MAPE."""
    out: dict[str, float | None] = {}
    for metric, slot in SLOTS.items():
        if curve.basis_error is not None:
            out[metric] = curve.basis_error.slot_pct(slot)
        elif curve.provenance in DERIVED_MAPE_PCT:
            out[metric] = DERIVED_MAPE_PCT[curve.provenance]
        else:
            result = getattr(fit, slot)
            out[metric] = None if result is None else result.loo_mape_pct
    return out


def predict_answer(case: Case) -> Answer | str:
    """`capplan predict` on the first stored curve (projected when the case asks another GPU)."""
    try:
        found = predict_levels(case.store[:1], read_levels(case), case.project_to)
    except CapplanError as exc:
        return str(exc)
    return Answer(found.predictions, found.curve, stated_error(found.curve, found.fit))


@cache
def _prices() -> tuple[PriceEntry, ...]:
    return tuple(load_catalog_csv())


def scenario_for(case: Case) -> Scenario:
    """A plan with no SLA for the target's model, workload and deployment only."""
    key = case.target.key
    return Scenario.model_validate(
        {
            "name": "validation",
            "model": key.model,
            "precision": key.precision,
            "workload": {"isl": key.isl, "osl": key.osl},
            "demand": {"peak_concurrent_streams": max(case.levels)},
            "candidates": {"engines": [key.engine], "gpus": [key.gpu], "tp": [key.tp]},
            # Any price: the cost does not move the fits scored (B300 has no catalog default).
            "pricing": {key.gpu: 1.0},
        }
    )


def plan_answer(case: Case) -> Answer | str:
    """`capplan plan`'s core over the store; the option of the target's layout read at the
    target's levels (never beyond: predict() marks and flattens past the measured range)."""
    try:
        plan = make_plan(scenario_for(case), case.store, _prices(), draws=PLAN_DRAWS)
    except CapplanError as exc:
        return f"{type(exc).__name__}: {exc}"
    layout = case.target.key.parallel_text().strip()
    options = [o for o in plan.options if o.key.layout == layout]
    if not options:
        return f"no option of layout {layout or 'TP only'!r} among {len(plan.options)}"
    option = options[0]
    try:
        found, _ = read_fit(option.fit, read_levels(case))
    except CapplanError as exc:
        return f"{type(exc).__name__}: {exc}"
    return Answer(tuple(found), option.curve, stated_error(option.curve, option.fit))


def physics_answer(case: Case) -> Answer | str:
    """The physics-only estimate of the target deployment from the store's efficiencies (other
    models only for the another-model reach), read like `capplan predict` reads a curve."""
    key = case.target.key
    spec = next((s for s in load_gpu_specs() if s.gpu == key.gpu), None)
    if spec is None or not key.tp or not key.isl or not key.osl:
        return f"no physics-only estimate: no specs or TP/workload for {case.target.label_text()}"
    target = Target(key.model, key.precision, key.engine, spec, key.tp, key.isl, key.osl)
    built = physics_only_curve(target, case.store, exclude_model=OTHER_MODEL in case.reaches)
    if isinstance(built, str):
        return built
    try:
        found = predict_levels([built], case.levels)
    except CapplanError as exc:
        return str(exc)
    return Answer(found.predictions, found.curve, stated_error(found.curve, found.fit))


ANSWERS = {PREDICT: predict_answer, PLAN: plan_answer, PHYSICS: physics_answer}


def methods_for(case: Case) -> Sequence[str]:
    """The product's paths that can answer this case (`capplan predict` has no workload or
    model option: it answers the level and GPU reaches only)."""
    reach = case.reaches[0]
    if reach == OTHER_MODEL:
        return (PHYSICS,)
    if reach == "twin":
        return (PLAN, PHYSICS)
    if reach == "another workload":
        return (PLAN,)
    return (PREDICT, PLAN)
