"""The plan's slow companions, the resampled cost ranges (planner.analysis.uncertainty) and, when
the person asks for it, the sensitivity view (planner.analysis.sensitivity: a re-plan per input
moved, seconds), computed on a worker thread so the Plan page draws the plan at once and shows them
when they are in (bench/bench_plan_session.py times both).

Results are kept by their inputs: the scenario without its name (a rename computes nothing),
the store and its version. Work queued for other inputs is dropped when new inputs come; work
already running finishes and is kept (going back to those inputs finds it).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import streamlit as st

from errors import CapplanError
from planner.analysis.sensitivity import SensitivityRow
from planner.analysis.uncertainty import PlanRanges
from planner.inputs.scenario import Scenario
from planner.inputs.what_if_spec import WhatIfSpec
from workflows.scenario_files import scenario_to_yaml

T = TypeVar("T")
KEPT_INPUTS = 32  # inputs whose results are kept (two results each)


def unnamed(scenario: Scenario) -> str:
    """The scenario as YAML without its name and its what-if multiples: what a plan and its
    ranges depend on."""
    return scenario_to_yaml(scenario.model_copy(update={"name": "-", "what_if": WhatIfSpec()}))


@dataclass(frozen=True, slots=True)
class Later:
    """The ranges and (when asked for) the sensitivity rows of one plan's inputs, computed or on
    their way; `swings` is None when the sensitivity was not asked for."""

    ranges: Future[PlanRanges | None]
    swings: Future[list[SensitivityRow]] | None = None

    def done(self) -> bool:
        """True when what was asked for is in (or failed)."""
        return self.ranges.done() and (self.swings is None or self.swings.done())

    def results(
        self,
    ) -> tuple[PlanRanges | CapplanError | None, list[SensitivityRow] | CapplanError | None]:
        """The results, waiting for them; a CapplanError raised by either is returned, not
        raised (anything else is a bug and propagates); None for a sensitivity not asked for."""
        if self.swings is None:
            return _outcome(self.ranges), None
        return _outcome(self.ranges), _outcome(self.swings)

    def values(self) -> tuple[PlanRanges | None, list[SensitivityRow] | None]:
        """Both results, waiting for them; None for one that failed with a CapplanError or was
        not asked for (what the exports take)."""
        ranges, swings = self.results()
        return (
            None if isinstance(ranges, CapplanError) else ranges,
            None if isinstance(swings, CapplanError) else swings,
        )

    def cancelled(self) -> bool:
        return self.ranges.cancelled() or (self.swings is not None and self.swings.cancelled())

    def cancel(self) -> None:
        self.ranges.cancel()
        if self.swings is not None:
            self.swings.cancel()


def _outcome(future: Future[T]) -> T | CapplanError:
    try:
        return future.result()
    except CapplanError as exc:
        return exc
    except CancelledError:  # newer inputs (of this session or another) replaced the work
        return CapplanError("newer inputs replaced this computation; it is redone on the next run")


class _Jobs:
    """One worker thread and the futures of the last KEPT_INPUTS inputs."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="capplan-ranges")
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, ...], Later] = OrderedDict()

    def later(
        self,
        key: tuple[str, ...],
        start: Callable[[ThreadPoolExecutor, Later | None], Later],
        swings: bool,
    ) -> Later:
        """The kept work of these inputs, or new work; with `swings`, one that has (or now
        gets) the sensitivity too."""
        with self._lock:
            found = self._kept.get(key)
            if found is not None and not found.cancelled():
                self._kept.move_to_end(key)
                if found.swings is not None or not swings:
                    return found
            else:
                found = None
            for other in self._kept.values():  # queued work for older inputs: not wanted now
                if other is not found:
                    other.cancel()
            made = start(self._pool, found)
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
    ranges: Callable[[], PlanRanges | None],
    swings: Callable[[], list[SensitivityRow]],
    with_sensitivity: bool,
) -> Later:
    """The ranges (read from the plan's own error samples: quick; None when no data backs any
    option) and, asked for, the sensitivity (a re-plan per input moved) of this scenario's plan
    over the store at this version, started on the worker unless they are kept or on their way
    (the planning session computes each once: workflows.session)."""

    def start(pool: ThreadPoolExecutor, kept: Later | None) -> Later:
        found = kept.ranges if kept is not None else pool.submit(ranges)
        if not with_sensitivity:
            return Later(ranges=found)
        return Later(ranges=found, swings=pool.submit(swings))

    key = (unnamed(scenario), url, str(version))
    return _jobs().later(key, start, with_sensitivity)


def idle() -> bool:
    """True when no ranges or sensitivity are being computed or waiting (for tests)."""
    return _jobs().idle()
