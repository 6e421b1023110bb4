"""The Runs page's upload section (issue 32): it imports only when its button is clicked, never
on Enter in a field; its outcome grid fits status and message; a refused file says its format
was not recognised and what to choose in the page's format selector (not a CLI flag)."""

from __future__ import annotations

import json

import pandas as pd
from streamlit.testing.v1 import AppTest

from db import run_lists
from db.engine import make_engine
from tests.ui.conftest import APP, FIXTURES, RUN_TIMEOUT_S

C8 = FIXTURES / "vllm-cpu-real" / "c8.json"
UPLOAD_KEYS = ("fact_", "upload_")


def _runs_page() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.switch_page("ui/runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _outcomes(at: AppTest) -> list[dict[str, object]]:
    tables = [d for d in at.dataframe if "detected" in d.value.columns]
    if not tables:
        return []
    frame: pd.DataFrame = tables[0].value
    return list(frame.to_dict("records"))


def _stored(url: str) -> int:
    return run_lists.count_runs(make_engine(url))


def _upload(at: AppTest, name: str, data: bytes) -> None:
    at.file_uploader(key="upload_files").set_value([(name, data, "application/json")])


def test_no_field_of_the_upload_sits_in_a_form(store_url: str) -> None:
    # In a form, Enter in any text field submits the form: a half-filled import was stored.
    at = _runs_page()
    fields = [*at.text_input, *at.number_input, *at.selectbox, *at.checkbox]
    upload = [f for f in fields if str(f.key).startswith(UPLOAD_KEYS)]
    assert len(upload) > 10, [f.key for f in upload]
    assert [f.key for f in upload if f.form_id] == []


def test_the_upload_imports_only_when_its_button_is_clicked(store_url: str) -> None:
    before = _stored(store_url)
    at = _runs_page()
    _upload(at, "c8.json", C8.read_bytes())
    at.selectbox(key="fact_Engine").set_value("vllm").run()
    # What Enter in a text field does outside a form: the value is committed, the page reruns.
    at.text_input(key="fact_model").set_value("tiny-random-llama").run()
    at.selectbox(key="fact_GPU").set_value("H100-SXM-80GB").run()
    assert _stored(store_url) == before and not _outcomes(at)
    at.number_input(key="fact_tp").set_value(1).run()
    assert _stored(store_url) == before and not _outcomes(at)
    at.button(key="upload_import").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (row,) = _outcomes(at)
    assert row["status"] == "stored", row
    assert _stored(store_url) == before + 1
    assert at.selectbox(key="inspect_run").value == row["run_id"]  # the run just imported
    at.text_input(key="fact_model").set_value("tiny-random-llama-2").run()
    assert _stored(store_url) == before + 1


def test_a_file_of_no_known_format_says_so_and_what_to_choose_on_the_page(
    store_url: str,
) -> None:
    at = _runs_page()
    _upload(at, "mystery.json", json.dumps({"rows": [1, 2, 3]}).encode())
    at.button(key="upload_import").click().run()
    (row,) = _outcomes(at)
    assert row["status"] == "rejected", row
    assert row["detected"] == "format not recognised", row
    message = str(row["message"])
    assert "--format" not in message and "'File format'" in message, message
    at.selectbox(key="upload_format").set_value("vllm-bench")
    at.button(key="upload_import").click().run()
    (row,) = _outcomes(at)
    assert "does not look like vllm-bench" in str(row["message"]), row
    assert row["detected"] != "format not recognised", row


def test_the_outcome_grid_fits_its_status_and_message(store_url: str) -> None:
    at = _runs_page()
    _upload(at, "mystery.json", json.dumps({"rows": [1, 2, 3]}).encode())
    at.button(key="upload_import").click().run()
    (grid,) = [d for d in at.dataframe if "detected" in d.value.columns]
    configs = json.loads(grid.proto.columns)
    widths = {name: configs[name].get("width") for name in grid.value.columns}
    assert all(widths.values()), widths
    assert sum(widths.values()) <= 1050, widths  # the wide layout at 1440 px, sidebar open
    # A message longer than its cell is shown in full beside the grid.
    (row,) = _outcomes(at)
    shown = " ".join(str(c.value) for c in at.caption)
    assert str(row["message"]) in shown.replace("\\", ""), shown


def test_a_model_served_from_a_path_is_listed_by_its_repo_id(store_url: str) -> None:
    served = "/models/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8"
    at = _runs_page()
    _upload(
        at, "c8.json", C8.read_text(encoding="utf-8").replace("tiny-random-llama", served).encode()
    )
    at.selectbox(key="fact_Engine").set_value("vllm")
    at.selectbox(key="fact_GPU").set_value("H100-SXM-80GB")
    at.number_input(key="fact_tp").set_value(1)
    at.button(key="upload_import").click().run()
    (row,) = _outcomes(at)
    assert row["status"] == "stored", row
    (runs,) = [d.value for d in at.dataframe if "imported_at" in d.value.columns]
    assert "openai/gpt-oss-120b" in runs["model"].tolist()
    models = at.multiselect(key="filter_model").options
    assert "openai/gpt-oss-120b" in models and not [m for m in models if "/models" in m], models
