"""Plan page: scenario inputs (sidebar) -> recommendation, options table, warnings, downloads;
scenarios saved to and loaded from the store.
"""

from __future__ import annotations

import streamlit as st

from errors import CapplanError, NoDataError
from planner.analysis.capacity import Plan
from planner.analysis.measurement_plan import MeasurementPlan
from planner.analysis.sensitivity import SensitivityRow
from planner.analysis.uncertainty import PlanRanges
from planner.inputs.scenario import Scenario
from reports.brief import pick_holds_sentence
from reports.export import options_table
from team.roles import Action
from ui import (
    charts,
    measurement,
    plan_answer,
    plan_form,
    plan_horizon,
    plan_scaling,
    plan_state,
    plan_what_if,
    upload_budget,
)
from ui import resources as res
from ui.background import Later
from ui.team import refused_line
from ui.text import plain
from workflows.scenario_files import scenario_from_dict, scenario_to_yaml
from workflows.store import ScenarioExistsError

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
POLL_S = 1.0  # how often the page looks whether the ranges are in (each look costs the worker)
SENSITIVITY_ON = "plan_sensitivity_on"  # asked for once, the sensitivity follows every change
EXPORTS = "plan_exports"  # (plan key, files): the export bytes of the plan on the page


def _load_saved(url: str, name: str) -> None:
    """Button callback: fill the widgets from a saved scenario (runs before the widgets exist)."""
    scenario = res.guarded(lambda: res.load_scenario(url, name))
    if scenario is not None:
        plan_form.apply_scenario(scenario)
        st.session_state["plan_flash"] = f"loaded scenario {name!r}"


def _saved_scenarios(url: str, version: int) -> None:
    saved = [record.name for record in res.saved_scenarios(url, version)]
    if not saved:
        return
    left, right = st.columns([3, 1])
    name = left.selectbox("Saved scenarios", saved, key="plan_saved")
    right.button("Load", on_click=_load_saved, args=(url, name), key="plan_load")


def _planned(url: str, version: int, scenario: Scenario) -> Plan | None:
    try:
        return res.plan_for(scenario, url, version)
    except NoDataError as exc:  # no curve backs any candidate: say what to measure
        if isinstance(exc.measurement_plan, MeasurementPlan):
            measurement.draw_verdict(exc.measurement_plan)
            st.caption(plain(str(exc)))
            measurement.draw_sweeps(exc.measurement_plan)
        else:
            st.error(plain(str(exc)))
    except CapplanError as exc:
        st.error(plain(str(exc)))
    return None


def _scenario_file(url: str) -> None:
    """Upload a scenario YAML (the file `capplan plan` reads) to fill the inputs."""
    upload = st.file_uploader("Open a scenario file (YAML)", type=["yaml", "yml"], key="plan_yaml")
    if upload is None or st.session_state.get("plan_yaml_done") == upload.file_id:
        return
    if not upload_budget.within_budget([upload]):
        return
    st.session_state["plan_yaml_done"] = upload.file_id
    scenario = res.guarded(lambda: res.scenario_from_upload(upload.name, upload.getvalue()))
    if scenario is not None:
        plan_form.apply_scenario(scenario)
        st.session_state["plan_flash"] = f"opened scenario file {upload.name!r}"
        st.rerun()


def _ranges(found: PlanRanges | CapplanError | None) -> PlanRanges | None:
    st.subheader("How sure is this?")
    if isinstance(found, CapplanError):
        st.error(plain(str(found)))
        return None
    if found is None:  # no data backs any option: its ranges would say nothing
        return None
    ranges = found
    st.caption(
        plain(
            f"{ranges.samples} error samples per option, the same ones the plan's fleet was "
            f"sized over (at {ranges.confidence:.0%} confidence). {pick_holds_sentence(ranges)}"
        )
    )
    with st.expander("Details: how the samples are drawn"):
        st.caption(plain(ranges.method))
    st.plotly_chart(charts.cost_range_figure(ranges))
    st.dataframe(
        plan_answer.range_table(ranges), hide_index=True, column_config=plan_answer.RANGE_FORMAT
    )
    for flag in ranges.flags:
        st.caption(plain(flag))
    return ranges


