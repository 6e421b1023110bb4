"""RunFile v1: the one interchange format every source (probe, importers, demo data) produces.

A RunFile is one deployment measured under one workload at one or more load levels. Every
number carries its origin: what the tool reported, what capplan recomputed from per-request
samples, or what was derived from other numbers. Nothing unknown is ever filled with 0.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from errors import InputError, SchemaVersionError
from measurements.atomic_write import write_atomic
from measurements.bounded import load_json
from measurements.entry_names import engine_name, gpu_name, model_name

# The enums live in measurements.kinds (no pydantic) and are re-exported here, where callers
# have always imported them (the `as` form is what mypy --strict reads as a re-export).
from measurements.kinds import LoadKind as LoadKind  # noqa: PLC0414
from measurements.kinds import Origin as Origin  # noqa: PLC0414
from measurements.kinds import Provenance as Provenance  # noqa: PLC0414
from measurements.kinds import Source as Source  # noqa: PLC0414
from measurements.numbers import Count, Number
from measurements.plausible import (
    level_problems,
    metric_problem,
    repeated_levels,
    sample_problems,
)

SCHEMA_VERSION = 1
MAX_RUN_FILE_BYTES = 200 * 1024 * 1024


# Canonical metric names: `<stat>_<metric>_<unit>`; a bare `<metric>_<unit>` means the source
# did not say which statistic it is (e.g. the silicon sample's "unspecified" TTFT).
# ttft: first token chunk - send; tpot: (e2e - ttft) / (output_tokens - 1);
# itl: gap per token (a chunk carrying k tokens spreads its gap over k);
# icl: gap between streamed chunks (what vLLM calls "itl"); e2e: last token - send;
# e2e_per_token: e2e / output_tokens (what llmperf calls "inter_token_latency").
LATENCY_METRICS = ("ttft", "tpot", "itl", "icl", "e2e", "e2e_per_token")
LATENCY_STATS = ("mean", "p50", "p90", "p95", "p99", "std", "min", "max")
RATE_METRICS = ("output_tok_s", "total_tok_s", "input_tok_s", "request_s", "stream_tok_s")
# Board power per GPU over the level, watts, averaged over the deployment's GPUs (NVML's
# nvmlDeviceGetPowerUsage, DCGM's DCGM_FI_DEV_POWER_USAGE): what owning and the power limit read
# where a run measured it (planner.analysis.measured_power).
POWER_METRIC = "mean_gpu_power_w"


def latency_metric_names() -> tuple[str, ...]:
    """Every canonical latency metric name, bare (stat not stated) and with a statistic."""
    bare = tuple(f"{m}_ms" for m in LATENCY_METRICS)
    with_stat = tuple(f"{s}_{m}_ms" for m in LATENCY_METRICS for s in LATENCY_STATS)
    return bare + with_stat


CANONICAL_METRICS: frozenset[str] = frozenset(
    RATE_METRICS
    + latency_metric_names()
    + ("max_output_tok_s", "goodput_request_s", "max_concurrent_requests", POWER_METRIC)
)


class _Model(BaseModel):
    # allow_inf_nan=False: NaN/inf anywhere in a run is bad input, never a stored number.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _finite(value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError(f"must be a finite number, got {value!r}")
    return value


class Deployment(_Model):
    """What was served, on what hardware; facts a file lacks stay None (never guessed)."""

    engine: str = Field(description="Serving engine: vllm, tensorrt-llm, sglang, other")
    engine_version: str | None = Field(None, description="Engine version string as reported")
    model: str = Field(description="Model name or path as served")
    precision: str | None = Field(None, description="Weight precision: fp8, bf16, fp16, int4, ...")
    gpu: str | None = Field(None, description="GPU SKU, e.g. H100-SXM-80GB, H200-SXM-141GB")
    gpu_count: Count | None = Field(None, ge=1, description="GPUs used by one replica")
    tp: Count | None = Field(None, ge=1, description="Tensor-parallel size")
    pp: Count | None = Field(None, ge=1, description="Pipeline-parallel size")
    launch_command: str | None = Field(None, description="Command line that started the server")
    engine_args: dict[str, str] = Field(default_factory=dict, description="Engine arguments")

    @field_validator("engine")
    @classmethod
    def _engine_lower(cls, value: str) -> str:
        value = engine_name(value)  # NFKC, no invisible characters; no look-alike of a known one
        if not value:
            raise ValueError("engine must not be empty")
        return value

    @field_validator("model")
    @classmethod
    def _model_not_empty(cls, value: str) -> str:
        value = model_name(value)  # a path served from is named by its model id (issue 32)
        if not value:
            raise ValueError("model must not be empty")
        return value

    @field_validator("gpu")
    @classmethod
    def _gpu_named(cls, value: str | None) -> str | None:
        return None if value is None else gpu_name(value)


class Workload(_Model):
    """The requests sent: token lengths (means when they vary), dataset and EOS handling."""

    isl: Count | None = Field(None, ge=1, description="Input (prompt) length in tokens, mean")
    osl: Count | None = Field(None, ge=1, description="Output length in tokens, mean")
    isl_distribution: str | None = Field(
        None, description="fixed | normal(...) | lognormal(...) ..."
    )
    osl_distribution: str | None = Field(None, description="fixed | normal(...) | ...")
    dataset: str | None = Field(None, description="Dataset name: random, sharegpt, ...")
    ignore_eos: bool | None = Field(None, description="Whether EOS was ignored (fixed OSL)")


class Environment(_Model):
    """Where the measurement ran and with which client."""

    host: str | None = None
    gpu_name: str | None = Field(None, description="GPU name as nvidia-smi reports it")
    gpu_driver: str | None = None
    cuda_version: str | None = None
    client: str | None = Field(None, description="Client tool name, e.g. vllm bench serve")
    client_version: str | None = None


class Startup(_Model):
    """Engine start-up facts, all optional."""

    cold_start_s: Annotated[Number, Field(ge=0)] | None = Field(
        None, description="Launch to first successful completion, seconds"
    )
    engine_build_s: Annotated[Number, Field(ge=0)] | None = Field(
        None, description="Ahead-of-time engine build (trtllm-build), seconds"
    )
    vram_idle_gb: Annotated[Number, Field(ge=0)] | None = Field(
        None, description="GPU memory in use with the model loaded and idle, GB"
    )
    kv_cache_tokens: Annotated[Count, Field(gt=0)] | None = Field(
        None,
        description=(
            "KV-cache tokens the engine reported at start-up for one replica (vLLM 'GPU KV cache "
            "size: N tokens', TensorRT-LLM 'max tokens in paged KV cache (N)')"
        ),
    )
    max_concurrency: Annotated[Number, Field(gt=0)] | None = Field(
        None,
        description=(
            "Requests of max_concurrency_at_tokens tokens the engine said fit in its KV cache "
            "(vLLM 'Maximum concurrency for M tokens per request: X.XXx': X)"
        ),
    )
    max_concurrency_at_tokens: Annotated[Count, Field(gt=0)] | None = Field(
        None, description="Tokens per request behind max_concurrency (vLLM's M: max_model_len)"
    )


CapabilityStatus = Literal["supported", "unsupported", "failed", "not_checked"]


class CapabilityCheck(_Model):
    """One capability check and what the server answered."""

    status: CapabilityStatus = "not_checked"
    detail: str | None = None


class Capabilities(_Model):
    """Features the seed article weighs when choosing an engine."""

    structured_output: CapabilityCheck = CapabilityCheck()
    tool_calling: CapabilityCheck = CapabilityCheck()
    lora: CapabilityCheck = CapabilityCheck()


class Metric(_Model):
    """One number for a load level, under its canonical name, with where it came from."""

    name: str = Field(description="Canonical name, e.g. output_tok_s, p99_ttft_ms")
    value: Number = Field(description="Value in the unit the canonical name states")
    origin: Origin = Origin.REPORTED
    source_key: str | None = Field(None, description="The key or column in the source file")
    source_value: Number | None = Field(None, description="The value as the source wrote it")

    @field_validator("name")
    @classmethod
    def _known_name(cls, value: str) -> str:
        if value not in CANONICAL_METRICS:
            raise ValueError(f"unknown metric name {value!r}")
        return value

    @field_validator("value")
    @classmethod
    def _finite_value(cls, value: float) -> float:
        _finite(value)
        if value < 0:
            raise ValueError(f"must not be negative, got {value!r}")
        return value

    @model_validator(mode="after")
    def _plausible(self) -> Metric:
        problem = metric_problem(self.name, self.value)
        if problem is not None:
            raise ValueError(f"implausible metric: {problem}")
        return self


class RequestSample(_Model):
    """One request as the client saw it; times relative to the level's start, seconds/ms."""

    send_s: Number | None = Field(None, description="Send time relative to level start, seconds")
    ttft_ms: Annotated[Number, Field(ge=0)] | None = None
    e2e_ms: Annotated[Number, Field(ge=0)] | None = None
    input_tokens: Annotated[Count, Field(ge=0)] | None = None
    output_tokens: Annotated[Count, Field(ge=0)] | None = None
    chunk_gaps_ms: tuple[Number, ...] = Field((), description="Gaps between streamed chunks, ms")
    http_status: Count | None = None
    error: str | None = Field(None, description="Error text; None when the request succeeded")

    @model_validator(mode="after")
    def _plausible(self) -> RequestSample:
        times = [("ttft_ms", self.ttft_ms), ("e2e_ms", self.e2e_ms)]
        named = [(what, value) for what, value in times if value is not None]
        gaps = [(f"chunk_gaps_ms[{i}]", gap) for i, gap in enumerate(self.chunk_gaps_ms)]
        problems = sample_problems(_finite(self.send_s), named + gaps)
        if problems:
            raise ValueError("implausible sample: " + "; ".join(problems[:3]))
        return self

    @property
    def ok(self) -> bool:
        """True when the request completed without error."""
        return self.error is None


