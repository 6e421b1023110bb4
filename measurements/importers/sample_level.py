"""One load level built from per-request samples alone: capplan's recomputed aggregates, the
load the file states (or the user's, or the achieved rate marked not stated) and the workload.
Shared by the per-request importers (trtllm-bench --request_json, GenAI-Perf raw, AIPerf jsonl,
inference-perf per-request records)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    checked_number,
    content_key,
    join_notes,
    user_load,
)
from measurements.importers.samples import add_distribution, recompute
from measurements.run_file import (
    Deployment,
    Environment,
    Level,
    LoadKind,
    Provenance,
    RequestSample,
    RunFile,
    Source,
    Workload,
    input_error_from_validation,
)


def timestamp_ns(reader: Reader, key: str, value: object) -> float:
    """A checked nanosecond timestamp; whole numbers stay Python ints, so that differences of
    epoch-ns values (about 1.7e18, beyond float precision) are exact."""
    number = checked_number(reader, key, value)
    return value if isinstance(value, int) else number


@dataclass(frozen=True, slots=True)
class SampleLoad:
    """The load of a level of samples and whether anyone stated it."""

    kind: LoadKind
    value: float
    stated: bool
    note: str | None = None


def unstated_load(
    overrides: DeploymentOverrides, sent: int, duration_s: float, why: str
) -> SampleLoad:
    """The user's --concurrency/--request-rate, else the achieved rate marked not stated."""
    given = user_load(overrides)
    if given is not None:
        return SampleLoad(given.kind, given.value, True, given.note)
    return SampleLoad(
        LoadKind.RATE,
        sent / duration_s,
        False,
        f"{why}; recorded at the achieved rate and marked load not stated, kept out of curve "
        f"fits (pass --concurrency or --request-rate to state it)",
    )


def sample_level(
    name: str,
    samples: Sequence[RequestSample],
    duration_s: float,
    load: SampleLoad,
    notes: Sequence[str] = (),
) -> Level:
    """The samples as one level with RECOMPUTED metrics; counts come from the samples."""
    metrics = MetricSet()
    recomputed = recompute(metrics, samples, duration_s)
    per_token = [
        s.e2e_ms / s.output_tokens for s in samples if s.ok and s.e2e_ms and s.output_tokens
    ]
    add_distribution(metrics, "e2e_per_token", per_token)
    ok = sum(s.ok for s in samples)
    all_notes = [*notes, load.note or "", *recomputed, *metrics.notes]
    try:
        return Level(
            load_kind=load.kind,
            load_value=load.value,
            load_stated=load.stated,
            duration_s=duration_s,
            requests_sent=len(samples),
            completed=ok,
            failed=len(samples) - ok,
            metrics=metrics.metrics(),
            samples=tuple(samples),
            notes=join_notes(all_notes),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, name) from exc


def sample_run(
    name: str,
    data: bytes,
    *,
    source: Source,
    client: str,
    provenance: Provenance,
    deployment: Deployment,
    levels: Sequence[Level],
    notes: Sequence[str] = (),
) -> RunFile:
    """One RunFile of per-request levels; the workload is the mean of every level's samples."""
    return RunFile(
        source=source,
        provenance=provenance,
        deployment=deployment,
        workload=sample_workload([s for level in levels for s in level.samples]),
        environment=Environment(client=client),
        levels=tuple(levels),
        notes=join_notes(list(notes), "\n"),
        origin_file=name,
        source_sha256=content_key(data),
    )


def sample_workload(samples: Sequence[RequestSample]) -> Workload:
    """Mean input and output lengths of the successful samples (None when unknown)."""
    ok = [s for s in samples if s.ok]
    inputs = [s.input_tokens for s in ok if s.input_tokens is not None]
    outputs = [s.output_tokens for s in ok if s.output_tokens is not None]
    return Workload(isl=_mean_or_none(inputs), osl=_mean_or_none(outputs))


def _mean_or_none(values: Sequence[int]) -> int | None:
    return round(sum(values) / len(values)) or None if values else None
