"""An added model config's name is cleaned as it enters: a zero-width space or a full-width letter
in it is normalised away, so it is stored and planned under the name it prints as."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from db.engine import make_engine
from planner.physics import catalog
from planner.physics.catalog import CONFIG_DIR
from team.roles import SYSTEM
from tests.stores import Stores
from workflows import models

pytestmark = pytest.mark.hostile


@pytest.fixture
def forget() -> Iterator[None]:
    yield
    catalog.forget_added()  # the catalog is per process: later tests must not see these


@pytest.mark.usefixtures("forget")
def test_an_added_name_with_invisible_and_wide_characters_is_stored_clean(stores: Stores) -> None:
    engine = make_engine(stores.migrated())
    config = json.loads((CONFIG_DIR / "Qwen--Qwen3-8B_config.json").read_text(encoding="utf-8"))
    try:
        added = models.add_config(
            engine, config, "acme.json", name="acme/Ｓupport\u200b-8B", actor=SYSTEM
        )
        assert added.name == "support-8b"
        assert [m.name for m in models.added_models(engine)] == ["support-8b"]
    finally:
        engine.dispose()
