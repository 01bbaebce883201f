"""WARC/ARC archives as the offline source of cited pages: an on-disk index from normalized URL to capture.

:class:`WarcIndex` streams any number of WARC (or ARC) files — Common Crawl segments or the user's own crawl,
uncompressed or gzip-compressed one record per member — and stores, for every usable capture, its
:func:`~wikiref_dataset.web.urls.url_key` and where it lies (file, offset, length) with its date, HTTP status,
content type and redirect target. The index is a SQLite database (standard library): a Common-Crawl-sized index
lives on disk, not in memory, is reopened by later runs and is shared read-only by worker processes. Record
bodies are not read while indexing (memory per record is constant); :meth:`WarcIndex.read` reads one body back
by offset, with chunked transfer-encoding and gzip/deflate content-encoding decoded by warcio.

Parsing is warcio's (the project's declared WARC library). What is hand-written is the recovery around it, which
warcio leaves to the caller — a real crawl has bad records, and one bad record must not lose the rest of a file:

* a record that cannot be parsed, or whose gzip member does not decompress (a flipped byte, a bad checksum), is
  skipped and counted (``corrupt_record``); reading resumes at the next record header found after it (the next gzip
  member that starts with ``WARC/``, or the next ``WARC/`` line). warcio itself would print the decompression error
  to stderr, read the rest of the member as empty and lose every later record of the file;
* a record shorter than its Content-Length (a clipped or truncated file) is skipped as ``truncated``;
* a gzip file that is one gzip stream instead of one member per record (``example-bad-non-chunked``), or whose
  members are cut in the middle of records (``example-wrong-chunks``), is read again as one continuous stream
  (layout ``gzip-stream``); its offsets then count decompressed bytes and :meth:`WarcIndex.read` has to
  decompress from the start of the file (slow on big files: ``warcio recompress`` fixes such files); a truncated
  stream ends where the data ends (Python's ``GzipFile`` would drop its last buffer and warcio would take its
  ``EOFError`` for the end of the archive), so the record cut short is counted ``truncated``;
* captures without HTTP headers, with a bad status line or a bad Content-Length are skipped with the reason;
  records that are not captures (request, warcinfo, metadata, revisit, non-http URIs such as ``dns:`` or wget's
  ``metadata://``, responses to POST requests) are counted as *ignored*, by type.

Every record before a damaged one is kept (and, past a corrupt one, every record after it); the damage is counted
per file (:meth:`WarcFileStats.damage`,
:func:`warc_damage_counts` for the closing summaries and ``build.json``). :func:`iter_warc_records` gives the same
reading and recovery to other record consumers (the AQuaMuSe WET reader).

Lookup prefers the latest 200 capture of a URL (given the citation's date, the one nearest it:
:mod:`~wikiref_dataset.web.captures`); when there is none, a captured redirect (3xx with Location) is followed
inside the archive (at most ``max_redirects`` hops, loops stopped); failing that the latest capture of
any status is returned so the caller can report it.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import sqlite3
import sys
import threading
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, TypeVar
from urllib.parse import urljoin

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeadersParserException

from .captures import capture_time, choose_capture
from .urls import url_key

logger = logging.getLogger(__name__)

__all__ = ["DAMAGE_REASONS", "IndexStats", "WarcCapture", "WarcFileStats", "WarcIndex", "WarcReadError",
           "iter_warc_records", "warc_damage_counts"]

CAPTURE_TYPES = ("response", "resource")
"""WARC record types that hold a page (`revisit` records hold none: they point at an earlier capture)."""

DAMAGE_REASONS = ("truncated", "corrupt_record")
"""Skip reasons that mean the file is damaged (as opposed to records that are merely unusable)."""

_T = TypeVar("_T")

_GZIP_MAGIC = b"\x1f\x8b\x08"
_RECORD_ERRORS = (ArchiveLoadFailed, StatusAndHeadersParserException, zlib.error, EOFError, OSError, ValueError)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER, mtime_ns INTEGER, layout TEXT, stats TEXT
);
CREATE TABLE IF NOT EXISTS captures (
    url_key TEXT NOT NULL, url TEXT NOT NULL, file_id INTEGER NOT NULL, offset INTEGER NOT NULL,
    length INTEGER, date TEXT, date_key TEXT, status INTEGER, content_type TEXT, location TEXT, record_type TEXT,
    record_id TEXT
);
CREATE INDEX IF NOT EXISTS captures_by_key ON captures (url_key);
"""


