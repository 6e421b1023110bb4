"""One sweep saved as one file per load level becomes one run with several levels.

`vllm bench serve` writes one result file per concurrency; imported together, the files of one
deployment and workload are one curve. Files are merged only when every fact that identifies
the run agrees, mean prompt and output lengths agree within LENGTH_TOLERANCE (random prompts
vary by a token or two between files), and no load level repeats (a repeated level is two
measurements, not one sweep).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from measurements.run_file import RunFile

_Identity = tuple[str, ...]
LENGTH_TOLERANCE = 0.05


def _identity(run: RunFile) -> _Identity:
    """What must agree for two runs to be levels of one sweep."""
    return (
        str(run.source),
        str(run.provenance),
        run.deployment.model_dump_json(),
        run.workload.model_copy(update={"isl": None, "osl": None}).model_dump_json(),
        run.label or "",
    )


@dataclass(frozen=True, slots=True)
class MergedRun:
    """A run to store and the imported runs it was made of (itself alone when not merged)."""

    run: RunFile
    members: tuple[RunFile, ...]

    @property
    def files(self) -> tuple[str, ...]:
        """The files its levels came from, in import order."""
        return tuple(member.origin_file or "?" for member in self.members)


def merge_sweeps(runs: Sequence[RunFile]) -> list[RunFile]:
    """Merge runs of one deployment x workload into one run each; the rest pass unchanged.

    Order is kept: a merged run takes the place of its first member.
    """
    return [merged.run for merged in merge_sweep_groups(runs)]


def merge_sweep_groups(runs: Sequence[RunFile]) -> list[MergedRun]:
    """merge_sweeps, each run with the imported runs it was made of."""
    groups: dict[_Identity, list[RunFile]] = {}
    for run in runs:
        groups.setdefault(_identity(run), []).append(run)
    merged: list[MergedRun] = []
    seen: set[_Identity] = set()
    for run in runs:
        key = _identity(run)
        if key in seen:
            continue
        seen.add(key)
        members = groups[key]
        if _mergeable(members):
            merged.append(MergedRun(_merge(members), tuple(members)))
        else:
            merged.extend(MergedRun(member, (member,)) for member in members)
    return merged


def _mergeable(members: list[RunFile]) -> bool:
    if len(members) < 2:
        return False
    loads = [(level.load_kind, level.load_value) for run in members for level in run.levels]
    return len(loads) == len(set(loads)) and all(
        _close([getattr(run.workload, name) for run in members]) for name in ("isl", "osl")
    )


def _close(values: list[int | None]) -> bool:
    if any(value is None for value in values):
        return all(value is None for value in values)
    known = [value for value in values if value is not None]
    return max(known) <= min(known) * (1 + LENGTH_TOLERANCE)


def _mean_length(values: list[int | None]) -> int | None:
    known = [value for value in values if value is not None]
    return round(sum(known) / len(known)) if known else None


def _merge(members: list[RunFile]) -> RunFile:
    first = members[0]
    levels = sorted(
        (level for run in members for level in run.levels),
        key=lambda level: (str(level.load_kind), level.load_value),
    )
    names = [run.origin_file or "?" for run in members]
    keys = sorted(run.source_sha256 or run.model_dump_json() for run in members)
    starts = [run.started_at for run in members if run.started_at is not None]
    own_notes = [f"{run.origin_file}: {run.notes}" for run in members if run.notes]
    notes = [f"one sweep merged from {len(members)} files: {', '.join(names)}", *own_notes]
    workload = first.workload.model_copy(
        update={
            "isl": _mean_length([run.workload.isl for run in members]),
            "osl": _mean_length([run.workload.osl for run in members]),
        }
    )
    return first.model_copy(
        update={
            "workload": workload,
            "levels": tuple(levels),
            "origin_file": ", ".join(names),
            "source_sha256": hashlib.sha256("\n".join(keys).encode()).hexdigest(),
            "started_at": min(starts) if starts else None,
            "complete": all(run.complete for run in members),
            "notes": "\n".join(notes),
        }
    )
