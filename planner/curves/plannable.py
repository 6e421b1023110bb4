"""What a stored run lacks for the planner to use it, as the facts to fill in: the rules of
planner.curves.load (a curve needs a concurrency or request-rate level of stated load with a
number; rate levels are planned through the serving model) and of
planner.sizing.selection (a GPU, the GPUs per replica from TP or a GPU count, output tok/s).
Ingest asks before storing, so an unplannable upload is said to be so with what to enter."""

from __future__ import annotations

from dataclasses import dataclass

from measurements.run_file import LoadKind, RunFile
from planner.curves.load import curve_from_run


@dataclass(frozen=True, slots=True)
class MissingFact:
    """One fact a run needs to be planned: the field, and what to enter where."""

    field: str  # gpu, gpus_per_replica, model, levels, output_tok_s
    message: str  # names the upload form's field and the CLI flag


def missing_for_planning(run: RunFile) -> tuple[MissingFact, ...]:
    """The facts the planner needs that this run lacks (empty: it can be planned)."""
    deployment = run.deployment
    missing = []
    if not deployment.model.strip():
        missing.append(MissingFact("model", "no model: enter Model (as served), or --model"))
    if not deployment.gpu:
        missing.append(
            MissingFact(
                "gpu",
                "no GPU: the file names none; choose the GPU it ran on (e.g. H100-SXM-80GB) "
                "instead of '(from file)', or pass --gpu",
            )
        )
    if deployment.tp is None and deployment.gpu_count is None:
        missing.append(
            MissingFact(
                "gpus_per_replica",
                "no TP or GPU count: enter Tensor parallel (TP) or GPUs per replica, or pass "
                "--tp / --gpu-count",
            )
        )
    missing.extend(_level_facts(run))
    return tuple(missing)


def _level_facts(run: RunFile) -> list[MissingFact]:
    curve = curve_from_run(run)
    if curve is None:
        return [MissingFact("levels", _why_no_curve(run))]
    levels = (*curve.points, *curve.rate_points)
    if not levels:
        # offline only: used as a ceiling (planner.sizing.selection.with_offline_ceilings)
        return []
    if all(point.output_tok_s is None for point in levels):
        return [
            MissingFact(
                "output_tok_s",
                "no output tok/s at any load level (latencies only): import the "
                "tool's summary file as well, or a sweep that reports throughput",
            )
        ]
    return []


def _why_no_curve(run: RunFile) -> str:
    loaded = [lv for lv in run.levels if lv.load_kind in (LoadKind.CONCURRENCY, LoadKind.RATE)]
    if not loaded:
        return "no concurrency or request-rate level: sweep with --concurrency or --rate"
    if not any(level.load_stated for level in loaded):
        return (
            "the file does not say what load it ran at: enter Concurrency or Request rate "
            "(files without a stated load), or pass --concurrency / --request-rate"
        )
    return "no load level the planner can use (every one failed, burst or empty)"
