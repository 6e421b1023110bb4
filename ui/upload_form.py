"""The Runs page's upload form fields: the deployment facts a result file may not state, and
the upload size limits (per file, per zip member, and a zip's uncompressed total)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from errors import CapplanError, InputError
from hardware.gpus import gpu_catalog
from measurements.importers import MAX_IMPORT_BYTES, NAME_THE_FORMAT
from measurements.run_file import Provenance
from ui.text import plain
from ui.upload_budget import env_mib
from workflows.ingest import FileOutcome, IngestStatus, is_archive
from workflows.limits import CONCURRENCY, GPU_COUNT, PARALLEL, REQUEST_RATE
from workflows.result_folders import skipped_summary

MAX_UPLOAD_ENV = "CAPPLAN_MAX_UPLOAD_MB"
MIB = 1024 * 1024
# The importers refuse more than this per file, so a larger CAPPLAN_MAX_UPLOAD_MB cannot raise it.
CEILING_MB = MAX_IMPORT_BYTES // MIB
# A zip may expand to this many times the per-file limit in all (its members each to one limit).
ZIP_TOTAL_FACTOR = 10

FROM_FILE = "(from file)"
OTHER = "other"
ENGINES = (FROM_FILE, "vllm", "tensorrt-llm", "sglang", OTHER)
PRECISIONS = (FROM_FILE, "fp8", "bf16", "fp16", "int8", "int4", "nvfp4", OTHER)
FACT_HELP = "Only for facts the file does not state; a value here replaces the file's (noted)."
LOAD_HELP = (
    "Some exports (AIPerf/GenAI-Perf CSV, per-request records) do not say what load they ran "
    "at. Give the concurrency or the rate you ran (not both): it is used only where a file "
    "states no load; a file that states its own keeps it, and its notes say yours was not used. "
    "Without either, such a level is stored but kept out of curve fits."
)
FORMAT_LABEL = "File format"
# Where a web user names a format: the CLI's "pass --format" in a message reads as this instead.
CHOOSE_THE_FORMAT = f"choose it under '{FORMAT_LABEL}' above and import again"
NOT_RECOGNISED = "format not recognised"
NOT_READ = "-"
COUNTS = (
    ("gpu_count", "GPUs per replica", GPU_COUNT),
    ("tp", "Tensor parallel (TP)", PARALLEL),
    ("pp", "Pipeline parallel (PP)", PARALLEL),
)


@dataclass(frozen=True, slots=True)
class UploadChoices:
    """What the upload fields ask besides the files: facts, provenance, format, policy."""

    facts: dict[str, object]
    provenance: Provenance
    format_id: str
    store_unplannable: bool


def _pick(column: DeltaGenerator, label: str, options: tuple[str, ...]) -> str:
    chosen = column.selectbox(label, options, key=f"fact_{label}", help=FACT_HELP)
    other = column.text_input(f"{label} if '{OTHER}'", key=f"fact_{label}_other")
    return other if chosen == OTHER else ("" if chosen == FROM_FILE else chosen)


def deployment_facts() -> dict[str, object]:
    """Draw the fact fields (inside the caller's form); blank means 'take it from the file'."""
    left, middle, right, last = st.columns(4)
    facts: dict[str, object] = {
        "engine": _pick(left, "Engine", ENGINES),
        "engine_version": left.text_input("Engine version", key="fact_version", help=FACT_HELP),
        "model": middle.text_input("Model (as served)", key="fact_model", help=FACT_HELP),
        "precision": _pick(middle, "Precision", PRECISIONS),
        "gpu": _pick(right, "GPU", (FROM_FILE, *gpu_catalog().names(), OTHER)),
    }
    for name, label, bound in COUNTS:
        facts[name] = last.number_input(
            label, 1, int(bound.high), value=None, step=1, key=f"fact_{name}", help=FACT_HELP
        )
    load, rate = st.columns(2)
    facts["concurrency"] = load.number_input(
        "Concurrency (files without a stated load)",
        min_value=1,
        max_value=int(CONCURRENCY.high),
        value=None,
        step=1,
        key="fact_concurrency",
        help=LOAD_HELP,
    )
    facts["request_rate"] = rate.number_input(
        "Request rate, req/s (files without a stated load)",
        min_value=REQUEST_RATE.low,
        max_value=float(REQUEST_RATE.high),
        value=None,
        key="fact_request_rate",
        help=LOAD_HELP,
    )
    return facts


def store_unplannable() -> bool:
    """Whether to store runs the planner cannot use (default: refuse, saying what is missing)."""
    return st.checkbox(
        "Store runs the planner cannot use",
        key="upload_store_unplannable",
        help="A run without a GPU, without TP or a GPU count, or without a concurrency level "
        "the planner can read is left out of every plan. Unticked, such a file is not stored and "
        "the page says which field to fill in; ticked, it is stored anyway (to fill in later "
        "by importing it again with the facts).",
    )


def unplannable_notes(outcomes: Sequence[FileOutcome]) -> list[str]:
    """One warning per run the planner cannot use: the file, whether it was stored, and each
    field to fill in."""
    notes = []
    for outcome in outcomes:
        if not outcome.unplannable:
            continue
        done = (
            "stored, but no plan can use it"
            if outcome.run_id is not None
            else "not stored: no plan could use it"
        )
        todo = "; ".join(outcome.unplannable)
        notes.append(f"{outcome.file}: {done}. Fill in above and import again: {todo}.")
    return notes


def provenance() -> Provenance:
    """How the uploaded numbers were obtained (kept with every run)."""
    chosen = st.selectbox(
        "The numbers were",
        list(Provenance),
        index=list(Provenance).index(Provenance.IMPORTED),
        format_func=lambda p: {
            "measured": "measured here",
            "imported": "imported from a tool",
            "published": "published by someone else",
        }[str(p)],
        key="upload_provenance",
    )
    return chosen or Provenance.IMPORTED


def max_upload_mb() -> float:
    """The per-file upload limit in MiB: $CAPPLAN_MAX_UPLOAD_MB, at most the importers' 50."""
    value = env_mib(MAX_UPLOAD_ENV, float(CEILING_MB), example=20)
    return min(value, float(CEILING_MB))


def _mb(size: float) -> str:
    return f"{size / MIB:.1f} MiB"


def check_upload(name: str, data: bytes, limit_mb: float) -> None:
    """Refuse a file over the limit, or a zip whose members (read from its central directory,
    before anything is decompressed) are over the limit one by one or ten times it in all."""
    limit = int(limit_mb * MIB)
    if len(data) > limit:
        raise InputError(
            f"{_mb(len(data))}, over the {limit_mb:g} MiB upload limit ({MAX_UPLOAD_ENV})",
            file=name,
        )
    if not is_archive(name, data):
        return
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
        raise InputError(f"not a readable zip archive: {exc}", file=name) from exc
    for info in infos:
        if info.file_size > limit:
            raise InputError(
                f"member {info.filename!r} is {_mb(info.file_size)} uncompressed, over the "
                f"{limit_mb:g} MiB limit per file ({MAX_UPLOAD_ENV})",
                file=name,
            )
    total = sum(info.file_size for info in infos)
    if total > ZIP_TOTAL_FACTOR * limit:
        raise InputError(
            f"the members add up to {_mb(total)} uncompressed, over the "
            f"{ZIP_TOTAL_FACTOR * limit_mb:g} MiB limit for one zip "
            f"({ZIP_TOTAL_FACTOR} x {MAX_UPLOAD_ENV}); nothing was extracted",
            file=name,
        )


def within_limits(files: Sequence[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The (name, bytes) pairs within the upload limits; each refused file gets an st.error
    in place naming it and the limit."""
    try:
        limit_mb = max_upload_mb()
    except CapplanError as exc:
        st.error(plain(str(exc)))
        return []
    kept: list[tuple[str, bytes]] = []
    for name, data in files:
        try:
            check_upload(name, data, limit_mb)
        except CapplanError as exc:
            st.error(plain(str(exc)))
            continue
        kept.append((name, data))
    return kept


def upload_rows(outcomes: Sequence[FileOutcome]) -> list[dict[str, object]]:
    """The Runs page's status table: one row per stored run or refused file, then one per
    folder for the files left out (warm-up phases, other exports of a kept run, side files)."""
    rows: list[dict[str, object]] = [
        {
            "file": outcome.file,
            "detected": outcome.detected or (NOT_RECOGNISED if outcome.unrecognised else NOT_READ),
            "status": str(outcome.status),
            "run_id": outcome.run_id,
            "levels": outcome.levels,
            "message": outcome.message.replace(NAME_THE_FORMAT, CHOOSE_THE_FORMAT),
        }
        for outcome in outcomes
        if outcome.status is not IngestStatus.SKIPPED
    ]
    skipped = [(o.file, o.message) for o in outcomes if o.status is IngestStatus.SKIPPED]
    rows += [
        {
            "file": f"{left.folder}/",
            "detected": NOT_READ,
            "status": str(IngestStatus.SKIPPED),
            "run_id": None,
            "levels": 0,
            "message": f"{left.total} file{'s' if left.total != 1 else ''} left out: {left.kinds}",
        }
        for left in skipped_summary(skipped)
    ]
    return rows
