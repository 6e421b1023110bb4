"""Rows for the pages' tables and choices (pure: core objects in, plain rows out; no streamlit).

Also the price-editor check: edited rows become PriceEntry objects or an InputError naming the row,
the column and the value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import asdict

import pandas as pd

from errors import InputError
from hardware.gpus import GpuSpec
from hardware.prices import DEFAULT_PRICING_TYPE, MAX_GPUS_PER_INSTANCE, MAX_USD_PER_GPU_HOUR
from measurements.run_file import Origin, RunFile
from planner.fitting.fit import CurveFit
from planner.inputs.prices import PriceEntry, SkippedPriceRow
from planner.physics.roofline import PhysicsCheck
from reports.present import fit_to_dict
from workflows.curves import NOT_STATED
from workflows.names import canonical_gpu
from workflows.store import RunSummary

Row = dict[str, object]
PRICE_COLUMNS = (
    "provider",
    "sku",
    "gpu",
    "pricing_type",
    "usd_per_gpu_hour",
    "as_of",
    "source",
    "confidence",
    "is_default",
    "gpus_per_instance",
    "usd_per_instance_hour",
    "region",
    "notes",
)
# The datasheet columns the Prices page shows (the catalog's naming columns are left out).
SPEC_COLUMNS = (
    "gpu",
    "memory_gb",
    "mem_bw_tb_s",
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "nvlink_gb_s_per_direction",
    "tdp_w",
    "source",
    "as_of",
    "notes",
)
_REQUIRED_TEXT = ("provider", "gpu", "pricing_type")
_FIT_SERIES = ("throughput", "ttft_p50", "ttft_p99", "tpot")
CATALOG = "price catalog"


# ---------------------------------------------------------------- runs


def run_rows(summaries: Iterable[RunSummary]) -> list[Row]:
    """One row per stored run, units in the column names."""
    return [
        {
            "run": s.run_id,
            "source": str(s.source),
            "label": s.label,
            "engine": s.engine,
            "engine_version": s.engine_version,
            "model": s.model,
            "precision": s.precision,
            "gpu": s.gpu,
            "gpu_count": s.gpu_count,
            "tp": s.tp,
            "isl_tokens": s.isl,
            "osl_tokens": s.osl,
            "levels": s.levels,
            "samples": s.samples,
            "provenance": str(s.provenance),
            "origin_file": s.origin_file,
            "imported_at": s.imported_at.isoformat(timespec="seconds"),
        }
        for s in summaries
    ]


def filter_runs(summaries: Sequence[RunSummary], wanted: dict[str, list[str]]) -> list[RunSummary]:
    """Runs whose engine / gpu / model / provenance is among the chosen values (empty = any)."""

    def keep(summary: RunSummary) -> bool:
        values = {
            "engine": summary.engine,
            "gpu": summary.gpu or NOT_STATED,
            "model": summary.model,
            "provenance": str(summary.provenance),
        }
        return all(not chosen or values[name] in chosen for name, chosen in wanted.items())

    return [summary for summary in summaries if keep(summary)]


def filter_choices(summaries: Sequence[RunSummary]) -> dict[str, list[str]]:
    """The distinct values each run filter can take."""
    return {
        "engine": sorted({s.engine for s in summaries}),
        "gpu": sorted({s.gpu or NOT_STATED for s in summaries}),
        "model": sorted({s.model for s in summaries}),
        "provenance": sorted({str(s.provenance) for s in summaries}),
    }


def level_rows(run: RunFile, origin: Origin) -> list[Row]:
    """One row per level: load and counts, then the metrics of one origin under canonical names.

    Reported, recomputed and derived values go to separate tables so they are never mixed up.
    """
    rows: list[Row] = []
    for level in run.levels:
        metrics = {m.name: m.value for m in level.metrics if m.origin == origin}
        if origin != Origin.REPORTED and not metrics:
            continue
        row: Row = {"load_kind": str(level.load_kind), "load": level.load_value}
        if origin == Origin.REPORTED:
            row |= {
                "duration_s": level.duration_s,
                "requests_sent": level.requests_sent,
                "completed": level.completed,
                "failed": level.failed,
                "samples": len(level.samples),
            }
        rows.append(row | dict(sorted(metrics.items())))
    return rows


def deployment_rows(run: RunFile) -> list[Row]:
    """Deployment, workload and start-up facts as field/value rows (blank = not stated)."""
    facts: Row = {
        **run.deployment.model_dump(exclude={"engine_args"}),
        "isl_tokens": run.workload.isl,
        "osl_tokens": run.workload.osl,
        "dataset": run.workload.dataset,
        "cold_start_s": run.startup.cold_start_s,
        "engine_build_s": run.startup.engine_build_s,
        "vram_idle_gb": run.startup.vram_idle_gb,
        "source": str(run.source),
        "provenance": str(run.provenance),
        "label": run.label,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "origin_file": run.origin_file,
        "notes": run.notes,
    }
    return [
        {"field": key, "value": "" if value is None else str(value)} for key, value in facts.items()
    ]


# ---------------------------------------------------------------- curves


def fit_quality_rows(fits: Iterable[CurveFit]) -> list[Row]:
    """Family, points, held-out MAPE % and R² of every fitted series (reports.present shapes)."""
    rows: list[Row] = []
    for document in (fit_to_dict(fit) for fit in fits):
        for name in _FIT_SERIES:
            summary = document[name]
            if not isinstance(summary, dict):
                continue
            rows.append(
                {
                    "run": document["run_id"],
                    "curve": document["label"],
                    "series": name,
                    "statistic": document.get(f"{name}_series"),
                    "family": summary["family"],
                    "points": summary["n_points"],
                    "held_out_mape_pct": summary["loo_mape_pct"],
                    "r_squared": summary["r_squared"],
                }
            )
    return rows


# ---------------------------------------------------------------- prices


def physics_rows(checks: Iterable[tuple[CurveFit, PhysicsCheck]]) -> list[Row]:
    """One row per curve: its ceilings, its highest share of them, and whether a point is above."""
    rows: list[Row] = []
    for fit, check in checks:
        ceil = check.ceilings
        stream = [p.stream_pct_of_ceiling for p in check.points if p.stream_pct_of_ceiling]
        output = [p.output_pct_of_ceiling for p in check.points if p.output_pct_of_ceiling]
        rows.append(
            {
                "run": fit.curve.run_id,
                "curve": fit.curve.label_text(),
                "single-stream ceiling, tok/s": None
                if ceil is None
                else round(ceil.decode_tok_s_single_stream, 1),
                "max % of stream ceiling": round(max(stream), 1) if stream else None,
                "max % of throughput ceiling": round(max(output), 1) if output else None,
                "streams that fit (KV estimate)": check.max_streams,
                "above a ceiling": "YES" if check.above_ceiling else "no",
                "why no check": "; ".join(check.notes) if ceil is None else "",
            }
        )
    return rows


def records(frame: pd.DataFrame) -> list[Row]:
    """DataFrame rows as plain dicts, missing cells as None."""
    clean = frame.astype(object).where(frame.notna(), None)
    return [{str(key): value for key, value in row.items()} for row in clean.to_dict("records")]


def price_rows(entries: Iterable[PriceEntry]) -> list[Row]:
    """Catalog entries as editor rows, in PRICE_COLUMNS order."""
    return [{column: asdict(entry)[column] for column in PRICE_COLUMNS} for entry in entries]


def skipped_price_rows(skipped: Iterable[SkippedPriceRow]) -> list[Row]:
    """Rows of the shipped catalog that carry no usable price, with the reason."""
    return [asdict(row) for row in skipped]


def gpu_spec_rows(specs: Iterable[GpuSpec]) -> list[Row]:
    """GPU datasheet rows with units in the column names."""
    return [{column: getattr(spec, column) for column in SPEC_COLUMNS} for spec in specs]


def price_entries_from_rows(rows: Sequence[Row]) -> list[PriceEntry]:
    """Edited catalog rows -> PriceEntry; InputError naming the row (1-based), column and value."""
    entries = [_price_entry(_where(n, row), row) for n, row in enumerate(rows, start=1)]
    if not entries:
        raise InputError("the catalog is empty: keep at least one price", file=CATALOG)
    _check_defaults(entries)
    return entries


def _price_entry(where: str, row: Row) -> PriceEntry:
    def text(column: str) -> str:
        value = row.get(column)
        return "" if _blank(value) else str(value).strip()

    for column in _REQUIRED_TEXT:
        if not text(column):
            raise _row_error(where, column, "must not be blank", row.get(column))
    return PriceEntry(
        provider=text("provider"),
        sku=text("sku"),
        gpu=canonical_gpu(text("gpu")),
        gpus_per_instance=_count(where, row.get("gpus_per_instance")),
        pricing_type=text("pricing_type"),
        usd_per_gpu_hour=_price(where, "usd_per_gpu_hour", row.get("usd_per_gpu_hour")),
        usd_per_instance_hour=(
            None
            if _blank(row.get("usd_per_instance_hour"))
            else _price(
                where,
                "usd_per_instance_hour",
                row.get("usd_per_instance_hour"),
                MAX_USD_PER_GPU_HOUR * MAX_GPUS_PER_INSTANCE,
            )
        ),
        region=text("region"),
        as_of=text("as_of"),
        source=text("source"),
        confidence=text("confidence"),
        notes=text("notes"),
        is_default=not _blank(row.get("is_default")) and bool(row.get("is_default")),
    )


def _where(number: int, row: Row) -> str:
    """'row 3 (AWS p5.48xlarge)': the 1-based row and what it quotes, as the editor shows it."""
    quoted = " ".join(str(row[c]).strip() for c in ("provider", "sku") if not _blank(row.get(c)))
    return f"row {number} ({quoted})" if quoted else f"row {number}"


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _price(where: str, column: str, value: object, limit: float = MAX_USD_PER_GPU_HOUR) -> float:
    expected = "must be a positive, finite number of USD"
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise _row_error(where, column, expected, value)
    try:
        price = float(value)
    except ValueError as exc:
        raise _row_error(where, column, expected, value) from exc
    if not (math.isfinite(price) and 0 < price <= limit):
        raise _row_error(where, column, f"{expected}, at most {limit:g}", value)
    return price


def _count(where: str, value: object) -> int:
    if _blank(value):
        return 1
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        count = float(value)
        if 1 <= count <= MAX_GPUS_PER_INSTANCE and count.is_integer():
            return int(count)
    expected = f"must be a whole number from 1 to {MAX_GPUS_PER_INSTANCE}"
    raise _row_error(where, "gpus_per_instance", expected, value)


def _check_defaults(entries: list[PriceEntry]) -> None:
    numbered = list(enumerate(entries, start=1))
    for gpu in dict.fromkeys(entry.gpu for entry in entries):
        rows = [(n, e) for n, e in numbered if e.gpu == gpu]
        defaults = [(n, e) for n, e in rows if e.is_default]
        if len(defaults) > 1:
            n, entry = defaults[1]
            listed = ", ".join(str(number) for number, _ in defaults)
            message = f"{gpu} has {len(defaults)} default rows ({listed}); keep exactly one"
            raise _row_error(_entry_where(n, entry), "is_default", message, True)
        if defaults and defaults[0][1].is_lens:
            n, entry = defaults[0]
            message = f"an owning-cost lens ({entry.pricing_type}) is no price to rent {gpu} at"
            raise _row_error(_entry_where(n, entry), "is_default", message, True)
        # A GPU quoted only as reserved terms or lenses (B300 in 2026) plans with a typed price.
        if not defaults and any(e.pricing_type == DEFAULT_PRICING_TYPE for _, e in rows):
            n, entry = rows[0]
            message = f"no row for {gpu} is marked default; mark exactly one"
            raise _row_error(_entry_where(n, entry), "is_default", message, False)


def _entry_where(number: int, entry: PriceEntry) -> str:
    return _where(number, {"provider": entry.provider, "sku": entry.sku})


def _row_error(where: str, column: str, message: str, value: object) -> InputError:
    return InputError(f"{where}: {message}", file=CATALOG, field=column, value=value)
