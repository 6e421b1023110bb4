"""Names as capplan compares them: a model, GPU or engine name made canonical (one spelling
per thing), a model path made its model id, and which names are the same model or its twin
(another build of the same weights). The planner and the importers define the rules; the
shells use them here (tests/test_layering.py)."""

from __future__ import annotations

from measurements.entry_names import model_name
from planner.curves.names import canonical_engine, canonical_gpu
from planner.physics.identity import checkpoint_precision, same_or_twin

__all__ = [
    "canonical_engine",
    "canonical_gpu",
    "checkpoint_precision",
    "model_name",
    "same_or_twin",
]
