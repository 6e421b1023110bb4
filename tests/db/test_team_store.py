"""The team store on the backend under test: every write checks the actor's role in its own
transaction and appends its audit entry there (who, role, before, after); a refused write
changes nothing, the trail included; deletes go to the trash and come back with undo until the
purge; a price change can be undone; a recorded plan says what it rested on and what moved."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from db import audit, model_configs, plan_basis, repository, run_lists, scenarios, team_roles, trash
from db.engine import make_engine
from db.prices import list_prices, replace_prices
from db.restore import restore
from errors import InputError, PermissionDeniedError
from planner.analysis.capacity import make_plan
from planner.inputs.scenario import scenario_from_yaml
from team.roles import SYSTEM, Actor, Role
from tests.db.conftest import full_run
from tests.stores import Stores
from workflows import history, planning

ROOT = Path(__file__).resolve().parents[2]
AGENT_YAML = (ROOT / "docs" / "scenarios" / "agent-platform.yaml").read_text(encoding="utf-8")
VIEWER = Actor("vic@example.com", Role.VIEWER, "test")
PLANNER = Actor("pat@example.com", Role.PLANNER, "test")
OTHER = Actor("paula@example.com", Role.PLANNER, "test")
ADMIN = Actor("ada@example.com", Role.ADMIN, "test")


@pytest.fixture
def demo(stores: Stores) -> Iterator[Engine]:
    made = make_engine(stores.demo("team"))
    yield made
    made.dispose()


def _trail(engine: Engine) -> list[audit.AuditRecord]:
    return audit.audit_entries(engine)


def _writes(engine: Engine, actor: Actor, run_id: int) -> dict[str, Callable[[], object]]:
    """Every kind of write, as actor."""
    config = json.dumps({"architectures": ["X"], "hidden_size": 8})
    return {
        "import": lambda: repository.save_run(engine, full_run("new", "77" * 32), actor=actor),
        "delete run": lambda: repository.delete_run(engine, run_id, actor=actor),
        "prices": lambda: replace_prices(engine, list_prices(engine)[:3], actor=actor),
        "save scenario": lambda: scenarios.save_scenario(engine, "s", "name: s\n", actor=actor),
        "delete scenario": lambda: scenarios.delete_scenario(engine, "kept", actor=actor),
        "add model": lambda: model_configs.store_model_config(
            engine, "m", config, "m.json", actor=actor
        ),
        "remove model": lambda: model_configs.delete_model_config(engine, "kept", actor=actor),
        "role": lambda: team_roles.set_role(engine, "x@example.com", Role.ADMIN, actor=actor),
        "purge": lambda: trash.purge_trash(engine, actor=actor),
    }


def _seeded(engine: Engine) -> int:
    run_id = repository.save_run(engine, full_run(), actor=SYSTEM).run_id
    scenarios.save_scenario(engine, "kept", "name: kept\n", actor=ADMIN)
    model_configs.store_model_config(engine, "kept", "{}", "kept.json", actor=SYSTEM)
    return run_id


def test_a_viewer_changes_nothing_and_leaves_no_trace(demo: Engine) -> None:
    run_id = _seeded(demo)
    before = (_trail(demo), list_prices(demo), scenarios.list_scenarios(demo))
    for name, write in _writes(demo, VIEWER, run_id).items():
        with pytest.raises(PermissionDeniedError, match=r"vic@example\.com is a viewer"):
            write()
        assert (_trail(demo), list_prices(demo), scenarios.list_scenarios(demo)) == before, name


def test_a_planner_imports_and_saves_but_deletes_no_run_and_touches_no_price(demo: Engine) -> None:
    run_id = _seeded(demo)
    writes = _writes(demo, PLANNER, run_id)
    allowed = {"import", "save scenario", "add model"}
    for name, write in writes.items():
        if name in allowed:
            write()
            continue
        with pytest.raises(PermissionDeniedError, match=r"pat@example\.com is a planner"):
            write()
    entries = [(e.actor, e.role, e.kind, e.action) for e in _trail(demo)[:3]]
    assert entries == [
        ("pat@example.com", "planner", "model", "added"),
        ("pat@example.com", "planner", "scenario", "saved"),
        ("pat@example.com", "planner", "run", "imported"),
    ]
    assert run_id in [s.run_id for s in run_lists.list_runs(demo)]


def test_an_admin_does_everything_and_every_change_has_its_before_and_after(demo: Engine) -> None:
    run_id = _seeded(demo)
    prices_before = list_prices(demo)
    for write in _writes(demo, ADMIN, run_id).values():
        write()
    by_what = {(e.kind, e.action): e for e in _trail(demo) if e.actor == ADMIN.name}
    assert set(by_what) >= {
        ("run", "imported"),
        ("run", "deleted"),
        ("prices", "changed"),
        ("scenario", "saved"),
        ("scenario", "deleted"),
        ("model", "added"),
        ("model", "removed"),
        ("role", "changed"),
    }
    deleted = by_what[("run", "deleted")]
    assert deleted.before["content_sha256"] == "ab" * 32 and deleted.after is None
    prices = by_what[("prices", "changed")]
    assert len(prices.before) == len(prices_before) and len(prices.after) == 3
    removed = len(prices_before) - 3
    assert prices.summary == (
        f"price catalog changed: 0 added, 0 changed, {removed} removed "
        f"({len(prices_before)} -> 3 prices)"
    )
    assert by_what[("scenario", "deleted")].before == "name: kept\n"
    assert (by_what[("role", "changed")].before, by_what[("role", "changed")].after) == (
        None,
        "admin",
    )
    assert {e.role for e in by_what.values()} == {"admin"}


def test_a_planner_may_not_replace_or_delete_anothers_scenario_but_its_owner_and_an_admin_may(
    engine: Engine,
) -> None:
    scenarios.save_scenario(engine, "q3", "name: q3\n", actor=OTHER)
    with pytest.raises(scenarios.ScenarioExistsError, match=r"\(paula@example.com's, last changed"):
        scenarios.save_scenario(engine, "q3", "name: q3\nx: 1\n", actor=PLANNER)
    with pytest.raises(PermissionDeniedError, match=r"'q3' is paula@example\.com's"):
        scenarios.save_scenario(engine, "q3", "name: q3\nx: 1\n", actor=PLANNER, replace=True)
    with pytest.raises(PermissionDeniedError, match="only its owner or an admin"):
        scenarios.delete_scenario(engine, "q3", actor=PLANNER)
    saved = scenarios.save_scenario(engine, "q3", "name: q3\nv: 2\n", actor=OTHER, replace=True)
    assert (saved.created_by, saved.updated_by) == ("paula@example.com", "paula@example.com")
    edited = scenarios.save_scenario(engine, "q3", "name: q3\nv: 3\n", actor=ADMIN, replace=True)
    assert (edited.created_by, edited.updated_by) == ("paula@example.com", "ada@example.com")
    assert scenarios.delete_scenario(engine, "q3", actor=ADMIN)


def test_a_deleted_run_comes_back_with_undo_and_the_purge_takes_it_after_its_days(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = repository.save_run(engine, full_run(), actor=SYSTEM).run_id
    assert repository.delete_run(engine, run_id, actor=ADMIN)
    assert run_lists.list_runs(engine) == []
    [item] = trash.list_trash(engine)
    assert (item.kind, item.key, item.deleted_by) == ("run", str(run_id), "ada@example.com")
    assert item.purge_at - item.deleted_at == timedelta(days=30)
    with pytest.raises(PermissionDeniedError):
        trash.undo_delete(engine, "run", str(run_id), actor=PLANNER)
    assert "brought back" in trash.undo_delete(engine, "run", str(run_id), actor=ADMIN)
    assert [s.run_id for s in run_lists.list_runs(engine)] == [run_id]
    with pytest.raises(InputError, match=r"not in the trash|no run"):
        trash.undo_delete(engine, "run", str(run_id), actor=ADMIN)
    repository.delete_run(engine, run_id, actor=ADMIN)
    monkeypatch.setenv("CAPPLAN_TRASH_DAYS", "7")
    now = datetime.now(UTC)
    assert trash.purge_trash(engine, actor=SYSTEM, now=now + timedelta(days=6)) == []
    assert trash.purge_trash(engine, actor=SYSTEM, now=now + timedelta(days=8)) == [
        f"run {run_id} purged: in the trash over 7 days"
    ]
    actions = [(e.kind, e.action, e.actor) for e in _trail(engine)[:4]]
    assert actions == [
        ("run", "purged", "capplan"),
        ("run", "deleted", "ada@example.com"),
        ("run", "undeleted", "ada@example.com"),
        ("run", "deleted", "ada@example.com"),
    ]


def test_a_deleted_scenario_comes_back_and_its_name_can_be_saved_again(engine: Engine) -> None:
    scenarios.save_scenario(engine, "q3", "name: q3\n", actor=PLANNER)
    assert scenarios.delete_scenario(engine, "q3", actor=PLANNER)
    assert scenarios.list_scenarios(engine) == []
    trash.undo_delete(engine, "scenario", "q3", actor=PLANNER)
    assert [s.name for s in scenarios.list_scenarios(engine)] == ["q3"]
    scenarios.delete_scenario(engine, "q3", actor=PLANNER)
    scenarios.save_scenario(engine, "q3", "name: q3\nnew: 1\n", actor=OTHER)
    assert scenarios.get_scenario(engine, "q3").created_by == "paula@example.com"
    assert ("scenario", "purged") in [(e.kind, e.action) for e in _trail(engine)]


def test_a_restored_shipped_catalog_can_be_undone(demo: Engine) -> None:
    negotiated = [replace(p, usd_per_gpu_hour=1.11) for p in list_prices(demo)]
    replace_prices(demo, negotiated, actor=ADMIN)
    replace_prices(demo, negotiated[:2], actor=ADMIN, why="restored")
    change = next(e for e in _trail(demo) if e.kind == "prices" and e.action == "restored")
    with pytest.raises(PermissionDeniedError):
        trash.undo_price_change(demo, change.entry_id, actor=PLANNER)
    assert trash.undo_price_change(demo, change.entry_id, actor=ADMIN) == len(negotiated)
    assert list_prices(demo) == negotiated
    assert _trail(demo)[0].action == "undone"
    with pytest.raises(InputError, match="is not a price change"):
        trash.undo_price_change(demo, _trail(demo)[-1].entry_id, actor=ADMIN)


def test_a_recorded_plan_keeps_its_hashes_and_says_what_moved_since(demo: Engine) -> None:
    scenarios.save_scenario(demo, "agent-platform", AGENT_YAML, actor=PLANNER)
    scenario = scenario_from_yaml(AGENT_YAML, "agent-platform")
    plan = make_plan(scenario, planning.load_curves(demo), list_prices(demo))
    record = history.record_plan(demo, "agent-platform", plan, actor=PLANNER)
    assert record.created_by == "pat@example.com"
    assert {run_id for run_id, _ in record.run_hashes} >= set(record.run_ids)
    assert record.prices_sha256 == plan_basis.prices_sha256(record.prices_used)
    assert plan_basis.basis_now(demo, record).unchanged
    gone = record.run_ids[0]
    repository.delete_run(demo, gone, actor=ADMIN)
    cheaper = [replace(p, usd_per_gpu_hour=p.usd_per_gpu_hour * 0.9) for p in list_prices(demo)]
    replace_prices(demo, cheaper, actor=ADMIN)
    moved = plan_basis.basis_now(demo, record).moved
    assert any(line.startswith(f"run {gone}: deleted by ada@example.com") for line in moved)
    assert any(line.startswith("price ") and "then, not in the catalog" in line for line in moved)


def test_a_restore_keeps_the_trail_of_the_store_it_replaces(stores: Stores, tmp_path: Path) -> None:
    from db.backup import backup

    source = make_engine(stores.migrated("trail_source"))
    repository.save_run(source, full_run(), actor=PLANNER)
    file = tmp_path / "trail.jsonl.gz"
    backup(str(source.url.render_as_string(hide_password=False)), file)
    target_url = stores.migrated("trail_target")
    target = make_engine(target_url)
    scenarios.save_scenario(target, "later", "name: later\n", actor=OTHER)
    with pytest.raises(PermissionDeniedError):
        restore(target_url, file, actor=PLANNER, replace=True)
    restore(target_url, file, actor=ADMIN, replace=True)
    trail = [(e.actor, e.kind, e.action) for e in _trail(target)]
    assert trail == [
        ("ada@example.com", "backup", "restored"),
        ("paula@example.com", "scenario", "saved"),  # the replaced store's entry, kept
        ("pat@example.com", "run", "imported"),  # the backup's own trail
    ]
    assert "1 audit entries of the replaced store kept" in _trail(target)[0].summary
    source.dispose()
    target.dispose()
