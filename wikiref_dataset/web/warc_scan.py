"""A WARC/ARC file read record by record, recovering from damage (:func:`iter_warc_records`; the WARC index reads
its files the same way), and what reading one file found (:class:`WarcFileStats`).

Parsing is warcio's (the project's declared WARC library). What is hand-written is the recovery around it, which
warcio leaves to the caller — a real crawl has bad records, and one bad record must not lose the rest of a file:

* a record that cannot be parsed, or whose gzip member does not decompress (a flipped byte, a bad checksum), is
  skipped and counted (``corrupt_record``); reading resumes at the next record header found after it (the next gzip
  member that starts with ``WARC/``, or the next ``WARC/`` line). warcio itself would print the decompression error
  to stderr, read the rest of the member as empty and lose every later record of the file;
* a record shorter than its Content-Length (a clipped or truncated file) is skipped as ``truncated``;
* a gzip file that is one gzip stream instead of one member per record (``example-bad-non-chunked``), or whose
  members are cut in the middle of records (``example-wrong-chunks``), is read again as one continuous stream
  (layout ``gzip-stream``); its offsets then count decompressed bytes and
  :meth:`~wikiref_dataset.web.warc.WarcIndex.read` has to decompress from the start of the file (slow on big files:
  ``warcio recompress`` fixes such files); a truncated stream ends where the data ends (Python's ``GzipFile`` would
  drop its last buffer and warcio would take its ``EOFError`` for the end of the archive), so the record cut short is
  counted ``truncated``;
* captures without HTTP headers, with a bad status line or a bad Content-Length are skipped with the reason;
  records that are not captures (request, warcinfo, metadata, revisit, non-http URIs such as ``dns:`` or wget's
  ``metadata://``, responses to POST requests) are counted as *ignored*, by type.

Every record before a damaged one is kept (and, past a corrupt one, every record after it); the damage is counted
per file (:meth:`WarcFileStats.damage`, :func:`warc_damage_counts` for the closing summaries and ``build.json``).
:func:`iter_warc_records` gives this reading and recovery to other record consumers (the AQuaMuSe WET reader).
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeadersParserException

logger = logging.getLogger(__name__)

__all__ = ["DAMAGE_REASONS", "WarcFileStats", "iter_warc_records", "warc_damage_counts"]

DAMAGE_REASONS = ("truncated", "corrupt_record")
"""Skip reasons that mean the file is damaged (as opposed to records that are merely unusable)."""

_T = TypeVar("_T")

_GZIP_MAGIC = b"\x1f\x8b\x08"
RECORD_ERRORS = (ArchiveLoadFailed, StatusAndHeadersParserException, zlib.error, EOFError, OSError, ValueError)


@dataclass
class WarcFileStats:
    """What indexing one file found.

    Args:
        path (`str`): the file.
        layout (`str`): how it was read (`uncompressed`, `gzip-members`, `gzip-stream`).
        records (`int`): records seen (each skipped corrupt stretch counts as one).
        indexed (`int`): captures stored in the index.
        ignored (`Counter[str]`): records that are not page captures, by type (`request`, `warcinfo`,
            `metadata`, `revisit`, `non_http_uri`, `non_get_response` (the answer to a POST), ...). Not errors.
        skipped (`Counter[str]`): malformed or unusable captures, by reason (`corrupt_record`, `truncated`,
            `no_http_headers`, `bad_http_status`, `bad_content_length`, `missing_target_uri`, `bad_target_uri`).
        warnings (`Counter[str]`): problems of indexed captures (`content_length_mismatch`, `bad_date`,
            `declared_truncated`).
        error (`str`, *optional*): why the file could not be read at all (then nothing of it is indexed).
    """

    path: str
    layout: str = "uncompressed"
    records: int = 0
    indexed: int = 0
    ignored: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: Counter[str] = field(default_factory=Counter)
    error: str | None = None

    def to_json(self) -> str:
        return json.dumps({**self.__dict__, "ignored": dict(self.ignored), "skipped": dict(self.skipped),
                           "warnings": dict(self.warnings)}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> WarcFileStats:
        data = json.loads(text)
        return cls(**{**data, **{k: Counter(data[k]) for k in ("ignored", "skipped", "warnings")}})

    def damage(self) -> dict[str, int]:
        """Records lost to damage (:data:`DAMAGE_REASONS`), by reason; `{}` when none."""
        return {reason: self.skipped[reason] for reason in DAMAGE_REASONS if self.skipped.get(reason)}

    def format(self) -> str:
        """One line: `path: N indexed, skipped a=1, ignored b=2, ...`."""
        line = f"{self.path}: {self.indexed} indexed"
        for name in ("skipped", "ignored", "warnings"):
            if getattr(self, name):
                line += f", {name} {format_counts(getattr(self, name))}"
        if self.error:
            line += f", unreadable ({self.error})"
        return line


def warc_damage_counts(stats: Iterable[WarcFileStats]) -> dict[str, int]:
    """Closing-table rows for the damaged or unreadable files: ``"WARC <file name>: truncated"`` (or
    ``corrupt_record``, ``unreadable``) -> records skipped (1 for an unreadable file), and for a damaged file
    ``"WARC <file name>: captures kept"`` -> the captures indexed around the damage."""
    counts: dict[str, int] = {}
    for file in stats:
        name = Path(file.path).name
        for reason, count in file.damage().items():
            counts[f"WARC {name}: {reason}"] = count
        if file.damage():
            counts[f"WARC {name}: captures kept"] = file.indexed
        if file.error:
            counts[f"WARC {name}: unreadable"] = 1
    return counts


def format_counts(counts: Counter[str]) -> str:
    return ", ".join(f"{name}={count}" for name, count in sorted(counts.items()))


class NotMemberAligned(Exception):
    """A gzip file whose members are not one per record: read it again as one stream."""


class _StrictReader(DecompressingBufferedReader):
    """warcio's reader prints a gzip member's decompression error to stderr and returns nothing for the rest of it,
    so the record looks truncated and the file's later records are lost; raise the error instead, so that the
    record is counted ``corrupt_record`` and reading resumes at the next member."""

    def _decompress(self, data: bytes) -> bytes:
        if self.decompressor and data and self.num_block_read:  # inside a member: warcio would swallow the error
            return self.decompressor.decompress(data)
        return super()._decompress(data)


class GzipStream:
    """A whole-file gzip stream (layout ``gzip-stream``) that ends where a truncated file ends: ``read`` returns the
    bytes decompressed before the cut (``GzipFile.read`` drops up to a buffer of them with its ``EOFError``, which
    warcio takes for the normal end of the archive) and sets ``truncated``; the record cut short is then counted
    ``truncated``. A corrupt stream still raises."""

    def __init__(self, fileobj: BinaryIO) -> None:
        self._gzip = gzip.GzipFile(fileobj=fileobj)
        self.truncated = False

    def read(self, size: int = -1) -> bytes:
        parts: list[bytes] = []
        wanted = size if size is not None and size >= 0 else -1
        while wanted:
            try:
                chunk = self._gzip.read1(wanted if wanted > 0 else 1 << 20)
            except EOFError:
                self.truncated = True
                break
            if not chunk:
                break
            parts.append(chunk)
            wanted -= len(chunk) if wanted > 0 else 0
        return b"".join(parts)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._gzip.seek(offset, whence)

    def tell(self) -> int:
        return self._gzip.tell()

    def close(self) -> None:
        self._gzip.close()

    def __enter__(self) -> GzipStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class QuietArchiveIterator(ArchiveIterator):
    """warcio writes Content-Length warnings straight to stderr; count them instead (see `err_count`). Reads
    compressed members with :class:`_StrictReader`."""

    def __init__(self, fileobj: BinaryIO, *args: Any, **kwargs: Any) -> None:
        super().__init__(fileobj, *args, **kwargs)
        self.reader = _StrictReader(self.fh, block_size=self.reader.block_size)  # nothing read yet: safe to swap

    def _consume_blanklines(self):
        saved, sys.stderr = sys.stderr, _DISCARD
        try:
            return super()._consume_blanklines()
        finally:
            sys.stderr = saved


class _Discard(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)


_DISCARD = _Discard()


def detect_layout(handle: BinaryIO) -> str:
    handle.seek(0)
    head = handle.read(3)
    handle.seek(0)
    return "gzip-members" if head == _GZIP_MAGIC else "uncompressed"


def _find_next_record(handle: BinaryIO, start: int, layout: str) -> int | None:
    """Offset of the first record header at or after `start`, or None (end of file or unreadable)."""
    marker = _GZIP_MAGIC if layout == "gzip-members" else b"\nWARC/"
    keep = len(marker) - 1
    position = start  # offset of data[0]
    data = b""
    try:
        handle.seek(start)
        while chunk := handle.read(1 << 20):
            data += chunk
            search_from = 0
            while (hit := data.find(marker, search_from)) >= 0:
                if layout != "gzip-members":
                    return position + hit + 1
                if _member_starts_record(handle, position + hit):
                    return position + hit
                search_from = hit + 1
            position += len(data) - keep
            data = data[-keep:]
    except RECORD_ERRORS:
        pass
    return None


def _starts_with_warc(stream: BinaryIO, layout: str) -> bool:
    stream.seek(0)
    head = stream.read(4096)
    stream.seek(0)
    if layout == "gzip-members":
        try:
            head = zlib.decompressobj(31).decompress(head, 64)
        except zlib.error:
            return False
    return head.lstrip(b"\r\n").startswith(b"WARC/")


def _member_starts_record(handle: BinaryIO, offset: int) -> bool:
    here = handle.tell()
    try:
        handle.seek(offset)
        head = zlib.decompressobj(31).decompress(handle.read(4096), 64)
    except zlib.error:
        return False
    finally:
        handle.seek(here)
    return head.lstrip(b"\r\n").startswith(b"WARC/")


def scan_records(
    stream: BinaryIO, path: str, layout: str, stats: WarcFileStats,
    handle: Callable[[Any, ArchiveIterator], tuple[_T | None, bool]],
) -> Iterator[_T]:
    """What `handle` makes of each record of `stream`, resynchronising after a bad record (see the module docstring).

    `handle(record, iterator)` reads the record (to its end, or not at all) and returns ``(result or None, whether
    the record was truncated)``; its results that are not ``None`` are yielded. A record that cannot be parsed or
    decompressed is counted ``corrupt_record`` in `stats`.

    Raises:
        NotMemberAligned: a `gzip-members` file whose members do not hold one record each.
    """
    # ARC files need warcio's ARC->WARC conversion; a WARC file is parsed as WARC only, so that garbage
    # inside it is reported instead of being taken for an ARC header line
    arc = not _starts_with_warc(stream, layout)
    position: int | None = 0
    while position is not None:
        stream.seek(position)
        iterator = QuietArchiveIterator(stream, arc2warc=arc)
        previous_truncated = in_record = False
        position = None
        try:
            for record in iterator:
                stats.records += 1
                in_record = True
                result, previous_truncated = handle(record, iterator)
                in_record = False
                if result is not None:
                    yield result
        except RECORD_ERRORS as error:
            failed_at = iterator.offset
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            if layout == "gzip-members" and ("non-chunked" in str(error) or previous_truncated):
                raise NotMemberAligned from None
            stats.records += not in_record
            stats.skipped["corrupt_record"] += 1
            logger.warning("%s: corrupt record at offset %d (%s: %s); looking for the next record",
                           path, failed_at, type(error).__name__, message)
            position = _find_next_record(stream, failed_at + 1, layout)
    if getattr(stream, "truncated", False) and not stats.damage():  # cut between two records: still a damaged file
        stats.skipped["truncated"] += 1


def iter_warc_records(
    path: str | os.PathLike, handle: Callable[[Any, ArchiveIterator], tuple[_T | None, bool]], stats: WarcFileStats
) -> Iterator[_T]:
    """What `handle` makes of each record of the WARC/ARC/WET file `path`, read as
    :class:`~wikiref_dataset.web.warc.WarcIndex` reads it (layout detected, bad records skipped and counted in `stats`,
    reading resumed after them; a gzip file that is not one member per record read again as one stream, without
    yielding again what was yielded).

    `handle(record, iterator)` reads the record (to its end, or not at all) and returns ``(result or None, whether
    the record was truncated)``; the results that are not ``None`` are yielded.

    Raises:
        OSError: the file cannot be opened.
    """
    with open(path, "rb") as handle_file:
        stats.layout = detect_layout(handle_file)
        yielded = 0
        try:
            for result in scan_records(handle_file, str(path), stats.layout, stats, handle):
                yielded += 1
                yield result
            return
        except NotMemberAligned:
            pass
        for name, value in WarcFileStats(path=stats.path, layout="gzip-stream").__dict__.items():
            setattr(stats, name, value)  # the counts start again with the second reading
        handle_file.seek(0)
        with GzipStream(handle_file) as stream:
            for position, result in enumerate(scan_records(stream, str(path), "gzip-stream", stats, handle)):
                if position >= yielded:
                    yield result
