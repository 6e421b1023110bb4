"""capplan web app: page config and the menu over the pages in ui/ (nothing else lives here)."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="capplan", layout="wide")
st.navigation(
    [
        st.Page("ui/plan.py", title="Plan", icon=":material/calculate:", default=True),
        st.Page("ui/curves.py", title="Curves", icon=":material/show_chart:"),
        st.Page("ui/runs.py", title="Runs", icon=":material/table_rows:"),
        st.Page("ui/probe.py", title="Probe", icon=":material/speed:"),
        st.Page("ui/prices.py", title="Prices", icon=":material/payments:"),
        st.Page("ui/scenarios.py", title="Scenarios", icon=":material/compare:"),
    ]
).run()
