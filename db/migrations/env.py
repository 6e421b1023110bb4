"""Alembic environment: runs on the connection db.engine hands over, or on CAPPLAN_DB / -x db=URL.

Batch mode lets SQLite alter tables; foreign keys are off while migrating so a table rebuild
never cascades deletes, and checked afterwards.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, text

from db.engine import make_engine, resolve_db_url
from db.models import Base
from errors import StoreError

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    """-x db=URL, else sqlalchemy.url from the config, else $CAPPLAN_DB or the default."""
    from_x = context.get_x_argument(as_dictionary=True).get("db")
    return resolve_db_url(from_x or config.get_main_option("sqlalchemy.url"))


def _set_sqlite_foreign_keys(connection: Connection, on: bool) -> None:
    # PRAGMA foreign_keys is ignored inside a transaction, so it goes straight to the driver
    # connection, which runs in autocommit mode (db.engine sets isolation_level=None).
    if connection.dialect.name == "sqlite" and not connection.in_transaction():
        driver = connection.connection.driver_connection
        if driver is not None:
            driver.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")


def _check_foreign_keys(connection: Connection) -> None:
    if connection.dialect.name != "sqlite":
        return
    broken = connection.execute(text("PRAGMA foreign_key_check")).all()
    connection.rollback()
    if broken:
        raise StoreError(
            f"migration left {len(broken)} rows with broken foreign keys: {broken[:5]}"
        )


def _run_on(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
    )
    _set_sqlite_foreign_keys(connection, on=False)
    try:
        with context.begin_transaction():
            context.run_migrations()
        if connection.in_transaction():
            connection.commit()
        _check_foreign_keys(connection)
    finally:
        _set_sqlite_foreign_keys(connection, on=True)


def run_migrations_offline() -> None:
    """Emit the SQL to stdout instead of running it (`alembic upgrade head --sql`)."""
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        render_as_batch=True,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Run the migrations on a live database."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run_on(connection)
        return
    engine = make_engine(_url())
    try:
        with engine.connect() as own_connection:
            _run_on(own_connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
