"""Which models and workloads a page offers, and a model's own curves: the stored names grouped
by model identity (`CurveKey.model_id`, canonical once where a key is built), the workloads
grouped within tokenisation rounding (planner.curves.workload_groups). Pure: names and curves
in, choices out."""

from __future__ import annotations

from collections.abc import Iterable

from measurements.entry_names import model_name
from planner.curves.load import LoadCurve
from planner.curves.names import canonical_model
from planner.curves.workload_groups import WorkloadGroup, group_workloads
from planner.fitting.fit import CurveFit

WorkloadKey = tuple[str, int | None, int | None]  # (model as stored, ISL, OSL)


def same_model(a: str, b: str) -> bool:
    """Whether two names (as typed, served or stored) name one model (no twin: its own)."""
    return canonical_model(a) == canonical_model(b)


def model_id(name: str) -> str:
    """A name's model identity, as curve keys and scenarios hold it."""
    return canonical_model(name)


def model_choices(curves: Iterable[LoadCurve]) -> list[str]:
    """Model names with curves, one per model identity (the planner matches them that way)."""
    return model_name_choices(curve.key.model for curve in curves)


def model_name_choices(names: Iterable[str]) -> list[str]:
    """Stored model names, one per model identity (the first name of each, sorted; a model id
    before a path it was served from, as runs stored before issue 32 name it)."""
    by_identity: dict[str, str] = {}
    for model in sorted(set(names), key=lambda name: (model_name(name) != name, name)):
        by_identity.setdefault(canonical_model(model), model)
    return sorted(by_identity.values())


def workload_choices(curves: Iterable[LoadCurve], model: str) -> list[str]:
    """The 'ISL/OSL' workloads measured for a model, 'not stated' last."""
    return workload_key_choices(_curve_keys(curves), model)


def workload_key_choices(keys: Iterable[WorkloadKey], model: str) -> list[str]:
    """The 'ISL/OSL' workloads among (model, ISL, OSL) keys for a model, 'not stated' last
    (pairs that differ only by tokenisation rounding are one: planner.curves.workload_groups)."""
    return [group.name() for group in _model_groups(keys, model)]


def workload_members(
    keys: Iterable[WorkloadKey], model: str, workload: str
) -> list[tuple[int | None, int | None]]:
    """The exact (ISL, OSL) pairs stored for a model that make up the chosen workload."""
    groups = _model_groups(keys, model)
    return next((list(g.members) for g in groups if g.name() == workload), [])


def curves_for(curves: Iterable[LoadCurve], model: str, workload: str) -> list[LoadCurve]:
    """Curves of this model measured at this workload (within rounding of it); a model's own
    runs only, no twin's (the Curves page shows what was measured of it)."""
    wanted = canonical_model(model)
    mine = [curve for curve in curves if curve.key.model_id == wanted]
    members = set(workload_members(_curve_keys(mine), model, workload))
    return [curve for curve in mine if (curve.key.isl, curve.key.osl) in members]


def fits_for(fits: Iterable[CurveFit], model: str, workload: str) -> list[CurveFit]:
    """Fits of curves of this model measured at this workload (within rounding)."""
    listed = list(fits)
    kept = {id(c) for c in curves_for((f.curve for f in listed), model, workload)}
    return [fit for fit in listed if id(fit.curve) in kept]


def _curve_keys(curves: Iterable[LoadCurve]) -> list[WorkloadKey]:
    return [(c.key.model, c.key.isl, c.key.osl) for c in curves]


def _model_groups(keys: Iterable[WorkloadKey], model: str) -> list[WorkloadGroup]:
    wanted = canonical_model(model)
    return group_workloads((isl, osl) for name, isl, osl in keys if canonical_model(name) == wanted)
