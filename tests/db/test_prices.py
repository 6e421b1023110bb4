"""The stored price catalog: round trip, whole replacement, and replaces at once."""

from __future__ import annotations

import csv
import io
from dataclasses import replace

import pytest
from sqlalchemy import Engine

from db.prices import count_prices, list_prices, prices_updated_at, replace_prices
from errors import InputError
from hardware.prices import DEFAULT_CATALOG, parse_catalog
from planner.inputs.prices import PriceEntry, load_catalog_csv
from team.roles import SYSTEM
from tests.stores import row_counts


def test_replace_prices_round_trips_the_shipped_catalog(engine: Engine) -> None:
    catalog = load_catalog_csv()
    assert count_prices(engine) == 0
    assert prices_updated_at(engine) is None
    assert replace_prices(engine, catalog, actor=SYSTEM) == len(catalog) > 0
    assert list_prices(engine) == catalog
    assert count_prices(engine) == len(catalog)
    edited_at = prices_updated_at(engine)
    assert edited_at is not None
    assert edited_at.tzinfo is not None


def test_replace_prices_replaces_the_whole_catalog(engine: Engine) -> None:
    replace_prices(engine, load_catalog_csv(), actor=SYSTEM)
    one = PriceEntry(
        provider="Acme",
        sku="8xH200",
        gpu="H200-SXM-141GB",
        gpus_per_instance=8,
        pricing_type="reserved_1y",
        usd_per_gpu_hour=2.5,
        usd_per_instance_hour=None,
        region="",
        as_of="2026-01",
        source="quote",
        confidence="low",
        notes="",
        is_default=True,
    )
    assert replace_prices(engine, [one], actor=SYSTEM) == 1
    assert list_prices(engine) == [one]
    assert replace_prices(engine, [], actor=SYSTEM) == 0
    assert count_prices(engine) == 0


def test_catalog_replaced_by_several_sessions_at_once_holds_one_catalog(db_url: str) -> None:
    # Each replace deletes what it can see and inserts its rows: without a lock, Postgres let
    # four at once leave four catalogs (80 rows for 20 quotes).
    from concurrent.futures import ThreadPoolExecutor

    from db.engine import make_engine

    catalog = load_catalog_csv()

    def replace(_: int) -> int:
        own = make_engine(db_url)
        try:
            return replace_prices(own, catalog, actor=SYSTEM)
        finally:
            own.dispose()

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(replace, range(8))) == [len(catalog)] * 8
    assert row_counts(db_url, ("prices",)) == {"prices": len(catalog)}


@pytest.mark.hostile
@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"usd_per_gpu_hour": 1e308}, "usd_per_gpu_hour"),
        ({"usd_per_gpu_hour": -1.0}, "usd_per_gpu_hour"),
        ({"usd_per_instance_hour": 1e308}, "usd_per_instance_hour"),
        ({"gpus_per_instance": 10**9}, "gpus_per_instance"),
    ],
)
def test_the_store_refuses_a_quote_no_provider_could_give(
    engine: Engine, change: dict[str, float], field: str
) -> None:
    """Whatever wrote it (the Prices page, a catalog file, a script), the store checks last."""
    catalog = load_catalog_csv()
    replace_prices(engine, catalog, actor=SYSTEM)
    bad = replace(catalog[1], **change)
    with pytest.raises(InputError, match="prices row 2") as caught:
        replace_prices(engine, [catalog[0], bad], actor=SYSTEM)
    assert caught.value.field == field
    assert list_prices(engine) == catalog


@pytest.mark.hostile
def test_a_catalog_file_price_beyond_any_quote_is_left_out_with_the_reason() -> None:
    lines = DEFAULT_CATALOG.read_text(encoding="utf-8").splitlines()
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    good = next(row for row in rows if row["usd_per_gpu_hour"])
    bad = {**good, "usd_per_gpu_hour": "1e308"}
    entries, skipped = parse_catalog(_csv([good, bad]), "p.csv")
    assert len(entries) == 1
    assert [(row.line, row.reason) for row in skipped] == [
        (3, "price must be > 0 and at most 10000 USD per GPU-hour (1e308)")
    ]
    too_many = {**good, "gpus_per_instance": "100000"}
    entries, skipped = parse_catalog(_csv([good, too_many]), "p.csv")
    assert len(entries) == 1
    assert [(row.line, row.value, row.reason) for row in skipped] == [
        (3, "100000", "gpus_per_instance must be 1 to 1024")
    ]


def _csv(rows: list[dict[str, str]]) -> str:
    """Catalog CSV text with the rows' columns as its header."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
