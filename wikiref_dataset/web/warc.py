"""WARC/ARC archives as the offline source of cited pages: an on-disk index from normalized URL to capture.

:class:`WarcIndex` streams any number of WARC (or ARC) files — Common Crawl segments or the user's own crawl,
uncompressed or gzip-compressed one record per member — and stores, for every usable capture, its
:func:`~wikiref_dataset.web.urls.url_key` and where it lies (file, offset, length) with its date, HTTP status,
content type and redirect target. The index is a SQLite database (standard library): a Common-Crawl-sized index
lives on disk, not in memory, is reopened by later runs and is shared read-only by worker processes. Record
bodies are not read while indexing (memory per record is constant); :meth:`WarcIndex.read` reads one body back
by offset, with chunked transfer-encoding and gzip/deflate content-encoding decoded by warcio. Files are read with
the recovery of :mod:`~wikiref_dataset.web.warc_scan`: a bad record is skipped and counted, never the rest of its
file (:class:`WarcFileStats`, per file; :class:`IndexStats`, over the index).

Lookup prefers the latest 200 capture of a URL (given the citation's date, the one nearest it:
:mod:`~wikiref_dataset.web.captures`); when there is none, a captured redirect (3xx with Location) is followed
inside the archive (at most ``max_redirects`` hops, loops stopped); failing that the latest capture of
any status is returned so the caller can report it.
"""

from __future__ import annotations

import gzip
import logging
import os
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urljoin

from warcio.archiveiterator import ArchiveIterator

from .captures import capture_time, choose_capture
from .urls import url_key
from .warc_scan import (
    DAMAGE_REASONS,
    RECORD_ERRORS,
    GzipStream,
    NotMemberAligned,
    QuietArchiveIterator,
    WarcFileStats,
    detect_layout,
    format_counts,
    iter_warc_records,
    scan_records,
    warc_damage_counts,
)

logger = logging.getLogger(__name__)

__all__ = ["DAMAGE_REASONS", "IndexStats", "WarcCapture", "WarcFileStats", "WarcIndex", "WarcReadError",
           "iter_warc_records", "warc_damage_counts"]

CAPTURE_TYPES = ("response", "resource")
"""WARC record types that hold a page (`revisit` records hold none: they point at an earlier capture)."""

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
        layout (`str`): `uncompressed`, `gzip-members` or `gzip-stream` (see :mod:`~wikiref_dataset.web.warc_scan`).
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
            line += f", skipped {format_counts(self.skipped)}"
        if self.unreadable_files:
            line += f", {self.unreadable_files} unreadable files"
        for path, damage in self.damaged.items():
            line += f"\n  damaged: {path}: {format_counts(Counter(damage))} (the records before the damage are kept)"
        return line


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


def _http_content_type(record) -> str | None:
    if record.http_headers is not None:
        return record.http_headers.get_header("Content-Type")
    return record.rec_headers.get_header("Content-Type")


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
                layout = detect_layout(handle)
                try:
                    return self._scan(handle, path, file_id, layout)
                except NotMemberAligned:
                    self._db.execute("DELETE FROM captures WHERE file_id = ?", (file_id,))
                    handle.seek(0)
                    with GzipStream(handle) as stream:
                        return self._scan(stream, path, file_id, "gzip-stream")
        except OSError as error:
            self._db.execute("DELETE FROM captures WHERE file_id = ?", (file_id,))
            return WarcFileStats(path=path, error=f"cannot read: {error}")

    def _scan(self, stream: BinaryIO, path: str, file_id: int, layout: str) -> WarcFileStats:
        """Index every record of `stream` (:func:`scan_records`: bad records are skipped, reading resumes)."""
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

        for _ in scan_records(stream, path, layout, stats, index):
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
                iterator = QuietArchiveIterator(stream, arc2warc=True)
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
        except (*RECORD_ERRORS, StopIteration) as error:
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
