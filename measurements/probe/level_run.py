"""One level of a sweep in flight: closed-loop workers or an open-loop schedule send its
requests, it keeps every record, notices a dead server, reports progress and windows the result
into a Level."""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import httpx
import numpy as np

from measurements import aggregate
from measurements.aggregate import WindowRule
from measurements.probe.config import ProbeConfig
from measurements.probe.prompts import PromptFactory, PromptSpec
from measurements.probe.records import level_from_records
from measurements.probe.send import Attempt, Clock, RequestRecord, send_into
from measurements.probe.workloads import ArrivalProcess
from measurements.run_file import Level, LoadKind

PROGRESS_EVERY_S = 0.1


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """Where the sweep is, for a progress bar."""

    level_index: int
    levels_total: int
    load_kind: LoadKind
    load_value: float
    requests_done: int
    requests_total: int | None  # None when the level runs for a duration
    failures: int
    output_tok_s_so_far: float | None


class SweepState(Protocol):
    """What a level reads from its sweep: the config, clock, prompts and random generators."""

    config: ProbeConfig
    clock: Clock
    factory: PromptFactory
    prompt_rng: np.random.Generator
    arrival_rng: np.random.Generator
    on_progress: Callable[[ProgressEvent], None] | None

    def observe(self, prompt: PromptSpec, record: RequestRecord) -> None:
        """Let a finished request calibrate prompt lengths."""
        ...


