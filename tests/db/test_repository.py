"""Repository on real SQLite files: round trips, dedupe, all-or-nothing writes, cascades."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import BaseModel
from sqlalchemy import Engine

from db import repository
from db.repository import delete_run, save_run, save_runs
from db.run_lists import list_runs
from db.run_reads import get_run
from db.scenarios import (
    ScenarioExistsError,
    delete_scenario,
    get_scenario,
    list_scenarios,
    save_scenario,
)
from db.trash import purge_trash
from errors import InputError, StoreError
from measurements.run_file import Level, LoadKind, Metric, Origin, RunFile
from team.roles import SYSTEM
from tests.db.conftest import full_run
from tests.stores import row_counts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


class InjectedError(RuntimeError):
    """Raised on purpose half-way through a write."""


def _unset_fields(model: BaseModel) -> list[str]:
    return [name for name in type(model).model_fields if getattr(model, name) in (None, (), {})]


# ---------------------------------------------------------------- round trip


def test_every_field_of_the_full_run_is_set_so_the_round_trip_covers_every_column() -> None:
    run = full_run()
    level = run.levels[0]
    parts = (
        run,
        run.deployment,
        run.workload,
        run.environment,
        run.startup,
        level,
        level.metrics[0],
    )
    assert [name for part in parts for name in _unset_fields(part)] == []
    assert _unset_fields(level.samples[0]) == []


def test_a_saved_run_reads_back_equal(engine: Engine) -> None:
    run = full_run()
    saved = save_run(engine, run, actor=SYSTEM)
    stored = get_run(engine, saved.run_id)
    assert stored.run == run
    assert stored.run.started_at is not None
    assert stored.run.started_at.tzinfo is not None
    assert stored.run.started_at.utcoffset() == timedelta(0)
    assert stored.imported_at.tzinfo is not None
    assert abs(datetime.now(UTC) - stored.imported_at) < timedelta(minutes=1)


def test_a_run_without_source_sha_reads_back_equal(engine: Engine) -> None:
    run = full_run(source_sha256=None)
    assert get_run(engine, save_run(engine, run, actor=SYSTEM).run_id).run == run


def test_started_at_comes_back_as_the_same_instant_in_utc(engine: Engine) -> None:
    local = datetime(2025, 3, 4, 7, 6, 7, tzinfo=timezone(timedelta(hours=2)))
    run = full_run().model_copy(update={"started_at": local})
    stored = get_run(engine, save_run(engine, run, actor=SYSTEM).run_id).run
    assert stored.started_at == local
    assert stored.started_at is not None
    assert stored.started_at.tzinfo == UTC
    assert stored.started_at.hour == 5


def test_a_naive_started_at_is_taken_as_utc(engine: Engine) -> None:
    run = full_run().model_copy(update={"started_at": datetime(2025, 1, 2, 3, 4, 5)})
    stored = get_run(engine, save_run(engine, run, actor=SYSTEM).run_id).run
    assert stored.started_at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_get_run_without_samples_keeps_metrics_and_drops_samples(engine: Engine) -> None:
    run = full_run()
    stored = get_run(engine, save_run(engine, run, actor=SYSTEM).run_id, with_samples=False).run
    assert [level.samples for level in stored.levels] == [(), ()]
    assert [level.metrics for level in stored.levels] == [level.metrics for level in run.levels]


def _imported(path: Path) -> tuple[RunFile, ...]:
    try:
        from measurements.importers import import_path
    except ImportError as exc:
        pytest.skip(f"measurements.importers is not importable yet: {exc}")
    return import_path(path).runs


@pytest.mark.parametrize(
    "path", sorted((FIXTURES / "vllm-cpu-real").glob("*.json")), ids=lambda path: path.name
)
def test_imported_real_vllm_fixture_reads_back_equal(engine: Engine, path: Path) -> None:
    runs = _imported(path)
    results = save_runs(engine, runs, actor=SYSTEM)
    assert [get_run(engine, result.run_id).run for result in results] == list(runs)
    assert not any(result.created for result in save_runs(engine, runs, actor=SYSTEM))


def test_sample_count_of_the_detailed_fixture_matches_the_tool_output(engine: Engine) -> None:
    path = FIXTURES / "vllm-cpu-real" / "c2-detailed.json"
    save_runs(engine, _imported(path), actor=SYSTEM)
    # The expected count comes from the tool's own per-request arrays, not from our code.
    printed = json.loads(path.read_text(encoding="utf-8"))
    (summary,) = list_runs(engine)
    assert summary.samples == len(printed["ttfts"]) == printed["num_prompts"]


# ---------------------------------------------------------------- dedupe and atomicity


def test_saving_the_same_run_twice_stores_it_once_and_says_so(engine: Engine, db_url: str) -> None:
    first = save_run(engine, full_run(), actor=SYSTEM)
    counts = row_counts(db_url)
    second = save_run(engine, full_run(), actor=SYSTEM)
    assert first.created
    assert first.message.startswith(f"stored as run {first.run_id}")
    assert not second.created
    assert second.run_id == first.run_id
    assert second.message.startswith(f"already stored as run {first.run_id}")
    assert "nothing written" in second.message
    assert row_counts(db_url) == counts


def test_runs_of_the_same_deployment_share_one_deployment_row(engine: Engine, db_url: str) -> None:
    save_runs(engine, [full_run("a"), full_run("b", source_sha256="cd" * 32)], actor=SYSTEM)
    assert row_counts(db_url)["deployments"] == 1
    assert row_counts(db_url)["runs"] == 2


def test_a_failure_after_the_first_level_leaves_the_database_unchanged(
    engine: Engine, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_run(engine, full_run("already there", source_sha256=None), actor=SYSTEM)
    before = row_counts(db_url)
    real_insert = repository._insert_level

    def insert_then_fail(*args: object, **kwargs: object) -> None:
        real_insert(*args, **kwargs)  # type: ignore[arg-type]
        raise InjectedError

    monkeypatch.setattr(repository, "_insert_level", insert_then_fail)
    changed = full_run("new deployment").model_copy(
        update={"deployment": full_run().deployment.model_copy(update={"gpu": "H200-SXM-141GB"})}
    )
    with pytest.raises(InjectedError):
        save_run(engine, changed, actor=SYSTEM)
    assert row_counts(db_url) == before


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic warns when dumping the bad level
def test_a_database_constraint_violated_midway_rolls_back_and_raises_store_error(
    engine: Engine, db_url: str
) -> None:
    good = full_run()
    # load_value None violates the column's NOT NULL; model_construct skips pydantic's check.
    no_load: float = None  # type: ignore[assignment]
    bad_level = Level.model_construct(load_kind=LoadKind.RATE, load_value=no_load)
    broken = RunFile.model_construct(**{**dict(good), "levels": (good.levels[0], bad_level)})
    before = row_counts(db_url)
    with pytest.raises(StoreError, match=r"(?i)not.null"):
        save_run(engine, broken, actor=SYSTEM)
    assert row_counts(db_url) == before


def test_a_metric_twice_with_the_same_origin_is_refused_naming_the_level(
    engine: Engine, db_url: str
) -> None:
    twice = Metric(name="output_tok_s", value=1.0, origin=Origin.REPORTED)
    level = full_run().levels[1].model_copy(update={"metrics": (twice, twice)})
    run = full_run().model_copy(update={"levels": (full_run().levels[0], level)})
    with pytest.raises(InputError) as caught:
        save_run(engine, run, actor=SYSTEM)
    assert caught.value.field == "levels[1].metrics"
    assert caught.value.file == "probe-2025-03-04.json"
    assert "output_tok_s" in str(caught.value)
    assert row_counts(db_url)["runs"] == 0


def test_save_runs_is_all_or_nothing(
    engine: Engine, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_insert = repository._insert_level
    calls: list[int] = []

    def fail_on_third_run(*args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) > 4:  # two levels per run: runs 1 and 2 are fully written first
            raise InjectedError
        real_insert(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(repository, "_insert_level", fail_on_third_run)
    runs = [full_run(f"run {i}", source_sha256=None) for i in range(3)]
    with pytest.raises(InjectedError):
        save_runs(engine, runs, actor=SYSTEM)
    assert row_counts(db_url) == dict.fromkeys(row_counts(db_url), 0)
    monkeypatch.undo()
    results = save_runs(engine, [*runs, runs[0]], actor=SYSTEM)
    assert [result.created for result in results] == [True, True, True, False]
    assert results[3].run_id == results[0].run_id


# ---------------------------------------------------------------- list, load, delete


def test_a_purged_run_goes_with_its_levels_metrics_samples_and_orphan_deployment(
    engine: Engine, db_url: str
) -> None:
    saved = save_run(engine, full_run(), actor=SYSTEM)
    stored = {
        "deployments": 1,
        "runs": 1,
        "load_levels": 2,
        "level_metrics": 5,
        "request_samples": 3,
    }
    assert row_counts(db_url) == stored
    assert delete_run(engine, saved.run_id, actor=SYSTEM)
    assert row_counts(db_url) == stored  # in the trash: every row kept until the purge
    assert list_runs(engine) == []
    assert not delete_run(engine, saved.run_id, actor=SYSTEM)
    later = datetime.now(UTC) + timedelta(days=31)
    assert purge_trash(engine, actor=SYSTEM, now=later) == [
        f"run {saved.run_id} purged: in the trash over 30 days"
    ]
    assert row_counts(db_url) == dict.fromkeys(row_counts(db_url), 0)


def test_delete_run_keeps_a_deployment_other_runs_still_use(engine: Engine, db_url: str) -> None:
    first, second = save_runs(engine, [full_run("a", None), full_run("b", None)], actor=SYSTEM)
    delete_run(engine, first.run_id, actor=SYSTEM)
    assert row_counts(db_url)["deployments"] == 1
    assert get_run(engine, second.run_id).run == full_run("b", None)


def test_a_deleted_run_is_pointed_to_its_undo_and_stored_again_once_purged(
    engine: Engine,
) -> None:
    first = save_run(engine, full_run(), actor=SYSTEM)
    delete_run(engine, first.run_id, actor=SYSTEM)
    kept = save_run(engine, full_run(), actor=SYSTEM)
    assert not kept.created and kept.run_id == first.run_id
    assert "in the trash since" in kept.message and "undo its delete" in kept.message
    purge_trash(engine, actor=SYSTEM, now=datetime.now(UTC) + timedelta(days=31))
    again = save_run(engine, full_run(), actor=SYSTEM)
    assert again.created
    assert again.run_id != first.run_id


# ---------------------------------------------------------------- scenarios


def test_save_scenario_inserts_then_updates_by_name(engine: Engine) -> None:
    first = save_scenario(engine, "agent-platform", "name: agent-platform\n", actor=SYSTEM)
    with pytest.raises(ScenarioExistsError, match="already exists"):
        save_scenario(engine, "agent-platform", "name: other\n", actor=SYSTEM)
    second = save_scenario(
        engine, " agent-platform ", "name: agent-platform\nbudget: {}\n", actor=SYSTEM, replace=True
    )
    assert second.scenario_id == first.scenario_id
    assert second.created_at == first.created_at
    assert second.updated_at >= first.updated_at
    assert get_scenario(engine, "agent-platform").yaml_text == "name: agent-platform\nbudget: {}\n"
    save_scenario(engine, "chat", "name: chat\n", actor=SYSTEM)
    assert [record.name for record in list_scenarios(engine)] == ["agent-platform", "chat"]


def test_delete_scenario_and_missing_names(engine: Engine) -> None:
    save_scenario(engine, "chat", "name: chat\n", actor=SYSTEM)
    assert delete_scenario(engine, "chat", actor=SYSTEM)
    assert not delete_scenario(engine, "chat", actor=SYSTEM)
    with pytest.raises(InputError, match="no saved scenario named 'chat'"):
        get_scenario(engine, "chat")


def test_a_blank_scenario_name_is_refused(engine: Engine) -> None:
    with pytest.raises(InputError) as caught:
        save_scenario(engine, "   ", "name: x\n", actor=SYSTEM)
    assert caught.value.field == "name"
    assert list_scenarios(engine) == []


def test_same_content_with_other_deployment_facts_is_refused_naming_the_field(
    engine: Engine,
) -> None:
    run = full_run()
    first = save_run(engine, run, actor=SYSTEM)
    other = run.model_copy(update={"deployment": run.deployment.model_copy(update={"tp": 4})})
    with pytest.raises(InputError) as info:
        save_run(engine, other, actor=SYSTEM)
    assert "deployment.tp" in str(info.value) and f"run {first.run_id}" in str(info.value)
    assert len(list_runs(engine)) == 1


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"engine": "v" * 65}, "deployment.engine"),
        ({"model": "llama\x00-70b"}, "deployment.model"),
        ({"precision": "fp8-" + "x" * 40}, "deployment.precision"),
    ],
)
def test_text_a_column_cannot_hold_on_every_backend_is_refused_before_writing(
    engine: Engine, db_url: str, change: dict[str, str], field: str
) -> None:
    # SQLite would keep these and Postgres refuse them: the same InputError on both backends.
    run = full_run()
    bad = run.model_copy(update={"deployment": run.deployment.model_copy(update=change)})
    with pytest.raises(InputError) as info:
        save_runs(engine, [full_run("fine", None), bad], actor=SYSTEM)
    assert info.value.field == field and info.value.file == run.origin_file
    assert row_counts(db_url) == dict.fromkeys(row_counts(db_url), 0)


def test_a_nul_in_a_sample_error_is_refused_with_its_place(engine: Engine) -> None:
    run = full_run()
    level = run.levels[0]
    sample = level.samples[2].model_copy(update={"error": "boom\x00"})
    samples = (*level.samples[:2], sample)
    broken = run.model_copy(update={"levels": (level.model_copy(update={"samples": samples}),)})
    with pytest.raises(InputError, match="NUL") as info:
        save_run(engine, broken, actor=SYSTEM)
    assert info.value.field == "levels[0].samples[2].error"
