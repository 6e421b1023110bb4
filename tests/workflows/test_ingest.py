"""workflows.ingest: one ingest for both shells, atomic (CLI) or per file (app), a typed outcome
per run carrying the files it came from, sizes and file kinds checked before reading."""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from db import run_lists
from db.engine import Engine, make_engine
from errors import InputError
from measurements.importers import MAX_IMPORT_BYTES
from measurements.importers.common import DeploymentOverrides
from team.roles import SYSTEM
from tests.stores import Stores
from workflows.ingest import IngestOptions, IngestStatus, Upload, ingest, read_uploads

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "vllm-cpu-real"
FACTS = DeploymentOverrides(gpu="H100-SXM-80GB", tp=1)


@pytest.fixture
def engine(stores: Stores) -> Iterator[Engine]:
    made = make_engine(stores.migrated("ingest"))
    yield made
    made.dispose()


def _upload(name: str) -> Upload:
    return Upload(name, (REAL / name).read_bytes())


def test_per_file_policy_stores_the_good_files_beside_a_bad_one(engine: Engine) -> None:
    uploads = [_upload("c8.json"), Upload("junk.txt", b"no benchmark here")]
    outcomes = ingest(engine, uploads, IngestOptions(FACTS), actor=SYSTEM)
    assert [(o.files, o.status) for o in outcomes] == [
        (("c8.json",), IngestStatus.STORED),
        (("junk.txt",), IngestStatus.REJECTED),
    ]
    assert outcomes[0].run_id is not None and outcomes[0].levels == 1
    assert outcomes[0].format_id and outcomes[0].detected
    assert "junk.txt" in outcomes[1].message
    assert len(run_lists.list_runs(engine)) == 1


def test_atomic_policy_stores_nothing_when_one_file_is_bad(engine: Engine) -> None:
    uploads = [_upload("c8.json"), Upload("junk.txt", b"no benchmark here")]
    with pytest.raises(InputError, match=r"junk\.txt"):
        ingest(engine, uploads, IngestOptions(FACTS, atomic=True), actor=SYSTEM)
    assert run_lists.list_runs(engine) == []


def test_a_merged_sweep_names_each_of_its_files(engine: Engine) -> None:
    uploads = [_upload("c1.json"), _upload("c32.json")]
    (outcome,) = ingest(engine, uploads, IngestOptions(FACTS, atomic=True), actor=SYSTEM)
    assert outcome.files == ("c1.json", "c32.json")
    assert outcome.file == "c1.json, c32.json"
    assert outcome.levels == 2 and outcome.created
    unmerged = ingest(engine, uploads, IngestOptions(FACTS, merge=False), actor=SYSTEM)
    assert [o.files for o in unmerged] == [("c1.json",), ("c32.json",)]


def test_the_same_content_again_is_a_duplicate(engine: Engine) -> None:
    (first,) = ingest(engine, [_upload("c8.json")], IngestOptions(FACTS), actor=SYSTEM)
    (again,) = ingest(
        engine,
        [Upload("copy.json", (REAL / "c8.json").read_bytes())],
        IngestOptions(FACTS),
        actor=SYSTEM,
    )
    assert again.status is IngestStatus.DUPLICATE and not again.created
    assert again.run_id == first.run_id


def test_zip_members_take_the_place_of_their_archive_in_the_order(engine: Engine) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("results/bad.json", b'{"truncated": ')
        archive.writestr("results/c8.json", (REAL / "c8.json").read_bytes())
        archive.writestr("results/started_at.txt", b"2026-12-01T10:00:00")
    uploads = [Upload("first.txt", b"nothing"), Upload("run.zip", buffer.getvalue())]
    outcomes = ingest(engine, uploads, IngestOptions(FACTS), actor=SYSTEM)
    # A file given on its own that is no result is refused; inside a result folder, skipped.
    assert outcomes[0].status is IngestStatus.REJECTED
    assert outcomes[0].files == ("first.txt",)
    assert [(o.files, o.status) for o in outcomes[1:]] == [
        (("run.zip/results/bad.json",), IngestStatus.REJECTED),
        (("run.zip/results/c8.json",), IngestStatus.STORED),
        (("run.zip/results/started_at.txt",), IngestStatus.SKIPPED),
    ]


def test_read_uploads_refuses_empty_folders_pipes_and_oversized_files_before_reading(
    tmp_path: Path,
) -> None:
    with pytest.raises(InputError, match="the folder holds no file to import"):
        read_uploads([tmp_path])
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_uploads([fifo])  # reading it would block forever
    (inside,) = read_uploads([tmp_path])  # in a folder: a line, never a blocked read
    assert inside.skip == "skipped: not a regular file (a link, pipe or device)"
    fifo.unlink()
    sparse = tmp_path / "huge.json"
    with sparse.open("wb") as handle:
        handle.truncate(MAX_IMPORT_BYTES + 1)  # no data written: the size alone refuses it
    with pytest.raises(InputError, match="over the 50 MiB import limit"):
        read_uploads([sparse])
    with pytest.raises(InputError, match="cannot read the file"):
        read_uploads([tmp_path / "missing.json"])
    (good,) = read_uploads([REAL / "c8.json"])
    assert good.name == "c8.json" and good.data == (REAL / "c8.json").read_bytes()


def test_an_unplannable_run_is_refused_when_asked_naming_what_to_fill_in(engine: Engine) -> None:
    options = IngestOptions(DeploymentOverrides(tp=1), refuse_unplannable=True)
    (outcome,) = ingest(engine, [_upload("c8.json")], options, actor=SYSTEM)
    assert outcome.status is IngestStatus.REJECTED and outcome.run_id is None
    assert "not stored" in outcome.message and "no GPU" in outcome.message
    assert len(outcome.unplannable) == 1 and "--gpu" in outcome.unplannable[0]
    assert run_lists.list_runs(engine) == []


def test_an_unplannable_run_is_stored_by_default_and_says_what_it_lacks(engine: Engine) -> None:
    (outcome,) = ingest(engine, [_upload("c8.json")], IngestOptions(), actor=SYSTEM)
    assert outcome.status is IngestStatus.STORED
    assert [m.split(":")[0] for m in outcome.unplannable] == ["no GPU", "no TP or GPU count"]
    (plannable,) = ingest(engine, [_upload("c32.json")], IngestOptions(FACTS), actor=SYSTEM)
    assert plannable.unplannable == ()