class LevelRun:
    """One level in flight: sends, keeps every record, and notices a dead server."""

    def __init__(self, sweep: SweepState, index: int, value: float) -> None:
        self.sweep, self.index, self.value = sweep, index, value
        self.total = sweep.config.requests_for(value)
        self.records: list[RequestRecord] = []
        self.failures_in_row, self.dead_after = 0, max(3, math.ceil(value))
        self.dead: str | None = None
        self.t0 = 0.0
        self.deadline_s: float | None = None
        self.tokens_done, self.last_progress = 0, -math.inf

    def start(self) -> None:
        """Start the level's clock (after the prompts were made)."""
        self.t0 = self.sweep.clock()
        duration = self.sweep.config.duration_per_level_s
        self.deadline_s = None if duration is None else self.t0 + duration
        self._emit(self.t0)

    def sending(self) -> bool:
        """True while new requests may go out."""
        return self.dead is None and (
            self.deadline_s is None or self.sweep.clock() < self.deadline_s
        )

    async def closed(self, client: httpx.AsyncClient) -> None:
        """Closed loop: `value` workers, each sending its next request when the last ends."""
        plan = self._planned_sessions()
        self.start()

        async def worker() -> None:
            free_s = self.t0
            while self.sending() and (turns := self._next_session(plan)):
                for prompt in turns:  # an agent session's turns go out one after another
                    if not self.sending():
                        return
                    await self.one(client, Attempt(prompt, free_s))
                    free_s = self.sweep.clock()

        await self.settle([asyncio.create_task(worker()) for _ in range(int(self.value))])

    async def open(self, client: httpx.AsyncClient) -> None:
        """Open loop: requests leave on a drawn schedule, whatever is still in flight."""
        cfg, sweep = self.sweep.config, self.sweep
        process = ArrivalProcess(self.value, cfg.arrival, cfg.burstiness)
        times = process.times_s(
            sweep.arrival_rng, count=self.total, duration_s=cfg.duration_per_level_s
        )
        prompts = [sweep.factory.next_prompt(sweep.prompt_rng) for _ in times]
        self.start()
        tasks: list[asyncio.Task[None]] = []
        for offset, prompt in zip(times, prompts, strict=True):
            due = self.t0 + offset
            if (wait := due - sweep.clock()) > 0:
                await asyncio.sleep(wait)
            if not self.sending():
                break
            tasks.append(asyncio.create_task(self.one(client, Attempt(prompt, due))))
        await self.settle(tasks)

    async def one(self, client: httpx.AsyncClient, attempt: Attempt) -> None:
        """Send one request and keep its record (marked incomplete if the level cuts it)."""
        try:
            await send_into(client, self.sweep.config, attempt, self.sweep.clock)
        except asyncio.CancelledError:
            self.records.append(attempt.record(incomplete=True))
            raise
        record = attempt.record()
        self.records.append(record)
        self.sweep.observe(attempt.prompt, record)
        self._watch(record)
        self._progress()

    async def settle(self, tasks: list[asyncio.Task[None]]) -> None:
        """Wait for the level's tasks; at a duration level's deadline, cut what is in flight."""
        if self.deadline_s is None or not tasks:
            await asyncio.gather(*tasks)
            return
        timeout = max(0.0, self.deadline_s - self.sweep.clock())
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def level(self) -> Level:
        """The finished level, windowed by the config's rule."""
        cfg = self.sweep.config
        cut = None if self.deadline_s is None else min(self.deadline_s, self.sweep.clock())
        rule = WindowRule(
            cfg.ramp_fraction,
            cfg.drain_fraction,
            fill_count=int(self.value) if cfg.closed_loop else None,
            cut_at_s=cut,
        )
        sends = [r.send_s for r in self.records]
        lasts = [_last_activity(r) for r in self.records]
        window = aggregate.steady_window(self.t0, sends, lasts, rule)
        kind = LoadKind.CONCURRENCY if cfg.closed_loop else LoadKind.RATE
        return level_from_records(
            self.records, load_kind=kind, load_value=self.value, window=window, config=cfg
        )

    def counts_only(self, why: str) -> Level:
        """The level when its metrics cannot be computed: what was sent, completed and failed,
        no metrics (so no fit reads it), and why, in its notes."""
        kind = LoadKind.CONCURRENCY if self.sweep.config.closed_loop else LoadKind.RATE
        return Level(
            load_kind=kind,
            load_value=self.value,
            requests_sent=len(self.records),
            completed=sum(r.ok for r in self.records),
            failed=sum(r.error is not None for r in self.records),
            incomplete=sum(r.incomplete for r in self.records),
            notes=f"metrics could not be computed ({why}): counts only, kept out of fits",
        )

    def _planned_sessions(self) -> deque[tuple[PromptSpec, ...]] | None:
        if self.total is None:
            return None  # a timed level makes its prompts as it goes
        plan: deque[tuple[PromptSpec, ...]] = deque()
        planned = 0
        while planned < self.total:
            turns = self.sweep.factory.conversation(self.sweep.prompt_rng)[: self.total - planned]
            plan.append(turns)
            planned += len(turns)
        return plan

    def _next_session(
        self, plan: deque[tuple[PromptSpec, ...]] | None
    ) -> tuple[PromptSpec, ...] | None:
        if plan is None:
            return self.sweep.factory.conversation(self.sweep.prompt_rng)
        return plan.popleft() if plan else None

    def _watch(self, record: RequestRecord) -> None:
        if record.error is None:
            self.failures_in_row = 0
            return
        self.failures_in_row += 1
        if self.failures_in_row >= self.dead_after and self.dead is None:
            self.dead = f"{self.failures_in_row} requests in a row failed (last: {record.error})"

    def _progress(self) -> None:
        record = self.records[-1]
        self.tokens_done += (record.output_tokens or 0) if record.ok else 0
        now = self.sweep.clock()
        if now - self.last_progress >= PROGRESS_EVERY_S or len(self.records) == self.total:
            self._emit(now)

    def _emit(self, now: float) -> None:
        if self.sweep.on_progress is None:
            return
        self.last_progress = now
        elapsed = now - self.t0
        self.sweep.on_progress(
            ProgressEvent(
                level_index=self.index,
                levels_total=len(self.sweep.config.levels),
                load_kind=LoadKind.CONCURRENCY if self.sweep.config.closed_loop else LoadKind.RATE,
                load_value=self.value,
                requests_done=len(self.records),
                requests_total=self.total,
                failures=sum(r.error is not None for r in self.records),
                output_tok_s_so_far=self.tokens_done / elapsed if elapsed > 0 else None,
            )
        )


def _last_activity(record: RequestRecord) -> float:
    times = [record.send_s, *record.chunk_times_s[-1:]]
    if record.end_s is not None:
        times.append(record.end_s)
    return max(times)
