"""Saved scenarios (save, rename, clone, delete) and their plan history: every recorded plan
keeps its scenario YAML, the runs behind it and the prices it used, so it can be regenerated and
audited (workflows.history plans and regenerates; this module only stores and reads). Callers
get the frozen dataclasses below, never rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, select
from sqlalchemy.orm import Session

from db.engine import session_scope, write_transaction
from db.models import PlanRecord as PlanRecordRow
from db.models import Run, Scenario
from errors import InputError, PlanningError
from hardware.prices import PriceEntry

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


# ---------------------------------------------------------------- scenarios


def save_scenario(engine: Engine, name: str, yaml_text: str) -> ScenarioRecord:
    """Insert a scenario, or replace the YAML of the one with the same name (last write wins)."""
    clean = _scenario_name(name)

    def save(session: Session) -> ScenarioRecord:
        row = session.scalar(select(Scenario).where(Scenario.name == clean).with_for_update())
        # Read the clock only once the row (or SQLite's write lock) is held, so updated_at
        # follows the order racing saves commit in.
        now = datetime.now(UTC)
        if row is None:
            row = Scenario(name=clean, yaml_text=yaml_text, created_at=now, updated_at=now)
            session.add(row)
        else:
            row.yaml_text = yaml_text
            row.updated_at = now
        session.flush()
        return _scenario_record(row)

    # Two sessions saving one new name at once: the loser's insert breaks the unique name and
    # is retried, when it finds the winner's row and replaces its YAML.
    return write_transaction(engine, save)


def list_scenarios(engine: Engine) -> list[ScenarioRecord]:
    """Every saved scenario, by name."""
    with session_scope(engine, write=False) as session:
        rows = session.scalars(select(Scenario).order_by(Scenario.name)).all()
    return [_scenario_record(row) for row in rows]


def get_scenario(engine: Engine, name: str) -> ScenarioRecord:
    """The saved scenario with this name; InputError when there is none."""
    with session_scope(engine, write=False) as session:
        row = session.scalar(select(Scenario).where(Scenario.name == name.strip()))
    if row is None:
        raise InputError(f"no saved scenario named {name!r}", field="name")
    return _scenario_record(row)


def delete_scenario(engine: Engine, name: str) -> bool:
    """Delete the scenario with this name; False when there was none."""

    def remove(session: Session) -> bool:
        deleted = session.execute(
            delete(Scenario).where(Scenario.name == name.strip()).returning(Scenario.id)
        ).first()
        return deleted is not None

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
    return ScenarioRecord(row.id, row.name, row.yaml_text, row.created_at, row.updated_at)


def rename_scenario(
    engine: Engine, old: str, new: str, *, rename_yaml: YamlRenamer
) -> ScenarioRecord:
    """Rename a saved scenario (its YAML's name too, by `rename_yaml`); InputError when `old`
    is missing or `new` is taken. Its plan history follows it."""
    clean = _scenario_name(new)

    def rename(session: Session) -> ScenarioRecord:
        row = _scenario_row(session, old, lock=True)
        if clean != row.name:
            _refuse_taken(session, clean)
        row.name = clean
        row.yaml_text = rename_yaml(row.yaml_text, clean)
        row.updated_at = datetime.now(UTC)
        session.flush()
        return _scenario_record(row)

    # A rename racing another to the same name is retried, and then refused as taken.
    return write_transaction(engine, rename)


def clone_scenario(
    engine: Engine, name: str, new_name: str, *, rename_yaml: YamlRenamer
) -> ScenarioRecord:
    """Copy a saved scenario under a new name (its YAML's name set by `rename_yaml`; no plan
    history); InputError when the name is taken or the source is missing."""
    clean = _scenario_name(new_name)

    def clone(session: Session) -> ScenarioRecord:
        source = _scenario_row(session, name)
        _refuse_taken(session, clean)
        now = datetime.now(UTC)
        row = Scenario(
            name=clean,
            yaml_text=rename_yaml(source.yaml_text, clean),
            created_at=now,
            updated_at=now,
        )
        session.add(row)
        session.flush()
        return _scenario_record(row)

    # A clone racing another to the same name is retried, and then refused as taken.
    return write_transaction(engine, clone)


def _scenario_row(session: Session, name: str, *, lock: bool = False) -> Scenario:
    """The scenario named `name` (locked against concurrent changes when `lock`); InputError
    when there is none."""
    query = select(Scenario).where(Scenario.name == name.strip())
    row = session.scalar(query.with_for_update() if lock else query)
    if row is None:
        raise InputError(f"no saved scenario named {name!r}", field="name")
    return row


def _refuse_taken(session: Session, name: str) -> None:
    if session.scalar(select(Scenario.id).where(Scenario.name == name)) is not None:
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


def record_plan(engine: Engine, scenario_name: str, new: NewPlanRecord) -> PlanRecord:
    """Record a plan of a saved scenario (InputError when none has that name)."""

    def record(session: Session) -> PlanRecord:
        scenario = _scenario_row(session, scenario_name)
        row = PlanRecordRow(
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


def refuse_missing_runs(engine: Engine, record: PlanRecord) -> None:
    """PlanningError naming the runs a record used that were deleted since."""
    wanted = list(record.basis_run_ids)
    with session_scope(engine, write=False) as session:
        found = set(session.scalars(select(Run.id).where(Run.id.in_(wanted))).all())
    missing = [run_id for run_id in wanted if run_id not in found]
    if missing:
        raise PlanningError(
            f"plan record {record.record_id} cannot be regenerated: run(s) "
            f"{', '.join(map(str, missing))} it used were deleted since; re-import them or "
            "record a new plan"
        )


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
    )
