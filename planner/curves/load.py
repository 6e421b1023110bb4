"""Load curves: one deployment x workload as points per concurrency, built from a RunFile.

Only closed-loop (concurrency) levels become points; what was dropped or assumed is kept in flags.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from measurements.run_file import POWER_METRIC, Level, LoadKind, Origin, RunFile
from planner.curves.deployment import (
    attention_dp,
    expert_parallel,
    gpus_per_replica,
    launch_command,
    stated_kv_cache_dtype,
)
from planner.curves.kv_report import EngineKvReport, engine_kv_report
from planner.curves.names import canonical_engine, canonical_gpu, canonical_model

# The two shipped GPUs' names, for tests and benches; which GPUs exist is hardware's catalog.
H100 = "H100-SXM-80GB"
H200 = "H200-SXM-141GB"
# The words for a run of offline levels only: no points, a ceiling for its deployment's sweeps.
OFFLINE_ONLY = (
    "offline (max-throughput) only: a throughput ceiling for concurrency sweeps of the same "
    "deployment and workload, nothing to plan from by itself"
)


@dataclass(frozen=True, slots=True)
class CurveKey:
    """What was measured: deployment and workload facts (None where the source did not say)."""

    engine: str
    engine_version: str | None
    model: str
    precision: str | None
    gpu: str | None
    gpu_count: int | None
    tp: int | None
    isl: int | None
    osl: int | None
    attention_dp: int = 1  # attention data-parallel ranks in the replica (TensorRT-LLM, SGLang)
    ep: int | None = None  # expert-parallel size as stated; None: not stated
    # The model's identity for matching (canonical_model of `model`), set once here where the
    # key is built: every comparison of two keys' models reads it, none re-derives it.
    model_id: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "model_id", canonical_model(self.model))

    def parallel_text(self) -> str:
        """' DP8 EP8' beyond TP: attention data parallel and expert parallel, '' when neither."""
        dp = f" DP{self.attention_dp}" if self.attention_dp > 1 else ""
        return dp + (f" EP{self.ep}" if self.ep and self.ep > 1 else "")


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One concurrency level; bare ttft_ms/tpot_ms: the source did not state the statistic;
    mean_*: stated as a mean (never a percentile)."""

    concurrency: float
    output_tok_s: float | None = None
    p50_ttft_ms: float | None = None
    p99_ttft_ms: float | None = None
    ttft_ms: float | None = None
    p50_tpot_ms: float | None = None
    p99_tpot_ms: float | None = None
    tpot_ms: float | None = None
    p99_e2e_ms: float | None = None
    mean_ttft_ms: float | None = None
    mean_tpot_ms: float | None = None
    p50_icl_ms: float | None = None  # gap between stream chunks (vLLM `itl`, AIPerf ICL)
    p99_icl_ms: float | None = None
    p90_ttft_ms: float | None = None
    p90_tpot_ms: float | None = None
    p50_e2e_ms: float | None = None
    p90_e2e_ms: float | None = None
    mean_e2e_ms: float | None = None
    # Board power per GPU over the level, W (RunFile's mean_gpu_power_w): read for owning and a
    # site's power limit, never fitted (planner.analysis.measured_power).
    mean_gpu_power_w: float | None = None


# Per metric, the latency statistics a point carries -> CurvePoint attribute ("unstated": not said).
LATENCY_ATTRS: dict[str, dict[str, str]] = {
    "ttft": {s: f"{s}_ttft_ms" for s in ("p50", "p90", "p99", "mean")} | {"unstated": "ttft_ms"},
    "tpot": {s: f"{s}_tpot_ms" for s in ("p50", "p90", "p99", "mean")} | {"unstated": "tpot_ms"},
    "e2e": {s: f"{s}_e2e_ms" for s in ("p50", "p90", "p99", "mean")},
}
# Every measured value of a point the planner reads (the chunk gaps are only shown).
PLANNED_ATTRS: tuple[str, ...] = (
    "output_tok_s",
    *(attr for stats in LATENCY_ATTRS.values() for attr in stats.values()),
)


@dataclass(frozen=True, slots=True)
class BasisError:
    """The validated error (MAPE %) of a derived curve's estimate, per metric it sizes on."""

    output_tok_s_pct: float
    ttft_pct: float
    tpot_pct: float
    # Per metric (output tok/s, TTFT, TPOT): the error 80% of validated answers stayed within, %
    band80_pct: tuple[float, float, float] | None = None

    def slot_pct(self, slot: str) -> float:
        """The error of one fitted series (planner.sizing.draws.SLOTS); e2e follows TPOT and
        TTFT, whichever errs more."""
        return self._pick(slot, (self.output_tok_s_pct, self.ttft_pct, self.tpot_pct))

    def slot_band80_pct(self, slot: str) -> float | None:
        """The error 80% of validated answers stayed within for one series (None: not given)."""
        return None if self.band80_pct is None else self._pick(slot, self.band80_pct)

    @staticmethod
    def _pick(slot: str, values: tuple[float, float, float]) -> float:
        tok, ttft, tpot = values
        if slot in ("throughput", "output_tok_s"):
            return tok
        if slot.startswith("ttft"):
            return ttft
        if slot.startswith("tpot"):
            return tpot
        return max(ttft, tpot)

    def text(self) -> str:
        """'output tok/s 8%, TTFT 37%, TPOT 10%' (MAPE), with the 80% bounds where known."""
        text = (
            f"output tok/s {self.output_tok_s_pct:g}%, TTFT {self.ttft_pct:g}%, "
            f"TPOT {self.tpot_pct:g}%"
        )
        if self.band80_pct is None:
            return text
        tok, ttft, tpot = self.band80_pct
        return f"{text}; 80% of answers within {tok:g}% / {ttft:g}% / {tpot:g}%"


