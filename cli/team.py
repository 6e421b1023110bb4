"""`capplan audit`, `capplan trash`, `capplan undo`, `capplan delete`, `capplan roles`: the team
store from the command line, under the same roles as the app (your login's role in the store:
`capplan roles list`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, cast

import typer

from cli.common import (
    DbOption,
    JsonOption,
    acting,
    app,
    fail,
    guard,
    open_engine,
    out,
    print_json,
    within,
)
from errors import InputError
from workflows.limits import AUDIT_ROWS

if TYPE_CHECKING:
    from workflows.team import TrashKind

trash_app = typer.Typer(
    help="What was deleted, for 30 days (CAPPLAN_TRASH_DAYS).", no_args_is_help=True
)
roles_app = typer.Typer(help="Who may change what: viewer, planner, admin.", no_args_is_help=True)
delete_app = typer.Typer(
    help="Delete a run (admin) or a scenario (its owner or an admin).", no_args_is_help=True
)
app.add_typer(trash_app, name="trash")
app.add_typer(roles_app, name="roles")
app.add_typer(delete_app, name="delete")

KINDS = ("run", "scenario", "model")


def _day(text: str | None, flag: str, end: bool) -> datetime | None:
    if text is None:
        return None
    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        fail(InputError("expected a date YYYY-MM-DD (UTC)", field=flag, value=text))
    return day.replace(hour=23, minute=59, second=59) if end else day


@app.command("audit")
def audit_cmd(
    person: Annotated[str | None, typer.Option(help="Only this person's changes.")] = None,
    kind: Annotated[
        str | None, typer.Option(help="Only this kind: run, prices, scenario, model, role, ...")
    ] = None,
    since: Annotated[str | None, typer.Option(help="From this day, YYYY-MM-DD (UTC).")] = None,
    until: Annotated[str | None, typer.Option(help="Up to this day, YYYY-MM-DD (UTC).")] = None,
    limit: Annotated[
        int, typer.Option(help="At most this many.", callback=within(AUDIT_ROWS))
    ] = 200,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """The audit trail, newest first: who changed what, when, the value before and after."""
    from workflows.team import AuditFilter, audit_entries  # noqa: PLC0415

    engine = open_engine(db)
    filters = AuditFilter(person, kind, _day(since, "--since", False), _day(until, "--until", True))
    entries = guard(lambda: audit_entries(engine, filters, limit))
    if as_json:
        print_json([{**vars_of(e), "at": e.at.isoformat()} for e in entries])
        return
    for e in entries:
        when = e.at.strftime("%Y-%m-%d %H:%M:%S")
        out.print(
            f"{e.entry_id:>6} {when} {e.actor} ({e.role}): {e.summary}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def vars_of(entry: object) -> dict[str, object]:
    """A frozen dataclass with slots as a dict."""
    import dataclasses  # noqa: PLC0415

    assert dataclasses.is_dataclass(entry) and not isinstance(entry, type)
    return dataclasses.asdict(entry)


@trash_app.command("list")
def trash_list_cmd(db: DbOption = None, as_json: JsonOption = False) -> None:
    """What is in the trash, who deleted it, when the purge takes it."""
    from workflows.team import list_trash  # noqa: PLC0415

    items = guard(lambda: list_trash(open_engine(db)))
    if as_json:
        print_json([vars_of(item) for item in items])
        return
    if not items:
        out.print("the trash is empty", markup=False, highlight=False)
    for item in items:
        out.print(
            f"{item.kind} {item.key}: {item.label}; deleted by {item.deleted_by} "
            f"{item.deleted_at:%Y-%m-%d %H:%M} UTC, purged after "
            f"{item.purge_at:%Y-%m-%d %H:%M} UTC",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


@trash_app.command("purge")
def trash_purge_cmd(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Delete for good what has been in the trash past its time (an admin's; recorded)."""
    from workflows.team import purge_trash  # noqa: PLC0415

    engine = open_engine(db)
    actor = acting(engine)
    gone = guard(lambda: purge_trash(engine, actor=actor))
    if as_json:
        print_json({"purged": gone})
        return
    out.print(
        "\n".join(gone) or "nothing is past its time in the trash", markup=False, highlight=False
    )


@app.command("undo")
def undo_cmd(
    kind: Annotated[str, typer.Argument(help="run, scenario or model")],
    key: Annotated[str, typer.Argument(help="The run's id, or the scenario's or model's name.")],
    db: DbOption = None,
) -> None:
    """Bring a deleted run, scenario or model back from the trash."""
    from workflows.team import undo_delete  # noqa: PLC0415

    if kind not in KINDS:
        fail(InputError(f"expected one of {list(KINDS)}", field="kind", value=kind))
    engine = open_engine(db)
    actor = acting(engine)
    which = cast("TrashKind", kind)
    said = guard(lambda: undo_delete(engine, which, key, actor=actor))
    out.print(said, markup=False, highlight=False)


@delete_app.command("run")
def delete_run_cmd(run_id: int, db: DbOption = None) -> None:
    """Move a run to the trash (an admin's): plans leave it out until `capplan undo run ID`."""
    from workflows.store import delete_run  # noqa: PLC0415

    engine = open_engine(db)
    actor = acting(engine)
    if not guard(lambda: delete_run(engine, run_id, actor=actor)):
        fail(InputError("no stored run with this id", field="run_id", value=run_id))
    out.print(
        f"run {run_id} deleted (in the trash: `capplan undo run {run_id}` brings it back)",
        markup=False,
        highlight=False,
    )


@delete_app.command("scenario")
def delete_scenario_cmd(name: str, db: DbOption = None) -> None:
    """Move a saved scenario to the trash (its owner or an admin)."""
    from workflows.store import delete_scenario  # noqa: PLC0415

    engine = open_engine(db)
    actor = acting(engine)
    if not guard(lambda: delete_scenario(engine, name, actor=actor)):
        fail(InputError("no saved scenario of this name", field="name", value=name))
    out.print(
        f"scenario {name!r} deleted (in the trash: `capplan undo scenario {name!r}`)",
        markup=False,
        highlight=False,
    )


@roles_app.command("list")
def roles_list_cmd(db: DbOption = None, as_json: JsonOption = False) -> None:
    """The roles given in this store, and yours."""
    from workflows.team import list_roles  # noqa: PLC0415

    engine = open_engine(db)
    given = guard(lambda: list_roles(engine))
    me = acting(engine)
    if as_json:
        print_json(
            {
                "you": {"name": me.name, "role": me.role.value, "via": me.via},
                "roles": [vars_of(g) for g in given],
            }
        )
        return
    out.print(f"you: {me.name}, {me.role} ({me.via})", markup=False, highlight=False)
    for g in given:
        out.print(
            f"{g.person}: {g.role} (given by {g.given_by} {g.given_at:%Y-%m-%d %H:%M} UTC)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


@roles_app.command("set")
def roles_set_cmd(
    person: Annotated[str, typer.Argument(help="An e-mail address (sign-in) or a login name.")],
    role: Annotated[str, typer.Argument(help="viewer, planner, admin, or none")],
    db: DbOption = None,
) -> None:
    """Give a person a role (an admin's; in a store without roles, its one user is the admin)."""
    from workflows.team import role_named, set_role  # noqa: PLC0415

    wanted = guard(lambda: role_named(role))
    engine = open_engine(db)
    actor = acting(engine)
    guard(lambda: set_role(engine, person, wanted, actor=actor))
    out.print(
        f"{person.strip().lower()}: {wanted or 'no stored role'}", markup=False, highlight=False
    )
