"""What one `capplan probe` sweep does: server, endpoint, load levels, workload, windows,
timeouts and when to stop (saturation). Validated at the edge; the probe trusts it."""

from __future__ import annotations

import itertools
import math
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from measurements.probe.defaults import TIMEOUT_DEFAULTS
from measurements.probe.workloads import Arrival, WorkloadConfig

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_Fraction = Annotated[float, Field(ge=0, lt=0.5)]


class SaturationConfig(BaseModel):
    """When a sweep stops climbing: throughput has gone flat, or TTFT has exploded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(True, description="Stop the sweep at saturation")
    min_gain_pct: Annotated[float, Field(ge=0)] = Field(
        5.0, description="A level whose output tok/s grew less than this over the previous is flat"
    )
    ttft_blowup_factor: Annotated[float, Field(gt=1)] = Field(
        10.0, description="Saturated when p50 TTFT passes this multiple of the first level's"
    )
    patience: Annotated[int, Field(ge=1)] = Field(
        1, description="Flat levels in a row before the sweep stops"
    )


class ProbeConfig(BaseModel):
    """One sweep against one OpenAI-compatible server.

    The steady-state window of a level (recorded as window_start_s/window_end_s) is cut from
    the span first send .. last activity: it starts at first send + ramp_fraction x span (in a
    closed loop not before the concurrency-th request was sent) and ends at the last send or
    at span end - drain_fraction x span, whichever is earlier; with duration_per_level_s the
    in-flight requests are cut at the deadline, which is then the window's end."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(description="Server root, e.g. http://127.0.0.1:8000 (or .../v1)")
    model: str = Field(min_length=1, description="Served model name sent in every request")
    endpoint: Literal["completions", "chat"] = Field(
        "completions", description="/v1/completions or /v1/chat/completions"
    )
    concurrencies: tuple[Annotated[int, Field(ge=1)], ...] = Field(
        (), description="Closed-loop levels: requests kept in flight, increasing"
    )
    rates: tuple[Annotated[float, Field(gt=0)], ...] = Field(
        (), description="Open-loop levels: request arrival rates (requests/s), increasing"
    )
    arrival: Arrival = Field("poisson", description="Open loop: inter-arrival distribution")
    burstiness: Annotated[float, Field(gt=0)] = Field(
        1.0, description="Gamma arrivals: shape (< 1 burstier, > 1 more regular)"
    )
    workload: WorkloadConfig = Field(description="Prompt and output lengths, shape, seed")
    requests_per_level: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Measured requests per level (default max(32, 8 x load))"
    )
    duration_per_level_s: Annotated[float, Field(gt=0)] | None = Field(
        None, description="Seconds per level instead of a request count"
    )
    warmup_requests: Annotated[int, Field(ge=0)] = Field(
        4, description="Unmeasured requests before the first level (also calibrate lengths)"
    )
    ramp_fraction: _Fraction = Field(0.1, description="Share of a level's span cut at the start")
    drain_fraction: _Fraction = Field(0.1, description="Share of a level's span cut at the end")
    connect_timeout_s: Annotated[float, Field(gt=0)] = Field(
        TIMEOUT_DEFAULTS.connect_s, description="Limit on opening a connection, seconds"
    )
    first_byte_timeout_s: Annotated[float, Field(gt=0)] = Field(
        TIMEOUT_DEFAULTS.first_byte_s,
        description="Limit from send to the response's status line and headers, seconds",
    )
    chunk_timeout_s: Annotated[float, Field(gt=0)] = Field(
        TIMEOUT_DEFAULTS.between_chunks_s,
        description="Limit on the silence between two reads of a streaming answer, seconds",
    )
    request_timeout_s: Annotated[float, Field(gt=0)] = Field(
        TIMEOUT_DEFAULTS.total_s, description="Whole-request limit, seconds"
    )
    api_key_env: str | None = Field(
        None, description="NAME of the environment variable holding the API key (never stored)"
    )
    ignore_eos: bool = Field(True, description="Send ignore_eos so every answer is max_tokens")
    error_bodies: bool = Field(
        True, description="Keep the start of a failed answer's body (False: its HTTP status only)"
    )
    continuous_usage: bool = Field(
        True, description="Ask for usage on every chunk (exact tokens per chunk)"
    )
    max_failure_rate: Annotated[float, Field(ge=0, le=1)] = Field(
        0.05, description="A level failing more than this is marked (and kept out of fits)"
    )
    saturation: SaturationConfig = Field(SaturationConfig(), description="When to stop")
    seed: int = Field(0, description="Seed of the open-loop arrival draws")
    tokenizer: str | None = Field(
        None, description="Model dir or Hugging Face name whose local tokenizer.json to use"
    )

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {value!r}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _mask_pasted_key(cls, data: object) -> object:
        """Something that is not a variable name may be the key itself: never echo it back."""
        if isinstance(data, dict):
            value = data.get("api_key_env")
            if isinstance(value, str) and not _ENV_NAME.match(value):
                return {**data, "api_key_env": "***"}
        return data

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.match(value):
            raise ValueError("must be the NAME of an environment variable, not the key itself")
        return value

    @field_validator("concurrencies", "rates")
    @classmethod
    def _increasing(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if any(b <= a for a, b in itertools.pairwise(value)):
            raise ValueError(f"levels must be strictly increasing, got {list(value)}")
        return value

    @model_validator(mode="after")
    def _one_of_each(self) -> ProbeConfig:
        if bool(self.concurrencies) == bool(self.rates):
            raise ValueError("give exactly one of concurrencies (closed loop) or rates (open loop)")
        if self.requests_per_level is not None and self.duration_per_level_s is not None:
            raise ValueError("give requests_per_level or duration_per_level_s, not both")
        if self.arrival != "gamma" and self.burstiness != 1.0:
            raise ValueError("burstiness applies to arrival='gamma' only")
        if self.ramp_fraction + self.drain_fraction >= 0.9:
            raise ValueError("ramp_fraction + drain_fraction must leave a window (< 0.9)")
        return self

    @property
    def closed_loop(self) -> bool:
        """True for a concurrency sweep, False for a request-rate sweep."""
        return bool(self.concurrencies)

    @property
    def levels(self) -> tuple[float, ...]:
        """The load values in sweep order."""
        return tuple(float(c) for c in self.concurrencies) if self.closed_loop else self.rates

    def requests_for(self, load_value: float) -> int | None:
        """Measured requests at one level; None when the level runs for a duration instead."""
        if self.duration_per_level_s is not None:
            return None
        if self.requests_per_level is not None:
            return self.requests_per_level
        return max(32, 8 * math.ceil(load_value))

    @property
    def url(self) -> str:
        """The endpoint's full URL (base_url may or may not end in /v1)."""
        root = self.base_url if self.base_url.endswith("/v1") else f"{self.base_url}/v1"
        return f"{root}/{'completions' if self.endpoint == 'completions' else 'chat/completions'}"
