"""capplan web app: page config, optional sign-in, and the menu over the pages in ui/.

Sign-in is Streamlit's built-in OpenID Connect login: when .streamlit/secrets.toml has an [auth]
section, every page needs a signed-in user (ui/sign_in.py); without one the app runs open
(docs/SECURITY.md).
"""

from __future__ import annotations

import streamlit as st

from ui.sign_in import auth_section, require_sign_in

st.set_page_config(page_title="capplan", layout="wide")

auth = auth_section()
if auth is not None:
    require_sign_in(auth)  # no page (and so no uploader) is drawn before sign-in
st.navigation(
    [
        st.Page("ui/plan.py", title="Plan", icon=":material/calculate:", default=True),
        st.Page("ui/curves.py", title="Curves", icon=":material/show_chart:"),
        st.Page("ui/runs.py", title="Runs", icon=":material/table_rows:"),
        st.Page("ui/probe.py", title="Probe", icon=":material/speed:"),
        st.Page("ui/prices.py", title="Prices", icon=":material/payments:"),
        st.Page("ui/models.py", title="Models", icon=":material/memory:"),
        st.Page("ui/scenarios.py", title="Scenarios", icon=":material/compare:"),
        st.Page("ui/audit.py", title="Audit", icon=":material/history:"),
    ]
).run()
