"""Terminal tables at 80 columns: nothing cut with '…' (numbers whole, text wrapped), every line
within the width, and columns left out named in the caption."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli import app
from cli.common import out
from tests.stores import Stores

runner = CliRunner()


@pytest.fixture(scope="module")
def demo_db(stores: Stores) -> str:
    return stores.demo()


@pytest.mark.parametrize(
    "argv",
    [
        ["runs", "--limit", "6"],
        ["fit", "--run", "5"],
        ["predict", "--run", "5", "--concurrency", "1,8,64,200"],
    ],
)
def test_a_table_reads_whole_at_80_columns(
    demo_db: str, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(out, "_width", 80)
    result = runner.invoke(app, [*argv, "--db", demo_db])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "…" not in result.stdout, result.stdout
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    if argv[0] == "runs":
        assert "left out at this width: samples" in " ".join(result.stdout.split())
        wide = runner.invoke(app, [*argv, "--db", demo_db, "--json"])
        assert '"samples"' in wide.stdout  # --json keeps every column
