"""The planning use case: one scenario over one store, planned once for every door.

`capplan plan`, `capplan report` and the Plan page each build a PlanningSession and hand it to
their renderer (terminal, page, PDF, XLSX, HTML, JSON); none of them calls the planner. Each stage
(the price catalog, the curves, the plan, its cost ranges, the what-if rows, the sensitivity, the
report's run lines) is computed the first time it is asked for and kept, so the page can draw the
headline first and fill in the rest as it arrives, and an export never re-plans what the screen
already shows. A session is safe to share between the page's script thread and its worker.

The planning policy lives here, once: ranges are sampled from the plan's own error draws unless
samples is 0 or no measured curve backs any option (ranges of options nothing backs say nothing).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from db.engine import Engine
from errors import PlanningError
from planner.analysis.autoscale import ScalingView, compare_scaling
from planner.analysis.budget import BudgetPlan, plan_budget
from planner.analysis.capacity import Plan, make_plan
from planner.analysis.sensitivity import SensitivityRow, sensitivity
from planner.analysis.uncertainty import PlanRanges, ranges_of
from planner.analysis.what_if import WhatIfRow, what_if_demand
from planner.curves.load import LoadCurve
from planner.inputs.prices import PriceEntry
from planner.inputs.scenario import Scaling, Scenario
from reports.budget_view import budget_to_dict
from reports.model import Report, RunMeta, build_report
from reports.scaling_view import scaling_to_dict
from workflows import planning
from workflows.result_cache import keep_results

if TYPE_CHECKING:
    from workflows.history import Regenerated

__all__ = ["PlanningSession"]

T = TypeVar("T")


class _Stages:
    """The computed stages of one session's inputs, each made once. Each stage has its own lock,
    so the page's worker computing the ranges or the sensitivity never holds up its script thread
    asking for the plan or the what-if rows; two threads asking for the same stage wait for one
    computation."""

    def __init__(self) -> None:
        self._guard = threading.Lock()  # held only to find or make a stage's lock
        self._locks: dict[object, threading.RLock] = {}
        self._made: dict[object, object] = {}

    def once(self, key: object, make: Callable[[], T]) -> T:
        with self._guard:
            if key in self._made:
                return self._made[key]  # type: ignore[return-value]
            lock = self._locks.setdefault(key, threading.RLock())
        with lock:
            with self._guard:
                if key in self._made:
                    return self._made[key]  # type: ignore[return-value]
            made = make()
            with self._guard:
                self._made[key] = made
            return made

    def has(self, key: object) -> bool:
        with self._guard:
            return key in self._made


@lru_cache(maxsize=1)
def _keep_results_once() -> None:
    """The first session of a process keeps serving-model calibrations and curve fits in the
    user's cache folder (workflows.result_cache), so the next process plans without fitting."""
    keep_results()


