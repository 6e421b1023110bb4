"""`capplan import` and `capplan runs`: store result files, list the stored runs a page at a
time."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import (
    DbOption,
    JsonOption,
    acting,
    app,
    err,
    fail,
    guard,
    open_engine,
    out,
    print_json,
    within,
)
from errors import InputError
from measurements.kinds import Provenance
from workflows.limits import CONCURRENCY, GPU_COUNT, PAGE_RUNS, PARALLEL, REQUEST_RATE, SKIP_RUNS

if TYPE_CHECKING:  # the importers, the store and rich's tables load when a command runs
    from collections.abc import Sequence

    from rich.table import Table

    from measurements.importers.common import DeploymentOverrides
    from workflows.ingest import FileOutcome
    from workflows.store import RunPage, RunSummary


# The options of `capplan import` (deployment facts a result file may not state).
PathsArgument = Annotated[
    list[Path],
    typer.Argument(help="Result files, result folders (read as the tools leave them) or zips."),
]
FormatOption = Annotated[str, typer.Option("--format", help="auto or a format id.")]
EngineOption = Annotated[str | None, typer.Option("--engine", help="vllm, tensorrt-llm, ...")]
EngineVersionOption = Annotated[str | None, typer.Option(help="Engine version.")]
ModelOption = Annotated[str | None, typer.Option(help="Model name (overrides the file).")]
PrecisionOption = Annotated[str | None, typer.Option(help="fp8, bf16, ...")]
GpuOption = Annotated[str | None, typer.Option(help="GPU SKU, e.g. H100-SXM-80GB.")]
GpuCountOption = Annotated[
    int | None, typer.Option(help="GPUs per replica.", callback=within(GPU_COUNT))
]
TpOption = Annotated[
    int | None, typer.Option(help="Tensor-parallel size.", callback=within(PARALLEL))
]
PpOption = Annotated[
    int | None, typer.Option(help="Pipeline-parallel size.", callback=within(PARALLEL))
]
ConcurrencyOption = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        help="Concurrency of files that do not state their load (CSV exports, per-request "
        "records); a file's own load is never replaced.",
        callback=within(CONCURRENCY),
    ),
]
RequestRateOption = Annotated[
    float | None,
    typer.Option(
        "--request-rate",
        help="Open-loop rate (req/s) of files that do not state their load.",
        callback=within(REQUEST_RATE),
    ),
]
ProvenanceOption = Annotated[Provenance, typer.Option(help="How the numbers were obtained.")]
NoMergeOption = Annotated[
    bool,
    typer.Option(
        "--no-merge",
        help="Keep one run per file (by default files of one deployment and workload, "
        "one per load level, become one run).",
    ),
]


@app.command("import")
def import_cmd(
    paths: PathsArgument,
    fmt: FormatOption = "auto",
    engine_name: EngineOption = None,
    engine_version: EngineVersionOption = None,
    model: ModelOption = None,
    precision: PrecisionOption = None,
    gpu: GpuOption = None,
    gpu_count: GpuCountOption = None,
    tp: TpOption = None,
    pp: PpOption = None,
    concurrency: ConcurrencyOption = None,
    request_rate: RequestRateOption = None,
    provenance: ProvenanceOption = Provenance.IMPORTED,
    no_merge: NoMergeOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import benchmark results (vLLM bench serve, AIPerf, guidellm, inference-perf, curve CSV,
    RunFile, ...): files, folders or zips into the store.

    All files are read and checked first; if any is bad nothing is stored. Files of one sweep
    (same deployment and workload, one load level each) become one run with several levels. In
    a folder or zip, one tool run is one stored run: its warm-up phase, the other exports of it
    and its logs and configs are left out (one line per folder says so).
    """
    facts: dict[str, object] = {
        "engine": engine_name,
        "engine_version": engine_version,
        "model": model,
        "precision": precision,
        "gpu": gpu,
        "gpu_count": gpu_count,
        "tp": tp,
        "pp": pp,
        "concurrency": concurrency,
        "request_rate": request_rate,
    }
    from workflows.ingest import IngestOptions, ingest, read_uploads  # noqa: PLC0415

    overrides = guard(lambda: _overrides(facts))
    options = IngestOptions(overrides, provenance, fmt, merge=not no_merge, atomic=True)
    uploads = guard(lambda: read_uploads(paths))
    engine = open_engine(db)
    actor = acting(engine)
    outcomes = guard(lambda: ingest(engine, uploads, options, actor=actor))
    _report_imports(outcomes, paths, as_json)


