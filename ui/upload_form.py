"""The Runs page's upload form fields: the deployment facts a result file may not state."""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from measurements.run_file import Provenance

FROM_FILE = "(from file)"
OTHER = "other"
ENGINES = (FROM_FILE, "vllm", "tensorrt-llm", "sglang", OTHER)
PRECISIONS = (FROM_FILE, "fp8", "bf16", "fp16", "int8", "int4", "nvfp4", OTHER)
GPUS = (FROM_FILE, "H100-SXM-80GB", "H200-SXM-141GB", OTHER)
FACT_HELP = "Only for facts the file does not state; a value here replaces the file's (noted)."
LOAD_HELP = (
    "Some exports (AIPerf/GenAI-Perf CSV, per-request records) do not say what load they ran "
    "at. Give the concurrency or the rate you ran (not both); files that state their own load "
    "keep it. Without either, such a level is stored but kept out of curve fits."
)
COUNTS = (
    ("gpu_count", "GPUs per replica"),
    ("tp", "Tensor parallel (TP)"),
    ("pp", "Pipeline parallel (PP)"),
)


def _pick(column: DeltaGenerator, label: str, options: tuple[str, ...]) -> str:
    chosen = column.selectbox(label, options, key=f"fact_{label}", help=FACT_HELP)
    other = column.text_input(f"{label} if '{OTHER}'", key=f"fact_{label}_other")
    return other if chosen == OTHER else ("" if chosen == FROM_FILE else chosen)


def deployment_facts() -> dict[str, object]:
    """Draw the fact fields (inside the caller's form); blank means 'take it from the file'."""
    left, middle, right, last = st.columns(4)
    facts: dict[str, object] = {
        "engine": _pick(left, "Engine", ENGINES),
        "engine_version": left.text_input("Engine version", key="fact_version", help=FACT_HELP),
        "model": middle.text_input("Model (as served)", key="fact_model", help=FACT_HELP),
        "precision": _pick(middle, "Precision", PRECISIONS),
        "gpu": _pick(right, "GPU", GPUS),
    }
    for name, label in COUNTS:
        facts[name] = last.number_input(
            label, min_value=1, value=None, step=1, key=f"fact_{name}", help=FACT_HELP
        )
    load, rate = st.columns(2)
    facts["concurrency"] = load.number_input(
        "Concurrency (files without a stated load)",
        min_value=1,
        value=None,
        step=1,
        key="fact_concurrency",
        help=LOAD_HELP,
    )
    facts["request_rate"] = rate.number_input(
        "Request rate, req/s (files without a stated load)",
        min_value=0.001,
        value=None,
        key="fact_request_rate",
        help=LOAD_HELP,
    )
    return facts


def provenance() -> Provenance:
    """How the uploaded numbers were obtained (kept with every run)."""
    chosen = st.selectbox(
        "The numbers were",
        list(Provenance),
        index=list(Provenance).index(Provenance.IMPORTED),
        format_func=lambda p: {
            "measured": "measured here",
            "imported": "imported from a tool",
            "published": "published by someone else",
        }[str(p)],
        key="upload_provenance",
    )
    return chosen or Provenance.IMPORTED
