"""What-if demand: the multiples of the scenario's demand planned side by side with it (1x is
the plan itself; 1.5x and 2x answer "what if traffic grows by half, or doubles")."""

from __future__ import annotations

from pydantic import Field, ValidationError, field_validator

from measurements.numbers import Number
from planner.inputs.spec_base import Spec

DEFAULT_DEMAND_MULTIPLIERS = (1.0, 1.5, 2.0)
MAX_DEMAND_MULTIPLIERS = 8
MAX_DEMAND_MULTIPLIER = 100.0


class WhatIfSpec(Spec):
    """Demand multipliers to plan beside the scenario's own demand."""

    demand_multipliers: tuple[Number, ...] = Field(
        DEFAULT_DEMAND_MULTIPLIERS,
        min_length=1,
        max_length=MAX_DEMAND_MULTIPLIERS,
        description="Multiples of the demand to plan side by side (1 = the plan itself), e.g. "
        "1, 1.5, 2",
    )

    @field_validator("demand_multipliers")
    @classmethod
    def _sorted_positive(cls, values: tuple[float, ...]) -> tuple[float, ...]:
        """Each multiple above 0 and at most MAX_DEMAND_MULTIPLIER; 1x always included; sorted,
        each once."""
        for value in values:
            if not 0 < value <= MAX_DEMAND_MULTIPLIER:
                raise ValueError(
                    f"each multiplier must be above 0 and at most {MAX_DEMAND_MULTIPLIER:g} "
                    f"(1 = the scenario's demand); got {value:g}"
                )
        found = tuple(sorted({1.0, *(float(v) for v in values)}))
        if len(found) > MAX_DEMAND_MULTIPLIERS:
            raise ValueError(
                f"at most {MAX_DEMAND_MULTIPLIERS} multipliers, 1x included; got {len(found)}"
            )
        return found


def parse_multipliers(text: str) -> tuple[float, ...]:
    """'1, 1.5x, 2' (the CLI's and the app's spelling) -> (1.0, 1.5, 2.0), validated; a bad
    entry raises ValueError naming it."""
    values: list[float] = []
    for part in text.replace(";", ",").split(","):
        word = part.strip().lower()
        if not word:
            continue
        if word.endswith("x") and len(word) > 1:  # '1.5x' as people write it
            word = word[:-1].strip()
        try:
            values.append(float(word))
        except ValueError:
            raise ValueError(
                f"not a demand multiplier: {part.strip()!r} (expected numbers such as 1, 1.5, 2)"
            ) from None
    if not values:
        raise ValueError("no demand multiplier given (expected numbers such as 1, 1.5, 2)")
    try:
        return WhatIfSpec(demand_multipliers=tuple(values)).demand_multipliers
    except ValidationError as exc:
        message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise ValueError(message) from None
