"""Cached access to the store and the core for the pages: one engine per URL, loaders keyed by a
store version that every write bumps, and the write actions (uploads, deletes, prices, scenarios).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import streamlit as st

from errors import CapplanError, ScenarioError
from hardware.prices import load_catalog_csv
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import Provenance
from planner.analysis.capacity import Plan
from planner.curves.load import LoadCurve
from planner.fitting.fit import CurveFit
from planner.inputs.prices import PriceEntry
from planner.inputs.scenario import Scenario
from team.roles import Actor
from ui import background
from ui.tables import price_entries_from_rows
from ui.team import current_actor
from ui.text import plain
from workflows import history, planning, store
from workflows.curves import fits_of
from workflows.ingest import FileOutcome, IngestOptions, Upload, ingest
from workflows.ingest import deployment_overrides as validated_overrides
from workflows.model_choices import curves_for, workload_members
from workflows.scenario_files import scenario_from_yaml, scenario_to_yaml
from workflows.session import PlanningSession
from workflows.store import Engine, PlanRecord, RunFilter, RunSummary, ScenarioRecord, StoredRun

T = TypeVar("T")


@dataclass(slots=True)
class _Counter:
    value: int = 0  # runs and prices: what plans read
    scenarios: int = 0  # saved scenarios and recorded plans: what no plan reads


def db_url() -> str:
    """The store URL: $CAPPLAN_DB, else capplan's default (sqlite:///data/capplan.db)."""
    return store.resolve_db_url(None)


@st.cache_resource(show_spinner="Opening the store (migrations, demo data on first start)...")
def store_engine(url: str) -> Engine:
    """The engine for url: migrations applied, demo data loaded into an empty store."""
    return store.open_app_store(url)


@st.cache_resource
def _counter(url: str) -> _Counter:
    return _Counter()


def open_store() -> str:
    """The store URL with the store opened; when that fails, say why in place and stop the page."""
    url = db_url()
    if guarded(lambda: store_engine(url)) is None:
        st.stop()
    return url


def store_version(url: str) -> int:
    """The store's write counter: cached loaders take it so a write shows at once."""
    return _counter(url).value


def bump_version(url: str) -> None:
    """Mark the store changed (after a write) so every cached loader reloads."""
    _counter(url).value += 1


def _bump_scenarios(url: str) -> None:
    """Mark the saved scenarios changed: their lists reload; curves, fits and plans stay."""
    _counter(url).scenarios += 1


def actor(url: str) -> Actor:
    """Who this session's writes are made as (ui/team.py), with the role that decides them."""
    return current_actor(store_engine(url))


def guarded(action: Callable[[], T]) -> T | None:
    """Run a core call; a CapplanError is shown with st.error in place and gives None."""
    try:
        return action()
    except CapplanError as exc:
        st.error(plain(str(exc)))
        return None


# ---------------------------------------------------------------- cached loaders
@st.cache_data(show_spinner=False)
def run_summaries(url: str, version: int) -> list[RunSummary]:
    """Every stored run with its level and sample counts."""
    return store.list_runs(store_engine(url))


@st.cache_data(show_spinner=False, max_entries=64)
def run_page(url: str, version: int, filters: RunFilter, limit: int, offset: int) -> store.RunPage:
    """One page of the runs the filters keep, newest first, with their total (never every run
    at once)."""
    return store.run_page(store_engine(url), filters, limit, offset, newest_first=True)


@st.cache_data(show_spinner=False)
def run_choices(url: str, version: int) -> store.RunChoices:
    """The values each run filter can take."""
    return store.run_filter_choices(store_engine(url))


@st.cache_data(show_spinner=False, max_entries=16)
def stored_run(url: str, version: int, run_id: int) -> StoredRun:
    """One stored run with its samples (InputError when there is no such run)."""
    return store.get_run(store_engine(url), run_id)


# cache_resource, not cache_data: the curves are frozen, and a copy of a model's 2,000 curves
# (the 10,000-run store) took about a second to unpickle on every run of the Plan page.
@st.cache_resource(show_spinner="Building curves...", max_entries=32)
def load_curves(
    url: str,
    version: int,
    models: tuple[str, ...] | None = None,
    workload: tuple[int | None, int | None] | None = None,
) -> list[LoadCurve]:
    """One LoadCurve per stored run that has concurrency levels, of the stored model names in
    `models` and the (ISL, OSL) `workload` when given (runs read a chunk at a time: the curves
    are kept, the RunFiles are not). Shared by every session: never modify the list."""
    return planning.load_curves(store_engine(url), models, workload)


@st.cache_data(show_spinner=False)
def model_names(url: str, version: int) -> list[str]:
    """The distinct model names of stored runs (no curve built)."""
    return store.model_names(store_engine(url))


@st.cache_data(show_spinner=False)
def curve_workloads(url: str, version: int) -> list[tuple[str, int | None, int | None]]:
    """(model, ISL, OSL) of stored runs with concurrency levels: the Curves page's choices."""
    return store.curve_workloads(store_engine(url))


