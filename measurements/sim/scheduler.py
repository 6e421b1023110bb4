"""The simulated engine's continuous-batching scheduler: one asyncio task steps the whole batch
and hands each sequence its new token count through the sequence's own asyncio queue."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass

from measurements.sim.profiles import SimProfile

# When the event loop falls behind (a busy box), steps run back to back to catch up, but never
# more than this much real time: beyond it the simulated engine simply runs slower.
MAX_CATCH_UP_S = 0.02


class SimSequence:
    """One request in the engine: its sizes, progress and the queue its HTTP stream reads."""

    __slots__ = ("cancelled", "generated", "output_tokens", "prompt_tokens", "queue")

    def __init__(self, prompt_tokens: int, output_tokens: int) -> None:
        self.prompt_tokens = prompt_tokens
        self.output_tokens = output_tokens
        self.generated = 0
        self.cancelled = False
        self.queue: asyncio.Queue[int] = asyncio.Queue()

    async def next_count(self) -> int:
        """Wait for new tokens; return the total generated so far (several when behind)."""
        count = await self.queue.get()
        while not self.queue.empty():
            count = self.queue.get_nowait()
        return count


@dataclass(slots=True)
class SchedulerStats:
    """Counters a benchmark or test reads to see what the engine did."""

    steps: int = 0
    tokens_emitted: int = 0
    requests_admitted: int = 0
    max_running: int = 0
    busy_s: float = 0.0  # simulated seconds spent stepping (sum of step durations, unscaled)


class BatchScheduler:
    """Continuous batching: every step admits waiting requests up to max_batch (their prefill
    lengthens that step), sleeps step_time(batch) * time_scale, then emits one token to each."""

    def __init__(self, profile: SimProfile, *, time_scale: float = 1.0) -> None:
        self.profile = profile
        self.time_scale = time_scale
        self.waiting: deque[SimSequence] = deque()
        self.running: list[SimSequence] = []
        self.stats = SchedulerStats()
        # Created on first submit, inside the serving loop (an Event binds to its first loop).
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    def submit(self, seq: SimSequence) -> None:
        """Queue a sequence (FIFO) and make sure the stepping task runs."""
        self.waiting.append(seq)
        if self._wake is None or self._task is None:
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(self._wake))
        self._wake.set()

    def admit(self) -> int:
        """Move waiting sequences into the batch up to max_batch; return their prompt tokens."""
        joining_tokens = 0
        while self.waiting and len(self.running) < self.profile.max_batch:
            seq = self.waiting.popleft()
            if seq.cancelled:
                continue
            self.running.append(seq)
            joining_tokens += seq.prompt_tokens
            self.stats.requests_admitted += 1
        self.stats.max_running = max(self.stats.max_running, len(self.running))
        return joining_tokens

    def emit(self) -> None:
        """Give one token to every running sequence; finished or cancelled ones leave the batch."""
        still_running: list[SimSequence] = []
        emitted = 0
        for seq in self.running:
            if seq.cancelled:
                continue
            seq.generated += 1
            emitted += 1
            seq.queue.put_nowait(seq.generated)
            if seq.generated < seq.output_tokens:
                still_running.append(seq)
        self.running = still_running
        self.stats.steps += 1
        self.stats.tokens_emitted += emitted

    async def close(self) -> None:
        """Stop the stepping task (server shutdown)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            self._wake = None

    async def _run(self, wake: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time()
        while True:
            if not self.running and not self.waiting:
                wake.clear()
                await wake.wait()
                deadline = loop.time()
            step_s = self.profile.step_time_s(0, self.admit())
            if not self.running:
                continue
            step_s += self.profile.step_per_seq_s * len(self.running)
            self.stats.busy_s += step_s
            now = loop.time()
            # Deadlines, not sleeps, set the pace: the loop's own overhead and the ~1 ms timer
            # granularity are paid back by the next steps instead of slowing the engine down.
            deadline = max(deadline, now - MAX_CATCH_UP_S) + step_s * self.time_scale
            await asyncio.sleep(max(0.0, deadline - now))
            self.emit()
