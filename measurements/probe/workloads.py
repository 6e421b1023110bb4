"""What the probe's workload is and when it sends: token lengths and their distributions, the
request shape and prefix sharing (WorkloadConfig), open-loop arrival times, and the RunFile's
description of the workload."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from measurements.run_file import Workload

Distribution = Literal["fixed", "normal", "lognormal", "file"]
Arrival = Literal["poisson", "gamma", "constant"]


class WorkloadConfig(BaseModel):
    """Token lengths, their distributions, the request shape and the random seed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    isl: Annotated[int, Field(ge=1)] = Field(description="Input length in tokens (mean)")
    osl: Annotated[int, Field(ge=1)] = Field(description="Output length in tokens (max_tokens)")
    isl_distribution: Distribution = Field("fixed", description="How input lengths vary")
    osl_distribution: Distribution = Field("fixed", description="How output lengths vary")
    isl_stddev: Annotated[float, Field(ge=0)] = Field(0, description="Input length stddev, tokens")
    osl_stddev: Annotated[float, Field(ge=0)] = Field(0, description="Output length stddev")
    lengths_file: Path | None = Field(None, description="CSV of input_tokens,output_tokens rows")
    shape: Literal["independent", "agent-loop"] = Field(
        "independent", description="independent prompts, or agent sessions of growing turns"
    )
    agent_context_tokens: Annotated[int, Field(ge=1)] = Field(
        3000, description="Agent loop: the long context every session opens with, tokens"
    )
    agent_turn_tokens: Annotated[int, Field(ge=1)] = Field(
        200, description="Agent loop: tool output appended per turn, tokens"
    )
    agent_turns: Annotated[int, Field(ge=1)] = Field(5, description="Agent loop: turns/session")
    prefix_sharing: bool = Field(False, description="Every prompt opens with one shared prefix")
    shared_prefix_tokens: Annotated[int, Field(ge=0)] = Field(
        0, description="Length of the shared prefix, tokens (with prefix_sharing)"
    )
    seed: int = Field(0, description="Seed of the prompt text and length draws")

    @model_validator(mode="after")
    def _consistent(self) -> WorkloadConfig:
        uses_file = "file" in (self.isl_distribution, self.osl_distribution)
        if uses_file and self.lengths_file is None:
            raise ValueError("a 'file' length distribution needs lengths_file")
        if self.prefix_sharing and not 0 < self.shared_prefix_tokens < self.first_input_tokens:
            raise ValueError(
                f"shared_prefix_tokens must be between 1 and the input length - 1 "
                f"({self.first_input_tokens - 1}), got {self.shared_prefix_tokens}"
            )
        return self

    @property
    def first_input_tokens(self) -> int:
        """The input length of an independent prompt, or of an agent session's first turn."""
        return self.agent_context_tokens if self.shape == "agent-loop" else self.isl

    def turn_input_tokens(self, turn: int, osl: int) -> int:
        """Agent loop: turn k carries the context plus k x (previous answer + tool output)."""
        return self.agent_context_tokens + turn * (osl + self.agent_turn_tokens)


@dataclass(frozen=True, slots=True)
class ArrivalProcess:
    """Open-loop arrivals: gaps exponential (poisson), gamma with shape `burstiness` and mean
    1/rate (gamma: < 1 burstier, > 1 more regular), or exactly 1/rate (constant)."""

    rate: float
    arrival: Arrival = "poisson"
    burstiness: float = 1.0

    def times_s(
        self, rng: np.random.Generator, *, count: int | None = None, duration_s: float | None = None
    ) -> list[float]:
        """Send offsets from the level start, the first at 0: `count` of them, or every one
        before `duration_s`."""
        if count is not None:
            return [0.0, *(float(t) for t in np.cumsum(self._gaps(rng, count - 1)))]
        limit = duration_s or 0.0
        times, last = [0.0], 0.0
        while True:
            ends = last + np.cumsum(self._gaps(rng, 64))
            inside = ends[ends < limit]
            times += [float(t) for t in inside]
            if len(inside) < len(ends):
                return times
            last = float(ends[-1])

    def _gaps(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.arrival == "constant":
            return np.full(size, 1.0 / self.rate)
        if self.arrival == "gamma":
            scale = 1.0 / (self.rate * self.burstiness)
            return rng.gamma(shape=self.burstiness, scale=scale, size=size)
        return rng.exponential(1.0 / self.rate, size=size)


def run_workload(config: WorkloadConfig, *, ignore_eos: bool) -> Workload:
    """The RunFile's description of this workload (mean lengths, distributions, shape)."""
    isl = config.isl
    dataset = "random words"
    if config.shape == "agent-loop":
        mean_turn = (config.agent_turns - 1) / 2
        isl = round(
            config.agent_context_tokens + mean_turn * (config.osl + config.agent_turn_tokens)
        )
        dataset = (
            f"agent-loop(context={config.agent_context_tokens}, "
            f"turn={config.agent_turn_tokens}, turns={config.agent_turns})"
        )
    if config.prefix_sharing:
        dataset += f", shared prefix {config.shared_prefix_tokens} tokens"
    return Workload(
        isl=isl,
        osl=config.osl,
        isl_distribution=_describe(config.isl_distribution, config.isl_stddev, config),
        osl_distribution=_describe(config.osl_distribution, config.osl_stddev, config),
        dataset=dataset,
        ignore_eos=ignore_eos,
    )


def _describe(kind: Distribution, stddev: float, config: WorkloadConfig) -> str:
    if kind == "file":
        return f"file({config.lengths_file.name if config.lengths_file else ''})"
    return kind if kind == "fixed" else f"{kind}(stddev={stddev:g})"
