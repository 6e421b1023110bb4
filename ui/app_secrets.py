"""What the app's secrets (.streamlit/secrets.toml) say about the app, read without exposing
them: whether sign-in is on, and the secret values themselves so that no page sends them out."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import streamlit as st


def sign_in_configured() -> bool:
    """True when .streamlit/secrets.toml has a non-empty [auth] section (app.py then asks
    every visitor to sign in)."""
    if not st.secrets.load_if_toml_exists():
        return False
    section = st.secrets.get("auth")
    return isinstance(section, Mapping) and bool(section)


def secret_values() -> frozenset[str]:
    """Every scalar value in the app's secrets, as text (Streamlit copies top-level ones into
    the environment, where a probe key variable could name them)."""
    if not st.secrets.load_if_toml_exists():
        return frozenset()
    return frozenset(_scalars(st.secrets.to_dict()))


def _scalars(value: object) -> Iterator[str]:
    if isinstance(value, Mapping):
        for nested in value.values():
            yield from _scalars(nested)
    elif isinstance(value, list):
        for nested in value:
            yield from _scalars(nested)
    elif isinstance(value, str | int | float) and not isinstance(value, bool) and str(value):
        yield str(value)
