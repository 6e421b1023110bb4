"""The range of every number a command-line flag or a form field takes that is not a probe
setting (measurements.probe.defaults.PROBE_LIMITS): far beyond what a demanding user asks, so a
typo or an attack is refused at once, naming the flag, the value and its range, instead of
asking for 37 GiB. A form field that sets a scenario key takes the key's own bound
(`highest`), else one stated here."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from measurements.plausible import MAX_LOAD
from measurements.probe.defaults import PROBE_LIMITS

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True, slots=True)
class Bound:
    """A closed range of values, in the flag's own unit."""

    low: int | float
    high: int | float

    def holds(self, value: float) -> bool:
        """True when `value` is a finite number inside the range (integers compared exactly)."""
        finite = isinstance(value, int) or math.isfinite(value)
        return finite and self.low <= value <= self.high

    def text(self) -> str:
        """The range as a sentence ends: "between 0 and 100,000"."""
        return f"between {_number(self.low)} and {_number(self.high)}"


def _number(value: float) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.0f}" if value.is_integer() else f"{value:g}"


SAMPLES = Bound(0, 100_000)  # `plan` / `report --samples`: error samples per option
RUN_ID = Bound(1, 2**63 - 1)  # a stored id (`--run`, `--record`): what the store's keys hold
PAGE_RUNS = Bound(1, 100_000)  # `runs --limit`
SKIP_RUNS = Bound(0, 2**63 - 1)  # `runs --offset`
AUDIT_ROWS = Bound(1, 10_000)  # `audit --limit`: db.audit.MAX_AUDIT_ROWS
PORT = Bound(1, 65_535)  # `app --port`, `sim-server --port`
TIME_SCALE = Bound(0.001, 1_000)  # `sim-server --time-scale`: simulated s per real s
GPU_COUNT = Bound(1, PROBE_LIMITS.gpu_count)  # `import --gpu-count`, the Runs page
PARALLEL = Bound(1, PROBE_LIMITS.parallel)  # `import --tp / --pp`, the Runs page
CONCURRENCY = Bound(1, int(MAX_LOAD))  # `import --concurrency`, `predict --concurrency` (each)
REQUEST_RATE = Bound(0.001, MAX_LOAD)  # `import --request-rate`, requests/s
PREDICT_POINTS = 1_000  # concurrencies one `predict` answers
# The Plan page's fields for scenario keys that state no upper bound of their own.
SLA_MS = Bound(0, 3_600_000)  # a TTFT, TPOT or e2e target: an hour
STREAM_TOK_S = Bound(0, 100_000)  # a per-stream tok/s floor
GPUS_PER_NODE = Bound(1, 64)
SPARE_REPLICAS = Bound(0, 10_000)
UPDATES_PER_MONTH = Bound(0, 10_000)
STREAMS_PER_REPLICA = Bound(1, int(MAX_LOAD))


def highest(model: type[BaseModel], name: str) -> float:
    """The upper bound (le or lt) a pydantic model states for a field, e.g. a scenario key's,
    so the form field that sets it offers no more than the model accepts."""
    for rule in model.model_fields[name].metadata:
        for bound in ("le", "lt"):
            if hasattr(rule, bound):
                return float(getattr(rule, bound))
    raise KeyError(f"{model.__name__}.{name} states no upper bound")
