"""The planning scenario (YAML): model, workload, demand, SLA, budget, candidates, prices, options.

The CLI and the app read and write the same file; unknown keys are refused, never ignored.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from errors import InputError, ScenarioError
from hardware.gpus import gpu_catalog
from hardware.prices import MAX_USD_PER_GPU_HOUR
from measurements.bounded import Limits, load_yaml
from measurements.entry_names import clean_name, engine_name, gpu_name
from measurements.numbers import Count, Number
from measurements.plausible import MAX_TOKENS_PER_REQUEST
from measurements.safe_text import first_control
from planner.curves.names import canonical_engine, canonical_gpu, canonical_model
from planner.inputs.horizon_spec import HorizonSpec
from planner.inputs.hourly import profile_peak_to_average, same_ratio
from planner.inputs.pricing_spec import GpuPricingSpec, GpuQuotesSpec, PriceQuoteSpec
from planner.inputs.sla_spec import SlaSpec
from planner.inputs.spec_base import Spec, spec_error
from planner.inputs.what_if_spec import WhatIfSpec

# A scenario is a page of settings: anything deeper, longer or larger is a mistake or an attack.
SCENARIO_LIMITS = Limits(
    max_bytes=256 * 1024, max_depth=16, max_alias_nodes=10_000, max_list=1_000, max_abs_number=1e15
)

DemandKind = Literal["peak_requests_per_s", "peak_concurrent_streams", "monthly_output_tokens"]
DEMAND_KINDS: tuple[DemandKind, ...] = (
    "peak_requests_per_s",
    "peak_concurrent_streams",
    "monthly_output_tokens",
)
DEMAND_UNITS: dict[DemandKind, str] = {
    "peak_requests_per_s": "requests/s at peak",
    "peak_concurrent_streams": "concurrent streams at peak",
    "monthly_output_tokens": "output tokens per month",
}


class Scaling(StrEnum):
    """How the fleet follows demand over the day (the values are the scenario's words)."""

    STATIC = "static"  # the peak fleet all month
    AUTOSCALE = "autoscale"  # replicas follow the hourly demand


class PricingMode(StrEnum):
    """How rented GPUs are bought (planner.sizing.costs has one cost model per mode)."""

    ON_DEMAND = "on_demand"
    RESERVED = "reserved"
    MIX = "mix"  # reserved for the always-on baseline, on-demand for the rest


class WorkloadSpec(Spec):
    """Mean prompt and output lengths of the requests to serve."""

    isl: Count = Field(ge=1, le=MAX_TOKENS_PER_REQUEST, description="Input (prompt) length, tokens")
    osl: Count = Field(ge=1, le=MAX_TOKENS_PER_REQUEST, description="Output length, tokens")


class DemandSpec(Spec):
    """Expected demand: exactly one of the three measures, plus the peak-to-average ratio."""

    # Upper bounds far above any real fleet, so a typo cannot ask for 10^300 replicas.
    peak_requests_per_s: Number | None = Field(
        None, gt=0, le=1e7, description="Peak request rate, 1/s"
    )
    peak_concurrent_streams: Number | None = Field(
        None, gt=0, le=1e9, description="Peak open streams"
    )
    monthly_output_tokens: Number | None = Field(
        None, gt=0, le=1e18, description="Output tokens per month"
    )
    peak_to_average: Number = Field(1.0, ge=1.0, le=1000, description="Peak load / average load")
    hourly_profile: tuple[Number, ...] | None = Field(
        None,
        min_length=24,
        max_length=24,
        description="24 relative weights, hour 0-23; the largest hour carries the stated peak "
        "and peak_to_average follows from the profile",
    )

    @model_validator(mode="before")
    @classmethod
    def _ratio_from_profile(cls, raw: object) -> object:
        """With a profile, peak_to_average is max/mean of it; a different one given is an error."""
        if not isinstance(raw, dict) or raw.get("hourly_profile") is None:
            return raw
        ratio = profile_peak_to_average(raw["hourly_profile"])
        given = raw.get("peak_to_average")
        if given is not None and not same_ratio(given, ratio):
            raise ValueError(
                "give demand.hourly_profile or demand.peak_to_average, not both: the profile "
                f"implies peak_to_average {ratio:.4g}, the scenario says {given!r}"
            )
        return {**raw, "peak_to_average": ratio}

    @model_validator(mode="after")
    def _exactly_one(self) -> DemandSpec:
        given = [kind for kind in DEMAND_KINDS if getattr(self, kind) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of {', '.join(DEMAND_KINDS)}; got {len(given)}: {given}"
            )
        return self

    def hourly_weights(self) -> tuple[float, ...] | None:
        """The profile scaled so its peak hour is 1.0 (None without a profile)."""
        if self.hourly_profile is None:
            return None
        peak = max(self.hourly_profile)
        return tuple(weight / peak for weight in self.hourly_profile)

    @property
    def kind(self) -> DemandKind:
        """Which of the three demand measures the scenario uses."""
        return next(kind for kind in DEMAND_KINDS if getattr(self, kind) is not None)

    @property
    def amount(self) -> float:
        """The demand figure in its own unit (see `unit`)."""
        value = getattr(self, self.kind)
        return float(value)

    @property
    def unit(self) -> str:
        """Human unit of `amount`."""
        return DEMAND_UNITS[self.kind]


class BudgetSpec(Spec):
    """Monthly spend limit."""

    monthly_usd: Number = Field(gt=0, le=1e12, description="Monthly budget, USD")


class CandidatesSpec(Spec):
    """Which engines, GPUs and tensor-parallel sizes to consider (None = every TP measured)."""

    engines: tuple[str, ...] = Field(("vllm", "tensorrt-llm"), min_length=1)
    # Default: the GPU catalog's planned_by_default GPUs, read when a scenario is made.
    gpus: tuple[str, ...] = Field(
        default_factory=lambda: gpu_catalog().default_names(), min_length=1
    )
    tp: tuple[Count, ...] | None = Field(None, min_length=1)

    @field_validator("engines")
    @classmethod
    def _engines(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(canonical_engine(engine_name(engine)) for engine in value)

    @field_validator("gpus")
    @classmethod
    def _gpus(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(canonical_gpu(gpu_name(gpu)) for gpu in value)

    @field_validator("tp")
    @classmethod
    def _tp(cls, value: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if value is not None and any(tp < 1 for tp in value):
            raise ValueError(f"tensor-parallel sizes must be >= 1, got {list(value)}")
        return value


class OptionsSpec(Spec):
    """Planning knobs: node size, utilisation headroom, redundancy, model churn, hours."""

    gpus_per_node: Count | None = Field(
        None,
        ge=1,
        description="GPUs per node for every GPU; unset: each GPU's node shape from the GPU "
        "catalog (8 per HGX node, 4 per NVL72 tray in a 72-GPU NVLink rack)",
    )
    target_utilization: Number = Field(0.8, gt=0, le=1, description="Planned load / capacity")
    redundancy_replicas: Count = Field(1, ge=0, description="Spare replicas on top of demand")
    model_updates_per_month: Number = Field(0, ge=0, description="Model rollouts per month")
    hours_per_month: Number = Field(730, gt=0, le=744, description="Billed hours per month")
    max_streams_per_replica: Count | None = Field(
        None,
        ge=1,
        description="Cap on concurrent streams per replica (vLLM --max-num-seqs, "
        "TensorRT-LLM --max_batch_size); None = as many as the SLA allows",
    )
    scaling: Scaling = Field(
        Scaling.STATIC,
        description="static: the peak fleet all month; autoscale: replicas follow hourly demand",
    )
    min_replicas: Count | None = Field(
        None, ge=1, description="Autoscaling floor; None = 1 + redundancy_replicas"
    )
    prebuilt_engines: bool = Field(
        False, description="TensorRT-LLM engines are built ahead, so scale-up skips the build"
    )
    startup_s_if_unknown: Number = Field(
        300,
        gt=0,
        le=86_400,
        description="Assumed replica start-up time, s, when the curve has no measured one",
    )
    pricing_mode: PricingMode = Field(
        PricingMode.ON_DEMAND,
        description="mix: reserved GPUs for the always-on baseline, on-demand for the rest",
    )
    sizing_confidence: Number = Field(
        0.9,
        ge=0.5,
        le=0.99,
        description="Probability the planned fleet meets the SLA at the planned demand, given "
        "the fits' held-out error (0.5: the expected fleet)",
    )

    def floor_replicas(self) -> int:
        """The fewest replicas an autoscaled fleet keeps running."""
        return self.min_replicas or 1 + self.redundancy_replicas


class FactorsSpec(Spec):
    """Qualitative needs (the seed article's) that annotate or change the choice, never silently."""

    multi_lora: bool = Field(False, description="Serve many LoRA adapters on one base model")
    structured_output: bool = Field(
        False, description="Requests need JSON-schema / grammar constrained output"
    )
    weekly_model_changes: bool = Field(
        False, description="The served model or its code changes about weekly"
    )
    consumer_gpus: bool = Field(
        False, description="Some replicas must also run on consumer GPUs (RTX 4090/5090)"
    )
    preference_tolerance_pct: Number = Field(
        15.0,
        ge=0,
        le=100,
        description="Extra monthly cost (%) an engine preferred by a factor may have and still "
        "be recommended over the cheapest",
    )


class Scenario(Spec):
    """One planning question."""

    name: str = Field(min_length=1, max_length=200)
    model: str = Field(
        min_length=1, max_length=300, description="Model name as served or on Hugging Face"
    )
    precision: str | None = Field(None, description="fp8, bf16, ...; None = any")
    workload: WorkloadSpec
    demand: DemandSpec
    sla: SlaSpec = SlaSpec()
    budget: BudgetSpec | None = None
    candidates: CandidatesSpec = Field(default_factory=CandidatesSpec)
    pricing: dict[str, Number | GpuPricingSpec] = Field(
        default_factory=dict,
        description="By GPU: on-demand USD per GPU-hour, or {on_demand, reserved}; "
        "else the catalog default",
    )
    price_quotes: dict[str, GpuQuotesSpec] = Field(
        default_factory=dict, description="By GPU: the catalog rows its prices were picked from"
    )
    options: OptionsSpec = OptionsSpec()
    factors: FactorsSpec = FactorsSpec()
    what_if: WhatIfSpec = WhatIfSpec()
    horizon: HorizonSpec | None = (
        None  # months ahead and the ways to pay (planner.analysis.horizon)
    )

    @field_validator("name", "model")
    @classmethod
    def _printable(cls, value: str) -> str:
        """A name is shown in the app, the terminal and reports: no NUL, ESC or bidi control."""
        found = first_control(value)
        if found is not None:
            raise ValueError(f"must not contain control characters; found {found}")
        return clean_name(value)  # NFKC, no zero-width characters: prints as it is stored

    @field_validator("precision")
    @classmethod
    def _precision(cls, value: str | None) -> str | None:
        return value.strip().lower() if value is not None and value.strip() else None

    @field_validator("pricing")
    @classmethod
    def _pricing(
        cls, value: dict[str, float | GpuPricingSpec]
    ) -> dict[str, float | GpuPricingSpec]:
        for gpu, price in value.items():
            if isinstance(price, float) and not 0 < price <= MAX_USD_PER_GPU_HOUR:
                raise ValueError(
                    f"price for {gpu!r} must be > 0 and at most {MAX_USD_PER_GPU_HOUR:g} USD per "
                    f"GPU-hour, got {price!r}"
                )
        return {canonical_gpu(gpu_name(gpu)): price for gpu, price in value.items()}

    @property
    def model_id(self) -> str:
        """The model's identity for matching curves (CurveKey.model_id's canonical form)."""
        return canonical_model(self.model)

    def on_demand_price(self, gpu: str) -> float | None:
        """The scenario's on-demand USD per GPU-hour for a GPU (None: use the catalog)."""
        price = self.pricing.get(gpu)
        return price.on_demand if isinstance(price, GpuPricingSpec) else price

    def reserved_price(self, gpu: str) -> float | None:
        """The scenario's reserved USD per GPU-hour for a GPU (None: use the catalog)."""
        price = self.pricing.get(gpu)
        return price.reserved if isinstance(price, GpuPricingSpec) else None

    def price_quote(self, gpu: str, *, reserved: bool = False) -> PriceQuoteSpec | None:
        """The catalog row the scenario's (on-demand or reserved) price was picked from."""
        quotes = self.price_quotes.get(gpu)
        return None if quotes is None else (quotes.reserved if reserved else quotes.on_demand)


def load_scenario(path: Path) -> Scenario:
    """Read and validate a scenario YAML file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"cannot read scenario file: {exc}", file=str(path)) from exc
    return scenario_from_yaml(text, str(path))


def scenario_from_yaml(text: str, name: str) -> Scenario:
    """Parse scenario YAML text; `name` (usually the file path) appears in error messages."""
    try:
        raw = load_yaml(text, name, SCENARIO_LIMITS)
    except InputError as exc:
        raise ScenarioError(exc.message, file=name, field=exc.field, value=exc.value) from None
    return scenario_from_dict(raw, name)


def scenario_from_dict(raw: object, name: str = "<scenario>") -> Scenario:
    """Validate a decoded scenario mapping."""
    if not isinstance(raw, dict):
        raise ScenarioError("expected a mapping of scenario keys", file=name, value=raw)
    try:
        return Scenario.model_validate(raw)
    except ValidationError as exc:
        raise spec_error(exc, Scenario, name) from exc


def scenario_to_yaml(scenario: Scenario) -> str:
    """Write a scenario as YAML that `scenario_from_yaml` reads back to an equal Scenario."""
    data = scenario.model_dump(mode="json", exclude_none=True)
    if scenario.demand.hourly_profile is not None:
        del data["demand"]["peak_to_average"]  # implied by the profile
    if not data["price_quotes"]:
        del data["price_quotes"]
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
