"""The report formats and one dispatch over their renderers, each imported only when asked for
(`capplan --help` lists the formats without loading plotly, openpyxl, matplotlib or weasyprint)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reports.model import Report

REPORT_FORMATS = ("pdf", "xlsx", "html", "csv", "json")


def render_report(report: Report, fmt: str) -> bytes:
    """The report in one of REPORT_FORMATS, as bytes (text formats UTF-8)."""
    if fmt == "pdf":
        from reports.pdf import report_pdf  # noqa: PLC0415 - matplotlib and weasyprint on demand

        return report_pdf(report)
    from reports import html_page, render  # noqa: PLC0415 - plotly and openpyxl on demand

    if fmt == "xlsx":
        return render.report_xlsx(report)
    text = {"html": html_page.report_html, "csv": render.report_csv, "json": render.report_json}
    if fmt not in text:
        raise ValueError(f"unknown report format {fmt!r}: expected one of {REPORT_FORMATS}")
    return text[fmt](report).encode("utf-8")
