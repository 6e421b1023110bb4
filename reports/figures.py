"""The plotly vocabulary the app's charts (ui/charts.py) and the report's (reports/charts.py)
share: one palette, one translucent band colour, one figure frame with the screen or the page
layout on top."""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.colors import qualitative

PALETTE: list[str] = list(qualitative.Plotly)
BAND_ALPHA = 0.15
# On screen: legends below the plot (at the side they squeeze the half-width charts away).
SCREEN_LAYOUT: dict[str, object] = {
    "legend": {"groupclick": "togglegroup", "orientation": "h", "yanchor": "top", "y": -0.4},
    "hovermode": "closest",
    "margin": {"t": 50},
}
# On an A4 page: a fixed size and a white template that prints.
PAGE_LAYOUT: dict[str, object] = {
    "template": "plotly_white",
    "width": 900,
    "height": 520,
    "legend": {"orientation": "h", "y": -0.2},
    "margin": {"l": 60, "r": 20, "t": 50, "b": 40},
}


def color(index: int) -> str:
    """The index-th colour of the palette, cycling."""
    return PALETTE[index % len(PALETTE)]


def translucent(hex_color: str, alpha: float = BAND_ALPHA) -> str:
    """'#636efa' -> 'rgba(99, 110, 250, 0.15)': a band under a line of that colour."""
    red, green, blue = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def figure(title: str, x_title: str, y_title: str, layout: dict[str, object]) -> go.Figure:
    """An empty figure with its titles and one of the layouts above."""
    made = go.Figure()
    made.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, **layout)
    return made


def escaped_labels(made: go.Figure) -> go.Figure:
    """The figure with every trace name and category label HTML-escaped: plotly renders tags
    in them (an engine named '<a href=...>vllm</a>' from a result file would be a live link in
    the legend), so text from files shows as written."""
    for trace in made.data:
        if isinstance(trace.name, str):
            trace.name = html.escape(trace.name, quote=False)
        for axis in ("x", "y"):
            values = getattr(trace, axis, None)
            if isinstance(values, Sequence) and _categories(values):
                setattr(trace, axis, [html.escape(str(v), quote=False) for v in values])
    return made


def _categories(values: Sequence[object]) -> bool:
    return not isinstance(values, str) and any(isinstance(v, str) for v in values)
