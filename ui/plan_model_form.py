"""The Plan page's model and precision pickers: a loaded scenario's model is never swapped for
another (a model without curves is listed and planned as itself), and the precision follows the
model's checkpoint whenever the model changes, unless a loaded scenario states one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from planner.curves.load import LoadCurve
from workflows.model_choices import model_id, model_name_choices, same_model
from workflows.names import checkpoint_precision, same_or_twin

DEFAULT_MODEL = "meta-llama/Llama-3.1-70B"
ANY_PRECISION = "any"
# The (canonical) model the precision picker's value was chosen for.
PRECISION_OWNER = "plan_precision_model"


def model_and_precision(
    models_stored: Sequence[str], curves_of: Callable[[str], Sequence[LoadCurve]]
) -> tuple[str, str, Sequence[LoadCurve]]:
    """The model and precision pickers; the chosen model's curves (its twins' too) come back."""
    bar = st.sidebar
    models = _with_loaded_model(model_name_choices(models_stored) or [DEFAULT_MODEL])
    model = bar.selectbox(
        "Model",
        models,
        key="plan_model",
        index=models.index(DEFAULT_MODEL) if DEFAULT_MODEL in models else 0,
        help="The model to serve; the list holds every model with stored measurements (a "
        "model of the same architecture, such as a re-release, plans on its twin's curves).",
    )
    curves = curves_of(model)
    measured = precisions_of(curves, model)
    _follow_model(model, measured)
    loaded = st.session_state.get("plan_precision")
    extra = {loaded} if isinstance(loaded, str) and loaded != ANY_PRECISION else set()
    precisions = [ANY_PRECISION, *sorted(set(measured) | extra)]
    precision = bar.selectbox(
        "Precision",
        precisions,
        key="plan_precision",
        help="Number format of the weights (fp8 needs half the memory of bf16); it follows "
        "the model's checkpoint when you pick a model; 'any' plans with every precision "
        "measured.",
    )
    return model, precision, curves


def default_precision(model: str, measured: Sequence[str]) -> str:
    """The checkpoint's own precision where measured, else fp8 where measured, else any."""
    own = checkpoint_precision(model, measured)
    if own is not None:
        return own
    return "fp8" if "fp8" in measured else ANY_PRECISION


def precisions_of(curves: Sequence[LoadCurve], model: str) -> list[str]:
    """The precisions measured for a model (its twins' curves count)."""
    found = {c.key.precision for c in curves if same_or_twin(c.key.model, model)}
    return sorted(p for p in found if p)


def _follow_model(model: str, measured: Sequence[str]) -> None:
    """A new model resets the precision to its own default (a loaded scenario's stays)."""
    owner = model_id(model)
    if st.session_state.get(PRECISION_OWNER) != owner:
        st.session_state["plan_precision"] = default_precision(model, measured)
        st.session_state[PRECISION_OWNER] = owner


def _with_loaded_model(models: list[str]) -> list[str]:
    """The model list with a loaded scenario's model: shown as the name the planner matches it
    to when that is listed, else listed itself, never replaced by another model."""
    loaded = st.session_state.get("plan_model")
    if not isinstance(loaded, str) or not loaded.strip() or loaded in models:
        return models
    same = [m for m in models if same_model(m, loaded)]
    if same:
        st.session_state["plan_model"] = same[0]
        return models
    return sorted([*models, loaded])
