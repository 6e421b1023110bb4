"""Latency and throughput past the knee: beyond the streams whose KV cache fits
(planner.physics.memory) and beyond the measured range, an engine runs no more streams together, so
throughput and TPOT stay where they are and every extra stream waits its turn: TTFT grows by one
request's share of the cycle, 1000 x OSL / T ms, per extra stream (a closed loop's queue). Where
the capacity is uncertain the curve is not bent: `uncertain_wait_ms` widens the band instead.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from planner.fitting.fit import CurveFit, FitResult
from planner.physics.memory import KvCapacity
from planner.physics.roofline import curve_capacity


def knee_streams(fit: CurveFit) -> int | None:
    """Streams past which the KV cache surely queues requests at the curve's own ISL/OSL: the
    engine's report, else the estimate, raised by levels that ran more (KvCapacity.knee; with
    the estimate contradicted, only the all-memory bound); None without a workload, model facts
    or GPU specs, or where nothing bounds the capacity."""
    capacity = curve_capacity(fit.curve)
    return None if capacity is None else capacity.knee


def past_knee(fit: CurveFit, streams: int | None) -> CurveFit:
    """The fits with the knee beyond max(streams, the measured top): throughput and TPOT flat,
    TTFT and e2e growing by the queueing wait per extra stream; unchanged without streams, OSL
    or a throughput (or latency) to time a request by."""
    osl = fit.curve.key.osl
    measured = fit.curve.concurrencies()
    if streams is None or streams <= 0 or not osl or not measured:
        return fit
    start = float(max(streams, *measured))
    wait_ms = _wait_per_stream_ms(fit, start, streams, osl)
    if wait_ms is None:
        return fit
    text = (
        f"past {start:g} streams ({streams} fit in the KV cache, measured to {max(measured):g}): "
        f"output tok/s and TPOT flat, TTFT and e2e + {wait_ms:,.0f} ms per extra stream "
        "(waiting for a slot)"
    )
    return replace(
        fit,
        throughput=_with_past(fit.throughput, start, 0.0),
        tpot=_with_past(fit.tpot, start, 0.0),
        ttft_p50=_with_past(fit.ttft_p50, start, wait_ms),
        ttft_p99=_with_past(fit.ttft_p99, start, wait_ms),
        e2e_p99=_with_past(fit.e2e_p99, start, wait_ms),
        flags=(*fit.flags, text),
    )


def uncertain_wait_ms(fit: CurveFit, capacity: KvCapacity, concurrency: float) -> float:
    """TTFT a read at `concurrency` would add were the capacity only its `low`: the band's upper
    edge widens by it where `capacity.side` is 'uncertain' (0 elsewhere: below it nothing
    queues, above it the knee bends the curve itself)."""
    osl, measured = fit.curve.key.osl, fit.curve.concurrencies()
    if capacity.side(concurrency) != "uncertain" or not osl or capacity.low <= 0 or not measured:
        return 0.0
    start = float(max(capacity.low, *measured))
    wait_ms = _wait_per_stream_ms(fit, start, capacity.low, osl)
    return 0.0 if wait_ms is None else wait_ms * max(concurrency - start, 0.0)


def _wait_per_stream_ms(fit: CurveFit, start: float, streams: int, osl: int) -> float | None:
    """One extra stream's wait: the cycle time one request adds, 1000 x OSL / T(start), or the
    request time (TTFT + (OSL - 1) x TPOT) over the streams running when no throughput is fitted."""
    if fit.throughput is not None:
        total = float(fit.throughput.eval([start])[0])
        return 1000.0 * osl / total if np.isfinite(total) and total > 0 else None
    ttft = fit.ttft_p50 or fit.ttft_p99
    if ttft is None or fit.tpot is None:
        return None
    request = float(ttft.eval([start])[0]) + (osl - 1) * float(fit.tpot.eval([start])[0])
    return request / min(streams, start) if np.isfinite(request) and request > 0 else None


def _with_past(result: FitResult | None, start: float, slope: float) -> FitResult | None:
    if result is None:
        return None
    return replace(result, past=(start, slope))
