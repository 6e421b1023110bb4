"""A Report as an A4 PDF for finance: summary first, then options, charts (SVG drawn by
matplotlib, no browser), assumptions, provenance and runs (weasyprint).
"""

from __future__ import annotations

import html
import logging

import weasyprint  # type: ignore[import-untyped]

from reports.charts import report_figures
from reports.html_page import report_html
from reports.model import Report
from reports.svg_charts import figure_svg


def report_pdf(report: Report) -> bytes:
    """The report as PDF bytes."""
    page = report_html(report, interactive=False, svgs=chart_svgs(report))
    quiet = logging.getLogger("weasyprint")
    level = quiet.level
    # plotly's SVG carries CSS fill properties weasyprint reports as unknown yet draws right.
    quiet.setLevel(logging.ERROR)
    try:
        pdf: bytes = weasyprint.HTML(string=page).write_pdf()
    finally:
        quiet.setLevel(level)
    return pdf


def chart_svgs(report: Report) -> list[str]:
    """Each chart as inline SVG text, captioned (drawn without a browser: reports/svg_charts)."""
    return [
        f"<h3>{html.escape(caption)}</h3>" + figure_svg(figure)
        for caption, figure in report_figures(report)
    ]
