"""Database URL, engine and session factory, and Alembic upgrades run from code.

SQLite gets WAL, foreign keys, a busy timeout and writes that start with BEGIN IMMEDIATE, so
two processes (CLI import + app) never deadlock on a lock upgrade. Writes that may race with
another writer (two probes storing the same deployment on Postgres, a SQLite writer that waited
out the busy timeout) run through `write_transaction`, which retries the whole transaction.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, inspect, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import ArgumentError, DataError, DBAPIError, NoSuchModuleError
from sqlalchemy.orm import Session
from sqlalchemy.pool import ConnectionPoolEntry

from db.access import sqlite_access_hint as _sqlite_access_hint
from errors import InputError, StoreError

if TYPE_CHECKING:
    from alembic.config import Config

# The newest migration (db/migrations/versions), so that opening a store already there reads one
# row and imports no Alembic (a third of a new process's start); a test holds it to Alembic's head.
SCHEMA_HEAD = "0006"

# Engine is re-exported so cli/ui can annotate with db.engine.Engine without importing sqlalchemy.
__all__ = [
    "DB_URL_ENV",
    "DEFAULT_DB_URL",
    "MIGRATIONS_DIR",
    "Engine",
    "alembic_config",
    "busy_timeout_ms",
    "current_revision",
    "downgrade",
    "ensure_schema",
    "head_revision",
    "make_engine",
    "redact",
    "resolve_db_url",
    "session_scope",
    "upgrade",
    "write_transaction",
]

T = TypeVar("T")

DEFAULT_DB_URL = "sqlite:///data/capplan.db"
DB_URL_ENV = "CAPPLAN_DB"
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# Execution option naming the BEGIN flavour; reads ask for DEFERRED so they never queue
# behind a writer (WAL lets readers run alongside one writer).
BEGIN_OPTION = "capplan_sqlite_begin"
BUSY_TIMEOUT_ENV = "CAPPLAN_SQLITE_BUSY_TIMEOUT_MS"
DEFAULT_BUSY_TIMEOUT_MS = 5000
# Races a retry resolves: unique (23505) and foreign-key (23503) violations from a concurrent
# insert or delete, serialization failures (40001) and deadlocks (40P01) on Postgres.
_RETRY_SQLSTATES = frozenset({"23505", "23503", "40001", "40P01"})
WRITE_ATTEMPTS = 6  # in a row without another writer committing
# ... and, on a SQLite file, this long without one: a busy machine can take seconds to commit
# one large import, longer than a few short busy timeouts (CI saw 1 of 10 queued writers give
# up after six 250 ms tries, and 1 of 10 after 15 s while both cores were busy with tests). A
# lock no one commits under is still given up after this long.
SQLITE_STALL_S = 60.0
# However long the queue of committing writers ahead, a write gives up after this long.
WRITE_DEADLINE_S = 600.0
# Postgres advisory-lock key held while migrating ("capplan" in ASCII, as a bigint).
_MIGRATION_LOCK = 0x6361_7070_6C61_6E


def resolve_db_url(cli_value: str | None) -> str:
    """The database URL: `--db` if given, else $CAPPLAN_DB, else sqlite:///data/capplan.db.

    A plain file path (no "scheme://") means a SQLite file at that path.
    """
    value = (cli_value or "").strip() or os.environ.get(DB_URL_ENV, "").strip()
    if not value:
        return DEFAULT_DB_URL
    if "://" not in value:
        return f"sqlite:///{Path(value).expanduser()}"
    return value


_SECRET_WORDS = ("password", "passwd", "pass", "secret", "token", "key", "sslpassword")


def redact(url: str) -> str:
    """The URL with any password (in the authority or a query parameter) replaced by ***, safe
    to print or log. Everything before the LAST "@" of the authority counts as credentials, so a
    password with an unencoded "@" is hidden whole."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, tail = rest.partition("/")
    user_info, at, host = authority.rpartition("@")
    if at:
        user = user_info.split(":", 1)[0]
        authority = f"{user}:***@{host}" if ":" in user_info else f"{user}@{host}"
    return f"{scheme}://{authority}{slash}{_redact_query(tail)}"


def _redact_query(tail: str) -> str:
    path, mark, query = tail.partition("?")
    if not mark:
        return tail
    masked = []
    for pair in query.split("&"):
        name, eq, _value = pair.partition("=")
        secret = eq and any(word in name.lower() for word in _SECRET_WORDS)
        masked.append(f"{name}=***" if secret else pair)
    return f"{path}?{'&'.join(masked)}"


