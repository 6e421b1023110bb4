"""`capplan runs --compare`: one deployment and workload measured by several tools, side by side,
with each value's ratio to a reference tool and what each tool means by its numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cli.common import fail, guard, out, print_json
from errors import InputError

if TYPE_CHECKING:
    from rich.table import Table

    from reports.client_compare import ClientComparison
    from reports.present import JsonDict
    from workflows.store import Engine


def print_comparisons(
    engine: Engine, reference: str | None, models: Sequence[str], *, as_json: bool
) -> None:
    """Compare every deployment and workload that two or more tools measured (of the models
    given, matched as the planner matches them; every model when none is)."""
    from reports.client_compare import compare_clients  # noqa: PLC0415
    from reports.tool_definitions import WHY_THEY_DIFFER  # noqa: PLC0415
    from workflows.planning import load_curves, model_names_like  # noqa: PLC0415

    _check_reference(reference)
    names = sorted({name for model in models for name in model_names_like(engine, model)})
    # No stored run of the models asked: nothing to compare, nothing read.
    curves = [] if models and not names else guard(lambda: load_curves(engine, names or None))
    comparisons = compare_clients(curves, reference)
    if as_json:
        print_json({"why_they_differ": WHY_THEY_DIFFER, "comparisons": _documents(comparisons)})
        return
    if not comparisons:
        out.print("No deployment and workload was measured by two or more tools.", markup=False)
        return
    from reports.terminal_tables import readable  # noqa: PLC0415

    for comparison in comparisons:
        title = f"{comparison.title()} · ratios to {comparison.reference}"
        out.print(title, markup=False, highlight=False)  # a line of its own: never folded
        out.print(readable(_table(comparison), out))
        unshared = comparison.no_shared_load_text()
        if unshared:
            out.print(unshared, markup=False, highlight=False)
        for line in _definition_lines(comparison):
            out.print(line, markup=False, highlight=False)
    out.print(WHY_THEY_DIFFER, markup=False, highlight=False)


def _check_reference(reference: str | None) -> None:
    from measurements.kinds import Source  # noqa: PLC0415

    tools = [str(source) for source in Source]
    if reference is not None and reference not in tools:
        message = f"unknown tool: expected one of {', '.join(tools)}"
        fail(InputError(message, field="--reference", value=reference))


def _table(comparison: ClientComparison) -> Table:
    from rich.table import Table  # noqa: PLC0415

    from reports.client_compare import HEADINGS  # noqa: PLC0415

    table = Table("load", "tool", *HEADINGS)
    for row in comparison.rows():
        cells = [_cell(value, ratio) for value, ratio in zip(row.values, row.ratios, strict=True)]
        table.add_row(row.load_text(), row.client or row.tool, *cells)
    return table


def _cell(value: float | None, ratio: float | None) -> str:
    if value is None:
        return "-"
    text = f"{value:,.1f}" if value >= 100 else f"{value:.2f}"
    return text if ratio is None else f"{text} (x{ratio:.2f})"


def _definition_lines(comparison: ClientComparison) -> list[str]:
    from reports.tool_definitions import definitions_for  # noqa: PLC0415

    lines = []
    for trace in comparison.traces:
        d = definitions_for(trace.tool)
        runs = trace.runs_text("({})")
        lines += [
            f"- {d.name} ({runs}): output tok/s: {d.output_tok_s}; duration: {d.duration}",
            f"  TTFT: {d.ttft}; TPOT: {d.tpot}; chunk gap: {d.chunk_gap}; tokens: {d.tokens}",
        ]
    return lines


def _documents(comparisons: list[ClientComparison]) -> list[JsonDict]:
    from dataclasses import asdict  # noqa: PLC0415

    from reports.client_compare import COMPARED  # noqa: PLC0415
    from reports.tool_definitions import definitions_for  # noqa: PLC0415

    return [
        {
            "model": c.model,
            "engine": c.engine,
            "gpu": c.gpu,
            "tp": c.tp,
            "workload": c.workload,
            "reference": c.reference,
            "no_shared_load": c.no_shared_load_text(),
            "tools": [
                {
                    "tool": t.tool,
                    "client": t.client,
                    "run_ids": list(t.run_ids),
                    "workloads": list(t.workloads),
                    "definitions": asdict(definitions_for(t.tool)),
                }
                for t in c.traces
            ],
            "rows": [
                {"tool": r.tool, "client": r.client, "load": r.kind}
                | {"concurrency" if r.kind == "concurrency" else "request_rate": r.concurrency}
                | dict(zip(COMPARED, r.values, strict=True))
                | {f"{n}_ratio": ratio for n, ratio in zip(COMPARED, r.ratios, strict=True)}
                for r in c.rows()
            ],
        }
        for c in comparisons
    ]
