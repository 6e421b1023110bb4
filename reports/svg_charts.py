"""The report's plotly figures drawn as SVG by matplotlib, for the PDF: no browser to start (a
headless chromium's start-up took seconds per report and sometimes failed outright), so a PDF
is a click in a meeting. reports/charts.py stays the one definition of every chart; this module
draws the parts of plotly it uses: line, marker and line+marker scatters (dotted, stepped, a band
filled to the trace before it), horizontal bars, dotted reference lines with their labels, titles,
axis titles and a legend below the plot.
"""

from __future__ import annotations

import html
import io
import math
import re
from collections.abc import Sequence

import plotly.graph_objects as go
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

INCH_PX = 100.0  # plotly's pixel sizes -> matplotlib inches
_RGBA = re.compile(r"rgba?\(([^)]*)\)")
_TAGS = re.compile(r"<[^>]+>")
_DASHES = {"dot": ":", "dash": "--", "dashdot": "-."}


def figure_svg(made: go.Figure) -> str:
    """One plotly figure as an SVG document's text."""
    layout = made.layout
    width = (layout.width or 900) / INCH_PX
    height = (layout.height or 520) / INCH_PX
    page = Figure(figsize=(width, height), dpi=INCH_PX)
    FigureCanvasSVG(page)
    axes = page.add_subplot()
    previous: go.Scatter | None = None
    for trace in made.data:
        if isinstance(trace, go.Bar):
            _bar(axes, trace)
        elif isinstance(trace, go.Scatter):
            _scatter(axes, trace, previous)
            previous = trace
    _references(axes, made)
    _frame(axes, made)
    buffer = io.StringIO()
    # Text as text (the PDF's own font), not as glyph outlines: a tenth of the size to lay out.
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "capplan"}):
        page.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.find("<svg") :]


def _scatter(axes: Axes, trace: go.Scatter, previous: go.Scatter | None) -> None:
    xs, ys = _numbers(trace.x), _numbers(trace.y)
    if trace.fill == "tonexty" and previous is not None:
        band = _color(trace.fillcolor) or (0.5, 0.5, 0.5, 0.15)
        axes.fill_between(xs, _numbers(previous.y), ys, color=band, linewidth=0)
        return
    mode = trace.mode or "lines"
    line = trace.line
    color = _color(line.color if line else None) or _color(_marker_color(trace))
    label = _label(trace)
    if "lines" in mode and not (line is not None and line.width == 0):
        style = _DASHES.get(line.dash if line else "", "-")
        shape = "steps-post" if line is not None and line.shape == "hv" else "default"
        marker = "o" if "markers" in mode else None
        axes.plot(
            xs, ys, linestyle=style, drawstyle=shape, marker=marker, markersize=4,
            color=color, label=label, linewidth=1.5,
        )  # fmt: skip
    elif "markers" in mode:
        symbol = trace.marker.symbol if trace.marker else None
        star = symbol == "star"
        size = trace.marker.size if trace.marker and trace.marker.size else 6
        axes.scatter(
            xs, ys, s=(size * (1.6 if star else 1.0)) ** 2 / 2, marker="*" if star else "o",
            color=color, label=label, zorder=3,
        )  # fmt: skip


def _bar(axes: Axes, trace: go.Bar) -> None:
    labels = [_plain(str(v)) for v in (trace.y or ())]
    values = _numbers(trace.x)
    color = _color(_marker_color(trace)) or "#636efa"
    axes.barh(range(len(labels)), values, color=color)
    axes.set_yticks(range(len(labels)), labels)
    axes.invert_yaxis()  # the first option on top, as plotly's reversed axis shows it


def _references(axes: Axes, made: go.Figure) -> None:
    """add_hline / add_vline: a dotted line across the plot and its annotation."""
    notes = list(made.layout.annotations or ())
    for index, shape in enumerate(made.layout.shapes or ()):
        text = _plain(notes[index].text) if index < len(notes) and notes[index].text else None
        if shape.xref == "x domain":  # a horizontal line at y
            axes.axhline(shape.y0, linestyle=":", color="#444", linewidth=1)
            if text:
                axes.annotate(text, (1.0, shape.y0), xycoords=("axes fraction", "data"),
                              ha="right", va="bottom", fontsize=8)  # fmt: skip
        elif shape.yref == "y domain":  # a vertical line at x
            axes.axvline(shape.x0, linestyle=":", color="#444", linewidth=1)
            if text:
                axes.annotate(text, (shape.x0, 1.0), xycoords=("data", "axes fraction"),
                              ha="left", va="top", fontsize=8)  # fmt: skip


def _frame(axes: Axes, made: go.Figure) -> None:
    layout = made.layout
    title = layout.title.text if layout.title else None
    axes.set_title(_plain(title or ""), loc="left", fontsize=11)
    axes.set_xlabel(_plain(layout.xaxis.title.text or ""))
    axes.set_ylabel(_plain(layout.yaxis.title.text or ""))
    axes.grid(True, color="#e5e5e5", linewidth=0.6)
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    if not _bars(made):
        axes.ticklabel_format(axis="both", style="plain", useOffset=False)
    handles, labels = axes.get_legend_handles_labels()
    if labels:
        axes.legend(
            handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2,
            fontsize=7, frameon=False,
        )  # fmt: skip


def _bars(made: go.Figure) -> bool:
    return any(isinstance(trace, go.Bar) for trace in made.data)


def _label(trace: go.Scatter) -> str | None:
    """A legend entry, or None (matplotlib's '_' prefix hides it) for traces plotly hides."""
    if trace.showlegend is False or not trace.name:
        return "_hidden"
    return _plain(trace.name)


def _marker_color(trace: go.Scatter | go.Bar) -> str | None:
    marker = trace.marker
    value = marker.color if marker is not None else None
    return value if isinstance(value, str) else None


def _numbers(values: Sequence[object] | None) -> list[float]:
    """Plotly's values with None (a gap) as NaN, which matplotlib leaves undrawn."""
    out = []
    for value in values or ():
        out.append(float(value) if isinstance(value, int | float) else math.nan)
    return out


def _color(value: str | None) -> str | tuple[float, ...] | None:
    """'#636efa' as it is; 'rgba(99, 110, 250, 0.15)' as matplotlib's (r, g, b, a) in 0-1."""
    if not value:
        return None
    match = _RGBA.fullmatch(value.strip())
    if match is None:
        return value
    parts = [float(p) for p in match[1].split(",")]
    rgb = tuple(p / 255.0 for p in parts[:3])
    return (*rgb, parts[3] if len(parts) > 3 else 1.0)


def _plain(text: str) -> str:
    """A label as it reads: plotly's escaped text unescaped, tags gone, and matplotlib's math
    mode ('$...$') disarmed so a dollar sign prints as one."""
    return html.unescape(_TAGS.sub("", text)).replace("$", r"\$")
