"""What an operator asks one probe session for (ProbeRequest): the server, the sweep, the
workload and the deployment facts, each default stated once, built alike by `capplan probe` and
the Probe page. A bad value raises InputError naming the field (its name here, which the CLI
shows as its flag) and the value, secrets masked; then the request turns into the sweep's
ProbeConfig and, when it asks to start a server, a LaunchSpec."""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from errors import InputError
from measurements.entry_names import engine_name, gpu_name
from measurements.probe.config import ProbeConfig
from measurements.probe.defaults import PROBE_DEFAULTS as _DEFAULT
from measurements.probe.defaults import PROBE_LIMITS as _MOST
from measurements.probe.launch_spec import LaunchSpec, port_from_argv
from measurements.probe.redaction import MASK, redact_command, redact_url, redact_value
from measurements.probe.workloads import Arrival

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_Tokens = Annotated[int, Field(ge=1, le=_MOST.tokens)]
_Stddev = Annotated[float, Field(ge=0, le=_MOST.tokens)]
_Seconds = Annotated[float, Field(gt=0, le=_MOST.timeout_s)]
_Gpus = Annotated[int, Field(ge=1, le=_MOST.gpu_count)]
_Parallel = Annotated[int, Field(ge=1, le=_MOST.parallel)]
_LAUNCHED_ENGINES = ("vllm", "tensorrt-llm")


