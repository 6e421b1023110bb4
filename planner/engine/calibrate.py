"""Calibrating the serving model on a deployment's measured levels (concurrency and request-rate
alike, every workload of the deployment together): the six efficiencies of planner.engine.step,
fitted in log space with the physics priors as soft constraints (so two or three levels
suffice), their covariance, the spread of what the model still misses per metric, and the
tail-to-centre ratios of TTFT and TPOT the levels show. Cached by its data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from planner.engine.spec import EngineSpec
from planner.engine.step import (
    PARAM_NAMES,
    PRIOR_LOG_SD,
    PRIOR_MEDIAN,
    Array,
    SteadyState,
    StepParams,
    closed_loop,
    open_loop,
)
from planner.fitting.kept import CALIBRATIONS, KeptResults, finite_reals, keep, kept, key_of

CONCURRENCY = "concurrency"
RATE = "rate"
# What one level's numbers are trusted to, in log space: the weights of the fit.
_METRIC_SD = {"output_tok_s": 0.04, "tpot": 0.05, "ttft": 0.15}
# Tails where no level states both a centre and a tail (engineering defaults, said as such).
DEFAULT_TTFT_P99_RATIO = 1.8
DEFAULT_TPOT_P99_RATIO = 1.15
_SPREAD_FLOOR = 0.02
# No engine reads memory faster than its bandwidth or multiplies faster than its peak: eta_bw
# and eta_f are at most 1 (log 0); the overheads and the other factors are free.
_UPPER = np.array([0.0, 0.0, np.inf, np.inf, np.inf, np.inf, np.inf])
_LOWER = np.full(7, -np.inf)


@dataclass(frozen=True, slots=True)
class Observation:
    """One measured level: its load and workload, and the numbers it states (None: not stated).

    `ttft_s`/`tpot_s` are the centre (mean, p50 or an unstated statistic); the p99s apart."""

    load_kind: str  # CONCURRENCY or RATE
    load: float
    isl: float
    osl: float
    output_tok_s: float | None = None
    ttft_s: float | None = None
    tpot_s: float | None = None
    p99_ttft_s: float | None = None
    p99_tpot_s: float | None = None


@dataclass(frozen=True, slots=True)
class Calibration:
    """The fitted parameters of one deployment and how far to trust them."""

    params: StepParams
    log_cov: tuple[tuple[float, ...], ...]  # covariance of the log parameters
    spread: tuple[tuple[str, float], ...]  # log-space residual SD per metric the data had
    ttft_p99_ratio: float
    tpot_p99_ratio: float
    ratios_measured: bool  # False: the default tail ratios (no level stated both)
    levels: int
    workloads: int
    max_concurrency: float | None  # the highest concurrency measured (None: rate levels only)
    max_rate: float | None

    def spread_of(self, metric: str) -> float:
        """Residual SD (log) for a metric; the mean of the others when the data had none."""
        found = dict(self.spread)
        if metric in found:
            return found[metric]
        return float(np.mean(list(found.values()))) if found else 0.1


def steady(
    spec: EngineSpec, p: StepParams, kind: str, load: Array, *, isl: Array, osl: Array
) -> SteadyState:
    """The steady state at loads of one kind."""
    if kind == RATE:
        return open_loop(spec, p, load, isl, osl)
    return closed_loop(spec, p, load, isl, osl)


def share_calibrations(shared: KeptResults | None) -> None:
    """Read and keep calibrations in `shared` as well as in memory (None: memory only)."""
    keep(CALIBRATIONS, shared)


def calibrate(spec: EngineSpec, observations: Sequence[Observation]) -> Calibration:
    """The calibration of a deployment on its levels (cached by spec and levels: in memory, and
    where one is shared, across processes)."""
    return _calibrate(spec, tuple(sorted(observations, key=_order)))


def clear_calibration_cache() -> None:
    """Forget every calibration held in memory (benchmarks time a cold plan with it; a shared
    store is the caller's to leave out)."""
    _calibrate.cache_clear()


@lru_cache(maxsize=1024)
def _calibrate(spec: EngineSpec, observations: tuple[Observation, ...]) -> Calibration:
    shared = kept(CALIBRATIONS)
    if shared is None:
        return _fitted(spec, observations)
    key = calibration_key(spec, observations)
    read = calibration_from_json(shared.get(key), len(observations))
    if read is not None:
        return read
    made = _fitted(spec, observations)
    shared.put(key, calibration_to_json(made))
    return made


def calibration_key(spec: EngineSpec, observations: tuple[Observation, ...]) -> str:
    """What a calibration is a function of, besides the planner's code (the shared store keeps
    calibrations per version of that code): the spec and the levels."""
    return key_of(f"{spec!r}\n{observations!r}")


def calibration_to_json(cal: Calibration) -> dict[str, object]:
    """A calibration as plain JSON values (floats, ints, bools, lists)."""
    return {
        "params": [float(v) for v in cal.params.vector()],
        "log_cov": [list(row) for row in cal.log_cov],
        "spread": [[name, value] for name, value in cal.spread],
        "ttft_p99_ratio": cal.ttft_p99_ratio,
        "tpot_p99_ratio": cal.tpot_p99_ratio,
        "ratios_measured": cal.ratios_measured,
        "levels": cal.levels,
        "workloads": cal.workloads,
        "max_concurrency": cal.max_concurrency,
        "max_rate": cal.max_rate,
    }


def calibration_from_json(value: object, levels: int) -> Calibration | None:
    """A kept calibration back, or None for anything that is not exactly what
    calibration_to_json writes for these levels (a damaged or foreign file is recomputed)."""
    if not isinstance(value, dict) or not _well_formed(value, levels):
        return None
    return Calibration(
        params=StepParams.from_vector(np.array(value["params"], dtype=np.float64)),
        log_cov=tuple(tuple(float(v) for v in row) for row in value["log_cov"]),
        spread=tuple((str(name), float(sd)) for name, sd in value["spread"]),
        ttft_p99_ratio=float(value["ttft_p99_ratio"]),
        tpot_p99_ratio=float(value["tpot_p99_ratio"]),
        ratios_measured=bool(value["ratios_measured"]),
        levels=int(value["levels"]),
        workloads=int(value["workloads"]),
        max_concurrency=_real_or_none(value["max_concurrency"]),
        max_rate=_real_or_none(value["max_rate"]),
    )


def _well_formed(value: dict[str, object], levels: int) -> bool:
    if set(value) != _JSON_FIELDS:
        return False
    params, cov, spread = value["params"], value["log_cov"], value["spread"]
    width = len(PARAM_NAMES)
    maxima = [m for m in (value["max_concurrency"], value["max_rate"]) if m is not None]
    counts = (value["levels"], value["workloads"])
    return (
        finite_reals(params, width)
        and all(p > 0 for p in params)  # type: ignore[attr-defined]
        and isinstance(cov, list)
        and len(cov) == width
        and all(finite_reals(row, width) for row in cov)
        and isinstance(spread, list)
        and all(
            isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
            for item in spread
        )
        # one spread per metric the model knows, each once
        and len({item[0] for item in spread} & set(_METRIC_SD)) == len(spread)
        and finite_reals([item[1] for item in spread])
        and finite_reals([value["ttft_p99_ratio"], value["tpot_p99_ratio"], *maxima])
        and isinstance(value["ratios_measured"], bool)
        and all(isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in counts)
        and counts[0] == levels
    )


_JSON_FIELDS = frozenset(
    {
        "params",
        "log_cov",
        "spread",
        "ttft_p99_ratio",
        "tpot_p99_ratio",
        "ratios_measured",
        "levels",
        "workloads",
        "max_concurrency",
        "max_rate",
    }
)


def _real_or_none(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _fitted(spec: EngineSpec, observations: tuple[Observation, ...]) -> Calibration:
    groups = _groups(observations)
    prior = np.log(np.array(PRIOR_MEDIAN))
    sd = np.array(PRIOR_LOG_SD)

    def residuals(theta: Array) -> Array:
        params = StepParams.from_vector(np.exp(theta))
        data = _data_residuals(spec, params, groups)
        return np.concatenate([data, (theta - prior) / sd])

    # Imported here: a plan whose calibrations are all kept loads no optimiser (a new
    # `capplan plan` starts faster by the 0.5-1 s scipy.optimize takes to import).
    from scipy.optimize import least_squares  # noqa: PLC0415

    fit = least_squares(
        residuals,
        prior,
        method="trf",
        x_scale=sd,
        max_nfev=400,
        bounds=(_LOWER, _UPPER),
        # log-space parameters to 1e-6: far below what any level pins them to
        xtol=1e-6,
        ftol=1e-6,
    )
    params = StepParams.from_vector(np.exp(fit.x))
    data = _data_residuals(spec, params, groups)
    n_data = max(len(data), 1)
    scale = max(float(np.sum(data**2)) / max(n_data - 2, 1), 0.1)
    jac = fit.jac
    cov = np.linalg.pinv(jac.T @ jac) * scale
    spread = _spreads(spec, params, groups)
    ttft_ratio, tpot_ratio, measured = _tail_ratios(spec, params, observations)
    conc = [o.load for o in observations if o.load_kind == CONCURRENCY]
    rates = [o.load for o in observations if o.load_kind == RATE]
    return Calibration(
        params=params,
        log_cov=tuple(tuple(float(v) for v in row) for row in cov),
        spread=spread,
        ttft_p99_ratio=ttft_ratio,
        tpot_p99_ratio=tpot_ratio,
        ratios_measured=measured,
        levels=len(observations),
        workloads=len({(o.isl, o.osl) for o in observations}),
        max_concurrency=max(conc) if conc else None,
        max_rate=max(rates) if rates else None,
    )


_Group = tuple[str, Array, Array, Array, dict[str, Array]]


def _groups(observations: tuple[Observation, ...]) -> list[_Group]:
    """Levels by load kind as arrays: (kind, load, isl, osl, {metric: measured, nan = none})."""
    out = []
    for kind in (CONCURRENCY, RATE):
        chosen = [o for o in observations if o.load_kind == kind]
        if not chosen:
            continue
        measured = {
            "output_tok_s": _column([o.output_tok_s for o in chosen]),
            "tpot": _column([o.tpot_s for o in chosen]),
            "ttft": _column([o.ttft_s for o in chosen]),
        }
        out.append(
            (
                kind,
                _column([o.load for o in chosen]),
                _column([o.isl for o in chosen]),
                _column([o.osl for o in chosen]),
                measured,
            )
        )
    return out


def _predicted(state: SteadyState) -> dict[str, Array]:
    return {"output_tok_s": state.output_tok_s, "tpot": state.tpot_s, "ttft": state.ttft_s}


def _log_errors(spec: EngineSpec, p: StepParams, group: _Group) -> dict[str, Array]:
    """log(predicted / measured) per metric of a group; nan where not measured (or overloaded:
    a measured level the model cannot serve counts as a miss of 1 in log space)."""
    kind, load, isl, osl, measured = group
    predicted = _predicted(steady(spec, p, kind, load, isl=isl, osl=osl))
    out = {}
    for metric, values in measured.items():
        with np.errstate(divide="ignore", invalid="ignore"):
            error = np.log(predicted[metric] / values)
        error = np.where(np.isnan(values), np.nan, np.where(np.isfinite(error), error, 1.0))
        out[metric] = error
    return out


def _data_residuals(spec: EngineSpec, p: StepParams, groups: list[_Group]) -> Array:
    parts = []
    for group in groups:
        for metric, error in _log_errors(spec, p, group).items():
            parts.append(error[~np.isnan(error)] / _METRIC_SD[metric])
    return np.concatenate(parts) if parts else np.zeros(0)


def _spreads(
    spec: EngineSpec, p: StepParams, groups: list[_Group]
) -> tuple[tuple[str, float], ...]:
    pooled: dict[str, list[float]] = {}
    for group in groups:
        for metric, error in _log_errors(spec, p, group).items():
            pooled.setdefault(metric, []).extend(error[~np.isnan(error)].tolist())
    return tuple(
        (metric, max(math.sqrt(float(np.mean(np.square(values)))), _SPREAD_FLOOR))
        for metric, values in sorted(pooled.items())
        if values
    )


def _tail_ratios(
    spec: EngineSpec, p: StepParams, observations: tuple[Observation, ...]
) -> tuple[float, float, bool]:
    """p99 / predicted centre for TTFT and TPOT, geometric means over the levels stating a p99."""
    found: dict[str, list[float]] = {"ttft": [], "tpot": []}
    for kind in (CONCURRENCY, RATE):
        chosen = [o for o in observations if o.load_kind == kind]
        if not chosen:
            continue
        arrays = (_column([o.load for o in chosen]), _column([o.isl for o in chosen]))
        state = steady(
            spec, p, kind, arrays[0], isl=arrays[1], osl=_column([o.osl for o in chosen])
        )
        for metric, predicted, tails in (
            ("ttft", state.ttft_s, [o.p99_ttft_s for o in chosen]),
            ("tpot", state.tpot_s, [o.p99_tpot_s for o in chosen]),
        ):
            found[metric].extend(
                math.log(tail / float(centre))
                for tail, centre in zip(tails, predicted, strict=True)
                if tail and np.isfinite(centre)
            )
    ttft = math.exp(float(np.mean(found["ttft"]))) if found["ttft"] else DEFAULT_TTFT_P99_RATIO
    tpot = math.exp(float(np.mean(found["tpot"]))) if found["tpot"] else DEFAULT_TPOT_P99_RATIO
    return max(ttft, 1.0), max(tpot, 1.0), bool(found["ttft"] or found["tpot"])


def _column(values: list[float | None]) -> Array:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)


def _order(obs: Observation) -> tuple[str, float, float, float]:
    return obs.load_kind, obs.isl, obs.osl, obs.load
