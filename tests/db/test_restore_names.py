"""Restore cleans names as import does: a backup whose deployment names its GPU with a full-width
letter or a zero-width space restores the catalog's name; a Cyrillic or Greek look-alike of a
catalog GPU or a known engine, and a level of 10^9 completed requests with no sent count, are
refused naming the row and column, and nothing is restored."""

from __future__ import annotations

from pathlib import Path

import pytest

from db.backup import backup
from db.engine import current_revision
from db.restore import restore
from errors import InputError
from team.roles import SYSTEM
from tests.db.backup_files import edit, filled_target, set_value, table_rows
from tests.stores import Stores

pytestmark = pytest.mark.hostile

NORMALISED = {
    "full-width H": "\uff28100-SXM-80GB",
    "zero-width space": "H100\u200b-SXM-80GB",
    "word joiner": "H100-SXM-80GB\u2060",
}
LOOKALIKES = {
    "Cyrillic EN": ("gpu", "\u041d100-SXM-80GB", "U+041D CYRILLIC CAPITAL LETTER EN"),
    "Greek ETA": ("gpu", "\u0397100-SXM-80GB", "U+0397 GREEK CAPITAL LETTER ETA"),
    "Cyrillic DZE": ("gpu", "H100-\u0405XM-80GB", "U+0405 CYRILLIC CAPITAL LETTER DZE"),
    "engine": ("engine", "vll\u043c", "U+043C CYRILLIC SMALL LETTER EM"),
}


@pytest.fixture
def backup_file(stores: Stores, tmp_path: Path) -> Path:
    file = tmp_path / "store.jsonl.gz"
    backup(filled_target(stores), file)
    return file


@pytest.mark.parametrize("name", NORMALISED.values(), ids=NORMALISED.keys())
def test_a_normalised_spelling_restores_as_the_catalog_name(
    stores: Stores, tmp_path: Path, backup_file: Path, name: str
) -> None:
    change = lambda ls: set_value(ls, "deployments", "gpu", name)  # noqa: E731
    spelled = edit(backup_file, tmp_path / "b.jsonl.gz", change)
    target = stores.empty("names_normalised")
    restore(target, spelled, actor=SYSTEM)
    (deployment,) = table_rows(target)["deployments"]
    assert "H100-SXM-80GB" in deployment and name not in deployment


@pytest.mark.parametrize("case", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_a_lookalike_name_is_refused_and_nothing_is_restored(
    stores: Stores, tmp_path: Path, backup_file: Path, case: tuple[str, str, str]
) -> None:
    column, name, char = case
    change = lambda ls: set_value(ls, "deployments", column, name)  # noqa: E731
    bad = edit(backup_file, tmp_path / "bad.jsonl.gz", change)
    target = stores.empty("names_lookalike")
    with pytest.raises(InputError, match="nothing was restored") as caught:
        restore(target, bad, actor=SYSTEM)
    message = str(caught.value)
    assert f"deployments row id 1, column {column}" in message
    assert "looks like the" in message and char in message
    assert current_revision(target) is None


def test_a_billion_completed_with_no_sent_count_is_refused(
    stores: Stores, tmp_path: Path, backup_file: Path
) -> None:
    def change(lines: list[str]) -> list[str]:
        unsent = set_value(lines, "load_levels", "requests_sent", None)
        return set_value(unsent, "load_levels", "completed", 10**9)

    bad = edit(backup_file, tmp_path / "bad.jsonl.gz", change)
    target = stores.empty("names_billion")
    with pytest.raises(InputError, match="nothing was restored") as caught:
        restore(target, bad, actor=SYSTEM)
    assert "load_levels row id 1" in str(caught.value)
    assert "completed 1,000,000,000 with no requests_sent" in str(caught.value)
    assert current_revision(target) is None
