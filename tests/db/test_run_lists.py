"""The run list on a real store: pages, filters, search, counts and filter choices come from
the database a page at a time, and listing never reads per-request samples."""

from __future__ import annotations

from sqlalchemy import Engine

from db import run_lists
from db.repository import save_runs
from db.run_lists import RunFilter, RunSummary, list_runs
from team.roles import SYSTEM
from tests.db.conftest import full_run


def _ids(summaries: tuple[RunSummary, ...] | list[RunSummary]) -> list[int]:
    return [summary.run_id for summary in summaries]


def test_list_runs_counts_levels_and_samples_in_one_query(
    engine: Engine, statements: list[str]
) -> None:
    run = full_run()
    small = full_run("small", source_sha256=None).model_copy(update={"levels": run.levels[1:]})
    first, second = save_runs(engine, [run, small], actor=SYSTEM)
    statements.clear()
    summaries = list_runs(engine)
    assert len(statements) == 1
    assert [(s.run_id, s.levels, s.samples) for s in summaries] == [
        (first.run_id, 2, 3),
        (second.run_id, 1, 0),
    ]
    top = summaries[0]
    assert (top.engine, top.gpu, top.tp, top.isl, top.osl) == (
        "vllm",
        "H100-SXM-80GB",
        8,
        3000,
        300,
    )
    assert (top.source, top.provenance, top.complete) == ("probe", "measured", False)
    assert top.started_at == run.started_at


def test_pages_split_the_runs_in_id_order_without_gaps_or_repeats(
    engine: Engine, team_runs: list[int]
) -> None:
    pages = [run_lists.run_page(engine, None, 10, offset) for offset in (0, 10, 20)]
    assert [page.total for page in pages] == [24, 24, 24]
    assert [len(page.summaries) for page in pages] == [10, 10, 4]
    assert [run_id for page in pages for run_id in _ids(page.summaries)] == team_runs
    assert run_lists.run_page(engine, None, 10, 30).summaries == ()


def test_pages_newest_first_walk_the_runs_from_the_last_imported(
    engine: Engine, team_runs: list[int]
) -> None:
    pages = [run_lists.run_page(engine, None, 10, o, newest_first=True) for o in (0, 10, 20)]
    assert [run_id for page in pages for run_id in _ids(page.summaries)] == team_runs[::-1]
    wanted = RunFilter(text="TEAM RUN 1")
    page = run_lists.run_page(engine, wanted, 3, 0, newest_first=True)
    assert page.total == 10 and _ids(page.summaries) == team_runs[19:16:-1]


def test_a_page_carries_the_same_counts_as_the_full_list(
    engine: Engine, team_runs: list[int]
) -> None:
    everything = {s.run_id: s for s in run_lists.list_runs(engine)}
    page = run_lists.list_runs(engine, limit=5, offset=7)
    assert _ids(page) == team_runs[7:12]
    assert all(s == everything[s.run_id] for s in page)
    assert {(s.levels, s.samples) for s in page} == {(2, 3)}


def test_filters_narrow_the_page_and_the_total_alike(engine: Engine, team_runs: list[int]) -> None:
    wanted = RunFilter(engines=("tensorrt-llm",), gpus=("H200-SXM-141GB", None))
    expected = [team_runs[i] for i in range(24) if i % 2 == 1 and i % 3 != 0]
    page = run_lists.run_page(engine, wanted, 3)
    assert page.total == len(expected) == run_lists.count_runs(engine, wanted) == 8
    assert _ids(page.summaries) == expected[:3]
    assert _ids(run_lists.list_runs(engine, wanted)) == expected
    unstated = run_lists.list_runs(engine, RunFilter(gpus=(None,)))
    assert _ids(unstated) == [team_runs[i] for i in range(24) if i % 3 == 2]
    imported = RunFilter(provenances=("imported",), models=("Qwen/Qwen2.5-72B",))
    assert _ids(run_lists.list_runs(engine, imported)) == [team_runs[21]]


def test_text_search_ignores_case_and_takes_wildcards_literally(
    engine: Engine, team_runs: list[int]
) -> None:
    assert _ids(run_lists.list_runs(engine, RunFilter(text="TEAM RUN 1"))) == team_runs[10:20]
    assert _ids(run_lists.list_runs(engine, RunFilter(text=" qwen "))) == team_runs[20:]
    assert run_lists.count_runs(engine, RunFilter(text="run %")) == 0
    assert run_lists.count_runs(engine, RunFilter(text="run _1")) == 0


def test_filter_choices_list_each_stored_value_once(engine: Engine, team_runs: list[int]) -> None:
    choices = run_lists.run_filter_choices(engine)
    assert choices.engines == ("tensorrt-llm", "vllm")
    assert choices.gpus == ("H100-SXM-80GB", "H200-SXM-141GB", None)
    assert choices.models == ("Qwen/Qwen2.5-72B", "meta-llama/Llama-3.1-70B-Instruct")
    assert choices.provenances == ("imported", "measured")


def test_a_page_is_two_statements_and_reads_no_sample_columns(
    engine: Engine, team_runs: list[int], statements: list[str]
) -> None:
    statements.clear()
    run_lists.run_page(engine, RunFilter(engines=("vllm",), text="team"), 250)
    selects = [sql for sql in statements if sql.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 2  # the total, then the page with its counts
    assert not any("chunk_gaps_ms" in sql for sql in statements)


def test_curve_workloads_come_from_sql_one_row_per_model_and_workload(
    engine: Engine, team_runs: list[int], statements: list[str]
) -> None:
    keys = run_lists.curve_workloads(engine)
    assert keys == [
        ("Qwen/Qwen2.5-72B", 3000, 300),
        ("meta-llama/Llama-3.1-70B-Instruct", 3000, 300),
    ]
    selects = [sql for sql in statements if sql.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 1
    assert not any("request_samples" in sql or "level_metrics" in sql for sql in statements)
