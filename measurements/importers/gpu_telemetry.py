"""GPU power from AIPerf's DCGM telemetry (`telemetry_data.endpoints.*.gpus.*.metrics.
gpu_power_usage`, W per GPU over the profile): the level's mean board power per GPU.

DCGM reports every GPU of the node, busy or not. When the deployment's GPU count is known (its
`gpu_count`, else its TP), the busiest that many GPUs are the deployment's; otherwise every GPU
reported is averaged, and the note says so.
"""

from __future__ import annotations

from errors import InputError
from measurements.importers.common import MetricSet, Reader
from measurements.plausible import metric_problem
from measurements.run_file import POWER_METRIC

__all__ = ["add_telemetry_power"]

POWER_TAG = "gpu_power_usage"


def add_telemetry_power(top: Reader, metrics: MetricSet, gpus: int | None) -> list[str]:
    """Add the level's mean power per GPU from the telemetry, if any; notes on how it was read."""
    telemetry = top.obj.get("telemetry_data")
    if telemetry is None:
        return []
    if not isinstance(telemetry, dict):
        raise top.fail("telemetry_data", "expected an object", type(telemetry).__name__)
    endpoints = telemetry.get("endpoints")
    if not isinstance(endpoints, dict):
        return []
    found: list[tuple[float, str]] = []
    for host, endpoint in endpoints.items():
        boards = endpoint.get("gpus") if isinstance(endpoint, dict) else None
        for index, board in boards.items() if isinstance(boards, dict) else ():
            field = f"telemetry_data.endpoints.{host}.gpus.{index}.metrics.{POWER_TAG}"
            watts = _board_watts(top.file, board, field)
            if watts is not None:
                found.append((watts, field))
    if not found:
        return []
    found.sort(reverse=True)
    used = found[: gpus or len(found)]
    mean = sum(w for w, _ in used) / len(used)
    if gpus is None:
        how = f"the mean over all {len(found)} GPUs the telemetry reported (GPU count not stated)"
    elif len(found) > gpus:
        how = f"the busiest {gpus} of the {len(found)} GPUs the telemetry reported"
    else:
        how = f"the mean over the {len(used)} GPUs the telemetry reported"
    key = used[0][1] + ".avg" if len(used) == 1 else f"telemetry_data ({POWER_TAG}.avg)"
    metrics.add(POWER_METRIC, mean, source=(key, round(mean, 6)))
    return [f"GPU power {mean:,.0f} W per GPU from DCGM telemetry: {how}"]


def _board_watts(file: str, board: object, field: str) -> float | None:
    metrics = board.get("metrics") if isinstance(board, dict) else None
    power = metrics.get(POWER_TAG) if isinstance(metrics, dict) else None
    if power is None:
        return None
    if not isinstance(power, dict):
        raise InputError("expected an object", file=file, field=field, value=type(power).__name__)
    reader = Reader(file, power, field + ".")
    unit = reader.text("unit")
    if unit not in (None, "W"):
        raise reader.fail("unit", "expected W", unit)
    watts = reader.number("avg")
    problem = None if watts is None else metric_problem(POWER_METRIC, watts)
    if problem is not None:
        raise reader.fail("avg", problem, watts)
    return watts