class Level(_Model):
    """One load level: a concurrency or a request rate, its counts, metrics and samples."""

    load_kind: LoadKind
    load_value: Number = Field(
        gt=0,
        description="Concurrency (streams), rate (requests/s), or for an offline "
        "(max-throughput) level the requests in the run",
    )
    duration_s: Annotated[Number, Field(gt=0)] | None = Field(None, description="Measured span")
    window_start_s: Number | None = Field(None, description="Steady-state window start, seconds")
    window_end_s: Number | None = Field(None, description="Steady-state window end, seconds")
    burst: bool = Field(
        False,
        description="Every request was sent at once (no concurrency cap, infinite rate): a burst "
        "that drains, not a steady-state level; kept out of curve fits",
    )
    load_stated: bool = Field(
        True,
        description="False when the source does not state the load (a summary over several "
        "stages, per-request records alone): load_value is what was achieved, and the level "
        "is kept out of curve fits",
    )
    requests_sent: Annotated[Count, Field(ge=0)] | None = None
    completed: Annotated[Count, Field(ge=0)] | None = None
    failed: Annotated[Count, Field(ge=0)] | None = None
    incomplete: Annotated[Count, Field(ge=0)] | None = None
    input_tokens_total: Annotated[Count, Field(ge=0)] | None = None
    output_tokens_total: Annotated[Count, Field(ge=0)] | None = None
    metrics: tuple[Metric, ...] = ()
    samples: tuple[RequestSample, ...] = ()
    notes: str | None = None

    @field_validator("load_value")
    @classmethod
    def _finite_load(cls, value: float) -> float:
        _finite(value)
        return value

    @model_validator(mode="after")
    def _plausible(self) -> Level:
        problems = level_problems(self)
        if problems:
            raise ValueError("implausible level: " + "; ".join(problems))
        return self

    def value(self, name: str, origin: Origin | None = None) -> float | None:
        """The value of a canonical metric: reported first, then recomputed, then derived."""
        order = (origin,) if origin else (Origin.REPORTED, Origin.RECOMPUTED, Origin.DERIVED)
        for wanted in order:
            for metric in self.metrics:
                if metric.name == name and metric.origin == wanted:
                    return metric.value
        return None

    def failure_rate(self) -> float | None:
        """Failed / (completed + failed), or None when the counts are unknown."""
        if self.completed is None or self.failed is None or self.completed + self.failed == 0:
            return None
        return self.failed / (self.completed + self.failed)


