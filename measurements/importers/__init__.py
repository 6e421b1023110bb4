"""Importers: files from other benchmark tools (and capplan RunFiles) -> RunFiles.

`import_bytes` decodes the bytes, asks each importer's `sniff` in IMPORTERS order (or the one
named) and calls its `parse`; whatever goes wrong surfaces as an InputError naming the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from errors import FileTooLargeError, InputError, UnknownFormatError
from measurements.bounded import json_loads
from measurements.importers import (
    aiperf,
    aiperf_records,
    aiperf_sweep,
    curve_csv,
    genai_perf,
    genai_perf_raw,
    guidellm,
    guidellm_csv,
    inference_perf,
    inferencex_agg,
    llmd_report,
    llmperf,
    perf_csv,
    runfile,
    trtllm_bench,
    trtllm_requests,
    vllm_bench,
    vllm_nightly_table,
)
from measurements.importers.common import (
    NO_OVERRIDES,
    DeploymentOverrides,
    UserLoad,
    content_key,
    file_digest,
    join_notes,
    user_load,
)
from measurements.importers.limits import MAX_IMPORT_BYTES, MAX_ROWS, check_runs, over
from measurements.run_file import Level, LoadKind, Provenance, RunFile, input_error_from_validation

__all__ = [
    "IMPORTERS",
    "MAX_IMPORT_BYTES",
    "NAME_THE_FORMAT",
    "DeploymentOverrides",
    "ImportedFile",
    "Importer",
    "import_bytes",
    "import_path",
    "sniff_format",
]

_FIRST_CHARACTER = re.compile(r"\S")
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


class Importer(Protocol):
    """What every importer module provides (modules satisfy this protocol structurally)."""

    FORMAT_ID: str
    DESCRIPTION: str

    def sniff(self, name: str, doc: object) -> str | None:
        """The detected variant in words when `doc` is this format, else None."""

    def parse(
        self,
        name: str,
        doc: object,
        data: bytes,
        overrides: DeploymentOverrides,
        provenance: Provenance,
    ) -> list[RunFile]:
        """The runs in `doc`; `data` is the raw bytes (for the dedupe key)."""


# How the CLI names a format; the Runs page says its own format selector instead (ui/upload.py).
NAME_THE_FORMAT = "pass --format"
# Sniff order: the most specific signatures first; the curve CSV is the only text format.
IMPORTERS: dict[str, Importer] = {
    runfile.FORMAT_ID: runfile,
    vllm_nightly_table.FORMAT_ID: vllm_nightly_table,
    inferencex_agg.FORMAT_ID: inferencex_agg,
    trtllm_bench.FORMAT_ID: trtllm_bench,
    aiperf.FORMAT_ID: aiperf,
    aiperf_sweep.FORMAT_ID: aiperf_sweep,
    genai_perf.FORMAT_ID: genai_perf,
    guidellm.FORMAT_ID: guidellm,
    llmperf.FORMAT_ID: llmperf,
    inference_perf.FORMAT_ID: inference_perf,
    trtllm_requests.FORMAT_ID: trtllm_requests,
    genai_perf_raw.FORMAT_ID: genai_perf_raw,
    aiperf_records.FORMAT_ID: aiperf_records,
    vllm_bench.FORMAT_ID: vllm_bench,
    llmd_report.FORMAT_ID: llmd_report,
    perf_csv.FORMAT_ID: perf_csv,
    guidellm_csv.FORMAT_ID: guidellm_csv,
    curve_csv.FORMAT_ID: curve_csv,
}


# Files peer tools write beside their results that are recognisable but not importable.
_NOT_RESULTS: tuple[Callable[[object], str | None], ...] = (inference_perf.not_a_result,)


@dataclass(frozen=True, slots=True)
class ImportedFile:
    """One imported file: which format was detected and the runs it yielded."""

    name: str
    format_id: str
    detected: str  # human text, e.g. "vLLM bench serve (new, --save-detailed)"
    runs: tuple[RunFile, ...]


def import_path(
    path: Path,
    *,
    format_id: str = "auto",
    overrides: DeploymentOverrides = NO_OVERRIDES,
    provenance: Provenance = Provenance.IMPORTED,
) -> ImportedFile:
    """Import one file from disk (see import_bytes); the file name becomes the runs' origin_file."""
    try:
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise _too_large(str(path), size)
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", file=str(path)) from exc
    return import_bytes(
        path.name, data, format_id=format_id, overrides=overrides, provenance=provenance
    )


def import_bytes(
    name: str,
    data: bytes,
    *,
    format_id: str = "auto",
    overrides: DeploymentOverrides = NO_OVERRIDES,
    provenance: Provenance = Provenance.IMPORTED,
) -> ImportedFile:
    """Detect the format of `data` (or use `format_id`) and turn it into RunFiles."""
    if len(data) > MAX_IMPORT_BYTES:
        raise _too_large(name, len(data))
    doc = decode(name, data)
    importer, detected = _choose(name, doc, format_id)
    try:
        runs = importer.parse(name, doc, data, overrides, provenance)
        key = content_key(data)  # the digest its runs' keys took: a file is hashed once
    except ValidationError as exc:
        raise input_error_from_validation(exc, name) from exc
    finally:
        file_digest.cache_clear()
    check_runs(name, runs)
    stamped = tuple(_with_user_load(_stamp(run, name, key), overrides) for run in runs)
    if not stamped:
        raise InputError("the file holds no load levels", file=name)
    return ImportedFile(name=name, format_id=importer.FORMAT_ID, detected=detected, runs=stamped)


