"""Every row of a backup checked as the store would write it, before a restore touches anything:
each value against its column's type (a number column takes a finite number, a flag a boolean),
then the run tables through the RunFile models the store writes them from (a level's load_kind
and load_value, a metric's canonical name and non-negative value, a run's workload, ...), so a
restored store reads back whole. `why_row_refused` names the first column that would not."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import JSON, Boolean, Float, Integer, String, Table

from hardware.prices import MAX_GPUS_PER_INSTANCE, MAX_USD_PER_GPU_HOUR
from measurements.entry_names import clean_name, engine_name, gpu_name
from measurements.run_file import (
    Capabilities,
    Deployment,
    Environment,
    Level,
    Metric,
    Provenance,
    RequestSample,
    Source,
    Startup,
    Workload,
)

Row = Mapping[str, object]
# (column, why) of the first value refused, or None.
Refusal = tuple[str, str] | None
_COLUMN_FIELDS = frozenset({"isl", "osl"})  # Workload fields stored as runs columns
_LEVEL_FIELDS = tuple(name for name in Level.model_fields if name not in ("metrics", "samples"))


def why_row_refused(table: Table, row: Row) -> Refusal:
    """The first column of `row` the store would refuse, and why; None when it would take it."""
    for name, value in row.items():
        why = _why_type_refused(table.c[name].type, value)
        if why is not None:
            return name, why
    check = _MODEL_CHECKS.get(table.name)
    return check(row) if check is not None else None


def clean_names(table: Table, row: dict[str, object]) -> Refusal:
    """Put the row's GPU, model and engine names as the store writes them (entry_names:
    NFKC, no invisible characters); the first that only looks like a catalog GPU or a known
    engine is refused (column, why)."""
    for column, clean in _NAME_COLUMNS.get(table.name, {}).items():
        value = row.get(column)
        if not isinstance(value, str):
            continue
        try:
            row[column] = clean(value)
        except ValueError as exc:
            return column, f"is refused: {exc}"
    return None


def _why_type_refused(kind: object, value: object) -> str | None:
    if value is None or isinstance(kind, JSON):
        return None  # NULL where the column forbids it is the database's to refuse
    if isinstance(kind, Boolean):
        return None if isinstance(value, bool) else "is not true or false"
    if isinstance(kind, Integer | Float):  # BigInteger is an Integer
        return _why_number_refused(value, whole=isinstance(kind, Integer))
    if isinstance(kind, String):  # Text is a String
        return None if isinstance(value, str) else "is not text"
    return None


def _why_number_refused(value: object, *, whole: bool) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "is not a whole number" if whole else "is not a number"
    if whole and not isinstance(value, int):
        return "is not a whole number"
    if isinstance(value, int):
        return None if abs(value) < 2**63 else "is beyond a 64-bit integer"
    return None if math.isfinite(value) else "is not a finite number"


def _validated(model: type[BaseModel], data: Mapping[str, object], column: str | None) -> Refusal:
    """Validate `data` as `model`; a refusal names the column (else the field pydantic names)."""
    try:
        model.model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        top = str(first["loc"][0]) if first["loc"] else model.__name__
        # A field that is its own column (a run's isl) names it; else the JSON column holding it.
        where = column if column is not None and top not in _COLUMN_FIELDS else top
        detail = ".".join(str(part) for part in first["loc"])
        inside = f" ({detail})" if where != top and detail else ""
        return where, f"is refused by the {model.__name__} model{inside}: {first['msg']}"
    return None


def _fields(row: Row, names: tuple[str, ...]) -> dict[str, object]:
    return {name: row[name] for name in names if name in row}


def _check_deployment(row: Row) -> Refusal:
    return _validated(Deployment, _fields(row, tuple(Deployment.model_fields)), None)


def _enum(column: str, kind: Callable[[Any], object], value: object) -> Refusal:
    try:
        kind(value)
    except ValueError:
        return column, f"is not one of the store's values ({kind.__name__})"
    return None


def _check_run(row: Row) -> Refusal:
    checks: list[Callable[[], Refusal]] = [
        lambda: _enum("source", Source, row.get("source")),
        lambda: _enum("provenance", Provenance, row.get("provenance")),
        lambda: _validated(Startup, _fields(row, tuple(Startup.model_fields)), None),
        lambda: _validated(Environment, _mapping(row.get("environment")), "environment"),
        lambda: _validated(Capabilities, _mapping(row.get("capabilities")), "capabilities"),
        lambda: _validated(
            Workload,
            {**_mapping(row.get("workload_extra")), **_fields(row, ("isl", "osl"))},
            "workload_extra",
        ),
    ]
    for check in checks:
        refusal = check()
        if refusal is not None:
            return refusal
    return None


def _mapping(value: object) -> dict[str, object]:
    return {str(key): item for key, item in value.items()} if isinstance(value, dict) else {}


def _check_level(row: Row) -> Refusal:
    return _validated(Level, _fields(row, _LEVEL_FIELDS), None)


def _check_metric(row: Row) -> Refusal:
    return _validated(Metric, _fields(row, tuple(Metric.model_fields)), None)


def _check_sample(row: Row) -> Refusal:
    return _validated(RequestSample, _fields(row, tuple(RequestSample.model_fields)), None)


def _check_price(row: Row) -> Refusal:
    price = row.get("usd_per_gpu_hour")
    if isinstance(price, int | float) and not 0 < price <= MAX_USD_PER_GPU_HOUR:
        return "usd_per_gpu_hour", f"is not a price above 0 and at most {MAX_USD_PER_GPU_HOUR:g}"
    gpus = row.get("gpus_per_instance")
    if isinstance(gpus, int) and not 1 <= gpus <= MAX_GPUS_PER_INSTANCE:
        return "gpus_per_instance", f"is not 1 to {MAX_GPUS_PER_INSTANCE} GPUs"
    instance = row.get("usd_per_instance_hour")
    limit = MAX_USD_PER_GPU_HOUR * MAX_GPUS_PER_INSTANCE
    if isinstance(instance, int | float) and not 0 < instance <= limit:
        return "usd_per_instance_hour", f"is not a price above 0 and at most {limit:g}"
    return None


def _check_plan_record(row: Row) -> Refusal:
    for column in ("run_ids", "basis_run_ids"):
        ids = row.get(column)
        if ids is not None and not (
            isinstance(ids, list)
            and all(isinstance(i, int) and not isinstance(i, bool) for i in ids)
        ):
            return column, "is not a list of run ids"
    prices = row.get("prices_used")
    if prices is not None and not (
        isinstance(prices, list) and all(isinstance(p, dict) for p in prices)
    ):
        return "prices_used", "is not a list of price entries"
    return None


_NAME_COLUMNS: dict[str, dict[str, Callable[[str], str]]] = {
    "deployments": {"engine": engine_name, "model": clean_name, "gpu": gpu_name},
    "prices": {"gpu": gpu_name},
    "model_configs": {"name": clean_name},
}
_MODEL_CHECKS: dict[str, Callable[[Row], Refusal]] = {
    "deployments": _check_deployment,
    "runs": _check_run,
    "load_levels": _check_level,
    "level_metrics": _check_metric,
    "request_samples": _check_sample,
    "prices": _check_price,
    "plan_records": _check_plan_record,
}