def _sensitivity(
    found: list[SensitivityRow] | CapplanError | None,
) -> list[SensitivityRow] | None:
    st.subheader("What moves the answer")
    if found is None:  # not asked for: a re-plan per input moved takes seconds
        st.caption(
            "Which input moves the cost most: each input moved 10% down and up and the plan "
            "made again (about twenty re-plans). Once shown, it follows every change."
        )
        if st.button("Show what moves the answer", key="plan_sensitivity_show"):
            st.session_state[SENSITIVITY_ON] = True
            st.rerun()
        return None
    if isinstance(found, CapplanError):
        st.error(plain(str(found)))
        return None
    rows = found
    st.caption(
        "Each input moved 10% down and up (counts by one), the plan made again: the change in "
        "the recommended option's monthly cost. Whole nodes make small moves show as 0% or a "
        "jump."
    )
    st.plotly_chart(charts.tornado_figure(rows))
    return rows


def _waiting(later: Later) -> None:
    """While the ranges and the sensitivity are computed (off the script thread): say so, look
    again every POLL_S, and draw the page again when they are in (from the kept results)."""

    @st.fragment(run_every=POLL_S)
    def poll() -> None:
        if later.done():
            st.rerun(scope="app")
        st.subheader("How sure is this?")
        more = " and re-planning what moves the answer" if later.swings is not None else ""
        st.caption(f"Reading the cost ranges{more}...")

    poll()


def _downloads(url: str, version: int, scenario: Scenario, later: Later) -> None:
    """The exports as bytes built now, each under its own key: a button holding a callable
    defers its file to the click, and a click that reruns the page dropped the other
    buttons' deferred files (MediaFileStorageError). XLSX and JSON wait for the ranges."""
    stem = scenario.name.replace(" ", "_")
    columns = st.columns(4)
    for column, (label, data, suffix, mime) in zip(
        columns, _export_files(url, version, scenario, later), strict=True
    ):
        if data is None:
            column.button(label, disabled=True, key=f"plan_download_{suffix}_wait",
                          help="Ready once the cost ranges below are in.")  # fmt: skip
            continue
        column.download_button(
            label, data, f"{stem}.{suffix}", mime, key=f"plan_download_{suffix}", on_click="ignore"
        )


ExportFile = tuple[str, bytes | None, str, str]  # label, content (None: not ready), suffix, MIME


def _export_files(url: str, version: int, scenario: Scenario, later: Later) -> list[ExportFile]:
    """The four exports, kept for the session while the plan and its ranges stay the same."""
    done = later.done()
    key = (scenario_to_yaml(scenario), version, done, later.swings is not None)
    kept = st.session_state.get(EXPORTS)
    if kept is not None and kept[0] == key:
        files: list[ExportFile] = kept[1]
        return files
    text = scenario_to_yaml(scenario).encode("utf-8")

    def made(suffix: str) -> bytes:  # the bytes `capplan plan --export` writes
        return res.plan_file(scenario, url, version, suffix, later)

    files = [
        ("Scenario as YAML", text, "yaml", "application/yaml"),
        ("Plan as XLSX", made(".xlsx") if done else None, "xlsx", XLSX),
        ("Plan as CSV", made(".csv"), "csv", "text/csv"),
        ("Plan as JSON", made(".json") if done else None, "json",
         "application/json"),
    ]  # fmt: skip
    st.session_state[EXPORTS] = (key, files)
    return files


REPORT_FORMATS = {
    "PDF for finance": ("pdf", "application/pdf"),
    "XLSX with the data behind every chart": ("xlsx", XLSX),
    "HTML with interactive charts": ("html", "text/html"),
    "JSON with everything to reproduce the plan": ("json", "application/json"),
    "CSV of the options": ("csv", "text/csv"),
}


def _report(url: str, version: int, plan: Plan, later: Later) -> None:
    """Build the capacity report on request (a PDF takes seconds), then offer it for download."""
    left, right = st.columns([3, 1])
    label = left.selectbox("Capacity report", list(REPORT_FORMATS), key="plan_report_format")
    fmt, mime = REPORT_FORMATS[label]
    key = (scenario_to_yaml(plan.scenario), version, fmt)
    if right.button("Build report", key="plan_report_build"):
        with st.spinner(f"Building the {fmt.upper()} report..."):
            # The report carries what moves the answer: computed now if it was not shown.
            content = res.guarded(lambda: res.report_bytes(plan.scenario, url, version, fmt))
        if content is not None:
            st.session_state["plan_report"] = (key, content)
    built = st.session_state.get("plan_report")
    if built is not None and built[0] == key:
        stem = plan.scenario.name.replace(" ", "_")
        st.download_button(
            f"Download the {fmt.upper()} report",
            built[1],
            f"{stem}-capacity-report.{fmt}",
            mime,
            key="plan_report_download",
            on_click="ignore",
        )