class WarcReadError(Exception):
    """A capture could not be read back; the message names the file, the offset and the problem."""

    def __init__(self, message: str, reason: str = "read_error") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class WarcCapture:
    """Where one capture of a page lies and what the archive recorded about it.

    Args:
        url (`str`): the WARC-Target-URI as recorded.
        path (`str`): the WARC file (absolute path).
        offset (`int`): start of the record; decompressed bytes for `layout == "gzip-stream"`, else file bytes.
        length (`int`, *optional*): length of the record in the same unit.
        date (`str`, *optional*): WARC-Date, as ISO 8601 UTC when it parses, else as recorded.
        status (`int`): HTTP status (200 for `resource` records).
        content_type (`str`, *optional*): HTTP Content-Type (WARC Content-Type for `resource` records).
        location (`str`, *optional*): the Location header of a 3xx capture.
        record_type (`str`): `response` or `resource`.
        layout (`str`): `uncompressed`, `gzip-members` or `gzip-stream` (see the module docstring).
        redirected_from (`tuple[str, ...]`): the captured redirects :meth:`WarcIndex.lookup` followed to get here.
    """

    url: str
    path: str
    offset: int
    length: int | None
    date: str | None
    status: int
    content_type: str | None
    location: str | None = None
    record_type: str = "response"
    layout: str = "uncompressed"
    redirected_from: tuple[str, ...] = ()

    @property
    def record(self) -> str:
        """`path:offset`, to name the record in messages and provenance fields."""
        return f"{self.path}:{self.offset}"


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
                line += f", {name} {_format_counts(getattr(self, name))}"
        if self.error:
            line += f", unreadable ({self.error})"
        return line


@dataclass
class IndexStats:
    """Totals over the files of an index."""

    files: int = 0
    unreadable_files: int = 0
    records: int = 0
    indexed: int = 0
    ignored: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: Counter[str] = field(default_factory=Counter)
    damaged: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, stats: WarcFileStats) -> None:
        self.files += 1
        self.unreadable_files += stats.error is not None
        self.records += stats.records
        self.indexed += stats.indexed
        self.ignored.update(stats.ignored)
        self.skipped.update(stats.skipped)
        self.warnings.update(stats.warnings)
        if stats.damage():
            self.damaged[stats.path] = stats.damage()

    def format(self) -> str:
        """One line of totals, then one line per damaged file."""
        line = f"{self.files} WARC files, {self.indexed} captures indexed"
        if self.skipped:
            line += f", skipped {_format_counts(self.skipped)}"
        if self.unreadable_files:
            line += f", {self.unreadable_files} unreadable files"
        for path, damage in self.damaged.items():
            line += f"\n  damaged: {path}: {_format_counts(Counter(damage))} (the records before the damage are kept)"
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


def _format_counts(counts: Counter[str]) -> str:
    return ", ".join(f"{name}={count}" for name, count in sorted(counts.items()))


class _NotMemberAligned(Exception):
    """A gzip file whose members are not one per record: read it again as one stream."""


class _StrictReader(DecompressingBufferedReader):
    """warcio's reader prints a gzip member's decompression error to stderr and returns nothing for the rest of it,
    so the record looks truncated and the file's later records are lost; raise the error instead, so that the
    record is counted ``corrupt_record`` and reading resumes at the next member."""

    def _decompress(self, data: bytes) -> bytes:
        if self.decompressor and data and self.num_block_read:  # inside a member: warcio would swallow the error
            return self.decompressor.decompress(data)
        return super()._decompress(data)


class _GzipStream:
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

    def __enter__(self) -> _GzipStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _QuietArchiveIterator(ArchiveIterator):
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


