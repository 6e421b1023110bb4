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
from planner.inputs.scenario import Scenario, scenario_from_dict, scenario_to_yaml
from reports.brief import pick_holds_sentence
from reports.export import options_table, plan_to_csv, plan_to_xlsx, range_rows
from ui import charts, measurement, plan_answer, plan_form, plan_state, plan_what_if
from ui import resources as res
from ui.background import Later
from ui.text import plain
from workflows.planning import plan_json

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
POLL_S = 1.0  # how often the page looks whether the ranges are in (each look costs the worker)
SENSITIVITY_ON = "plan_sensitivity_on"  # asked for once, the sensitivity follows every change


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
    st.session_state["plan_yaml_done"] = upload.file_id
    scenario = res.guarded(lambda: res.scenario_from_upload(upload.name, upload.getvalue()))
    if scenario is not None:
        plan_form.apply_scenario(scenario)
        st.session_state["plan_flash"] = f"opened scenario file {upload.name!r}"
        st.rerun()


def _ranges(found: PlanRanges | CapplanError) -> PlanRanges | None:
    st.subheader("How sure is this?")
    if isinstance(found, CapplanError):
        st.error(plain(str(found)))
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
    st.dataframe(range_rows(ranges), hide_index=True)
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


def _downloads(plan: Plan, scenario: Scenario, later: Later) -> None:
    """The exports, each built when its button is pressed (waiting for the ranges if need be)."""
    stem = scenario.name.replace(" ", "_")
    yaml_file, xlsx, csv, document = st.columns(4)
    yaml_file.download_button(
        "Scenario as YAML", scenario_to_yaml(scenario), f"{stem}.yaml", "application/yaml"
    )
    xlsx.download_button(
        "Plan as XLSX", lambda: plan_to_xlsx(plan, *later.values()), f"{stem}.xlsx", XLSX
    )
    csv.download_button("Plan as CSV", lambda: plan_to_csv(plan), f"{stem}.csv", "text/csv")
    document.download_button(
        "Plan as JSON",
        lambda: plan_json(plan, *later.values()),
        f"{stem}.json",
        "application/json",
    )


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
            full = res.later_for(plan.scenario, url, version, with_sensitivity=True)
            content = res.guarded(lambda: res.report_bytes(plan, *full.values(), url, fmt))
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
        )


def _save(url: str, scenario: Scenario) -> None:
    if st.button(f"Save scenario as {scenario.name!r}", key="plan_save"):
        record = res.guarded(lambda: res.save_scenario(url, scenario))
        if record is not None:
            planned = res.guarded(lambda: res.record_plan_now(url, scenario.name))
            kept = " and this plan in its history" if planned is not None else ""
            st.success(plain(f"saved scenario {record.name!r}{kept}"))


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
scenario = res.guarded(lambda: scenario_from_dict(raw, "plan inputs"))
if scenario is None:
    st.stop()
plan_state.keep(scenario)
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
    plan_what_if.draw(res.what_if_for(plan, url, version))
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
_downloads(plan, scenario, later)
_report(url, version, plan, later)
_save(url, scenario)
