"""`python -m ui.serve run app.py ...`: Streamlit's own command line, started after the pages'
heavy imports (scipy, pandas, plotly, the planner, the store layer and Alembic: seconds on a
2-core box), so the server pays them once at start-up and the first page a user opens does not;
and, once the server runs, the store is opened and the Plan page's first curves are read into the
shared caches (seconds at 10,000 runs) before anyone asks (bench/bench_plan_session.py,
"first Plan page"); the app's doors are closed first (ui/doors.py) and whether sign-in is on is
said once the server runs. `capplan app` and the browser tests start it.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
import time

from streamlit.web.cli import main

from ui import doors

PRELOADED = ("reports.export", "ui.background", "ui.charts", "ui.plan_form", "ui.resources")
# Each st.cache_data at import, before the server's runtime exists, logs "No runtime found":
# harmless (the cache is made at the first call, inside the runtime), so not shown here.
QUIET = "streamlit.runtime.caching.cache_data_api"
WARM = "capplan: store open and read"  # the warm-up's line on stderr when it is done


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


def warm_up(wait_s: float = 60.0) -> None:
    """Once Streamlit's runtime exists (its data caches live there): open the store (migrations,
    demo data on a first start) and read the Plan page's first model's curves and the price
    catalog into the caches every session shares; then say so on stderr. Nothing is fitted here:
    the first plan fits only the curves it picks (fitting all of a 10,000-run store's curves at
    the first workload took 13 s and slowed the first page down). A store that cannot be opened
    is left for the page to report."""
    # Imported here, after preload() has imported them with the start-up warning quieted.
    from streamlit import runtime  # noqa: PLC0415

    from errors import CapplanError  # noqa: PLC0415
    from ui import plan_form  # noqa: PLC0415
    from ui import resources as res  # noqa: PLC0415

    deadline = time.monotonic() + wait_s
    while not runtime.exists():
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)
    # Said here, where Streamlit has read its config: the secrets it finds are the app's own.
    print(doors.sign_in_line(), flush=True)
    start = time.perf_counter()
    url, model = res.db_url(), plan_form.DEFAULT_MODEL
    try:
        res.store_engine(url)
        version = res.store_version(url)
        curves = res.model_curves(url, version, model)
        res.curve_workloads(url, version)
        res.price_catalog(url, version)
    except CapplanError:
        return
    print(
        f"{WARM}: {len(curves)} curves of {model} in {time.perf_counter() - start:.1f} s",
        file=sys.stderr,
        flush=True,
    )


if __name__ == "__main__":
    doors.close()
    preload()
    threading.Thread(target=warm_up, name="capplan-warm-up", daemon=True).start()
    sys.exit(main())
