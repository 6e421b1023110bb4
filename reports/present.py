"""JSON-friendly shapes of runs, fits and predictions, shared by the CLI's --json and the app."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from measurements.run_file import Level, Origin, RunFile

if TYPE_CHECKING:  # annotations only: `capplan runs` prints runs without loading scipy
    from planner.fitting.fit import CurveFit, FitResult
    from planner.fitting.predict import Prediction
    from planner.physics.roofline import Ceilings, PhysicsCheck

JsonDict = dict[str, object]


def level_to_dict(level: Level) -> JsonDict:
    """A level's load, counts and metrics under canonical names (reported first), plus the rest.

    Recomputed and derived values are kept apart under their own keys so they are never
    mistaken for what the tool printed.
    """
    document: JsonDict = {
        "load_kind": str(level.load_kind),
        "load_value": level.load_value,
        "duration_s": level.duration_s,
        "requests_sent": level.requests_sent,
        "completed": level.completed,
        "failed": level.failed,
        "incomplete": level.incomplete,
    }
    if level.samples:
        document["samples"] = len(level.samples)
    for origin, key in ((Origin.RECOMPUTED, "recomputed"), (Origin.DERIVED, "derived")):
        extra = {m.name: m.value for m in level.metrics if m.origin == origin}
        if extra:
            document[key] = extra
    for metric in level.metrics:
        if metric.origin == Origin.REPORTED:
            document[metric.name] = metric.value
    if level.notes:
        document["notes"] = level.notes
    return document


def run_to_dict(
    run_id: int, imported_at: datetime | None, run: RunFile, samples: int | None = None
) -> JsonDict:
    """One stored run: id, source, deployment, workload, its levels and how many per-request
    samples the store keeps for it (levels list their samples only when they were loaded)."""
    return {
        "run_id": run_id,
        "samples": samples if samples is not None else sum(len(lv.samples) for lv in run.levels),
        "source": str(run.source),
        "provenance": str(run.provenance),
        "label": run.label,
        "origin_file": run.origin_file,
        "imported_at": imported_at.isoformat() if imported_at else None,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "complete": run.complete,
        "deployment": run.deployment.model_dump(mode="json"),
        "workload": run.workload.model_dump(mode="json"),
        "startup": run.startup.model_dump(mode="json"),
        "levels": [level_to_dict(level) for level in run.levels],
    }


def fit_to_dict(fit: CurveFit) -> JsonDict:
    """The fits of one curve with their quality and the series that fed each."""

    def summary(result: FitResult | None) -> JsonDict | None:
        return dict(result.summary()) if result is not None else None

    return {
        "run_id": fit.curve.run_id,
        "label": fit.curve.label_text(),
        "provenance": fit.curve.provenance,
        "points": len(fit.curve.points),
        "throughput": summary(fit.throughput),
        "ttft_p50": summary(fit.ttft_p50),
        "ttft_p99": summary(fit.ttft_p99),
        "tpot": summary(fit.tpot),
        "ttft_p50_series": fit.ttft_p50_stat,
        "ttft_p99_series": fit.ttft_p99_stat,
        "tpot_series": fit.tpot_stat,
        "flags": list(fit.curve.flags) + list(fit.flags),
    }


def _band_text(value: float | None, lo: float | None, hi: float | None, digits: int) -> str:
    if value is None:
        return "unknown"
    if lo is None or hi is None:
        return f"{value:,.{digits}f}"
    return f"{value:,.{digits}f} [{lo:,.{digits}f}, {hi:,.{digits}f}]"


def _range_text(p: Prediction) -> str:
    if p.basis != "fit":
        return f"SERVING MODEL, {'beyond' if p.extrapolated else 'inside'} the measured range"
    return "EXTRAPOLATED" if p.extrapolated else "measured range"


def prediction_to_dict(p: Prediction) -> JsonDict:
    """A prediction with its bands, whether it is extrapolated, and display strings."""
    document: JsonDict = {
        "concurrency": p.concurrency,
        "output_tok_s": p.output_tok_s,
        "output_tok_s_lo": p.output_tok_s_lo,
        "output_tok_s_hi": p.output_tok_s_hi,
        "p50_ttft_ms": p.p50_ttft_ms,
        "p50_ttft_ms_lo": p.p50_ttft_ms_lo,
        "p50_ttft_ms_hi": p.p50_ttft_ms_hi,
        "p99_ttft_ms": p.p99_ttft_ms,
        "p99_ttft_ms_lo": p.p99_ttft_ms_lo,
        "p99_ttft_ms_hi": p.p99_ttft_ms_hi,
        "tpot_ms": p.tpot_ms,
        "tpot_ms_lo": p.tpot_ms_lo,
        "tpot_ms_hi": p.tpot_ms_hi,
        "stream_tok_s": p.stream_tok_s,
        "extrapolated": p.extrapolated,
        "inside_measured_range": not p.extrapolated,
        "range": _range_text(p),
        "basis": p.basis,
        "p50_ttft_stat": p.p50_ttft_stat,
        "p99_ttft_stat": p.p99_ttft_stat,
        "tpot_stat": p.tpot_stat,
    }
    document["output_tok_s_text"] = _band_text(
        p.output_tok_s, p.output_tok_s_lo, p.output_tok_s_hi, 0
    )
    document["p50_ttft_ms_text"] = _band_text(p.p50_ttft_ms, p.p50_ttft_ms_lo, p.p50_ttft_ms_hi, 1)
    document["p99_ttft_ms_text"] = _band_text(p.p99_ttft_ms, p.p99_ttft_ms_lo, p.p99_ttft_ms_hi, 1)
    document["tpot_ms_text"] = _band_text(p.tpot_ms, p.tpot_ms_lo, p.tpot_ms_hi, 2)
    return document


def physics_to_dict(check: PhysicsCheck) -> JsonDict:
    """A curve against its physical ceilings: the ceilings, each point's share of them, flags."""
    ceil = check.ceilings
    return {
        "ceilings": None
        if ceil is None
        else {
            "gpu": ceil.gpu,
            "tp": ceil.tp,
            "precision": ceil.precision,
            "decode_tok_s_single_stream": ceil.decode_tok_s_single_stream,
        },
        "max_streams_memory": check.max_streams,
        "points": [
            {
                "concurrency": point.concurrency,
                "stream_tok_s": point.stream_tok_s,
                "stream_pct_of_ceiling": point.stream_pct_of_ceiling,
                "output_pct_of_ceiling": point.output_pct_of_ceiling,
                "ttft_ms": point.ttft_ms,
                "min_prefill_ms": point.min_prefill_ms,
                "flags": list(point.flags),
            }
            for point in check.points
        ],
        "flags": list(check.flags),
        "notes": list(check.notes),
    }


def prediction_vs_ceiling(
    p: Prediction, ceil: Ceilings | None, isl: int | None, osl: int | None
) -> JsonDict:
    """A prediction's output tok/s and stream speed as % of the ceilings at its concurrency."""
    if ceil is None:
        return {"output_pct_of_ceiling": None, "stream_pct_of_ceiling": None}
    bound = ceil.max_output_tok_s(p.concurrency, isl, osl)
    output = None if p.output_tok_s is None else 100.0 * p.output_tok_s / bound
    stream = p.stream_tok_s
    single = ceil.decode_tok_s_single_stream
    return {
        "output_pct_of_ceiling": output,
        "stream_pct_of_ceiling": None if stream is None else 100.0 * stream / single,
    }
