"""Physics no answer may break, as pure checks: each takes answers read at loads and returns the
reasons it breaks (empty: it holds). A faster GPU is never slower, throughput never falls below
the cache's capacity and flattens past it, TTFT never falls as load rises, every centre lies in
its own band, and nothing beats the roofline.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

from planner.physics.roofline import Ceilings

# Relative slack before a check calls a difference a break: float noise and bisection, not physics.
TOLERANCE = 1e-6
Values = tuple[float | None, ...]


@dataclass(frozen=True, slots=True)
class Band:
    """One metric at each load: the centre and its band (empty or None: no band said)."""

    centre: Values
    low: Values = ()
    high: Values = ()


@dataclass(frozen=True, slots=True)
class Series:
    """One answer read at loads of one kind (None or nan: nothing said at that load)."""

    label: str  # the deployment in words, for the reasons
    load_kind: str  # "concurrency" or "rate"
    loads: tuple[float, ...]
    output_tok_s: Band
    ttft_ms: Band
    tpot_ms: Band
    running: tuple[float, ...] = ()  # sequences decoding together at each load, when known
    e2e_ms: Band = Band(())  # request latency, when said


def known(value: float | None) -> float | None:
    """The value when it is a finite number, else None."""
    return value if value is not None and math.isfinite(value) else None


def _at(values: Values, index: int) -> float | None:
    return known(values[index]) if index < len(values) else None


def _pairs(series: Series, values: Values) -> Iterator[tuple[float, float, float, float]]:
    """(load, value, next load, next value) over consecutive loads with values, by load."""
    said = sorted(
        (load, value)
        for i, load in enumerate(series.loads)
        if (value := _at(values, i)) is not None
    )
    yield from ((a, va, b, vb) for (a, va), (b, vb) in pairwise(said) if b > a)


def _metrics(series: Series) -> tuple[tuple[str, Band], ...]:
    return (
        ("output tok/s", series.output_tok_s),
        ("TTFT ms", series.ttft_ms),
        ("TPOT ms", series.tpot_ms),
        ("e2e ms", series.e2e_ms),
    )


def bands_hold(series: Series, tol: float = TOLERANCE) -> list[str]:
    """Reasons some centre lies outside its own band (low <= centre <= high)."""
    out: list[str] = []
    for name, band in _metrics(series):
        for i, load in enumerate(series.loads):
            centre, low, high = _at(band.centre, i), _at(band.low, i), _at(band.high, i)
            if centre is None:
                continue
            below = low is not None and low > centre * (1.0 + tol)
            above = high is not None and centre > high * (1.0 + tol)
            if below or above:
                out.append(
                    f"{series.label}: {name} {centre:.6g} at {series.load_kind} {load:g} lies "
                    f"outside its own band [{low}, {high}]"
                )
    return out


def throughput_rises(
    series: Series, capacity_seqs: float | None = None, tol: float = TOLERANCE
) -> list[str]:
    """Reasons output tok/s falls as load rises (below `capacity_seqs` when given), or, at
    concurrencies at or past it, moves at all (it must flatten there)."""
    out: list[str] = []
    cap = math.inf if capacity_seqs is None else capacity_seqs
    closed = series.load_kind == "concurrency"
    for a, va, b, vb in _pairs(series, series.output_tok_s.centre):
        if closed and a >= cap:
            if abs(vb - va) > tol * max(va, vb):
                out.append(
                    f"{series.label}: output tok/s does not flatten past the capacity of "
                    f"{cap:.4g} sequences: {va:.6g} at concurrency {a:g}, {vb:.6g} at {b:g}"
                )
        elif vb < va * (1.0 - tol):
            out.append(
                f"{series.label}: output tok/s falls as {series.load_kind} rises: "
                f"{va:.6g} at {a:g}, {vb:.6g} at {b:g}"
            )
    return out


def ttft_rises(series: Series, tol: float = TOLERANCE) -> list[str]:
    """Reasons TTFT falls as load rises."""
    return [
        f"{series.label}: TTFT falls as {series.load_kind} rises: "
        f"{va:.6g} ms at {a:g}, {vb:.6g} ms at {b:g}"
        for a, va, b, vb in _pairs(series, series.ttft_ms.centre)
        if vb < va * (1.0 - tol)
    ]


def under_roofline(
    series: Series, ceil: Ceilings, isl: int, osl: int, tol: float = TOLERANCE
) -> list[str]:
    """Reasons some centre beats the deployment's roofline: output tok/s above the aggregate
    ceiling at its concurrency (a rate's running sequences), one stream faster than the
    single-stream decode ceiling, or TTFT below the prefill floor."""
    out: list[str] = []
    floor = ceil.min_prefill_ms(isl)
    single = ceil.decode_tok_s_single_stream
    where = f"{ceil.tp} x {ceil.gpu}"
    for i, load in enumerate(series.loads):
        at = f"{series.load_kind} {load:g}"
        output = _at(series.output_tok_s.centre, i)
        streams = load if series.load_kind == "concurrency" else _at(series.running, i)
        if output is not None and streams is not None:
            most = ceil.max_output_tok_s(streams, isl, osl)
            if output > most * (1.0 + tol):
                out.append(
                    f"{series.label}: {output:.6g} output tok/s at {at} is above the roofline "
                    f"of {most:.6g} tok/s on {where}"
                )
        tpot = _at(series.tpot_ms.centre, i)
        if tpot is not None and tpot > 0 and 1000.0 / tpot > single * (1.0 + tol):
            out.append(
                f"{series.label}: one stream at {1000.0 / tpot:.6g} tok/s (TPOT {tpot:.4g} ms) at "
                f"{at} is above the single-stream decode ceiling of {single:.6g} tok/s on {where}"
            )
        ttft = _at(series.ttft_ms.centre, i)
        if ttft is not None and floor is not None and ttft < floor * (1.0 - tol):
            out.append(
                f"{series.label}: TTFT {ttft:.6g} ms at {at} is below the prefill floor of "
                f"{floor:.6g} ms for {isl} prompt tokens on {where}"
            )
    return out


def no_worse(
    fast: Series, slow: Series, tol: float = TOLERANCE, tpot_within: float = math.inf
) -> list[str]:
    """Reasons `fast` (on a GPU with every resource of `slow`'s, the same deployment and loads)
    serves some load slower: less output tok/s, more TTFT, e2e or TPOT, or no answer where
    `slow` serves it. TPOT only at loads up to `tpot_within` (the slower GPU's capacity: past
    it the larger cache of `fast` runs more sequences per step, so each step may take longer
    while the queue, TTFT and e2e shrink)."""
    out: list[str] = []
    by_load = {load: i for i, load in enumerate(slow.loads)}
    for j, load in enumerate(fast.loads):
        i = by_load.get(load)
        if i is None:
            continue
        for name, (f_band, s_band), higher_is_better in (
            ("output tok/s", (fast.output_tok_s, slow.output_tok_s), True),
            ("TTFT ms", (fast.ttft_ms, slow.ttft_ms), False),
            ("TPOT ms", (fast.tpot_ms, slow.tpot_ms), False),
            ("e2e ms", (fast.e2e_ms, slow.e2e_ms), False),
        ):
            if name == "TPOT ms" and load > tpot_within:
                continue
            reason = _worse(name, _at(f_band.centre, j), _at(s_band.centre, i), higher_is_better)
            if reason is not None and _beyond(reason[1], reason[2], higher_is_better, tol):
                out.append(
                    f"{fast.label} vs {slow.label}: {reason[0]} at {fast.load_kind} {load:g}"
                )
    return out


def _worse(
    name: str, fast: float | None, slow: float | None, higher_is_better: bool
) -> tuple[str, float, float] | None:
    """(words, fast, slow) when both are said, or the fast side says nothing where the slow
    side serves (inf stands for the missing answer)."""
    if slow is None:
        return None
    if fast is None:
        missing = -math.inf if higher_is_better else math.inf
        return (f"no {name} where the slower GPU gives {slow:.6g}", missing, slow)
    return (f"{name} {fast:.6g} on the faster GPU, {slow:.6g} on the slower", fast, slow)


def _beyond(fast: float, slow: float, higher_is_better: bool, tol: float) -> bool:
    if higher_is_better:
        return fast < slow * (1.0 - tol)
    return fast > slow * (1.0 + tol)


__all__ = [
    "TOLERANCE",
    "Band",
    "Series",
    "bands_hold",
    "no_worse",
    "throughput_rises",
    "ttft_rises",
    "under_roofline",
]
