"""What to measure when the stored curves cannot answer a scenario: which engine x GPU pairs have
no sound curve near its model, precision and ISL/OSL, and the sweeps (engine x GPU x TP at the
scenario's workload, concurrency levels) that would answer it, as ready-to-run command lines.

"No data" (no engine x GPU pair has a sound curve) is told apart from "the data says the SLA
cannot be met" (a pair was measured near the workload and fails): only the first is a gap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hardware.gpus import gpu_catalog
from measurements.probe import sweep_commands as cmd
from measurements.probe.sweep_commands import SweepSpec
from planner.curves.load import LoadCurve
from planner.curves.spelling import engine_name, gpu_name
from planner.inputs.scenario import Scenario
from planner.inputs.sla_targets import SLA_TARGET_BY_FIELD
from planner.physics.identity import same_or_twin
from planner.physics.roofline import ceilings
from planner.physics.workload_adjust import NEAR_MISS_RATIO
from planner.sizing.nodes import node_shape
from planner.sizing.options import Option, RejectedOption, SizedOption

TP_SIZES = (1, 2, 4, 8)
# A TP is worth sweeping when its KV cache holds at least this many streams of ISL + OSL.
MIN_STREAMS = 16
MAX_CONCURRENCY = 256
# TP sizes swept per engine x GPU when the scenario names none: the smallest that fits, its double.
TP_PER_PAIR = 2
UNKNOWN_TOP_CONCURRENCY = 128


@dataclass(frozen=True, slots=True)
class DataGap:
    """One engine x GPU pair with no sound measured curve for the scenario, and why; `modelled`:
    the serving model answers for it (a sweep there tightens the estimate, the plan stands)."""

    engine: str
    gpu: str
    reason: str
    modelled: bool = False


@dataclass(frozen=True, slots=True)
class Sweep:
    """One sweep to run and the command lines that run it (the server line is None for an
    engine capplan does not launch)."""

    engine: str
    gpu: str
    tp: int
    isl: int
    osl: int
    concurrencies: tuple[int, ...]
    max_streams_memory: int | None  # KV-cache estimate (planner.physics.roofline); None: unknown
    server_command: str | None
    probe_command: str
    vllm_bench_command: str
    vllm_bench_import_command: str
    aiperf_command: str
    aiperf_import_command: str


@dataclass(frozen=True, slots=True)
class MeasurementPlan:
    """The gaps in the stored data for a scenario and the sweeps that fill them."""

    no_data: bool  # no engine x GPU pair has a sound curve: the plan cannot answer at all
    headline: str  # one sentence, said first
    gaps: tuple[DataGap, ...]
    sweeps: tuple[Sweep, ...]
    import_command: str  # stores the probe's run files
    notes: tuple[str, ...]
    # With no data: what the model's physics and other models' efficiencies say, in one
    # sentence with its validated error (planner.analysis.capacity); None: not estimated.
    estimate: str | None = None


def plan_measurements(
    scenario: Scenario, options: Sequence[Option], curves: Sequence[LoadCurve]
) -> MeasurementPlan | None:
    """The measurement plan for the scenario's uncovered engine x GPU pairs (None: every pair
    has a sound curve, so the plan's answer, whatever it is, comes from data)."""
    gaps = [
        gap
        for engine in scenario.candidates.engines
        for gpu in scenario.candidates.gpus
        if (gap := _gap(scenario, engine, gpu, options, curves)) is not None
    ]
    if not gaps:
        return None
    notes: list[str] = []
    sweeps = [sweep for gap in gaps for sweep in _sweeps(scenario, gap, notes)]
    pairs = len(scenario.candidates.engines) * len(scenario.candidates.gpus)
    covered = pairs - sum(not gap.modelled for gap in gaps)
    return MeasurementPlan(
        no_data=covered == 0,
        headline=_headline(scenario, gaps, covered, len(sweeps)),
        gaps=tuple(gaps),
        sweeps=tuple(sweeps),
        import_command="capplan import runs/*.json",
        notes=tuple(dict.fromkeys(notes)),
    )


def is_sound(option: Option) -> bool:
    """Whether an option answers for its engine x GPU: sized (it meets the SLA on its data), or
    rejected on a curve of stated (or adjusted) workload that has every metric the SLA asks for.
    A rejection on a curve of unknown workload, or for want of a metric, is no answer."""
    if isinstance(option, SizedOption):
        return True
    key = option.curve.key
    if key.isl is None or key.osl is None:
        return False
    return not (isinstance(option, RejectedOption) and _unverifiable(option))


