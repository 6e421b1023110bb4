"""vLLM nightly/performance benchmark table (`benchmark_results.json`): a list of display-name rows.

Each row is one load level, named `<prefix>_qps_<rate>` or `<prefix>_qps_inf`; rows sharing a prefix
form one run. Its "ITL" is vLLM's per-chunk gap (canonical `icl`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pydantic import ValidationError

from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    content_key,
    join_notes,
    resolve_deployment,
)
from measurements.run_file import (
    Environment,
    Level,
    LoadKind,
    Provenance,
    RunFile,
    Source,
    input_error_from_validation,
)

FORMAT_ID = "vllm-nightly-table"
DESCRIPTION = (
    'vLLM nightly benchmark table (benchmark_results.json): a JSON list of rows with "Test name" '
    '(ending in _qps_<rate> or _qps_inf), "# of req." and "Output Tput (tok/s)"'
)
CLIENT = "vLLM nightly benchmark table"

_TEST_NAME = re.compile(r"(?P<prefix>.+?)_qps_(?P<qps>inf|\d+(?:\.\d+)?)")
_STAT_COLUMN = re.compile(r"(Mean|Median|Std|P\d+(?:\.\d+)?) (TTFT|TPOT|ITL|E2EL) \(ms\)")
_STATS = {"Mean": "mean", "Median": "p50", "Std": "std"} | {
    f"P{p}": f"p{p}" for p in (50, 90, 95, 99)
}
_METRICS = {"TTFT": "ttft", "TPOT": "tpot", "ITL": "icl", "E2EL": "e2e"}
_RATES = {
    "Tput (req/s)": "request_s",
    "Output Tput (tok/s)": "output_tok_s",
    "Total Tput (tok/s)": "total_tok_s",
}
_IDENTITY = ("Test name", "GPU", "# of req.")


def _rows(doc: object) -> list[Mapping[str, object]] | None:
    if not isinstance(doc, list) or not doc:
        return None
    if all(isinstance(r, dict) and "Test name" in r and "Output Tput (tok/s)" in r for r in doc):
        return list(doc)
    return None


def sniff(name: str, doc: object) -> str | None:
    """Describe a nightly table, else None."""
    rows = _rows(doc)
    return None if rows is None else f"vLLM nightly benchmark table ({len(rows)} rows)"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """One run per test-name prefix, one level per row."""
    rows = _rows(doc) or []
    groups: dict[str, list[tuple[Reader, str]]] = {}
    for i, row in enumerate(rows):
        reader = Reader(name, row, f"row {i + 1}: ")
        test_name = reader.text("Test name") or ""
        match = _TEST_NAME.fullmatch(test_name)
        if match is None:
            expected = "expected a name ending in _qps_<rate> or _qps_inf"
            raise reader.fail("Test name", expected, test_name)
        groups.setdefault(match["prefix"], []).append((reader, match["qps"]))
    several = len(groups) > 1
    return [
        _run(
            name, data, prefix, members, overrides=overrides, provenance=provenance, several=several
        )
        for prefix, members in groups.items()
    ]


def _run(
    name: str,
    data: bytes,
    prefix: str,
    members: Sequence[tuple[Reader, str]],
    *,
    overrides: DeploymentOverrides,
    provenance: Provenance,
    several: bool,
) -> RunFile:
    stated = DeploymentOverrides(tp=_token(prefix, "tp"), pp=_token(prefix, "pp"))
    hint = " (a nightly table names neither)"
    deployment, notes = resolve_deployment(name, stated, overrides, hint=hint)
    gpus = sorted({reader.text("GPU") or "" for reader, _ in members} - {""})
    if gpus:
        notes.append("GPU column: " + ", ".join(gpus))
    return RunFile(
        source=Source.VLLM_BENCH,
        provenance=provenance,
        deployment=deployment,
        environment=Environment(client=CLIENT),
        levels=tuple(_level(reader, qps) for reader, qps in members),
        label=prefix,
        notes=join_notes(notes, "\n"),
        origin_file=name,
        source_sha256=content_key(data, prefix if several else None),
    )


def _token(prefix: str, key: str) -> int | None:
    """tp8 / pp1 in vLLM's test names state the parallelism."""
    match = re.search(rf"(?:^|_){key}(\d{{1,4}})(?:_|$)", prefix)
    return int(match[1]) if match and int(match[1]) >= 1 else None


def _level(reader: Reader, qps: str) -> Level:
    sent = reader.count("# of req.")
    notes: list[str] = []
    if qps == "inf":
        if not sent:
            raise reader.fail("# of req.", "a qps_inf row needs the request count", sent)
        kind, value = LoadKind.CONCURRENCY, float(sent)
        notes.append(
            f"qps inf: all {sent} requests were sent at once (a burst, recorded as concurrency "
            "= # of req. and kept out of curve fits)"
        )
    else:
        kind, value = LoadKind.RATE, float(qps)
        if value == 0:
            raise reader.fail("Test name", "a request rate must be greater than 0", qps)
    metrics = MetricSet()
    notes += _metrics(reader, metrics)
    try:
        return Level(
            load_kind=kind,
            load_value=value,
            burst=qps == "inf",
            requests_sent=sent,
            metrics=metrics.metrics(),
            notes=join_notes(notes + metrics.notes),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, reader.file) from exc


def _metrics(reader: Reader, metrics: MetricSet) -> list[str]:
    for column, canonical in _RATES.items():
        value = reader.number(column)
        if value is not None:
            metrics.add(canonical, value, source=(column, value))
    ignored: list[str] = []
    for column in reader.obj:
        match = _STAT_COLUMN.fullmatch(column)
        stat = _STATS.get(match[1]) if match else None
        if match is None or stat is None:
            if column not in _RATES and column not in _IDENTITY:
                ignored.append(column)
            continue
        value = reader.number(column)
        if value is not None:
            metrics.add(f"{stat}_{_METRICS[match[2]]}_ms", value, source=(column, value))
    return ["not mapped (no canonical name): " + ", ".join(ignored)] if ignored else []
