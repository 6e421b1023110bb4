"""`capplan probe` and `capplan sim-server`: sweep a live endpoint, or serve the simulated
engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from cli.common import (
    JsonOption,
    app,
    err,
    guard,
    out,
    print_json,
    within,
)
from errors import InputError
from measurements.probe.defaults import PROBE_DEFAULTS as DEFAULT
from workflows.limits import PORT, TIME_SCALE

if TYPE_CHECKING:  # the probe, the simulator and the store load when a command runs
    from measurements.probe.request import ProbeRequest
    from team.roles import Actor
    from workflows.probe import ProbeResult
    from workflows.store import Engine

T = TypeVar("T")

# The flag that sets each ProbeRequest field, so an error names what was typed.
FLAGS = {
    "model": "--model",
    "isl_tokens": "--isl",
    "osl_tokens": "--osl",
    "out_path": "--out",
    "out": "--out",  # the sweep's own name for the run file
    "engine": "--engine",
    "base_url": "--base-url",
    "launch_command": "--launch",
    "concurrencies": "--concurrency",
    "rates_req_s": "--rate",
    "arrival": "--arrival",
    "burstiness": "--burstiness",
    "requests_per_level": "--requests-per-level",
    "duration_per_level_s": "--duration-per-level",
    "endpoint": "--endpoint",
    "length_distribution": "--length-distribution",
    "isl_stddev_tokens": "--isl-stddev",
    "osl_stddev_tokens": "--osl-stddev",
    "shape": "--shape",
    "prefix_sharing": "--prefix-sharing",
    "tokenizer": "--tokenizer",
    "api_key_env": "--api-key-env",
    "ignore_eos": "--ignore-eos",
    "stop_at_saturation": "--stop-at-saturation",
    "min_gain_pct": "--min-gain-pct",
    "ttft_blowup_factor": "--ttft-blowup",
    "check_capabilities": "--check-capabilities",
    "lora_adapter": "--lora-adapter",
    "engine_version": "--engine-version",
    "precision": "--precision",
    "gpu": "--gpu",
    "gpu_count": "--gpu-count",
    "tp": "--tp",
    "pp": "--pp",
    "connect_timeout_s": "--connect-timeout",
    "first_byte_timeout_s": "--first-byte-timeout",
    "chunk_timeout_s": "--chunk-timeout",
    "request_timeout_s": "--request-timeout",
    "force": "--force",
}

# The options of `capplan probe`, each parameter named after the ProbeRequest field it sets.
ModelOption = Annotated[str, typer.Option(help="Served model name sent in every request.")]
IslOption = Annotated[int, typer.Option("--isl", help="Prompt length, tokens (mean).")]
OslOption = Annotated[int, typer.Option("--osl", help="Output length, tokens (max_tokens).")]
OutOption = Annotated[Path, typer.Option("--out", help="RunFile written after every level.")]
EngineOption = Annotated[str, typer.Option("--engine", help="vllm, tensorrt-llm or other.")]
BaseUrlOption = Annotated[
    str | None, typer.Option(help="A server already running, e.g. http://127.0.0.1:8000.")
]
LaunchOption = Annotated[
    str | None,
    typer.Option("--launch", help='Start this server first, e.g. "vllm serve M --port 8000".'),
]
ConcurrencyOption = Annotated[
    str | None, typer.Option("--concurrency", help="Closed-loop levels, e.g. 1,2,4,8,16.")
]
RateOption = Annotated[
    str | None, typer.Option("--rate", help="Open-loop levels, requests/s, e.g. 1,2,4.")
]
ArrivalOption = Annotated[str, typer.Option(help="Open loop: poisson, gamma or constant.")]
BurstinessOption = Annotated[float, typer.Option(help="Gamma arrivals: < 1 burstier.")]
RequestsPerLevelOption = Annotated[
    int | None, typer.Option(help="Measured requests per level (default max(32, 8 x load)).")
]
DurationPerLevelOption = Annotated[
    float | None,
    typer.Option("--duration-per-level", help="Seconds per level instead of a request count."),
]
EndpointOption = Annotated[str, typer.Option(help="completions or chat.")]
LengthDistributionOption = Annotated[
    str, typer.Option(help="fixed, normal or lognormal (ISL and OSL).")
]
IslStddevOption = Annotated[
    float, typer.Option("--isl-stddev", help="Prompt length stddev, tokens.")
]
OslStddevOption = Annotated[
    float, typer.Option("--osl-stddev", help="Output length stddev, tokens.")
]
ShapeOption = Annotated[str, typer.Option(help="independent or agent-loop.")]
PrefixSharingOption = Annotated[bool, typer.Option(help="Every prompt opens with one prefix.")]
TokenizerOption = Annotated[
    str | None, typer.Option(help="Model dir or HF name with a local tokenizer.json.")
]
ApiKeyEnvOption = Annotated[
    str | None, typer.Option(help="NAME of the env var holding the API key.")
]
IgnoreEosOption = Annotated[bool, typer.Option(help="Fixed output length (ignore_eos).")]
StopAtSaturationOption = Annotated[
    bool, typer.Option(help="Stop climbing once throughput stops growing or TTFT explodes.")
]
MinGainPctOption = Annotated[
    float, typer.Option(help="Saturated when the next level adds less throughput than this %.")
]
TtftBlowupOption = Annotated[
    float,
    typer.Option(
        "--ttft-blowup",
        help="Saturated when p50 TTFT exceeds this multiple of the first level's.",
    ),
]
CheckCapabilitiesOption = Annotated[
    bool, typer.Option(help="Check structured output, tool calling and LoRA.")
]
LoraAdapterOption = Annotated[str | None, typer.Option(help="A LoRA adapter to request.")]
EngineVersionOption = Annotated[str | None, typer.Option(help="Engine version.")]
PrecisionOption = Annotated[str | None, typer.Option(help="fp8, bf16, ...")]
GpuOption = Annotated[str | None, typer.Option(help="GPU SKU (else from nvidia-smi).")]
GpuCountOption = Annotated[int | None, typer.Option(help="GPUs per replica.")]
TpOption = Annotated[int | None, typer.Option(help="Tensor-parallel size.")]
PpOption = Annotated[int | None, typer.Option(help="Pipeline-parallel size.")]
ConnectTimeoutOption = Annotated[
    float, typer.Option("--connect-timeout", help="Limit on opening a connection, seconds.")
]
FirstByteTimeoutOption = Annotated[
    float,
    typer.Option("--first-byte-timeout", help="Limit from send to the answer's headers, seconds."),
]
ChunkTimeoutOption = Annotated[
    float,
    typer.Option(
        "--chunk-timeout", help="Limit on silence between two reads of a stream, seconds."
    ),
]
RequestTimeoutOption = Annotated[
    float, typer.Option("--request-timeout", help="Whole-request limit, seconds.")
]
ForceOption = Annotated[
    bool, typer.Option("--force", help="Replace an existing --out file (else refused).")
]
StoreOption = Annotated[
    str | None, typer.Option("--db", help="Also store the run in this database.")
]
# The options of `capplan sim-server`.
PortOption = Annotated[int, typer.Option(help="Port to listen on.", callback=within(PORT))]
ProfileOption = Annotated[str, typer.Option(help="Simulator profile.")]
HostOption = Annotated[str, typer.Option(help="Address to bind.")]
TimeScaleOption = Annotated[
    float,
    typer.Option(
        help="Simulated seconds per real second (0.1 = 10x faster).", callback=within(TIME_SCALE)
    ),
]
# Not ProbeRequest fields: where to store the run, and how to print it.
NOT_REQUEST_FIELDS = ("db", "as_json")


@app.command("probe")
def probe_cmd(
    model: ModelOption,
    isl_tokens: IslOption,
    osl_tokens: OslOption,
    out_path: OutOption,
    engine: EngineOption = DEFAULT.engine,
    base_url: BaseUrlOption = DEFAULT.base_url,
    launch_command: LaunchOption = DEFAULT.launch_command,
    concurrencies: ConcurrencyOption = None,
    rates_req_s: RateOption = None,
    arrival: ArrivalOption = DEFAULT.arrival,
    burstiness: BurstinessOption = DEFAULT.burstiness,
    requests_per_level: RequestsPerLevelOption = DEFAULT.requests_per_level,
    duration_per_level_s: DurationPerLevelOption = DEFAULT.duration_per_level_s,
    endpoint: EndpointOption = DEFAULT.endpoint,
    length_distribution: LengthDistributionOption = DEFAULT.length_distribution,
    isl_stddev_tokens: IslStddevOption = DEFAULT.isl_stddev_tokens,
    osl_stddev_tokens: OslStddevOption = DEFAULT.osl_stddev_tokens,
    shape: ShapeOption = DEFAULT.shape,
    prefix_sharing: PrefixSharingOption = DEFAULT.prefix_sharing,
    tokenizer: TokenizerOption = DEFAULT.tokenizer,
    api_key_env: ApiKeyEnvOption = DEFAULT.api_key_env,
    ignore_eos: IgnoreEosOption = DEFAULT.ignore_eos,
    stop_at_saturation: StopAtSaturationOption = DEFAULT.stop_at_saturation,
    min_gain_pct: MinGainPctOption = DEFAULT.min_gain_pct,
    ttft_blowup_factor: TtftBlowupOption = DEFAULT.ttft_blowup_factor,
    check_capabilities: CheckCapabilitiesOption = DEFAULT.check_capabilities,
    lora_adapter: LoraAdapterOption = DEFAULT.lora_adapter,
    engine_version: EngineVersionOption = DEFAULT.engine_version,
    precision: PrecisionOption = DEFAULT.precision,
    gpu: GpuOption = DEFAULT.gpu,
    gpu_count: GpuCountOption = DEFAULT.gpu_count,
    tp: TpOption = DEFAULT.tp,
    pp: PpOption = DEFAULT.pp,
    connect_timeout_s: ConnectTimeoutOption = DEFAULT.connect_timeout_s,
    first_byte_timeout_s: FirstByteTimeoutOption = DEFAULT.first_byte_timeout_s,
    chunk_timeout_s: ChunkTimeoutOption = DEFAULT.chunk_timeout_s,
    request_timeout_s: RequestTimeoutOption = DEFAULT.request_timeout_s,
    force: ForceOption = DEFAULT.force,
    db: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Sweep a vLLM / TensorRT-LLM server (launched here or already running) and write a RunFile.

    Exits 1 when the server died mid-sweep (the levels measured so far are kept in --out).
    """
    # Taken first, so it holds exactly the parameters: each is named after its request field.
    given = dict(locals())
    fields = {name: value for name, value in given.items() if name not in NOT_REQUEST_FIELDS}
    request = guard(lambda: _flagged(lambda: _probe_request(fields)))
    open_store = None if db is None else (lambda: _open_store(db))
    # Storing is a planner's: the store's roles are read before the sweep, never after it.
    actor = None if db is None else guard(lambda: _probe_actor(db))
    result = guard(
        lambda: _flagged(lambda: _probe_with_progress(request, (open_store, actor), db, as_json))
    )
    _report_probe(result, as_json)
    if not result.outcome.complete:
        raise typer.Exit(1)


