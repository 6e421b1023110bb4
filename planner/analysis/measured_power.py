"""A GPU's board power as a run measured it, at the load a sized replica runs: what owning and a
site's power limit read before the TDP x utilisation assumption.

The level's mean power per GPU (RunFile's `mean_gpu_power_w`, from NVML or DCGM) is interpolated
linearly in concurrency over the option's own measured levels, at its sized concurrency per
replica (the peak hour's load: an upper bound for quieter hours). Outside the measured levels it
holds the nearest level's value and says so. A curve adjusted to another workload on the same
GPU and deployment keeps its measured levels' power (the nearest workload's, said so); one
projected onto another GPU, or built from physics alone, has none: its source's watts are not
this GPU's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from measurements.kinds import Provenance
from planner.physics.workload_adjust import ADJUSTED
from planner.sizing.options import SizedOption

__all__ = ["MeasuredPower", "measured_power"]

# A run's own levels (planner.curves.load keeps RunFile.provenance); a derived curve names its
# derivation instead (projected, adjusted, physics-only).
MEASURED_KINDS = frozenset(str(kind) for kind in Provenance)


@dataclass(frozen=True, slots=True)
class MeasuredPower:
    """Watts per GPU at the sized load, and how they were read."""

    watts_per_gpu: float
    text: str


def measured_power(option: SizedOption) -> MeasuredPower | None:
    """The option's measured power per GPU at its sized concurrency (None: its curve is derived,
    or no level has it)."""
    kind = option.curve.provenance
    if kind not in MEASURED_KINDS and kind != ADJUSTED:
        return None  # a projection's points keep their source GPU's power: never this GPU's
    found = [
        (point.concurrency, point.mean_gpu_power_w)
        for point in option.curve.points
        if point.mean_gpu_power_w is not None
    ]
    if not found:
        return None
    found.sort()
    loads = [load for load, _ in found]
    at = option.concurrency_per_replica
    watts = float(np.interp(at, loads, [w for _, w in found]))
    run = f"run {option.curve.run_id}" if option.curve.run_id is not None else "its run"
    if len(found) == 1:
        how = f"its one level with power, at {loads[0]:g} streams"
    elif loads[0] <= at <= loads[-1]:
        how = f"interpolated between its levels at {loads[0]:g}-{loads[-1]:g} streams"
    else:
        nearest = loads[0] if at < loads[0] else loads[-1]
        how = f"held at its nearest level with power, {nearest:g} streams"
    text = f"measured {watts:,.0f} W per GPU at {at:.1f} streams per replica ({run}: {how})"
    return MeasuredPower(watts, text)
