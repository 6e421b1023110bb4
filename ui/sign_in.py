"""Optional sign-in (Streamlit's built-in OpenID Connect, an [auth] section in secrets.toml):
the gate every page passes, the signed-in name drawn as plain text, and the start-up line that
says whether the app is open to anyone who reaches its port (docs/SECURITY.md)."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from ui.text import plain

OFF_LINE = (
    "sign-in: off — anyone who can reach this port can use the app; "
    "set [auth] in .streamlit/secrets.toml"
)


def auth_section() -> Mapping[str, object] | None:
    """The [auth] secrets section, or None when sign-in is not configured."""
    if not st.secrets.load_if_toml_exists():
        return None
    section = st.secrets.get("auth")
    return section if isinstance(section, Mapping) and section else None


def providers(section: Mapping[str, object]) -> list[str | None]:
    """Named providers ([auth.google], ...), or [None] for the one set in [auth] itself."""
    named = [
        name
        for name, value in section.items()
        if isinstance(value, Mapping) and "client_id" in value
    ]
    return [*sorted(named)] if named else [None]


def start_up_line(section: Mapping[str, object] | None) -> str:
    """What `capplan app` says about sign-in when it starts: off (and how to turn it on), or on
    with its providers."""
    if section is None:
        return OFF_LINE
    names = [name or "from [auth]" for name in providers(section)]
    return f"sign-in: on (provider {', '.join(names)})"


def require_sign_in(section: Mapping[str, object]) -> None:
    """Stop here with a sign-in screen unless someone is signed in; else show who it is."""
    if not st.user.get("is_logged_in", False):
        st.title("capplan")
        st.info(
            "This capplan needs you to sign in. Your organisation's identity provider checks "
            "who you are; capplan only learns your name and e-mail address."
        )
        for provider in providers(section):
            label = "Sign in" if provider is None else f"Sign in with {provider.title()}"
            if st.button(label, key=f"sign_in_{provider or 'default'}", type="primary"):
                st.login(provider)
        st.stop()
    who = st.user.get("name") or st.user.get("email") or "signed in"
    # The name comes from the identity provider, where its owner typed it: shown as written.
    st.sidebar.caption(f"Signed in as {plain(who)}")
    if st.sidebar.button("Sign out", key="sign_out"):
        st.logout()  # the browser is sent to the sign-out endpoint; draw nothing meanwhile
        st.stop()
