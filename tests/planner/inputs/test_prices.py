"""Price catalog: the shipped CSV, its defaults (the design notes' Nebius prices), ranges set
apart."""

from __future__ import annotations

from dataclasses import replace

import pytest

from errors import InputError, PlanningError
from planner.inputs.prices import (
    catalog_version,
    default_price,
    load_catalog_csv,
    parse_catalog,
    skipped_rows,
)


def test_shipped_catalog_defaults_are_the_design_example_prices() -> None:
    catalog = load_catalog_csv()
    # The design notes' scenario example: H100-SXM-80GB 2.95, H200-SXM-141GB 3.50 $/GPU-hour
    # (Nebius).
    h100 = default_price(catalog, "H100-SXM-80GB")
    h200 = default_price(catalog, "H200 SXM")
    assert (h100.provider, h100.usd_per_gpu_hour) == ("Nebius", 2.95)
    assert (h200.provider, h200.usd_per_gpu_hour) == ("Nebius", 3.5)
    # Nebius quotes no Blackwell GPU: B200 and GB200 default to their best on-demand quote.
    defaults = {entry.gpu: entry for entry in catalog if entry.is_default}
    assert set(defaults) == {
        "H100-SXM-80GB",
        "H200-SXM-141GB",
        "B200-SXM-180GB",
        "GB200-NVL72-186GB",
    }
    assert (defaults["B200-SXM-180GB"].provider, defaults["B200-SXM-180GB"].as_of) == (
        "Spheron", "2026-03-17",
    )  # fmt: skip  # medium confidence and dated beats RunPod's undated 2026 table row
    assert defaults["GB200-NVL72-186GB"].gpus_per_instance == 2  # a superchip, priced per GPU


def test_price_ranges_are_skipped_with_the_reason() -> None:
    catalog = load_catalog_csv()
    skipped = skipped_rows()
    assert {row.value for row in skipped} == {"3.50-5.00", "4.50-7.00", "2.65-14.24", "4.50-6.00"}
    assert all("range" in row.reason for row in skipped)
    assert all("-" not in str(entry.usd_per_gpu_hour) for entry in catalog)
    assert {entry.gpu for entry in catalog if not entry.is_lens} == {
        "H100-SXM-80GB", "H200-SXM-141GB", "B200-SXM-180GB", "GB200-NVL72-186GB",
        "B300-SXM-288GB", "GB300-NVL72-288GB",  # InferenceX's 3-year renting lens only
    }  # fmt: skip
    rentable = {e.gpu for e in catalog if e.pricing_type == "on_demand"}
    assert rentable == {"H100-SXM-80GB", "H200-SXM-141GB", "B200-SXM-180GB", "GB200-NVL72-186GB"}


def test_no_default_for_a_gpu_is_a_planning_error() -> None:
    # No rental price for B300 is published in the stored sources.
    with pytest.raises(PlanningError, match="B300"):
        default_price(load_catalog_csv(), "B300")


def test_catalog_version_ignores_order_and_tracks_content() -> None:
    catalog = load_catalog_csv()
    assert catalog_version(catalog) == catalog_version(list(reversed(catalog)))
    changed = [
        replace(catalog[0], usd_per_gpu_hour=catalog[0].usd_per_gpu_hour + 0.01),
        *catalog[1:],
    ]
    assert catalog_version(changed) != catalog_version(catalog)
    assert len(catalog_version(catalog)) == 12


def test_is_default_column_overrides_the_provider_rule() -> None:
    text = (
        "# my prices\n"
        "provider,instance_or_sku,gpu,pricing_type,usd_per_gpu_hour,is_default\n"
        "Acme,8x H100,H100-SXM-80GB,reserved,1.99,yes\n"
        "Nebius,HGX H100,H100-SXM-80GB,on_demand,2.95,\n"
    )
    entries, skipped = parse_catalog(text, "mine.csv")
    assert skipped == []
    assert default_price(entries, "H100-SXM-80GB").provider == "Acme"


def test_bad_number_names_file_line_and_field() -> None:
    text = (
        "provider,instance_or_sku,gpu,gpus_per_instance,pricing_type,usd_per_gpu_hour\n"
        "Acme,x,H100-SXM-80GB,eight,on_demand,2.0\n"
    )
    with pytest.raises(InputError) as info:
        parse_catalog(text, "bad.csv")
    assert info.value.file == "bad.csv" and info.value.field == "gpus_per_instance"
    assert "line 2" in str(info.value) and "eight" in str(info.value)


def test_reserved_price_comes_only_from_the_default_provider() -> None:
    from planner.inputs.prices import other_reserved_quotes, reserved_price

    catalog = load_catalog_csv()
    # Nebius (the default) quotes no reserved H100/H200 price; other providers' are listed.
    assert reserved_price(catalog, "H100-SXM-80GB") is None
    assert reserved_price(catalog, "B200") is None
    quotes = [(q.provider, q.usd_per_gpu_hour) for q in other_reserved_quotes(catalog, "H100")]
    assert quotes == [("CoreWeave", 1.79), ("Lambda", 1.85), ("RunPod", 1.94),
                      ("SemiAnalysis InferenceX TCO (rent, 3-yr commit)", 2.0)]  # fmt: skip
    text = (
        "provider,instance_or_sku,gpu,pricing_type,usd_per_gpu_hour\n"
        "Nebius,HGX H100,H100-SXM-80GB,on_demand,2.95\n"
        "Nebius,HGX H100 1y,H100-SXM-80GB,reserved_1y,2.10\n"
        "Lambda,8x H100,H100-SXM-80GB,reserved,1.85\n"
    )
    entries, _ = parse_catalog(text, "mine.csv")
    entry = reserved_price(entries, "H100-SXM-80GB")
    assert entry is not None and (entry.provider, entry.usd_per_gpu_hour) == ("Nebius", 2.10)


def test_a_picked_catalog_quote_is_cited_and_round_trips_through_yaml() -> None:
    from planner.inputs.prices import scenario_price
    from planner.inputs.scenario import scenario_from_yaml, scenario_to_yaml
    from tests.planner.builders import scenario

    catalog = load_catalog_csv()
    runpod = next(e for e in catalog if e.provider == "RunPod" and e.pricing_type == "on_demand")
    quote = {"provider": runpod.provider, "sku": runpod.sku, "pricing_type": "on_demand"}
    picked = scenario(
        pricing={runpod.gpu: runpod.usd_per_gpu_hour},
        price_quotes={runpod.gpu: {"on_demand": quote}},
    )
    price = scenario_price(picked, catalog, runpod.gpu)
    assert (
        price.entry == runpod and price.source == f"scenario pricing, picked: {runpod.describe()}"
    )
    again = scenario_from_yaml(scenario_to_yaml(picked), "again")
    assert again == picked and "price_quotes" in scenario_to_yaml(picked)
    assert "price_quotes" not in scenario_to_yaml(scenario())
    # The catalog moved on (or the price was scaled): cited as typed, not as the old quote.
    moved = picked.model_copy(update={"pricing": {runpod.gpu: runpod.usd_per_gpu_hour * 1.1}})
    assert "picked" not in scenario_price(moved, catalog, runpod.gpu).source
