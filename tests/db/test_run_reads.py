"""Reading runs back: one or many in the same few queries, in the order asked, every run a
chunk at a time (of some models and a workload), and curve loading never reads samples."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from db import repository, run_lists, run_reads
from db.repository import save_run, save_runs
from db.run_reads import get_run, load_runs
from errors import InputError
from team.roles import SYSTEM
from tests.db.conftest import full_run, team_run
from workflows import planning


def test_load_runs_uses_the_same_few_queries_for_one_run_or_many(
    engine: Engine, statements: list[str]
) -> None:
    saved = save_runs(
        engine, [full_run(f"run {i}", source_sha256=None) for i in range(6)], actor=SYSTEM
    )
    statements.clear()
    load_runs(engine, [saved[0].run_id], with_samples=True)
    one = len(statements)
    statements.clear()
    loaded = load_runs(engine, None, with_samples=True)
    assert len(statements) == one == 4
    assert [stored.run_id for stored in loaded] == [result.run_id for result in saved]
    assert all(stored.run == full_run(f"run {i}", None) for i, stored in enumerate(loaded))


def test_load_runs_returns_runs_in_the_order_asked(engine: Engine) -> None:
    ids = [
        r.run_id
        for r in save_runs(engine, [full_run(str(i), None) for i in range(3)], actor=SYSTEM)
    ]
    wanted = [ids[2], ids[0], ids[2]]
    assert [stored.run_id for stored in load_runs(engine, wanted)] == [ids[2], ids[0]]


def test_asking_for_a_missing_run_names_its_id(engine: Engine) -> None:
    saved = save_run(engine, full_run(), actor=SYSTEM)
    with pytest.raises(InputError, match="no run with id 999") as caught:
        get_run(engine, 999)
    assert caught.value.field == "run_id"
    with pytest.raises(InputError, match="no run with id 998, 999"):
        load_runs(engine, [saved.run_id, 998, 999])


def test_loading_curves_reads_levels_and_metrics_but_never_samples(
    engine: Engine, team_runs: list[int], statements: list[str]
) -> None:
    statements.clear()
    loaded = run_reads.load_runs(engine)
    assert len(loaded) == 24
    assert all(level.samples == () for s in loaded for level in s.run.levels)
    assert all(len(s.run.levels) == 2 for s in loaded)
    assert not any("request_samples" in sql for sql in statements)


def test_iter_runs_reads_every_run_in_chunks_and_skips_one_deleted_meanwhile(
    engine: Engine, team_runs: list[int], statements: list[str]
) -> None:
    statements.clear()
    chunked = run_reads.iter_runs(engine, chunk=5)
    first = next(chunked)
    assert repository.delete_run(engine, team_runs[17], actor=SYSTEM)
    rest = list(chunked)
    assert [first.run_id, *(s.run_id for s in rest)] == team_runs[:17] + team_runs[18:]
    reads = [sql for sql in statements if "FROM load_levels" in sql and "level_metrics" not in sql]
    assert len(reads) == 5  # one levels query per chunk of 5 runs
    assert not any("request_samples" in sql for sql in statements if "DELETE" not in sql)
    assert [s.run for s in rest[:3]] == [s.run for s in run_reads.load_runs(engine, team_runs[1:4])]


def test_iter_runs_keeps_only_the_models_and_workload_asked(
    engine: Engine, team_runs: list[int]
) -> None:
    qwen = [s.run_id for s in run_reads.iter_runs(engine, chunk=3, models=["Qwen/Qwen2.5-72B"])]
    assert qwen == team_runs[20:]
    llama = planning.model_names_like(engine, "meta-llama/Llama-3.1-70B")
    assert llama == ["meta-llama/Llama-3.1-70B-Instruct"]
    assert [s.run_id for s in run_reads.iter_runs(engine, models=llama)] == team_runs[:20]
    same = run_reads.iter_runs(engine, models=llama, workload=(3000, 300))
    assert [s.run_id for s in same] == team_runs[:20]
    assert list(run_reads.iter_runs(engine, models=llama, workload=(1024, 1024))) == []
    assert list(run_reads.iter_runs(engine, workload=(None, None))) == []
    assert run_lists.model_names(engine) == [
        "Qwen/Qwen2.5-72B",
        "meta-llama/Llama-3.1-70B-Instruct",
    ]


def test_saved_levels_metrics_and_samples_read_back_in_order(
    engine: Engine, team_runs: list[int]
) -> None:
    """The Core executemany save keeps every level, metric and sample in its position."""
    run = team_run(5)
    (back,) = run_reads.load_runs(engine, [team_runs[5]], with_samples=True)
    assert back.run.levels == run.levels
    counts = {s.run_id: (s.levels, s.samples) for s in run_lists.list_runs(engine)}
    assert set(counts.values()) == {(2, 3)}