def _save(url: str, scenario: Scenario) -> None:
    """Save (a planner's); over a scenario of the same name only after 'replace it?'."""
    if not res.actor(url).may(Action.SAVE_SCENARIOS):
        refused_line(res.actor(url), Action.SAVE_SCENARIOS)
        return
    replace = st.session_state.get("plan_replace") == scenario.name
    if replace:
        st.warning(plain(st.session_state.get("plan_replace_why", "")))
    label = (
        f"Replace scenario {scenario.name!r}" if replace else f"Save scenario as {scenario.name!r}"
    )
    if not st.button(plain(label), key="plan_save"):
        return
    try:
        record = res.save_scenario(url, scenario, replace=replace)
    except ScenarioExistsError as exc:
        st.session_state["plan_replace"] = scenario.name
        st.session_state["plan_replace_why"] = f"{exc}. Press the button again to replace it."
        st.rerun()
    except CapplanError as exc:
        st.error(plain(str(exc)))
        return
    st.session_state.pop("plan_replace", None)
    planned = res.guarded(lambda: res.record_plan_now(url, scenario.name))
    kept = " and this plan in its history" if planned is not None else ""
    st.success(plain(f"saved scenario {record.name!r}{kept}"))


def _applied(raw: dict[str, object]) -> Scenario | None:
    """The scenario the inputs give, kept for the session and the link; inputs it refuses are
    said in plain words and not applied: the last valid scenario is planned instead."""
    try:
        scenario = scenario_from_dict(raw, "plan inputs")
    except CapplanError as exc:
        kept = st.session_state.get(plan_state.KEPT)
        still = " The plan below is still the one for the last valid inputs." if kept else ""
        st.error(plain(f"Not applied: {plan_form.problem_words(exc)}.{still}"))
        return kept if isinstance(kept, Scenario) else None
    plan_state.keep(scenario)
    return scenario


url = res.open_store()
version = res.store_version(url)
plan_state.restore()  # the inputs of the last visit (or of the page's link), before any widget
st.title("Plan capacity")
if flash := st.session_state.pop("plan_flash", None):
    st.info(plain(flash))
_saved_scenarios(url, version)
_scenario_file(url)
models_stored = [model for model, _, _ in res.curve_workloads(url, version)]
raw = plan_form.draw_inputs(
    models_stored,
    lambda model: res.model_curves(url, version, model),
    res.price_catalog(url, version),
)
scenario = _applied(raw)
if scenario is None:
    st.stop()
plan = _planned(url, version, scenario)
if plan is None:
    st.stop()
gaps = plan.measurement_plan
# The ranges and sensitivity follow the plan without holding it up (ui/background.py).
later = res.later_for(
    scenario, url, version, with_sensitivity=bool(st.session_state.get(SENSITIVITY_ON))
)
if gaps is not None and gaps.no_data:
    # No data backs any option: the verdict and the sweeps first, what was found folded away,
    # and no ranges or sensitivity of options nothing backs.
    measurement.draw_verdict(gaps)
    measurement.draw_sweeps(gaps)
    with st.expander("What the stored data has (none of it answers this scenario)"):
        st.markdown(plain(plan.recommendation.reason))
        st.dataframe(options_table(plan), hide_index=True)
        for warning in plan.warnings:
            st.caption(plain(warning))
else:
    plan_answer.recommendation(plan)
    # Filled once the resampled ranges below are in: a cost tie the resampling splits, or a
    # pick that changes often.
    tie_slot = st.empty()
    plan_what_if.draw(res.session_for(plan.scenario, url, version).what_if())
    plan_scaling.draw(res.session_for(plan.scenario, url, version).scaling)
    plan_horizon.draw(plan_horizon.budget_for(plan.scenario, url, version))
    st.subheader("Options")
    st.caption(f"Sorted by cost; price catalog version {plan.catalog_version}.")
    plan_answer.options(plan)
    plan_answer.price_notes(plan)
    plan_answer.warnings(plan)
    if gaps is not None:
        measurement.draw_verdict(gaps)
        measurement.draw_sweeps(gaps)
    if later.done():
        found_ranges, found_swings = later.results()
        with st.container(key="plan_ranges"):
            ranges = _ranges(found_ranges)
        if (note := plan_answer.stability_note(plan, ranges)) is not None:
            tie_slot.info(plan_answer.md(note), icon=":material/balance:")
        with st.container(key="plan_sensitivity"):
            _sensitivity(found_swings)
    else:
        _waiting(later)
st.subheader("Take it away")
_downloads(url, version, scenario, later)
_report(url, version, plan, later)
_save(url, scenario)
