"""The probe request's defaults and limits, stated once: ProbeRequest's fields take them, and
`capplan probe --help` shows them without loading pydantic or the probe (plain frozen
dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from measurements.plausible import MAX_TOKENS_PER_REQUEST


@dataclass(frozen=True, slots=True)
class TimeoutDefaults:
    """How long the probe waits on a server, seconds: a stalled server is declared dead in
    seconds (three requests in a row timing out), not after the whole-request limit.

    vLLM and trtllm-serve send a streaming answer's headers as soon as they accept it (queued
    or not) and then a chunk per decode step, so 20 s of silence is a stall, not load."""

    connect_s: float = 5.0
    first_byte_s: float = 20.0
    between_chunks_s: float = 20.0
    total_s: float = 600.0


TIMEOUT_DEFAULTS = TimeoutDefaults()


@dataclass(frozen=True, slots=True)
class ProbeDefaults:
    """Every ProbeRequest default, by field name (fields without one are required)."""

    engine: str = "vllm"
    base_url: str | None = None
    launch_command: str | None = None
    concurrencies: tuple[int, ...] = ()
    rates_req_s: tuple[float, ...] = ()
    arrival: Literal["poisson", "gamma", "constant"] = "poisson"
    burstiness: float = 1.0
    requests_per_level: int | None = None
    duration_per_level_s: float | None = None
    endpoint: Literal["completions", "chat"] = "completions"
    length_distribution: Literal["fixed", "normal", "lognormal"] = "fixed"
    isl_stddev_tokens: float = 0.0
    osl_stddev_tokens: float = 0.0
    shape: Literal["independent", "agent-loop"] = "independent"
    prefix_sharing: bool = False
    tokenizer: str | None = None
    api_key_env: str | None = None
    ignore_eos: bool = True
    stop_at_saturation: bool = True
    min_gain_pct: float = 5.0
    ttft_blowup_factor: float = 10.0
    check_capabilities: bool = True
    lora_adapter: str | None = None
    engine_version: str | None = None
    precision: str | None = None
    gpu: str | None = None
    gpu_count: int | None = None
    tp: int | None = None
    pp: int | None = None
    connect_timeout_s: float = TIMEOUT_DEFAULTS.connect_s
    first_byte_timeout_s: float = TIMEOUT_DEFAULTS.first_byte_s
    chunk_timeout_s: float = TIMEOUT_DEFAULTS.between_chunks_s
    request_timeout_s: float = TIMEOUT_DEFAULTS.total_s
    force: bool = False


PROBE_DEFAULTS = ProbeDefaults()


@dataclass(frozen=True, slots=True)
class ProbeLimits:
    """The most one probe session may ask for, far above any real sweep (the largest vLLM
    deployments keep a few thousand streams in flight): a value beyond one is refused, naming the
    flag, the value and the limit, before any request is sent (docs/cli.md, "Ranges")."""

    tokens: int = MAX_TOKENS_PER_REQUEST  # --isl, --osl and their stddevs (16.8 M)
    concurrency: int = 10_000  # each closed-loop level, requests in flight
    rate_req_s: float = 10_000.0  # each open-loop level, requests/s
    levels: int = 64  # levels in one sweep
    requests_per_level: int = 100_000
    requests_per_sweep: int = 1_000_000  # measured requests over all levels (defaults included)
    duration_per_level_s: float = 86_400.0  # one day
    sweep_s: float = 7 * 86_400.0  # --duration-per-level x levels: one week
    timeout_s: float = 86_400.0  # each of the four timeouts
    burstiness: float = 100.0
    min_gain_pct: float = 1_000.0
    ttft_blowup_factor: float = 10_000.0
    gpu_count: int = 4_096  # GPUs per replica (also `capplan import --gpu-count`)
    parallel: int = 1_024  # --tp and --pp (also `capplan import`)


PROBE_LIMITS = ProbeLimits()
