"""Import limits: a file past its rows, runs, levels or samples is refused as the count passes
the limit, naming the file and the limit; the published tables import whole within them."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from errors import InputError
from measurements import importers
from measurements.importers import (
    aiperf_records,
    common,
    csv_stream,
    curve_csv,
    import_bytes,
    import_path,
    limits,
)
from measurements.run_file import Provenance

DATA = Path(__file__).parents[3] / "measurements/demo/data"
AIPERF = Path(__file__).parents[2] / "fixtures/aiperf/constructed__profile_export.jsonl"
HEADER = (
    "source,engine,engine_version,model,precision,gpu,gpu_count,tp,isl,osl,load_type,"
    "concurrency_or_rate,output_tok_s"
)


def curve(*rows: str) -> bytes:
    return "\n".join(["# a sweep", HEADER, *rows]).encode()


def level(model: str = "m", load: int = 1, output: float = 100) -> str:
    return f"lab,vllm,0.9,{model},fp8,H100-SXM-80GB,1,1,1000,200,concurrency,{load},{output}"


def test_the_published_silicon_samples_import_whole_well_within_the_limits() -> None:
    for path in sorted(DATA.glob("silicon_sample_*.csv")):
        runs = import_path(path).runs
        levels = sum(len(run.levels) for run in runs)
        assert 4 * len(runs) <= limits.MAX_RUNS and 4 * levels <= limits.MAX_LEVELS
        assert 10 * max(len(run.levels) for run in runs) <= limits.MAX_LEVELS_PER_RUN


def test_over_names_the_file_the_place_and_the_limit() -> None:
    limits.over(5, 5, "runs", file="a.csv")
    with pytest.raises(InputError) as caught:
        limits.over(6, 5, "runs", file="a.csv", field="row 7")
    assert str(caught.value).startswith("a.csv: field 'row 7': more than 5 runs; at most 5")


def test_curve_rows_past_the_limit_are_refused_before_the_rest_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(curve_csv, "MAX_LEVELS", 3)
    # The fifth row is broken: refused for the limit at the fourth, it is never read.
    rows = [level("m", load) for load in range(1, 5)]
    with pytest.raises(InputError, match="more than 3 data rows") as caught:
        import_bytes("big.csv", curve(*rows, "not,a,row"))
    assert caught.value.file == "big.csv"


def test_curve_runs_past_the_limit_are_refused_at_the_row_that_starts_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(curve_csv, "MAX_RUNS", 2)
    with pytest.raises(InputError, match="more than 2 runs") as caught:
        import_bytes("runs.csv", curve(*(level(f"m{i}") for i in range(3))))
    assert caught.value.field == "row 5"


def test_repeated_passes_past_the_run_limit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(curve_csv, "MAX_RUNS", 2)
    repeats = [level("m", 1, output) for output in (100, 101, 102)]  # three passes at one load
    with pytest.raises(InputError, match="more than 2 runs"):
        import_bytes("repeats.csv", curve(*repeats))


def test_levels_of_one_run_past_the_limit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(curve_csv, "MAX_LEVELS_PER_RUN", 2)
    with pytest.raises(InputError, match="more than 2 load levels in one run") as caught:
        import_bytes("levels.csv", curve(*(level("m", load) for load in (1, 2, 4))))
    assert caught.value.field == "row 5"


def test_comment_lines_past_the_limit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(csv_stream, "MAX_COMMENT_CHARS", 20)
    text = b"# " + b"x" * 30 + b"\n" + curve(level())
    with pytest.raises(InputError, match="more than 20 characters of comment lines"):
        curve_csv.parse("notes.csv", text.decode(), text, common.NO_OVERRIDES, Provenance.IMPORTED)


def test_json_lines_past_the_limit_are_refused_before_any_is_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(importers, "MAX_ROWS", 2)
    text = '{"a": 1}\n{"a": 2}\n{broken\n'
    with pytest.raises(InputError, match="more than 2 JSON lines") as caught:
        import_bytes("lines.jsonl", text.encode())
    assert caught.value.file == "lines.jsonl"


def test_per_request_records_past_the_limit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aiperf_records, "MAX_SAMPLES", 3)
    overrides = common.DeploymentOverrides(engine="vllm", model="m")
    with pytest.raises(InputError, match="more than 3 per-request records"):
        import_bytes(AIPERF.name, AIPERF.read_bytes(), overrides=overrides)


def test_every_format_is_held_to_the_file_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = import_bytes("two.csv", curve(level("a"), level("b", 2))).runs
    limits.check_runs("two.csv", runs)
    monkeypatch.setattr(limits, "MAX_LEVELS", 1)
    with pytest.raises(InputError, match="more than 1 load levels"):
        limits.check_runs("two.csv", runs)
    monkeypatch.setattr(limits, "MAX_RUNS", 1)
    with pytest.raises(InputError, match="more than 1 runs"):
        limits.check_runs("two.csv", runs)


def test_a_file_of_many_runs_is_hashed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    data = curve(*(level(f"m{i}") for i in range(20)))
    hashed: list[int] = []
    real = hashlib.sha256

    def counting(payload: bytes = b"") -> hashlib._Hash:
        hashed.append(len(payload))
        return real(payload)

    monkeypatch.setattr(hashlib, "sha256", counting)
    assert len(import_bytes("many.csv", data).runs) == 20
    assert hashed.count(len(data)) == 1  # the part keys hash the digest, not the file
