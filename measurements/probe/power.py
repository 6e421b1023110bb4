"""GPU board power while a level runs: NVML read on a thread every half second, averaged over
the level's steady window, as the level's `mean_gpu_power_w` (W per GPU).

The probe runs on the box that serves (it reads the same GPUs' facts for the run's environment),
so NVML's GPUs are the engine's. Of several GPUs the busiest `gpus` (the deployment's count) are
the deployment's; an idle neighbour never lowers the figure. A read that fails stops the sampling
and keeps what was read; no samples, no metric. A simulated engine is never measured: its GPUs
(if any) do not do the work.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from measurements.plausible import metric_problem
from measurements.run_file import POWER_METRIC, Level, Metric, Origin

__all__ = ["LevelPower", "NvmlPower", "with_power"]

INTERVAL_S = 0.5
MILLIWATTS_PER_WATT = 1000.0
SOURCE_KEY = "nvml nvmlDeviceGetPowerUsage"


class NvmlPower:
    """Every GPU's board power now, W, through NVML (the nvidia-ml-py package)."""

    def __init__(self, nvml: Any, handles: Sequence[object]) -> None:
        self._nvml, self._handles = nvml, tuple(handles)

    @classmethod
    def open(cls) -> NvmlPower | None:
        """NVML's GPUs, or None when NVML is absent, fails or finds none."""
        try:
            nvml: Any = importlib.import_module("pynvml")
        except ImportError:
            return None
        try:
            nvml.nvmlInit()
            count = int(nvml.nvmlDeviceGetCount())
            handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        except nvml.NVMLError:
            return None
        if not handles:
            nvml.nvmlShutdown()
            return None
        return cls(nvml, handles)

    def read(self) -> tuple[float, ...]:
        """Each GPU's power, W (raises the NVML error of a failed read)."""
        get = self._nvml.nvmlDeviceGetPowerUsage
        return tuple(float(get(h)) / MILLIWATTS_PER_WATT for h in self._handles)

    def close(self) -> None:
        """Let NVML go."""
        with contextlib.suppress(self._nvml.NVMLError):
            self._nvml.nvmlShutdown()


class LevelPower:
    """Samples `read` on a thread while the level runs (a context manager around it)."""

    def __init__(
        self,
        read: Callable[[], Sequence[float]],
        clock: Callable[[], float],
        interval_s: float = INTERVAL_S,
    ) -> None:
        self._read, self._clock, self._interval = read, clock, interval_s
        self.samples: list[tuple[float, tuple[float, ...]]] = []
        self.failure: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="capplan-power", daemon=True)

    def __enter__(self) -> LevelPower:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            try:
                watts = tuple(self._read())
            except Exception as exc:  # noqa: BLE001 (any failed read ends the sampling, kept)
                self.failure = f"{type(exc).__name__}: {exc!s:.120}"
                return
            self.samples.append((self._clock(), watts))
            if self._stop.wait(self._interval):
                return

    def mean_per_gpu(self, gpus: int | None, start_s: float, end_s: float) -> float | None:
        """The busiest `gpus` GPUs' mean power over [start_s, end_s] (every sample when none
        falls inside), W per GPU; None without samples."""
        inside = [w for at, w in self.samples if start_s <= at <= end_s] or [
            w for _, w in self.samples
        ]
        if not inside or not inside[0]:
            return None
        boards = len(inside[0])
        means = sorted(
            (sum(s[i] for s in inside if len(s) == boards) / len(inside) for i in range(boards)),
            reverse=True,
        )
        used = means[: gpus or boards]
        return sum(used) / len(used)


def with_power(level: Level, power: LevelPower, gpus: int | None, t0: float) -> Level:
    """The level with its mean power per GPU over its steady window, if any was read."""
    start = t0 + (level.window_start_s or 0.0)
    end = t0 + level.window_end_s if level.window_end_s is not None else float("inf")
    watts = power.mean_per_gpu(gpus, start, end)
    if watts is None or metric_problem(POWER_METRIC, watts) is not None:
        return level
    metric = Metric(
        name=POWER_METRIC, value=round(watts, 3), origin=Origin.REPORTED, source_key=SOURCE_KEY
    )
    notes = f"GPU power: {len(power.samples)} NVML samples every {INTERVAL_S:g} s"
    if power.failure:
        notes += f"; sampling stopped early ({power.failure})"
    joined = f"{level.notes}; {notes}" if level.notes else notes
    return level.model_copy(update={"metrics": (*level.metrics, metric), "notes": joined})
