"""What makes two files of one result folder one measurement (issue 30 item 1).

Two exports are one run only when they share the deployment (engine, model, GPU, TP, PP, GPU
count, precision, engine arguments), the workload and the tool's run identity (its start time,
label), each compared where both files state it, and repeat the same measurement: the same
stated loads, the same request counts and the same latencies (within the rounding one export
writes and another does not). `vllm bench serve --result-dir` leaves the runs of several
models and days side by side in one folder: each is a run of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from measurements.importers import ImportedFile
from measurements.importers.sweeps import LENGTH_TOLERANCE
from measurements.run_file import Level, RunFile

# Per-request latency statistics: one measurement's exports agree on them (a CSV rounds to
# 0.01 ms, a records file recomputes them from the same requests); throughputs and TPOT do
# not (the records' window and token counting differ), so they are not compared.
_COMPARED_METRICS = frozenset(
    f"{stat}_{metric}_ms" for stat in ("mean", "p50", "p90", "p99") for metric in ("ttft", "e2e")
)
_NUMBER_REL = 5e-3
_NUMBER_ABS_MS = 0.01
_DEPLOYMENT_FACTS = ("engine", "model", "precision", "gpu", "gpu_count", "tp", "pp")
_WORKLOAD_FACTS = ("dataset", "isl_distribution", "osl_distribution", "ignore_eos")


@dataclass(frozen=True, slots=True)
class LevelPrint:
    """One level's measurement: its stated load (None: not stated), requests and latencies."""

    load: tuple[str, float] | None
    completed: int | None
    latencies_ms: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class RunPrint:
    """One run's identity: the facts it states (name, value), its lengths and its levels."""

    facts: tuple[tuple[str, str], ...]
    lengths: tuple[int | None, int | None]
    levels: tuple[LevelPrint, ...]


def fingerprint(imported: ImportedFile) -> tuple[RunPrint, ...]:
    """The identity of each run a file gave, in file order."""
    return tuple(_run_print(run) for run in imported.runs)


def models(prints: Sequence[RunPrint]) -> tuple[str, ...]:
    """The models a file's runs name (every run names one): a cheap key to compare within."""
    return tuple(dict(run.facts).get("model", "") for run in prints)


def started(prints: Sequence[RunPrint]) -> str | None:
    """The start time every run of a file states (None: one states none)."""
    starts = [dict(run.facts).get("started_at") for run in prints]
    return None if None in starts else "|".join(str(start) for start in starts)


def same_run(first: Sequence[RunPrint], second: Sequence[RunPrint]) -> bool:
    """True when two files' runs agree on deployment, workload and run identity where both
    state them (their loads and numbers aside)."""
    return len(first) == len(second) and all(
        _agree(a.facts, b.facts) and _lengths_close(a.lengths, b.lengths)
        for a, b in zip(first, second, strict=True)
    )


def same_measurement(first: Sequence[RunPrint], second: Sequence[RunPrint]) -> bool:
    """True when two files are exports of one measurement: one run, the same loads, request
    counts and latencies."""
    return same_run(first, second) and all(
        _same_levels(a.levels, b.levels) for a, b in zip(first, second, strict=True)
    )


def _run_print(run: RunFile) -> RunPrint:
    deployment, workload = run.deployment, run.workload
    facts = [(name, getattr(deployment, name)) for name in _DEPLOYMENT_FACTS]
    facts += [(f"engine_args.{k}", v) for k, v in sorted(deployment.engine_args.items())]
    facts += [(name, getattr(workload, name)) for name in _WORKLOAD_FACTS]
    facts += [("started_at", run.started_at), ("label", run.label)]
    stated = tuple((name, str(value)) for name, value in facts if value is not None)
    levels = tuple(_level_print(level) for level in run.levels)
    return RunPrint(stated, (workload.isl, workload.osl), levels)


def _level_print(level: Level) -> LevelPrint:
    load = (str(level.load_kind), float(level.load_value)) if level.load_stated else None
    latencies = tuple(
        sorted((m.name, float(m.value)) for m in level.metrics if m.name in _COMPARED_METRICS)
    )
    return LevelPrint(load, level.completed, latencies)


def _agree(first: tuple[tuple[str, str], ...], second: tuple[tuple[str, str], ...]) -> bool:
    """Facts stated by both are equal (one export may state what the other leaves out)."""
    other = dict(second)
    return all(other.get(name, value) == value for name, value in first)


def _lengths_close(
    first: tuple[int | None, int | None], second: tuple[int | None, int | None]
) -> bool:
    return all(
        a is None or b is None or max(a, b) <= min(a, b) * (1 + LENGTH_TOLERANCE)
        for a, b in zip(first, second, strict=True)
    )


def _same_levels(first: tuple[LevelPrint, ...], second: tuple[LevelPrint, ...]) -> bool:
    """Level by level (by stated load where both state every load, else in file order)."""
    if len(first) != len(second):
        return False
    if all(level.load is not None for level in (*first, *second)):
        first, second = _by_load(first), _by_load(second)
    return all(_same_level(a, b) for a, b in zip(first, second, strict=True))


def _by_load(levels: tuple[LevelPrint, ...]) -> tuple[LevelPrint, ...]:
    return tuple(sorted(levels, key=lambda level: level.load or ("", 0.0)))


def _same_level(first: LevelPrint, second: LevelPrint) -> bool:
    if None not in (first.load, second.load) and first.load != second.load:
        return False
    if None not in (first.completed, second.completed) and first.completed != second.completed:
        return False
    other = dict(second.latencies_ms)
    return all(_close(value, other[name]) for name, value in first.latencies_ms if name in other)


def _close(first: float, second: float) -> bool:
    return abs(first - second) <= max(_NUMBER_ABS_MS, _NUMBER_REL * max(abs(first), abs(second)))
