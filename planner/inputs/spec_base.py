"""The base of every scenario section (with measurements.numbers' Number and Count, which refuse
a YAML boolean where a number belongs), and the error a scenario's first problem becomes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from errors import ScenarioError


class Spec(BaseModel):
    """A scenario section: unknown keys are refused; NaN and infinities are bad input (an
    infinite demand is not a plan)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def spec_error(exc: ValidationError, root: type[BaseModel], name: str) -> ScenarioError:
    """The first problem pydantic found in a scenario, as a ScenarioError naming file and field."""
    # Of a union's branches (tagged in the path: "function-before[...]", "GpuPricingSpec"), the
    # one that got furthest into the value says what is wrong with it.
    errors = exc.errors()
    first = max((e for e in errors if e["loc"][:1] == errors[0]["loc"][:1]), key=_depth)
    tags = {model.__name__ for model in Spec.__subclasses__()}
    parts = [str(part) for part in first["loc"] if "[" not in str(part) and part not in tags]
    field = ".".join(parts) or None
    value = first.get("input")
    if first["type"] == "extra_forbidden":
        parent = _model_at(root, first["loc"][:-1])
        allowed = ", ".join(parent.model_fields) if parent else "see the scenario documentation"
        message = f"unknown key {first['loc'][-1]!r}; expected one of: {allowed}"
        return ScenarioError(message, file=name, field=field, value=value)
    message = first["msg"].removeprefix("Value error, ")  # pydantic's wrapper of our ValueError
    return ScenarioError(message, file=name, field=field, value=value)


def _depth(error: ErrorDetails) -> int:
    return len(error["loc"])


def _model_at(root: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The pydantic model that sits at a key path inside `root` (for the allowed-keys hint)."""
    model = root
    for part in loc:
        field = model.model_fields.get(str(part))
        annotation = field.annotation if field else None
        candidates = [
            arg for arg in getattr(annotation, "__args__", (annotation,)) if isinstance(arg, type)
        ]
        nested = next((arg for arg in candidates if issubclass(arg, BaseModel)), None)
        if nested is None:
            return None
        model = nested
    return model
