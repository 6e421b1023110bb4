"""The on-box probe: an asyncio load generator that drives an OpenAI-compatible server (vLLM,
trtllm-serve) through closed-loop (concurrency) or open-loop (rate) levels and writes the
RunFile after every level. A failed request is data (RequestRecord.error), never an exception;
the sweep raises InputError only for a missing API key or a server that answers nothing.

Module map: sse (stream parsing) -> send (one request) -> records (a Level) -> level_run (one
level in flight) -> sweep (this module); measurements.aggregate holds the canonical math,
saturation the stop rule."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from importlib import metadata
from pathlib import Path

import aiohttp
import httpx
import numpy as np
from httpx_aiohttp import AiohttpTransport

from errors import InputError
from measurements.probe.config import ProbeConfig
from measurements.probe.level_run import LevelRun, ProgressEvent
from measurements.probe.outbound import Outbound
from measurements.probe.power import LevelPower, with_power
from measurements.probe.prompts import PromptFactory, PromptSpec, load_tokenizer
from measurements.probe.redaction import (
    redact_args,
    redact_command,
    redact_url,
    remember_secret,
)
from measurements.probe.saturation import SaturationPoint, assess
from measurements.probe.send import Clock, RequestRecord, send_request
from measurements.probe.workloads import run_workload as workload_of
from measurements.run_file import (
    Capabilities,
    Deployment,
    Environment,
    Level,
    Provenance,
    RunFile,
    Source,
    Startup,
    write_run_file,
)

NO_ENVIRONMENT, NO_STARTUP, NOT_CHECKED = Environment(), Startup(), Capabilities()


@dataclass(frozen=True, slots=True)
class ProbeOutcome:
    """The run as written, whether the sweep finished, why it stopped, and the knee."""

    run: RunFile
    complete: bool
    stop_reason: str
    knee: float | None


async def run_probe(
    config: ProbeConfig,
    *,
    deployment: Deployment,
    environment: Environment = NO_ENVIRONMENT,
    startup: Startup = NO_STARTUP,
    capabilities: Capabilities = NOT_CHECKED,
    out: Path,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    clock: Clock = time.perf_counter,
    transport: httpx.AsyncBaseTransport | None = None,
    label: str = "capplan probe",
    notes: tuple[str, ...] = (),
    outbound: Outbound | None = None,
    power: Callable[[], Sequence[float]] | None = None,
) -> ProbeOutcome:
    """Warm up, sweep the levels (stopping at saturation or when the server dies) and write
    the RunFile to `out` after every level; the written file says complete=False until the
    sweep has ended normally. `outbound` (the app) connects to its checked addresses only;
    `power` reads each GPU's watts (NVML), sampled through every level (probe.power)."""
    header = _Header(deployment, environment, startup, capabilities, label)
    sweep = _Sweep(config, clock, transport, on_progress, outbound=outbound)
    sweep.power, sweep.gpus = power, deployment.gpu_count
    sweep.notes.extend(notes)
    return await sweep.run(header, out)


@dataclass(frozen=True, slots=True)
class _Header:
    deployment: Deployment
    environment: Environment
    startup: Startup
    capabilities: Capabilities
    label: str


