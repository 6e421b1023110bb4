"""capplan web app: page config, optional sign-in, and the menu over the pages in ui/.

Sign-in is Streamlit's built-in OpenID Connect login: when .streamlit/secrets.toml has an [auth]
section, every page needs a signed-in user; without one the app runs open (docs/SECURITY.md).
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

st.set_page_config(page_title="capplan", layout="wide")


def _auth_section() -> Mapping[str, object] | None:
    """The [auth] secrets section, or None when sign-in is not configured."""
    if not st.secrets.load_if_toml_exists():
        return None
    section = st.secrets.get("auth")
    return section if isinstance(section, Mapping) and section else None


def _providers(section: Mapping[str, object]) -> list[str | None]:
    """Named providers ([auth.google], ...), or [None] for the one set in [auth] itself."""
    named = [
        name
        for name, value in section.items()
        if isinstance(value, Mapping) and "client_id" in value
    ]
    return [*sorted(named)] if named else [None]


def _require_sign_in(section: Mapping[str, object]) -> None:
    """Stop here with a sign-in screen unless someone is signed in; else show who it is."""
    if not st.user.get("is_logged_in", False):
        st.title("capplan")
        st.info(
            "This capplan needs you to sign in. Your organisation's identity provider checks "
            "who you are; capplan only learns your name and e-mail address."
        )
        for provider in _providers(section):
            label = "Sign in" if provider is None else f"Sign in with {provider.title()}"
            if st.button(label, key=f"sign_in_{provider or 'default'}", type="primary"):
                st.login(provider)
        st.stop()
    who = st.user.get("name") or st.user.get("email") or "signed in"
    st.sidebar.caption(f"Signed in as **{who}**")
    if st.sidebar.button("Sign out", key="sign_out"):
        st.logout()  # the browser is sent to the sign-out endpoint; draw nothing meanwhile
        st.stop()


auth = _auth_section()
if auth is not None:
    _require_sign_in(auth)
st.navigation(
    [
        st.Page("ui/plan.py", title="Plan", icon=":material/calculate:", default=True),
        st.Page("ui/curves.py", title="Curves", icon=":material/show_chart:"),
        st.Page("ui/runs.py", title="Runs", icon=":material/table_rows:"),
        st.Page("ui/probe.py", title="Probe", icon=":material/speed:"),
        st.Page("ui/prices.py", title="Prices", icon=":material/payments:"),
        st.Page("ui/models.py", title="Models", icon=":material/memory:"),
        st.Page("ui/scenarios.py", title="Scenarios", icon=":material/compare:"),
    ]
).run()
