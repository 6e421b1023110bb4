"""Shared pieces of the importers: user overrides, typed field reads that fail with InputError,
deployment resolution (file facts + overrides, conflicts noted) and metric collection."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from errors import InputError
from measurements.run_file import (
    Deployment,
    LoadKind,
    Metric,
    Origin,
    input_error_from_validation,
)

# Spellings other tools use for the engines capplan compares; anything else is kept lowercased.
ENGINE_ALIASES = {
    "trt": "tensorrt-llm",
    "trtllm": "tensorrt-llm",
    "trt-llm": "tensorrt-llm",
    "tensorrt_llm": "tensorrt-llm",
    "tensorrtllm": "tensorrt-llm",
}
# The largest count a store column holds (a signed 64-bit integer).
MAX_COUNT = 2**63 - 1
OVERRIDE_FIELDS = ("engine", "engine_version", "model", "precision", "gpu", "gpu_count", "tp", "pp")


def normalise_engine(engine: str) -> str:
    """Lowercase an engine name and map known aliases (trt, trtllm) to capplan's names."""
    key = engine.strip().lower()
    return ENGINE_ALIASES.get(key, key)


class DeploymentOverrides(BaseModel):
    """Deployment facts the user gives (CLI flags, upload form); each replaces the file's value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: str | None = Field(None, description="Serving engine: vllm, tensorrt-llm, sglang, ...")
    engine_version: str | None = Field(None, description="Engine version string")
    model: str | None = Field(None, description="Model name as served")
    precision: str | None = Field(None, description="Weight precision: fp8, bf16, ...")
    gpu: str | None = Field(None, description="GPU SKU, e.g. H100-SXM-80GB")
    gpu_count: Annotated[int, Field(ge=1)] | None = Field(None, description="GPUs per replica")
    tp: Annotated[int, Field(ge=1)] | None = Field(None, description="Tensor-parallel size")
    pp: Annotated[int, Field(ge=1)] | None = Field(None, description="Pipeline-parallel size")
    # Not deployment facts: the load of files that do not state it (CSV exports, per-request
    # records). Used only where a file is silent; a file's own load is never replaced.
    concurrency: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Closed-loop concurrency of files that do not state their load"
    )
    request_rate: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = Field(
        None, description="Open-loop request rate (req/s) of files that do not state their load"
    )

    @model_validator(mode="after")
    def _one_load(self) -> DeploymentOverrides:
        if self.concurrency is not None and self.request_rate is not None:
            raise ValueError("give either a concurrency or a request rate, not both")
        return self

    @field_validator("engine", "engine_version", "model", "precision", "gpu", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        # An empty form field means "not given", never "set to empty".
        if isinstance(value, str) and not value.strip():
            return None
        return value.strip() if isinstance(value, str) else value

    @field_validator("engine")
    @classmethod
    def _engine_name(cls, value: str | None) -> str | None:
        return None if value is None else normalise_engine(value)


NO_OVERRIDES = DeploymentOverrides()


@dataclass(frozen=True, slots=True)
class UserLoad:
    """The load a user stated for a file that does not state its own."""

    kind: LoadKind
    value: float
    note: str


def user_load(overrides: DeploymentOverrides) -> UserLoad | None:
    """The concurrency or request rate the user gave (--concurrency / --request-rate), if any."""
    if overrides.concurrency is not None:
        value = float(overrides.concurrency)
        return UserLoad(
            LoadKind.CONCURRENCY, value, f"load stated by the user: concurrency {value:g}"
        )
    if overrides.request_rate is not None:
        rate = overrides.request_rate
        return UserLoad(LoadKind.RATE, rate, f"load stated by the user: {rate:g} req/s")
    return None


def content_key(data: bytes, part: str | None = None) -> str:
    """The deduplication key of imported bytes (sha256 hex, 64 characters); one of several runs
    in a file gets the sha256 of the file's digest and its part name."""
    digest = file_digest(data)
    return digest if part is None else hashlib.sha256(f"{digest}#{part}".encode()).hexdigest()


@lru_cache(maxsize=1)
def file_digest(data: bytes) -> str:
    """sha256 hex of one file's bytes, hashed once however many runs it holds (a file of 2,000
    runs was hashed 2,000 times); import_bytes clears it, so no file outlives its import."""
    return hashlib.sha256(data).hexdigest()