def _same_model(url: str, version: int, model: str) -> tuple[str, ...]:
    return tuple(planning.same_model(model_names(url, version), model))


def model_curves(url: str, version: int, model: str) -> list[LoadCurve]:
    """The curves of this (canonical) model only (read from the store, cached)."""
    names = _same_model(url, version, model)
    return load_curves(url, version, names) if names else []


def scenario_curves(scenario: Scenario, url: str, version: int) -> list[LoadCurve]:
    """The curves a plan of this scenario can use: those of its (canonical) model. The planner
    leaves every other model's curve out (planner.sizing.selection: "other model"; shape siblings
    share the model), so the plan is the same as over every curve. With no curve of the model, every
    curve is loaded, so the planner's error can name the models that have curves."""
    return model_curves(url, version, scenario.model) or load_curves(url, version)


@st.cache_data(show_spinner="Fitting curves...")
def curve_fits(url: str, version: int) -> list[CurveFit]:
    """The throughput, TTFT and TPOT fits of every curve (fits_for_workload fits one group)."""
    return fits_of(load_curves(url, version))


@st.cache_data(show_spinner="Fitting curves...", max_entries=32)
def fits_for_workload(url: str, version: int, model: str, workload: str) -> list[CurveFit]:
    """The fits of the curves of this (canonical) model at this 'ISL/OSL' workload only (runs
    within tokenisation rounding of it included; the other curves are neither read nor fitted)."""
    names = _same_model(url, version, model)
    if not names:
        return []
    # A workload groups the exact ISL/OSL pairs within rounding of it: read each pair's runs.
    members = workload_members(curve_workloads(url, version), model, workload)
    curves = [c for pair in members for c in load_curves(url, version, names, pair)]
    return fits_of(curves_for(curves, model, workload))


@st.cache_data(show_spinner=False)
def price_catalog(url: str, version: int) -> list[PriceEntry]:
    """The stored price catalog, or the shipped one when the store has none (as the CLI does)."""
    return planning.price_catalog(store_engine(url))


_KEPT = background.KEPT_INPUTS


@st.cache_resource(show_spinner=False, max_entries=_KEPT, hash_funcs={Scenario: background.unnamed})
def _session(scenario: Scenario, url: str, version: int) -> PlanningSession:
    """The planning session of these inputs (kept by the scenario without its name and what-if
    multiples): each stage computed once, shared by the page's script and worker threads."""
    engine = store_engine(url)
    return PlanningSession(
        scenario,
        curves=lambda: scenario_curves(scenario, url, version),
        prices=lambda: price_catalog(url, version),
        runs=lambda run_ids: planning.run_metas(engine, run_ids),
    )


def session_for(scenario: Scenario, url: str, version: int) -> PlanningSession:
    """The planning session of a scenario over the store (workflows.session), under the
    scenario's own name and what-if multiples (a rename plans nothing)."""
    return _session(scenario, url, version).renamed(scenario)


def plan_for(scenario: Scenario, url: str, version: int) -> Plan:
    """The capacity plan for a scenario over the stored curves and the price catalog."""
    with st.spinner("Planning..."):
        return session_for(scenario, url, version).plan


def later_for(
    scenario: Scenario, url: str, version: int, *, with_sensitivity: bool = False
) -> background.Later:
    """The plan's cost ranges and, asked for, its sensitivity, computed off the script thread
    by the planning session."""
    session = session_for(scenario, url, version)
    return background.ranges_and_sensitivity(
        scenario,
        url,
        version,
        ranges=lambda: session.ranges,
        swings=lambda: session.swings,
        with_sensitivity=with_sensitivity,
    )


def plan_file(
    scenario: Scenario, url: str, version: int, suffix: str, later: background.Later
) -> bytes:
    """The plan as a .json, .csv or .xlsx file (waiting for its ranges and the sensitivity when
    it was asked for): the bytes `capplan plan --export` writes for the same inputs."""
    if suffix != ".csv":  # the CSV lists the options only
        later.values()  # the session now holds what the worker computed
    session = session_for(scenario, url, version)
    return session.export(suffix, with_sensitivity=later.swings is not None)


def report_bytes(scenario: Scenario, url: str, version: int, fmt: str) -> bytes:
    """The capacity report of a scenario's plan with its ranges and sensitivity in one format:
    the bytes `capplan report` writes for the same inputs."""
    return session_for(scenario, url, version).report_bytes(fmt, with_sensitivity=True)


def record_report_bytes(url: str, regenerated: history.Regenerated, fmt: str) -> bytes:
    """The capacity report of a plan record re-made from its own scenario, runs and prices (no
    ranges or sensitivity: `capplan report --record ID --samples 0 --no-sensitivity`)."""
    session = PlanningSession.from_record(store_engine(url), regenerated, samples=0)
    return session.report_bytes(fmt, with_sensitivity=False)


def saved_scenarios(url: str, version: int) -> list[ScenarioRecord]:
    """The scenarios saved in the store, by name."""
    return _saved_scenarios(url, version, _counter(url).scenarios)