def _unverifiable(option: RejectedOption) -> bool:
    return option.reason.startswith("cannot verify")


def _gap(
    scenario: Scenario,
    engine: str,
    gpu: str,
    options: Sequence[Option],
    curves: Sequence[LoadCurve],
) -> DataGap | None:
    """Why no sound measured curve backs engine on gpu (None: one does)."""
    mine = [o for o in options if o.engine == engine and o.gpu == gpu]
    sound = [o for o in mine if is_sound(o)]
    if any(o.curve.basis_error is None for o in sound):
        return None
    if sound:
        nearest = _nearest_workload(scenario, engine, gpu, curves)
        where = f"nearest measured ISL/OSL {nearest[0]}/{nearest[1]}" if nearest else "estimated"
        return DataGap(engine, gpu, where, modelled=True)
    return DataGap(engine, gpu, _gap_reason(scenario, engine, gpu, mine, curves))


def _gap_reason(
    scenario: Scenario,
    engine: str,
    gpu: str,
    mine: Sequence[Option],
    curves: Sequence[LoadCurve],
) -> str:
    """Why no sound curve backs engine on gpu."""
    found = []
    unstated = [o for o in mine if o.curve.key.isl is None or o.curve.key.osl is None]
    if unstated:
        found.append("only curves that state no ISL/OSL")
    missing = sorted(
        {
            SLA_TARGET_BY_FIELD[name].label if name in SLA_TARGET_BY_FIELD else name
            for o in mine
            if isinstance(o, RejectedOption) and _unverifiable(o)
            for name in o.failed_targets
        }
    )
    if missing:
        found.append(f"no {' or '.join(missing)} measured")
    nearest = _nearest_workload(scenario, engine, gpu, curves)
    if nearest is not None:
        found.append(f"nearest measured ISL/OSL {nearest[0]}/{nearest[1]}")
    return "; ".join(found) or "no curve of this model and precision"


def _nearest_workload(
    scenario: Scenario, engine: str, gpu: str, curves: Sequence[LoadCurve]
) -> tuple[int, int] | None:
    """The stated ISL/OSL nearest the scenario's among the pair's curves of its model."""
    isl, osl = scenario.workload.isl, scenario.workload.osl
    best: tuple[float, int, int] | None = None
    for curve in curves:
        key = curve.key
        if key.engine != engine or key.gpu != gpu or key.isl is None or key.osl is None:
            continue
        if scenario.precision is not None and (key.precision or "") != scenario.precision:
            continue
        if not same_or_twin(key.model, scenario.model):
            continue
        distance = abs(math.log(key.isl / isl)) + abs(math.log(key.osl / osl))
        if best is None or distance < best[0]:
            best = (distance, key.isl, key.osl)
    return None if best is None else (best[1], best[2])


def _headline(scenario: Scenario, gaps: list[DataGap], covered: int, sweeps: int) -> str:
    model = scenario.model.rsplit("/", 1)[-1]
    workload = f"{scenario.workload.isl}/{scenario.workload.osl}"
    reasons = _reasons(gaps)
    run = f"run the {_count(sweeps, 'sweep')} below and plan again"
    if covered == 0:
        return (
            f"No measurements close enough to {model} at {workload} (within "
            f"{NEAR_MISS_RATIO:g}x of its ISL/OSL, with every metric the SLA needs): {reasons}; "
            f"{run}."
        )
    missing = [gap for gap in gaps if not gap.modelled]
    modelled = [gap for gap in gaps if gap.modelled]
    estimated = ""
    if modelled:
        estimated = (
            f"{_pairs(modelled)} {'is' if len(modelled) == 1 else 'are'} estimated by the "
            f"serving model from other workloads ({_reasons(modelled)})"
        )
    if not missing:
        return f"Not measured at {model} {workload}: {estimated}; {run} to measure it."
    also = f"; {estimated}" if estimated else ""
    return (
        f"Not measured close enough to {model} at {workload}: {_pairs(missing)} "
        f"({_reasons(missing)}); the plan compares only the rest{also}: {run} to add them."
    )


def _pairs(gaps: list[DataGap]) -> str:
    return ", ".join(f"{engine_name(gap.engine)} on {gpu_name(gap.gpu)}" for gap in gaps)


