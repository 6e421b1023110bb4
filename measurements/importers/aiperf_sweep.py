"""AIPerf multi-run aggregates -> RunFiles.

Two files, both written by `aiperf profile` with a concurrency list or --num-profile-runs:
- `sweep_aggregate/profile_export_aiperf_sweep.json`: `aggregation_type: "sweep"` and
  `per_combination_metrics[{parameters: {concurrency}, metrics: {key: {mean, std, ...}}}]`,
  one load level per combination;
- `aggregate/concurrency_<N>/profile_export_aiperf_aggregate.json`: `metadata` with
  `aggregation_type: "confidence"` (and `variation_values` in a sweep) and `metrics`, one level.

A metric key is `<tag>_<stat>` (`time_to_first_token_p99`) whose `mean` is the mean of that
statistic over the profile runs; a single-run sweep writes the bare tag, its `mean` being the
run's average. Only `mean` becomes a metric: the spread across runs (std, min, max, cv) and the
confidence interval (ci_low, ci_high) have no canonical name, so the interval goes in the notes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from errors import InputError
from measurements.importers.aiperf import LATENCIES, RATES, add_metrics, avg, sequence_workload
from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    checked_number,
    content_key,
    join_notes,
    resolve_deployment,
    user_load,
)
from measurements.importers.perf_csv import SourcedReader
from measurements.run_file import (
    Environment,
    Level,
    LoadKind,
    Provenance,
    RunFile,
    Source,
    input_error_from_validation,
)

FORMAT_ID = "aiperf-sweep"
DESCRIPTION = (
    "AIPerf multi-run aggregate: profile_export_aiperf_sweep.json (aggregation_type sweep, "
    "per_combination_metrics) or profile_export_aiperf_aggregate.json (metadata.aggregation_type "
    "confidence, metrics)"
)
_FLAT_KEY = re.compile(r"(?P<tag>.+)_(?P<stat>avg|min|max|sum|std|p\d{1,2})")
_MAPPED = frozenset({*LATENCIES, *RATES, "input_sequence_length", "output_sequence_length"})
_LOADS = {"concurrency": LoadKind.CONCURRENCY, "request_rate": LoadKind.RATE}


@dataclass(frozen=True, slots=True)
class _Combination:
    """One set of swept parameter values and its metrics, with where it sits in the file."""

    where: str
    parameters: Mapping[str, object]
    metrics: Reader


def _is_sweep(doc: object) -> bool:
    return (
        isinstance(doc, dict)
        and doc.get("aggregation_type") == "sweep"
        and isinstance(doc.get("per_combination_metrics"), list)
    )


def _is_confidence(doc: object) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("metrics"), dict):
        return False
    metadata = doc.get("metadata")
    return isinstance(metadata, dict) and metadata.get("aggregation_type") == "confidence"


def sniff(name: str, doc: object) -> str | None:
    """Describe the aggregate when `doc` is an AIPerf sweep or confidence aggregate, else None."""
    if _is_sweep(doc) and isinstance(doc, dict):
        count = len(doc["per_combination_metrics"])
        return f"AIPerf sweep aggregate profile_export_aiperf_sweep.json ({count} combinations)"
    if _is_confidence(doc):
        return "AIPerf confidence aggregate profile_export_aiperf_aggregate.json (one load level)"
    return None


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """A sweep as one run per set of non-load parameters; a confidence aggregate as one run."""
    if not isinstance(doc, dict) or sniff(name, doc) is None:
        raise InputError(f"not an {DESCRIPTION}", file=name)
    top = Reader(name, doc)
    if _is_sweep(doc):
        combinations = _sweep_combinations(top)
        runs_note = _runs_note(top, " (all combinations together)")
    else:
        combinations = [_confidence_combination(top)]
        runs_note = _runs_note(_section(top, "metadata"), "")
    groups: dict[tuple[tuple[str, str], ...], list[_Combination]] = {}
    for combination in combinations:
        groups.setdefault(_other_parameters(combination), []).append(combination)
    several = len(groups) > 1
    return [
        _run(
            top,
            members,
            data,
            overrides,
            provenance,
            runs_note=runs_note,
            part=key if several else (),
        )
        for key, members in groups.items()
    ]


def _section(reader: Reader, key: str) -> Reader:
    value = reader.obj.get(key)
    if not isinstance(value, dict):
        raise reader.fail(key, "expected an object", value)
    return Reader(reader.file, value, reader.field(key) + ".")


def _sweep_combinations(top: Reader) -> list[_Combination]:
    entries = top.obj["per_combination_metrics"]
    combinations = []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        where = f"per_combination_metrics[{i}]"
        if not isinstance(entry, dict):
            raise top.fail(where, "expected an object with parameters and metrics", entry)
        combination = Reader(top.file, entry, f"{where}.")
        parameters = _section(combination, "parameters").obj
        combinations.append(_Combination(where, parameters, _section(combination, "metrics")))
    if not combinations:
        raise top.fail("per_combination_metrics", "is empty: the sweep has no results")
    return combinations


def _confidence_combination(top: Reader) -> _Combination:
    metadata = _section(top, "metadata")
    values = metadata.obj.get("variation_values")
    if values is not None and not isinstance(values, dict):
        raise metadata.fail("variation_values", "expected an object", values)
    return _Combination("metadata", values or {}, _section(top, "metrics"))


def _runs_note(reader: Reader, scope: str) -> str:
    runs = reader.count("num_profile_runs")
    ok = reader.count("num_successful_runs")
    if runs is None:
        return f"means over AIPerf profile runs{scope} (num_profile_runs not stated)"
    shown = "" if ok is None else f", num_successful_runs {ok}"
    return f"means over AIPerf profile runs{scope}: num_profile_runs {runs}{shown}"


def _load_key(parameters: Mapping[str, object]) -> str | None:
    """The swept load parameter: `concurrency` or `request_rate`, maybe as a dotted config path."""
    keys = [key for key in parameters if key.rsplit(".", 1)[-1] in _LOADS]
    return keys[0] if len(keys) == 1 else None


def _other_parameters(combination: _Combination) -> tuple[tuple[str, str], ...]:
    load = _load_key(combination.parameters)
    return tuple(
        (key, str(value)) for key, value in sorted(combination.parameters.items()) if key != load
    )


def _run(
    top: Reader,
    combinations: Sequence[_Combination],
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
    *,
    runs_note: str,
    part: tuple[tuple[str, str], ...],
) -> RunFile:
    levels = []
    seen: dict[tuple[LoadKind, float], str] = {}
    for combination in combinations:
        objects, notes = _objects(combination.metrics)
        level = _level(top.file, combination, objects, overrides, [runs_note, *notes])
        earlier = seen.setdefault((level.load_kind, level.load_value), combination.where)
        if earlier != combination.where:
            message = f"the same load level as {earlier}: each load is swept once"
            raise InputError(message, file=top.file, field=f"{combination.where}.parameters")
        levels.append((level, objects))
    hint = " (AIPerf aggregates do not record the served model or engine)"
    deployment, conflicts = resolve_deployment(
        top.file, DeploymentOverrides(), overrides, hint=hint
    )
    label = ", ".join(f"{key}={value}" for key, value in part) or None
    return RunFile(
        source=Source.AIPERF,
        provenance=provenance,
        deployment=deployment,
        workload=sequence_workload(levels[0][1]),
        environment=Environment(client="aiperf", client_version=top.text("aiperf_version")),
        levels=tuple(level for level, _ in levels),
        label=label,
        notes=join_notes(conflicts, "\n"),
        origin_file=top.file,
        source_sha256=content_key(data, label),
    )


def _objects(metrics: Reader) -> tuple[dict[str, Reader], list[str]]:
    """The mapped keys' means as `{unit, avg, pNN}` objects by tag; notes on the rest."""
    built: dict[str, dict[str, object]] = {}
    paths: dict[str, dict[str, str]] = {}
    intervals: list[str] = []
    unmapped: list[str] = []
    for key in metrics.obj:
        tag, stat = _tag_and_stat(key)
        if tag not in _MAPPED:
            unmapped.append(key)
            continue
        entry = _section(metrics, key)
        mean = entry.number("mean")
        if mean is None:
            continue
        obj = built.setdefault(tag, {"unit": _unit(entry, built.get(tag))})
        obj[stat] = mean
        paths.setdefault(tag, {"unit": f"{key}.unit"})[stat] = f"{key}.mean"
        intervals.extend(_interval(entry, key, mean))
    objects: dict[str, Reader] = {
        tag: SourcedReader(metrics.file, obj, metrics.where, paths[tag])
        for tag, obj in built.items()
    }
    notes = []
    if intervals:
        notes.append("confidence intervals across runs (ci_low..ci_high): " + ", ".join(intervals))
    if unmapped:
        notes.append("not mapped (no canonical name): " + ", ".join(unmapped))
    return objects, notes


