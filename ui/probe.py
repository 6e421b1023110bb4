"""Probe page: sweep a running OpenAI-compatible server (vLLM, TensorRT-LLM's trtllm-serve) from
the app, with live progress per load level, and store the run like any import."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import streamlit as st

from measurements.probe.defaults import PROBE_LIMITS as MOST
from measurements.probe.level_run import ProgressEvent
from measurements.probe.request import ProbeRequest
from team.roles import Action
from ui import resources as res
from ui import upload_form
from ui.app_secrets import secret_values, sign_in_configured
from ui.team import refused_line, role_caption
from ui.text import plain
from workflows.probe import ProbeResult, probe_from_app
from workflows.probe_guard import AppProbePolicy, app_policy

RUNS_DIR = Path("data") / "probe-runs"
HELP_LEVELS = (
    "Concurrency levels to climb, e.g. 1,2,4,8,16: each keeps that many requests in flight. "
    "The sweep stops early once throughput stops growing or the time to first token explodes."
)


def _form() -> ProbeRequest | None:
    with st.form("probe"):
        left, right = st.columns(2)
        base_url = left.text_input(
            "Server base URL",
            placeholder="http://10.0.0.5:8000",
            key="probe_base_url",
            help="A running vLLM or trtllm-serve endpoint (OpenAI-compatible), on a host the "
            "operator allows in CAPPLAN_PROBE_ALLOWED_HOSTS.",
        )
        model = right.text_input(
            "Served model name", key="probe_model", help="The name the server serves the model as."
        )
        isl = left.number_input(
            "Prompt length, ISL (tokens)", 1, MOST.tokens, value=1024, key="probe_isl"
        )
        osl = right.number_input(
            "Output length, OSL (tokens)", 1, MOST.tokens, value=256, key="probe_osl"
        )
        levels = left.text_input(
            "Concurrency levels", value="1,2,4,8,16,32", key="probe_levels", help=HELP_LEVELS
        )
        label = "Measured requests per level (empty: max(32, 8 x concurrency))"
        most = MOST.requests_per_level
        requests = right.number_input(label, 1, most, value=None, key="probe_requests")
        api_key_env = left.text_input(
            "API key environment variable (optional)",
            key="probe_api_key_env",
            help="The NAME of an environment variable of the app's process holding the key, "
            "one the operator lists in CAPPLAN_PROBE_KEY_VARS; the key itself is never typed "
            "here, stored or logged.",
        )
        endpoint = right.selectbox("Endpoint", ("completions", "chat"), key="probe_endpoint")
        st.markdown("**Deployment facts** (what the server cannot report about itself)")
        facts = upload_form.deployment_facts()
        submitted = st.form_submit_button("Run the sweep")
    if not submitted:
        return None
    return res.guarded(
        lambda: ProbeRequest(
            base_url=base_url,
            model=model.strip(),
            isl_tokens=int(isl),
            osl_tokens=int(osl),
            concurrencies=levels,
            requests_per_level=requests,
            api_key_env=api_key_env.strip() or None,
            endpoint=endpoint,
            engine=facts.get("engine") or "other",
            engine_version=facts.get("engine_version"),
            precision=facts.get("precision"),
            gpu=facts.get("gpu"),
            gpu_count=facts.get("gpu_count"),
            tp=facts.get("tp"),
            pp=facts.get("pp"),
            check_capabilities=False,
            out_path=RUNS_DIR / f"probe-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json",
        )
    )


def _sweep(url: str, request: ProbeRequest) -> ProbeResult | None:
    RUNS_DIR.mkdir(parents=True, exist_ok=True)
    bar = st.progress(0.0, text="Connecting...")
    rows: dict[int, dict[str, object]] = {}
    table = st.empty()

    def show(event: ProgressEvent) -> None:
        total = event.requests_total or 0
        done = event.requests_done / total if total else 0.0
        overall = (event.level_index + min(done, 1.0)) / event.levels_total
        tok_s = event.output_tok_s_so_far
        bar.progress(
            min(overall, 1.0),
            text=f"level {event.level_index + 1} of {event.levels_total}: "
            f"{event.load_kind} {event.load_value:g}",
        )
        rows[event.level_index] = {
            "level": event.level_index + 1,
            "load": f"{event.load_kind} {event.load_value:g}",
            "requests done": event.requests_done,
            "of": event.requests_total,
            "output tok/s so far": None if tok_s is None else round(tok_s, 1),
            "failed": event.failures,
        }
        table.dataframe(list(rows.values()), hide_index=True)

    result = res.guarded(
        lambda: probe_from_app(
            request,
            _policy(url),
            open_store=lambda: res.store_engine(url),
            actor=res.actor(url),
            on_progress=show,
        )
    )
    if result is None:
        return None
    res.bump_version(url)
    bar.progress(1.0, text="Done" if result.outcome.complete else "Stopped early")
    return result


def _policy(url: str) -> AppProbePolicy:
    """The operator's leash on this page's probes (hosts, key variables, secrets never sent)."""
    return app_policy(
        os.environ, sign_in=sign_in_configured(), store_url=url, secrets=secret_values()
    )


def _show(result: ProbeResult) -> None:
    outcome, stored = result.outcome, result.stored
    state = "complete" if outcome.complete else "INCOMPLETE (the server stopped answering)"
    stored_text = stored.message if stored else ""
    st.success(plain(f"Sweep {state}: {outcome.stop_reason}. {stored_text}"))
    st.dataframe(
        [
            {
                "load": f"{level.load_kind} {level.load_value:g}",
                "output tok/s": level.value("output_tok_s"),
                "TTFT p50 (ms)": level.value("p50_ttft_ms"),
                "TTFT p99 (ms)": level.value("p99_ttft_ms"),
                "TPOT p99 (ms)": level.value("p99_tpot_ms"),
                "completed": level.completed,
                "failed": level.failed,
            }
            for level in outcome.run.levels
        ],
        hide_index=True,
    )


url = res.open_store()
st.title("Probe an endpoint")
st.caption(
    "Drives a running server through a concurrency sweep from this machine, the way "
    "`capplan probe --base-url` does, and stores the run. For a sweep on the GPU box itself "
    "(launching the engine, GPU facts from nvidia-smi), run `capplan probe` there."
)
actor = res.actor(url)
role_caption(actor)
if not actor.may(Action.IMPORT_RUNS):
    refused_line(actor, Action.IMPORT_RUNS)
    st.stop()
request = _form()
if request is not None:
    result = _sweep(url, request)
    if result is not None:
        _show(result)