def sniff_format(name: str, data: bytes) -> str | None:
    """The format id `data` looks like (None: none, or it cannot be decoded)."""
    try:
        doc = decode(name, data)
    except InputError:
        return None
    return next((fid for fid, importer in IMPORTERS.items() if importer.sniff(name, doc)), None)


def decode(name: str, data: bytes) -> object:
    """Bytes -> parsed JSON (object, list, or a list of JSON lines) or, for anything else, text."""
    text = _text(name, data)
    first = _FIRST_CHARACTER.search(text)  # no stripped copy of a 50 MiB text
    if first is None:
        raise InputError("the file is empty", file=name)
    if first.group() not in ("{", "["):
        return text
    try:
        # A key given twice is refused, not the last one kept. (Nesting is bounded by
        # RecursionError below, sizes by the file limit; bounded.check's walk is kept for
        # YAML, where aliases multiply what the bytes hold.)
        return json_loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and _starts_with_json_line(text):
            return _json_lines(name, text)
        raise _bad_json(name, exc) from exc
    except (ValueError, RecursionError) as exc:  # a repeated key, over-long integers, nesting
        raise InputError(f"JSON that cannot be read: {exc}", file=name) from exc


def _text(name: str, data: bytes) -> str:
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), "utf-8")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 (or UTF-16 with a byte-order mark) text: {exc.reason} at byte "
            f"{exc.start}; save the file as UTF-8",
            file=name,
        ) from exc


def _starts_with_json_line(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    try:
        json.loads(first)
    except (ValueError, RecursionError):
        return False
    return True


def _json_lines(name: str, text: str) -> list[object]:
    """--append-result files and per-request records: one JSON document per line (counted
    before any is parsed, so a file of too many is refused at once)."""
    over(text.count("\n") + (not text.endswith("\n")), MAX_ROWS, "JSON lines", file=name)
    docs: list[object] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            docs.append(json_loads(line))
        except json.JSONDecodeError as exc:
            raise _bad_json(name, exc, line=number) from exc
        except (ValueError, RecursionError) as exc:
            raise InputError(f"line {number}: JSON that cannot be read: {exc}", file=name) from exc
    return docs


def _bad_json(name: str, exc: json.JSONDecodeError, line: int | None = None) -> InputError:
    where = f"line {line or exc.lineno} column {exc.colno}"
    return InputError(f"not valid JSON at {where}: {exc.msg} (truncated file?)", file=name)


def _choose(name: str, doc: object, format_id: str) -> tuple[Importer, str]:
    if format_id == "auto":
        for importer in IMPORTERS.values():
            detected = importer.sniff(name, doc)
            if detected is not None:
                return importer, detected
        for explain in _NOT_RESULTS:
            why = explain(doc)
            if why is not None:
                raise UnknownFormatError(why, file=name)
        # One short line: the format ids (docs/formats.md describes each).
        raise UnknownFormatError(
            f"not a format capplan can import (looked for {', '.join(IMPORTERS)}); if it is one "
            f"of these, {NAME_THE_FORMAT} to see what does not match",
            file=name,
        )
    if format_id not in IMPORTERS:
        known = ", ".join(["auto", *IMPORTERS])
        raise InputError(f"unknown format; expected one of {known}", file=name, value=format_id)
    importer = IMPORTERS[format_id]
    detected = importer.sniff(name, doc)
    if detected is None:
        raise InputError(
            f"does not look like {format_id}: expected {importer.DESCRIPTION}", file=name
        )
    return importer, detected


def _stamp(run: RunFile, name: str, key: str) -> RunFile:
    # Importers set the key themselves when a file holds several runs (content_key with a part).
    update: dict[str, object] = {}
    if run.origin_file != name:
        update["origin_file"] = name
    if not run.source_sha256:
        update["source_sha256"] = key
    return run.model_copy(update=update) if update else run


def _with_user_load(run: RunFile, overrides: DeploymentOverrides) -> RunFile:
    """Give levels whose file states no load the load the user stated (--concurrency, form)."""
    load = user_load(overrides)
    if load is None:
        return run
    levels = []
    for level in run.levels:
        if level.load_stated:
            levels.append(_file_load_wins(level, load))
            continue
        kind = "req/s" if level.load_kind is LoadKind.RATE else "in flight"
        replaced = (
            f"{load.note}; it replaces what the importer recorded for a file that states no "
            f"load ({level.load_value:g} {kind}, achieved), as its notes below say"
        )
        notes = join_notes([replaced, level.notes or ""])
        update = {
            "load_kind": load.kind,
            "load_value": load.value,
            "load_stated": True,
            "notes": notes,
        }
        levels.append(level.model_copy(update=update))
    return run.model_copy(update={"levels": tuple(levels)})


def _file_load_wins(level: Level, load: UserLoad) -> Level:
    """A level whose file states its load keeps it; its notes say the user's was not used."""
    if load.note in (level.notes or ""):  # the importer used the user's load itself
        return level
    kind = "req/s" if level.load_kind is LoadKind.RATE else "in flight"
    kept = f"{load.note} was not used: the file states {level.load_value:g} {kind}, which wins"
    return level.model_copy(update={"notes": join_notes([kept, level.notes or ""])})


def _too_large(name: str, size: int) -> FileTooLargeError:
    limit_mib = MAX_IMPORT_BYTES / (1024 * 1024)
    return FileTooLargeError(
        f"the file is {size} bytes, over the {limit_mib:g} MiB import limit", file=name, value=size
    )
