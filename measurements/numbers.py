"""Number types that refuse a boolean.

pydantic's lax mode turns `true` into 1 and `false` into 0 where a number is expected: a run file
whose metric is `true` would store 1 tok/s, and YAML 1.1 reads `yes`, `no`, `on` and `off` as
booleans, so a scenario's `peak_requests_per_s: yes` would be planned as 1 req/s. `Number` and
`Count` refuse a boolean where a number belongs; every other input keeps pydantic's own checks.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator


def refuse_bool(value: object) -> object:
    """A boolean where a number belongs is a mistake, never 1 or 0."""
    if isinstance(value, bool):
        raise ValueError(
            f"expected a number, got the boolean {value!r} (YAML reads yes/no/on/off/true/false "
            "as booleans; write the number)"
        )
    return value


Number = Annotated[float, BeforeValidator(refuse_bool)]
Count = Annotated[int, BeforeValidator(refuse_bool)]
