"""Demo data for a new store: the published runs and the shipped GPU price catalog."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from db import repository, run_lists
from db.prices import count_prices, replace_prices
from hardware.prices import load_catalog_csv
from measurements.demo.runs import demo_runs
from team.roles import SYSTEM, Actor


@dataclass(frozen=True, slots=True)
class DemoLoadResult:
    """What loading the demo data changed."""

    runs_created: int
    runs_already_present: int
    prices_loaded: int

    def message(self) -> str:
        """One line for people: what was stored and what was already there."""
        prices = (
            f"{self.prices_loaded} price entries loaded"
            if self.prices_loaded
            else "price catalog kept as it was"
        )
        return (
            f"demo data: {self.runs_created} runs stored, "
            f"{self.runs_already_present} already present; {prices}"
        )


def load_demo_data(engine: Engine, *, actor: Actor, reset_prices: bool = False) -> DemoLoadResult:
    """Store the published demo runs (deduplicated) and the price catalog if it is empty."""
    results = repository.save_runs(engine, demo_runs(), actor=actor)
    created = sum(1 for result in results if result.created)
    prices_loaded = 0
    if reset_prices or count_prices(engine) == 0:
        why = "restored" if reset_prices else "changed"
        prices_loaded = replace_prices(engine, load_catalog_csv(), actor=actor, why=why)
    return DemoLoadResult(created, len(results) - created, prices_loaded)


def ensure_demo_data(engine: Engine) -> DemoLoadResult | None:
    """Load the demo data into a store that has neither runs nor prices (a first start)."""
    if count_prices(engine) == 0 and run_lists.count_runs(engine) == 0:
        return load_demo_data(engine, actor=SYSTEM)
    return None
