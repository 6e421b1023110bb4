"""Safe expansion of an uploaded .zip of result files into (member name, bytes) pairs.

Refuses path traversal, symlinks, encrypted members and zip bombs: sizes and ratios are checked
from the central directory before decompressing and again, with a byte budget, while reading.
"""

from __future__ import annotations

import io
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from errors import InputError
from measurements.importers import MAX_IMPORT_BYTES

__all__ = [
    "MAX_ARCHIVE_ENTRIES",
    "MAX_ARCHIVE_MEMBERS",
    "MAX_ARCHIVE_TOTAL_BYTES",
    "MAX_COMPRESSION_RATIO",
    "expand_archive",
    "is_archive",
]

MAX_ARCHIVE_MEMBERS = 2000  # files; with folders and system files, up to MAX_ARCHIVE_ENTRIES
MAX_ARCHIVE_ENTRIES = 2 * MAX_ARCHIVE_MEMBERS
MAX_ARCHIVE_TOTAL_BYTES = 10 * MAX_IMPORT_BYTES
MAX_COMPRESSION_RATIO = 100
# Below this size a high ratio cannot hurt (a short run of repeated bytes deflates ~1000:1).
RATIO_EXEMPT_BYTES = 1024 * 1024
_CHUNK_BYTES = 64 * 1024
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header; an empty archive's end record
_DRIVE = re.compile(r"^[A-Za-z]:")
_ENCRYPTED_FLAG = 0x1


def is_archive(name: str, data: bytes) -> bool:
    """True when `data` starts with the zip magic bytes (the name is not trusted)."""
    del name  # kept for symmetry with the importers' (name, data) calls
    return data.startswith(_ZIP_MAGICS)


def expand_archive(name: str, data: bytes) -> list[tuple[str, bytes]]:
    """The member files of the zip `data` as (name inside the archive, bytes), in archive order."""
    with _open_zip(name, data) as archive:
        members = _checked_members(name, archive.infolist())
        out: list[tuple[str, bytes]] = []
        budget_bytes = MAX_ARCHIVE_TOTAL_BYTES
        for info in members:
            content = _read_member(name, archive, info, budget_bytes)
            budget_bytes -= len(content)
            out.append((info.filename, content))
    if not out:
        skipped = len(archive.infolist())
        raise InputError(
            f"the archive holds no file to import ({skipped} entries, all folders or system files)"
            if skipped
            else "the archive is empty",
            file=name,
        )
    return out


@contextmanager
def _open_zip(name: str, data: bytes) -> Iterator[zipfile.ZipFile]:
    """A ZipFile over `data`; whatever makes it unreadable becomes an InputError."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            yield archive
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, zlib.error) as exc:
        raise InputError(
            f"not a readable zip archive (corrupt or truncated?): {exc}", file=name
        ) from exc
    except (NotImplementedError, RuntimeError, ValueError) as exc:  # unknown method, encryption
        raise InputError(f"a zip member that cannot be read: {exc}", file=name) from exc


def _checked_members(name: str, infos: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
    """The regular files worth importing, after the central-directory checks (the folders'
    own entries and system files do not count against the limit: `zip -r` of a folder of
    2,000 results holds 2,001 entries)."""
    if len(infos) > MAX_ARCHIVE_ENTRIES:
        raise InputError(
            f"too many members; at most {MAX_ARCHIVE_ENTRIES} entries are accepted",
            file=name,
            value=len(infos),
        )
    kept: list[zipfile.ZipInfo] = []
    for info in infos:
        _check_name(name, info)
        if _skipped(info):
            continue
        _check_declared_size(name, info)
        kept.append(info)
    if len(kept) > MAX_ARCHIVE_MEMBERS:
        raise InputError(
            f"too many members; at most {MAX_ARCHIVE_MEMBERS} files are accepted",
            file=name,
            value=len(kept),
        )
    total_bytes = sum(info.file_size for info in kept)
    if total_bytes > MAX_ARCHIVE_TOTAL_BYTES:
        raise InputError(
            f"the members add up to {total_bytes} bytes uncompressed, over the "
            f"{MAX_ARCHIVE_TOTAL_BYTES} byte limit for one archive",
            file=name,
            value=total_bytes,
        )
    return kept


def _member_error(name: str, info: zipfile.ZipInfo, message: str) -> InputError:
    return InputError(f"member {info.filename!r}: {message}", file=name)


def _check_name(name: str, info: zipfile.ZipInfo) -> None:
    """Refuse names that would escape a folder if extracted, and links."""
    member = info.filename
    parts = re.split(r"[/\\]", member)
    if member.startswith(("/", "\\")) or _DRIVE.match(member) or "\x00" in member:
        raise _member_error(name, info, "an absolute path is not allowed in an archive")
    if ".." in parts:
        raise _member_error(name, info, "a '..' path component is not allowed in an archive")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise _member_error(name, info, "symbolic links are not allowed in an archive")
    if info.flag_bits & _ENCRYPTED_FLAG:
        raise _member_error(name, info, "encrypted members are not supported; zip it unencrypted")


def _skipped(info: zipfile.ZipInfo) -> bool:
    """Directories, macOS resource forks (__MACOSX/) and dotfiles (.DS_Store) are not results."""
    parts = [part for part in re.split(r"[/\\]", info.filename) if part]
    if info.is_dir() or not parts:
        return True
    return parts[0] == "__MACOSX" or any(part.startswith(".") for part in parts)


def _check_declared_size(name: str, info: zipfile.ZipInfo) -> None:
    """The central directory's sizes, before anything is decompressed."""
    if info.file_size > MAX_IMPORT_BYTES:
        raise _member_error(
            name,
            info,
            f"{info.file_size} bytes uncompressed, over the {MAX_IMPORT_BYTES} byte limit",
        )
    if info.file_size > RATIO_EXEMPT_BYTES and (
        info.file_size > MAX_COMPRESSION_RATIO * info.compress_size
    ):
        ratio = info.file_size / max(info.compress_size, 1)
        raise _member_error(
            name,
            info,
            f"compression ratio {ratio:.0f}:1, over {MAX_COMPRESSION_RATIO}:1 (a zip bomb?)",
        )


def _read_member(
    name: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget_bytes: int
) -> bytes:
    """Decompress one member in chunks, stopping as soon as it outgrows what it may honestly be."""
    limit_bytes = min(
        MAX_IMPORT_BYTES,
        budget_bytes,
        max(RATIO_EXEMPT_BYTES, MAX_COMPRESSION_RATIO * info.compress_size),
    )
    chunks: list[bytes] = []
    read_bytes = 0
    with archive.open(info) as stream:
        while chunk := stream.read(_CHUNK_BYTES):
            read_bytes += len(chunk)
            if read_bytes > limit_bytes:
                raise _member_error(
                    name,
                    info,
                    f"decompresses to more than {limit_bytes} bytes (declared {info.file_size}); "
                    "refused as a zip bomb",
                )
            chunks.append(chunk)
    return b"".join(chunks)
