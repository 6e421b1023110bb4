"""Result folders as the tools leave them: one stored run per tool run.

A benchmark tool writes one folder per run: its result in several exports (AIPerf's JSON, CSV
and per-request JSONL; guidellm's JSON, YAML and CSV; inference-perf's stage, summary and
per-request files), phase copies (AIPerf's phases/warmup and phases/profiling) and side files
(logs, manifests, console text). Read as files, one AIPerf run became up to seven stored runs
with its warm-up plotted as a result. Here, per run folder and tool:

- a warm-up phase (a `warmup` folder) is left out, noted with its size;
- exports of one measurement (workflows.run_identity: the same deployment, workload, run
  identity and numbers; or no stated load beside the levels of that tool run) are one run: the
  most faithful export is kept (the tool's own aggregate with its load, shallowest first), the
  others are noted as copies of it, including an export that could not be read alone for want
  of a fact its sibling states (AIPerf's CSV names no model);
- files that differ in any of these are runs of their own (`vllm bench serve --result-dir`
  keeps every model's and day's result side by side); at different stated loads they are
  levels of one sweep (merged as any sweep is).

The workload a run was asked for, where the folder states it (inference-perf's config.yaml),
replaces the one the client counted (its output-length mean differs from stage to stage, and it
states no input length): the stages of one sweep are then one run, at the ISL it sent.

`read_folder` turns a folder on disk into uploads named `folder/relative/path`.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from errors import CapplanError, InputError
from measurements.importers import MAX_IMPORT_BYTES, ImportedFile, inference_perf
from measurements.importers.archive import MAX_ARCHIVE_MEMBERS, MAX_ARCHIVE_TOTAL_BYTES
from measurements.kinds import LoadKind
from measurements.run_file import RunFile, Workload
from workflows.run_identity import (
    RunPrint,
    fingerprint,
    models,
    same_measurement,
    same_run,
    started,
)

# Exports one tool writes for one run, by the format that read them.
_TOOL_OF_FORMAT = {
    "aiperf": "aiperf",
    "aiperf-records": "aiperf",
    "aiperf-sweep": "aiperf",
    "perf-csv": "aiperf",
    "genai-perf": "aiperf",
    "genai-perf-raw": "aiperf",
    "guidellm": "guidellm",
    "guidellm-csv": "guidellm",
    "inference-perf": "inference-perf",
    "trtllm-bench": "trtllm",
    "trtllm-requests": "trtllm",
    "vllm-bench": "vllm-bench",
}
# Aggregate exports first, then tables, then per-request records (recomputed numbers).
_FORMAT_RANK = {
    "aiperf": 0, "genai-perf": 0, "guidellm": 0, "inference-perf": 0, "trtllm-bench": 0,
    "vllm-bench": 0, "aiperf-sweep": 1, "perf-csv": 2, "guidellm-csv": 2,
    "aiperf-records": 3, "genai-perf-raw": 3, "trtllm-requests": 3,
}  # fmt: skip
# Tools that write one file a run, each run's beside the others' (`vllm bench serve
# --result-dir`): a second file of theirs in one folder is another run, never another export.
_ONE_FILE_A_RUN = frozenset({"vllm-bench"})
_WARMUP = re.compile(r"^warm[-_ ]?up$", re.IGNORECASE)
_PHASES = "phases"
_PLANNED_LOADS = (LoadKind.CONCURRENCY, LoadKind.RATE)


@dataclass(frozen=True, slots=True)
class Member:
    """One file of a result folder or archive: its name, what reading it gave (runs, or the
    error), and the format a failed read was sniffed as (None: not a result)."""

    name: str
    imported: ImportedFile | None
    error: CapplanError | None
    format_id: str | None


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the folder rules make of one member: kept (None) or left out, and why."""

    name: str
    left_out: str | None


def folder_verdicts(members: Sequence[Member]) -> list[Verdict]:
    """Per member, kept or left out (warm-up phases, copies of one measurement)."""
    verdicts = {m.name: Verdict(m.name, None) for m in members}
    for member in members:
        if _in_warmup(member.name):
            verdicts[member.name] = Verdict(member.name, _warmup_note(member))
    groups: dict[tuple[str, str], list[Member]] = {}
    for member in members:
        tool = _TOOL_OF_FORMAT.get(_format(member) or "")
        if tool is not None and verdicts[member.name].left_out is None:
            groups.setdefault((run_folder(member.name), tool), []).append(member)
    for group in groups.values():
        for name, why in _copies(group).items():
            verdicts[name] = Verdict(name, why)
    return [verdicts[m.name] for m in members]


def run_folder(name: str) -> str:
    """The folder of one tool run: the member's folder, less a trailing `phases/<phase>`."""
    parts = PurePosixPath(name).parent.parts
    if len(parts) >= 2 and parts[-2] == _PHASES:
        parts = parts[:-2]
    return "/".join(parts)


