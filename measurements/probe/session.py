"""One probe session on a GPU box: launch (or attach to) a server, read its facts, check its
capabilities, sweep it, and stop it — the run file holds everything that was learned."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from pathlib import Path

import httpx
from httpx_aiohttp import AiohttpTransport
from pydantic import BaseModel, ConfigDict, Field

from errors import InputError
from measurements.engine_log import kv_facts_from_file, with_kv_facts
from measurements.gpu_info import GpuFacts, gpu_facts, gpu_sku
from measurements.probe.capabilities import check_capabilities
from measurements.probe.config import ProbeConfig
from measurements.probe.engines import RunningServer, attach, launch
from measurements.probe.launch_spec import LaunchSpec, engine_args
from measurements.probe.level_run import ProgressEvent
from measurements.probe.outbound import Outbound
from measurements.probe.power import NvmlPower
from measurements.probe.redaction import remember_command_secrets
from measurements.probe.request import ProbeRequest
from measurements.probe.server_facts import ServerFacts, server_facts
from measurements.probe.sweep import NOT_CHECKED, ProbeOutcome, run_probe
from measurements.probe.sweep import api_key as probe_api_key
from measurements.run_file import (
    Capabilities,
    Deployment,
    Environment,
    Startup,
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
    """A whole session as planned from a ProbeRequest: the sweep, the facts, and optionally
    the server to launch (no defaults here: the request states them)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    probe: ProbeConfig
    facts: DeploymentFacts
    launch: LaunchSpec | None = Field(description="Start this server first (else attach)")
    check_capabilities: bool = Field(description="Structured output, tools, LoRA")
    lora_adapter: str | None = Field(description="A LoRA adapter name to request")
    out: Path = Field(description="RunFile written after every level")
    log_path: Path | None = Field(None, description="Server log when launching")


def plan_session(request: ProbeRequest) -> SessionPlan:
    """The session a request asks for: its sweep, its stated facts, the server to launch."""
    return SessionPlan(
        probe=request.probe_config(),
        facts=DeploymentFacts(
            engine=request.engine,
            engine_version=request.engine_version,
            precision=request.precision,
            gpu=request.gpu,
            gpu_count=request.gpu_count,
            tp=request.tp,
            pp=request.pp,
        ),
        launch=request.launch_spec(),
        check_capabilities=request.check_capabilities,
        lora_adapter=request.lora_adapter,
        out=request.out_path,
    )


async def run_session(
    request: ProbeRequest,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    outbound: Outbound | None = None,
) -> ProbeOutcome:
    """Launch or attach, gather facts, check capabilities, sweep; always stop what we started.
    With `outbound` (the app) every request goes to its checked addresses only and a failed
    answer is kept as its HTTP status, never its body."""
    plan = plan_session(request)
    if outbound is not None:
        probe = plan.probe.model_copy(update={"error_bodies": False})
        plan = plan.model_copy(update={"probe": probe})
    server = await asyncio.to_thread(_start, plan)
    try:
        return await _measure(plan, server, on_progress, outbound)
    finally:
        await asyncio.to_thread(server.stop)


def _start(plan: SessionPlan) -> RunningServer:
    if plan.launch is None:
        return attach(plan.probe.base_url)
    remember_command_secrets(plan.launch.command or (), plan.launch.env)
    log_path = plan.log_path or plan.out.with_suffix(".server.log")
    return launch(plan.launch, log_path)


async def _measure(
    plan: SessionPlan,
    server: RunningServer,
    on_progress: Callable[[ProgressEvent], None] | None,
    outbound: Outbound | None,
) -> ProbeOutcome:
    config = plan.probe
    api_key = probe_api_key(config)  # an unset key variable stops before the first request
    facts = await server_facts(
        server.base_url,
        api_key,
        transport=_transport(outbound),
        error_bodies=config.error_bodies,
    )
    if facts.models and config.model not in facts.models:
        served = ", ".join(name[:80] for name in facts.models[:5])
        more = f" and {len(facts.models) - 5} more" if len(facts.models) > 5 else ""
        raise InputError(
            f"the server does not serve this model; it serves {served}{more}",
            field="model",
            value=config.model,
        )
    gpus = await asyncio.to_thread(gpu_facts)
    capabilities = await _capabilities(plan, server.base_url, api_key, outbound)
    label = "capplan probe"
    if facts.simulated:
        label = f"capplan probe, SIMULATED engine (capplan sim-server, profile {facts.profile})"
    # A simulated engine's GPUs (if any) do no work: its run never carries power.
    meter = None if facts.simulated or gpus is None else await asyncio.to_thread(NvmlPower.open)
    try:
        return await run_probe(
            config,
            label=label,
            deployment=deployment_for(plan, server, facts, gpus),
            environment=environment_for(gpus),
            startup=with_kv_facts(
                Startup(
                    cold_start_s=server.cold_start_s,
                    engine_build_s=server.engine_build_s,
                    vram_idle_gb=server.vram_idle_gb,
                ),
                kv_facts_from_file(server.log_path),
            ),
            capabilities=capabilities,
            out=plan.out,
            on_progress=on_progress,
            notes=facts.notes,
            outbound=outbound,
            power=None if meter is None else meter.read,
        )
    finally:
        if meter is not None:
            meter.close()


def _transport(outbound: Outbound | None) -> httpx.AsyncBaseTransport | None:
    """The app's transport: aiohttp connecting to the checked addresses only (else httpx's)."""
    return AiohttpTransport(client=outbound.session) if outbound is not None else None


async def _capabilities(
    plan: SessionPlan, base_url: str, api_key: str | None, outbound: Outbound | None
) -> Capabilities:
    if not plan.check_capabilities:
        return NOT_CHECKED
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(
        headers=headers, timeout=60, trust_env=False, transport=_transport(outbound)
    ) as client:
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
