"""The Plan page's SLA targets: the p99s and the stream speed up front, the other statistics
(p50, p90, mean of TTFT, TPOT and e2e) in an expander that counts what is set."""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from planner.inputs.sla_targets import BARE_STATISTIC, SLA_TARGETS, SlaTarget
from workflows import limits

OPTIONAL = "Leave empty to not check this target."


def targets() -> dict[str, object]:
    """The p99 targets and the stream speed up front; the other statistics (p50, p90, mean of
    TTFT, TPOT and e2e) in one expander that says how many of them are set."""
    st.sidebar.subheader("SLA targets")
    main = [t for t in SLA_TARGETS if t.statistic in (BARE_STATISTIC, "min")]
    others = [t for t in SLA_TARGETS if t not in main]
    values = {t.field: _sla_input(st.sidebar, t) for t in main}
    set_count = sum(st.session_state.get(f"plan_sla_{t.field}") is not None for t in others)
    label = "Targets at other statistics (p50, p90, mean)"
    # Keyed: it stays open while its count changes (a new label would be a new, closed one).
    more = st.sidebar.expander(
        f"{label}: {set_count} set" if set_count else label, key="plan_sla_more"
    )
    values |= {t.field: _sla_input(more, t) for t in others}
    return {field: value for field, value in values.items() if value is not None}


def _sla_input(where: DeltaGenerator, target: SlaTarget) -> float | None:
    """One target's input; a starting value is put in the session, not the widget, so the field
    can be cleared (Streamlit lets a number input be emptied only when it starts empty)."""
    key = f"plan_sla_{target.field}"
    if target.form_default is not None and key not in st.session_state:
        st.session_state[key] = target.form_default
    value = where.number_input(
        target.form_label,
        min_value=0.0,
        max_value=float(sla_bound(target.field).high),
        value=None,
        key=key,
        help=f"{target.help} {OPTIONAL}",
    )
    return None if value is None else float(value)


def sla_bound(field: str) -> limits.Bound:
    return limits.SLA_MS if field.endswith("_ms") else limits.STREAM_TOK_S
