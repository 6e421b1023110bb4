"""The probe workflow against the simulated engine: a request in, the run file written, the
run stored when a store is given, progress reported on the way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from db import run_lists
from db.engine import Engine, make_engine
from errors import CapplanError
from measurements.probe.level_run import ProgressEvent
from measurements.probe.request import ProbeRequest
from measurements.run_file import read_run_file
from measurements.sim.server import start_in_thread
from team.roles import SYSTEM
from tests.ports import free_port
from tests.stores import Stores
from workflows.probe import probe_endpoint


@pytest.fixture(scope="module")
def sim_url() -> Iterator[str]:
    base_url, stop = start_in_thread("tiny-fast")
    yield base_url
    stop()


def _request(tmp_path: Path, base_url: str) -> ProbeRequest:
    return ProbeRequest(
        base_url=base_url,
        model="sim-tiny",
        isl_tokens=64,
        osl_tokens=16,
        concurrencies="1,2",
        requests_per_level=8,
        check_capabilities=False,
        out_path=tmp_path / "run.json",
    )


def test_a_probe_writes_the_run_file_stores_the_run_and_reports_progress(
    stores: Stores, sim_url: str, tmp_path: Path
) -> None:
    engine = make_engine(stores.migrated())
    events: list[ProgressEvent] = []
    result = probe_endpoint(
        _request(tmp_path, sim_url),
        open_store=lambda: engine,
        on_progress=events.append,
        actor=SYSTEM,
    )
    assert result.outcome.complete and result.out_path == tmp_path / "run.json"
    assert read_run_file(result.out_path) == result.outcome.run
    assert result.stored is not None and result.stored.created
    (summary,) = run_lists.list_runs(engine)
    assert summary.run_id == result.stored.run_id
    assert {event.level_index for event in events} == {0, 1}


def test_without_a_store_the_run_is_only_written(sim_url: str, tmp_path: Path) -> None:
    result = probe_endpoint(_request(tmp_path, sim_url))
    assert result.stored is None and result.outcome.complete and result.out_path.exists()


def test_a_server_that_is_not_there_opens_no_store(tmp_path: Path) -> None:
    def open_store() -> Engine:
        raise AssertionError("the store was opened for a sweep that never ran")

    with pytest.raises(CapplanError) as info:
        probe_endpoint(
            _request(tmp_path, f"http://127.0.0.1:{free_port()}"),
            open_store=open_store,
            actor=SYSTEM,
        )
    assert "could not reach" in str(info.value)
    assert not (tmp_path / "run.json").exists()
