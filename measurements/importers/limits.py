"""What one imported file may hold, stated in one place: its bytes, its rows (CSV data rows,
JSON-lines records), its runs, each run's load levels and its per-request samples. Each limit is
far beyond a real sweep (tens of levels) or a published table (AIConfigurator's silicon sample:
1,423 rows in 440 runs) and keeps a 50 MiB file's import under ~500 MB and linear in its size;
a file over one is refused as soon as the count passes it, naming the file and the limit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from errors import InputError

if TYPE_CHECKING:
    from measurements.run_file import RunFile

MAX_IMPORT_BYTES = 50 * 1024 * 1024  # one file (an upload, a path, an archive member)
MAX_ROWS = 100_000  # data rows of a CSV, records of a JSON-lines file
MAX_RUNS = 2_000  # runs one file yields (a curve CSV's groups, a table's configurations)
MAX_LEVELS = 20_000  # load levels one file yields, all runs together (a curve CSV's rows)
MAX_LEVELS_PER_RUN = 1_000  # load levels of one run
MAX_SAMPLES = 100_000  # per-request samples one file yields, all levels together
MAX_COMMENT_CHARS = 100_000  # a curve CSV's `#` lines, which become every run's notes


def over(count: int, limit: int, what: str, *, file: str, field: str | None = None) -> None:
    """Refuse `count` of `what` ("data rows") past `limit`, naming the file and the limit."""
    if count > limit:
        raise InputError(
            f"more than {limit:,} {what}; at most {limit:,} are read from one file "
            "(split it into several files)",
            file=file,
            field=field,
        )


def check_runs(file: str, runs: Sequence[RunFile]) -> None:
    """Refuse a file whose runs, levels or samples are past the limits (every importer)."""
    over(len(runs), MAX_RUNS, "runs", file=file)
    levels = samples = 0
    for number, run in enumerate(runs, start=1):
        where = f"run {number} ({run.label})" if run.label else f"run {number}"
        over(len(run.levels), MAX_LEVELS_PER_RUN, "load levels in one run", file=file, field=where)
        levels += len(run.levels)
        samples += sum(len(level.samples) for level in run.levels)
    over(levels, MAX_LEVELS, "load levels", file=file)
    over(samples, MAX_SAMPLES, "per-request samples", file=file)
