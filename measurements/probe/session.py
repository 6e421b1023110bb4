"""One probe session on a GPU box: launch (or attach to) a server, read its facts, check its
capabilities, sweep it, and stop it — the run file holds everything that was learned."""

from __future__ import annotations

import asyncio
import shlex
import socket
from collections.abc import Callable
from pathlib import Path

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from errors import InputError
from measurements.gpu_info import GpuFacts, gpu_facts, gpu_sku
from measurements.probe.capabilities import check_capabilities
from measurements.probe.config import ProbeConfig
from measurements.probe.engines import (
    LaunchSpec,
    RunningServer,
    ServerFacts,
    attach,
    engine_args,
    launch,
    port_from_argv,
    server_facts,
)
from measurements.probe.redaction import redact_command, redact_value
from measurements.probe.sweep import NOT_CHECKED, ProbeOutcome, ProgressEvent, run_probe
from measurements.probe.sweep import api_key as probe_api_key
from measurements.run_file import (
    Capabilities,
    Deployment,
    Environment,
    Startup,
    input_error_from_validation,
)


class DeploymentFacts(BaseModel):
    """What the operator states about the deployment; anything left None is read from the
    server and the box when they say it (GPU from nvidia-smi, version from /version), else None."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: str = Field(description="vllm, tensorrt-llm or other")
    engine_version: str | None = None
    precision: str | None = None
    gpu: str | None = None
    gpu_count: int | None = Field(None, ge=1, description="GPUs one replica uses")
    tp: int | None = Field(None, ge=1)
    pp: int | None = Field(None, ge=1)


class SessionPlan(BaseModel):
    """A whole session: the sweep, the facts, and optionally the server to launch."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    probe: ProbeConfig
    facts: DeploymentFacts
    launch: LaunchSpec | None = Field(None, description="Start this server first (else attach)")
    check_capabilities: bool = Field(True, description="Structured output, tools, LoRA")
    lora_adapter: str | None = Field(None, description="A LoRA adapter name to request")
    out: Path = Field(description="RunFile written after every level")
    log_path: Path | None = Field(None, description="Server log when launching")


def session_plan_from_flags(flags: dict[str, object]) -> SessionPlan:
    """A SessionPlan from the CLI's flags (or a form's fields); InputError names the flag."""
    launch_spec = _launch_spec(flags)
    base_url = launch_spec.base_url if launch_spec else flags.get("base_url")
    if not base_url:
        raise InputError(
            "give --base-url (a running server) or --launch (start one)", field="--base-url"
        )
    if launch_spec and flags.get("base_url"):
        raise InputError("give --base-url or --launch, not both", field="--launch")
    distribution = flags.get("distribution", "fixed")
    raw: dict[str, object] = {
        "probe": {
            "base_url": base_url,
            "model": flags["model"],
            "endpoint": flags.get("endpoint", "completions"),
            "concurrencies": _numbers(flags.get("concurrency"), "--concurrency", int),
            "rates": _numbers(flags.get("rate"), "--rate", float),
            "arrival": flags.get("arrival", "poisson"),
            "burstiness": flags.get("burstiness", 1.0),
            "requests_per_level": flags.get("requests_per_level"),
            "duration_per_level_s": flags.get("duration_per_level_s"),
            "api_key_env": flags.get("api_key_env"),
            "ignore_eos": flags.get("ignore_eos", True),
            "tokenizer": flags.get("tokenizer"),
            "saturation": {
                "enabled": flags.get("stop_at_saturation", True),
                "min_gain_pct": flags.get("min_gain_pct", 5.0),
                "ttft_blowup_factor": flags.get("ttft_blowup_factor", 10.0),
            },
            "workload": {
                "isl": flags["isl"],
                "osl": flags["osl"],
                "isl_distribution": distribution,
                "osl_distribution": distribution,
                "isl_stddev": flags.get("isl_stddev", 0.0),
                "osl_stddev": flags.get("osl_stddev", 0.0),
                "shape": flags.get("shape", "independent"),
                "prefix_sharing": flags.get("prefix_sharing", False),
            },
        },
        "facts": {k: flags.get(k) for k in DeploymentFacts.model_fields if k != "engine"}
        | {"engine": flags.get("engine", "vllm")},
        "launch": launch_spec,
        "check_capabilities": flags.get("check_capabilities", True),
        "lora_adapter": flags.get("lora_adapter"),
        "out": flags["out"],
    }
    try:
        return SessionPlan.model_validate(raw)
    except ValidationError as exc:
        raise _masked(input_error_from_validation(exc, "probe options")) from None


def _numbers(text: object, flag: str, kind: type[int] | type[float]) -> list[float]:
    if not text:
        return []
    try:
        return [kind(part) for part in str(text).split(",") if part.strip()]
    except ValueError as exc:
        raise InputError("expected comma-separated numbers", field=flag, value=text) from exc


