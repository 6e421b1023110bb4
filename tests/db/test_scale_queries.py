"""The run list at scale: pages, filters, search and counts come from the database a page at a
time, and listing or curve loading never reads per-request samples."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, event

from db import repository
from db.repository import RunFilter, RunSummary, save_runs
from measurements.run_file import Deployment, Provenance, RunFile
from tests.db.conftest import full_run
from workflows import planning

ENGINES = ("vllm", "tensorrt-llm")
GPUS = ("H100-SXM-80GB", "H200-SXM-141GB", None)


def _run(index: int) -> RunFile:
    """Run `index`: engines and GPUs cycle, every third run imported, labels numbered."""
    base = full_run(f"team run {index:02d}", source_sha256=None)
    deployment = base.deployment.model_dump() | {
        "engine": ENGINES[index % 2],
        "gpu": GPUS[index % 3],
        "model": "Qwen/Qwen2.5-72B" if index >= 20 else base.deployment.model,
    }
    provenance = Provenance.IMPORTED if index % 3 == 0 else Provenance.MEASURED
    return base.model_copy(
        update={"deployment": Deployment(**deployment), "provenance": provenance}
    )


@pytest.fixture
def stored(engine: Engine) -> list[int]:
    """24 runs of 2 levels and 3 samples each; their ids, oldest first."""
    return [result.run_id for result in save_runs(engine, [_run(i) for i in range(24)])]


@pytest.fixture
def statements(engine: Engine) -> Iterator[list[str]]:
    """Every SQL statement the engine runs, as sent."""
    seen: list[str] = []

    def record(conn: object, cursor: object, sql: str, *args: object) -> None:
        seen.append(sql)

    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


def _ids(summaries: tuple[RunSummary, ...] | list[RunSummary]) -> list[int]:
    return [summary.run_id for summary in summaries]


def test_pages_split_the_runs_in_id_order_without_gaps_or_repeats(
    engine: Engine, stored: list[int]
) -> None:
    pages = [repository.run_page(engine, None, 10, offset) for offset in (0, 10, 20)]
    assert [page.total for page in pages] == [24, 24, 24]
    assert [len(page.summaries) for page in pages] == [10, 10, 4]
    assert [run_id for page in pages for run_id in _ids(page.summaries)] == stored
    assert repository.run_page(engine, None, 10, 30).summaries == ()


def test_a_page_carries_the_same_counts_as_the_full_list(engine: Engine, stored: list[int]) -> None:
    everything = {s.run_id: s for s in repository.list_runs(engine)}
    page = repository.list_runs(engine, limit=5, offset=7)
    assert _ids(page) == stored[7:12]
    assert all(s == everything[s.run_id] for s in page)
    assert {(s.levels, s.samples) for s in page} == {(2, 3)}


def test_filters_narrow_the_page_and_the_total_alike(engine: Engine, stored: list[int]) -> None:
    wanted = RunFilter(engines=("tensorrt-llm",), gpus=("H200-SXM-141GB", None))
    expected = [stored[i] for i in range(24) if i % 2 == 1 and i % 3 != 0]
    page = repository.run_page(engine, wanted, 3)
    assert page.total == len(expected) == repository.count_runs(engine, wanted) == 8
    assert _ids(page.summaries) == expected[:3]
    assert _ids(repository.list_runs(engine, wanted)) == expected
    unstated = repository.list_runs(engine, RunFilter(gpus=(None,)))
    assert _ids(unstated) == [stored[i] for i in range(24) if i % 3 == 2]
    imported = RunFilter(provenances=("imported",), models=("Qwen/Qwen2.5-72B",))
    assert _ids(repository.list_runs(engine, imported)) == [stored[21]]


def test_text_search_ignores_case_and_takes_wildcards_literally(
    engine: Engine, stored: list[int]
) -> None:
    assert _ids(repository.list_runs(engine, RunFilter(text="TEAM RUN 1"))) == stored[10:20]
    assert _ids(repository.list_runs(engine, RunFilter(text=" qwen "))) == stored[20:]
    assert repository.count_runs(engine, RunFilter(text="run %")) == 0
    assert repository.count_runs(engine, RunFilter(text="run _1")) == 0


def test_filter_choices_list_each_stored_value_once(engine: Engine, stored: list[int]) -> None:
    choices = repository.run_filter_choices(engine)
    assert choices.engines == ("tensorrt-llm", "vllm")
    assert choices.gpus == ("H100-SXM-80GB", "H200-SXM-141GB", None)
    assert choices.models == ("Qwen/Qwen2.5-72B", "meta-llama/Llama-3.1-70B-Instruct")
    assert choices.provenances == ("imported", "measured")


def test_a_page_is_two_statements_and_reads_no_sample_columns(
    engine: Engine, stored: list[int], statements: list[str]
) -> None:
    statements.clear()
    repository.run_page(engine, RunFilter(engines=("vllm",), text="team"), 250)
    selects = [sql for sql in statements if sql.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 2  # the total, then the page with its counts
    assert not any("chunk_gaps_ms" in sql for sql in statements)


def test_loading_curves_reads_levels_and_metrics_but_never_samples(
    engine: Engine, stored: list[int], statements: list[str]
) -> None:
    statements.clear()
    loaded = repository.load_runs(engine)
    assert len(loaded) == 24
    assert all(level.samples == () for s in loaded for level in s.run.levels)
    assert all(len(s.run.levels) == 2 for s in loaded)
    assert not any("request_samples" in sql for sql in statements)


def test_iter_runs_reads_every_run_in_chunks_and_skips_one_deleted_meanwhile(
    engine: Engine, stored: list[int], statements: list[str]
) -> None:
    statements.clear()
    chunked = repository.iter_runs(engine, chunk=5)
    first = next(chunked)
    assert repository.delete_run(engine, stored[17])
    rest = list(chunked)
    assert [first.run_id, *(s.run_id for s in rest)] == stored[:17] + stored[18:]
    reads = [sql for sql in statements if "FROM load_levels" in sql and "level_metrics" not in sql]
    assert len(reads) == 5  # one levels query per chunk of 5 runs
    assert not any("request_samples" in sql for sql in statements if "DELETE" not in sql)
    assert [s.run for s in rest[:3]] == [s.run for s in repository.load_runs(engine, stored[1:4])]


# ---------------------------------------------------------------- model and workload subsets


def test_curve_workloads_come_from_sql_one_row_per_model_and_workload(
    engine: Engine, stored: list[int], statements: list[str]
) -> None:
    keys = repository.curve_workloads(engine)
    assert keys == [
        ("Qwen/Qwen2.5-72B", 3000, 300),
        ("meta-llama/Llama-3.1-70B-Instruct", 3000, 300),
    ]
    selects = [sql for sql in statements if sql.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 1
    assert not any("request_samples" in sql or "level_metrics" in sql for sql in statements)


def test_iter_runs_keeps_only_the_models_and_workload_asked(
    engine: Engine, stored: list[int]
) -> None:
    qwen = [s.run_id for s in repository.iter_runs(engine, chunk=3, models=["Qwen/Qwen2.5-72B"])]
    assert qwen == stored[20:]
    llama = planning.model_names_like(engine, "meta-llama/Llama-3.1-70B")
    assert llama == ["meta-llama/Llama-3.1-70B-Instruct"]
    assert [s.run_id for s in repository.iter_runs(engine, models=llama)] == stored[:20]
    same = repository.iter_runs(engine, models=llama, workload=(3000, 300))
    assert [s.run_id for s in same] == stored[:20]
    assert list(repository.iter_runs(engine, models=llama, workload=(1024, 1024))) == []
    assert list(repository.iter_runs(engine, workload=(None, None))) == []
    assert repository.model_names(engine) == [
        "Qwen/Qwen2.5-72B",
        "meta-llama/Llama-3.1-70B-Instruct",
    ]


def test_saved_levels_metrics_and_samples_read_back_in_order(
    engine: Engine, stored: list[int]
) -> None:
    """The Core executemany save keeps every level, metric and sample in its position."""
    run = _run(5)
    (back,) = repository.load_runs(engine, [stored[5]], with_samples=True)
    assert back.run.levels == run.levels
    counts = {s.run_id: (s.levels, s.samples) for s in repository.list_runs(engine)}
    assert set(counts.values()) == {(2, 3)}