def _report_imports(outcomes: Sequence[FileOutcome], paths: Sequence[Path], as_json: bool) -> None:
    """One line per run or skipped side file (or one JSON document); nothing but side files is
    an error: no result file was given."""
    from workflows.ingest import IngestStatus  # noqa: PLC0415

    if outcomes and all(outcome.status is IngestStatus.SKIPPED for outcome in outcomes):
        names = ", ".join(path.name for path in paths)
        skipped = f"{len(outcomes)} file{'s' if len(outcomes) > 1 else ''} skipped"
        fail(InputError(f"no result file in {names} ({skipped}: logs, manifests, timestamps)"))
    if as_json:
        print_json([_import_row(outcome) for outcome in outcomes])
        return
    for outcome in outcomes:
        if outcome.status is IngestStatus.SKIPPED:
            continue
        said = outcome.message
        if outcome.detected is not None:
            said = f"{outcome.detected} -> {said}"
        out.print(f"{outcome.file}: {said}", markup=False, highlight=False)
        for missing in outcome.unplannable:
            err.print(
                f"warning: {outcome.file}: stored, but the planner cannot use it: {missing}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    _report_skipped(outcomes)


def _report_skipped(outcomes: Sequence[FileOutcome]) -> None:
    """The files left out, one line per folder (--json lists each with its reason)."""
    from workflows.ingest import IngestStatus  # noqa: PLC0415
    from workflows.result_folders import skipped_summary  # noqa: PLC0415

    skipped = [(o.file, o.message) for o in outcomes if o.status is IngestStatus.SKIPPED]
    for left_out in skipped_summary(skipped):
        out.print(left_out.line(), markup=False, highlight=False)


def _overrides(facts: dict[str, object]) -> DeploymentOverrides:
    from workflows.ingest import deployment_overrides  # noqa: PLC0415

    return deployment_overrides(facts, "command line")


def _import_row(outcome: FileOutcome) -> dict[str, object]:
    return {
        "file": outcome.file,
        "format": outcome.format_id,
        "detected": outcome.detected,
        "run_id": outcome.run_id,
        "created": outcome.created,
        "levels": outcome.levels,
        "samples": outcome.samples,
        "message": outcome.message,
        "unplannable": list(outcome.unplannable),
    }


# The options of `capplan runs` (a page of the runs the filters keep).
LimitOption = Annotated[
    int, typer.Option(help="Runs per page (oldest first).", callback=within(PAGE_RUNS))
]
OffsetOption = Annotated[
    int, typer.Option(help="Runs to skip before the page.", callback=within(SKIP_RUNS))
]
EnginesFilter = Annotated[
    list[str] | None, typer.Option("--engine", help="Only this engine (repeatable).")
]
GpusFilter = Annotated[list[str] | None, typer.Option(help="Only this GPU (repeatable).")]
ModelsFilter = Annotated[list[str] | None, typer.Option(help="Only this model (repeatable).")]
SearchOption = Annotated[
    str, typer.Option(help="Text in the label, file, notes, model or GPU (any case).")
]
CompareOption = Annotated[
    bool,
    typer.Option(
        "--compare",
        help="Compare the clients: per deployment and workload measured by two or more tools, "
        "output tok/s, TTFT and TPOT p50/p99 per tool and concurrency, with ratios to a "
        "reference tool and each tool's definitions (of the --model models, if given).",
    ),
]
ReferenceOption = Annotated[
    str | None,
    typer.Option(help="With --compare: the tool the ratios divide by (default vllm-bench)."),
]


@app.command("runs")
def runs_cmd(
    db: DbOption = None,
    as_json: JsonOption = False,
    limit: LimitOption = 250,
    offset: OffsetOption = 0,
    engine_name: EnginesFilter = None,
    gpu: GpusFilter = None,
    model: ModelsFilter = None,
    search: SearchOption = "",
    compare: CompareOption = False,
    reference: ReferenceOption = None,
) -> None:
    """List stored runs a page at a time (--limit, --offset) with the total the filters keep
    (with --json: the page's runs with their levels under canonical metric names); with
    --compare, the runs of one deployment and workload measured by different tools side by side."""
    from reports.present import run_to_dict  # noqa: PLC0415
    from workflows.store import RunFilter, load_runs, run_page  # noqa: PLC0415

    engine = open_engine(db)
    if compare:
        from cli.compare import print_comparisons  # noqa: PLC0415

        print_comparisons(engine, reference, model or [], as_json=as_json)
        return
    filters = RunFilter(
        engines=tuple(engine_name or ()),
        gpus=tuple(gpu or ()),
        models=tuple(model or ()),
        text=search,
    )
    page = guard(lambda: run_page(engine, filters, limit, offset))
    if as_json:
        counts = {r.run_id: r.samples for r in page.summaries}
        stored = guard(lambda: load_runs(engine, list(counts)))
        print_json([run_to_dict(s.run_id, s.imported_at, s.run, counts[s.run_id]) for s in stored])
        return
    from reports.terminal_tables import readable  # noqa: PLC0415

    out.print(readable(_runs_table(page.summaries), out, RUNS_DROP_ORDER))
    out.print(_page_line(page, offset), markup=False)


# What a narrow terminal leaves out of `capplan runs` first (the id, deployment and workload stay).
RUNS_DROP_ORDER = ("samples", "source", "label", "provenance", "levels")


def _runs_table(summaries: Sequence[RunSummary]) -> Table:
    """The terminal table of a page of runs."""
    from rich.table import Table  # noqa: PLC0415

    table = Table(
        "id",
        "source",
        "label",
        "engine",
        "model",
        "gpu",
        "tp",
        "isl/osl",
        "levels",
        "samples",
        "provenance",
    )
    for r in summaries:
        table.add_row(
            str(r.run_id),
            r.source,
            r.label or "",
            f"{r.engine} {r.engine_version or ''}".strip(),
            r.model,
            f"{r.gpu or '?'} x{r.gpu_count or '?'}",
            str(r.tp or "?"),
            f"{r.isl or '?'}/{r.osl or '?'}",
            str(r.levels),
            str(r.samples),
            r.provenance,
        )
    return table


def _page_line(page: RunPage, offset: int) -> str:
    """Which runs the page shows of how many, and the --offset of the next page."""
    shown = len(page.summaries)
    first = offset + 1 if shown else 0
    more = f"; --offset {offset + shown} for the next page" if offset + shown < page.total else ""
    return f"runs {first}-{offset + shown} of {page.total}{more}"