def _normalize_date(value: str | None) -> tuple[str | None, str]:
    """(date to store, sort key): ISO 8601 UTC for a parseable WARC-Date; the raw value and "" otherwise."""
    if not value:
        return None, ""
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return value, ""
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    iso = parsed.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return iso, iso


def _detect_layout(handle: BinaryIO) -> str:
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
    except _RECORD_ERRORS:
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


def _http_content_type(record) -> str | None:
    if record.http_headers is not None:
        return record.http_headers.get_header("Content-Type")
    return record.rec_headers.get_header("Content-Type")


def _scan_records(
    stream: BinaryIO, path: str, layout: str, stats: WarcFileStats,
    handle: Callable[[Any, ArchiveIterator], tuple[_T | None, bool]],
) -> Iterator[_T]:
    """What `handle` makes of each record of `stream`, resynchronising after a bad record (see the module docstring).

    `handle(record, iterator)` reads the record (to its end, or not at all) and returns ``(result or None, whether
    the record was truncated)``; its results that are not ``None`` are yielded. A record that cannot be parsed or
    decompressed is counted ``corrupt_record`` in `stats`.

    Raises:
        _NotMemberAligned: a `gzip-members` file whose members do not hold one record each.
    """
    # ARC files need warcio's ARC->WARC conversion; a WARC file is parsed as WARC only, so that garbage
    # inside it is reported instead of being taken for an ARC header line
    arc = not _starts_with_warc(stream, layout)
    position: int | None = 0
    while position is not None:
        stream.seek(position)
        iterator = _QuietArchiveIterator(stream, arc2warc=arc)
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
        except _RECORD_ERRORS as error:
            failed_at = iterator.offset
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            if layout == "gzip-members" and ("non-chunked" in str(error) or previous_truncated):
                raise _NotMemberAligned from None
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
    """What `handle` makes of each record of the WARC/ARC/WET file `path`, read as :class:`WarcIndex` reads it
    (layout detected, bad records skipped and counted in `stats`, reading resumed after them; a gzip file that is
    not one member per record read again as one stream, without yielding again what was yielded).

    `handle(record, iterator)` reads the record (to its end, or not at all) and returns ``(result or None, whether
    the record was truncated)``; the results that are not ``None`` are yielded.

    Raises:
        OSError: the file cannot be opened.
    """
    with open(path, "rb") as handle_file:
        stats.layout = _detect_layout(handle_file)
        yielded = 0
        try:
            for result in _scan_records(handle_file, str(path), stats.layout, stats, handle):
                yielded += 1
                yield result
            return
        except _NotMemberAligned:
            pass
        for name, value in WarcFileStats(path=stats.path, layout="gzip-stream").__dict__.items():
            setattr(stats, name, value)  # the counts start again with the second reading
        handle_file.seek(0)
        with _GzipStream(handle_file) as stream:
            for position, result in enumerate(_scan_records(stream, str(path), "gzip-stream", stats, handle)):
                if position >= yielded:
                    yield result


