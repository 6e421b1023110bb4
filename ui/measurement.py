"""The Plan page's "what to measure": the one-sentence verdict, the gaps, and the sweeps as
command lines to copy (capplan probe, vllm bench serve, AIPerf), from
planner.analysis.measurement_plan."""

from __future__ import annotations

import streamlit as st

from planner.analysis.measurement_plan import MeasurementPlan, Sweep
from reports.measurement import sweep_title
from reports.names import engine_name, gpu_name
from ui.text import plain


def draw_verdict(plan: MeasurementPlan) -> None:
    """The one sentence, said first when no data backs any option."""
    st.warning(plain(plan.headline), icon=":material/science:")
    if plan.estimate:
        st.info(plain(plan.estimate), icon=":material/calculate:")


def draw_sweeps(plan: MeasurementPlan) -> None:
    """What is missing per engine x GPU, then the sweeps as commands, one tab per client."""
    st.subheader("What to measure")
    st.markdown(
        "\n".join(
            f"- **{plain(engine_name(gap.engine))} on {plain(gpu_name(gap.gpu))}**: "
            f"{plain(gap.reason)}"
            for gap in plan.gaps
        )
    )
    probe, bench, aiperf = st.tabs(["capplan probe", "vllm bench serve", "AIPerf"])
    with probe:
        st.caption(
            "Each line starts the server, sweeps the concurrency levels (stopping once throughput "
            "stops growing) and writes a run file; the last line stores them."
        )
        lines = [f"# {sweep_title(s)}\n{s.probe_command}" for s in plan.sweeps]
        st.code("\n".join([*lines, plan.import_command]), language="bash", wrap_lines=True)
    with bench:
        st.caption("Start the server, run the loop, then import its results.")
        runs = [(s, s.vllm_bench_command, s.vllm_bench_import_command) for s in plan.sweeps]
        st.code(_client_script(runs), language="bash", wrap_lines=True)
    with aiperf:
        st.caption("Start the server, run the loop, then import its results.")
        runs = [(s, s.aiperf_command, s.aiperf_import_command) for s in plan.sweeps]
        st.code(_client_script(runs), language="bash", wrap_lines=True)
    for note in plan.notes:
        st.caption(plain(note))


def _client_script(runs: list[tuple[Sweep, str, str]]) -> str:
    """Per sweep: its title, the server line, the client's loop and its import line."""
    blocks = [
        "\n".join(
            [
                f"# {sweep_title(sweep)}",
                sweep.server_command or f"# start the {sweep.engine} server on port 8000",
                loop,
                store,
            ]
        )
        for sweep, loop, store in runs
    ]
    return "\n\n".join(blocks)