def make_engine(url: str) -> Engine:
    """An Engine for the URL; for SQLite also creates the folder and sets the pragmas above."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"not a database URL: {redact(url)!r} ({exc})") from exc
    if parsed.get_backend_name() != "sqlite":
        try:
            return create_engine(parsed, pool_pre_ping=True)
        except NoSuchModuleError as exc:
            raise StoreError(
                f"unknown kind of database {parsed.drivername!r} in {redact(url)}: use "
                f"sqlite:///PATH (or a plain file path) or postgresql+psycopg://..."
            ) from exc
        except ModuleNotFoundError as exc:
            raise StoreError(
                f"the database driver for {redact(url)} is not installed ({exc.name}): install "
                f"it in capplan's environment, e.g. `pip install psycopg[binary]` for postgresql"
            ) from exc
    database = parsed.database
    if database and database != ":memory:" and not database.startswith("file:"):
        try:
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder of the SQLite database {redact(url)}: {exc}"
            ) from exc
    engine = create_engine(parsed)
    event.listen(engine, "connect", _sqlite_on_connect)
    event.listen(engine, "begin", _sqlite_on_begin)
    return engine


def _sqlite_on_connect(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    # isolation_level=None stops pysqlite from issuing its own (deferred, DML-only) BEGIN;
    # _sqlite_on_begin issues ours instead (SQLAlchemy docs, "sqlite_transactions").
    dbapi_connection.isolation_level = None
    pragmas = (
        "PRAGMA journal_mode=WAL",
        "PRAGMA foreign_keys=ON",
        f"PRAGMA busy_timeout={busy_timeout_ms()}",
        "PRAGMA synchronous=NORMAL",
    )
    cursor = dbapi_connection.cursor()
    try:
        for pragma in pragmas:
            cursor.execute(pragma)
    finally:
        cursor.close()


def busy_timeout_ms() -> int:
    """How long a SQLite writer waits for another's lock: $CAPPLAN_SQLITE_BUSY_TIMEOUT_MS or 5 s."""
    raw = os.environ.get(BUSY_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_BUSY_TIMEOUT_MS
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise StoreError(f"{BUSY_TIMEOUT_ENV}={raw!r}: give a whole number of milliseconds >= 0")
    return value


def _sqlite_on_begin(connection: Connection) -> None:
    mode = connection.get_execution_options().get(BEGIN_OPTION, "IMMEDIATE")
    connection.exec_driver_sql("BEGIN DEFERRED" if mode == "DEFERRED" else "BEGIN IMMEDIATE")


@contextmanager
def session_scope(engine: Engine, *, write: bool = True) -> Iterator[Session]:
    """A Session in one transaction: commit on success, roll back on any error.

    write=False starts a deferred (read) transaction on SQLite; database errors become StoreError.
    """
    bind = engine if write else engine.execution_options(**{BEGIN_OPTION: "DEFERRED"})
    try:
        with Session(bind, expire_on_commit=False) as session, session.begin():
            yield session
    except DataError as exc:  # a value the column refuses (Postgres: a number or text too long)
        detail = str(exc.orig).splitlines()[0] if exc.orig is not None else str(exc)
        what = "a number is too large" if "out of range" in detail else "a value does not fit"
        raise InputError(f"{what} for the store ({detail}); nothing was written") from exc
    except DBAPIError as exc:
        raise _store_error(engine, exc) from exc
    except OverflowError as exc:  # a whole number beyond the 64-bit columns: nothing was written
        raise InputError(f"a number is too large for the store: {exc}") from exc


def write_transaction(
    engine: Engine, work: Callable[[Session], T], *, attempts: int = WRITE_ATTEMPTS
) -> T:
    """Run work(session) in one write transaction, retrying the whole of it when it lost a race.

    Lost races are a concurrent insert of the same unique row, a concurrent delete under a
    foreign key, a serialization failure or deadlock, or a SQLite lock held past the busy
    timeout. work must be safe to run again (it starts from a fresh transaction each time).
    """
    deadline = time.monotonic() + WRITE_DEADLINE_S
    failures, marker = 0, _commit_marker(engine)
    stalled_since = time.monotonic()
    while True:
        try:
            with session_scope(engine) as session:
                return work(session)
        except StoreError as exc:
            cause = exc.__cause__
            if not (isinstance(cause, DBAPIError) and _lost_race(cause)):
                raise
            # A SQLite writer queued behind others that keep committing is waiting its turn,
            # not locked out: its count starts again, so the wait scales with the queue. Only
            # one lock held without a commit for every attempt and SQLITE_STALL_S (or the
            # deadline) gives up.
            seen = _commit_marker(engine)
            now = time.monotonic()
            if seen != marker:
                failures, stalled_since = 1, now
            else:
                failures += 1
            marker = seen
            stall_floor = SQLITE_STALL_S if seen is not None else 0.0
            if (failures >= attempts and now - stalled_since >= stall_floor) or now > deadline:
                raise
            # Exponential backoff with jitter so racing writers do not collide again in step.
            time.sleep(random.uniform(0.5, 1.0) * 0.05 * 2 ** (failures - 1))


def _commit_marker(engine: Engine) -> tuple[tuple[int, int], ...] | None:
    """What changes whenever a writer commits to a SQLite file: the size and modification time
    of the database and its WAL (None for a server database or an in-memory one)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    marks = []
    for path in (database, f"{database}-wal"):
        try:
            stat = Path(path).stat()
        except OSError:
            marks.append((-1, -1))
        else:
            marks.append((stat.st_size, stat.st_mtime_ns))
    return tuple(marks)


def _lost_race(exc: DBAPIError) -> bool:
    if getattr(exc.orig, "sqlstate", None) in _RETRY_SQLSTATES:
        return True
    return "database is locked" in str(exc.orig) or "database is busy" in str(exc.orig)


def _store_error(engine: Engine, exc: DBAPIError) -> StoreError:
    detail = str(exc.orig) if exc.orig is not None else str(exc)
    hint = ""
    if "no such table" in detail or "does not exist" in detail:
        hint = "; create or upgrade the schema with `capplan db upgrade`"
    elif "readonly database" in detail or "unable to open database file" in detail:
        hint = _sqlite_access_hint(engine.url.database)
    elif "locked" in detail:
        hint = (
            f"; another process held SQLite's write lock past the busy timeout "
            f"({busy_timeout_ms()} ms, ${BUSY_TIMEOUT_ENV}) and retries: try again, or use "
            "Postgres for many concurrent writers"
        )
    url = redact(engine.url.render_as_string(hide_password=False))
    return StoreError(f"database {url} refused the operation: {detail}{hint}")


def alembic_config(url: str | None = None) -> Config:
    """An Alembic Config pointing at db/migrations, built in code (no alembic.ini needed)."""
    from alembic.config import Config  # noqa: PLC0415 - Alembic only where migrations run

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        # ConfigParser treats % as interpolation; URL-encoded passwords contain it.
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def head_revision() -> str:
    """The newest migration revision this capplan ships, as Alembic reads the scripts."""
    from alembic.script import ScriptDirectory  # noqa: PLC0415

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise StoreError(f"no Alembic migrations found in {MIGRATIONS_DIR}")
    return head


def current_revision(url: str) -> str | None:
    """The revision the database is at, or None for an empty database."""
    engine = make_engine(url)
    try:
        # A read: on SQLite a deferred BEGIN, so it never queues behind a writer's lock (the
        # default BEGIN IMMEDIATE made every command's schema check wait on a long import).
        with engine.execution_options(**{BEGIN_OPTION: "DEFERRED"}).connect() as connection:
            if not inspect(connection).has_table("alembic_version"):
                return None
            rows = connection.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    except DBAPIError as exc:
        raise _store_error(engine, exc) from exc
    finally:
        engine.dispose()
    if len(rows) > 1:
        raise StoreError(f"database {redact(url)} is at several revisions at once: {rows}")
    return str(rows[0][0]) if rows else None


def upgrade(url: str, revision: str = "head", *, attempts: int = 3) -> str | None:
    """Alembic upgrade (default: head); reruns if another process made a table meanwhile."""
    for attempt in range(1, attempts + 1):
        try:
            _run_alembic(url, lambda config: _alembic_command().upgrade(config, revision))
            break
        except StoreError as exc:
            if "already exists" not in str(exc) or attempt == attempts:
                raise
    return current_revision(url)


def downgrade(url: str, revision: str) -> str | None:
    """Run Alembic `downgrade` to a revision ("base" removes every table); returns the revision."""
    _run_alembic(url, lambda config: _alembic_command().downgrade(config, revision))
    return current_revision(url)


def ensure_schema(url: str) -> None:
    """Upgrade to head unless already there; refuse a database newer than this capplan."""
    current = current_revision(url)
    if current == SCHEMA_HEAD:
        return
    if current is not None and not _known_revision(current):
        raise StoreError(
            f"database {redact(url)} is at revision {current!r}, which this capplan does not "
            "know: it was written by a newer capplan; upgrade capplan"
        )
    upgrade(url)


def _known_revision(revision: str) -> bool:
    from alembic.script import ScriptDirectory  # noqa: PLC0415
    from alembic.util import CommandError as AlembicError  # noqa: PLC0415

    try:
        return ScriptDirectory.from_config(alembic_config()).get_revision(revision) is not None
    except AlembicError:
        return False


def _alembic_command() -> Any:
    from alembic import command  # noqa: PLC0415

    return command


def _run_alembic(url: str, action: Callable[[Config], None]) -> None:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            config = alembic_config(url)
            # env.py runs on this connection, so the pragmas and BEGIN IMMEDIATE apply.
            config.attributes["connection"] = connection
            if connection.dialect.name == "postgresql":
                # Several processes opening one new database at once migrate it one at a time
                # (on SQLite, BEGIN IMMEDIATE does the same); the lock ends with the session.
                connection.exec_driver_sql(f"SELECT pg_advisory_lock({_MIGRATION_LOCK})")
                connection.commit()
            action(config)
    except DBAPIError as exc:
        raise _store_error(engine, exc) from exc
    finally:
        engine.dispose()
