"""planner.engine.fill: `capplan predict` never answers "unknown" without a reason: where no
fit reads (a run of one level, a projected curve), the serving model does, labelled so."""

from __future__ import annotations

import dataclasses

import pytest

from planner.curves.load import H200, LoadCurve
from planner.engine.fill import SERVING_MODEL, fill_unknowns, model_for
from planner.fitting.fit import fit_curve
from planner.fitting.predict import predict
from planner.physics.projection import project_curve
from tests.planner.builders import silicon_curves

H100 = "H100-SXM-80GB"


def _vllm_70b_tp2(gpu: str) -> LoadCurve:
    (found,) = [
        c
        for c in silicon_curves()
        if c.key.engine == "vllm" and "70B" in c.key.model and c.key.tp == 2
        and c.key.gpu == gpu and (c.key.isl, c.key.osl) == (1024, 1024)
    ]  # fmt: skip
    return found


def test_one_measured_level_projected_to_another_gpu_reads_the_rest_from_the_model() -> None:
    """c=16 alone on H200, projected to H100: the measured H100 curve at c=4 and c=64 is read
    within 15% (it is 228 and 2,196 tok/s there)."""
    source = _vllm_70b_tp2(H200)
    one = dataclasses.replace(source, points=tuple(p for p in source.points if p.concurrency == 16))
    projected = project_curve(one, H100)
    assert not isinstance(projected, str)
    raw = predict(fit_curve(projected), [4, 16, 64])
    assert raw[0].output_tok_s is None  # the fits alone say nothing at c=4
    filled, notes = fill_unknowns(raw, projected, model_for(projected, one))
    truth = {p.concurrency: p.output_tok_s for p in _vllm_70b_tp2(H100).points}
    for p in filled:
        assert p.output_tok_s is not None and p.tpot_ms is not None and p.p50_ttft_ms is not None
        assert p.output_tok_s == pytest.approx(truth[p.concurrency], rel=0.15)
    assert [p.basis for p in filled] == [SERVING_MODEL, "fit", SERVING_MODEL]
    (note,) = notes
    assert note.startswith("at concurrency 4, 64 no fit reads: the values there are the serving")


def test_an_unknown_that_stays_unknown_says_why() -> None:
    source = _vllm_70b_tp2(H200)
    odd = dataclasses.replace(
        source,
        key=dataclasses.replace(source.key, model="acme/unknown-70b"),
        points=source.points[:1],
    )
    raw = predict(fit_curve(odd), [64])
    filled, notes = fill_unknowns(raw, odd, model_for(odd))
    assert filled[0].output_tok_s is None
    (note,) = notes
    assert note.startswith("unknown at concurrency 64: no fit reads there, and no serving model")
    assert "model facts unknown" in note