def _reasons(gaps: list[DataGap]) -> str:
    """Each gap's reasons once across the gaps: "only curves that state no ISL/OSL, ..."."""
    return ", ".join(dict.fromkeys(part for gap in gaps for part in gap.reason.split("; ")))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _sweeps(scenario: Scenario, gap: DataGap, notes: list[str]) -> list[Sweep]:
    workload = scenario.workload
    out = []
    for tp, streams in _tp_sizes(scenario, gap.gpu, notes):
        spec = SweepSpec(
            engine=gap.engine,
            model=scenario.model,
            precision=scenario.precision,
            gpu=gap.gpu,
            tp=tp,
            isl=workload.isl,
            osl=workload.osl,
            concurrencies=_levels(streams),
        )
        out.append(_sweep(spec, streams))
    if gap.engine == "tensorrt-llm" and (scenario.precision or "") == "fp8":
        notes.append(
            "trtllm-serve serves FP8 from an FP8 checkpoint (e.g. one quantized with NVIDIA "
            "ModelOpt): put its path in place of the model name in the TensorRT-LLM lines"
        )
    if gap.engine not in cmd.LAUNCHED_ENGINES:
        notes.append(f"start the {gap.engine} server yourself on port {cmd.PORT}")
    return out


def _sweep(spec: SweepSpec, streams: int | None) -> Sweep:
    return Sweep(
        engine=spec.engine,
        gpu=spec.gpu,
        tp=spec.tp,
        isl=spec.isl,
        osl=spec.osl,
        concurrencies=spec.concurrencies,
        max_streams_memory=streams,
        server_command=cmd.server_line(spec),
        probe_command=cmd.probe_line(spec),
        vllm_bench_command=cmd.vllm_bench_line(spec),
        vllm_bench_import_command=cmd.import_line(spec, "vllm-bench-c*.json"),
        aiperf_command=cmd.aiperf_line(spec),
        aiperf_import_command=cmd.import_line(spec, "aiperf-c*/profile_export_aiperf.json"),
    )


def _tp_sizes(scenario: Scenario, gpu: str, notes: list[str]) -> list[tuple[int, int | None]]:
    """The TP sizes to sweep on a GPU with the KV-cache streams each holds: the scenario's TP
    sizes, else the smallest that leaves room for MIN_STREAMS streams and its double."""
    per_node = node_shape(scenario.options, gpu).domain_gpus
    asked = scenario.candidates.tp
    sizes = [tp for tp in (asked or TP_SIZES) if tp <= per_node] or [per_node]
    spec = gpu_catalog().find(gpu)
    tokens = scenario.workload.isl + scenario.workload.osl
    streams: dict[int, int | None] = {}
    for tp in sizes:
        ceil = ceilings(scenario.model, scenario.precision, spec, tp) if spec else "no GPU specs"
        streams[tp] = None if isinstance(ceil, str) else ceil.max_streams(tokens)
    if any(count is None for count in streams.values()):
        notes.append(
            f"the model's size or precision is not in capplan's model catalog, so "
            f"the TP sizes on {gpu} are not narrowed by memory"
        )
        return list(streams.items())
    if asked:
        return list(streams.items())
    fitting = [tp for tp, count in streams.items() if count is not None and count >= MIN_STREAMS]
    if not fitting and streams[sizes[-1]] == 0:
        notes.append(
            f"{scenario.model} at {scenario.precision or 'its precision'} does not fit on "
            f"{sizes[-1]} x {gpu} with room for a KV cache: no sweep there (a larger NVLink "
            "domain or a smaller precision would)"
        )
        return []
    if not fitting:
        notes.append(f"the weights leave little KV-cache room on up to {sizes[-1]} x {gpu}")
        fitting = sizes[-1:]
    return [(tp, streams[tp]) for tp in fitting[:TP_PER_PAIR]]


def _levels(streams: int | None) -> tuple[int, ...]:
    """Powers of two from 1 to the first at or above the KV-cache estimate (MAX_CONCURRENCY at
    most); the probe stops early once throughput stops growing."""
    top = UNKNOWN_TOP_CONCURRENCY if streams is None else min(MAX_CONCURRENCY, max(streams, 1))
    levels = [1]
    while levels[-1] < top:
        levels.append(levels[-1] * 2)
    return tuple(levels)
