"""GPU power while the probe sweeps: a whole sweep against the fake server with a power reader
(the busiest GPUs' mean over each level's window, in the written file), a reader that fails
mid-level (what it read is kept), and NVML opened through a stand-in module (no GPU here)."""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
import types
from pathlib import Path

import httpx
import pytest

from measurements.probe.config import ProbeConfig, SaturationConfig
from measurements.probe.power import LevelPower, NvmlPower, with_power
from measurements.probe.sweep import run_probe
from measurements.probe.workloads import WorkloadConfig
from measurements.run_file import POWER_METRIC, Deployment, Level, LoadKind, read_run_file
from tests.measurements.probe.test_sweep import FakeServer


def sweep_with(power: object, out: Path, gpus: int | None) -> list[Level]:
    config = ProbeConfig.model_validate(
        {
            "base_url": "http://fake:8000",
            "model": "tiny",
            "concurrencies": (1, 2),
            "workload": WorkloadConfig(isl=16, osl=6),
            "requests_per_level": 8,
            "saturation": SaturationConfig(enabled=False),
        }
    )
    outcome = run_probe(
        config,
        deployment=Deployment(engine="vllm", model="tiny", gpu_count=gpus),
        out=out,
        transport=httpx.MockTransport(FakeServer(token_s=0.02).handle),
        power=power,  # type: ignore[arg-type]
    )
    return list(asyncio.run(asyncio.wait_for(outcome, 30)).run.levels)


def test_each_level_carries_its_busiest_gpus_mean_power_in_the_written_file(
    tmp_path: Path,
) -> None:
    # Four GPUs: two serving (400 and 300 W), two idle neighbours the figure must not count.
    levels = sweep_with(lambda: (400.0, 60.0, 300.0, 55.0), tmp_path / "run.json", gpus=2)
    assert [level.value(POWER_METRIC) for level in levels] == [350.0, 350.0]
    assert all("NVML samples" in (level.notes or "") for level in levels)
    assert read_run_file(tmp_path / "run.json").levels == tuple(levels)


def test_a_sweep_without_a_reader_has_no_power(tmp_path: Path) -> None:
    levels = sweep_with(None, tmp_path / "run.json", gpus=1)
    assert all(level.value(POWER_METRIC) is None for level in levels)


def test_the_window_decides_which_samples_count_and_a_failed_read_keeps_the_rest() -> None:
    ticks = itertools.count()
    reads = iter([(100.0,), (500.0,), (520.0,), (80.0,)])

    def read() -> tuple[float, ...]:
        value = next(reads, None)
        if value is None:
            raise OSError("GPU fell off the bus")
        return value

    with LevelPower(read, clock=lambda: float(next(ticks)), interval_s=0.001) as meter:
        while meter.failure is None:
            time.sleep(0.001)
    assert [w for _, w in meter.samples] == [(100.0,), (500.0,), (520.0,), (80.0,)]
    assert meter.failure == "OSError: GPU fell off the bus"
    level = Level(load_kind=LoadKind.CONCURRENCY, load_value=4, window_start_s=1, window_end_s=2)
    powered = with_power(level, meter, gpus=1, t0=0.0)
    assert powered.value(POWER_METRIC) == 510.0  # samples at clock 1 and 2 only
    assert "stopped early (OSError: GPU fell off the bus)" in (powered.notes or "")
    no_window = Level(load_kind=LoadKind.CONCURRENCY, load_value=4, window_start_s=50)
    assert with_power(no_window, meter, gpus=1, t0=0.0).value(POWER_METRIC) == 300.0


def test_an_impossible_reading_is_left_out_not_stored() -> None:
    with LevelPower(lambda: (9000.0,), clock=lambda: 0.0, interval_s=0.001) as meter:
        while not meter.samples:
            time.sleep(0.001)
    level = Level(load_kind=LoadKind.CONCURRENCY, load_value=1)
    assert with_power(level, meter, gpus=1, t0=0.0) == level


def fake_nvml(watts_mw: list[int], fail_init: bool = False) -> types.ModuleType:
    module = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    def init() -> None:
        if fail_init:
            raise NVMLError("driver not loaded")

    module.NVMLError = NVMLError  # type: ignore[attr-defined]
    module.nvmlInit = init  # type: ignore[attr-defined]
    module.nvmlShutdown = lambda: None  # type: ignore[attr-defined]
    module.nvmlDeviceGetCount = lambda: len(watts_mw)  # type: ignore[attr-defined]
    module.nvmlDeviceGetHandleByIndex = lambda i: i  # type: ignore[attr-defined]
    module.nvmlDeviceGetPowerUsage = lambda h: watts_mw[h]  # type: ignore[attr-defined]
    return module


def test_nvml_reads_milliwatts_as_watts_and_declines_without_a_driver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([612_345, 58_000]))
    meter = NvmlPower.open()
    assert meter is not None and meter.read() == (612.345, 58.0)
    meter.close()
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([1], fail_init=True))
    assert NvmlPower.open() is None
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([]))
    assert NvmlPower.open() is None
