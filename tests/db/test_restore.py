"""Restore refuses what would not load whole: a truncated or edited backup, a value the store
refuses, a row the database rejects; the target is left as it was. Also an older backup
replacing a filled store. Runs on both backends (tests/stores.py)."""

from __future__ import annotations

import gzip
import json
import resource
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from db.backup import backup
from db.backup_rows import why_row_refused
from db.engine import current_revision, head_revision
from db.models import Base
from db.restore import restore
from errors import InputError, StoreError
from team.roles import SYSTEM
from tests.db.backup_files import edit, filled_target, old_backup, set_value, table_rows
from tests.stores import Stores, backend


def _duplicate_run(lines: list[str]) -> list[str]:
    at = next(i for i, line in enumerate(lines) if json.loads(line).get("table") == "runs")
    row = json.loads(lines[at + 1])
    row["r"][0] = 99
    end = json.loads(lines[-1])
    end["rows"]["runs"] += 1
    return [*lines[: at + 2], json.dumps(row), *lines[at + 2 : -1], json.dumps(end)]


@pytest.mark.hostile
def test_a_broken_backup_changes_nothing_in_the_target(stores: Stores, tmp_path: Path) -> None:
    head_file = tmp_path / "head.jsonl.gz"
    backup(filled_target(stores), head_file)
    old_file = old_backup(tmp_path, "old")
    broken = {
        "truncated head": edit(head_file, tmp_path / "t1.jsonl.gz", lambda ls: ls[:-1]),
        "truncated old": edit(old_file, tmp_path / "t2.jsonl.gz", lambda ls: ls[:-1]),
        "a row lost": edit(head_file, tmp_path / "t3.jsonl.gz", lambda ls: [*ls[:-2], ls[-1]]),
    }
    target = filled_target(stores)
    before = table_rows(target)
    assert len(before["runs"]) == 1
    for why, file in broken.items():
        with pytest.raises(InputError, match="nothing was restored"):
            restore(target, file, replace=True, actor=SYSTEM)
        assert current_revision(target) == head_revision(), why
        assert table_rows(target) == before, why
    new = stores.empty("backup_new")
    with pytest.raises(InputError, match="ends early"):
        restore(new, broken["truncated old"], actor=SYSTEM)
    assert current_revision(new) is None


@pytest.mark.hostile
def test_a_backup_the_database_refuses_changes_nothing(stores: Stores, tmp_path: Path) -> None:
    # Two scenarios named alike break the unique name only in the database, after the file
    # check: at an older revision (the staging load) and at head (the one load transaction).
    old_twins = edit(
        old_backup(tmp_path, "twin", "other"),
        tmp_path / "twins.jsonl.gz",
        lambda ls: set_value(ls, "scenarios", "name", "twin", nth=1),
    )
    head_file = tmp_path / "head.jsonl.gz"
    backup(filled_target(stores), head_file)
    target = filled_target(stores)
    before = table_rows(target)
    with pytest.raises(StoreError, match=r"revision 0001 cannot be migrated.*nothing was restored"):
        restore(target, old_twins, replace=True, actor=SYSTEM)
    assert table_rows(target) == before
    assert current_revision(target) == head_revision()
    # A run line repeated under a new id collides on content_sha256 in the load transaction.
    dup = edit(head_file, tmp_path / "dup.jsonl.gz", _duplicate_run)
    with pytest.raises(StoreError, match="nothing was restored"):
        restore(target, dup, replace=True, actor=SYSTEM)
    assert table_rows(target) == before


def test_an_older_backup_replaces_a_filled_store(stores: Stores, tmp_path: Path) -> None:
    target = filled_target(stores)
    restored = restore(target, old_backup(tmp_path, "old"), replace=True, actor=SYSTEM)
    assert restored.revision == "0001"
    assert restored.rows["scenarios"] == 1 and restored.rows["runs"] == 0
    assert current_revision(target) == head_revision()
    after = table_rows(target)
    assert [row[:2] for row in after["scenarios"]] == [(7, "old")]
    assert not after["runs"] and not after["deployments"]


@pytest.mark.hostile
@pytest.mark.parametrize(
    "case",
    [
        ("deployments", "engine", "e" * 65, "65 characters, longer than the column's 64"),
        ("runs", "notes", "said \x00 oops", "holds a NUL character"),
        ("runs", "imported_at", "yesterday", "is not a date and time"),
    ],
)
def test_a_value_the_store_refuses_is_named_and_nothing_is_restored(
    stores: Stores, tmp_path: Path, case: tuple[str, str, str, str]
) -> None:
    table, column, value, why = case
    file = tmp_path / "store.jsonl.gz"
    backup(filled_target(stores), file)
    bad = edit(file, tmp_path / "bad.jsonl.gz", lambda ls: set_value(ls, table, column, value))
    target = stores.empty("backup_refused")
    with pytest.raises(InputError, match=rf"{table} row id 1, column {column}: the value .*{why}"):
        restore(target, bad, actor=SYSTEM)
    assert current_revision(target) is None


@pytest.mark.hostile
def test_a_number_postgres_refuses_names_its_table(stores: Stores, tmp_path: Path) -> None:
    file = tmp_path / "store.jsonl.gz"
    backup(filled_target(stores), file)
    huge = edit(
        file,
        tmp_path / "huge.jsonl.gz",
        lambda ls: set_value(ls, "load_levels", "position", 2**40),
    )
    target = stores.migrated("backup_huge")
    if backend() == "postgres":  # INTEGER is 32 bits there; SQLite stores any 64-bit number
        with pytest.raises(StoreError, match=r"refused a load_levels row with id between 1 and"):
            restore(target, huge, actor=SYSTEM)
        assert all(not rows for rows in table_rows(target).values())
    else:
        assert restore(target, huge, actor=SYSTEM).rows["load_levels"] > 0
        assert table_rows(target)["load_levels"][0][2] == 2**40


