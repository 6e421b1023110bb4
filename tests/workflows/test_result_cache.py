"""workflows.result_cache: a calibration or a curve's fit made once is read back by the next
process, the same to the last bit; nothing kept there is trusted (damaged, foreign, oversized or
linked files are fitted again) and a folder another user can write to is never used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import scipy.optimize

from planner.engine.calibrate import (
    calibrate,
    calibration_from_json,
    calibration_key,
    calibration_to_json,
    clear_calibration_cache,
)
from planner.engine.model import EngineModel, Query
from planner.fitting.fit import FitResult, clear_fit_cache, fit_latency, fit_throughput
from planner.fitting.kept import CALIBRATIONS, FITS, KINDS, keep
from planner.fitting.kept_fits import fit_from_json, fit_key, fit_to_json
from tests.planner.engine.test_model import TRUE, _levels, _spec
from workflows.result_cache import CACHE_ENV, DiskResults, code_version, keep_results

ROOT = Path(__file__).resolve().parents[2]


def _plant_link(path: Path, tmp_path: Path, value: dict[str, object]) -> None:
    """Replace a kept file by a link to a planted one (never followed on reading)."""
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps(value))
    path.unlink()
    path.symlink_to(planted)


@pytest.fixture
def kept_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, DiskResults]]:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    clear_calibration_cache()
    clear_fit_cache()
    used = keep_results()
    assert set(used) == set(KINDS)
    yield used
    for kind in KINDS:
        keep(kind, None)
    clear_calibration_cache()
    clear_fit_cache()


@pytest.fixture
def kept(kept_all: dict[str, DiskResults]) -> DiskResults:
    return kept_all[CALIBRATIONS]


def _no_fitting(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("fitted again: the kept result was not read")

    monkeypatch.setattr(scipy.optimize, "least_squares", refuse)
    monkeypatch.setattr(scipy.optimize, "leastsq", refuse)


def test_a_kept_calibration_is_read_back_bit_for_bit(
    kept: DiskResults, monkeypatch: pytest.MonkeyPatch
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
    [
        "not json",
        "[]",
        '{"params": [1, 2]}',
        "nan-params",
        "levels-changed",
        "huge",
        "spread-repeated",
        "link",
    ],
)
def test_a_damaged_or_planted_calibration_is_fitted_again(
    kept: DiskResults, tmp_path: Path, damage: str
) -> None:
    spec, levels = _spec(), _levels(_spec(), TRUE)
    fitted = calibrate(spec, levels)
    (path,) = kept.folder.glob("*.json")
    good = json.loads(path.read_text())
    if damage == "nan-params":
        text = json.dumps({**good, "params": [float("nan")] * 7})
    elif damage == "levels-changed":
        text = json.dumps({**good, "levels": good["levels"] + 1})
    elif damage == "huge":  # past the size a kept result may have: not even parsed
        text = json.dumps({**good, "spread": [["tpot", 0.1]] * 400_000})
    elif damage == "spread-repeated":
        text = json.dumps({**good, "spread": [["tpot", 0.1]] * 3})
    elif damage == "link":
        _plant_link(path, tmp_path, {**good, "params": [9.0] * 7})
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
    assert calibration_from_json({**value, "spread": [[["tpot"], 0.1]]}, len(levels)) is None
    assert calibration_from_json({**value, "params": [-1.0] * 7}, len(levels)) is None
    assert calibration_from_json({**value, "log_cov": [[0.0] * 6] * 7}, len(levels)) is None
    key = calibration_key(spec, tuple(levels))
    assert len(key) == 64 and key != calibration_key(spec, tuple(levels[1:]))


def test_a_folder_others_can_write_to_or_off_keeps_results_in_memory_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared_root = tmp_path / "shared"
    shared_root.mkdir()
    shared_root.chmod(0o777)
    monkeypatch.setenv(CACHE_ENV, str(shared_root))
    try:
        assert keep_results() == {}
        monkeypatch.setenv(CACHE_ENV, "off")
        assert keep_results() == {}
        monkeypatch.setenv(CACHE_ENV, str(tmp_path / "mine"))
        mine = keep_results()
        assert set(mine) == set(KINDS)
        for used in mine.values():
            assert used.folder.is_dir()
            assert not used.folder.stat().st_mode & 0o077  # made private
    finally:
        for kind in KINDS:
            keep(kind, None)


# A throughput curve that bends (a few % noise) and a TTFT that grows past a knee.
CONC = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
TOKS = (52.0, 101.0, 190.0, 345.0, 590.0, 880.0, 1090.0)
TTFT = (41.0, 43.0, 47.0, 55.0, 74.0, 120.0, 260.0)


def test_a_kept_fit_is_read_back_bit_for_bit(
    kept_all: dict[str, DiskResults], monkeypatch: pytest.MonkeyPatch
) -> None:
    fitted = [fit_throughput(CONC, TOKS), fit_latency(CONC, TTFT), fit_latency(CONC[:2], TTFT[:2])]
    assert fitted[0] is not None and fitted[1] is not None and fitted[2] is None  # 2 points: none
    folder = kept_all[FITS].folder
    assert len(list(folder.glob("*.json"))) == 3 and folder.name == code_version()
    clear_fit_cache()  # as a new process: nothing in memory
    _no_fitting(monkeypatch)
    read = [fit_throughput(CONC, TOKS), fit_latency(CONC, TTFT), fit_latency(CONC[:2], TTFT[:2])]
    assert read == fitted
    xs = [1.0, 10.0, 100.0, 300.0]
    for got, want in zip(read[:2], fitted[:2], strict=True):
        assert got is not None and want is not None
        assert got.eval(xs).tolist() == want.eval(xs).tolist()
        assert [a.tolist() for a in got.eval_band(xs)] == [a.tolist() for a in want.eval_band(xs)]


@pytest.mark.hostile
@pytest.mark.parametrize(
    "damage", ["not json", '{"none": false}', "nan-params", "other-family", "link", "none-planted"]
)
def test_a_damaged_or_planted_fit_is_fitted_again(
    kept_all: dict[str, DiskResults], tmp_path: Path, damage: str
) -> None:
    fitted = fit_throughput(CONC, TOKS)
    (path,) = kept_all[FITS].folder.glob("*.json")
    good = json.loads(path.read_text())
    text: str | None
    if damage == "nan-params":
        text = json.dumps({**good, "params": [float("nan")] * len(good["params"])})
    elif damage == "other-family":
        text = json.dumps({**good, "family": "linear", "param_names": ["a", "b", "c"]})
    elif damage == "none-planted":  # "no usable fit" under a key it was never made for
        text = None
        path.write_text(json.dumps({"none": True}))
    elif damage == "link":
        _plant_link(path, tmp_path, {**good, "params": [9.0] * len(good["params"])})
        text = None
    else:
        text = damage
    if text is not None:
        path.write_text(text)
    clear_fit_cache()
    again = fit_throughput(CONC, TOKS)
    if damage == "none-planted":
        # A planted "none" is believed, as any kept result is within its checks: it hides the
        # curve's fit (the plan then says the curve has no fit), it never invents numbers.
        assert again is None
        return
    assert again == fitted  # fitted afresh, never the planted values
    assert not path.is_symlink() and json.loads(path.read_text()) == good


def test_a_fits_json_form_round_trips_and_refuses_strangers() -> None:
    fitted = fit_throughput(CONC, TOKS)
    assert isinstance(fitted, FitResult)
    value = json.loads(json.dumps(fit_to_json(fitted), allow_nan=False))
    n = len(CONC)
    assert fit_from_json(value, n) == fitted
    assert fit_from_json(value, n + 1) is None
    assert fit_from_json({**value, "extra": 1}, n) is None
    assert fit_from_json({**value, "n_points": True}, 1) is None
    assert fit_from_json({**value, "family": "no-such-family"}, n) is None
    assert fit_from_json({**value, "stderr": value["stderr"][:-1]}, n) is None
    assert fit_from_json({**value, "covariance": value["covariance"][:-1]}, n) is None
    assert fit_from_json({**value, "chosen_reason": "x" * 5000}, n) is None
    assert fit_from_json({**value, "loo_mape_pct": "3"}, n) is None
    with pytest.raises(ValueError, match="only a series' own fit"):
        fit_to_json(FitResult(**{**_fields(fitted), "ceiling": 10.0}))
    key = fit_key(CONC, TOKS, ("a",))
    assert len(key) == 64 and key != fit_key(CONC, (*TOKS[:-1], 1091.0), ("a",))


def _fields(fit: FitResult) -> dict[str, object]:
    return {name: getattr(fit, name) for name in FitResult.__slots__}  # type: ignore[attr-defined]


def _fit_files(root: Path) -> int:
    return len(list((root / FITS).rglob("*.json")))


def test_a_new_process_plans_from_what_the_last_one_kept(tmp_path: Path) -> None:
    """Two `capplan plan` runs of the finance brief on the demo data: the second fits nothing,
    loads no optimiser at all and prints the same plan."""
    from db.engine import make_engine, upgrade
    from db.seed import ensure_demo_data

    url = f"sqlite:///{tmp_path / 'demo.db'}"
    upgrade(url)
    ensure_demo_data(make_engine(url))
    cache = tmp_path / "cache"
    env = {**os.environ, CACHE_ENV: str(cache), "CAPPLAN_DB": url}
    code = (
        "import sys\n"
        "from cli import app\n"
        "try:\n"
        "    app(['plan', 'docs/scenarios/finance-brief-chat.yaml'])\n"
        "finally:\n"
        "    print('OPTIMISER', 'scipy.optimize' in sys.modules, file=sys.stderr)\n"
    )
    outputs, optimiser, files = [], [], []
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
        optimiser.append(done.stderr.rsplit("OPTIMISER", 1)[1].split()[0])
        files.append(len(list(cache.rglob("*.json"))))
    assert optimiser == ["True", "False"], optimiser
    assert outputs[0] == outputs[1] and "Run " in outputs[0]
    assert files[0] == files[1] > 0  # the second run added nothing: it read every result
    assert _fit_files(cache) > 0 and len(list((cache / CALIBRATIONS).rglob("*.json"))) > 0