class WarcIndex:
    """Normalized URL -> WARC capture, stored in SQLite.

    `WarcIndex(path)` opens (or creates) the index at `path`; `WarcIndex()` keeps it in memory. Build with
    :meth:`add` / :meth:`add_many` or the :meth:`build` shortcut; files already indexed (same size and
    modification time) are not read again, so an interrupted build resumes. Pickles as its path, for worker
    processes (an in-memory index cannot be pickled).
    """

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._connect()

    def _connect(self) -> None:
        target = ":memory:" if self.path is None else str(self.path)
        try:
            self._db = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as error:
            raise ValueError(f"{target}: not a WARC index ({error})") from None

    # ---- pickling / context -------------------------------------------------------------------------------

    def __getstate__(self) -> dict:
        if self.path is None:
            raise TypeError("an in-memory WarcIndex cannot be pickled: give it a path")
        return {"path": self.path}

    def __setstate__(self, state: dict) -> None:
        self.path = state["path"]
        self._lock = threading.Lock()
        self._connect()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> WarcIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM captures").fetchone()[0]

    def __repr__(self) -> str:
        return f"WarcIndex({str(self.path) if self.path else ':memory:'!r})"

    # ---- building -----------------------------------------------------------------------------------------

    @classmethod
    def build(
        cls, warc_paths: Iterable[str | os.PathLike], path: str | os.PathLike | None = None, progress: bool = False
    ) -> WarcIndex:
        """Open (or create) the index at `path` and add every file of `warc_paths` not indexed yet."""
        index = cls(path)
        index.add_many(warc_paths, progress=progress)
        return index

    def add_many(self, warc_paths: Iterable[str | os.PathLike], progress: bool = False) -> list[WarcFileStats]:
        """Index several files (a tqdm bar when `progress`); returns each file's statistics."""
        paths = list(warc_paths)
        if progress:
            from tqdm.auto import tqdm

            paths = tqdm(paths, desc="indexing WARC files", unit="file")
        return [self.add(path) for path in paths]

    def add(self, warc_path: str | os.PathLike, force: bool = False) -> WarcFileStats:
        """Index one WARC/ARC file (skipped when already indexed unchanged, unless `force`).

        Never raises for bad content: a file that cannot be opened is reported in `WarcFileStats.error`.
        """
        path = str(Path(warc_path).resolve())
        try:
            stat = os.stat(path)
        except OSError as error:
            stats = WarcFileStats(path=path, error=f"cannot open: {error.strerror or error}")
            logger.warning("%s: %s", path, stats.error)
            return stats
        with self._lock:
            row = self._db.execute("SELECT id, size, mtime_ns, stats FROM files WHERE path = ?", (path,)).fetchone()
        if row and not force and row[1] == stat.st_size and row[2] == stat.st_mtime_ns:
            return WarcFileStats.from_json(row[3])
        with self._lock:
            self._db.execute("BEGIN")
            try:
                if row:
                    self._db.execute("DELETE FROM captures WHERE file_id = ?", (row[0],))
                    self._db.execute("DELETE FROM files WHERE id = ?", (row[0],))
                file_id = self._db.execute(
                    "INSERT INTO files (path, size, mtime_ns) VALUES (?, ?, ?)", (path, stat.st_size, stat.st_mtime_ns)
                ).lastrowid
                stats = self._index_file(path, file_id)
                self._db.execute(
                    "UPDATE files SET layout = ?, stats = ? WHERE id = ?", (stats.layout, stats.to_json(), file_id)
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        if stats.skipped or stats.error:
            logger.info("%s", stats.format())
        return stats

    def _index_file(self, path: str, file_id: int) -> WarcFileStats:
        try:
            with open(path, "rb") as handle:
                layout = _detect_layout(handle)
                try:
                    return self._scan(handle, path, file_id, layout)
                except _NotMemberAligned:
                    self._db.execute("DELETE FROM captures WHERE file_id = ?", (file_id,))
                    handle.seek(0)
                    with _GzipStream(handle) as stream:
                        return self._scan(stream, path, file_id, "gzip-stream")
        except OSError as error:
            self._db.execute("DELETE FROM captures WHERE file_id = ?", (file_id,))
            return WarcFileStats(path=path, error=f"cannot read: {error}")

    def _scan(self, stream: BinaryIO, path: str, file_id: int, layout: str) -> WarcFileStats:
        """Index every record of `stream` (:func:`_scan_records`: bad records are skipped, reading resumes)."""
        stats = WarcFileStats(path=path, layout=layout)
        rows: list[tuple] = []
        not_get: set[str] = set()  # record ids of responses to POST/PUT/... requests

        def index(record, iterator: ArchiveIterator) -> tuple[None, bool]:
            if record.rec_type == "request" and record.http_headers is not None:
                method = (record.http_headers.protocol or "").upper()
                if method not in ("GET", "HEAD") and record.rec_headers.get_header("WARC-Concurrent-To"):
                    not_get.add(record.rec_headers.get_header("WARC-Concurrent-To").strip())
            truncated = self._index_record(record, iterator, stats, rows, file_id)
            if len(rows) >= 1000:
                self._insert(rows)
            return None, truncated

        for _ in _scan_records(stream, path, layout, stats, index):
            pass
        self._insert(rows)
        if not_get:
            # the response to a POST is not the page a citation links to (its request may come before or after it)
            removed = 0
            ids = sorted(not_get)
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                removed += self._db.execute(
                    f"DELETE FROM captures WHERE file_id = ? AND record_id IN ({', '.join('?' * len(chunk))})",
                    (file_id, *chunk),
                ).rowcount
            stats.indexed -= removed
            if removed:
                stats.ignored["non_get_response"] += removed
        return stats

    def _insert(self, rows: list[tuple]) -> None:
        self._db.executemany("INSERT INTO captures VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        rows.clear()

    @staticmethod
    def _index_record(
        record, iterator: ArchiveIterator, stats: WarcFileStats, rows: list[tuple], file_id: int
    ) -> bool:
        """Classify and store one record; returns whether it was truncated."""
        rec_type = record.rec_type
        if rec_type not in CAPTURE_TYPES:
            stats.ignored[rec_type or "unknown"] += 1
            return False
        warnings_before = iterator.err_count
        offset, length = iterator.get_record_offset(), iterator.get_record_length()  # reads the record to its end
        truncated = getattr(record.raw_stream, "limit", 0) > 0
        uri = record.rec_headers.get_header("WARC-Target-URI")
        content_length = record.rec_headers.get_header("Content-Length")
        if not uri:
            reason = "missing_target_uri"
        elif not uri.lower().startswith(("http://", "https://")):
            stats.ignored["non_http_uri"] += 1
            return truncated
        elif content_length is not None and not content_length.strip().isdigit():
            reason = "bad_content_length"
        elif truncated:
            reason = "truncated"
        elif rec_type == "response" and record.http_headers is None:
            reason = "no_http_headers"
        else:
            reason = None
        status = 200
        if reason is None and rec_type == "response":
            try:
                status = int(record.http_headers.get_statuscode())
                if not 100 <= status <= 599:
                    raise ValueError(status)
            except (TypeError, ValueError):
                reason = "bad_http_status"
        key = None
        if reason is None:
            try:
                key = url_key(uri)
            except ValueError:
                reason = "bad_target_uri"
        if reason is not None:
            stats.skipped[reason] += 1
            return truncated
        if iterator.err_count > warnings_before:
            stats.warnings["content_length_mismatch"] += 1
        date, date_key = _normalize_date(record.rec_headers.get_header("WARC-Date"))
        if date and not date_key:
            stats.warnings["bad_date"] += 1
        if record.rec_headers.get_header("WARC-Truncated"):
            stats.warnings["declared_truncated"] += 1  # e.g. Common Crawl's 1 MiB limit: the page may be cut
        location = None
        if 300 <= status < 400 and record.http_headers is not None:
            location = record.http_headers.get_header("Location")
        record_id = (record.rec_headers.get_header("WARC-Record-ID") or "").strip() or None
        rows.append((key, uri, file_id, offset, length, date, date_key, status, _http_content_type(record),
                     location, rec_type, record_id))
        stats.indexed += 1
        return False

    # ---- statistics ---------------------------------------------------------------------------------------

    def file_stats(self) -> list[WarcFileStats]:
        """Statistics of every indexed file, in indexing order."""
        with self._lock:
            rows = self._db.execute("SELECT stats FROM files WHERE stats IS NOT NULL ORDER BY id").fetchall()
        return [WarcFileStats.from_json(row[0]) for row in rows]

    @property
    def stats(self) -> IndexStats:
        """Totals over all indexed files."""
        totals = IndexStats()
        for stats in self.file_stats():
            totals.add(stats)
        return totals

    # ---- lookup and reading -------------------------------------------------------------------------------

    def captures(self, url: str) -> list[WarcCapture]:
        """All captures stored for `url`'s key, best first (200 before others, then latest first)."""
        try:
            key = url_key(url)
        except ValueError:
            return []
        with self._lock:
            rows = self._db.execute(
                "SELECT c.url, f.path, c.offset, c.length, c.date, c.status, c.content_type, c.location, "
                "c.record_type, f.layout FROM captures c JOIN files f ON f.id = c.file_id WHERE c.url_key = ? "
                "ORDER BY c.status = 200 DESC, c.date_key DESC, c.file_id DESC, c.offset DESC",
                (key,),
            ).fetchall()
        return [WarcCapture(*row) for row in rows]

    def lookup(self, url: str, max_redirects: int = 5, near: datetime | None = None) -> WarcCapture | None:
        """The capture that answers `url`: its latest 200 capture, else the latest 200 at the end of captured
        redirects (at most `max_redirects` hops), else its latest capture of any status; None when not archived.
        With `near` (the citation's access-date or date), the 200 capture and the redirect followed are the ones
        nearest that time instead of the latest (:func:`~wikiref_dataset.web.captures.choose_capture`)."""
        chain: list[str] = []
        seen: set[str] = set()
        fallback: WarcCapture | None = None
        current = url
        for _ in range(max_redirects + 1):
            found = self.captures(current)
            if not found:
                break
            seen.add(url_key(current))
            best = found[0]
            if best.status == 200:
                if near is not None:
                    best = choose_capture([c for c in found if c.status == 200], near, _time_of)
                return replace(best, redirected_from=tuple(chain))
            if fallback is None:
                fallback = replace(best, redirected_from=tuple(chain))
            redirects = [c for c in found if 300 <= c.status < 400 and c.location]
            redirect = choose_capture(redirects, near, _time_of) if near is not None else next(iter(redirects), None)
            if redirect is None:
                break
            chain.append(redirect.url)
            current = urljoin(redirect.url, redirect.location.strip())
            try:
                if url_key(current) in seen:
                    break
            except ValueError:
                break
        return fallback

    def read(self, capture: WarcCapture, max_bytes: int = 20_000_000) -> bytes:
        """The HTTP body of `capture` (payload of a `resource` record), transfer- and content-decoded.

        Raises:
            WarcReadError: the file or record cannot be read (reason `read_error`), or the decoded body exceeds
                `max_bytes` (reason `too_large`).
        """
        try:
            with open(capture.path, "rb") as handle:
                stream: BinaryIO = handle
                if capture.layout == "gzip-stream":
                    stream = gzip.GzipFile(fileobj=handle)
                stream.seek(capture.offset)
                iterator = _QuietArchiveIterator(stream, arc2warc=True)
                record = next(iter(iterator))
                uri = record.rec_headers.get_header("WARC-Target-URI")
                if uri != capture.url:
                    raise WarcReadError(
                        f"{capture.record}: expected a record for {capture.url}, found {uri!r} (file changed since "
                        "it was indexed?)"
                    )
                return _read_capped(record.content_stream(), max_bytes, capture.record)
        except WarcReadError:
            raise
        except (*_RECORD_ERRORS, StopIteration) as error:
            raise WarcReadError(f"{capture.record}: cannot read the record ({type(error).__name__}: {error})") from None

    def iter_captures(self) -> Iterator[WarcCapture]:
        """Every stored capture (for inspection and statistics)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT c.url, f.path, c.offset, c.length, c.date, c.status, c.content_type, c.location, "
                "c.record_type, f.layout FROM captures c JOIN files f ON f.id = c.file_id ORDER BY c.rowid"
            ).fetchall()
        for row in rows:
            yield WarcCapture(*row)


def _time_of(capture: WarcCapture) -> datetime | None:
    return capture_time(capture.date)


def _read_capped(stream: BinaryIO, max_bytes: int, where: str) -> bytes:
    parts = []
    total = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            return b"".join(parts)
        total += len(chunk)
        if total > max_bytes:
            raise WarcReadError(f"{where}: body exceeds {max_bytes:,} bytes after decoding", reason="too_large")
        parts.append(chunk)