class _Sweep:
    """The whole sweep: prompts, random generators, finished levels and run notes."""

    def __init__(
        self,
        config: ProbeConfig,
        clock: Clock,
        transport: httpx.AsyncBaseTransport | None,
        on_progress: Callable[[ProgressEvent], None] | None,
        *,
        outbound: Outbound | None = None,
    ) -> None:
        self.config, self.clock = config, clock
        self.transport, self.on_progress = transport, on_progress
        self.outbound = outbound
        self.power: Callable[[], Sequence[float]] | None = None
        self.gpus: int | None = None
        tokenizer = load_tokenizer(config.tokenizer) if config.tokenizer else None
        self.factory = PromptFactory(config.workload, tokenizer)
        self.prompt_rng = np.random.default_rng(config.workload.seed)
        self.arrival_rng = np.random.default_rng(config.seed)
        self.levels: list[Level] = []
        self.points: list[SaturationPoint] = []
        self.unit = "concurrency" if config.closed_loop else "rate"
        self.notes = [
            f"{config.endpoint} endpoint {redact_url(config.url)}, {self.unit} sweep",
            f"timeouts: connect {config.connect_timeout_s:g} s, first byte "
            f"{config.first_byte_timeout_s:g} s, between chunks {config.chunk_timeout_s:g} s, "
            f"whole request {config.request_timeout_s:g} s",
        ]
        if config.tokenizer and tokenizer is None:
            self.notes.append(f"tokenizer {config.tokenizer!r} not found locally (no download)")
        self.started_at = datetime.now(UTC)

    def client(self, pool: int | None) -> httpx.AsyncClient:
        """A client whose connection pool holds `pool` connections (None: unbounded)."""
        limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
        timeout = httpx.Timeout(
            self.config.request_timeout_s, connect=self.config.connect_timeout_s
        )
        # aiohttp under httpx's API: httpcore's pool bookkeeping cost 3-5x vllm bench serve's
        # CPU per token at 64+ streams (bench/bench_probe_overhead.py), and on a shared box that
        # CPU is taken from the engine being measured. Tests inject an httpx MockTransport.
        # trust_env=False: a proxy from the environment must not sit between probe and server.
        sessions = partial(self.outbound.session, pool) if self.outbound else _aiohttp_session(pool)
        transport = self.transport or AiohttpTransport(client=sessions)
        return httpx.AsyncClient(
            transport=transport, limits=limits, timeout=timeout, trust_env=False
        )

    def observe(self, prompt: PromptSpec, record: RequestRecord) -> None:
        """Let the first successful answers calibrate prompt lengths."""
        if record.ok and record.input_tokens:
            self.factory.calibrate(record.input_tokens, prompt)

    async def run(self, header: _Header, out: Path) -> ProbeOutcome:
        """Warm up, then measure level after level until done, saturated or the server dies."""
        _check_inputs(self.config, out)
        await self._warm_up()
        try:
            reason, complete, knee = await self._levels(header, out)
        except asyncio.CancelledError:
            if self.levels:
                self._write(header, out, False, f"interrupted after {len(self.levels)} level(s)")
            raise
        return ProbeOutcome(self._write(header, out, complete, reason), complete, reason, knee)

    async def _levels(self, header: _Header, out: Path) -> tuple[str, bool, float | None]:
        total = len(self.config.levels)
        for index, value in enumerate(self.config.levels):
            stop, complete, knee = await self._level(index, value)
            if stop is not None:
                return stop, complete, knee
            if index + 1 < total:  # the file says incomplete until the sweep has ended
                self._write(header, out, False, f"sweep in progress: {index + 1} of {total} levels")
        return "all levels measured; throughput still rising (no knee reached)", True, None

    async def _warm_up(self) -> None:
        count = self.config.warmup_requests
        if not count:
            return
        prompts = [self.factory.conversation(self.prompt_rng)[0] for _ in range(count)]
        async with self.client(count) as client:
            sends = (send_request(client, self.config, p, self.clock) for p in prompts)
            records = await asyncio.gather(*sends)
        if not any(r.ok for r in records):
            raise InputError(
                f"every warm-up request failed (first: {records[0].error}); "
                "check that the server is up and serves this model",
                field="base_url",
                value=redact_url(self.config.url),
            )
        for prompt, record in zip(prompts, records, strict=True):
            self.observe(prompt, record)
        self.notes.append(f"warm-up: {count} requests, not measured")

    async def _level(self, index: int, value: float) -> tuple[str | None, bool, float | None]:
        run = LevelRun(self, index, value)
        pool = int(value) if self.config.closed_loop else None
        meter = LevelPower(self.power, self.clock) if self.power else None
        with meter or nullcontext():
            async with self.client(pool) as client:
                await (run.closed(client) if self.config.closed_loop else run.open(client))
        try:
            level = run.level()
        except (ValueError, ArithmeticError, MemoryError, RecursionError) as exc:
            # What a server sent broke the probe's own math (a bug, never a request's failure):
            # the level's counts are kept and written, and the sweep stops there.
            self.levels.append(run.counts_only(f"{type(exc).__name__}: {exc!s:.160}"))
            return f"the probe could not aggregate {self.unit} {value:g}", False, None
        if meter is not None:
            level = with_power(level, meter, self.gpus, run.t0)
        self.levels.append(level)
        self.points.append(
            SaturationPoint(value, level.value("output_tok_s"), level.value("p50_ttft_ms"))
        )
        if run.dead or (level.failed and not level.completed):
            why = run.dead or "every request failed"
            return f"server stopped answering at {self.unit} {value:g}: {why}", False, None
        verdict = assess(self.points, self.config.saturation, self.unit)
        return (verdict.reason, True, verdict.knee) if verdict.saturated else (None, True, None)

    def _write(self, header: _Header, out: Path, complete: bool, status: str) -> RunFile:
        env = header.environment
        environment = env.model_copy(
            update={
                "client": "capplan probe",
                "client_version": _version(),
                "host": env.host or socket.gethostname(),
            }
        )
        run = RunFile(
            source=Source.PROBE,
            provenance=Provenance.MEASURED,
            deployment=_without_secrets(header.deployment),
            workload=workload_of(self.config.workload, ignore_eos=self.config.ignore_eos),
            environment=environment,
            startup=header.startup,
            capabilities=header.capabilities,
            levels=tuple(self.levels),
            started_at=self.started_at,
            complete=complete,
            label=header.label,
            notes="\n".join([*self.notes, self.factory.describe(), status]),
        )
        try:
            write_run_file(run, out)
        except OSError as exc:  # the disk filled or the folder went away mid-sweep
            raise InputError(
                f"cannot write the run file after {len(self.levels)} level(s): {exc.strerror}",
                file=str(out),
                field="out",
            ) from exc
        return run


def _aiohttp_session(pool: int | None) -> Callable[[], aiohttp.ClientSession]:
    """A session factory (called inside the event loop) with `pool` connections, 0 = unbounded
    (aiohttp's own default of 100 would cap an open-loop level without saying so)."""

    def session() -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(limit=pool or 0, limit_per_host=0)
        return aiohttp.ClientSession(connector=connector, trust_env=False)

    return session


def _without_secrets(deployment: Deployment) -> Deployment:
    """The deployment with any key typed into the launch command or its arguments masked."""
    command = deployment.launch_command
    return deployment.model_copy(
        update={
            "launch_command": redact_command(command) if command else command,
            "engine_args": redact_args(dict(deployment.engine_args)),
        }
    )


def api_key(config: ProbeConfig) -> str | None:
    """The API key from the environment variable the config names (None when it names none);
    InputError before any request goes out when that variable is unset or empty."""
    if not config.api_key_env:
        return None
    key = os.environ.get(config.api_key_env)
    if not key:
        raise InputError(
            "the environment variable named for the API key is not set (or empty)",
            field="api_key_env",
            value=config.api_key_env,
        )
    remember_secret(key)  # masked in every text from here on, however a server echoes it
    return key


def _check_inputs(config: ProbeConfig, out: Path) -> None:
    api_key(config)
    if not out.parent.is_dir():
        raise InputError("the folder for the run file does not exist", file=str(out), field="out")


def _version() -> str | None:
    try:
        return metadata.version("capplan")
    except metadata.PackageNotFoundError:
        return None
