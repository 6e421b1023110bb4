"""The Models page in the real app (AppTest): the shipped catalog with MoE and attention facts,
a model the store added, and removing it."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from db.engine import make_engine
from planner.physics import catalog
from planner.physics.catalog import CONFIG_DIR
from team.roles import SYSTEM
from tests.ui.conftest import APP, RUN_TIMEOUT_S
from workflows.models import add_config


def _models_page() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.switch_page("ui/models.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _table(at: AppTest) -> list[dict[str, object]]:
    frame = next(df.value for df in at.dataframe if "active per token (B)" in df.value.columns)
    return frame.to_dict("records")


def test_the_catalog_shows_moe_models_with_their_active_size_and_attention(store_url: str) -> None:
    rows = {r["model"]: r for r in _table(_models_page())}
    r1 = rows["deepseek-r1"]
    assert r1["experts (used of routed)"] == "8 of 256" and r1["active per token (B)"] == 37.6
    assert "MLA" in str(r1["attention"]) and r1["from"] == "shipped"
    assert "sliding window 128" in str(rows["gpt-oss-120b"]["attention"])


def test_an_added_model_is_listed_and_can_be_removed(store_url: str) -> None:
    config = json.loads((CONFIG_DIR / "Qwen--Qwen3-8B_config.json").read_text())
    add_config(
        make_engine(store_url), config, "support/config.json", name="acme/Support-8B", actor=SYSTEM
    )
    catalog.forget_added()  # the page reads it back from the store
    at = _models_page()
    rows = {r["model"]: r for r in _table(at)}
    assert rows["support-8b"]["from"] == "added"
    at.selectbox(key="model_remove_choice").set_value("support-8b").run()
    at.button(key="model_remove").click().run()
    assert not at.exception
    assert "support-8b" not in {r["model"] for r in _table(at)}
    catalog.forget_added()


def test_a_config_read_from_a_hugging_face_cache_is_listed_by_its_model(store_url: str) -> None:
    # Its _name_or_path is the snapshot folder the engine loaded (issue 32 item 7), not a hash.
    config = json.loads((CONFIG_DIR / "Qwen--Qwen3-8B_config.json").read_text())
    config["_name_or_path"] = "/data/hf/models--acme--Support-9B/snapshots/0e9e39f2b1c3"
    add_config(make_engine(store_url), config, "support/config.json", actor=SYSTEM)
    catalog.forget_added()
    models = {r["model"] for r in _table(_models_page())}
    assert "support-9b" in models and not [m for m in models if "0e9e39f2" in m], models
    catalog.forget_added()