@dataclass(frozen=True, slots=True)
class LoadCurve:
    """Points of one run sorted by concurrency, with provenance and what was assumed."""

    key: CurveKey
    points: tuple[CurvePoint, ...]
    run_id: int | None
    provenance: str
    label: str | None
    cold_start_s: float | None
    engine_build_s: float | None
    gpus_per_replica: int | None  # None: neither TP nor GPU count stated (never guessed)
    flags: tuple[str, ...]
    kv_cache_dtype: str | None = None  # as the deployment stated it; None: not stated
    source: str | None = None  # the tool that measured it (RunFile.source: vllm-bench, guidellm...)
    client: str | None = None  # the client and its version as the file states them
    # Output tok/s of the run's offline (max-throughput) levels, the highest: a ceiling on the
    # curve, never a point of it; None: no offline level.
    ceiling_output_tok_s: float | None = None
    # The validated error of the estimate a derived curve is, where it carries its own (the
    # serving model's, by distance); None: its provenance's (planner.sizing.draws).
    basis_error: BasisError | None = None
    # Request-rate (open-loop) levels, sorted by rate: each point's `concurrency` field holds
    # the level's request rate in requests/s. Never read as concurrency points: the serving
    # model (planner.engine) calibrates on them and plans from them.
    rate_points: tuple[CurvePoint, ...] = ()
    # A projection onto a GPU with at least every resource of a GPU measured for the same
    # deployment: that measured curve's points, which the projection (and every error draw of
    # it) never falls behind (planner.curves.floor). Empty: no such bound.
    floor: tuple[CurvePoint, ...] = ()
    # The engine's own start-up KV-cache report (RunFile.startup); None: the run has none.
    engine_kv: EngineKvReport | None = None

    def label_text(self) -> str:
        """Short human label, e.g. 'vllm 0.7.3 · H100-SXM-80GB x1 · TP? · 1024/1024'."""
        key = self.key
        version = f" {key.engine_version}" if key.engine_version else ""
        count = f" x{key.gpu_count}" if key.gpu_count else ""
        tp = (f"TP{key.tp}" if key.tp else "TP?") + key.parallel_text()
        isl = str(key.isl) if key.isl else "?"
        osl = str(key.osl) if key.osl else "?"
        return f"{key.engine}{version} · {key.gpu or 'GPU?'}{count} · {tp} · {isl}/{osl}"

    def workload(self) -> tuple[int, int]:
        """(ISL, OSL), 1 where the source did not state one (for the physics' arithmetic)."""
        return self.key.isl or 1, self.key.osl or 1

    def concurrencies(self) -> tuple[float, ...]:
        """The measured concurrencies, ascending."""
        return tuple(point.concurrency for point in self.points)


def curve_from_run(
    run: RunFile, run_id: int | None = None, max_failure_rate: float = 0.05
) -> LoadCurve | None:
    """Build a LoadCurve from a run's concurrency and request-rate levels; None when no usable
    level remains."""
    flags: list[str] = []
    points = _points(run.levels, LoadKind.CONCURRENCY, max_failure_rate, flags)
    rates = _points(run.levels, LoadKind.RATE, max_failure_rate, flags)
    ceiling = offline_ceiling(run.levels)
    if not points and not rates and ceiling is None:
        return None
    if ceiling is not None:
        flags.append(
            f"offline (max-throughput) output {ceiling:,.0f} tok/s: a ceiling on the curve, not a "
            "concurrency level" + ("" if points or rates else f"; {OFFLINE_ONLY}")
        )
    if rates:
        listed = ", ".join(f"{p.concurrency:g}" for p in sorted(rates, key=_load))
        flags.append(
            f"request-rate levels at {listed} requests/s: planned through the serving model "
            "(the closed-loop curve is read from it, never from the rates directly)"
        )
    flags.extend(_stat_flags([*points, *rates]))
    flags.extend(_derived_throughput_flag(run.levels))
    if run.deployment.engine_args.get("simulated") == "true":
        flags.append("SIMULATED engine (capplan sim-server): not a measurement of real hardware")
    gpus = gpus_per_replica(run, flags)
    return LoadCurve(
        key=_key(run),
        points=tuple(sorted(points, key=_load)),
        run_id=run_id,
        provenance=str(run.provenance),
        label=run.label,
        cold_start_s=run.startup.cold_start_s,
        engine_build_s=run.startup.engine_build_s,
        gpus_per_replica=gpus,
        flags=tuple(flags),
        kv_cache_dtype=stated_kv_cache_dtype(run.deployment.engine_args, launch_command(run)),
        source=str(run.source),
        client=_client(run),
        ceiling_output_tok_s=ceiling,
        rate_points=tuple(sorted(rates, key=_load)),
        engine_kv=engine_kv_report(run.startup),
    )


