"""importers.versions: the releases each importer was verified on, and the note a newer one gets."""

from __future__ import annotations

from measurements.importers.versions import VERIFIED, named, release, verified_on, version_notes


def test_release_reads_major_minor_patch_and_ignores_dev_tags() -> None:
    assert release("0.13.0") == (0, 13, 0)
    assert release("0.8.0.dev18") == (0, 8, 0)
    assert release("v1.2") == (1, 2, 0)
    assert release("nightly") is None


def test_only_a_release_newer_than_the_verified_ones_gets_a_note() -> None:
    assert version_notes("aiperf", "0.13.0") == []
    assert version_notes("aiperf", "0.12.1") == []  # older layouts are read by their own rules
    assert version_notes("aiperf", None) == []
    (note,) = version_notes("guidellm", "0.9.0")
    assert note.startswith("written by guidellm 0.9.0, newer than")
    assert "guidellm 0.8.0.dev18 and 0.8.1" in note


def test_every_tool_names_its_verified_releases_oldest_first() -> None:
    for tool, versions in VERIFIED.items():
        parsed = [release(v) for v in versions]
        assert None not in parsed and parsed == sorted(parsed), tool
        assert verified_on(tool).startswith(tool)
    assert named("aiperf", None) == "aiperf (version not stated)"