def _probe_request(fields: dict[str, object]) -> ProbeRequest:
    """The ProbeRequest the flags ask for (pydantic checks each value as the constructor does)."""
    from measurements.probe.request import ProbeRequest  # noqa: PLC0415

    return ProbeRequest.model_validate(fields)


def _flagged(action: Callable[[], T]) -> T:
    """Run an action; an InputError naming a ProbeRequest field names its flag instead."""
    try:
        return action()
    except InputError as exc:
        flag = FLAGS.get(exc.field or "")
        if flag is None:
            raise
        raise type(exc)(exc.message, file=exc.file, field=flag, value=exc.value) from None


def _probe_actor(db: str) -> Actor:
    from workflows.probe import probe_actor  # noqa: PLC0415
    from workflows.store import resolve_db_url  # noqa: PLC0415

    return probe_actor(resolve_db_url(db))


def _open_store(db: str) -> Engine:
    """The store, migrated; unguarded, so a refusal after the sweep reaches probe_endpoint,
    which says where the measured run is kept."""
    from workflows.store import open_store, resolve_db_url  # noqa: PLC0415

    return open_store(resolve_db_url(db))


def _probe_with_progress(
    request: ProbeRequest,
    store: tuple[Callable[[], Engine] | None, Actor | None],
    db: str | None,
    quiet: bool,
) -> ProbeResult:
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
    )

    from measurements.probe.level_run import ProgressEvent  # noqa: PLC0415
    from workflows.probe import probe_endpoint  # noqa: PLC0415
    from workflows.store import resolve_db_url  # noqa: PLC0415

    store_url = resolve_db_url(db)  # the store in use, stored into or not: never written over

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=err,
        disable=quiet,
        transient=False,
    ) as progress:
        tasks: dict[int, TaskID] = {}

        def show(event: ProgressEvent) -> None:
            name = (
                f"level {event.level_index + 1}/{event.levels_total}: {event.load_kind} "
                f"{event.load_value:g}"
            )
            if event.level_index not in tasks:
                tasks[event.level_index] = progress.add_task(
                    name, total=event.requests_total, status=""
                )
            tok_s = event.output_tok_s_so_far
            status = f"{tok_s:,.0f} tok/s" if tok_s is not None else ""
            if event.failures:
                status += f", {event.failures} failed"
            progress.update(tasks[event.level_index], completed=event.requests_done, status=status)

        open_store, actor = store
        return probe_endpoint(
            request, open_store=open_store, on_progress=show, store_url=store_url, actor=actor
        )


