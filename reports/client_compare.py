"""Compare the clients: runs of one deployment and workload measured by different tools.

A deployment is (canonical model, engine, GPU, TP); the workload is its group within tokenisation
rounding (planner.curves.workload_groups), read from the ISL/OSL the tool was asked for where the
file states it. Each tool becomes one trace; every row carries its ratios to one reference tool at
the same load, a concurrency or a request rate (reports.tool_definitions says what each tool
means); when the tools share no load, the comparison says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from planner.curves.load import CurvePoint, LoadCurve
from planner.curves.workload_groups import curve_workloads

# The metrics side by side, as CurvePoint fields (TPOT is canonical: each tool's own decode
# metric), and their headings.
COMPARED = (
    "output_tok_s",
    "p50_ttft_ms",
    "p99_ttft_ms",
    "p50_tpot_ms",
    "p99_tpot_ms",
    "p50_icl_ms",
    "p99_icl_ms",
)
HEADINGS = (
    "output tok/s",
    "TTFT p50 ms",
    "TTFT p99 ms",
    "TPOT p50 ms",
    "TPOT p99 ms",
    "chunk gap p50 ms",
    "chunk gap p99 ms",
)
# The reference when none is asked for: the engine project's own client first.
DEFAULT_REFERENCES = ("vllm-bench", "probe", "aiperf", "guidellm")
UNKNOWN_TOOL = "unknown"
DeploymentKey = tuple[str, str, str | None, int | None]
CONCURRENCY, RATE = "concurrency", "rate"


@dataclass(frozen=True, slots=True)
class ToolTrace:
    """One tool's points for a deployment and workload (several runs merged by concurrency)."""

    tool: str
    client: str | None
    run_ids: tuple[int | None, ...]
    workloads: tuple[str, ...]  # the exact ISL/OSL of each run
    points: tuple[CurvePoint, ...]
    rate_points: tuple[CurvePoint, ...] = ()  # request-rate levels (concurrency: the rate)

    def at(self, concurrency: float, kind: str = CONCURRENCY) -> CurvePoint | None:
        """The point at this concurrency (or request rate), if the tool measured it."""
        points = self.points if kind == CONCURRENCY else self.rate_points
        return next((p for p in points if p.concurrency == concurrency), None)

    def loads(self) -> list[tuple[str, float]]:
        """(kind, value) of every level measured."""
        return [(CONCURRENCY, p.concurrency) for p in self.points] + [
            (RATE, p.concurrency) for p in self.rate_points
        ]

    def runs_text(self, workload_format: str = "{}") -> str:
        """'run 12 at 128/64, run 13 at 129/64' (workload_format wraps each workload)."""
        return ", ".join(
            f"run {run_id} {workload_format.format(workload)}"
            for run_id, workload in zip(self.run_ids, self.workloads, strict=True)
        )


@dataclass(frozen=True, slots=True)
class CompareRow:
    """One tool at one concurrency: its values and value / reference value (COMPARED order)."""

    tool: str
    client: str | None
    concurrency: float  # the load's value: streams, or requests/s for a rate row
    values: tuple[float | None, ...]
    ratios: tuple[float | None, ...]
    kind: str = CONCURRENCY

    def load_text(self) -> str:
        """'4' (concurrency) or '2 req/s' (a request rate)."""
        unit = "" if self.kind == CONCURRENCY else " req/s"
        return f"{self.concurrency:g}{unit}"


@dataclass(frozen=True, slots=True)
class ClientComparison:
    """One deployment and workload measured by two or more tools."""

    model: str
    engine: str
    gpu: str | None
    tp: int | None
    workload: str
    reference: str
    traces: tuple[ToolTrace, ...]

    tp_stated: bool = True  # False: some run states no TP (`tp` is its GPUs per replica)

    def title(self) -> str:
        """E.g. 'tiny-random-llama · vllm · GPU? · TP? · 128/64'."""
        tp = f"TP{self.tp}" if self.tp and self.tp_stated else "TP?"
        return f"{self.model} · {self.engine} · {self.gpu or 'GPU?'} · {tp} · {self.workload}"

    def rows(self) -> list[CompareRow]:
        """Every tool at every load it measured: concurrencies, then request rates, by value
        then tool."""
        reference = next(t for t in self.traces if t.tool == self.reference)
        rows = [
            _row(trace, point, reference.at(point.concurrency, kind), kind)
            for trace in self.traces
            for kind, points in ((CONCURRENCY, trace.points), (RATE, trace.rate_points))
            for point in points
        ]
        order = {trace.tool: n for n, trace in enumerate(self.traces)}
        return sorted(
            rows, key=lambda row: (row.kind != CONCURRENCY, row.concurrency, order[row.tool])
        )

    def shared_loads(self) -> list[tuple[str, float]]:
        """The loads two or more tools measured."""
        seen: dict[tuple[str, float], int] = {}
        for trace in self.traces:
            for load in dict.fromkeys(trace.loads()):
                seen[load] = seen.get(load, 0) + 1
        return sorted(load for load, count in seen.items() if count > 1)

    def no_shared_load_text(self) -> str | None:
        """Plainly, when the tools measured no load in common (None when they did)."""
        if self.shared_loads():
            return None
        ran = "; ".join(
            f"{trace.client or trace.tool} ran {_loads_text(trace.loads())}"
            for trace in self.traces
        )
        return (
            f"These tools share no load, so nothing here is compared like for like: {ran}. Run "
            "them at one concurrency or one request rate to compare them."
        )


