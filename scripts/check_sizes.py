"""House-style size check: every module of the packages is at most MAX_LINES lines and every
function (signature, decorators and docstring included) at most MAX_FUNCTION_LINES lines.

Run: `python scripts/check_sizes.py [--skip PATH ...] [FILE ...]`; with FILEs, functions are
checked in those files only (modules are always all checked). Exit code 1 lists what is over.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hardware", "planner", "measurements", "db", "reports", "workflows", "ui", "cli")
MAX_LINES = 400
MAX_FUNCTION_LINES = 60


def modules(skip: set[str]) -> list[Path]:
    """The packages' Python files, migrations and skipped paths left out."""
    found = [
        path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "versions" not in path.parts
    ]
    return [path for path in found if str(path.relative_to(ROOT)) not in skip]


def long_functions(path: Path) -> list[str]:
    """Each function or method of the file over MAX_FUNCTION_LINES lines, with its length."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    over: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - start + 1
            if length > MAX_FUNCTION_LINES:
                over.append(f"{path.relative_to(ROOT)}:{start} {node.name} ({length} lines)")
    return over


def main() -> int:
    """Print what is over the limits; 1 if anything is, else 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip", action="append", default=[], help="a path to leave out")
    parser.add_argument("files", nargs="*", type=Path, help="check functions in these only")
    args = parser.parse_args()
    skip = set(args.skip)
    problems: list[str] = []
    for path in modules(skip):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            problems.append(f"{path.relative_to(ROOT)}: {lines} lines (max {MAX_LINES})")
    targets = [ROOT / file for file in args.files] if args.files else modules(skip)
    for path in targets:
        problems.extend(long_functions(path))
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
