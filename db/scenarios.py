"""Saved scenarios (save, rename, clone, delete) and their plan history: every recorded plan
keeps its scenario YAML, the runs behind it and the prices it used, so it can be regenerated and
audited (workflows.history plans and regenerates; this module only stores and reads). Callers
get the frozen dataclasses below, never rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from db import audit
from db.engine import session_scope, write_transaction
from db.models import PlanRecord as PlanRecordRow
from db.models import Run, Scenario
from db.plan_basis import prices_sha256
from errors import InputError
from hardware.prices import PriceEntry
from team.roles import Action, Actor

MAX_SCENARIO_NAME_CHARS = 200
# (YAML text, new name) -> the YAML with that name: the store does not read scenario YAML itself.
YamlRenamer = Callable[[str, str], str]


@dataclass(frozen=True, slots=True)
class ScenarioRecord:
    """A saved scenario YAML and when it was created and last changed (UTC)."""

    scenario_id: int
    name: str
    yaml_text: str
    created_at: datetime
    updated_at: datetime
    created_by: str | None = None  # its owner; None when saved before owners were kept
    updated_by: str | None = None


class ScenarioExistsError(InputError):
    """Saving under a name another scenario has, without saying to replace it: the caller asks
    first (the Plan page's "replace it?", the CLI's --replace)."""


@dataclass(frozen=True, slots=True)
class PlanSummary:
    """What a plan answered: the chosen option (over budget: the cheapest meeting the SLA, its
    title saying so), its monthly cost and nodes, and why."""

    choice_title: str | None
    total_monthly_cost_usd: float | None
    nodes: int | None
    recommendation: str


@dataclass(frozen=True, slots=True)
class PlanRecord:
    """A recorded plan of a scenario: its inputs at that time (scenario YAML, the runs behind the
    options and their fits, the prices used, the catalog version) and its summary (UTC time)."""

    record_id: int
    scenario_name: str
    scenario_yaml: str
    created_at: datetime
    run_ids: tuple[int, ...]
    basis_run_ids: tuple[int, ...]
    catalog_version: str
    prices_used: tuple[PriceEntry, ...]
    summary: PlanSummary
    # What it rested on (recorded since migration 0006; empty before): each run's content
    # sha256 by id, the sha256 of the prices used, who recorded it.
    run_hashes: tuple[tuple[int, str], ...] = ()
    prices_sha256: str | None = None
    created_by: str | None = None


# ---------------------------------------------------------------- scenarios


def save_scenario(
    engine: Engine, name: str, yaml_text: str, *, actor: Actor, replace: bool = False
) -> ScenarioRecord:
    """Insert a scenario owned by actor, or, with `replace`, replace the YAML of the one with
    the same name (its owner's or an admin's to replace); ScenarioExistsError without `replace`."""
    clean = _scenario_name(name)
    actor.require(Action.SAVE_SCENARIOS)

    def save(session: Session) -> ScenarioRecord:
        row = session.scalar(select(Scenario).where(Scenario.name == clean).with_for_update())
        if row is not None and row.deleted_at is not None:
            _purge_trashed(session, row, actor)  # a name in the trash is free to reuse
            row = None
        # Read the clock only once the row (or SQLite's write lock) is held, so updated_at
        # follows the order racing saves commit in.
        now = datetime.now(UTC)
        before = None if row is None else row.yaml_text
        if row is None:
            row = Scenario(name=clean, yaml_text=yaml_text, created_at=now, updated_at=now)
            row.created_by = row.updated_by = actor.name
            session.add(row)
        else:
            _refuse_existing(row, actor, replace)
            row.yaml_text, row.updated_at, row.updated_by = yaml_text, now, actor.name
        session.flush()
        said = f"scenario {clean!r} {'saved' if before is None else 'replaced'}"
        change = ("scenario", "saved" if before is None else "replaced", f"scenario {clean!r}")
        audit.record(session, actor, change, (before, yaml_text), said)
        return _scenario_record(row)

    # Two sessions saving one new name at once: the loser's insert breaks the unique name and
    # is retried, when it finds the winner's row and replaces its YAML.
    return write_transaction(engine, save)


def _refuse_existing(row: Scenario, actor: Actor, replace: bool) -> None:
    """ScenarioExistsError unless replacing was asked; PermissionDeniedError unless actor may."""
    whose = f"{row.created_by}'s" if row.created_by else "saved before owners were kept"
    if not replace:
        changed = (
            f"last changed by {row.updated_by or 'unknown'} {row.updated_at:%Y-%m-%d %H:%M} UTC"
        )
        raise ScenarioExistsError(
            f"a scenario named {row.name!r} already exists ({whose}, {changed}); replace it "
            "or pick another name",
            field="name",
            value=row.name,
        )
    actor.require_change(row.created_by, f"scenario {row.name!r}")


def _purge_trashed(session: Session, row: Scenario, actor: Actor) -> None:
    """Drop a scenario from the trash for good (its name is being reused), recorded."""
    change = ("scenario", "purged", f"scenario {row.name!r}")
    said = f"scenario {row.name!r} purged from the trash: its name was saved again"
    audit.record(session, actor, change, (row.yaml_text, None), said)
    session.delete(row)
    session.flush()


def list_scenarios(engine: Engine) -> list[ScenarioRecord]:
    """Every saved scenario (not in the trash), by name."""
    with session_scope(engine, write=False) as session:
        query = select(Scenario).where(Scenario.deleted_at.is_(None)).order_by(Scenario.name)
        rows = session.scalars(query).all()
    return [_scenario_record(row) for row in rows]


def get_scenario(engine: Engine, name: str) -> ScenarioRecord:
    """The saved scenario with this name; InputError when there is none."""
    with session_scope(engine, write=False) as session:
        row = session.scalar(select(Scenario).where(Scenario.name == name.strip()))
    if row is None or row.deleted_at is not None:
        raise InputError(f"no saved scenario named {name!r}", field="name")
    return _scenario_record(row)


def delete_scenario(engine: Engine, name: str, *, actor: Actor) -> bool:
    """Move the scenario with this name to the trash (its owner or an admin; undo brings it
    back until the purge); False when there was none."""

    def remove(session: Session) -> bool:
        query = select(Scenario).where(Scenario.name == name.strip(), Scenario.deleted_at.is_(None))
        row = session.scalar(query.with_for_update())
        if row is None:
            return False
        actor.require_change(row.created_by, f"scenario {row.name!r}")
        row.deleted_at, row.deleted_by = datetime.now(UTC), actor.name
        change = ("scenario", "deleted", f"scenario {row.name!r}")
        audit.record(
            session, actor, change, (row.yaml_text, None), f"scenario {row.name!r} deleted"
        )
        return True

    return write_transaction(engine, remove)


def _scenario_name(name: str) -> str:
    clean = name.strip()
    if not clean or len(clean) > MAX_SCENARIO_NAME_CHARS:
        raise InputError(
            f"a scenario name must be 1 to {MAX_SCENARIO_NAME_CHARS} characters",
            field="name",
            value=name,
        )
    return clean


def _scenario_record(row: Scenario) -> ScenarioRecord:
    return ScenarioRecord(
        row.id,
        row.name,
        row.yaml_text,
        row.created_at,
        row.updated_at,
        row.created_by,
        row.updated_by,
    )


def rename_scenario(
    engine: Engine, old: str, new: str, *, rename_yaml: YamlRenamer, actor: Actor
) -> ScenarioRecord:
    """Rename a saved scenario (its YAML's name too, by `rename_yaml`); InputError when `old`
    is missing or `new` is taken. Its plan history follows it."""
    clean = _scenario_name(new)

    def rename(session: Session) -> ScenarioRecord:
        row = _scenario_row(session, old, lock=True)
        actor.require_change(row.created_by, f"scenario {row.name!r}")
        if clean != row.name:
            _refuse_taken(session, clean)
        before = row.name
        row.name = clean
        row.yaml_text = rename_yaml(row.yaml_text, clean)
        row.updated_at, row.updated_by = datetime.now(UTC), actor.name
        session.flush()
        said = f"scenario {before!r} renamed {clean!r}"
        audit.record(
            session, actor, ("scenario", "renamed", f"scenario {clean!r}"), (before, clean), said
        )
        return _scenario_record(row)

    # A rename racing another to the same name is retried, and then refused as taken.
    return write_transaction(engine, rename)


def clone_scenario(
    engine: Engine, name: str, new_name: str, *, rename_yaml: YamlRenamer, actor: Actor
) -> ScenarioRecord:
    """Copy a saved scenario under a new name (its YAML's name set by `rename_yaml`; no plan
    history); InputError when the name is taken or the source is missing."""
    clean = _scenario_name(new_name)

    def clone(session: Session) -> ScenarioRecord:
        actor.require(Action.SAVE_SCENARIOS)
        source = _scenario_row(session, name)
        _refuse_taken(session, clean)
        now = datetime.now(UTC)
        row = Scenario(
            name=clean,
            yaml_text=rename_yaml(source.yaml_text, clean),
            created_at=now,
            updated_at=now,
            created_by=actor.name,
            updated_by=actor.name,
        )
        session.add(row)
        session.flush()
        said = f"scenario {source.name!r} cloned as {clean!r}"
        change = ("scenario", "cloned", f"scenario {clean!r}")
        audit.record(session, actor, change, (None, row.yaml_text), said)
        return _scenario_record(row)

    # A clone racing another to the same name is retried, and then refused as taken.
    return write_transaction(engine, clone)


def _scenario_row(session: Session, name: str, *, lock: bool = False) -> Scenario:
    """The scenario named `name` (locked against concurrent changes when `lock`); InputError
    when there is none."""
    query = select(Scenario).where(Scenario.name == name.strip(), Scenario.deleted_at.is_(None))
    row = session.scalar(query.with_for_update() if lock else query)
    if row is None:
        raise InputError(f"no saved scenario named {name!r}", field="name")
    return row


def _refuse_taken(session: Session, name: str) -> None:
    row = session.scalar(select(Scenario).where(Scenario.name == name))
    if row is not None and row.deleted_at is not None:
        raise InputError(
            f"a scenario named {name!r} is in the trash; undo its delete, or pick another name",
            field="name",
            value=name,
        )
    if row is not None:
        raise InputError(
            f"a scenario named {name!r} already exists; pick another name or delete that one",
            field="name",
            value=name,
        )


# ---------------------------------------------------------------- plan history


@dataclass(frozen=True, slots=True)
class NewPlanRecord:
    """What a plan record stores, worked out by its caller (workflows.history.record_plan)."""

    scenario_yaml: str
    run_ids: tuple[int, ...]
    basis_run_ids: tuple[int, ...]
    catalog_version: str
    prices_used: tuple[PriceEntry, ...]
    summary: PlanSummary


def record_plan(
    engine: Engine, scenario_name: str, new: NewPlanRecord, *, actor: Actor
) -> PlanRecord:
    """Record a plan of a saved scenario (InputError when none has that name), with the content
    sha256 of every run it rested on and of its prices, so a report can say what it stood on."""
    actor.require(Action.RECORD_PLANS)

    def record(session: Session) -> PlanRecord:
        scenario = _scenario_row(session, scenario_name)
        wanted = sorted({*new.run_ids, *new.basis_run_ids})
        hashes = session.execute(select(Run.id, Run.content_sha256).where(Run.id.in_(wanted))).all()
        row = PlanRecordRow(
            run_hashes={str(run_id): sha for run_id, sha in hashes},
            prices_sha256=prices_sha256(new.prices_used),
            created_by=actor.name,
            scenario_id=scenario.id,
            scenario_name=scenario.name,
            scenario_yaml=new.scenario_yaml,
            created_at=datetime.now(UTC),
            run_ids=list(new.run_ids),
            basis_run_ids=list(new.basis_run_ids),
            catalog_version=new.catalog_version,
            prices_used=[asdict(entry) for entry in new.prices_used],
            **asdict(new.summary),
        )
        session.add(row)
        session.flush()
        said = f"plan {row.id} of scenario {scenario.name!r} recorded: {row.recommendation}"
        change = ("plan", "recorded", f"plan {row.id}")
        audit.record(
            session, actor, change, (None, {"runs": wanted, "prices": row.prices_sha256}), said
        )
        return _plan_record(row)

    # Its scenario deleted meanwhile (Postgres: a foreign-key violation) is retried, and then
    # refused as "no saved scenario".
    return write_transaction(engine, record)


def plan_history(engine: Engine, scenario_name: str) -> list[PlanRecord]:
    """The recorded plans of a saved scenario, newest first (InputError when none has the name),
    with those recorded under the same name by a scenario deleted since (kept for audit)."""
    with session_scope(engine, write=False) as session:
        scenario = _scenario_row(session, scenario_name)
        orphaned = (PlanRecordRow.scenario_id.is_(None)) & (
            PlanRecordRow.scenario_name == scenario.name
        )
        rows = session.scalars(
            select(PlanRecordRow)
            .where((PlanRecordRow.scenario_id == scenario.id) | orphaned)
            .order_by(PlanRecordRow.id.desc())
        ).all()
        return [_plan_record(row) for row in rows]


def get_plan_record(engine: Engine, record_id: int) -> PlanRecord:
    """One recorded plan by id; InputError when there is none."""
    with session_scope(engine, write=False) as session:
        row = session.get(PlanRecordRow, record_id)
        if row is None:
            raise InputError(f"no recorded plan with id {record_id}", field="record_id")
        return _plan_record(row)


def _plan_record(row: PlanRecordRow) -> PlanRecord:
    return PlanRecord(
        record_id=row.id,
        scenario_name=row.scenario_name,
        scenario_yaml=row.scenario_yaml,
        created_at=row.created_at,
        run_ids=tuple(row.run_ids),
        basis_run_ids=tuple(row.basis_run_ids),
        catalog_version=row.catalog_version,
        prices_used=tuple(PriceEntry(**entry) for entry in row.prices_used),
        summary=PlanSummary(
            row.choice_title, row.total_monthly_cost_usd, row.nodes, row.recommendation
        ),
        run_hashes=tuple(sorted((int(k), str(v)) for k, v in (row.run_hashes or {}).items())),
        prices_sha256=row.prices_sha256,
        created_by=row.created_by,
    )
