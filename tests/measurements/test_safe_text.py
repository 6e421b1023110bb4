"""The one rule for characters that make text lie: every control character (tab and newline
apart) and every bidi control is escaped, visibly and reversibly."""

from __future__ import annotations

import pytest

from measurements.safe_text import escape_hidden, first_control, has_hidden

pytestmark = pytest.mark.hostile

BIDI = [*"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"]


@pytest.mark.parametrize("char", BIDI, ids=lambda c: f"U+{ord(c):04X}")
def test_every_bidi_control_is_escaped_as_its_code_point(char: str) -> None:
    shown = escape_hidden(f"report{char}fdp.exe")
    assert char not in shown and shown == f"report\\u{ord(char):04x}fdp.exe"
    assert has_hidden(f"x{char}") and first_control(char) == f"\\u{ord(char):04x}"


def test_control_characters_are_escaped_and_tabs_and_newlines_kept() -> None:
    assert escape_hidden("a\x00b\x1b[31mc\x7f\x9b\r") == "a\\x00b\\x1b[31mc\\x7f\\x9b\\x0d"
    assert escape_hidden("line one\n\tline two") == "line one\n\tline two"
    assert not has_hidden("llama-3.1 70B \u00e9\u4e2d")  # letters of any script are kept


def test_first_control_counts_tab_and_newline_in_a_name() -> None:
    assert first_control("agent\tplatform") == "\\x09"
    assert first_control("agent\nplatform") == "\\x0a"
    assert first_control("agent-platform \u00e9") is None