def _in_warmup(name: str) -> bool:
    return any(_WARMUP.match(part) for part in PurePosixPath(name).parent.parts)


def _warmup_note(member: Member) -> str:
    runs = member.imported.runs if member.imported is not None else ()
    counts = [lv.completed for run in runs for lv in run.levels if lv.completed is not None]
    total = sum(counts)
    size = f" ({total} request{'s' if total != 1 else ''})" if counts else ""
    return f"skipped: the warm-up phase{size}, left out of the results"


def _format(member: Member) -> str | None:
    return member.imported.format_id if member.imported is not None else member.format_id


def _copies(group: list[Member]) -> dict[str, str]:
    """The members of one run folder and tool that repeat a kept one, each with its note."""
    read = [m for m in group if m.imported is not None and m.imported.runs]
    if not read:
        return _refused_copies(group)
    prints = {m.name: fingerprint(m.imported) for m in read if m.imported is not None}
    # Kept members by the models and start time they name, so that 2,000 runs in one folder
    # are compared with the few that could be the same (a file naming no start: with all).
    kept: dict[tuple[str, ...], dict[str | None, list[Member]]] = {}
    out: dict[str, str] = {}
    for member in sorted(read, key=_preference):
        by_start = kept.setdefault(models(prints[member.name]), {})
        start = started(prints[member.name])
        maybe = [*by_start.get(start, []), *by_start.get(None, [])] if start else _all(by_start)
        twin = _twin(member, maybe, prints)
        if twin is None:
            by_start.setdefault(start, []).append(member)
        else:
            out[member.name] = _copy_note(twin)
    runs = [m for by_start in kept.values() for m in _all(by_start)]
    first = min(runs, key=_preference)
    if all(same_run(prints[m.name], prints[first.name]) for m in runs):
        for member in group:
            if member.imported is None and _may_export(member, first):
                out[member.name] = _copy_note(first)
    return out


def _all(by_start: dict[str | None, list[Member]]) -> list[Member]:
    return [member for members in by_start.values() for member in members]


def _twin(
    member: Member, kept: list[Member], prints: dict[str, tuple[RunPrint, ...]]
) -> Member | None:
    """The kept member this one repeats: the same measurement, or (stating no load) the same
    tool run beside the levels it states (a summary of its stages); None: a run of its own."""
    mine = prints[member.name]
    twin = next((k for k in kept if same_measurement(mine, prints[k.name])), None)
    if twin is not None or _loads(member):
        return twin
    return next((k for k in kept if _loads(k) and same_run(mine, prints[k.name])), None)


def _copy_note(twin: Member) -> str:
    return f"skipped: another export of the run kept from {PurePosixPath(twin.name).name}"


def _may_export(failed: Member, kept: Member) -> bool:
    """Whether a file that could not be read alone may be another export of a kept (or
    refused) run: not where its tool writes one file a run and keeps its runs side by side."""
    one_file = _TOOL_OF_FORMAT.get(_format(failed) or "") in _ONE_FILE_A_RUN
    return not one_file or PurePosixPath(failed.name).parent != PurePosixPath(kept.name).parent


def _refused_copies(group: list[Member]) -> dict[str, str]:
    """No export of the run could be read: the most faithful one says why; the others, in
    another format or phase folder, are copies of it (one refusal per run, not per export)."""
    failed = [m for m in group if m.error is not None]
    if len(failed) < 2:
        return {}
    first = min(failed, key=lambda m: (_rank(m), len(PurePosixPath(m.name).parts), m.name))
    twin = PurePosixPath(first.name).name
    return {
        m.name: f"skipped: another export of the run, refused as {twin} is (see its line)"
        for m in failed
        if m is not first and _may_export(m, first)
    }


def _rank(member: Member) -> int:
    return _FORMAT_RANK.get(_format(member) or "", 2)


def _loads(member: Member) -> tuple[tuple[str, float], ...]:
    """The stated loads of a member's runs, sorted ((): none stated)."""
    runs: tuple[RunFile, ...] = member.imported.runs if member.imported else ()
    return tuple(
        sorted(
            (str(level.load_kind), float(level.load_value))
            for run in runs
            for level in run.levels
            if level.load_stated and not level.burst and level.load_kind in _PLANNED_LOADS
        )
    )


def _preference(member: Member) -> tuple[int, int, int, str]:
    """Lower is kept: stated load, aggregate over table over records, shallow, more metrics."""
    assert member.imported is not None
    metrics = sum(len(lv.metrics) for run in member.imported.runs for lv in run.levels)
    rank = _FORMAT_RANK.get(member.imported.format_id, 2)
    depth = len(PurePosixPath(member.name).parts)
    return (0 if _loads(member) else 1, rank, depth * 1000 - metrics, member.name)


