"""House style, enforced: no module of the packages over 400 lines, no function over 60
(scripts/check_sizes.py, app.py and errors.py included)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_module_or_function_is_over_the_house_limits() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_sizes.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_check_finds_an_oversized_function(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import check_sizes
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    body = "\n".join(f"    x{i} = {i}" for i in range(70))
    sample = ROOT / "tests" / f"_oversized_{tmp_path.name}.py"
    sample.write_text(f"def big() -> None:\n{body}\n", encoding="utf-8")
    try:
        (found,) = check_sizes.long_functions(sample)
    finally:
        sample.unlink()
    assert "big (71 lines)" in found
