"""JSON shapes shared by `capplan --json` and the app: reported numbers kept apart from ours."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from measurements.importers import import_path
from planner.curves.load import curve_from_run
from planner.fitting.fit import fit_curve
from planner.fitting.predict import predict
from reports.present import fit_to_dict, level_to_dict, prediction_to_dict, run_to_dict

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_level_keeps_reported_numbers_at_top_and_recomputed_apart() -> None:
    run = import_path(FIXTURES / "vllm-cpu-real" / "c16-detailed.json").runs[0]
    document = level_to_dict(run.levels[0])
    # What `vllm bench serve` printed for this file:
    assert document["output_tok_s"] == pytest.approx(7322.121037557335)
    assert document["p99_ttft_ms"] == pytest.approx(59.70964117996573)
    recomputed = document["recomputed"]
    assert isinstance(recomputed, dict)
    assert recomputed["p99_ttft_ms"] == pytest.approx(59.70964117996573, rel=1e-6)
    assert document["samples"] == 128


def test_run_document_is_plain_json() -> None:
    run = import_path(FIXTURES / "vllm-cpu-real" / "c8.json").runs[0]
    document = run_to_dict(7, datetime(2026, 11, 29, tzinfo=UTC), run)
    again = json.loads(json.dumps(document))
    assert again["run_id"] == 7 and again["deployment"]["engine"] == "vllm"
    assert again["imported_at"] == "2026-11-29T00:00:00+00:00"


def test_fit_and_prediction_documents_mark_extrapolation() -> None:
    run = import_path(
        FIXTURES.parent.parent / "measurements/demo/data/seed_article_h100_llama31_70b_fp8.csv"
    ).runs[0]
    curve = curve_from_run(run, 1)
    assert curve is not None
    fit = fit_curve(curve)
    document = fit_to_dict(fit)
    assert document["points"] == 4 and isinstance(document["throughput"], dict)
    inside, outside = (prediction_to_dict(p) for p in predict(fit, [32, 512]))
    assert inside["range"] == "measured range" and outside["range"] == "EXTRAPOLATED"
    assert str(inside["output_tok_s_text"]).count("[") == 1