def resolve_deployment(
    file: str, stated: DeploymentOverrides, overrides: DeploymentOverrides, *, hint: str = ""
) -> tuple[Deployment, list[str]]:
    """Merge the file's facts with the user's overrides; return the deployment and the conflicts."""
    values: dict[str, object] = {}
    notes: list[str] = []
    for name in OVERRIDE_FIELDS:
        said, user = getattr(stated, name), getattr(overrides, name)
        values[name] = user if user is not None else said
        if user is not None and said is not None and user != said:
            notes.append(f"{name}: file said {said}, user set {user}")
    for name, flag in (("engine", "--engine"), ("model", "--model")):
        if values[name] is None:
            raise InputError(
                f"the file does not say which {name} was served{hint}; pass {flag} "
                f"(or fill it in on the upload form)",
                file=file,
                field=name,
            )
    try:
        return Deployment.model_validate(values), notes
    except ValidationError as exc:
        raise input_error_from_validation(exc, file) from exc


class Reader:
    """Typed reads from one decoded JSON object; a bad value raises InputError naming the field."""

    def __init__(self, file: str, obj: Mapping[str, object], where: str = "") -> None:
        self.file = file
        self.obj = obj
        self.where = where

    def field(self, key: str) -> str:
        """The field name as messages show it (prefixed with the result number when several)."""
        return f"{self.where}{key}"

    def fail(self, key: str, message: str, value: object = None) -> InputError:
        """An InputError about one field of this object."""
        return InputError(message, file=self.file, field=self.field(key), value=value)

    def number(self, key: str, *, required: bool = False, positive: bool = False) -> float | None:
        """A finite, non-negative number (or None when absent/null and not required)."""
        value = self.obj.get(key)
        if value is None:
            if required:
                raise self.fail(key, "is missing: expected a number")
            return None
        return checked_number(self, key, value, positive=positive)

    def count(self, key: str, *, required: bool = False) -> int | None:
        """A non-negative whole number (or None when absent/null and not required)."""
        number = self.number(key, required=required)
        if number is None:
            return None
        if not number.is_integer():
            raise self.fail(key, "expected a whole number", self.obj.get(key))
        if number > MAX_COUNT:
            raise self.fail(key, f"is too large (at most {MAX_COUNT})", self.obj.get(key))
        return int(number)

    def text(self, key: str) -> str | None:
        """A string value, or None when absent or null."""
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(key, "expected a string", value)
        return value


def checked_number(
    reader: Reader, key: str, value: object, *, positive: bool = False, signed: bool = False
) -> float:
    """Validate one JSON value as a finite number (>= 0 unless signed, > 0 when positive)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise reader.fail(key, "expected a number", value)
    try:
        number = float(value)
    except OverflowError as exc:
        raise reader.fail(key, "number is too large", value) from exc
    if not math.isfinite(number):
        raise reader.fail(key, "must be a finite number", value)
    if number < 0 and not signed:
        raise reader.fail(key, "must not be negative", value)
    if positive and number == 0:
        raise reader.fail(key, "must be greater than 0", value)
    return number


class MetricSet:
    """Metrics of one level by (name, origin); a second value for a key is noted, not kept."""

    def __init__(self) -> None:
        self._metrics: dict[tuple[str, Origin], Metric] = {}
        self.notes: list[str] = []

    def add(
        self,
        name: str,
        value: float,
        *,
        origin: Origin = Origin.REPORTED,
        source: tuple[str, float] | None = None,
    ) -> None:
        """Add one metric; `source` is the (key, value) exactly as the file wrote it."""
        kept = self._metrics.get((name, origin))
        if kept is not None:
            self.notes.append(
                f"{name} given twice: kept {kept.source_key or name}={kept.value:g}, "
                f"ignored {source[0] if source else name}={value:g}"
            )
            return
        key, raw = source if source else (None, None)
        self._metrics[(name, origin)] = Metric(
            name=name, value=value, origin=origin, source_key=key, source_value=raw
        )

    def metrics(self) -> tuple[Metric, ...]:
        """The metrics in the order they were added."""
        return tuple(self._metrics.values())


def join_notes(notes: list[str], sep: str = "; ") -> str | None:
    """Notes joined into one string, or None when there are none."""
    kept = [note for note in notes if note]
    return sep.join(kept) if kept else None