@st.cache_data(show_spinner=False)
def _saved_scenarios(url: str, version: int, saved: int) -> list[ScenarioRecord]:
    return store.list_scenarios(store_engine(url))


# ---------------------------------------------------------------- writes


def _folder(name: str) -> str | None:
    return name.split("/", maxsplit=1)[0] if "/" in name else None


def import_uploads(
    url: str,
    files: Sequence[tuple[str, bytes]],
    overrides: DeploymentOverrides,
    provenance: Provenance = Provenance.IMPORTED,
    *,
    refuse: bool = False,
    format_id: str = "auto",
) -> list[FileOutcome]:
    """Import (name, bytes) pairs one file at a time (workflows.ingest): a bad file is rejected
    on its own; files of one sweep merged; `refuse`: a run the planner cannot use too."""
    # A folder upload names each file by its path in the folder: those read as a result folder.
    uploads = [Upload(name, data, _folder(name)) for name, data in files]
    options = IngestOptions(overrides, provenance, format_id, refuse_unplannable=refuse)
    outcomes = ingest(store_engine(url), uploads, options, actor=actor(url))
    if any(outcome.created for outcome in outcomes):
        bump_version(url)
    return outcomes


def scenario_from_upload(name: str, data: bytes) -> Scenario:
    """A scenario from an uploaded YAML file; ScenarioError names the file, key and value."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"not UTF-8 text: {exc}", file=name) from exc
    return scenario_from_yaml(text, name)


def deployment_overrides(values: dict[str, object]) -> DeploymentOverrides:
    """Validated upload-form facts (blank fields mean 'take it from the file')."""
    return validated_overrides(values, "upload form")


def delete_run(url: str, run_id: int) -> bool:
    """Move a stored run to the trash (an admin's); False when it was already gone."""
    deleted = store.delete_run(store_engine(url), run_id, actor=actor(url))
    bump_version(url)
    return deleted


def save_price_rows(url: str, rows: Sequence[dict[str, object]]) -> int:
    """Validate edited catalog rows and replace the stored catalog with them."""
    entries = price_entries_from_rows(rows)
    count = store.replace_prices(store_engine(url), entries, actor=actor(url))
    bump_version(url)
    return count


def restore_shipped_prices(url: str) -> int:
    """Replace the stored catalog with the shipped hardware/data/gpu_prices.csv."""
    engine, shipped = store_engine(url), load_catalog_csv()
    count = store.replace_prices(engine, shipped, actor=actor(url), why="restored")
    bump_version(url)
    return count


def save_scenario(url: str, scenario: Scenario, *, replace: bool = False) -> ScenarioRecord:
    """Save a scenario as YAML under its name; with `replace`, over one of that name."""
    engine, yaml_text = store_engine(url), scenario_to_yaml(scenario)
    record = store.save_scenario(
        engine, scenario.name, yaml_text, actor=actor(url), replace=replace
    )
    _bump_scenarios(url)
    return record


def load_scenario(url: str, name: str) -> Scenario:
    """A saved scenario, validated (ScenarioError names the field when it no longer validates)."""
    record = store.get_scenario(store_engine(url), name)
    return scenario_from_yaml(record.yaml_text, f"saved scenario {name!r}")


# ---------------------------------------------------------------- scenarios page (part R3)


def plan_history(url: str, version: int, name: str) -> list[PlanRecord]:
    """The recorded plans of a saved scenario, newest first."""
    return _plan_history(url, version, _counter(url).scenarios, name)


@st.cache_data(show_spinner=False)
def _plan_history(url: str, version: int, saved: int, name: str) -> list[PlanRecord]:
    return store.plan_history(store_engine(url), name)


def rename_scenario(url: str, old: str, new: str) -> ScenarioRecord:
    """Rename a saved scenario (InputError when the new name is taken)."""
    record = history.rename_scenario(store_engine(url), old, new, actor=actor(url))
    _bump_scenarios(url)
    return record


def clone_scenario(url: str, name: str, new_name: str) -> ScenarioRecord:
    """Copy a saved scenario under a new name."""
    record = history.clone_scenario(store_engine(url), name, new_name, actor=actor(url))
    _bump_scenarios(url)
    return record


def delete_scenario(url: str, name: str) -> bool:
    """Move a saved scenario to the trash (its recorded plans stay, for audit)."""
    deleted = store.delete_scenario(store_engine(url), name, actor=actor(url))
    _bump_scenarios(url)
    return deleted


def record_plan_now(url: str, name: str) -> PlanRecord:
    """Plan a saved scenario over the stored curves and prices now, and record it."""
    version = store_version(url)
    scenario = load_scenario(url, name)
    plan = plan_for(scenario, url, version)
    curves = scenario_curves(scenario, url, version)
    engine = store_engine(url)
    record = history.record_plan(engine, name, plan, curves=curves, actor=actor(url))
    _bump_scenarios(url)
    return record


def regenerate_record(url: str, record_id: int) -> history.Regenerated:
    """Re-plan a recorded plan from its stored inputs and compare it with what was recorded."""
    return history.regenerate(store_engine(url), record_id)
