"""Reports: the capacity report's model (reports.model) and its renderers (PDF, XLSX, HTML, CSV,
JSON), the plan's exports (reports.export) and the plotly vocabulary the app's charts share
(reports.figures). The planner computes; this package only lays out and writes.

Heavy libraries (plotly, openpyxl, matplotlib, weasyprint) are imported by the modules that draw or
write with them, which the shells import only when rendering; reports.formats is light.
"""
