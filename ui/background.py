"""The plan's slow companions, the resampled cost ranges (planner.analysis.uncertainty) and the
sensitivity view (planner.analysis.sensitivity), computed on a worker thread so the Plan page draws
the plan at once and shows them when they are in (bench/bench_plan_session.py times both).

Results are kept by their inputs: the scenario without its name (a rename computes nothing),
the store and its version. Work queued for other inputs is dropped when new inputs come; work
already running finishes and is kept (going back to those inputs finds it).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import streamlit as st

from errors import CapplanError
from planner.analysis.capacity import Plan
from planner.analysis.sensitivity import SensitivityRow, sensitivity
from planner.analysis.uncertainty import PlanRanges, ranges_of
from planner.curves.load import LoadCurve
from planner.inputs.prices import PriceEntry
from planner.inputs.scenario import Scenario, scenario_to_yaml
from planner.inputs.what_if_spec import WhatIfSpec

T = TypeVar("T")
KEPT_INPUTS = 32  # inputs whose results are kept (two results each)


def unnamed(scenario: Scenario) -> str:
    """The scenario as YAML without its name and its what-if multiples: what a plan and its
    ranges depend on."""
    return scenario_to_yaml(scenario.model_copy(update={"name": "-", "what_if": WhatIfSpec()}))


@dataclass(frozen=True, slots=True)
class Later:
    """The ranges and the sensitivity rows of one plan's inputs, computed or on their way."""

    ranges: Future[PlanRanges]
    swings: Future[list[SensitivityRow]]

    def done(self) -> bool:
        """True when both are in (or failed)."""
        return self.ranges.done() and self.swings.done()

    def results(self) -> tuple[PlanRanges | CapplanError, list[SensitivityRow] | CapplanError]:
        """Both results, waiting for them; a CapplanError raised by either is returned, not raised
        (anything else is a bug and propagates)."""
        return _outcome(self.ranges), _outcome(self.swings)

    def values(self) -> tuple[PlanRanges | None, list[SensitivityRow] | None]:
        """Both results, waiting for them; None for one that failed with a CapplanError (what
        the exports take)."""
        ranges, swings = self.results()
        return (
            None if isinstance(ranges, CapplanError) else ranges,
            None if isinstance(swings, CapplanError) else swings,
        )


def _outcome(future: Future[T]) -> T | CapplanError:
    try:
        return future.result()
    except CapplanError as exc:
        return exc


class _Jobs:
    """One worker thread and the futures of the last KEPT_INPUTS inputs."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="capplan-ranges")
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, ...], Later] = OrderedDict()

    def later(self, key: tuple[str, ...], start: Callable[[ThreadPoolExecutor], Later]) -> Later:
        with self._lock:
            found = self._kept.get(key)
            if found is not None and not (found.ranges.cancelled() or found.swings.cancelled()):
                self._kept.move_to_end(key)
                return found
            for other in self._kept.values():  # queued work for older inputs: not wanted now
                other.ranges.cancel()
                other.swings.cancel()
            made = start(self._pool)
            self._kept[key] = made
            while len(self._kept) > KEPT_INPUTS:
                self._kept.popitem(last=False)
            return made

    def idle(self) -> bool:
        with self._lock:
            return all(later.done() for later in self._kept.values())


@st.cache_resource
def _jobs() -> _Jobs:
    return _Jobs()


def ranges_and_sensitivity(
    scenario: Scenario,
    url: str,
    version: int,
    *,
    curves: Callable[[], Sequence[LoadCurve]],
    prices: Callable[[], Sequence[PriceEntry]],
    plan: Callable[[], Plan],
) -> Later:
    """The ranges (read from the plan's own error samples: quick) and sensitivity (a re-plan
    per input moved) of this scenario's plan over the store at this version, started on the
    worker unless they are kept or on their way (curves, prices and the plan are read here,
    on the script thread, only when they must be computed)."""

    def start(pool: ThreadPoolExecutor) -> Later:
        chosen, catalog, planned = list(curves()), list(prices()), plan()
        ranges = pool.submit(ranges_of, planned)
        return Later(ranges=ranges, swings=pool.submit(sensitivity, scenario, chosen, catalog))

    return _jobs().later((unnamed(scenario), url, str(version)), start)


def idle() -> bool:
    """True when no ranges or sensitivity are being computed or waiting (for tests)."""
    return _jobs().idle()
