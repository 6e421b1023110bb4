"""What every capplan command shares: the Typer apps, consoles, the --db/--json options and
the error boundary (a CapplanError is one line on stderr and exit code 2)."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from errors import CapplanError, InputError
from workflows.limits import CONCURRENCY, PREDICT_POINTS, Bound
from workflows.text import escape_hidden

if TYPE_CHECKING:  # sqlalchemy and alembic load when a command opens the store
    from team.roles import Actor
    from workflows.store import Engine

app = typer.Typer(
    name="capplan",
    help="Plan LLM serving capacity (engine, GPU, 8-GPU nodes, $/month) from real measurements.",
    no_args_is_help=True,
    add_completion=False,
)
db_app = typer.Typer(help="Database maintenance.", no_args_is_help=True)
app.add_typer(db_app, name="db")

# Control characters in what is printed (a model name with ESC from a result file) would drive the
# terminal and bidi controls (U+202E) reorder what it shows; rich keeps both, so every string it
# renders has them escaped first (\x1b, \u202e), while its own styling still reaches the
# terminal. (reports.cells.visible's rule, from the light measurements.safe_text: the CLI's light
# commands load no reports module, tests/test_cli_startup.py.)


class _Console(Console):
    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(escape_hidden(text), **options)


out = _Console()
err = _Console(stderr=True)
T = TypeVar("T")

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Database URL (else $CAPPLAN_DB, else sqlite:///data/capplan.db)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


def fail(exc: CapplanError) -> NoReturn:
    err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def guard(action: Callable[[], T]) -> T:
    """Run an action; a CapplanError becomes one line on stderr and exit code 2."""
    try:
        return action()
    except CapplanError as exc:
        fail(exc)


def open_engine(db: str | None) -> Engine:
    from workflows.store import open_store, resolve_db_url  # noqa: PLC0415

    url = resolve_db_url(db)
    return guard(lambda: open_store(url))


def acting(engine: Engine) -> Actor:
    """Who runs this command, with the role this store gives their login (workflows.team)."""
    from workflows.team import cli_actor  # noqa: PLC0415

    return guard(lambda: cli_actor(engine))


def print_json(document: object) -> None:
    sys.stdout.write(json.dumps(document, indent=2, default=str) + "\n")


def within(bound: Bound) -> Callable[[typer.CallbackParam, Any], Any]:
    """A typer callback refusing a value outside `bound` as the command line is read, before any
    work: one line naming the flag, the value and the range, exit code 2."""

    def check(param: typer.CallbackParam, value: Any) -> Any:
        if value is not None and not bound.holds(value):
            flag = max(param.opts, key=len) if param.opts else str(param.name)
            fail(InputError(f"must be {bound.text()}", field=flag, value=value))
        return value

    return check


def parse_concurrencies(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise InputError(
            "expected comma-separated numbers", field="--concurrency", value=text
        ) from exc
    if not values or any(not math.isfinite(v) or v <= 0 for v in values):
        raise InputError("expected positive concurrencies", field="--concurrency", value=text)
    if len(values) > PREDICT_POINTS or max(values) > CONCURRENCY.high:
        raise InputError(
            f"expected at most {PREDICT_POINTS:,} concurrencies, each at most "
            f"{CONCURRENCY.high:,.0f}",
            field="--concurrency",
            value=text,
        )
    return values