def _launch_spec(flags: dict[str, object]) -> LaunchSpec | None:
    command = flags.get("launch")
    if not command:
        return None
    try:
        words = shlex.split(str(command))
    except ValueError as exc:
        raise InputError(
            f"the launch command is not a shell command line ({exc})",
            field="--launch",
            value=redact_command(str(command)),
        ) from None
    env = _leading_assignments(words)  # `HF_TOKEN=... vllm serve M`: the environment, not argv
    argv = tuple(words[len(env) :])
    port = port_from_argv(argv)
    if port is None:
        raise InputError(
            "the launch command must say --port N so the probe can reach it",
            field="--launch",
            value=redact_command(str(command)),
        )
    engine = str(flags.get("engine", "other"))
    try:
        return LaunchSpec(
            engine=engine if engine in ("vllm", "tensorrt-llm") else "other",
            model=str(flags["model"]),
            command=argv,
            port=port,
            env=env,
        )
    except ValidationError as exc:
        raise _masked(input_error_from_validation(exc, "--launch")) from None


def _leading_assignments(words: list[str]) -> dict[str, str]:
    """The `NAME=value` words a shell command line starts with (set in the server's env)."""
    env: dict[str, str] = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not sep or not name.isidentifier() or not name.isascii():
            break
        env[name] = value
    return env


def _masked(error: InputError) -> InputError:
    """The same InputError with any secret in the value it quotes masked (a launch argv, a
    base URL with a password); `from None` above keeps pydantic's copy out of tracebacks."""
    value = redact_value(error.value)
    return InputError(error.message, file=error.file, field=error.field, value=value)


async def run_session(
    plan: SessionPlan, on_progress: Callable[[ProgressEvent], None] | None = None
) -> ProbeOutcome:
    """Launch or attach, gather facts, check capabilities, sweep; always stop what we started."""
    server = await asyncio.to_thread(_start, plan)
    try:
        return await _measure(plan, server, on_progress)
    finally:
        await asyncio.to_thread(server.stop)


def _start(plan: SessionPlan) -> RunningServer:
    if plan.launch is None:
        return attach(plan.probe.base_url)
    log_path = plan.log_path or plan.out.with_suffix(".server.log")
    return launch(plan.launch, log_path)


async def _measure(
    plan: SessionPlan,
    server: RunningServer,
    on_progress: Callable[[ProgressEvent], None] | None,
) -> ProbeOutcome:
    config = plan.probe
    api_key = probe_api_key(config)  # an unset key variable stops before the first request
    facts = await server_facts(server.base_url, api_key)
    if facts.models and config.model not in facts.models:
        raise InputError(
            f"the server does not serve this model; it serves {', '.join(facts.models)}",
            field="--model",
            value=config.model,
        )
    gpus = await asyncio.to_thread(gpu_facts)
    capabilities = await _capabilities(plan, server.base_url, api_key)
    label = "capplan probe"
    if facts.simulated:
        label = f"capplan probe, SIMULATED engine (capplan sim-server, profile {facts.profile})"
    return await run_probe(
        config,
        label=label,
        deployment=deployment_for(plan, server, facts, gpus),
        environment=environment_for(gpus),
        startup=Startup(
            cold_start_s=server.cold_start_s,
            engine_build_s=server.engine_build_s,
            vram_idle_gb=server.vram_idle_gb,
        ),
        capabilities=capabilities,
        out=plan.out,
        on_progress=on_progress,
    )


async def _capabilities(plan: SessionPlan, base_url: str, api_key: str | None) -> Capabilities:
    if not plan.check_capabilities:
        return NOT_CHECKED
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(headers=headers, timeout=60, trust_env=False) as client:
        return await check_capabilities(
            client, base_url, plan.probe.model, lora_adapter=plan.lora_adapter
        )


def deployment_for(
    plan: SessionPlan, server: RunningServer, facts: ServerFacts, gpus: GpuFacts | None
) -> Deployment:
    """The deployment as stated, completed only by what the server and the driver report."""
    stated = plan.facts
    args = engine_args(server.command) if server.command else {}
    if facts.simulated:
        args = {**args, "simulated": "true", "sim_profile": facts.profile or "?"}
    return Deployment(
        engine=stated.engine,
        engine_version=stated.engine_version or facts.version,
        model=plan.probe.model,
        precision=stated.precision,
        gpu=stated.gpu or (gpu_sku(gpus.name) if gpus else None),
        gpu_count=stated.gpu_count,
        tp=stated.tp or _int(args.get("tensor-parallel-size") or args.get("tp_size")),
        pp=stated.pp or _int(args.get("pipeline-parallel-size") or args.get("pp_size")),
        launch_command=server.launch_command,
        engine_args=args,
    )


def environment_for(gpus: GpuFacts | None) -> Environment:
    """This box: host name and, when a driver answers, the GPUs, driver and CUDA version."""
    return Environment(
        host=socket.gethostname(),
        gpu_name=f"{gpus.count} x {gpus.name}" if gpus else None,
        gpu_driver=gpus.driver_version if gpus else None,
        cuda_version=gpus.cuda_version if gpus else None,
        client="capplan probe",
    )


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None