def _load(point: CurvePoint) -> float:
    return point.concurrency


def scaled_ceiling(
    ceiling: float | None, old: Sequence[CurvePoint], new: Sequence[CurvePoint]
) -> float | None:
    """An offline ceiling carried to a derived curve (projected, workload-adjusted): scaled as
    the top level's output tok/s was; None without a ceiling or a level with throughput."""
    pairs = [
        (before.output_tok_s, after.output_tok_s)
        for before, after in zip(old, new, strict=True)
        if before.output_tok_s and after.output_tok_s
    ]
    if ceiling is None or not pairs:
        return None
    return ceiling * pairs[-1][1] / pairs[-1][0]


def offline_ceiling(levels: tuple[Level, ...]) -> float | None:
    """The highest output tok/s of the offline (max-throughput) levels; None without one."""
    found = [
        value
        for level in levels
        if level.load_kind is LoadKind.OFFLINE
        and (value := level.value("output_tok_s")) is not None
    ]
    return max(found) if found else None


def _client(run: RunFile) -> str | None:
    env = run.environment
    if env.client is None:
        return None
    return f"{env.client} {env.client_version}" if env.client_version else env.client


def _key(run: RunFile) -> CurveKey:
    dep = run.deployment
    return CurveKey(
        engine=canonical_engine(dep.engine),
        engine_version=dep.engine_version,
        model=dep.model,
        precision=dep.precision.lower() if dep.precision else None,
        gpu=canonical_gpu(dep.gpu) if dep.gpu else None,
        gpu_count=dep.gpu_count,
        tp=dep.tp,
        isl=run.workload.isl,
        osl=run.workload.osl,
        attention_dp=attention_dp(run),
        ep=expert_parallel(run),
    )


def _points(
    levels: tuple[Level, ...], kind: LoadKind, max_failure_rate: float, flags: list[str]
) -> list[CurvePoint]:
    """The levels of one load kind as points (a rate level's `concurrency` is its rate)."""
    points: list[CurvePoint] = []
    name = "concurrency" if kind is LoadKind.CONCURRENCY else "request rate"
    for level in levels:
        if level.load_kind is not kind:
            continue
        if not level.load_stated:
            flags.append(
                f"level at {level.load_value:g} left out: the source does not state its load"
            )
            continue
        if level.burst:
            flags.append(
                f"{name} {level.load_value:g} left out: every request was sent at once "
                "(a burst, not a steady state)"
            )
            continue
        failure_rate = level.failure_rate()
        if failure_rate is not None and failure_rate > max_failure_rate:
            flags.append(
                f"{name} {level.load_value:g} left out: failure rate "
                f"{failure_rate:.1%} is above {max_failure_rate:.1%}"
            )
            continue
        point = _point(level)
        if point is None:
            flags.append(f"{name} {level.load_value:g} left out: no throughput or latency")
            continue
        points.append(point)
    return points


def _point(level: Level) -> CurvePoint | None:
    values = {attr: level.value(attr) for attr in PLANNED_ATTRS}
    if all(value is None for value in values.values()):
        return None
    shown = {attr: level.value(attr) for attr in ("p50_icl_ms", "p99_icl_ms", POWER_METRIC)}
    return CurvePoint(concurrency=level.load_value, **values, **shown)


def _stat_flags(points: list[CurvePoint]) -> list[str]:
    flags: list[str] = []
    if any(p.ttft_ms is not None for p in points) and all(p.p99_ttft_ms is None for p in points):
        flags.append("TTFT statistic not stated by source (not known to be p50, p90, p99 or mean)")
    if any(p.tpot_ms is not None for p in points) and all(p.p99_tpot_ms is None for p in points):
        flags.append("TPOT statistic not stated by source (not known to be p50, p90, p99 or mean)")
    if all(p.output_tok_s is None for p in points):
        flags.append("no output tok/s measured: throughput cannot be planned from this run")
    return flags


def _derived_throughput_flag(levels: tuple[Level, ...]) -> list[str]:
    """Say so when output tok/s was computed from other numbers rather than measured."""
    derived = [
        level
        for level in levels
        if level.value("output_tok_s", Origin.REPORTED) is None
        and level.value("output_tok_s", Origin.RECOMPUTED) is None
        and level.value("output_tok_s", Origin.DERIVED) is not None
    ]
    if not derived:
        return []
    return [f"output tok/s derived from other numbers (not measured) at {len(derived)} level(s)"]
