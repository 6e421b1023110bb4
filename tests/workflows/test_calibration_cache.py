"""workflows.calibration_cache: a calibration fitted once is read back by the next process, the
same to the last bit; nothing kept there is trusted (damaged, foreign, oversized or linked files
are fitted again) and a folder another user can write to is never used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from planner.engine import calibrate as calibration
from planner.engine.calibrate import (
    calibrate,
    calibration_from_json,
    calibration_key,
    calibration_to_json,
    clear_calibration_cache,
    share_calibrations,
)
from planner.engine.model import EngineModel, Query
from tests.planner.engine.test_model import TRUE, _levels, _spec
from workflows.calibration_cache import CACHE_ENV, DiskCalibrations, code_version, keep_calibrations

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DiskCalibrations]:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    clear_calibration_cache()
    shared = keep_calibrations()
    assert shared is not None
    yield shared
    share_calibrations(None)
    clear_calibration_cache()


def _no_fitting(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("fitted again: the kept calibration was not read")

    monkeypatch.setattr(calibration, "least_squares", refuse)


def test_a_kept_calibration_is_read_back_bit_for_bit(
    kept: DiskCalibrations, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, levels = _spec(), _levels(_spec(), TRUE)
    fitted = calibrate(spec, levels)
    files = list(kept.folder.glob("*.json"))
    assert len(files) == 1 and kept.folder.parent.name == "calibrations"
    assert kept.folder.name == code_version()  # another planner code, another folder
    clear_calibration_cache()  # as a new process: nothing in memory
    _no_fitting(monkeypatch)
    read = calibrate(spec, levels)
    assert read == fitted
    query = Query("concurrency", (1.0, 8.0, 64.0, 512.0), 2000.0, 500.0)
    assert EngineModel(spec, read).predict(query) == EngineModel(spec, fitted).predict(query)


@pytest.mark.hostile
@pytest.mark.parametrize(
    "damage",
    ["not json", "[]", '{"params": [1, 2]}', "nan-params", "levels-changed", "huge", "link"],
)
def test_a_damaged_or_planted_calibration_is_fitted_again(
    kept: DiskCalibrations, tmp_path: Path, damage: str
) -> None:
    spec, levels = _spec(), _levels(_spec(), TRUE)
    fitted = calibrate(spec, levels)
    (path,) = kept.folder.glob("*.json")
    good = json.loads(path.read_text())
    if damage == "nan-params":
        text = json.dumps({**good, "params": [float("nan")] * 7})
    elif damage == "levels-changed":
        text = json.dumps({**good, "levels": good["levels"] + 1})
    elif damage == "huge":
        text = json.dumps({**good, "spread": [["tpot", 0.1]] * 10_000})
    elif damage == "link":
        planted = tmp_path / "planted.json"
        planted.write_text(json.dumps({**good, "params": [9.0] * 7}))
        path.unlink()
        path.symlink_to(planted)
        text = None
    else:
        text = damage
    if text is not None:
        path.write_text(text)
    clear_calibration_cache()
    again = calibrate(spec, levels)
    assert again == fitted  # fitted afresh, never the planted values
    assert not path.is_symlink() and json.loads(path.read_text()) == good


def test_the_json_form_round_trips_and_refuses_strangers() -> None:
    spec, levels = _spec(), _levels(_spec(), TRUE)
    fitted = calibrate(spec, levels)
    value = json.loads(json.dumps(calibration_to_json(fitted)))
    assert calibration_from_json(value, len(levels)) == fitted
    assert calibration_from_json(value, len(levels) + 1) is None
    assert calibration_from_json({**value, "extra": 1}, len(levels)) is None
    assert calibration_from_json({**value, "ratios_measured": 1}, len(levels)) is None
    assert calibration_from_json({**value, "params": [-1.0] * 7}, len(levels)) is None
    assert calibration_from_json({**value, "log_cov": [[0.0] * 6] * 7}, len(levels)) is None
    key = calibration_key(spec, tuple(levels))
    assert len(key) == 64 and key != calibration_key(spec, tuple(levels[1:]))


def test_a_folder_others_can_write_to_or_off_keeps_calibrations_in_memory_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared_root = tmp_path / "shared"
    shared_root.mkdir()
    shared_root.chmod(0o777)
    monkeypatch.setenv(CACHE_ENV, str(shared_root))
    try:
        assert keep_calibrations() is None
        monkeypatch.setenv(CACHE_ENV, "off")
        assert keep_calibrations() is None
        monkeypatch.setenv(CACHE_ENV, str(tmp_path / "mine"))
        mine = keep_calibrations()
        assert mine is not None and mine.folder.is_dir()
        assert not mine.folder.stat().st_mode & 0o077  # made private
    finally:
        share_calibrations(None)


def test_a_new_process_plans_from_the_calibrations_the_last_one_kept(tmp_path: Path) -> None:
    """Two `capplan plan` runs of the finance brief on the demo data: the second fits no
    serving model (least_squares is never called) and prints the same plan."""
    from db.engine import make_engine, upgrade
    from db.seed import ensure_demo_data

    url = f"sqlite:///{tmp_path / 'demo.db'}"
    upgrade(url)
    ensure_demo_data(make_engine(url))
    env = {**os.environ, CACHE_ENV: str(tmp_path / "cache"), "CAPPLAN_DB": url}
    code = (
        "import sys, scipy.optimize as so, planner.engine.calibrate as c\n"
        "calls = []\n"
        "real = c.least_squares\n"
        "c.least_squares = lambda *a, **k: calls.append(1) or real(*a, **k)\n"
        "from cli import app\n"
        "try:\n"
        "    app(['plan', 'docs/scenarios/finance-brief-chat.yaml'])\n"
        "finally:\n"
        "    print('FITS', len(calls), file=sys.stderr)\n"
    )
    outputs, fits = [], []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(done.stdout)
        fits.append(int(done.stderr.rsplit("FITS", 1)[1].split()[0]))
    assert fits[0] > 0 and fits[1] == 0, fits
    assert outputs[0] == outputs[1] and "Run " in outputs[0]
    assert len(list((tmp_path / "cache").rglob("*.json"))) == fits[0]  # one file per fit