def _report_probe(result: ProbeResult, as_json: bool) -> None:
    from reports.present import run_to_dict  # noqa: PLC0415

    outcome, path, stored = result.outcome, result.out_path, result.stored
    if as_json:
        print_json(
            {
                "out": str(path),
                "complete": outcome.complete,
                "stop_reason": outcome.stop_reason,
                "knee": outcome.knee,
                "run_id": stored.run_id if stored else None,
                "run": run_to_dict(stored.run_id if stored else 0, None, outcome.run),
            }
        )
        return
    for level in outcome.run.levels:
        tok_s, ttft = level.value("output_tok_s"), level.value("p50_ttft_ms")
        out.print(
            f"{level.load_kind} {level.load_value:g}: "
            f"{'-' if tok_s is None else f'{tok_s:,.0f}'} output tok/s, p50 TTFT "
            f"{'-' if ttft is None else f'{ttft:,.1f}'} ms, {level.completed} ok, "
            f"{level.failed} failed",
            markup=False,
            highlight=False,
        )
    state = "complete" if outcome.complete else "INCOMPLETE"
    out.print(f"{state}: {outcome.stop_reason}; run file {path}", markup=False, highlight=False)
    if stored is not None:
        out.print(stored.message, markup=False, highlight=False)


@app.command("sim-server")
def sim_server_cmd(
    port: PortOption = 8000,
    profile: ProfileOption = "vllm-h100-llama70b-fp8",
    host: HostOption = "127.0.0.1",
    time_scale: TimeScaleOption = 1.0,
) -> None:
    """Serve a SIMULATED OpenAI-compatible engine (continuous batching, calibrated profiles).

    For demos, tests and client benchmarks; runs probed against it are labelled simulated.
    """
    from workflows.simulator import (  # noqa: PLC0415
        known_profiles,
        serve_simulator,
        simulator_profile,
    )

    chosen = guard(lambda: simulator_profile(profile))
    out.print(
        f"SIMULATED engine, profile {chosen.name} ({chosen.description}) on "
        f"http://{host}:{port}/v1 (known profiles: {', '.join(known_profiles())})",
        markup=False,
        highlight=False,
    )
    serve_simulator(host, port, profile, time_scale=time_scale)