class RunFile(_Model):
    """One deployment x workload, measured at one or more load levels."""

    schema_version: Literal[1] = 1
    source: Source
    provenance: Provenance
    deployment: Deployment
    workload: Workload = Workload()
    environment: Environment = Environment()
    startup: Startup = Startup()
    capabilities: Capabilities = Capabilities()
    levels: tuple[Level, ...] = Field(min_length=1)
    started_at: datetime | None = Field(None, description="UTC start of the measurement")
    complete: bool = Field(True, description="False when the sweep stopped early")
    label: str | None = Field(None, description="Short human label: publication, experiment, probe")
    notes: str | None = None
    origin_file: str | None = Field(None, description="File name the run was imported from")
    source_sha256: str | None = Field(
        None, description="Content key used to deduplicate: sha256 of the source bytes (+ part)"
    )

    @model_validator(mode="after")
    def _no_repeated_levels(self) -> RunFile:
        problems = repeated_levels(self.levels)
        if problems:
            raise ValueError("; ".join(problems))
        return self


def read_run_file(path: Path) -> RunFile:
    """Read and validate a RunFile JSON; refuse newer schema versions with a clear message."""
    name = str(path)
    if path.stat().st_size > MAX_RUN_FILE_BYTES:
        raise InputError("run file is larger than the limit", file=name, value=path.stat().st_size)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not a JSON document: {exc}", file=name) from exc
    return run_file_from_dict(load_json(text, name), name)


def run_file_from_dict(raw: object, name: str = "<run file>") -> RunFile:
    """Validate a decoded RunFile document."""
    if not isinstance(raw, dict):
        raise InputError("expected a JSON object", file=name, value=type(raw).__name__)
    version = raw.get("schema_version")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"written by a newer capplan (schema_version {version}); this capplan reads "
            f"version {SCHEMA_VERSION}: upgrade capplan to read it",
            file=name,
            field="schema_version",
            value=version,
        )
    if version != SCHEMA_VERSION:
        raise SchemaVersionError(
            f"expected schema_version {SCHEMA_VERSION}",
            file=name,
            field="schema_version",
            value=version,
        )
    try:
        return RunFile.model_validate(raw)
    except ValidationError as exc:
        raise input_error_from_validation(exc, name) from exc


def write_run_file(run: RunFile, path: Path) -> None:
    """Write a RunFile atomically (an exclusive temp file + rename), so a crash never leaves half
    a file and a link planted beside it is never written through."""
    write_atomic(path, run.model_dump_json(indent=2).encode("utf-8"))


def input_error_from_validation(exc: ValidationError, name: str) -> InputError:
    """Turn pydantic's first error into an InputError naming the field and the value."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"])
    return InputError(first["msg"], file=name, field=field, value=first.get("input"))