class PlanningSession:
    """A scenario planned over a store's curves and prices, each stage computed once.

    Built with from_store (the CLI and the page) or from_record (a plan record re-made for audit);
    `curves`, `prices` and `runs` are how the session reads the store, so the page can hand it its
    own cached reads.
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        curves: Callable[[], Sequence[LoadCurve]],
        prices: Callable[[], Sequence[PriceEntry]],
        runs: Callable[[Sequence[int]], Sequence[RunMeta]],
        samples: int | None = None,
        plan: Plan | None = None,
        title: str | None = None,
        stages: _Stages | None = None,
    ) -> None:
        _keep_results_once()
        self.scenario = scenario
        self.samples = samples
        self.title = title
        self._read_curves, self._read_prices, self._read_runs = curves, prices, runs
        self._given_plan = plan
        self._stages = stages if stages is not None else _Stages()

    @classmethod
    def from_store(
        cls, engine: Engine, scenario: Scenario, *, samples: int | None = None
    ) -> PlanningSession:
        """The scenario over the stored curves of its model (every run when none has it) and the
        stored price catalog (the shipped one when the store has none)."""
        planning.draws_for(samples)  # a bad --samples is refused before any reading
        return cls(
            scenario,
            curves=lambda: planning.scenario_curves(engine, scenario),
            prices=lambda: planning.price_catalog(engine),
            runs=lambda run_ids: planning.run_metas(engine, run_ids),
            samples=samples,
        )

    @classmethod
    def from_record(
        cls, engine: Engine, regenerated: Regenerated, *, samples: int | None = None
    ) -> PlanningSession:
        """A plan record re-made from its own scenario, runs and prices, titled as such."""
        record = regenerated.record
        title = (
            f"Capacity plan: {record.scenario_name} (plan record {record.record_id} of "
            f"{record.created_at:%Y-%m-%d %H:%M} UTC, re-made)"
        )
        planning.draws_for(samples)
        return cls(
            regenerated.plan.scenario,
            curves=lambda: planning.run_curves(engine, record.basis_run_ids),
            prices=lambda: list(record.prices_used),
            runs=lambda run_ids: planning.run_metas(engine, run_ids),
            samples=samples,
            plan=regenerated.plan,
            title=title,
        )

    def renamed(self, scenario: Scenario) -> PlanningSession:
        """This session for the same inputs under another scenario (a name or what-if multiples
        changed): its stages are shared, so nothing is planned again."""
        return PlanningSession(
            scenario,
            curves=self._read_curves,
            prices=self._read_prices,
            runs=self._read_runs,
            samples=self.samples,
            plan=self._given_plan,
            title=self.title,
            stages=self._stages,
        )

    # The stages.

    @property
    def prices(self) -> list[PriceEntry]:
        """The price catalog the plan is costed from."""
        return self._stages.once("prices", lambda: list(self._read_prices()))

    @property
    def curves(self) -> list[LoadCurve]:
        """The curves the plan can draw on."""
        return self._stages.once("curves", lambda: list(self._read_curves()))

    @property
    def plan(self) -> Plan:
        """The plan (NoDataError when no curve backs any candidate: it names what to measure)."""
        plan = self._stages.once("plan", self._make_plan)
        return plan if plan.scenario == self.scenario else replace(plan, scenario=self.scenario)

    def _make_plan(self) -> Plan:
        if self._given_plan is not None:
            return self._given_plan
        draws = planning.draws_for(self.samples)
        return make_plan(self.scenario, self.curves, self.prices, draws=draws)

    @property
    def no_data(self) -> bool:
        """True when no measured curve backs any option (the plan says what to measure)."""
        gaps = self.plan.measurement_plan
        return gaps is not None and gaps.no_data

    @property
    def ranges(self) -> PlanRanges | None:
        """P10/P50/P90 nodes and cost per option from the plan's own error samples; None when
        samples is 0, or (by default) when no data backs any option."""
        if self.samples == 0 or (self.samples is None and self.no_data):
            return None
        return self._stages.once("ranges", lambda: ranges_of(self.plan))

    def ranges_ready(self) -> bool:
        """True when the ranges are computed (or not to be computed)."""
        return self._stages.has("ranges") or self.samples == 0

    @property
    def swings(self) -> list[SensitivityRow]:
        """The plan re-made with each input moved 10% down and up (seconds: asked for)."""
        return self._stages.once(
            "swings", lambda: sensitivity(self.plan.scenario, self.curves, self.prices)
        )

    def swings_if(self, asked: bool) -> list[SensitivityRow] | None:
        """The sensitivity rows when asked for, else None."""
        return self.swings if asked else None

    def what_if(self, multipliers: Sequence[float] | None = None) -> tuple[WhatIfRow, ...]:
        """The plan at each demand multiple (default: the scenario's what-if multiples)."""
        wanted = tuple(multipliers or self.scenario.what_if.demand_multipliers)
        return self._stages.once(("what_if", wanted), lambda: what_if_demand(self.plan, wanted))

    @property
    def budget(self) -> BudgetPlan | None:
        """The scenario's horizon: every way to pay over the months (None: no horizon asked;
        PlanningError when the plan has no pick to carry)."""
        if self.scenario.horizon is None:
            return None
        return self._stages.once("budget", lambda: plan_budget(self.plan, self.prices))

    @property
    def scaling(self) -> ScalingView | None:
        """The pick autoscaled and static over the day's traffic shape (None: the demand has no
        daily shape, or the plan no pick)."""
        demand = self.scenario.demand
        shaped = demand.hourly_profile is not None or demand.peak_to_average > 1.0
        if not shaped and self.scenario.options.scaling is Scaling.STATIC:
            return None

        def compared() -> ScalingView | None:
            try:
                return compare_scaling(self.plan)
            except PlanningError:
                return None

        return self._stages.once("scaling", compared)

    def horizon_document(self) -> dict[str, object] | None:
        """The horizon as the JSON document carries it (an error in words when it cannot be
        planned; None when none was asked)."""
        try:
            budget = self.budget
        except PlanningError as exc:
            return {"error": str(exc)}
        return None if budget is None else budget_to_dict(budget)

    def run_metas(self) -> list[RunMeta]:
        """The report's line for each stored run behind the plan's options."""
        run_ids = tuple(planning.plan_run_ids(self.plan))
        return self._stages.once(("runs", run_ids), lambda: list(self._read_runs(run_ids)))

    # What the doors render.

    def document(self, *, with_sensitivity: bool) -> dict[str, object]:
        """The plan as one JSON-safe document (the --json output and the .json export)."""
        document = planning.plan_document(
            self.plan, self.ranges, self.swings_if(with_sensitivity), self.what_if()
        )
        if self.scenario.horizon is not None:
            document["horizon"] = self.horizon_document()
        if (scaling := self.scaling) is not None:
            document["scaling"] = scaling_to_dict(scaling)
        return document

    def json(self, *, with_sensitivity: bool) -> str:
        """document() as indented JSON text (the CLI's --export .json and the page's download)."""
        return json.dumps(self.document(with_sensitivity=with_sensitivity), indent=2, default=str)

    def export(self, suffix: str, *, with_sensitivity: bool) -> bytes:
        """The plan as a .json, .csv or .xlsx file's bytes."""
        if suffix == ".json":
            return self.json(with_sensitivity=with_sensitivity).encode("utf-8")
        if suffix == ".csv":  # the options only: no ranges or sensitivity to wait for
            return planning.plan_export(self.plan, suffix, None, None, ())
        swings = self.swings_if(with_sensitivity)
        budget = self._budget_if_any()
        return planning.plan_export(
            self.plan, suffix, self.ranges, swings, self.what_if(), budget=budget
        )

    def _budget_if_any(self) -> BudgetPlan | None:
        """The budget over time, or None when none was asked or it cannot be planned (the
        document says why)."""
        try:
            return self.budget
        except PlanningError:
            return None

    def report(self, *, with_sensitivity: bool, generated_at: datetime | None = None) -> Report:
        """The capacity report of the plan (its ranges, the sensitivity when asked, the runs
        behind its options)."""
        report = build_report(
            self.plan,
            ranges=self.ranges,
            swings=self.swings_if(with_sensitivity),
            runs=self.run_metas(),
            generated_at=generated_at or datetime.now(UTC),
            what_if=self.what_if(),
            budget=self._budget_if_any(),
        )
        return report if self.title is None else replace(report, title=self.title)

    def report_bytes(
        self, fmt: str, *, with_sensitivity: bool, generated_at: datetime | None = None
    ) -> bytes:
        """The capacity report rendered in one format (reports.formats.REPORT_FORMATS)."""
        from reports.formats import render_report  # noqa: PLC0415 - the PDF stack on demand

        report = self.report(with_sensitivity=with_sensitivity, generated_at=generated_at)
        return render_report(report, fmt)
