"""A private demo-data store per test on the backend under test, announced through CAPPLAN_DB."""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.stores import Stores
from ui import background

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
FIXTURES = ROOT / "tests" / "fixtures"
# The first run of a page builds curves and fits every stored run: well over AppTest's 3 s default.
RUN_TIMEOUT_S = 60
POLL_S = 0.05


def shown(markdown: str) -> str:
    """An element's text as the page shows it: ui/text.plain's backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", markdown)


def app_page(**query: str) -> AppTest:
    """The app run once with these query parameters, no exception raised."""
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def settled(at: AppTest) -> AppTest:
    """Wait until the Plan page's ranges and sensitivity are in (ui/background.py computes them
    off the script thread; AppTest does not rerun the fragment that looks for them), then run the
    page again, so it draws them. Asserts nothing failed."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not background.idle() and time.monotonic() < deadline:
        time.sleep(POLL_S)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def store_url(stores: Stores, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A store holding the migrated schema and the demo runs and prices, for this test only."""
    url = stores.demo()
    monkeypatch.setenv("CAPPLAN_DB", url)
    yield url
    # The app caches one engine per store URL for the life of the process: let this test's go,
    # so its pooled connections close instead of piling up on a shared Postgres server.
    st.cache_resource.clear()
    st.cache_data.clear()
    gc.collect()
