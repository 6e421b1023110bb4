"""Characters that make text lie about itself: control characters drive a terminal (ESC) or end
a Postgres text (NUL), and bidi controls (U+202E ...) show text in another order than it is
stored (`gnp.exe` shown as `exe.png`). One rule for cells, the app, the terminal, the probe's
server strings and the scenario's names; pure `re`, so the CLI's light commands can load it."""

from __future__ import annotations

import re

# The bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), the marks
# (U+200E, U+200F) and the Arabic letter mark (U+061C).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# C0 (tab and newline apart), DEL and C1, then the bidi controls: what escape_hidden rewrites.
_HIDDEN = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]")
# The same with tab and newline: none of them belongs in a name.
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}]")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_hidden(text: str) -> str:
    """Control characters as \\xNN and bidi controls as \\uNNNN escapes; tabs and newlines kept."""
    return _HIDDEN.sub(lambda m: _escape(m[0]), text)


def has_hidden(text: str) -> bool:
    """True when escape_hidden would change `text`."""
    return _HIDDEN.search(text) is not None


def first_control(text: str) -> str | None:
    """The first control or bidi character in `text` (tab and newline included), as its escape;
    None when there is none."""
    found = _CONTROL.search(text)
    return None if found is None else _escape(found[0])
