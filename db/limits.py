"""What every backend's columns can hold, checked before writing.

SQLite keeps text longer than a VARCHAR(n) and NUL characters; Postgres refuses both. Checking
here gives the same answer on both backends (an InputError naming the field) and keeps a SQLite
store movable to Postgres (capplan db backup / restore).
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import FromClause, String

from errors import InputError


def check_fits(
    table: FromClause, row: Mapping[str, object], *, field_prefix: str = "", file: str | None = None
) -> None:
    """Refuse a text value the table's column cannot hold on every backend."""
    for name, value in row.items():
        if not isinstance(value, str) or name not in table.c:
            continue
        field = f"{field_prefix}{name}"
        if "\x00" in value:
            raise InputError(
                "contains a NUL character, which the store cannot keep",
                file=file,
                field=field,
                value=value,
            )
        column_type = table.c[name].type
        length = column_type.length if isinstance(column_type, String) else None
        if length is not None and len(value) > length:
            raise InputError(
                f"is {len(value)} characters long; the store keeps at most {length}",
                file=file,
                field=field,
                value=value,
            )
