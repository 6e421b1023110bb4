"""What an engine said about its own KV cache at start-up (vLLM's "GPU KV cache size" and
"Maximum concurrency" lines, TensorRT-LLM's "max tokens in paged KV cache"): the cache as the
engine really allocated it, which beats any estimate from memory sizes (planner.physics.memory).
"""

from __future__ import annotations

from dataclasses import dataclass

from measurements.run_file import Startup


@dataclass(frozen=True, slots=True)
class EngineKvReport:
    """The engine's own KV-cache figures; None where its log did not say."""

    kv_cache_tokens: int | None  # tokens the whole cache holds (one replica)
    max_concurrency: float | None = None  # vLLM: requests of `at_tokens` tokens that fit
    max_concurrency_at_tokens: int | None = None  # vLLM: the tokens per request it assumed

    @property
    def tokens(self) -> float | None:
        """Tokens the cache holds: as stated, else max concurrency x tokens per request."""
        if self.kv_cache_tokens is not None and self.kv_cache_tokens > 0:
            return float(self.kv_cache_tokens)
        if self.max_concurrency and self.max_concurrency_at_tokens:
            return self.max_concurrency * self.max_concurrency_at_tokens
        return None

    def text(self) -> str:
        """The report in words, e.g. 'the engine reported 1,234,567 KV-cache tokens'."""
        tokens = self.tokens
        said = f"the engine reported {tokens:,.0f} KV-cache tokens" if tokens else "no KV figure"
        if self.max_concurrency and self.max_concurrency_at_tokens:
            said += (
                f" (maximum concurrency {self.max_concurrency:g}x at "
                f"{self.max_concurrency_at_tokens:,} tokens per request)"
            )
        return said


def engine_kv_report(startup: Startup) -> EngineKvReport | None:
    """The KV-cache report in a run's start-up facts; None when they hold none."""
    report = EngineKvReport(
        startup.kv_cache_tokens,
        None if startup.max_concurrency is None else float(startup.max_concurrency),
        startup.max_concurrency_at_tokens,
    )
    return report if report.tokens is not None else None
