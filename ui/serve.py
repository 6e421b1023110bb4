"""`python -m ui.serve run app.py ...`: Streamlit's own command line, started after the pages'
heavy imports (scipy, pandas, plotly, the planner, the store layer and Alembic: seconds on a
2-core box), so the server pays them once at start-up and the first page a user opens does not
(bench/bench_plan_session.py, "first Plan page"). `capplan app` and the browser tests start it.
"""

from __future__ import annotations

import importlib
import logging
import sys

from streamlit.web.cli import main

PRELOADED = ("reports.export", "ui.background", "ui.charts", "ui.plan_form", "ui.resources")
# Each st.cache_data at import, before the server's runtime exists, logs "No runtime found":
# harmless (the cache is made at the first call, inside the runtime), so not shown here.
QUIET = "streamlit.runtime.caching.cache_data_api"


def preload() -> None:
    """Import the pages' modules now, without the cache decorators' start-up warning."""
    logger = logging.getLogger(QUIET)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        for name in PRELOADED:
            importlib.import_module(name)
    finally:
        logger.setLevel(level)


if __name__ == "__main__":
    preload()
    sys.exit(main())