@pytest.mark.hostile
@pytest.mark.parametrize(
    "case",
    [
        ("load_levels", "load_kind", "sideways", "'sideways' is refused by the Level model"),
        ("load_levels", "load_value", "fast", "'fast' is not a number"),
        ("load_levels", "load_value", -3.0, "-3.0 is refused by the Level model"),
        ("level_metrics", "value", -123, "-123 is refused by the Metric model"),
        ("level_metrics", "name", "bogus_metric", "'bogus_metric' is refused by the Metric"),
        ("level_metrics", "value", "12", "'12' is not a number"),
        ("runs", "source", "nowhere", "'nowhere' is not one of the store's values"),
        ("runs", "isl", -5, "-5 is refused by the Workload model"),
        ("request_samples", "ttft_ms", -1.0, "-1.0 is refused by the RequestSample model"),
        ("load_levels", "completed", True, "True is not a whole number"),
        ("deployments", "engine", 7, "7 is not text"),
    ],
)
def test_a_row_the_store_would_not_write_is_refused_before_the_target_is_touched(
    stores: Stores, tmp_path: Path, case: tuple[str, str, object, str]
) -> None:
    table, column, value, why = case
    file = tmp_path / "store.jsonl.gz"
    backup(filled_target(stores), file)
    bad = edit(file, tmp_path / "bad.jsonl.gz", lambda ls: set_value(ls, table, column, value))
    target = filled_target(stores)
    before = table_rows(target)
    result = CliRunner().invoke(app, ["db", "restore", str(bad), "--replace", "--db", target])
    assert result.exit_code == 2, result.output
    line = " ".join(result.stderr.split())
    assert str(bad) in line and f"field '{table}.{column}'" in line
    assert f"{table} row id 1, column {column}: the value {why}" in line
    assert "nothing was restored" in line and "Traceback" not in result.output
    assert table_rows(target) == before


def test_plan_record_and_price_rows_are_checked_as_the_store_would_write_them() -> None:
    records, prices = Base.metadata.tables["plan_records"], Base.metadata.tables["prices"]
    assert why_row_refused(records, {"run_ids": ["1"]}) == ("run_ids", "is not a list of run ids")
    assert why_row_refused(records, {"prices_used": [3]})[0] == "prices_used"  # type: ignore[index]
    assert why_row_refused(records, {"run_ids": [1, 2], "prices_used": [{}]}) is None
    for price in (0.0, 1e308):
        assert why_row_refused(prices, {"usd_per_gpu_hour": price}) == (
            "usd_per_gpu_hour",
            "is not a price above 0 and at most 10000",
        )
    assert why_row_refused(prices, {"usd_per_gpu_hour": 9999.0}) is None
    assert why_row_refused(prices, {"gpus_per_instance": 10**9})[0] == "gpus_per_instance"  # type: ignore[index]
    assert why_row_refused(prices, {"usd_per_instance_hour": 1e308})[0] == "usd_per_instance_hour"  # type: ignore[index]


def _huge_line_backup(path: Path, header: str, line_bytes: int) -> Path:
    """A gzip whose first line is `header` and whose second is `line_bytes` spaces (about 1 MB
    of gzip per GiB), written in pieces so the test never holds the line either."""
    piece = b" " * (16 * 1024 * 1024)
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(header.encode() + b"\n")
        for _ in range(line_bytes // len(piece)):
            out.write(piece)
        out.write(b"\n")
    return path


@pytest.mark.hostile
def test_a_1_gib_line_is_refused_quickly_without_being_read_whole(
    stores: Stores, tmp_path: Path
) -> None:
    file = tmp_path / "store.jsonl.gz"
    backup(filled_target(stores), file)
    header = gzip.decompress(file.read_bytes()).decode().splitlines()[0]
    huge = _huge_line_backup(tmp_path / "huge.jsonl.gz", header, 1024**3)
    assert huge.stat().st_size < 8 * 1024 * 1024
    target = stores.empty("backup_huge_line")
    before_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.process_time()  # CPU seconds: a busy box stretches wall time, not these
    result = CliRunner().invoke(app, ["db", "restore", str(huge), "--db", target])
    took_s = time.process_time() - started
    assert result.exit_code == 2, result.output
    line = " ".join(result.stderr.split())
    assert str(huge) in line and "line 2 is longer than the 64 MiB a backup line may be" in line
    assert took_s < 10  # before: 17-20 s, the whole line read
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before_mib < 400
    assert current_revision(target) is None


@pytest.mark.hostile
@pytest.mark.parametrize(
    "case",
    [
        ("load_levels", "completed", 10**9, "1000000000 requests completed but only 12 were sent"),
        ("level_metrics", "value", 1e15, "implausible metric: output_tok_s 1e+15 is beyond 1e+09"),
        ("request_samples", "send_s", -1e12, "send_s -1e+12 is more than 1e+07 s from the level"),
    ],
)
def test_a_row_beyond_the_importers_plausibility_rules_is_refused_by_restore(
    stores: Stores, tmp_path: Path, case: tuple[str, str, object, str]
) -> None:
    table, column, value, why = case
    file = tmp_path / "store.jsonl.gz"
    backup(filled_target(stores), file)
    bad = edit(file, tmp_path / "bad.jsonl.gz", lambda ls: set_value(ls, table, column, value))
    target = stores.empty("backup_implausible")
    with pytest.raises(InputError, match="nothing was restored") as caught:
        restore(target, bad, actor=SYSTEM)
    assert why in str(caught.value) and f"{table} row id 1" in str(caught.value)
    assert current_revision(target) is None
