"""Safe zip expansion: real zips built in memory, including a real zip bomb and traversal names."""

from __future__ import annotations

import io
import json
import stat
import struct
import zipfile
from pathlib import Path

import pytest

from errors import InputError
from measurements.importers import MAX_IMPORT_BYTES, archive, import_bytes
from measurements.importers.archive import expand_archive, is_archive

REAL = Path(__file__).parents[2] / "fixtures" / "vllm-cpu-real"
MIB = 1024 * 1024


def _zip(members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for member, content in members:
            out.writestr(member, content)
    return buffer.getvalue()


def _lie_about_size(data: bytes, declared_bytes: int) -> bytes:
    """Rewrite the first central-directory entry's uncompressed size (offset 24 in the entry)."""
    at = data.index(b"PK\x01\x02") + 24
    return data[:at] + struct.pack("<I", declared_bytes) + data[at + 4 :]


def test_expands_real_fixtures_and_each_member_imports_with_the_numbers_vllm_printed() -> None:
    names = sorted(path.name for path in REAL.glob("*.json"))
    junk = [("results/", b""), ("__MACOSX/results/._c1.json", b"\x00\x05"), (".DS_Store", b"x")]
    data = _zip([*junk, *((f"results/{n}", (REAL / n).read_bytes()) for n in names)])
    assert is_archive("results.zip", data)
    members = expand_archive("results.zip", data)
    assert [member for member, _ in members] == [f"results/{n}" for n in names]
    for member, content in members:
        assert content == (REAL / member.removeprefix("results/")).read_bytes()
        printed = json.loads(content)["output_throughput"]
        imported = import_bytes(member, content)
        assert imported.format_id == "vllm-bench"
        (run,) = imported.runs
        assert run.origin_file == member
        assert run.levels[0].value("output_tok_s") == pytest.approx(printed, rel=1e-4)


def test_is_archive_reads_the_magic_bytes_not_the_name() -> None:
    assert is_archive("results.json", _zip([("a.json", b"{}")]))
    assert is_archive("empty.zip", _zip([]))
    assert not is_archive("results.zip", b'{"not": "a zip"}')
    assert not is_archive("results.zip", b"")


@pytest.mark.hostile
def test_a_real_zip_bomb_is_refused_from_the_central_directory_before_decompressing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bomb = _zip([("bomb.json", bytes(60 * MIB))])
    assert len(bomb) < MIB  # it really is a bomb: 60 MiB of zeros in well under 1 MiB

    def _never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("decompression started")

    monkeypatch.setattr(zipfile.ZipFile, "open", _never)
    with pytest.raises(InputError) as caught:
        expand_archive("bomb.zip", bomb)
    message = str(caught.value)
    assert "bomb.zip" in message and "'bomb.json'" in message
    assert str(60 * MIB) in message and str(MAX_IMPORT_BYTES) in message


@pytest.mark.hostile
def test_a_member_under_the_size_limit_but_over_100_to_1_is_refused() -> None:
    data = _zip([("ok.json", b"{}"), ("zeros.json", bytes(10 * MIB))])
    with pytest.raises(InputError, match=r"'zeros\.json'.*compression ratio \d+:1, over 100:1"):
        expand_archive("r.zip", data)


@pytest.mark.hostile
def test_a_central_directory_that_understates_the_size_is_refused_while_reading() -> None:
    lying = _lie_about_size(_zip([("zeros.json", bytes(10 * MIB))]), 1000)
    with pytest.raises(InputError, match=r"lying\.zip: .*corrupt"):
        expand_archive("lying.zip", lying)


@pytest.mark.hostile
def test_the_read_budget_stops_a_bomb_that_got_past_the_declared_sizes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if the central directory had passed every check: only the streaming budget is left.
    monkeypatch.setattr(archive, "_check_declared_size", lambda *_args: None)
    data = _zip([("zeros.json", bytes(10 * MIB))])
    with pytest.raises(InputError, match=r"'zeros\.json': decompresses to more than \d+ bytes"):
        expand_archive("r.zip", data)


@pytest.mark.hostile
@pytest.mark.parametrize(
    ("member", "why"),
    [
        ("../evil.json", "'..'"),
        ("results/../../evil.json", "'..'"),
        ("results\\..\\evil.json", "'..'"),
        ("/etc/evil.json", "absolute"),
        ("C:/evil.json", "absolute"),
    ],
)
def test_path_traversal_names_are_refused(member: str, why: str) -> None:
    data = _zip([("good.json", b"{}"), (zipfile.ZipInfo(member), b"{}")])
    with pytest.raises(InputError, match=why) as caught:
        expand_archive("t.zip", data)
    assert str(caught.value).startswith("t.zip: member ")


@pytest.mark.hostile
def test_a_symlink_member_is_refused() -> None:
    link = zipfile.ZipInfo("results/c8.json")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with pytest.raises(InputError, match=r"l\.zip: member 'results/c8\.json': symbolic link"):
        expand_archive("l.zip", _zip([(link, b"/etc/passwd")]))


@pytest.mark.hostile
def test_too_many_members_are_refused() -> None:
    data = _zip([(f"m{index}.json", b"") for index in range(archive.MAX_ARCHIVE_MEMBERS + 1)])
    with pytest.raises(InputError, match="too many members") as caught:
        expand_archive("many.zip", data)
    assert caught.value.value == 2001


def test_a_zip_r_of_a_folder_of_2000_results_holds_2000_members() -> None:
    # `zip -r results.zip results/` writes the folder's own entry: 2,001 entries, 2,000 files.
    folder = zipfile.ZipInfo("results/")
    files = [(f"results/r{index}.json", b"{}") for index in range(archive.MAX_ARCHIVE_MEMBERS)]
    members = expand_archive("results.zip", _zip([(folder, b""), *files]))
    assert len(members) == archive.MAX_ARCHIVE_MEMBERS


@pytest.mark.hostile
def test_too_many_entries_are_refused_even_when_they_are_folders(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(archive, "MAX_ARCHIVE_ENTRIES", 10)
    folders = [(zipfile.ZipInfo(f"d{index}/"), b"") for index in range(11)]
    with pytest.raises(InputError, match="at most 10 entries") as caught:
        expand_archive("dirs.zip", _zip([*folders, ("a.json", b"{}")]))
    assert caught.value.value == 12


@pytest.mark.hostile
def test_a_total_over_the_archive_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive, "MAX_ARCHIVE_TOTAL_BYTES", 1000)
    data = _zip([(f"m{index}.json", b"x" * 600) for index in range(2)])
    with pytest.raises(InputError, match="add up to 1200 bytes"):
        expand_archive("big.zip", data)


def test_nested_archives_come_back_unexpanded() -> None:
    inner = _zip([("c8.json", (REAL / "c8.json").read_bytes())])
    assert expand_archive("outer.zip", _zip([("inner.zip", inner)])) == [("inner.zip", inner)]


@pytest.mark.hostile
@pytest.mark.parametrize(
    "data",
    [b"PK\x03\x04 but nothing else", b"", b"plain text"],
)
def test_corrupt_or_non_zip_bytes_are_an_input_error(data: bytes) -> None:
    with pytest.raises(InputError, match=r"^bad\.zip: not a readable zip archive"):
        expand_archive("bad.zip", data)


@pytest.mark.hostile
def test_a_truncated_zip_is_an_input_error() -> None:
    data = _zip([("c8.json", (REAL / "c8.json").read_bytes())])
    with pytest.raises(InputError, match=r"^bad\.zip: not a readable zip archive"):
        expand_archive("bad.zip", data[: len(data) // 2])


@pytest.mark.hostile
def test_corrupt_deflate_data_is_an_input_error_naming_the_archive() -> None:
    text = json.dumps({"levels": [{"concurrency": c} for c in range(200)]}).encode()
    data = bytearray(_zip([("run.json", text)]))
    for at in range(60, 200):  # inside the member's compressed bytes
        data[at] ^= 0x5A
    with pytest.raises(InputError) as caught:
        expand_archive("batch.zip", bytes(data))
    assert caught.value.file == "batch.zip" and "corrupt" in str(caught.value)


@pytest.mark.hostile
@pytest.mark.parametrize(
    ("members", "said"),
    [([], "the archive is empty"), ([("__MACOSX/._x", b"x")], "no file to import")],
)
def test_an_archive_with_nothing_to_import_says_so(
    members: list[tuple[str | zipfile.ZipInfo, bytes]], said: str
) -> None:
    with pytest.raises(InputError) as caught:
        expand_archive("empty.zip", _zip(members))
    assert said in str(caught.value)
