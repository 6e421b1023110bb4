"""Interop: the peer tools' current releases run for real against the real vLLM CPU server, and
every result file each writes imports with the tool's own printed numbers; the folder each run
leaves, imported whole as `capplan import FOLDER` does, is one stored run with those numbers.

It lives beside the probe's real-engine tests to share their one session server (a second
vLLM CPU server would spin on the same two cores). The tools come from
scripts/install-peer-tools.sh (and .venv-vllm for `vllm bench serve`); a missing tool skips,
and fails under CAPPLAN_REQUIRE_VLLM=1 (CI). Small runs: 20 requests per level, one closed-loop
and one open-loop level per tool. SQLite only: the store round trip is the same on Postgres.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from db import run_reads
from db.engine import Engine, make_engine
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import Level
from team.roles import SYSTEM
from tests.integration.conftest import CLIENT_WALL_LIMIT_S, ServerKeeper, unavailable
from tests.interop import compare, peer_tools
from tests.stores import Stores
from workflows.ingest import IngestOptions, IngestStatus, Upload, ingest, read_uploads

pytestmark = [pytest.mark.vllm, pytest.mark.sqlite_only]
LEVELS = (peer_tools.Load("concurrency", 4, 20), peer_tools.Load("rate", 4, 20))
FACTS = {"engine": "vllm", "model": "tiny-random-llama", "gpu": "H100-SXM-80GB", "tp": 1}


@pytest.fixture(scope="module")
def engine(stores: Stores) -> Iterator[Engine]:
    made = make_engine(stores.migrated("peer-tools"))
    yield made
    made.dispose()


def _stored(engine: Engine, path: Path, load: peer_tools.Load) -> Level:
    given = {"concurrency": int(load.value)} if load.kind == "concurrency" else {}
    given = given or {"request_rate": load.value}
    options = IngestOptions(DeploymentOverrides.model_validate(FACTS | given), atomic=True)
    (outcome,) = ingest(engine, [Upload(path.name, path.read_bytes())], options, actor=SYSTEM)
    assert outcome.run_id is not None, outcome.message
    (level,) = run_reads.get_run(engine, outcome.run_id).run.levels
    return level


def _problems(engine: Engine, done: peer_tools.Recorded) -> list[str]:
    """What does not match between the tool's printed numbers and each file it wrote."""
    tool, out, load = done.tool, done.out_dir, done.load
    problems: list[str] = []
    for name in compare.AGGREGATES[tool]:
        level = _stored(engine, out / name.format(level=load.name), load)
        if len(compare.pairs(tool, done.printed, level)) < 10:  # the comparison covers the summary
            problems.append(f"{name}: fewer than 10 printed numbers to compare")
        problems += [f"{name}: {m}" for m in compare.mismatches(tool, done.printed, level)]
        if (level.load_kind.value, level.load_value) != (load.kind, load.value):
            problems.append(f"{name}: load {level.load_kind.value} {level.load_value:g}")
    if tool in compare.PER_REQUEST:
        name = compare.PER_REQUEST[tool]
        level = _stored(engine, out / name, load)
        problems += [
            f"{name}: {m}" for m in compare.per_request_mismatches(tool, done.printed, level)
        ]
    return problems


def _folder_problems(stores: Stores, done: peer_tools.Recorded) -> list[str]:
    """What is wrong with the run folder imported whole: one run, the tool's numbers, its load."""
    engine = make_engine(stores.migrated(f"peer-folder-{done.tool}-{done.load.name}"))
    try:
        options = IngestOptions(DeploymentOverrides.model_validate(FACTS), atomic=True)
        outcomes = ingest(engine, read_uploads([done.out_dir]), options, actor=SYSTEM)
        stored = [o for o in outcomes if o.status is IngestStatus.STORED]
        if len(stored) != 1 or stored[0].run_id is None:
            return [f"folder: {len(stored)} runs stored ({[o.file for o in stored]})"]
        (level,) = run_reads.get_run(engine, stored[0].run_id).run.levels
    finally:
        engine.dispose()
    problems = [f"folder: {m}" for m in compare.mismatches(done.tool, done.printed, level)]
    if (level.load_kind.value, level.load_value) != (done.load.kind, done.load.value):
        problems.append(f"folder: load {level.load_kind.value} {level.load_value:g}")
    return problems


@pytest.mark.parametrize("tool", peer_tools.TOOLS)
def test_the_tool_runs_for_real_and_capplan_stores_its_own_numbers(
    tool: str, vllm_keeper: ServerKeeper, engine: Engine, stores: Stores, tmp_path: Path
) -> None:
    why = peer_tools.missing(tool)
    if why is not None:
        unavailable(why)  # before the server starts: a missing tool fails (CI) or skips at once
    vllm_server = vllm_keeper.get()
    target = peer_tools.Target(vllm_server.base_url, vllm_server.model, vllm_server.model_dir)
    for load in LEVELS:
        out = tmp_path / load.name
        done = peer_tools.run(
            tool, target, load, shape=peer_tools.Shape(), out=out, timeout_s=CLIENT_WALL_LIMIT_S
        )
        stdout = (out / "stdout.txt").read_text(errors="replace")
        stderr = (out / "stderr.txt").read_text(errors="replace")
        assert done.returncode == 0, f"{done.command}\n{stdout[-2000:]}\n{_error_part(stderr)}"
        assert _problems(engine, done) == [], load.name
        assert _folder_problems(stores, done) == [], load.name


def _error_part(stderr: str) -> str:
    """Where a Python tool died: from a fatal error's first line (faulthandler lists the
    innermost frames first), else the end of what it printed."""
    fatal = stderr.find("Fatal Python error")
    return stderr[fatal : fatal + 2000] if fatal >= 0 else stderr[-2000:]
