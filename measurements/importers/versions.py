"""The peer-tool releases each importer was verified on (real files those releases wrote, in
tests/fixtures/<tool>/real-*), the note a file from a newer release gets, and the words that
name a tool's version in an error about a key it lacks."""

from __future__ import annotations

import re

# tool -> the releases whose real output files the importer was checked against, oldest first.
VERIFIED: dict[str, tuple[str, ...]] = {
    "aiperf": ("0.13.0",),
    "guidellm": ("0.8.0.dev18", "0.8.1"),
    "inference-perf": ("0.5.0", "0.7.0"),
    "vllm-bench": ("0.32.0",),
}
_RELEASE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def release(version: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a version string such as `0.13.0` or `0.8.0.dev18`, or None."""
    match = _RELEASE.match(version.strip())
    if match is None:
        return None
    return int(match[1]), int(match[2]), int(match[3] or 0)


def verified_on(tool: str) -> str:
    """`aiperf 0.13.0` (or `guidellm 0.8.0.dev18 and 0.8.1`): what the importer was checked on."""
    return f"{tool} " + " and ".join(VERIFIED[tool])


def version_notes(tool: str, version: str | None) -> list[str]:
    """A note when the file was written by a release newer than any the importer was verified
    on (it still imported: its keys are the ones read here); nothing otherwise."""
    if version is None:
        return []
    found, newest = release(version), release(VERIFIED[tool][-1])
    if found is None or newest is None or found <= newest:
        return []
    return [
        f"written by {tool} {version}, newer than the releases this importer was verified on "
        f"({verified_on(tool)}); it parsed, and was read the same way"
    ]


def named(tool: str, version: str | None) -> str:
    """`aiperf 0.14.0` or `aiperf (version not stated)`, for error messages."""
    return f"{tool} {version}" if version else f"{tool} (version not stated)"
