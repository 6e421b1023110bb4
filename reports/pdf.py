"""A Report as an A4 PDF for finance: summary first, then options, charts (SVG rendered by
kaleido through Debian's chromium), assumptions, provenance and runs (weasyprint).
"""

from __future__ import annotations

import html
import logging
import os
import shutil
import warnings
from pathlib import Path

import kaleido  # type: ignore[import-untyped]
import weasyprint  # type: ignore[import-untyped]

from errors import PlanningError
from reports.charts import report_figures
from reports.html_page import report_html
from reports.model import Report

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def report_pdf(report: Report) -> bytes:
    """The report as PDF bytes; PlanningError naming chromium when charts cannot be drawn."""
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
    """Each chart as inline SVG text, captioned, through one chromium for all of them."""
    _browser_path()
    kaleido.start_sync_server(silence_warnings=True)
    try:
        with warnings.catch_warnings():
            # plotly says per-call kaleido options are ignored while a server runs: expected.
            warnings.filterwarnings("ignore", message="The kopts argument", category=UserWarning)
            return [
                f"<h3>{html.escape(caption)}</h3>" + _svg(figure.to_image(format="svg"))
                for caption, figure in report_figures(report)
            ]
    except (RuntimeError, ValueError, OSError) as exc:
        raise PlanningError(
            f"could not draw the report's charts with kaleido and chromium ({exc}); install "
            "Debian's chromium (apt-get install chromium) or set BROWSER_PATH to a Chrome binary"
        ) from exc
    finally:
        kaleido.stop_sync_server(silence_warnings=True)


def _browser_path() -> None:
    """Point kaleido at the system chromium (it would otherwise try to download Chrome)."""
    if os.environ.get("BROWSER_PATH"):
        return
    found = next((p for p in CHROMIUM_PATHS if Path(p).exists()), None) or shutil.which("chromium")
    if found is None:
        raise PlanningError(
            "the PDF report needs chromium to draw its charts: none at "
            f"{', '.join(CHROMIUM_PATHS)} and BROWSER_PATH is not set; install chromium "
            "(apt-get install chromium) or choose the html/xlsx format"
        )
    os.environ["BROWSER_PATH"] = found


def _svg(data: bytes) -> str:
    text = data.decode("utf-8")
    start = text.find("<svg")
    return text[start:] if start >= 0 else text
