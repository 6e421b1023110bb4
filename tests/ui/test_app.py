"""The app end to end through AppTest: every page launches on a real SQLite store with the demo
data, and the Runs, Plan and Prices pages do what their widgets ask.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections import Counter

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from db import run_lists, run_reads
from db.engine import make_engine
from db.prices import list_prices
from measurements.demo.runs import demo_runs
from planner.inputs.prices import catalog_version, load_catalog_csv
from tests.stores import Stores
from tests.ui.conftest import APP, FIXTURES, RUN_TIMEOUT_S, settled, shown
from ui.plan_answer import RANGE_COLUMNS

PAGES = {
    "ui/plan.py": "Plan capacity",
    "ui/curves.py": "Curves",
    "ui/runs.py": "Runs",
    "ui/probe.py": "Probe an endpoint",
    "ui/scenarios.py": "Scenarios",
    "ui/prices.py": "GPU prices",
}


def _page(path: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    if path != "ui/plan.py":
        at.switch_page(path).run()
    if path == "ui/runs.py":  # every demo run on one page (672 of them; 250 by default)
        at.selectbox(key="runs_page_size").set_value(1000).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# st.dataframe keys do not reach AppTest for read-only tables: find each by a column of its own.
TABLE_COLUMN = {
    "runs_table": "imported_at",
    "upload_outcomes_table": "status",
    "levels_reported": "requests_sent",
    "options_table": "recommended",
    "ranges_table": "Nodes P50",
}


def _table(at: AppTest, name: str) -> pd.DataFrame:
    frames = [d.value for d in at.dataframe if TABLE_COLUMN[name] in d.value.columns]
    assert len(frames) == 1, f"expected one {name} table, found {len(frames)}"
    frame: pd.DataFrame = frames[0]
    return frame


def test_every_page_launches_without_exception(store_url: str) -> None:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    for path, title in PAGES.items():
        at.switch_page(path).run()
        assert not at.exception, (path, [e.value for e in at.exception])
        assert not at.error, (path, [e.value for e in at.error])
        assert at.title[0].value == title


def test_first_start_on_an_empty_store_migrates_and_loads_the_demo_runs(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPPLAN_DB", stores.empty("fresh"))
    runs = _table(_page("ui/runs.py"), "runs_table")
    expected = demo_runs()
    assert len(runs) == len(expected)
    assert Counter(runs["engine"]) == Counter(run.deployment.engine for run in expected)


def test_a_store_that_cannot_be_opened_is_reported_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAPPLAN_DB", "nosuch://db.example/capplan")
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "unknown kind of database 'nosuch' in nosuch://db.example/capplan: use sqlite:///PATH "
        "(or a plain file path) or postgresql+psycopg://..."
    ]


def test_curves_page_shows_every_curve_of_the_chosen_model_and_workload(store_url: str) -> None:
    engine = make_engine(store_url)
    at = _page("ui/curves.py")
    assert at.selectbox(key="curves_model").value == "meta-llama/Llama-3.1-70B"
    assert at.selectbox(key="curves_workload").value == "1024/1024"
    expected = {
        s.run_id
        for s in run_lists.list_runs(engine)
        if s.model == "meta-llama/Llama-3.1-70B" and (s.isl, s.osl) == (1024, 1024)
    }
    assert set(at.multiselect(key="curves_runs_meta-llama/Llama-3.1-70B_1024/1024").value) == (
        expected
    )
    quality = next(d.value for d in at.dataframe if "held_out_mape_pct" in d.value.columns)
    assert set(quality[quality["series"] == "throughput"]["run"]) == expected
    assert len(at.get("plotly_chart")) == 4
    physics = next(d.value for d in at.dataframe if "above a ceiling" in d.value.columns)
    assert set(physics["run"]) == expected
    assert set(physics["above a ceiling"]) == {"no"}  # the silicon sample is physically sound
    assert (physics["max % of throughput ceiling"] < 100).all()
    # The seed article states no ISL/OSL: its curves sit under "not stated".
    at.selectbox(key="curves_workload").set_value("not stated").run()
    assert not at.exception
    seed = {s.run_id for s in run_lists.list_runs(engine) if s.label == "seed-article"}
    assert set(at.multiselect(key="curves_runs_meta-llama/Llama-3.1-70B_not stated").value) == seed
    physics = next(d.value for d in at.dataframe if "above a ceiling" in d.value.columns)
    # 81.4 tok/s per stream on one H100 for a 70B FP8 model: above the 48 tok/s ceiling.
    assert set(physics["above a ceiling"]) == {"YES"}
    assert (physics["max % of stream ceiling"] > 140).all()


def test_runs_page_filters_the_table_by_engine(store_url: str) -> None:
    at = _page("ui/runs.py")
    at.multiselect(key="filter_engine").set_value(["tensorrt-llm"]).run()
    runs = _table(at, "runs_table")
    wanted = [r for r in demo_runs() if r.deployment.engine == "tensorrt-llm"]
    assert len(runs) == len(wanted) > 0
    assert set(runs["engine"]) == {"tensorrt-llm"}


def test_runs_page_upload_stores_good_files_and_rejects_bad_ones(store_url: str) -> None:
    at = _page("ui/runs.py")
    before = len(_table(at, "runs_table"))
    good = (FIXTURES / "vllm-cpu-real" / "c8.json").read_bytes()
    at.file_uploader(key="upload_files").set_value(
        [("c8.json", good, "application/json"), ("broken.json", b'{"date": ', "application/json")]
    )
    # The file names no GPU and no TP: the form says them, else the run is refused (item 8).
    at.selectbox(key="fact_GPU").set_value("H100-SXM-80GB")
    at.number_input(key="fact_tp").set_value(1)
    at.button(key="upload_import").click().run()
    assert not at.exception
    outcomes = _table(at, "upload_outcomes_table")
    by_file = dict(zip(outcomes["file"], outcomes["status"], strict=True))
    assert by_file == {"c8.json": "stored", "broken.json": "rejected"}
    rejected = outcomes[outcomes["file"] == "broken.json"]["message"].iloc[0]
    assert "broken.json" in rejected and "not valid JSON" in rejected
    runs = _table(at, "runs_table")
    assert len(runs) == before + 1
    assert runs.iloc[0]["model"] == "tiny-random-llama"  # model_id in the fixture, newest first


def test_runs_page_refuses_a_file_over_the_upload_limit_in_place(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPPLAN_MAX_UPLOAD_MB", "0.001")  # about 1 KB: c8.json is 3.7 KB
    engine = make_engine(store_url)
    before = run_lists.count_runs(engine)
    at = _page("ui/runs.py")
    big = (FIXTURES / "vllm-cpu-real" / "c8.json").read_bytes()
    assert len(big) > 0.001 * 1024 * 1024
    at.file_uploader(key="upload_files").set_value([("c8.json", big, "application/json")])
    at.button[0].click().run()
    assert not at.exception
    assert any("c8.json" in e.value and "limit" in e.value for e in at.error), at.error
    assert run_lists.count_runs(engine) == before
    engine.dispose()


def test_runs_page_shows_a_run_levels_and_deletes_it_after_confirmation(store_url: str) -> None:
    engine = make_engine(store_url)
    seed = next(s for s in run_lists.list_runs(engine) if s.label == "seed-article")
    at = _page("ui/runs.py")
    at.selectbox(key="inspect_run").set_value(seed.run_id).run()
    levels = _table(at, "levels_reported")
    # The seed article's published output tok/s at 1/16/64/128 streams.
    published = {"vllm": [68.2, 1010, 2840, 3710], "tensorrt-llm": [81.4, 1240, 3620, 4890]}
    assert levels["output_tok_s"].tolist() == published[seed.engine]
    assert levels["load"].tolist() == [1, 16, 64, 128]
    delete = next(b for b in at.button if b.label == f"Delete run {seed.run_id}")
    assert delete.disabled  # nothing happens before the confirmation box is ticked
    at.checkbox(key=f"confirm_delete_{seed.run_id}").check().run()
    next(b for b in at.button if b.label == f"Delete run {seed.run_id}").click().run()
    assert not at.exception
    assert f"run {seed.run_id} deleted (in the trash)" in [s.value for s in at.success]
    assert seed.run_id not in _table(at, "runs_table")["run"].tolist()
    assert seed.run_id not in [s.run_id for s in run_lists.list_runs(engine)]
    # The delete went to the trash: its undo, offered in place, brings the run back.
    next(b for b in at.button if b.label == f"Undo: bring run {seed.run_id} back").click().run()
    assert f"run {seed.run_id} is back" in [s.value for s in at.success]
    assert seed.run_id in [s.run_id for s in run_lists.list_runs(engine)]


def _recommended(options: pd.DataFrame) -> pd.Series:
    chosen = options[options["recommended"]]
    assert len(chosen) == 1
    return chosen.iloc[0]


def test_plan_page_recommends_the_cheapest_option_that_meets_the_sla(store_url: str) -> None:
    at = settled(_page("ui/plan.py"))  # the XLSX and JSON exports wait for the ranges
    assert len(at.success) == 1
    options = _table(at, "options_table")
    choice = _recommended(options)
    # Options whose data breaks a physical ceiling (the seed article's "one H100") are passed over.
    meeting = options[options["meets_sla"] & ~options["above_physical_ceiling"]]
    assert bool(choice["meets_sla"]) and not choice["above_physical_ceiling"]
    assert options[options["meets_sla"]]["above_physical_ceiling"].any()
    assert choice["total_monthly_cost_usd"] == meeting["total_monthly_cost_usd"].min()
    assert f"${choice['total_monthly_cost_usd']:,.0f}/month" in at.success[0].value
    assert [getattr(b, "label", None) for b in at.get("download_button")] == [
        "Scenario as YAML",
        "Plan as XLSX",
        "Plan as CSV",
        "Plan as JSON",
    ]


def test_plan_page_shows_cost_ranges_and_what_moves_the_answer(store_url: str) -> None:
    at = settled(_page("ui/plan.py"))
    options = _table(at, "options_table")
    # The page heads the columns in words (ui.plan_answer.RANGE_COLUMNS): read them by field.
    fields = {shown: field for field, shown in RANGE_COLUMNS.items()}
    ranges = _table(at, "ranges_table").rename(columns=fields).set_index("option")
    choice = _recommended(options)
    sized = ranges.dropna(subset=["nodes_p50"])
    assert (sized["nodes_p10"] <= sized["nodes_p50"]).all()
    assert (sized["nodes_p50"] <= sized["nodes_p90"]).all()
    assert (sized["usd_per_month_p10"] <= sized["usd_per_month_p90"]).all()
    # On measured curves the planned fleet sits near the median; a projection across GPU
    # generations carries a wide validated error, so its 90% fleet may sit far above it.
    derived = set(options.loc[options["provenance"] == "projected", "option"])
    near = sized[~sized.index.isin(derived)]
    assert len(near) and (abs(near["nodes_p50"] - near["nodes_planned"]) <= 1).all()
    far = sized[sized.index.isin(derived)]
    assert (far["nodes_planned"] >= far["nodes_p50"]).all()
    titles = [t for t in sized.index if t == choice["option"]]
    assert titles, "the recommended option has a range"
    assert any("How sure is this?" in h.value for h in at.subheader)
    assert any("What moves the answer" in h.value for h in at.subheader)
    assert len(at.get("plotly_chart")) == 1  # the cost ranges; the tornado when asked for
    settled(at.button(key="plan_sensitivity_show").click().run())
    assert len(at.get("plotly_chart")) == 2  # cost ranges and the tornado


def test_autoscaling_a_working_day_costs_less_than_a_static_fleet(store_url: str) -> None:
    at = _page("ui/plan.py")
    at.number_input(key="plan_demand_peak_requests_per_s").set_value(60.0).run()
    static = _recommended(_table(at, "options_table"))["total_monthly_cost_usd"]
    at.selectbox(key="plan_profile_shape").set_value("working day").run()
    at.radio(key="plan_scaling").set_value("autoscale").run()
    assert not at.exception, [e.value for e in at.exception]
    options = _table(at, "options_table")
    scaled = _recommended(options)
    assert scaled["scaling"] == "autoscale"
    assert scaled["total_monthly_cost_usd"] < static
    assert scaled["autoscale_saving_usd"] > 0


def test_a_factor_annotates_the_recommendation_in_place(store_url: str) -> None:
    at = _page("ui/plan.py")
    at.checkbox(key="plan_factor_consumer_gpus").check().run()
    assert not at.exception
    notes = " ".join(m.value for m in at.markdown)  # the recommendation's bullets
    assert "consumer" in notes.lower()


def test_a_tighter_ttft_target_changes_the_plan(store_url: str) -> None:
    at = _page("ui/plan.py")
    loose = _table(at, "options_table").set_index("run_id")
    loose_text = at.success[0].value
    at.number_input(key="plan_sla_ttft_p99_ms").set_value(40.0).run()
    assert not at.exception
    tight = _table(at, "options_table").set_index("run_id")
    messages = [m.value for m in (*at.success, *at.error, *at.warning)]
    assert messages and loose_text not in messages
    # Tightening a target can only lower the concurrency a replica may run at.
    before = loose["concurrency_per_replica"].to_dict()
    for run_id, meets, c_star in zip(
        tight.index, tight["meets_sla"], tight["concurrency_per_replica"], strict=True
    ):
        if meets and not math.isnan(before[run_id]):
            assert c_star <= before[run_id]
    assert tight["meets_sla"].sum() < loose["meets_sla"].sum()
    bound = tight[tight["meets_sla"]]["binding_constraint"]
    allowed = (
        "TTFT p99 <= 40 ms",
        "measured range",
        "TTFT p99 not measured above this concurrency",
    )
    assert all(text in allowed for text in bound)


def test_plan_page_shows_a_bad_input_in_place(store_url: str) -> None:
    at = _page("ui/plan.py")
    at.number_input(key="plan_demand_peak_requests_per_s").set_value(0.0).run()
    assert not at.exception
    (beside,) = at.sidebar.error  # under the field, in words
    assert "must be more than 0" in shown(beside.value)
    (said,) = at.main.error
    assert shown(said.value).startswith("Not applied: Peak requests per second (req/s) must be")
    assert "you entered 0.0" in shown(said.value)
    assert "demand.peak_requests_per_s" not in shown(said.value)
    assert at.success  # the last plan stays on the page


def test_plan_page_saves_a_scenario_and_loads_it_back(store_url: str) -> None:
    at = _page("ui/plan.py")
    at.text_input(key="plan_name").set_value("agent platform").run()
    at.number_input(key="plan_sla_ttft_p99_ms").set_value(250.0).run()
    at.selectbox(key="plan_price_quote_H200-SXM-141GB").set_value("type a price").run()
    at.number_input(key="plan_price_H200-SXM-141GB").set_value(4.25).run()
    at.selectbox(key="plan_profile_shape").set_value("working day").run()
    at.radio(key="plan_scaling").set_value("autoscale").run()
    at.checkbox(key="plan_factor_multi_lora").check().run()
    at.button(key="plan_save").click().run()
    assert "saved scenario 'agent platform' and this plan in its history" in [
        s.value for s in at.success
    ]
    at.number_input(key="plan_sla_ttft_p99_ms").set_value(900.0).run()
    at.text_input(key="plan_name").set_value("something else").run()
    at.number_input(key="plan_price_H200-SXM-141GB").set_value(9.0).run()
    at.radio(key="plan_scaling").set_value("static").run()
    at.checkbox(key="plan_factor_multi_lora").uncheck().run()
    at.selectbox(key="plan_profile_shape").set_value("flat (peak-to-average ratio only)").run()
    at.selectbox(key="plan_saved").set_value("agent platform").run()
    at.button(key="plan_load").click().run()
    assert not at.exception
    assert at.number_input(key="plan_sla_ttft_p99_ms").value == 250.0
    assert at.text_input(key="plan_name").value == "agent platform"
    assert at.number_input(key="plan_price_H200-SXM-141GB").value == 4.25
    assert at.radio(key="plan_scaling").value == "autoscale"
    assert at.checkbox(key="plan_factor_multi_lora").value
    assert at.selectbox(key="plan_profile_shape").value == "working day"
    bound = set(_table(at, "options_table")["binding_constraint"].dropna())
    assert "TTFT p99 <= 250 ms" in bound  # the loaded SLA is the one the plan ran with


def test_plan_page_prices_default_to_the_catalog_and_take_an_override(store_url: str) -> None:
    defaults = {e.gpu: e.usd_per_gpu_hour for e in load_catalog_csv() if e.is_default}
    at = _page("ui/plan.py")
    picked = at.selectbox(key="plan_price_quote_H100-SXM-80GB").value
    assert picked is not None and picked.startswith("Nebius | ")  # the catalog default row
    options = _table(at, "options_table")
    assert set(options["price_source"].str.startswith("catalog default")) == {True}
    at.selectbox(key="plan_price_quote_H100-SXM-80GB").set_value("type a price").run()
    at.number_input(key="plan_price_H100-SXM-80GB").set_value(1.75).run()
    options = _table(at, "options_table")
    h100 = options[options["gpu"] == "H100-SXM-80GB"]
    h200 = options[options["gpu"] == "H200-SXM-141GB"]
    assert set(h100["usd_per_gpu_hour"]) == {1.75}
    assert {s.split(" (")[0] for s in h100["price_source"]} == {"scenario pricing"}
    assert set(h200["usd_per_gpu_hour"]) == {defaults["H200-SXM-141GB"]}


def _edit_prices(at: AppTest, edited_rows: dict[int, dict[str, object]]) -> AppTest:
    key = at.data_editor[0].key
    assert key is not None
    at.session_state[key] = {"edited_rows": edited_rows, "added_rows": [], "deleted_rows": []}
    return at


def test_prices_page_rejects_a_negative_price_and_keeps_the_catalog(store_url: str) -> None:
    engine = make_engine(store_url)
    stored = list_prices(engine)
    at = _page("ui/prices.py")
    _edit_prices(at, {2: {"usd_per_gpu_hour": -1.5}})
    next(b for b in at.button if b.label == "Save catalog").click().run()
    assert not at.exception
    assert len(at.error) == 1
    message = shown(at.error[0].value)
    assert "row 3" in message and "usd_per_gpu_hour" in message and "-1.5" in message
    assert list_prices(engine) == stored


@pytest.mark.hostile
def test_prices_page_refuses_a_price_no_quote_could_be(store_url: str) -> None:
    engine = make_engine(store_url)
    stored = list_prices(engine)
    at = _page("ui/prices.py")
    _edit_prices(at, {0: {"usd_per_gpu_hour": 1e308}})
    next(b for b in at.button if b.label == "Save catalog").click().run()
    assert not at.exception and len(at.error) == 1
    message = shown(at.error[0].value)
    assert "row 1" in message and "usd_per_gpu_hour" in message and "at most 10000" in message
    assert list_prices(engine) == stored


def test_prices_page_saves_an_edit_and_restores_the_shipped_catalog(store_url: str) -> None:
    engine = make_engine(store_url)
    at = _page("ui/prices.py")
    _edit_prices(at, {0: {"usd_per_gpu_hour": 11.11}})
    next(b for b in at.button if b.label == "Save catalog").click().run()
    assert not at.exception and not at.error
    saved = list_prices(engine)
    assert saved[0].usd_per_gpu_hour == 11.11
    assert catalog_version(saved) in at.caption[0].value
    next(b for b in at.button if b.label == "Restore shipped catalog").click().run()
    assert list_prices(engine) == load_catalog_csv()
    assert catalog_version(load_catalog_csv()) in at.caption[0].value


def test_a_stream_cap_bounds_every_options_concurrency(store_url: str) -> None:
    at = _page("ui/plan.py")
    at.number_input(key="plan_max_streams").set_value(16).run()
    assert not at.exception
    table = _table(at, "options_table")
    sized = table[table["meets_sla"].astype(bool)]
    assert len(sized) > 0 and (sized["concurrency_per_replica"] <= 16).all()


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_runs_page_imports_a_mixed_batch_and_a_zip_with_the_forms_facts(store_url: str) -> None:
    at = _page("ui/runs.py")
    before = len(_table(at, "runs_table"))
    folder = _zip(
        {
            "results/aiperf/profile_export_aiperf.json": (
                FIXTURES / "aiperf" / "k8s-dev__profile_export_aiperf.json"
            ).read_bytes(),
            "results/llmperf/individual_responses.json": (
                FIXTURES / "llmperf" / "llmperf-leaderboard__individual__anyscale_70b.json"
            ).read_bytes(),
            "results/notes.json": b'{"hello": 1}',
        }
    )
    guidellm = (FIXTURES / "guidellm" / "guidellm__benchmarks_stripped_v0.2-era.yaml").read_bytes()
    at.file_uploader(key="upload_files").set_value(
        [
            ("results.zip", folder, "application/zip"),
            ("benchmarks.yaml", guidellm, "application/yaml"),
        ]
    )
    at.selectbox(key="fact_Engine").set_value("vllm")
    at.text_input(key="fact_model").set_value("meta-llama/Llama-3.1-70B-Instruct")
    at.number_input(key="fact_concurrency").set_value(8)
    at.selectbox(key="fact_GPU").set_value("H100-SXM-80GB")
    at.number_input(key="fact_tp").set_value(1)
    # llmperf's per-request records give no output tok/s: stored only when asked to be.
    at.checkbox(key="upload_store_unplannable").check()
    at.button[0].click().run()
    assert not at.exception
    outcomes = _table(at, "upload_outcomes_table")
    status = dict(zip(outcomes["file"], outcomes["status"], strict=True))
    assert status == {
        "results.zip/results/aiperf/profile_export_aiperf.json": "stored",
        "results.zip/results/llmperf/individual_responses.json": "stored",
        "results.zip/results/": "skipped",
        "benchmarks.yaml": "stored",
    }, status
    assert len(_table(at, "runs_table")) == before + 3
    engine = make_engine(store_url)
    stored = run_reads.load_runs(engine)[-3:]
    assert {run.run.deployment.engine for run in stored} == {"vllm"}
    individual = [s.run for s in stored if "individual" in (s.run.origin_file or "")]
    (level,) = individual[0].levels  # the form's concurrency fills the load the file lacks
    assert (level.load_kind.value, level.load_value, level.load_stated) == ("concurrency", 8, True)


def test_runs_page_load_field_fills_in_only_where_the_file_states_no_load(store_url: str) -> None:
    at = _page("ui/runs.py")
    real = FIXTURES / "aiperf" / "real-0.13.0" / "c4"
    at.file_uploader(key="upload_files").set_value(
        [
            (name, (real / name).read_bytes(), "application/octet-stream")
            for name in ("profile_export_aiperf.csv", "profile_export_aiperf.json")
        ]
    )
    at.selectbox(key="fact_Engine").set_value("vllm")
    at.text_input(key="fact_model").set_value("tiny-random-llama")
    at.number_input(key="fact_concurrency").set_value(16)
    at.selectbox(key="fact_GPU").set_value("H100-SXM-80GB")
    at.number_input(key="fact_tp").set_value(1)
    at.button[0].click().run()
    assert not at.exception
    outcomes = _table(at, "upload_outcomes_table")
    # One deployment and workload at two loads: the two files become one run of two levels.
    assert list(outcomes["status"]) == ["stored"], outcomes.to_dict("records")
    engine = make_engine(store_url)
    (run,) = [s.run for s in run_reads.load_runs(engine)[-1:]]
    by_load = {(level.load_kind.value, level.load_value): level for level in run.levels}
    assert set(by_load) == {("concurrency", 16), ("concurrency", 4)}  # the form's, the file's
    assert by_load["concurrency", 16].load_stated
    notes = by_load["concurrency", 4].notes or ""
    assert "concurrency 16 was not used: the file states 4 in flight, which wins" in notes


def test_plan_page_builds_the_pdf_report_on_request(store_url: str) -> None:
    at = _page("ui/plan.py")
    assert "plan_report" not in at.session_state  # nothing slow until it is asked for
    at.selectbox(key="plan_report_format").set_value("PDF for finance")
    at.button(key="plan_report_build").click().run()
    assert not at.exception, [e.value for e in at.exception]
    _, content = at.session_state["plan_report"]
    assert content[:5] == b"%PDF-" and len(content) > 20_000
    labels = [getattr(b, "label", None) for b in at.get("download_button")]
    assert "Download the PDF report" in labels


def test_plan_page_leads_with_seven_plain_columns_and_says_the_answer_in_two_sentences(
    store_url: str,
) -> None:
    at = _page("ui/plan.py")
    (lead,) = [d.value for d in at.dataframe if "Meets SLA" in d.value.columns]
    assert list(lead.columns) == [
        "Option",
        "Meets SLA",
        "Nodes",
        "GPUs",
        "Cost ($/month)",
        "Cost per 1M output tokens ($)",
        "Limited by",
    ]
    assert str(lead["Nodes"].dtype) == "Int64" and str(lead["GPUs"].dtype) == "Int64"
    full = _table(at, "options_table")  # every column, behind the details expander
    assert len(full.columns) > 30 and len(full) == len(lead)
    choice = _recommended(full)
    picked = lead[lead["Option"].str.startswith("\u2605 ")]
    assert list(picked["Option"]) == [f"\u2605 {choice['option']}"]
    assert not lead["Option"].str.contains("tensorrt-llm|vllm |-SXM-", regex=True).any()
    headline = at.success[0].value
    engine_tp = str(choice["option"]).split(" on ")[0]
    nodes = int(picked["Nodes"].iloc[0])
    words = "4-GPU NVL72 compute tray" if str(choice["gpu"]).startswith("GB") else "8-GPU HGX node"
    assert headline.startswith(f"Run {engine_tp} on {nodes} {words}")
    assert headline.count(". ") <= 1  # at most two sentences
    assert f"\\${choice['total_monthly_cost_usd']:,.0f}/month" in headline


def test_runs_page_refuses_a_run_without_a_gpu_and_says_which_field_to_fill(
    store_url: str,
) -> None:
    # The labelling bug of issue 13: GPU "(from file)" on a file naming none stored the run
    # without a GPU, silently unplannable.
    engine = make_engine(store_url)
    before = run_lists.count_runs(engine)
    at = _page("ui/runs.py")
    good = (FIXTURES / "vllm-cpu-real" / "c8.json").read_bytes()
    at.file_uploader(key="upload_files").set_value([("c8.json", good, "application/json")])
    at.number_input(key="fact_tp").set_value(1)
    at.button[0].click().run()
    assert not at.exception
    (note,) = [w.value for w in at.warning if "c8.json" in w.value]
    assert "not stored" in note and "no GPU" in note and "(from file)" in note
    assert "TP" not in note.split("no GPU")[1]  # TP was given: only the GPU is asked for
    assert run_lists.count_runs(engine) == before
    at.selectbox(key="fact_GPU").set_value("H100-SXM-80GB")
    at.button[0].click().run()
    assert not [w for w in at.warning if "c8.json" in w.value]
    assert run_lists.count_runs(engine) == before + 1
    engine.dispose()
