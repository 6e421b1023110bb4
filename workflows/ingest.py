"""Ingest: result files (read from disk or uploaded) -> RunFiles -> the store, with one typed
outcome per stored run (or per refused file). The CLI and the Runs page both call `ingest`.

Two batch policies, chosen by the caller and named in its contract: `atomic` (the CLI: every
file is read and checked first and a bad one stores nothing at all; the save is one
transaction) and per file (the app: a bad file is refused on its own, the good ones are stored,
each run in its own transaction). Files of one sweep (one load level each) merge into one run
unless `merge` is off; a zip is expanded into its members, each imported like a file.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from pydantic import ValidationError

from db import repository
from db.engine import Engine
from db.repository import SaveResult
from errors import CapplanError, InputError, UnknownFormatError
from measurements.engine_log import NO_KV_FACTS, KvLogFacts, kv_facts_beside, with_kv_report
from measurements.importers import MAX_IMPORT_BYTES, ImportedFile, import_bytes, sniff_format
from measurements.importers.archive import expand_archive, is_archive
from measurements.importers.common import NO_OVERRIDES, DeploymentOverrides
from measurements.importers.sweeps import MergedRun, merge_sweep_groups
from measurements.run_file import Provenance, input_error_from_validation
from planner.curves.plannable import missing_for_planning
from team.roles import Action, Actor
from workflows.result_folders import (
    Member,
    Verdict,
    as_requested,
    folder_verdicts,
    read_folder,
    requested_workloads,
    run_folder,
)

__all__ = [
    "FileOutcome",
    "IngestOptions",
    "IngestStatus",
    "Upload",
    "deployment_overrides",
    "ingest",
    "is_archive",
    "read_uploads",
]


@dataclass(frozen=True, slots=True)
class Upload:
    """One result file as bytes, under the name it is known by (a path's name, an upload's);
    `folder`: the result folder it came from (read by workflows.result_folders' rules); `skip`:
    why it was not read (over the limit, a link), said as a skipped line."""

    name: str
    data: bytes
    folder: str | None = None
    skip: str | None = None


class IngestStatus(StrEnum):
    """What happened to one run (or one refused file)."""

    STORED = "stored"
    DUPLICATE = "already stored"
    REJECTED = "rejected"
    SKIPPED = "skipped"  # a side file of a result folder (log, manifest, timestamp): not a result


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """How to read a batch: the deployment facts the files lack, the format, the policy."""

    overrides: DeploymentOverrides = NO_OVERRIDES
    provenance: Provenance = Provenance.IMPORTED
    format_id: str = "auto"
    merge: bool = True  # files of one sweep become one run
    atomic: bool = False  # a bad file stores nothing at all (raises) instead of only itself
    # A run the planner cannot use (planner.curves.plannable: no GPU, no TP or GPU count, no usable
    # concurrency level) is refused instead of stored with a warning.
    refuse_unplannable: bool = False


@dataclass(frozen=True, slots=True)
class FileOutcome:
    """One stored (or already stored) run with the files it came from, or one refused file."""

    files: tuple[str, ...]
    status: IngestStatus
    format_id: str | None = None
    detected: str | None = None
    run_id: int | None = None
    levels: int = 0
    samples: int = 0
    message: str = ""
    # What the planner needs that the run lacks, each naming the form field and flag to fill.
    unplannable: tuple[str, ...] = ()
    # No importer recognised the file (UnknownFormatError): there is no detected format to show.
    unrecognised: bool = False

    @property
    def file(self) -> str:
        """The files as one label (a merged sweep names each of its files)."""
        return ", ".join(self.files)

    @property
    def created(self) -> bool:
        """True when this outcome wrote a new run."""
        return self.status is IngestStatus.STORED


def read_uploads(paths: Iterable[Path]) -> list[Upload]:
    """Each path's bytes, its size checked before reading; a folder gives every file under it
    (named `folder/relative/path`); InputError naming the file when it is not a regular file
    or folder, is over the limit or cannot be read."""
    uploads: list[Upload] = []
    for path in paths:
        if path.is_dir():
            try:
                found = read_folder(path)
            except OSError as exc:
                raise InputError(f"cannot read the folder: {exc}", file=str(path)) from exc
            uploads += [Upload(f.name, f.data or b"", path.name, f.skip) for f in found]
        else:
            uploads.append(_read(path))
    return uploads


def _read(path: Path) -> Upload:
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):
            raise InputError("not a regular file (a folder, device or pipe)", file=str(path))
        if status.st_size > MAX_IMPORT_BYTES:
            limit_mib = MAX_IMPORT_BYTES // (1024 * 1024)
            raise InputError(
                f"the file is {status.st_size:,} bytes, over the {limit_mib} MiB import limit",
                file=str(path),
            )
        with path.open("rb") as handle:
            data = handle.read(MAX_IMPORT_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", file=str(path)) from exc
    return Upload(path.name, data)


def ingest(
    engine: Engine, uploads: Sequence[Upload], options: IngestOptions, *, actor: Actor
) -> list[FileOutcome]:
    """Import and store a batch as actor (a planner or above: PermissionDeniedError before any file
    is read); outcomes in upload order (archive members where their archive was). With
    options.atomic the first bad file raises its CapplanError and nothing is stored."""
    actor.require(Action.IMPORT_RUNS)
    parsed, refused, order = _parse(uploads, options)
    merged = (
        merge_sweep_groups([run for imported in parsed for run in imported.runs])
        if options.merge
        else [MergedRun(run, (run,)) for imported in parsed for run in imported.runs]
    )
    files = {imported.name: imported for imported in parsed}
    missing = {id(item): _missing(item) for item in merged}
    if options.refuse_unplannable:
        refused += [_unplannable(item, missing[id(item)]) for item in merged if missing[id(item)]]
        merged = [item for item in merged if not missing[id(item)]]
    if options.atomic:
        results = repository.save_runs(engine, [item.run for item in merged], actor=actor)
        stored = [
            _outcome(item, result, files) for item, result in zip(merged, results, strict=True)
        ]
    else:
        stored = [_save_one(engine, item, files, actor) for item in merged]
    stored = [
        replace(outcome, unplannable=missing[id(item)])
        for item, outcome in zip(merged, stored, strict=True)
    ]
    outcomes = [*refused, *stored]
    return sorted(outcomes, key=lambda outcome: order.get(outcome.files[0], 0))


def _missing(item: MergedRun) -> tuple[str, ...]:
    return tuple(fact.message for fact in missing_for_planning(item.run))


def _unplannable(item: MergedRun, missing: tuple[str, ...]) -> FileOutcome:
    message = f"not stored: the planner could not use it ({'; '.join(missing)})"
    return FileOutcome(item.files, IngestStatus.REJECTED, message=message, unplannable=missing)


def _parse(
    uploads: Sequence[Upload], options: IngestOptions
) -> tuple[list[ImportedFile], list[FileOutcome], dict[str, int]]:
    parsed: list[ImportedFile] = []
    refused: list[FileOutcome] = []
    order: dict[str, int] = {}  # upload order, archive members in place of their archive
    for batch, grouped in _batches(uploads, options, refused, order):
        for upload in batch:
            order.setdefault(upload.name, len(order))
        members = _read_batch(batch, grouped, options, refused)
        verdicts = folder_verdicts(members) if grouped else [Verdict(m.name, None) for m in members]
        requested = requested_workloads([(u.name, u.data) for u in batch]) if grouped else {}
        logs = _engine_logs(batch) if grouped else {}
        for member, verdict in zip(members, verdicts, strict=True):
            if verdict.left_out is not None:
                refused.append(_outcome_line(member.name, IngestStatus.SKIPPED, verdict.left_out))
            elif member.error is not None:
                if options.atomic:
                    raise member.error
                refused.append(_rejected(member.name, member.error))
            elif member.imported is not None:
                parsed.append(_with_logs(as_requested(member.imported, requested), logs))
    return parsed, refused, order


def _engine_logs(batch: list[Upload]) -> dict[str, KvLogFacts]:
    """The KV-cache report of the engine log in each run folder of a batch (if one states it)."""
    by_folder: dict[str, list[tuple[str, bytes]]] = {}
    for upload in batch:
        by_folder.setdefault(run_folder(upload.name), []).append((upload.name, upload.data))
    return {folder: kv_facts_beside(files) for folder, files in by_folder.items()}


def _with_logs(imported: ImportedFile, logs: dict[str, KvLogFacts]) -> ImportedFile:
    """The file's runs with the KV-cache report an engine log beside them states."""
    facts = logs.get(run_folder(imported.name), NO_KV_FACTS)
    return replace(imported, runs=tuple(with_kv_report(run, facts) for run in imported.runs))


def _read_batch(
    batch: list[Upload], grouped: bool, options: IngestOptions, refused: list[FileOutcome]
) -> list[Member]:
    """Each upload of a batch read (or why not); side files of a result folder are skipped."""
    members: list[Member] = []
    for upload in batch:
        if upload.skip:
            refused.append(_outcome_line(upload.name, IngestStatus.SKIPPED, upload.skip))
            continue
        if grouped and not upload.data.strip():  # a tool's empty stderr.txt, a placeholder
            refused.append(_outcome_line(upload.name, IngestStatus.SKIPPED, "skipped: empty"))
            continue
        try:
            members.append(Member(upload.name, _import(upload, options), None, None))
        except CapplanError as exc:
            if grouped and (isinstance(exc, UnknownFormatError) or _side_file(upload.name)):
                # A result folder holds logs, manifests and timestamps beside its results (a
                # log that opens with "[" is no broken JSON result).
                refused.append(_skipped(upload, exc))
                continue
            if not grouped and options.atomic:
                raise
            found = sniff_format(upload.name, upload.data) if grouped else None
            members.append(Member(upload.name, None, exc, found))
    return members


# What a result file is named as (a broken one of these in a folder is refused, never skipped).
_RESULT_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml", ".csv")


def _side_file(name: str) -> bool:
    return not name.lower().endswith(_RESULT_SUFFIXES)


def _outcome_line(name: str, status: IngestStatus, message: str) -> FileOutcome:
    return FileOutcome((name,), status, message=message)


def _batches(
    uploads: Sequence[Upload],
    options: IngestOptions,
    refused: list[FileOutcome],
    order: dict[str, int],
) -> list[tuple[list[Upload], bool]]:
    """The uploads as batches read together: a plain file alone, an archive's members, a
    folder's files (zips inside it expanded); True where the result-folder rules apply."""
    batches: list[tuple[list[Upload], bool]] = []
    folders: dict[str, list[Upload]] = {}
    for upload in uploads:
        try:
            members = _members(upload)
        except CapplanError as exc:
            if options.atomic:
                raise
            order.setdefault(upload.name, len(order))
            refused.append(_rejected(upload.name, exc))
            continue
        if upload.folder is not None:
            if upload.folder not in folders:
                folders[upload.folder] = []
                batches.append((folders[upload.folder], True))
            folders[upload.folder].extend(members)
        else:
            batches.append((members, members != [upload]))
    return batches


def _rejected(name: str, exc: CapplanError) -> FileOutcome:
    unrecognised = isinstance(exc, UnknownFormatError)
    return FileOutcome((name,), IngestStatus.REJECTED, message=str(exc), unrecognised=unrecognised)


def _skipped(upload: Upload, exc: CapplanError) -> FileOutcome:
    why = "not a result file capplan reads"
    if isinstance(exc, UnknownFormatError) and "not a format capplan can" not in exc.message:
        why = exc.message
    return FileOutcome((upload.name,), IngestStatus.SKIPPED, message=f"skipped: {why}")


def _members(upload: Upload) -> list[Upload]:
    """An upload, or the members of a zip, each named `archive.zip/member` (so two zips' lines
    never read alike: issue 24 item 5)."""
    if upload.skip or not is_archive(upload.name, upload.data):
        return [upload]
    members = expand_archive(upload.name, upload.data)
    return [Upload(f"{upload.name}/{name}", data, upload.folder) for name, data in members]


def _import(upload: Upload, options: IngestOptions) -> ImportedFile:
    return import_bytes(
        upload.name,
        upload.data,
        format_id=options.format_id,
        overrides=options.overrides,
        provenance=options.provenance,
    )


def _save_one(
    engine: Engine, item: MergedRun, files: dict[str, ImportedFile], actor: Actor
) -> FileOutcome:
    """One run in its own transaction: stored whole or not at all."""
    try:
        result = repository.save_run(engine, item.run, actor=actor)
    except CapplanError as exc:
        return FileOutcome(item.files, IngestStatus.REJECTED, message=str(exc))
    return _outcome(item, result, files)


def _outcome(item: MergedRun, result: SaveResult, files: dict[str, ImportedFile]) -> FileOutcome:
    first = files.get(item.files[0])
    return FileOutcome(
        files=item.files,
        status=IngestStatus.STORED if result.created else IngestStatus.DUPLICATE,
        format_id=first.format_id if first else None,
        detected=first.detected if first else None,
        run_id=result.run_id,
        levels=len(item.run.levels),
        samples=sum(len(level.samples) for level in item.run.levels),
        message=result.message,
    )


def deployment_overrides(facts: dict[str, object], where: str) -> DeploymentOverrides:
    """Validated deployment facts given beside the files (blank ones mean 'take it from the
    file'); InputError names the field and value, and `where` they were given."""
    try:
        return DeploymentOverrides.model_validate(facts)
    except ValidationError as exc:
        raise input_error_from_validation(exc, where) from exc
