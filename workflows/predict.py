"""The core of `capplan predict`: a run's curve (or its projection onto another GPU) fitted and
read at given concurrencies, every value no fit reads filled from its serving model.
The CLI and the validation bench (bench/bench_validation.py) call the same function."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from errors import InputError
from planner.curves.load import LoadCurve
from planner.curves.names import canonical_gpu
from planner.engine.beyond import beyond_measured
from planner.engine.fill import fill_unknowns, model_for
from planner.engine.project import project_through_model
from planner.fitting.fit import CurveFit, fit_curve
from planner.fitting.predict import Prediction, predict, with_basis_band
from planner.physics.roofline import PhysicsCheck, check_curve
from planner.sizing.answer_guard import check_answer, label_of, refuse_broken

__all__ = ["PredictionSet", "predict_levels", "read_fit"]


@dataclass(frozen=True, slots=True)
class PredictionSet:
    """What `capplan predict` shows: the curve read (projected when asked), its fit, the
    predictions, its physics check and every flag (curve, fit, physics, filled values)."""

    curve: LoadCurve
    fit: CurveFit
    predictions: tuple[Prediction, ...]
    physics: PhysicsCheck
    flags: tuple[str, ...]


def predict_levels(
    curves: Sequence[LoadCurve], concurrencies: Sequence[float], project_to: str | None = None
) -> PredictionSet:
    """Predictions of the first curve at `concurrencies`, on `project_to` when given; an
    InputError when there is no curve or it cannot be projected there."""
    if not curves:
        raise InputError("run has no concurrency levels to fit", field="--run")
    measured = curves[0]
    curve = measured if project_to is None else _projected(measured, project_to)
    fit = fit_curve(curve)
    found, notes = read_fit(fit, concurrencies, None if project_to is None else measured)
    physics = check_curve(curve)
    flags = tuple(dict.fromkeys((*curve.flags, *fit.flags, *physics.flags, *notes)))
    return PredictionSet(curve, fit, tuple(found), physics, flags)


def read_fit(
    fit: CurveFit, concurrencies: Sequence[float], measured: LoadCurve | None = None
) -> tuple[list[Prediction], list[str]]:
    """A fitted curve read at `concurrencies`: the fits inside the measured levels, the serving
    model outside them and wherever no fit reads (`measured`: the curve a projection came
    from, which the model is calibrated on); with the notes that say where the model answered."""
    model = model_for(fit.curve, measured)
    banded = with_basis_band(predict(fit, concurrencies), fit.curve.basis_error)
    read, beyond = beyond_measured(banded, fit, model)
    found, filled = fill_unknowns(read, fit.curve, model)
    refuse_broken(_breaks(found, fit.curve), label_of(fit.curve))
    return found, [*beyond, *filled]


def _breaks(found: Sequence[Prediction], curve: LoadCurve) -> list[str]:
    """What capplan adds to the measurements never breaks physics (else it is refused): the
    answers past each end of the fits' reads, each checked with the read at that end."""
    derived = sorted((p for p in found if p.basis != "fit"), key=lambda p: p.concurrency)
    fitted = sorted((p for p in found if p.basis == "fit"), key=lambda p: p.concurrency)
    if not derived:
        return []
    if not fitted:
        return check_answer(derived, curve)
    above = [p for p in derived if p.concurrency > fitted[-1].concurrency]
    below = [p for p in derived if p.concurrency < fitted[0].concurrency]
    reasons = check_answer([fitted[-1], *above], curve) if above else []
    return reasons + (check_answer([*below, fitted[0]], curve) if below else [])


def _projected(curve: LoadCurve, gpu: str) -> LoadCurve:
    projected = project_through_model(curve, canonical_gpu(gpu))
    if isinstance(projected, str):
        raise InputError(projected, field="--project-to", value=gpu)
    return projected
