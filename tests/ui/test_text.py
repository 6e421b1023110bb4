"""Text from files shown literally: Markdown, KaTeX and Streamlit directives escaped, control
characters and bidi controls made visible; plotly labels (app and report) HTML-escaped; the CLI
escapes ESC and U+202E."""

from __future__ import annotations

import io

import plotly.graph_objects as go
import pytest
from rich.table import Table

from cli import common
from reports.figures import escaped_labels
from ui.text import plain

pytestmark = pytest.mark.hostile


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("![b](http://h/beacon.png)", "!\\[b\\](http://h/beacon.png)"),
        ("$\\frac{a}{b}$", "\\$\\\\frac{a}{b}\\$"),
        (":red[x] and :smile:", "\\:red\\[x\\] and \\:smile:"),
        ("my_run_file.json", "my\\_run\\_file.json"),
        ("<a href='x'>vllm</a>", "\\<a href='x'\\>vllm\\</a\\>"),
        ("model\x1b[31m", "model\\\\x1b\\[31m"),
        ("report\u202efdp.exe", "report\\\\u202efdp.exe"),
        ("a\u2067b\u200fc\u061c", "a\\\\u2067b\\\\u200fc\\\\u061c"),
        ("TTFT p99: 12:30 http://host", "TTFT p99: 12:30 http://host"),
    ],
)
def test_plain_escapes_what_markdown_would_read(text: str, shown: str) -> None:
    assert plain(text) == shown


def test_figure_labels_from_files_are_html_escaped() -> None:
    figure = go.Figure(
        [
            go.Scatter(x=[1, 2], y=[3, 4], name='<a href="https://e.vil/">vllm</a>'),
            go.Bar(x=["<b>TP2</b>", "TP4"], y=[1, 2], name="nodes"),
        ]
    )
    escaped = escaped_labels(figure)
    assert escaped.data[0].name == '&lt;a href="https://e.vil/"&gt;vllm&lt;/a&gt;'
    assert list(escaped.data[1].x) == ["&lt;b&gt;TP2&lt;/b&gt;", "TP4"]
    assert list(escaped.data[0].x) == [1, 2]  # numbers untouched


def test_the_cli_console_escapes_control_characters_but_keeps_its_styling() -> None:
    buffer = io.StringIO()
    console = common._Console(file=buffer, force_terminal=True)
    table = Table("model")
    table.add_row("llama\x1b[2J\rx")
    console.print("run of evil\x1b]0;title\x07", markup=False, highlight=False)
    console.print(table)
    written = buffer.getvalue()
    assert "\x1b[2J" not in written and "\x1b]0;" not in written and "\r" not in written
    assert "llama\\x1b[2J\\x0dx" in written and "evil\\x1b]0;title" in written
    assert "\x1b[1m" in written  # the table's bold header still styled


def test_the_cli_console_escapes_bidi_controls() -> None:
    buffer = io.StringIO()
    console = common._Console(file=buffer, force_terminal=True, width=200)
    table = Table("model")
    table.add_row("report\u202efdp.exe")
    console.print(table)
    console.print("a\u2066b\u200e", markup=False, highlight=False)
    written = buffer.getvalue()
    assert not any(c in written for c in "\u202e\u2066\u200e")
    assert "report\\u202efdp.exe" in written and "a\\u2066b\\u200e" in written