def requested_workloads(files: Sequence[tuple[str, bytes]]) -> dict[str, Workload]:
    """Per run folder, the workload its tool's config asked for (inference-perf's)."""
    found: dict[str, Workload] = {}
    for name, data in files:
        workload = inference_perf.requested_workload(name, data)
        if workload is not None:
            found.setdefault(run_folder(name), workload)
    return found


def as_requested(imported: ImportedFile, requested: dict[str, Workload]) -> ImportedFile:
    """An inference-perf file's runs at the workload its folder's config asked for, the
    client's counts kept in the notes."""
    workload = requested.get(run_folder(imported.name))
    if workload is None or imported.format_id != inference_perf.FORMAT_ID:
        return imported
    runs = tuple(_requested_run(run, workload) for run in imported.runs)
    return replace(imported, runs=runs)


def _requested_run(run: RunFile, workload: Workload) -> RunFile:
    counted = run.workload
    if (counted.isl, counted.osl) == (workload.isl, workload.osl):
        return run
    said = "/".join("?" if n is None else str(n) for n in (counted.isl, counted.osl))
    note = (
        f"workload {workload.isl}/{workload.osl} as the run's config.yaml asked for it; the client "
        f"counted {said} (ISL/OSL means)"
    )
    notes = f"{run.notes}; {note}" if run.notes else note
    return run.model_copy(update={"workload": workload, "notes": notes})


@dataclass(frozen=True, slots=True)
class FolderFile:
    """One file read from a folder on disk (data None: not read, `skip` says why)."""

    name: str
    data: bytes | None
    skip: str | None = None


def read_folder(path: Path) -> list[FolderFile]:
    """Every regular file under `path` (sorted, hidden files and links left out), named
    `<folder>/<relative path>`; one over the import limit is not read, with a note."""
    files: list[FolderFile] = []
    total = 0
    for current, dirs, names in os.walk(path, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__MACOSX")
        for entry in sorted(n for n in names if not n.startswith(".")):
            full = Path(current) / entry
            name = f"{path.name}/{full.relative_to(path).as_posix()}"
            info = full.lstat()
            if not stat.S_ISREG(info.st_mode):
                why = "skipped: not a regular file (a link, pipe or device)"
                files.append(FolderFile(name, None, why))
                continue
            if info.st_size > MAX_IMPORT_BYTES:
                why = f"skipped: {info.st_size:,} bytes, over the {MAX_IMPORT_BYTES:,} byte limit"
                files.append(FolderFile(name, None, why))
                continue
            total += info.st_size
            _check_folder_limits(path, len(files) + 1, total)
            files.append(FolderFile(name, full.read_bytes()))
    if not files:
        raise InputError("the folder holds no file to import", file=str(path))
    return files


def _check_folder_limits(path: Path, count: int, total: int) -> None:
    if count > MAX_ARCHIVE_MEMBERS:
        raise InputError(
            f"more than {MAX_ARCHIVE_MEMBERS} files; import its run folders one by one",
            file=str(path),
        )
    if total > MAX_ARCHIVE_TOTAL_BYTES:
        raise InputError(
            f"its files add up to more than {MAX_ARCHIVE_TOTAL_BYTES:,} bytes, the limit for one "
            "folder; import its run folders one by one",
            file=str(path),
        )


@dataclass(frozen=True, slots=True)
class LeftOut:
    """The files of one folder left out of an import: how many, and of which kinds."""

    folder: str
    total: int
    kinds: str  # 'the warm-up phase (2), other exports of the run kept (4), ...'

    def line(self) -> str:
        """'c1/: 10 files left out: ...'."""
        files = f"{self.total} file{'s' if self.total != 1 else ''}"
        return f"{self.folder}/: {files} left out: {self.kinds}"


def skipped_summary(skipped: Sequence[tuple[str, str]]) -> list[LeftOut]:
    """(file, why) of the files left out, one summary per run folder (in first-seen order)."""
    folders: dict[str, dict[str, int]] = {}
    for name, why in skipped:
        counts = folders.setdefault(run_folder(name) or ".", {})
        kind = _kind(why)
        counts[kind] = counts.get(kind, 0) + 1
    return [
        LeftOut(folder, sum(counts.values()), ", ".join(f"{k} ({n})" for k, n in counts.items()))
        for folder, counts in folders.items()
    ]


def _kind(why: str) -> str:
    if "warm-up" in why:
        return "the warm-up phase"
    if "another export" in why:
        return "other exports of the run kept"
    if "not a result" in why:
        return "not results (logs, manifests, configs)"
    if why == "skipped: empty":
        return "empty files"
    return why.removeprefix("skipped: ")