class ProbeRequest(BaseModel):
    """One probe session as asked for: attach to `base_url` or start `launch_command`, sweep
    the concurrency (closed loop) or rate (open loop) levels, write `out_path` after every
    level. Levels may be given as comma-separated text ("1,2,4"), as a flag or a form has them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(description="Served model name sent in every request")
    isl_tokens: _Tokens = Field(description="Prompt length, tokens (mean)")
    osl_tokens: _Tokens = Field(description="Output length, tokens (max_tokens)")
    out_path: Path = Field(description="RunFile written after every level")
    engine: str = Field(_DEFAULT.engine, description="Engine: vllm, tensorrt-llm or other")
    base_url: str | None = Field(
        _DEFAULT.base_url, description="A server already running, e.g. http://127.0.0.1:8000"
    )
    launch_command: str | None = Field(
        _DEFAULT.launch_command,
        description='Start this server first, e.g. "vllm serve M --port 8000"',
    )
    concurrencies: tuple[Annotated[int, Field(ge=1, le=_MOST.concurrency)], ...] = Field(
        _DEFAULT.concurrencies,
        max_length=_MOST.levels,
        description="Closed-loop levels, requests kept in flight, e.g. 1,2,4,8,16",
    )
    rates_req_s: tuple[Annotated[float, Field(gt=0, le=_MOST.rate_req_s)], ...] = Field(
        _DEFAULT.rates_req_s,
        max_length=_MOST.levels,
        description="Open-loop levels, requests/s, e.g. 1,2,4",
    )
    arrival: Arrival = Field(_DEFAULT.arrival, description="Open loop: poisson, gamma or constant")
    burstiness: Annotated[float, Field(gt=0, le=_MOST.burstiness)] = Field(
        _DEFAULT.burstiness, description="Gamma arrivals: shape, dimensionless (< 1 burstier)"
    )
    requests_per_level: Annotated[int, Field(ge=1, le=_MOST.requests_per_level)] | None = Field(
        _DEFAULT.requests_per_level,
        description="Measured requests per level (default max(32, 8 x load))",
    )
    duration_per_level_s: Annotated[float, Field(gt=0, le=_MOST.duration_per_level_s)] | None = (
        Field(
            _DEFAULT.duration_per_level_s,
            description="Seconds per level instead of a request count",
        )
    )
    endpoint: Literal["completions", "chat"] = Field(
        _DEFAULT.endpoint, description="completions or chat"
    )
    length_distribution: Literal["fixed", "normal", "lognormal"] = Field(
        _DEFAULT.length_distribution,
        description="How prompt and output lengths vary: fixed, normal or lognormal",
    )
    isl_stddev_tokens: _Stddev = Field(
        _DEFAULT.isl_stddev_tokens, description="Prompt length stddev, tokens"
    )
    osl_stddev_tokens: _Stddev = Field(
        _DEFAULT.osl_stddev_tokens, description="Output length stddev, tokens"
    )
    shape: Literal["independent", "agent-loop"] = Field(
        _DEFAULT.shape, description="independent prompts or agent-loop sessions"
    )
    prefix_sharing: bool = Field(
        _DEFAULT.prefix_sharing, description="Every prompt opens with one prefix"
    )
    tokenizer: str | None = Field(
        _DEFAULT.tokenizer, description="Model dir or HF name with a local tokenizer.json"
    )
    api_key_env: str | None = Field(
        _DEFAULT.api_key_env,
        description="NAME of the environment variable holding the API key (never the key)",
    )
    ignore_eos: bool = Field(_DEFAULT.ignore_eos, description="Fixed output length (ignore_eos)")
    stop_at_saturation: bool = Field(
        _DEFAULT.stop_at_saturation,
        description="Stop climbing once throughput stops growing or TTFT explodes",
    )
    min_gain_pct: Annotated[float, Field(ge=0, le=_MOST.min_gain_pct)] = Field(
        _DEFAULT.min_gain_pct,
        description="Saturated when the next level adds less throughput than this, %",
    )
    ttft_blowup_factor: Annotated[float, Field(gt=1, le=_MOST.ttft_blowup_factor)] = Field(
        _DEFAULT.ttft_blowup_factor,
        description="Saturated when p50 TTFT exceeds this multiple of the first level's",
    )
    check_capabilities: bool = Field(
        _DEFAULT.check_capabilities, description="Check structured output, tool calling and LoRA"
    )
    lora_adapter: str | None = Field(_DEFAULT.lora_adapter, description="A LoRA adapter to request")
    engine_version: str | None = Field(_DEFAULT.engine_version, description="Engine version")
    precision: str | None = Field(_DEFAULT.precision, description="fp8, bf16, ...")
    gpu: str | None = Field(_DEFAULT.gpu, description="GPU SKU (else from nvidia-smi)")
    gpu_count: _Gpus | None = Field(_DEFAULT.gpu_count, description="GPUs per replica")
    tp: _Parallel | None = Field(_DEFAULT.tp, description="Tensor-parallel size")
    pp: _Parallel | None = Field(_DEFAULT.pp, description="Pipeline-parallel size")
    connect_timeout_s: _Seconds = Field(
        _DEFAULT.connect_timeout_s, description="Limit on opening a connection, seconds"
    )
    first_byte_timeout_s: _Seconds = Field(
        _DEFAULT.first_byte_timeout_s,
        description="Limit from send to the answer's status line and headers, seconds",
    )
    chunk_timeout_s: _Seconds = Field(
        _DEFAULT.chunk_timeout_s,
        description="Limit on the silence between two reads of a streaming answer, seconds",
    )
    request_timeout_s: _Seconds = Field(
        _DEFAULT.request_timeout_s, description="Whole-request limit, seconds"
    )
    force: bool = Field(_DEFAULT.force, description="Replace an existing run file at out_path")

    @model_validator(mode="wrap")
    @classmethod
    def _as_input_error(
        cls, data: object, handler: ModelWrapValidatorHandler[ProbeRequest]
    ) -> ProbeRequest:
        """pydantic's ValidationError becomes an InputError naming the field and the value; the
        validators below raise InputError themselves, which pydantic passes through untouched."""
        try:
            return handler(data)
        except ValidationError as exc:
            raise _input_error(exc) from None

    @field_validator("model")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value.strip():
            raise InputError("give the served model name", field="model", value=value)
        return value

    @field_validator("engine", "gpu")
    @classmethod
    def _names(cls, value: str | None, info: ValidationInfo) -> str | None:
        """NFKC, no invisible characters, no look-alike of a catalog GPU or a known engine."""
        clean = engine_name if info.field_name == "engine" else gpu_name
        return None if value is None else clean(value)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None  # blank is no server given: the check below says what to give
        value = value.strip()
        if not value.startswith(("http://", "https://")):
            raise InputError(
                "the base URL must start with http:// or https://",
                field="base_url",
                value=redact_url(value),
            )
        return value

    @field_validator("concurrencies", mode="before")
    @classmethod
    def _concurrency_text(cls, value: object) -> object:
        return _levels(value, "concurrencies", int, "whole numbers, e.g. 1,2,4,8")

    @field_validator("rates_req_s", mode="before")
    @classmethod
    def _rate_text(cls, value: object) -> object:
        return _levels(value, "rates_req_s", float, "requests/s, e.g. 1,2,4")

    @field_validator("concurrencies", "rates_req_s")
    @classmethod
    def _increasing(cls, value: tuple[float, ...], info: ValidationInfo) -> tuple[float, ...]:
        if any(b <= a for a, b in itertools.pairwise(value)):
            raise InputError(
                "the levels must be strictly increasing", field=info.field_name, value=value
            )
        return value

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.match(value):
            raise InputError(  # it may be the key itself: never echo it back
                "the API key variable must be the NAME of an environment variable, not the key",
                field="api_key_env",
                value=MASK,
            )
        return value

    @model_validator(mode="after")
    def _plannable(self) -> ProbeRequest:
        if self.base_url is None and not self.launch_command:
            raise InputError(
                "give the base URL of a running server, e.g. http://127.0.0.1:8000 (or a launch "
                "command that starts one)",
                field="base_url",
            )
        if self.base_url is not None and self.launch_command:
            raise InputError(
                "give a base URL or a launch command, not both", field="launch_command"
            )
        self.launch_spec()  # a command the probe cannot start or reach
        _check_sweep(self)
        _check_size(self, self.probe_config())  # whatever else the sweep's config refuses
        return self

    def launch_spec(self) -> LaunchSpec | None:
        """The server to start, from the launch command; None when attaching to base_url."""
        if not self.launch_command:
            return None
        command = self.launch_command
        try:
            words = shlex.split(command)
        except ValueError as exc:
            message = f"the launch command is not a shell command line ({exc})"
            raise _launch_error(message, command) from None
        env = _leading_assignments(words)  # `HF_TOKEN=... vllm serve M`: the environment
        argv = tuple(words[len(env) :])
        port = port_from_argv(argv)
        if port is None:
            message = "the launch command must say --port N so the probe can reach it"
            raise _launch_error(message, command)
        engine = self.engine if self.engine in _LAUNCHED_ENGINES else "other"
        try:
            return LaunchSpec(engine=engine, model=self.model, command=argv, port=port, env=env)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise _launch_error(f"{where}: {first['msg']}", command) from None

    def probe_config(self) -> ProbeConfig:
        """The sweep this request asks for, against the launched server or base_url."""
        launch = self.launch_spec()
        raw = {
            "base_url": launch.base_url if launch else self.base_url,
            "model": self.model,
            "endpoint": self.endpoint,
            "concurrencies": self.concurrencies,
            "rates": self.rates_req_s,
            "arrival": self.arrival,
            "burstiness": self.burstiness,
            "requests_per_level": self.requests_per_level,
            "duration_per_level_s": self.duration_per_level_s,
            "api_key_env": self.api_key_env,
            "ignore_eos": self.ignore_eos,
            "tokenizer": self.tokenizer,
            "connect_timeout_s": self.connect_timeout_s,
            "first_byte_timeout_s": self.first_byte_timeout_s,
            "chunk_timeout_s": self.chunk_timeout_s,
            "request_timeout_s": self.request_timeout_s,
            "saturation": {
                "enabled": self.stop_at_saturation,
                "min_gain_pct": self.min_gain_pct,
                "ttft_blowup_factor": self.ttft_blowup_factor,
            },
            "workload": {
                "isl": self.isl_tokens,
                "osl": self.osl_tokens,
                "isl_distribution": self.length_distribution,
                "osl_distribution": self.length_distribution,
                "isl_stddev": self.isl_stddev_tokens,
                "osl_stddev": self.osl_stddev_tokens,
                "shape": self.shape,
                "prefix_sharing": self.prefix_sharing,
            },
        }
        try:
            return ProbeConfig.model_validate(raw)
        except ValidationError as exc:
            raise _input_error(exc, _CONFIG_NAMES) from None


# ProbeConfig's names for the request's fields, where they differ (the rest are the same).
_CONFIG_NAMES = {"rates": "rates_req_s", "workload": None, "saturation": None}


def _check_sweep(request: ProbeRequest) -> None:
    """The sweep's rules across fields, in the request's words."""
    if not request.concurrencies and not request.rates_req_s:
        raise InputError(
            "give concurrency levels (a closed loop) or request rates (an open loop)",
            field="concurrencies",
        )
    if request.concurrencies and request.rates_req_s:
        raise InputError(
            "give concurrency levels or request rates, not both",
            field="rates_req_s",
            value=request.rates_req_s,
        )
    if request.requests_per_level is not None and request.duration_per_level_s is not None:
        raise InputError(
            "give requests per level or a duration per level, not both",
            field="duration_per_level_s",
            value=request.duration_per_level_s,
        )
    if request.arrival != "gamma" and request.burstiness != 1.0:
        raise InputError(
            f"burstiness applies to gamma arrivals only (arrival is {request.arrival!r})",
            field="burstiness",
            value=request.burstiness,
        )


def _check_size(request: ProbeRequest, config: ProbeConfig) -> None:
    """The whole sweep within PROBE_LIMITS: its measured requests, or its timed seconds."""
    levels = config.levels
    if request.duration_per_level_s is not None:
        total_s = request.duration_per_level_s * len(levels)
        if total_s > _MOST.sweep_s:
            raise InputError(
                f"{len(levels)} levels of {request.duration_per_level_s:g} s is {total_s:,.0f} s; "
                f"one sweep runs at most {_MOST.sweep_s:,.0f} s (a week)",
                field="duration_per_level_s",
                value=request.duration_per_level_s,
            )
        return
    per_level = request.requests_per_level
    loads = "concurrencies" if request.concurrencies else "rates_req_s"
    total = sum(config.requests_for(value) or 0 for value in levels)
    if total > _MOST.requests_per_sweep:
        raise InputError(
            f"{len(levels)} levels make {total:,} measured requests; one sweep sends at most "
            f"{_MOST.requests_per_sweep:,} (fewer levels or fewer requests per level)",
            field="requests_per_level" if per_level else loads,
            value=per_level if per_level else getattr(request, loads),
        )


def _levels(value: object, field: str, kind: type[int] | type[float], example: str) -> object:
    """Comma-separated text as numbers; anything else goes on to pydantic unchanged."""
    if value is None:
        return ()
    if not isinstance(value, str):
        return value
    try:
        return tuple(kind(part) for part in value.split(",") if part.strip())
    except ValueError as exc:
        raise InputError(f"expected comma-separated {example}", field=field, value=value) from exc


def _leading_assignments(words: list[str]) -> dict[str, str]:
    """The `NAME=value` words a shell command line starts with (set in the server's env)."""
    env: dict[str, str] = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not sep or not name.isidentifier() or not name.isascii():
            break
        env[name] = value
    return env


def _launch_error(message: str, command: str) -> InputError:
    return InputError(message, field="launch_command", value=redact_command(command))


def _input_error(exc: ValidationError, renames: dict[str, str | None] | None = None) -> InputError:
    """pydantic's first error as an InputError naming the field (a config's error: the request
    field it came from, when there is one) and the value it quotes with any secret masked."""
    first = exc.errors()[0]
    loc = [str(part) for part in first["loc"]]
    field = loc[0] if loc else None
    if renames is not None and field is not None:  # the sweep config's name for the field
        field = renames.get(field, field)
        field = field if field in ProbeRequest.model_fields else None
    value = redact_value(first.get("input")) if field is not None else None
    message = first["msg"].removeprefix("Value error, ")
    return InputError(message, field=field, value=MASK if field == "api_key_env" else value)