def _tag_and_stat(key: str) -> tuple[str, str]:
    match = _FLAT_KEY.fullmatch(key)
    if match and match["tag"] in _MAPPED:
        return match["tag"], match["stat"]
    return key, "avg"  # a single-run sweep keys its cells by tag; mean is the run's average


def _unit(entry: Reader, earlier: Mapping[str, object] | None) -> str:
    unit = entry.text("unit")
    if unit is None:
        raise entry.fail("unit", "is missing: expected a unit such as ms")
    if earlier is not None and earlier["unit"] != unit:
        raise entry.fail(
            "unit", f"differs from the same metric's other statistics ({earlier['unit']})", unit
        )
    return unit


def _interval(entry: Reader, key: str, mean: float) -> list[str]:
    low, high = entry.obj.get("ci_low"), entry.obj.get("ci_high")
    if low is None or high is None:
        return []
    low_value = checked_number(entry, "ci_low", low, signed=True)
    high_value = checked_number(entry, "ci_high", high, signed=True)
    if low_value == high_value == mean:  # one run: AIPerf collapses the interval to the mean
        return []
    return [f"{key} {low_value:g}..{high_value:g}"]


def _level(
    file: str,
    combination: _Combination,
    objects: Mapping[str, Reader],
    overrides: DeploymentOverrides,
    notes: list[str],
) -> Level:
    metrics = MetricSet()
    notes = notes + add_metrics(objects, metrics)
    kind, value, stated, load_note = _load(file, combination, objects, overrides)
    try:
        return Level(
            load_kind=kind,
            load_value=value,
            load_stated=stated,
            metrics=metrics.metrics(),
            notes=join_notes([load_note, *notes, *metrics.notes]),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, file) from exc


