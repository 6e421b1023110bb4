"""Curves page: measured points, fitted curves and bands per engine x GPU x TP, and fit quality."""

from __future__ import annotations

import streamlit as st

from planner.curves.workload_groups import TOLERANCE_TEXT
from ui import charts, clients, curve_gaps, tables
from ui import resources as res
from ui.text import plain
from workflows import model_choices
from workflows.curves import NOT_STATED, check_curve

PREFERRED_MODEL = "meta-llama/Llama-3.1-70B"
PREFERRED_WORKLOAD = "1024/1024"

url = res.open_store()
version = res.store_version(url)
st.title("Curves")
st.caption(
    "Markers: measured points. Solid line: the fitted curve over the measured range; shaded: its "
    "band; dashed: the fit read outside what that run measured (extrapolated, not planned on)."
)
# The choices come from SQL (distinct model and workload); only the chosen group is fitted.
keys = res.curve_workloads(url, version)
models = model_choices.model_name_choices(model for model, _, _ in keys)
if not models:
    st.info(
        "No stored run has concurrency or request-rate levels yet: upload results on the Runs page."
    )
    st.stop()
left, right = st.columns(2)
model = left.selectbox(
    "Model",
    models,
    key="curves_model",
    index=models.index(PREFERRED_MODEL) if PREFERRED_MODEL in models else 0,
)
workloads = model_choices.workload_key_choices(keys, model)
workload = right.selectbox(
    "Workload: input / output tokens (ISL/OSL)",
    workloads,
    key="curves_workload",
    index=workloads.index(PREFERRED_WORKLOAD) if PREFERRED_WORKLOAD in workloads else 0,
)
available = res.fits_for_workload(url, version, model, workload)
labels = {
    fit.curve.run_id: f"run {fit.curve.run_id} · {fit.curve.label_text()}" for fit in available
}
chosen = st.multiselect(
    "Curves to show",
    list(labels),
    default=list(labels),
    format_func=lambda run_id: labels[run_id],
    key=f"curves_runs_{model}_{workload}",
)
shown = [fit for fit in available if fit.curve.run_id in chosen]
if not shown:
    st.info("Pick at least one curve.")
    st.stop()
members = model_choices.workload_members(keys, model, workload)
if len(members) > 1 and workload != NOT_STATED:
    exact = ", ".join(f"{isl}/{osl}" for isl, osl in members)
    st.caption(f"Workload {workload} holds runs measured at {exact}: {TOLERANCE_TEXT}.")
drawn = curve_gaps.concurrency_fits(shown)
if drawn:
    st.plotly_chart(charts.throughput_figure(drawn))
    ttft, speed = st.columns(2)
    ttft.plotly_chart(charts.ttft_figure(drawn))
    speed.plotly_chart(charts.stream_speed_figure(drawn))
for note in curve_gaps.unfitted_notes(drawn):
    st.info(plain(note))
if by_rate := curve_gaps.rate_fits(shown):
    st.subheader("By offered request rate")
    st.caption(curve_gaps.RATE_NOTE)
    rate_tok, rate_ttft = st.columns(2)
    rate_tok.plotly_chart(curve_gaps.rate_throughput_figure(by_rate))
    rate_ttft.plotly_chart(curve_gaps.rate_ttft_figure(by_rate))
clients.show_comparisons(shown)
if not drawn:  # request-rate levels only: no fit and no concurrency point to check
    st.stop()
st.subheader("Fit quality")
st.caption("Held-out MAPE: mean error predicting each measured point from the others, in %.")
st.dataframe(tables.fit_quality_rows(shown), hide_index=True)
st.subheader("Physics check")
st.caption(
    "Ceilings from the GPU datasheet and the model's size: one stream cannot decode faster than "
    "the GPUs' memory bandwidth over the weight bytes read per token, and the whole replica cannot "
    "beat its bandwidth and FLOPS. A point above a ceiling means the source misstates the GPUs, "
    "precision or model (or ran speculative decoding)."
)
checks = [(fit, check_curve(fit.curve)) for fit in drawn]
st.dataframe(tables.physics_rows(checks), hide_index=True)
if len(missing := curve_gaps.no_ceiling_notes(checks)) < len(checks):
    st.plotly_chart(charts.ceiling_share_figure(checks))
for note in missing:
    st.caption(plain(note))
with st.expander("Flags and assumptions behind these curves"):
    for fit, check in checks:
        for flag in dict.fromkeys((*fit.curve.flags, *fit.flags, *check.flags, *check.notes)):
            st.caption(plain(f"run {fit.curve.run_id}: {flag}"))
