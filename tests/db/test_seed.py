"""Demo data: published runs and the price catalog on a first start, once."""

from __future__ import annotations

from db import run_lists
from db.engine import make_engine
from db.prices import count_prices, replace_prices
from db.seed import ensure_demo_data, load_demo_data
from planner.inputs.prices import load_catalog_csv
from team.roles import SYSTEM
from tests.stores import Stores


def test_first_start_loads_demo_data_once(stores: Stores) -> None:
    url = stores.migrated()
    engine = make_engine(url)
    first = ensure_demo_data(engine)
    assert (
        first is not None and first.runs_created == 672
    )  # 2 seed-article, 230 + 440 silicon-sample runs
    assert first.prices_loaded == len(load_catalog_csv())
    assert ensure_demo_data(engine) is None
    labels = {summary.label for summary in run_lists.list_runs(engine)}
    # A configuration the sample measured twice at a load is kept as a repeat run.
    assert {label.split(" (repeat")[0] for label in labels if label} == {
        "seed-article",
        "aiconfigurator-silicon-sample",
    }


def test_reloading_keeps_edited_prices_unless_asked(stores: Stores) -> None:
    url = stores.migrated()
    engine = make_engine(url)
    load_demo_data(engine, actor=SYSTEM)
    replace_prices(engine, load_catalog_csv()[:2], actor=SYSTEM)
    again = load_demo_data(engine, actor=SYSTEM)
    assert again.runs_created == 0 and again.prices_loaded == 0
    assert count_prices(engine) == 2
    assert "kept" in again.message()
    reset = load_demo_data(engine, reset_prices=True, actor=SYSTEM)
    assert reset.prices_loaded == len(load_catalog_csv())