def _load(
    file: str,
    combination: _Combination,
    objects: Mapping[str, Reader],
    overrides: DeploymentOverrides,
) -> tuple[LoadKind, float, bool, str]:
    """The swept load; else the user's; else the achieved request rate, marked not stated."""
    key = _load_key(combination.parameters)
    if key is not None:
        reader = Reader(file, combination.parameters, f"{combination.where}.parameters.")
        kind = _LOADS[key.rsplit(".", 1)[-1]]
        value = reader.count(key) if kind is LoadKind.CONCURRENCY else reader.number(key)
        if not value:
            raise reader.fail(key, "must be a number greater than 0", combination.parameters[key])
        return kind, float(value), True, ""
    given = user_load(overrides)
    if given is not None:
        return given.kind, given.value, True, given.note
    rate = avg(objects, "request_throughput")
    if not rate:
        raise InputError(
            "no concurrency or request_rate parameter and no request throughput to stand in for "
            "it; pass --concurrency or --request-rate (or fill in the upload form's load field)",
            file=file,
            field=f"{combination.where}.parameters",
        )
    note = (
        f"the aggregate does not state its load: recorded at the achieved {rate:g} req/s, marked "
        "load not stated and kept out of curve fits; --concurrency / --request-rate sets it"
    )
    return LoadKind.RATE, rate, False, note
