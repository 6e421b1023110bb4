"""What no sentence a person reads may contain: a file of capplan's own source tree (a module,
a bench script, a doc of the repository, the shared reference) or markdown that was meant to be
rendered and shows as written (**bold**, `code`, [links](...))."""

from __future__ import annotations

import re

ROOTS = (
    "bench", "cli", "db", "docs", "hardware", "measurements", "planner", "reports", "scripts",
    "shared", "tests", "ui", "workflows",
)  # fmt: skip
SOURCE_PATH = re.compile(rf"\b(?:{'|'.join(ROOTS)})/[\w./-]*\.(?:py|md|csv|yaml|sh)\b")
MARKDOWN = re.compile(r"\*\*|`|\]\(|__\w")  # a '# ...' line is a shell comment, not a heading


def problems(text: str) -> list[str]:
    """Each source-tree path or markdown left in `text`, with a little context."""
    found = []
    for pattern in (SOURCE_PATH, MARKDOWN):
        for match in pattern.finditer(text):
            start = max(match.start() - 40, 0)
            found.append(text[start : match.end() + 40].replace("\n", " "))
    return found
