"""A private demo-data store per test on the backend under test, announced through CAPPLAN_DB."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st

from tests.stores import Stores

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
FIXTURES = ROOT / "tests" / "fixtures"
# The first run of a page builds curves and fits every stored run: well over AppTest's 3 s default.
RUN_TIMEOUT_S = 60


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
