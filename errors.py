"""capplan's one exception hierarchy; the CLI maps InputError to exit code 2, the UI to st.error.

CapplanError                   anything capplan raises on purpose
 +-- InputError                bad user input: names the file, the field and the value
 |    +-- UnknownFormatError   a file no importer recognises (lists what was looked for)
 |    +-- SchemaVersionError   a RunFile written by a newer capplan
 |    +-- FileTooLargeError    a file over the size limit
 |    +-- ScenarioError        a scenario YAML/dict that does not validate
 +-- StoreError                the database refused or is not at the expected revision
 +-- PermissionDeniedError          this person's role may not do this (team.roles)
 +-- PlanningError             the planner cannot answer (no curve, no fit, nothing meets the SLA)
      +-- NoDataError          no curve can back any candidate; carries what to measure
"""

from __future__ import annotations

from collections.abc import Iterator


class CapplanError(Exception):
    """Base of every error capplan raises on purpose."""


class InputError(CapplanError):
    """Bad input, with the file, field and value that were wrong and what was expected."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        value: object = None,
    ) -> None:
        self.message = message
        self.file = file
        self.field = field
        self.value = value
        super().__init__(self.__str__())

    def __str__(self) -> str:
        parts: list[str] = []
        if self.file:
            parts.append(str(self.file))
        if self.field:
            parts.append(f"field {self.field!r}")
        where = ": ".join(parts)
        got = "" if self.value is None else f" (got {preview(self.value)})"
        return f"{where}: {self.message}{got}" if where else f"{self.message}{got}"


class UnknownFormatError(InputError):
    """No importer recognised the file."""


class SchemaVersionError(InputError):
    """A RunFile whose schema_version this capplan cannot read."""


class FileTooLargeError(InputError):
    """A file over the configured size limit."""


class ScenarioError(InputError):
    """A scenario that does not validate (unknown keys, bad values)."""


class StoreError(CapplanError):
    """The database could not be used (wrong revision, locked too long, refused a write)."""


class PermissionDeniedError(CapplanError):
    """A person's role does not allow the change they asked for (team.roles.Actor.require):
    says who, their role, what was refused and which role may."""


class PlanningError(CapplanError):
    """The planner cannot answer the question it was asked."""


class NoDataError(PlanningError):
    """No stored curve can back any candidate; `measurement_plan` says what to measure (a
    planner.analysis.measurement_plan.MeasurementPlan, typed loosely: errors imports nothing)."""

    def __init__(self, message: str, measurement_plan: object) -> None:
        self.measurement_plan = measurement_plan
        super().__init__(message)


def preview(value: object, limit: int = 80) -> str:
    """repr(value) cut to `limit` characters, built from bounded pieces: never the repr of a
    whole large or deeply nested value (a 3 GB alias expansion, a 10^6-digit integer)."""
    text = _bounded_repr(value, limit + 1)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bounded_repr(value: object, budget: int) -> str:
    if isinstance(value, str | bytes):
        return repr(value[:budget])
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"<an integer of about {int(value.bit_length() * 0.30103):,} digits>"
    if isinstance(value, dict):
        pieces = (
            f"{_bounded_repr(k, budget)}: {_bounded_repr(v, budget)}" for k, v in value.items()
        )
        return _joined("{", pieces, "}", budget)
    if isinstance(value, list | tuple | set | frozenset):
        opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
        return _joined(opening, (_bounded_repr(v, budget) for v in value), closing, budget)
    return repr(value)[:budget]


def _joined(opening: str, pieces: Iterator[str], closing: str, budget: int) -> str:
    text = opening
    for index, piece in enumerate(pieces):
        text += (", " if index else "") + piece
        if len(text) > budget:
            return text[:budget] + "..."
    return text + closing
