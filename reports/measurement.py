"""A plan's measurement plan (planner.analysis.measurement_plan) as text lines for the CLI and as a
section of the HTML/PDF report: the one-sentence verdict, the gaps, and the command lines."""

from __future__ import annotations

import html

from planner.analysis.measurement_plan import MeasurementPlan, Sweep
from reports.names import engine_name, gpu_name

_PRE = 'style="white-space: pre-wrap; overflow-wrap: anywhere; font-size: 5.5pt; margin: 2px 0"'
_HEAD = 'style="font-size: 8pt; margin: 6px 0 2px 0"'


def sweep_title(sweep: Sweep) -> str:
    """e.g. 'vllm on H100-SXM-80GB, TP 2: concurrency 1-128 (KV cache for about 67 streams)'."""
    levels = sweep.concurrencies
    span = f"{levels[0]}-{levels[-1]}" if len(levels) > 1 else f"{levels[0]}"
    memory = (
        f" (KV cache for about {sweep.max_streams_memory} streams)"
        if sweep.max_streams_memory is not None
        else ""
    )
    where = f"{engine_name(sweep.engine)} on {gpu_name(sweep.gpu)}"
    return f"{where}, TP {sweep.tp}: concurrency {span}{memory}"


def client_lines(sweep: Sweep) -> list[str]:
    """The lines for a team with its own client: start the server, run a loop, import."""
    start = [sweep.server_command] if sweep.server_command else []
    return [
        *start,
        sweep.vllm_bench_command,
        sweep.vllm_bench_import_command,
        sweep.aiperf_command,
        sweep.aiperf_import_command,
    ]


def measurement_text(plan: MeasurementPlan) -> list[str]:
    """The measurement plan as plain lines (commands unwrapped, ready to copy)."""
    first = plan.sweeps[0] if plan.sweeps else None
    workload = f" at ISL/OSL {first.isl}/{first.osl}" if first else ""
    estimate = [plan.estimate] if plan.estimate else []
    lines = [plan.headline, *estimate, "", f"What to measure{workload}:"]
    lines += [
        f"  {engine_name(gap.engine)} on {gpu_name(gap.gpu)}: {gap.reason}" for gap in plan.gaps
    ]
    lines += ["", "Sweep with capplan probe (starts the server, stops a sweep once it saturates):"]
    for sweep in plan.sweeps:
        lines += [f"# {sweep_title(sweep)}", sweep.probe_command]
    lines += [plan.import_command, "", "Or with vllm bench serve / AIPerf against the server:"]
    for sweep in plan.sweeps:
        lines += [f"# {sweep_title(sweep)}", *client_lines(sweep)]
    lines += [f"Note: {note}" for note in plan.notes]
    return lines


def measurement_section(plan: MeasurementPlan | None, title: str = "What to measure") -> list[str]:
    """The report's "What to measure" section (none when nothing is missing): the gaps, then
    the command lines small, as an appendix to copy from."""
    if plan is None:
        return []
    gaps = "".join(
        f"<li>{_e(engine_name(gap.engine))} on {_e(gpu_name(gap.gpu))}: {_e(gap.reason)}</li>"
        for gap in plan.gaps
    )
    probes = "\n".join(f"# {sweep_title(s)}\n{s.probe_command}" for s in plan.sweeps)
    clients = "\n".join("\n".join([f"# {sweep_title(s)}", *client_lines(s)]) for s in plan.sweeps)
    notes = "".join(f"<p>{_e(note)}</p>" for note in plan.notes)
    estimate = f"<p>{_e(plan.estimate)}</p>" if plan.estimate else ""
    body = (
        f"<p>{_e(plan.headline)}</p>{estimate}<ul>{gaps}</ul>"
        f"<h4 {_HEAD}>With capplan probe</h4><pre {_PRE}>{_e(probes)}\n"
        f"{_e(plan.import_command)}</pre>"
        f"<h4 {_HEAD}>With vllm bench serve or AIPerf</h4><pre {_PRE}>{_e(clients)}</pre>{notes}"
    )
    return [f'<section class="break"><h2>{_e(title)}</h2>{body}</section>']


def _e(text: str) -> str:
    return html.escape(text, quote=True)
