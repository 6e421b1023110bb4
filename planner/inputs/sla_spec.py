"""The scenario's `sla:` section: one optional field per SLA target (planner.inputs.sla_targets),
and bare targets (`tpot_ms: 50`, no statistic) read as their p99."""

from __future__ import annotations

from pydantic import Field, ModelWrapValidatorHandler, PrivateAttr, model_validator

from measurements.numbers import Number
from planner.inputs.sla_targets import BARE_FIELDS, SLA_TARGETS
from planner.inputs.sla_targets import SLA_TARGET_BY_FIELD as _SLA
from planner.inputs.spec_base import Spec


class SlaSpec(Spec):
    """Service-level targets; every target given must hold, absent ones are not checked.

    One field per row of planner.inputs.sla_targets.SLA_TARGETS, in its order (a test holds them
    equal). A target given without its statistic (`tpot_ms: 50`) is read as its p99 field, and
    `read_as` remembers it so every answer can say so.
    """

    ttft_p50_ms: Number | None = Field(None, gt=0, description=_SLA["ttft_p50_ms"].description)
    ttft_p90_ms: Number | None = Field(None, gt=0, description=_SLA["ttft_p90_ms"].description)
    ttft_p99_ms: Number | None = Field(None, gt=0, description=_SLA["ttft_p99_ms"].description)
    ttft_mean_ms: Number | None = Field(None, gt=0, description=_SLA["ttft_mean_ms"].description)
    tpot_p50_ms: Number | None = Field(None, gt=0, description=_SLA["tpot_p50_ms"].description)
    tpot_p90_ms: Number | None = Field(None, gt=0, description=_SLA["tpot_p90_ms"].description)
    tpot_p99_ms: Number | None = Field(None, gt=0, description=_SLA["tpot_p99_ms"].description)
    tpot_mean_ms: Number | None = Field(None, gt=0, description=_SLA["tpot_mean_ms"].description)
    min_stream_tok_s: Number | None = Field(
        None, gt=0, description=_SLA["min_stream_tok_s"].description
    )
    e2e_p50_ms: Number | None = Field(None, gt=0, description=_SLA["e2e_p50_ms"].description)
    e2e_p90_ms: Number | None = Field(None, gt=0, description=_SLA["e2e_p90_ms"].description)
    e2e_p99_ms: Number | None = Field(None, gt=0, description=_SLA["e2e_p99_ms"].description)
    e2e_mean_ms: Number | None = Field(None, gt=0, description=_SLA["e2e_mean_ms"].description)
    _given_bare: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _bare_numbers(cls, data: object, handler: ModelWrapValidatorHandler[SlaSpec]) -> SlaSpec:
        """`ttft_ms`, `tpot_ms`, `e2e_ms` (no statistic) become their p99 targets."""
        if not isinstance(data, dict) or not any(key in data for key in BARE_FIELDS):
            return handler(data)  # an SlaSpec already made keeps what it remembers
        bare: list[str] = []
        data = dict(data)
        for key, field in BARE_FIELDS.items():
            if key not in data:
                continue
            value = data.pop(key)
            if value is None:
                continue
            if data.get(field) is not None:
                raise ValueError(
                    f"{key} and {field} are both given: a target without its statistic "
                    f"({key}) is read as {field}; give one of them"
                )
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"{key} must be a number of milliseconds above 0, got {value!r}")
            data[field] = value
            bare.append(field)
        spec = handler(data)
        spec._given_bare = tuple(bare)
        return spec

    @property
    def read_as(self) -> tuple[str, ...]:
        """The target fields that were given as bare numbers (read as p99)."""
        return self._given_bare

    def targets(self) -> dict[str, float]:
        """The targets that are set, by field name (registry order)."""
        values = ((t.field, getattr(self, t.field)) for t in SLA_TARGETS)
        return {name: value for name, value in values if value is not None}