def compare_clients(
    curves: Sequence[LoadCurve], reference: str | None = None
) -> list[ClientComparison]:
    """The deployments and workloads that two or more tools measured, one comparison each.

    `reference` names the tool the ratios divide by; where that tool did not measure a group,
    the first of DEFAULT_REFERENCES present is used (the comparison says which).
    """
    groups: dict[tuple[DeploymentKey, str], list[LoadCurve]] = {}
    for curve, workload in zip(curves, curve_workloads(curves), strict=True):
        groups.setdefault((_deployment(curve), workload), []).append(curve)
    comparisons = []
    for (deployment, workload), members in sorted(groups.items(), key=_order):
        traces = _traces(members)
        if len(traces) < 2:
            continue
        _, engine, gpu, tp = deployment
        tools = [trace.tool for trace in traces]
        chosen = _reference(tools, reference)
        traces = tuple(sorted(traces, key=lambda trace: trace.tool != chosen))  # reference first
        stated = all(member.key.tp is not None for member in members)
        comparisons.append(
            ClientComparison(
                members[0].key.model, engine, gpu, tp, workload, chosen, traces, stated
            )
        )
    return comparisons


def _deployment(curve: LoadCurve) -> DeploymentKey:
    key = curve.key
    return (key.model_id, key.engine, key.gpu, key.tp or curve.gpus_per_replica)


def _order(item: tuple[tuple[DeploymentKey, str], list[LoadCurve]]) -> tuple[str, ...]:
    (deployment, workload), _ = item
    return (*(str(part) for part in deployment), workload)


def _traces(curves: Sequence[LoadCurve]) -> tuple[ToolTrace, ...]:
    """One trace per tool; where runs of one tool share a concurrency, the newest run's point."""
    by_tool: dict[str, list[LoadCurve]] = {}
    for curve in curves:
        by_tool.setdefault(curve.source or UNKNOWN_TOOL, []).append(curve)
    traces = []
    for tool, runs in sorted(by_tool.items()):
        ordered = sorted(runs, key=lambda c: -1 if c.run_id is None else c.run_id)
        points = {point.concurrency: point for run in ordered for point in run.points}
        rates = {point.concurrency: point for run in ordered for point in run.rate_points}
        traces.append(
            ToolTrace(
                tool=tool,
                client=ordered[-1].client,
                run_ids=tuple(run.run_id for run in ordered),
                workloads=tuple(f"{run.key.isl or '?'}/{run.key.osl or '?'}" for run in ordered),
                points=tuple(points[c] for c in sorted(points)),
                rate_points=tuple(rates[r] for r in sorted(rates)),
            )
        )
    return tuple(traces)


def _reference(tools: Sequence[str], wanted: str | None) -> str:
    if wanted is not None and wanted in tools:
        return wanted
    return next((tool for tool in DEFAULT_REFERENCES if tool in tools), tools[0])


def _loads_text(loads: Sequence[tuple[str, float]]) -> str:
    concurrencies = [f"{value:g}" for kind, value in loads if kind == CONCURRENCY]
    rates = [f"{value:g}" for kind, value in loads if kind == RATE]
    said = [f"concurrency {', '.join(concurrencies)}"] if concurrencies else []
    said += [f"request rate {', '.join(rates)} req/s"] if rates else []
    return " and ".join(said) or "no load"


def _row(
    trace: ToolTrace, point: CurvePoint, reference: CurvePoint | None, kind: str
) -> CompareRow:
    values = tuple(getattr(point, name) for name in COMPARED)
    bases = tuple(None if reference is None else getattr(reference, n) for n in COMPARED)
    ratios = tuple(
        None if value is None or not base else value / base
        for value, base in zip(values, bases, strict=True)
    )
    return CompareRow(trace.tool, trace.client, point.concurrency, values, ratios, kind)
