"""CSV text read one row at a time, so no importer holds a file as a list of lines or rows and
a sniffer that needs a file's first rows reads no further."""

from __future__ import annotations

import csv
from collections.abc import Iterator

from measurements.importers.limits import MAX_COMMENT_CHARS, MAX_ROWS, over


def lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its end) of each line, cut from `text` one at a
    time (no copy of the whole text); \n, \r\n and \r all end a line."""
    number, start, size = 0, 0, len(text)
    while start < size:
        end = text.find("\n", start)
        end = size if end < 0 else end
        for line in text[start:end].removesuffix("\r").split("\r"):
            number += 1
            yield number, line
        start = end + 1


def rows(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each CSV row, read lazily; csv.Error for unreadable CSV."""
    reader = csv.reader(line for _, line in lines(text))
    for cells in reader:
        yield reader.line_num, cells


def commented_rows(name: str, text: str, comments: list[str]) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each CSV row, `#` lines going to `comments` and blank lines left
    out; refused past MAX_ROWS lines or MAX_COMMENT_CHARS of comments (InputError)."""
    last = [0]
    reader = csv.reader(_data_lines(name, text, comments, last))
    for cells in reader:
        yield last[0], cells


def _data_lines(name: str, text: str, comments: list[str], last: list[int]) -> Iterator[str]:
    """Each non-comment non-blank line; `last` holds the number of the line given last."""
    said = 0
    for number, line in lines(text):
        over(number, MAX_ROWS, "lines", file=name)
        stripped = line.strip()
        if stripped.startswith("#"):
            comments.append(stripped[1:].strip())
            said += len(stripped)
            over(said, MAX_COMMENT_CHARS, "characters of comment lines", file=name)
        elif stripped:
            last[0] = number
            yield line
