"""The Runs page lists the store a page at a time: page size, page number, filters and search
all reach the database, and the caption states the total."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from db import run_lists
from db.engine import make_engine
from tests.ui.conftest import APP, RUN_TIMEOUT_S


def _runs_page() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.switch_page("ui/runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _runs(at: AppTest) -> pd.DataFrame:
    (frame,) = [d.value for d in at.dataframe if "imported_at" in d.value.columns]
    return frame


def test_runs_page_walks_the_store_a_page_at_a_time(store_url: str) -> None:
    ids = [s.run_id for s in run_lists.list_runs(make_engine(store_url))][::-1]
    at = _runs_page()
    at.selectbox(key="runs_page_size").set_value(100).run()
    assert _runs(at)["run"].tolist() == ids[:100]
    last = -(-len(ids) // 100)
    at.number_input(key="runs_page").set_value(last).run()
    assert _runs(at)["run"].tolist() == ids[(last - 1) * 100 :]
    assert any(f"of {len(ids)}, newest first" in caption.value for caption in at.caption)


def test_runs_page_lists_newest_first_and_inspects_the_newest(store_url: str) -> None:
    # A run just imported is the first listed and the one inspected (issue 32 item 5).
    newest = max(s.run_id for s in run_lists.list_runs(make_engine(store_url)))
    at = _runs_page()
    ids = _runs(at)["run"].tolist()
    assert ids[0] == newest and ids == sorted(ids, reverse=True)
    assert at.selectbox(key="inspect_run").value == newest


def test_runs_page_search_and_filters_narrow_the_total(store_url: str) -> None:
    engine = make_engine(store_url)
    seed = [s.run_id for s in run_lists.list_runs(engine) if s.label == "seed-article"][::-1]
    at = _runs_page()
    at.number_input(key="runs_page").set_value(1).run()
    at.text_input(key="filter_text").set_value("SEED-ART").run()
    assert _runs(at)["run"].tolist() == seed
    at.multiselect(key="filter_engine").set_value(["vllm"]).run()
    runs = _runs(at)
    assert set(runs["engine"]) == {"vllm"} and len(runs) == 1
    at.text_input(key="filter_text").set_value("no such run anywhere").run()
    assert not [d for d in at.dataframe if "imported_at" in d.value.columns]
    assert "no stored run matches these filters" in [c.value for c in at.caption]


def test_a_results_folder_uploads_as_one_run_per_tool_run(store_url: str) -> None:
    real = Path(__file__).resolve().parents[1] / "fixtures" / "aiperf" / "real-0.13.0" / "c4"
    files = [
        (f"aiperf-c4/{path.relative_to(real).as_posix()}", path.read_bytes(), "application/json")
        for path in sorted(real.rglob("*"))
        if path.is_file()
    ]
    at = _runs_page()
    at.file_uploader(key="upload_folder").set_value(files)
    at.selectbox(key="fact_Engine").set_value("vllm")
    at.text_input(key="fact_model").set_value("tiny-random-llama")
    at.selectbox(key="fact_GPU").set_value("H100-SXM-80GB")
    at.number_input(key="fact_tp").set_value(1)
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    (table,) = [d.value for d in at.dataframe if "detected" in d.value.columns]
    rows = table.to_dict("records")
    assert [(r["file"], r["status"]) for r in rows] == [
        ("aiperf-c4/profile_export_aiperf.json", "stored"),
        ("aiperf-c4/", "skipped"),
    ], rows
    assert "the warm-up phase (2)" in rows[1]["message"]
    assert "other exports of the run kept (4)" in rows[1]["message"]
