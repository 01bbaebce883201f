"""Common Crawl (or any CDX-indexed web archive) as a source of cited pages: look each URL up in an index, choose
the capture, read its WARC record by byte range.

Two ways to look pages up:

* **Per URL, on a CDX index server** (:class:`CdxServer`; small builds) — the API that Common Crawl's index server
  (``https://index.commoncrawl.org/<crawl>-index``), pywb (``http://host/<collection>/cdx``) and the Wayback Machine
  speak. Queries follow the project's retry rule (:mod:`~wikiref_dataset.web.faults`: 429/5xx, resets, refused
  connections, stalls and cut bodies retried with exponential backoff, ``Retry-After`` honoured, every fault counted
  by kind), spaced per host by cdx_toolkit's politeness table (1 s for Common Crawl's server, 3 s for others), and
  are parsed by cdx_toolkit's response parser (``cdx_to_captures``: pywb's JSON lines, the Wayback Machine's JSON
  table). Not through cdx_toolkit's request layer (``myrequests_get``): it retries 429 and 5xx answers without limit
  and connection failures with fixed waits, ignores ``Retry-After``, and counts nothing. Nor through its
  ``CDXFetcher``: with ``source="cc"`` it first downloads Common Crawl's
  ``collinfo.json`` and refuses a server listing fewer than 60 crawls (no other server can stand in for it), its
  ``get()`` fails on the empty 200 answer pywb gives for a URL without captures, and its ``iter()`` pages with
  ``page=``, which pywb ignores (the iteration never ends). Several crawls are several endpoints, asked in the order
  given (newest first); without a citation date the first crawl with a 200 capture answers, with one every crawl is
  asked so that the nearest capture can be chosen.
* **All URLs at once, joined with Common Crawl's columnar URL index** (:class:`ColumnarIndex`; full builds) — Parquet
  files with the columns ``url_surtkey, url, fetch_time, fetch_status, fetch_redirect, content_mime_type,
  content_mime_detected, warc_filename, warc_record_offset, warc_record_length`` and the hive partitions
  ``crawl=``/``subset=``, joined in DuckDB with the cited URLs keyed as the index keys them: their SURT (the ``surt``
  package, the Internet Archive canonicalizer Common Crawl's indexer follows). Local copies are read by DuckDB's own
  Parquet reader; remote files (``http(s)://``, ``s3://``) through fsspec as a pyarrow dataset that DuckDB scans (no
  DuckDB extension to download). A remote scan still reads every row group's key column: for a whole crawl, copy
  the index first.

Choosing (:meth:`CommonCrawl.resolve`): among a URL's 200 captures whose type is not known to be other than HTML, the
one nearest the citation's access-date, else its date, else the newest (:mod:`~wikiref_dataset.web.captures`).
Without a 200 capture, a 3xx capture (chosen the same way) is followed to its ``Location`` — from the index when it
records it (Common Crawl's ``redirect`` / ``fetch_redirect``), else read from the 3xx record — and the target looked
up again, at most ``max_redirects`` hops, loops stopped; the final URL is recorded.

Reading (:class:`WarcRecordReader`): ``length`` bytes at ``offset`` of the WARC file the index names, from a URL
prefix (``https://data.commoncrawl.org``) with an HTTP ``Range`` request or from a local folder, parsed with warcio
(chunked transfer and gzip/deflate/brotli content encodings decoded). Hand-written on ``requests`` rather than
cdx_toolkit's ``fetch_warc_record``: that one spaces all requests to a host by one global interval (3 s for hosts
other than Common Crawl's) shared by every thread, retries a connection failure for up to 100 minutes, has no size
cap and reads no local files. Reads follow the same retry rule as lookups.

Every URL ends with one outcome (:data:`OUTCOMES`): ``found``, ``not_captured``, ``non_200`` (only 404s, 5xx or a
redirect whose target is not captured), ``not_html``, ``fetch_failed`` (the record could not be read) or
``lookup_failed`` (the index server failed for it or refused it). A ``fetch_failed`` or ``lookup_failed`` that
the network caused (still failing after the retries) is marked :attr:`CrawlResult.transient`: the documents stage
records it as failed, never as not captured, and a rerun of the build asks again. An index server that fails
:attr:`CdxServer.max_failures`
lookups in a row raises :class:`IndexUnavailableError` instead: the task stops, and a rerun resumes it.
"""

from __future__ import annotations

import bisect
import gzip
import io
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import astuple, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..utils.formatting import format_seconds
from .captures import capture_time, choose_capture, iso_utc
from .extract import is_html_content_type, media_type
from .faults import IncompleteBody, NetworkFault, NetworkFaults, get_with_retries
from .http import HostSpacing, _atomic_write
from .urls import normalize_url, unwrap_wayback, url_key
from .warc import WarcReadError

logger = logging.getLogger(__name__)

__all__ = [
    "COMMON_CRAWL_DATA", "COMMON_CRAWL_INDEX", "OUTCOMES", "CaptureRequest", "CdxServer", "ColumnarIndex",
    "CaptureTable", "CommonCrawl", "CommonCrawlConfig", "CrawlResult", "IndexFiles", "IndexLookupError",
    "IndexUnavailableError", "IndexedCapture", "ArchivedResponse", "WarcRecordReader", "file_key_ranges",
    "files_for_keys", "index_files", "index_shares", "join_index_share", "surt_key", "url_keys_table",
]  # fmt: skip

COMMON_CRAWL_INDEX = "https://index.commoncrawl.org"
"""Common Crawl's CDX index server; crawl ``C`` is served at ``<this>/C-index``."""
COMMON_CRAWL_DATA = "https://data.commoncrawl.org"
"""Where Common Crawl's WARC files are served (the index's ``filename``/``warc_filename`` are relative to it)."""

OUTCOMES = ("found", "not_captured", "non_200", "not_html", "fetch_failed", "lookup_failed")
"""What happened to one URL (see the module docstring)."""

_CRAWL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_UNKNOWN_TYPES = ("", "unk", "-", "application/octet-stream", "unknown")
_USER_AGENT = "wikiref-documents/0.1 (research dataset builder)"


def thread_session(local: threading.local) -> Any:
    """The ``requests`` session of this thread kept on ``local`` (made on first use): the project's User-Agent, and no
    proxy from the environment (the servers are given explicitly). Sessions are not shared between threads."""
    session = getattr(local, "session", None)
    if session is None:
        import requests

        session = local.session = requests.Session()
        session.trust_env = False
        session.headers["User-Agent"] = _USER_AGENT
    return session


class IndexLookupError(Exception):
    """One lookup failed (the message names the index and the URL). `answered`: the server answered (it refused
    this URL), as opposed to not answering at all."""

    def __init__(self, message: str, answered: bool = False) -> None:
        super().__init__(message)
        self.answered = answered


class IndexUnavailableError(RuntimeError):
    """The index server failed too many lookups in a row: the task stops (a rerun resumes it)."""


# ----------------------------------------------------------------------------------------------------------------
# Settings and records
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class CommonCrawlConfig:
    """Where to look cited pages up in Common Crawl (or another CDX-indexed archive) and how.

    Args:
        crawls (`tuple[str, ...]`): crawls to use, newest first (``("CC-MAIN-2024-10", "CC-MAIN-2023-50")``; a
            comma-separated string is split). Needed for Common Crawl's index server; with `cc_index`, keeps only
            those crawls' rows.
        cdx_api (`str`, *optional*): a CDX index server. ``{crawl}`` in it is replaced by each crawl
            (``http://localhost:8080/{crawl}/cdx`` for pywb collections named after crawls); otherwise, with
            `crawls`, ``/<crawl>-index`` is appended (Common Crawl's layout); without crawls it is the one endpoint.
            Defaults to Common Crawl's server when `crawls` are given and `cc_index` is not.
        cc_index (`str`, *optional*): Common Crawl's columnar URL index (Parquet): a folder (searched recursively;
            ``crawl=``/``subset=`` folders are read as columns), a file, a glob, a ``.paths``/``.paths.gz`` listing
            of files relative to `cc_data` (as Common Crawl publishes ``cc-index-table.paths.gz``), or
            ``http(s)://``/``s3://`` URLs of files.
        cc_data (`str`, defaults to ``https://data.commoncrawl.org``): where the WARC files named by the index are: a
            URL prefix (HTTP Range requests) or a local folder.
        lookup_workers (`int`, defaults to 8): CDX lookups and record reads running at once in one task.
        cdx_min_interval_s (`float`, *optional*): least seconds between two requests to one CDX server in one process
            (default: cdx_toolkit's: 1 s for Common Crawl's server, 3 s for other servers).
        max_redirects (`int`, defaults to 5): captured redirects followed per URL.
        timeout_s (`float`, defaults to 30): seconds to connect and between bytes (a stalled response), for CDX
            lookups and record reads.
        retries (`int`, defaults to 5): retries of one CDX lookup or record read after a fault (429/5xx, reset,
            timeout, cut body; :mod:`~wikiref_dataset.web.faults`).
        backoff_s (`float`, defaults to 1): seconds before the first retry, doubled for each next one; a longer
            ``Retry-After`` wins.
        max_retry_after_s (`float`, defaults to 60): longest ``Retry-After`` honoured.
        max_record_bytes (`int`, defaults to 20,000,000): largest record read, and largest decoded body.
    """

    crawls: tuple[str, ...] = field(
        default=(), metadata={"help": "Common Crawl crawls to use, newest first (CC-MAIN-2024-10,CC-MAIN-2023-50)."})
    cdx_api: str | None = field(
        default=None,
        metadata={"help": "CDX index server; {crawl} in it is replaced by each crawl, else /<crawl>-index is appended "
                          "(default with --crawl: https://index.commoncrawl.org)."})
    cc_index: str | None = field(
        default=None,
        metadata={"help": "Common Crawl columnar URL index (Parquet): folder, file, glob, .paths[.gz] listing or "
                          "URLs; joined with all cited URLs in DuckDB."})
    cc_data: str = field(
        default=COMMON_CRAWL_DATA,
        metadata={"help": "Where the WARC files named by the index are: URL prefix (Range requests) or local folder."})
    lookup_workers: int = field(default=8, metadata={"help": "CDX lookups and record reads at once, per task."})
    cdx_min_interval_s: float | None = field(
        default=None, metadata={"help": "Least seconds between requests to one CDX server (default: none for a server "
                                        "on the loopback interface, else cdx_toolkit's: 1 s for Common Crawl's index, "
                                        "3 s for others)."})
    max_redirects: int = field(default=5, metadata={"help": "Captured redirects followed per URL."})
    timeout_s: float = field(
        default=30.0, metadata={"help": "Seconds to connect, and a response may stall, for CDX lookups and record reads."})
    retries: int = field(
        default=5, metadata={"help": "Retries of a CDX lookup or record read after a 429/5xx, reset, timeout or cut body."})
    backoff_s: float = field(
        default=1.0, metadata={"help": "Seconds before the first retry, doubled for each next one (or the server's "
                                       "Retry-After, when longer)."})
    max_retry_after_s: float = field(default=60.0, metadata={"help": "Longest Retry-After honoured, in seconds."})
    max_record_bytes: int = field(default=20_000_000, metadata={"help": "Largest record (and decoded body) read."})

    def __post_init__(self) -> None:
        crawls = self.crawls
        if isinstance(crawls, str):
            crawls = (crawls,)
        self.crawls = tuple(name.strip() for item in crawls for name in str(item).split(",") if name.strip())
        bad = [name for name in self.crawls if not _CRAWL_NAME.match(name)]
        if bad:
            raise ValueError(f"crawls: not crawl names: {bad} (expected names such as CC-MAIN-2024-10)")
        if len(set(self.crawls)) != len(self.crawls):
            raise ValueError(f"crawls: a crawl is named twice: {list(self.crawls)}")
        if self.cdx_api and self.cc_index:
            raise ValueError("give a CDX server (cdx_api) or a columnar index (cc_index), not both")
        if not (self.crawls or self.cdx_api or self.cc_index):
            raise ValueError("Common Crawl needs crawls, a CDX server (cdx_api) or a columnar index (cc_index)")
        if self.cdx_api is not None:
            if not self.cdx_api.lower().startswith(("http://", "https://")):
                raise ValueError(f"cdx_api must be an http(s) URL, got {self.cdx_api!r}")
            if "{crawl}" in self.cdx_api and not self.crawls:
                raise ValueError(f"cdx_api {self.cdx_api!r} has a {{crawl}} placeholder but no crawl is given")
        if not self.cc_data:
            raise ValueError("cc_data must name a URL prefix or a folder")
        for name in ("lookup_workers", "max_record_bytes"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        for name in ("max_redirects", "retries"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {getattr(self, name)!r}")
        if self.timeout_s <= 0 or (self.cdx_min_interval_s is not None and self.cdx_min_interval_s < 0):
            raise ValueError("timeout_s must be > 0 and cdx_min_interval_s >= 0")
        if self.backoff_s < 0 or self.max_retry_after_s < 0:
            raise ValueError("backoff_s and max_retry_after_s must be >= 0")

    @property
    def uses_columnar_index(self) -> bool:
        return self.cc_index is not None

    def cdx_endpoints(self) -> list[tuple[str, str | None]]:
        """(endpoint URL, crawl) of every CDX endpoint, in the order they are asked."""
        api = self.cdx_api or COMMON_CRAWL_INDEX
        if "{crawl}" in api:
            return [(api.replace("{crawl}", crawl), crawl) for crawl in self.crawls]
        if self.crawls:
            return [(f"{api.rstrip('/')}/{crawl}-index", crawl) for crawl in self.crawls]
        return [(api, None)]

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON-ready values (``build.json``, the rerun check)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}


@dataclass(frozen=True)
class IndexedCapture:
    """One capture as an index lists it.

    Args:
        url (`str`): the captured URL (the record's WARC-Target-URI).
        timestamp (`str`): capture time, ISO 8601 UTC.
        status (`int`, *optional*): HTTP status (None for revisit records and unknown statuses).
        mime (`str`, *optional*): the detected media type when the index gives one, else the Content-Type's.
        filename (`str`): the WARC file, relative to :attr:`CommonCrawlConfig.cc_data`.
        offset (`int`, *optional*), length (`int`, *optional*): where the (gzip member of the) record lies.
        redirect (`str`, *optional*): a 3xx capture's Location, when the index records it.
        crawl (`str`, *optional*): the crawl it belongs to.
    """

    url: str
    timestamp: str
    status: int | None
    mime: str | None
    filename: str
    offset: int | None
    length: int | None
    redirect: str | None = None
    crawl: str | None = None

    @property
    def record(self) -> str:
        """``filename:offset``, to name the record in messages."""
        return f"{self.filename}:{self.offset}"

    @property
    def time(self) -> datetime | None:
        return capture_time(self.timestamp)


@dataclass(frozen=True)
class CaptureRequest:
    """A URL to resolve, and the day whose capture is wanted (the citation's access-date or date; None: newest)."""

    url: str
    near: datetime | None = None


@dataclass
class CrawlResult:
    """What resolving one URL gave.

    Args:
        url (`str`): the URL asked for.
        outcome (`str`): one of :data:`OUTCOMES`.
        capture (:class:`IndexedCapture`, *optional*): the capture read (`found`), or the one that decided the
            outcome (the nearest non-200 capture, the non-HTML one, the record that could not be read).
        final_url (`str`, *optional*): the captured URL that answered, after the redirects followed.
        http_status (`int`, *optional*): the HTTP status of `capture`.
        content_type (`str`, *optional*): the Content-Type of the record read.
        body (`bytes`, *optional*): the decoded body (`found` only).
        redirects (`tuple[str, ...]`): the captured URLs that redirected, in order.
        detail (`str`): what went wrong, naming the URL, the index or the record.
        transient (`bool`): a `lookup_failed` or `fetch_failed` caused by the network (still failing after the
            retries), which a later run may get past; `False` for a refused lookup or a damaged record.
    """

    url: str
    outcome: str
    capture: IndexedCapture | None = None
    final_url: str | None = None
    http_status: int | None = None
    content_type: str | None = None
    body: bytes | None = None
    redirects: tuple[str, ...] = ()
    detail: str = ""
    transient: bool = False


@dataclass
class ArchivedResponse:
    """An HTTP response read back from a WARC record."""

    target_uri: str
    status: int
    content_type: str | None
    location: str | None
    body: bytes


def surt_key(url: str) -> str:
    """The SURT form of `url` (``com,example)/a?b=1``), as Common Crawl's ``url_surtkey`` and CDX ``urlkey`` are."""
    import surt

    return surt.surt(url)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _is_known_non_html(mime: str | None) -> bool:
    kind = media_type(mime)
    return kind not in _UNKNOWN_TYPES and not kind.startswith("warc/") and not is_html_content_type(kind)


def _time_of(capture: IndexedCapture) -> datetime | None:
    return capture.time


# ----------------------------------------------------------------------------------------------------------------
# Per-URL lookups: CDX servers
# ----------------------------------------------------------------------------------------------------------------


class CdxServer:
    """Looks URLs up on one or more CDX endpoints (one per crawl), under the project's retry rule (see the module
    docstring).

    Args:
        endpoints (`Sequence[tuple[str, str | None]]`): (endpoint URL, crawl name), asked in this order.
        min_interval_s (`float`, *optional*): least seconds between two requests to one endpoint host, in this
            process (default: none for a host on the loopback interface, one's own server; else cdx_toolkit's
            per-host table: 1 s for Common Crawl's index server, 3 s for others).
        retries (`int`): retries of a lookup after a fault (429/5xx, reset, refused, timeout, cut body).
        limit (`int`): most captures asked per URL and endpoint.
        max_failures (`int`): lookups failed in a row after which :class:`IndexUnavailableError` is raised.
        timeout_s (`float`): seconds to connect and between bytes of an answer.
        backoff_s (`float`), max_retry_after_s (`float`): the wait before a retry
            (:func:`~wikiref_dataset.web.faults.retry_delay`).
        faults (:class:`~wikiref_dataset.web.faults.NetworkFaults`, *optional*): where faults are counted (as
            ``cdx/<kind>``); a new counter by default.
    """

    def __init__(self, endpoints: Sequence[tuple[str, str | None]], min_interval_s: float | None = None,
                 retries: int = 5, limit: int = 1000, max_failures: int = 20, timeout_s: float = 30.0,
                 backoff_s: float = 1.0, max_retry_after_s: float = 60.0, faults: NetworkFaults | None = None) -> None:
        if not endpoints:
            raise ValueError("CdxServer needs at least one endpoint")
        self.endpoints = list(endpoints)
        self.retries = retries
        self.limit = limit
        self.max_failures = max_failures
        self.timeout_s = timeout_s
        self.backoff_s = backoff_s
        self.max_retry_after_s = max_retry_after_s
        self.faults = faults if faults is not None else NetworkFaults()
        self.requests = 0
        self._failures = 0
        self._lock = threading.Lock()
        self._spacing = HostSpacing()
        self._given_interval = min_interval_s
        self._intervals = {host: _cdx_interval(host, min_interval_s)
                           for host in {urlsplit(endpoint).hostname or "" for endpoint, _ in self.endpoints}}
        self._local = threading.local()

    def captures(self, url: str, first_crawl_with_200: bool = False) -> list[IndexedCapture]:
        """Every capture of `url` on the endpoints (`first_crawl_with_200`: stop at the first endpoint that has a
        200 capture — the newest crawl's, when crawls are given newest first).

        Raises:
            IndexLookupError: an endpoint failed for this URL (after its retries, or it refused the URL).
            IndexUnavailableError: the last :attr:`max_failures` lookups all failed.
        """
        found: list[IndexedCapture] = []
        for endpoint, crawl in self.endpoints:
            try:
                captures = self._query(endpoint, crawl, url)
            except IndexLookupError as error:
                if error.answered:  # the server works; it refused this URL
                    raise
                with self._lock:
                    self._failures += 1
                    failures = self._failures
                if failures >= self.max_failures:
                    raise IndexUnavailableError(f"{endpoint}: {failures} CDX lookups failed in a row (last: {error}); "
                                                "stopping — rerun to resume once the server answers") from None
                raise
            with self._lock:
                self._failures = 0
            found.extend(captures)
            if first_crawl_with_200 and any(capture.status == 200 for capture in captures):
                break
        return found

    @property
    def waited_s(self) -> float:
        """Wall time this server's lookups spent held back by the per-host intervals."""
        return self._spacing.waited_s

    def plan(self, urls: int) -> list[str]:
        """One line per endpoint host: the interval in force, why, and the least time it implies for `urls` URLs
        (each asked of every crawl on that host, at most), so that a build says what it will wait before it does."""
        lines = []
        for host, interval in sorted(self._intervals.items()):
            crawls = sum(1 for endpoint, _ in self.endpoints if (urlsplit(endpoint).hostname or "") == host)
            lookups = f"{urls:,} URL(s) x {crawls} crawl(s)"
            if self._given_interval is not None:
                why = "--cdx-min-interval"
            elif is_loopback_host(host):
                why = "a server on this machine; --cdx-min-interval sets one"
            else:
                why = "cdx_toolkit's politeness for this host; --cdx-min-interval changes it"
            if interval <= 0:
                lines.append(f"CDX lookups on {host}: no spacing ({why}), {lookups}")
            else:
                lines.append(f"CDX lookups on {host}: {interval:g} s apart ({why}): at least "
                             f"{format_seconds(interval * urls * crawls)} for {lookups}")
        return lines

    def _session(self) -> Any:
        return thread_session(self._local)

    def _query(self, endpoint: str, crawl: str | None, url: str) -> list[IndexedCapture]:
        from cdx_toolkit import cdx_to_captures

        host = urlsplit(endpoint).hostname or ""

        def wait_turn() -> None:
            with self._lock:
                self.requests += 1
            self._spacing.wait(host, self._intervals[host])

        def answer(response: Any) -> list[IndexedCapture]:
            if response.status_code == 400:
                raise IndexLookupError(f"{endpoint}: lookup of {url} refused (HTTP 400: {response.text.strip()[:200]})",
                                       answered=True)
            if response.status_code == 200 and not response.text.strip():  # pywb: no capture
                return []
            if response.status_code not in (200, 404):
                raise IndexLookupError(f"{endpoint}: lookup of {url}: unexpected answer (HTTP {response.status_code})",
                                       answered=True)
            try:
                rows = cdx_to_captures(response)  # [] for the 404 "No Captures found" answer
            except (ValueError, KeyError) as error:
                raise IndexLookupError(f"{endpoint}: lookup of {url}: unexpected answer (HTTP "
                                       f"{response.status_code}: {error})") from None
            return [capture for row in rows if (capture := _from_cdx_row(row.data, crawl)) is not None]

        try:
            return get_with_retries(
                self._session(), endpoint, answer, source="cdx", faults=self.faults,
                params={"url": url, "output": "json", "limit": self.limit}, timeout=self.timeout_s,
                retries=self.retries, backoff_s=self.backoff_s, max_retry_after_s=self.max_retry_after_s,
                before=wait_turn)  # fmt: skip
        except NetworkFault as fault:
            raise IndexLookupError(f"{endpoint}: lookup of {url} failed ({fault})") from None
        except IndexLookupError:
            raise
        except Exception as error:  # noqa: BLE001 - a malformed endpoint URL, an unexpected transport error
            raise IndexLookupError(f"{endpoint}: lookup of {url} failed ({type(error).__name__}: {error})") from None


def _cdx_interval(host: str, min_interval_s: float | None) -> float:
    """The politeness interval for a CDX host: the one given, else none for a host on the loopback interface
    (127.0.0.0/8, ::1, localhost: a server on this machine, where spacing only costs time: 461 lookups took 24
    minutes against a local pywb at cdx_toolkit's 3 s), else cdx_toolkit's table (1 s for Common Crawl's index
    server, 3 s for any other)."""
    if min_interval_s is not None:
        return float(min_interval_s)
    if is_loopback_host(host):
        return 0.0
    from cdx_toolkit.myrequests import retry_info

    return float(retry_info.get(host, retry_info["default"])["minimum_interval"])


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a URL's host name, IPv6 with or without brackets) names the loopback interface: an address
    in 127.0.0.0/8 or ::1, or ``localhost`` (no lookup: a name is not resolved)."""
    import ipaddress

    name = host.strip().strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _from_cdx_row(row: dict[str, Any], crawl: str | None) -> IndexedCapture | None:
    if not row.get("url") or not row.get("timestamp"):
        return None
    status = _int(row.get("status"))
    return IndexedCapture(
        url=str(row["url"]), timestamp=iso_utc(str(row["timestamp"])) or str(row["timestamp"]), status=status,
        mime=row.get("mime-detected") or row.get("mime"), filename=str(row.get("filename") or ""),
        offset=_int(row.get("offset")), length=_int(row.get("length")),
        redirect=row.get("redirect") or None, crawl=crawl or row.get("source-coll") or None,
    )  # fmt: skip


# ----------------------------------------------------------------------------------------------------------------
# All URLs at once: the columnar index
# ----------------------------------------------------------------------------------------------------------------


class ColumnarIndex:
    """Common Crawl's columnar URL index (Parquet), joined with many URLs at once in DuckDB.

    Args:
        location (`str`): see :attr:`CommonCrawlConfig.cc_index`.
        crawls (`Sequence[str]`): keep only these crawls' rows (needs a ``crawl`` column or ``crawl=`` folders).
        data_prefix (`str`): what the paths of a ``.paths`` listing are relative to.
        files (`Sequence[str]`, *optional*): read only these of the index's files (a task's share, or the files
            whose key range holds the URLs looked up); by default all of them (:func:`index_files`).

    Raises:
        FileNotFoundError: `location` names no Parquet file.
        ValueError: the files lack the columns of the index (the message lists them), or `crawls` are given and
            the index has no crawl column.
    """

    REQUIRED = ("url_surtkey", "url", "fetch_time", "fetch_status", "warc_filename", "warc_record_offset",
                "warc_record_length")
    OPTIONAL = ("fetch_redirect", "content_mime_detected", "content_mime_type", "crawl", "subset")

    def __init__(self, location: str, crawls: Sequence[str] = (), data_prefix: str = COMMON_CRAWL_DATA,
                 files: Sequence[str] | None = None) -> None:
        import duckdb

        self.location = location
        self.crawls = tuple(crawls)
        self.queries = 0
        self.files_scanned = 0  # index files read by the joins so far (a file read by two joins counts twice)
        if files is None:
            listed = index_files(location, self.crawls, data_prefix)
        else:  # a share of a listing: remote and partition base as index_files gives them
            first = files[0] if files else ""
            listed = IndexFiles(list(files), _is_remote(first), _hive_base(first) if _is_remote(first) else "")
        self.files = list(listed.files)
        self._con = duckdb.connect()
        self._con.execute("SET TimeZone = 'UTC'")  # fetch_time is a UTC instant; print it as one
        if not self.files:  # a share without a file: every lookup finds nothing
            self._source, self._params, self._columns = "", [], set(self.REQUIRED)
            return
        if listed.remote:
            import pyarrow.dataset as ds

            self._con.register("cc_index", ds.dataset(
                self.files, format="parquet", filesystem=_arrow_filesystem(self.files[0]),
                partitioning=ds.HivePartitioning.discover(infer_dictionary=False),
                partition_base_dir=listed.hive_base or None))  # fmt: skip
            self._source, self._params = "cc_index", []
        else:
            self._source = "read_parquet(?, hive_partitioning = true, union_by_name = true)"
            self._params = [self.files]
        try:
            columns = {row[0] for row in self._con.execute(f"DESCRIBE SELECT * FROM {self._source}",
                                                           self._params).fetchall()}
        except duckdb.Error as error:
            raise ValueError(f"{location}: cannot read the columnar index ({error})") from None
        missing = [name for name in self.REQUIRED if name not in columns]
        if missing:
            raise ValueError(f"{location}: not a Common Crawl columnar URL index: no column {', '.join(missing)}")
        if self.crawls and "crawl" not in columns:
            raise ValueError(f"{location}: the index has no crawl column (or crawl=... folders), so crawls "
                             f"{list(self.crawls)} cannot be selected")
        self._columns = columns

    def close(self) -> None:
        self._con.close()

    def captures_many(self, urls: Iterable[str]) -> dict[str, list[IndexedCapture]]:
        """Every capture of each URL (keyed by its SURT, and by the SURT of its normalized form), in one join."""
        unique = list(dict.fromkeys(urls))
        result: dict[str, list[IndexedCapture]] = {url: [] for url in unique}  # a URL without a SURT: no capture
        for _, wanted_url, capture in self.join(url_keys_table(unique)):
            result[wanted_url].append(capture)
        for captures in result.values():
            captures.sort(key=_capture_order)
        return result

    def join(self, wanted: Any) -> list[tuple[int | None, str, IndexedCapture]]:
        """(bucket, wanted URL, capture) of every capture of the wanted URLs, in one join. `wanted` is a pyarrow
        table with the columns ``wanted`` and ``key`` (:func:`url_keys_table`), and optionally ``bucket``, or a
        list of Parquet files of such tables (:class:`CitedUrlKeys`' output: DuckDB reads them, no row in Python)."""
        if not self.files:
            return []
        if isinstance(wanted, list):
            if not wanted:
                return []
            relation, wanted_params = "read_parquet(?, union_by_name = true)", [wanted]
            has_bucket = True
        else:
            if wanted.num_rows == 0:
                return []
            self._con.register("wanted", wanted)
            relation, wanted_params = "wanted", []
            has_bucket = "bucket" in wanted.column_names

        def column(name: str, cast: str = "VARCHAR") -> str:
            return f"CAST(i.{name} AS {cast})" if name in self._columns else f"CAST(NULL AS {cast})"

        mime = (f"COALESCE({column('content_mime_detected')}, {column('content_mime_type')})")
        where = ""
        params = [*self._params, *wanted_params]
        if self.crawls:
            where = "WHERE i.crawl IN (SELECT UNNEST(?))"
            params.append(list(self.crawls))
        bucket = "CAST(w.bucket AS INTEGER)" if has_bucket else "CAST(NULL AS INTEGER)"
        query = (f"SELECT DISTINCT {bucket}, w.wanted, i.url, "
                 f"strftime(CAST(i.fetch_time AS TIMESTAMP), '%Y%m%d%H%M%S'), CAST(i.fetch_status AS INTEGER), "
                 f"{mime}, i.warc_filename, CAST(i.warc_record_offset AS BIGINT), "
                 f"CAST(i.warc_record_length AS BIGINT), {column('fetch_redirect')}, {column('crawl')} "
                 f"FROM {self._source} AS i JOIN {relation} AS w ON i.url_surtkey = w.key {where}")
        try:
            rows = self._con.execute(query, params).fetchall()
        finally:
            if relation == "wanted":
                self._con.unregister("wanted")
        self.queries += 1
        self.files_scanned += len(self.files)
        return [(row_bucket, wanted_url, IndexedCapture(
                    url=url, timestamp=iso_utc(fetched) or str(fetched), status=status, mime=mime_type,
                    filename=filename or "", offset=offset, length=length, redirect=redirect or None, crawl=crawl))
                for row_bucket, wanted_url, url, fetched, status, mime_type, filename, offset, length, redirect, crawl
                in rows]  # fmt: skip


def _capture_order(capture: IndexedCapture) -> tuple[str, str, int]:
    """The order a URL's captures are listed in: by time, then by record."""
    return capture.timestamp, capture.filename, capture.offset or 0


def url_keys_table(urls: Iterable[str], bucket: int | None = None) -> Any:
    """The pyarrow table (``wanted``, ``key``[, ``bucket``]) a join takes: each URL with the SURT keys it is
    looked up by (its own and its normalized form's); a URL without a SURT has no row (it has no capture)."""
    import pyarrow as pa

    wanted: list[str] = []
    keys: list[str | None] = []
    for url in dict.fromkeys(urls):
        for key in _surt_keys(url) or [None]:  # without a key: listed (looked up), never matched
            wanted.append(url)
            keys.append(key)
    columns: dict[str, Any] = {"wanted": pa.array(wanted, pa.string()), "key": pa.array(keys, pa.string())}
    if bucket is not None:
        columns["bucket"] = pa.array([bucket] * len(wanted), pa.int32())
    return pa.table(columns)


def _surt_keys(url: str) -> list[str]:
    """The SURT of `url` and of its normalized form (tracking parameters dropped, ...), when they differ."""
    keys = []
    for candidate in (url, _normalized_or_none(url)):
        if candidate:
            try:
                key = surt_key(candidate)
            except Exception:  # noqa: BLE001 - surt raises assorted errors on malformed URLs
                continue
            if key not in keys:
                keys.append(key)
    return keys


def _normalized_or_none(url: str) -> str | None:
    try:
        return normalize_url(url)
    except ValueError:
        return None


def _is_remote(location: str) -> bool:
    return "://" in location and not location.lower().startswith("file://")


@dataclass(frozen=True)
class IndexFiles:
    """The Parquet files of a columnar index, as :func:`index_files` lists them.

    Args:
        files (`list[str]`): paths or URLs, sorted; only the named crawls' when their folders (``crawl=``) say so.
        remote (`bool`): read through fsspec (``http(s)://``, ``s3://``) rather than from local disk.
        hive_base (`str`): the folder the ``crawl=``/``subset=`` partition folders hang from ("" when none).
    """

    files: list[str]
    remote: bool
    hive_base: str


def index_files(location: str, crawls: Sequence[str] = (), data_prefix: str = COMMON_CRAWL_DATA) -> IndexFiles:
    """Every Parquet file of a `cc_index` location (see :attr:`CommonCrawlConfig.cc_index`), one by one, so that a
    join can be split among tasks by file.

    Raises:
        FileNotFoundError: `location` names no Parquet file (of `crawls`, when the files are in crawl folders).
    """
    lowered = location.lower()
    if lowered.endswith((".paths", ".paths.gz")):
        lines = _read_listing(location)
        files = [line if "://" in line or line.startswith("/") else f"{data_prefix.rstrip('/')}/{line}"
                 for line in lines if line.lower().endswith(".parquet")]
        base = _hive_base(files[0]) if files else ""
        remote = bool(files) and _is_remote(files[0])
    elif _is_remote(location):
        files = _remote_glob(location) if any(char in location for char in "*?[") else [location]
        base = _hive_base(location)
        remote = True
    else:
        path = Path(location.removeprefix("file://"))
        if path.is_dir():
            files = sorted(str(file) for file in path.rglob("*.parquet") if file.is_file())
            if not files:
                raise FileNotFoundError(f"{location}: no Parquet file in this folder")
            base = str(path)
        elif path.is_file():
            files, base = [str(path)], ""
        elif any(char in location for char in "*?["):
            import glob

            files, base = sorted(glob.glob(location, recursive=True)), ""
            if not files:
                raise FileNotFoundError(f"{location}: no file matches")
        else:
            raise FileNotFoundError(f"{location}: no such file or folder")
        remote = False
    if crawls and files and all("crawl=" in file for file in files):  # the partition folders say which crawl
        files = [file for file in files if any(f"crawl={crawl}/" in file for crawl in crawls)]
    if not files:
        raise FileNotFoundError(f"{location}: names no Parquet file" + (f" of crawls {list(crawls)}" if crawls else ""))
    return IndexFiles(sorted(files), remote, base)


def _hive_base(path: str) -> str:
    """The folder a path's ``crawl=`` partition folders hang from ("" when it has none)."""
    return path.split("/crawl=", 1)[0] + "/" if "/crawl=" in path else ""


def index_shares(files: Sequence[str], tasks: int, sizes: Sequence[int | None] | None = None) -> list[list[str]]:
    """`files` dealt among `tasks` tasks, each file to exactly one task: the largest first, each to the task with the
    fewest bytes so far (by count where sizes are unknown), ties to the lowest rank; each share sorted. The same
    inputs always give the same shares, whichever task computes them."""
    if tasks < 1:
        raise ValueError(f"tasks must be >= 1, got {tasks}")
    weights = [size if size is not None else 1 for size in (sizes if sizes is not None else [None] * len(files))]
    shares: list[list[str]] = [[] for _ in range(tasks)]
    loads = [0] * tasks
    for weight, file in sorted(zip(weights, files, strict=True), key=lambda item: (-item[0], item[1])):
        task = min(range(tasks), key=lambda t: (loads[t], len(shares[t]), t))
        shares[task].append(file)
        loads[task] += weight
    return [sorted(share) for share in shares]


def file_key_ranges(files: Sequence[str]) -> list[tuple[str, str | None, str | None]]:
    """(file, smallest url_surtkey, largest url_surtkey) of each index file, from its Parquet footer (a few KB read
    per file, no row). Common Crawl's index files each hold one sorted range of SURT keys, so a later lookup of a few
    URLs reads only the files whose range holds one of their keys. (None, None) when the footer has no statistics."""
    import pyarrow.parquet as pq

    ranges: list[tuple[str, str | None, str | None]] = []
    for file in files:
        low = high = None
        try:
            if _is_remote(file):
                import fsspec

                with fsspec.open(file, "rb") as handle:
                    metadata = pq.ParquetFile(handle).metadata
            else:
                metadata = pq.read_metadata(file)
            names = [metadata.schema.column(i).name for i in range(metadata.num_columns)]
            column = names.index("url_surtkey")
            lows, highs = [], []
            for group in range(metadata.num_row_groups):
                stats = metadata.row_group(group).column(column).statistics
                if stats is None or not stats.has_min_max:
                    lows = highs = []
                    break
                lows.append(_text(stats.min))
                highs.append(_text(stats.max))
            if lows:
                low, high = min(lows), max(highs)
        except (OSError, ValueError) as error:  # unreadable footer: the file is read by every lookup
            logger.warning("%s: no key range (%s); every later lookup reads this file", file, error)
        ranges.append((file, low, high))
    return ranges


def files_for_keys(ranges: Sequence[tuple[str, str | None, str | None]], keys: Iterable[str]) -> list[str]:
    """The files of `ranges` that may hold one of `keys` (those without a range always may)."""
    keys = sorted(set(keys))
    chosen = []
    for file, low, high in ranges:
        if low is None or high is None:
            chosen.append(file)
            continue
        at = bisect.bisect_left(keys, low)
        if at < len(keys) and keys[at] <= high:
            chosen.append(file)
    return chosen


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _read_listing(location: str) -> list[str]:
    if _is_remote(location):
        import fsspec

        with fsspec.open(location, "rb", compression="infer") as handle:
            data = handle.read()
    else:
        opener: Callable[..., Any] = gzip.open if location.lower().endswith(".gz") else open
        try:
            with opener(location, "rb") as handle:
                data = handle.read()
        except OSError as error:
            raise FileNotFoundError(f"{location}: cannot read the listing ({error})") from None
    return [line.strip() for line in data.decode("utf-8").splitlines() if line.strip()]


def _remote_filesystem(url: str) -> Any:
    """fsspec's file system for `url`'s protocol, or a ValueError saying which package it needs."""
    import fsspec

    protocol = url.split("://", 1)[0].lower()
    try:
        return fsspec.filesystem(protocol)
    except ImportError as error:
        raise ValueError(f"{url}: reading {protocol}:// needs a package that is not installed ({error}); "
                         "or give the https://data.commoncrawl.org/ URLs (a cc-index-table.paths.gz listing)") from None


def _remote_glob(location: str) -> list[str]:
    import fsspec

    _remote_filesystem(location)
    fs, _, paths = fsspec.get_fs_token_paths(location)
    protocol = location.split("://", 1)[0]
    files = [path if "://" in path else f"{protocol}://{path}" for path in sorted(paths)]
    if not files:
        raise FileNotFoundError(f"{location}: no file matches")
    return files


def _arrow_filesystem(url: str) -> Any:
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    return PyFileSystem(FSSpecHandler(_remote_filesystem(url)))


# ----------------------------------------------------------------------------------------------------------------
# The join's output: captures per bucket of cited URLs
# ----------------------------------------------------------------------------------------------------------------


class CaptureTable:
    """What one join of every cited URL with the whole columnar index found, for one fetch task's URLs.

    Three steps, each split among tasks, write it into one folder:

    * ``keys/<k>.parquet`` (:meth:`write_keys`): the URLs fetch task k will ask Common Crawl for, with their SURT keys
      (:func:`url_keys_table`); computed once per URL, by the task that owns it.
    * ``<k>/<r>.parquet`` and ``ranges/<r>.json`` (:func:`join_index_share`): join task r reads only its share of
      the index files (:func:`index_shares`), joins it with every task's keys in DuckDB and files each capture under
      the fetch task whose URL it answers; it also records its files' key ranges (:func:`file_key_ranges`). Every
      index file is read once, whatever the number of tasks.
    * Fetch task k then reads bucket k (:meth:`read`) instead of the index.

    Args:
        captures (`dict[str, list[IndexedCapture]]`): the captures of each URL the join covered (empty: none).
        ranges (`list[tuple[str, str | None, str | None]]`): every index file with its key range, for the URLs the
            join did not cover (the targets of captured redirects).
    """

    def __init__(self, captures: dict[str, list[IndexedCapture]],
                 ranges: list[tuple[str, str | None, str | None]]) -> None:
        self.captures = captures
        self.ranges = ranges

    @staticmethod
    def write_keys(folder: str | Path, bucket: int, urls: Iterable[str]) -> int:
        """Write fetch task `bucket`'s URLs with their keys; returns the URLs written."""

        table = url_keys_table(urls, bucket)
        _write_parquet(table, Path(folder) / "keys" / f"{bucket:05d}.parquet")
        return len(set(table.column("wanted").to_pylist()))

    @staticmethod
    def write(folder: str | Path, rank: int, found: Sequence[tuple[int | None, str, IndexedCapture]],
              ranges: list[tuple[str, str | None, str | None]]) -> int:
        """Write join task `rank`'s captures (`found`: bucket, cited URL, capture) under each bucket, and its files'
        key ranges; returns the captures written."""
        import pyarrow as pa

        rows: dict[int, list[tuple]] = {}
        for bucket, wanted, capture in sorted(found, key=lambda item: (item[1], _capture_order(item[2]))):
            rows.setdefault(int(bucket or 0), []).append((wanted, *astuple(capture)))
        root = Path(folder)
        schema = _capture_schema()
        for bucket, bucket_rows in sorted(rows.items()):
            table = pa.Table.from_pylist([dict(zip(schema.names, row, strict=True)) for row in bucket_rows],
                                         schema=schema)
            _write_parquet(table, root / f"{bucket:05d}" / f"{rank:05d}.parquet")
        (root / "ranges").mkdir(parents=True, exist_ok=True)
        _atomic_write(root / "ranges" / f"{rank:05d}.json", json.dumps(ranges).encode("utf-8"))
        return len(found)

    @classmethod
    def read(cls, folder: str | Path, bucket: int) -> CaptureTable:
        """Fetch task `bucket`'s captures, from every join task's file of it.

        Raises:
            FileNotFoundError: the join left no key ranges in `folder` (it did not run, or not to its end).
        """
        import pyarrow.parquet as pq

        root = Path(folder)
        range_files = sorted((root / "ranges").glob("*.json"))
        if not range_files:
            raise FileNotFoundError(f"{root}: no join of the columnar index here (no ranges/*.json)")
        ranges = [tuple(item) for path in range_files for item in json.loads(path.read_text(encoding="utf-8"))]
        captures: dict[str, list[IndexedCapture]] = {}
        keys = root / "keys" / f"{bucket:05d}.parquet"
        if keys.is_file():
            captures = {url: [] for url in pq.read_table(keys, columns=["wanted"]).column("wanted").to_pylist()}
        for path in sorted((root / f"{bucket:05d}").glob("*.parquet")):
            for row in pq.read_table(path).to_pylist():
                captures.setdefault(row.pop("wanted"), []).append(IndexedCapture(**row))
        for found in captures.values():
            found.sort(key=_capture_order)
        return cls(captures, ranges)  # type: ignore[arg-type]


def _capture_schema() -> Any:
    """The capture files' columns: the cited URL, then :class:`IndexedCapture`'s fields in their order."""
    import pyarrow as pa

    return pa.schema([("wanted", pa.string()), ("url", pa.string()), ("timestamp", pa.string()),
                      ("status", pa.int32()), ("mime", pa.string()), ("filename", pa.string()),
                      ("offset", pa.int64()), ("length", pa.int64()), ("redirect", pa.string()),
                      ("crawl", pa.string())])


def _write_parquet(table: Any, target: Path) -> None:
    """Write `table` to `target` all at once (:func:`~wikiref_dataset.web.http._atomic_write`): a task that is run
    again leaves no half file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    target.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(target, buffer.getvalue().to_pybytes())


def join_index_share(config: CommonCrawlConfig, rank: int, tasks: int, folder: str | Path) -> dict[str, int]:
    """Join task `rank` of `tasks`: join every fetch task's keys (``folder/keys/*.parquet``) with this task's
    share of the index files and write what it found (see :class:`CaptureTable`). Returns counts:
    ``index_files``, ``index_bytes`` (local files), ``captures``."""
    listed = index_files(config.cc_index or "", config.crawls, config.cc_data)
    sizes = [None if listed.remote else Path(file).stat().st_size for file in listed.files]
    share = index_shares(listed.files, tasks, sizes)[rank]
    keys = sorted(str(path) for path in (Path(folder) / "keys").glob("*.parquet"))
    index = ColumnarIndex(config.cc_index or "", config.crawls, config.cc_data, files=share)
    try:
        found = index.join(keys)
    finally:
        index.close()
    written = CaptureTable.write(folder, rank, found, file_key_ranges(share))
    by_file = dict(zip(listed.files, sizes, strict=True))
    return {"index_files": len(share), "captures": written,
            "index_bytes": sum(by_file[file] or 0 for file in share)}


# ----------------------------------------------------------------------------------------------------------------
# Reading records by range
# ----------------------------------------------------------------------------------------------------------------


class WarcRecordReader:
    """Reads single WARC records by offset and length from a URL prefix (HTTP Range) or a local folder.

    Args:
        base (`str`): URL prefix (``https://data.commoncrawl.org``) or folder the index's file names are relative to.
        timeout_s (`float`): connect timeout, and longest wait for the next bytes of an answer.
        retries (`int`): retries after a fault (429/5xx, reset, refused, timeout, a body cut short), waiting
            ``backoff_s * 2**attempt`` s or the server's Retry-After (up to `max_retry_after_s`) when longer.
        max_bytes (`int`): largest record and body.
        faults (:class:`~wikiref_dataset.web.faults.NetworkFaults`, *optional*): where faults are counted (as
            ``warc/<kind>``); a new counter by default.
    """

    def __init__(self, base: str, timeout_s: float = 30.0, retries: int = 5, max_bytes: int = 20_000_000,
                 backoff_s: float = 1.0, max_retry_after_s: float = 60.0, faults: NetworkFaults | None = None) -> None:
        self.base = base
        self.remote = _is_remote(base)
        self.timeout_s = timeout_s
        self.retries = retries
        self.max_bytes = max_bytes
        self.backoff_s = backoff_s
        self.max_retry_after_s = max_retry_after_s
        self.faults = faults if faults is not None else NetworkFaults()
        self.requests = 0
        self._local = threading.local()

    def location(self, filename: str) -> str:
        """The URL or path of a WARC file named by the index."""
        if "://" in filename:
            return filename
        if self.remote:
            return f"{self.base.rstrip('/')}/{filename.lstrip('/')}"
        return str(Path(self.base.removeprefix("file://")) / filename)

    def read(self, capture: IndexedCapture) -> ArchivedResponse:
        """The HTTP response `capture` holds.

        Raises:
            WarcReadError: the record cannot be fetched (reason ``network``: still failing after the retries) or
                parsed, is not the one the index names, or is too large (reason ``too_large``); the message names the
                file, the offset and the problem.
        """
        where = f"{self.location(capture.filename)} at {capture.offset}"
        if not capture.filename or capture.offset is None or capture.length is None or capture.length <= 0:
            raise WarcReadError(f"{capture.url}: the index gives no WARC location (file {capture.filename!r}, offset "
                                f"{capture.offset}, length {capture.length})")
        if capture.length > self.max_bytes:
            raise WarcReadError(f"{where}: record of {capture.length:,} bytes exceeds {self.max_bytes:,}",
                                reason="too_large")
        data = self._fetch(capture) if self.remote else self._read_local(capture, where)
        return self._parse(data, capture, where)

    def _read_local(self, capture: IndexedCapture, where: str) -> bytes:
        try:
            with open(self.location(capture.filename), "rb") as handle:
                handle.seek(capture.offset)
                data = handle.read(capture.length)
        except OSError as error:
            raise WarcReadError(f"{where}: cannot read ({error.strerror or error})") from None
        if len(data) != capture.length:
            raise WarcReadError(f"{where}: file ends after {len(data)} of the record's {capture.length} bytes")
        return data

    def _session(self) -> Any:
        return thread_session(self._local)

    def _fetch(self, capture: IndexedCapture) -> bytes:
        url = self.location(capture.filename)
        first, last = capture.offset, capture.offset + capture.length - 1

        def counted() -> None:
            self.requests += 1

        def body(response: Any) -> bytes:
            status = response.status_code
            if status == 206:
                data = response.raw.read(capture.length + 1, decode_content=False)
                if len(data) != capture.length:
                    raise IncompleteBody(f"bytes {first}-{last}: got {len(data)} bytes, expected {capture.length}")
                return data
            if status == 200:
                raise WarcReadError(f"{url}: the server ignored the Range request (HTTP 200 instead of 206 for bytes "
                                    f"{first}-{last})")
            if status == 416:
                raise WarcReadError(f"{url}: bytes {first}-{last} lie beyond the end of the file (HTTP 416)")
            raise WarcReadError(f"{url}: HTTP {status} for bytes {first}-{last}")

        try:
            return get_with_retries(
                self._session(), url, body, source="warc", faults=self.faults,
                headers={"Range": f"bytes={first}-{last}", "Accept-Encoding": "identity"}, timeout=self.timeout_s,
                retries=self.retries, backoff_s=self.backoff_s, max_retry_after_s=self.max_retry_after_s,
                before=counted)  # fmt: skip
        except NetworkFault as fault:
            raise WarcReadError(f"bytes {first}-{last} of {fault}", reason="network") from None

    def _parse(self, data: bytes, capture: IndexedCapture, where: str) -> ArchivedResponse:
        from warcio.archiveiterator import ArchiveIterator

        try:
            record = next(iter(ArchiveIterator(io.BytesIO(data), arc2warc=True)), None)
            if record is None:
                raise WarcReadError(f"{where}: no WARC record in the {len(data)} bytes read")
            uri = (record.rec_headers.get_header("WARC-Target-URI") or "").strip().strip("<>")
            if uri != capture.url:
                raise WarcReadError(f"{where}: expected a record of {capture.url}, found one of {uri!r}")
            if record.rec_type not in ("response", "resource"):
                raise WarcReadError(f"{where}: a {record.rec_type!r} record, not a response")
            status, content_type, location = 200, record.rec_headers.get_header("Content-Type"), None
            if record.http_headers is not None and record.rec_type == "response":
                status = _int(record.http_headers.get_statuscode()) or 0
                content_type = record.http_headers.get_header("Content-Type")
                location = record.http_headers.get_header("Location")
            body = record.content_stream().read(self.max_bytes + 1)
        except WarcReadError:
            raise
        except Exception as error:  # noqa: BLE001 - warcio raises many types on damaged records
            raise WarcReadError(f"{where}: cannot parse the record ({type(error).__name__}: {error})") from None
        if len(body) > self.max_bytes:
            raise WarcReadError(f"{where}: body exceeds {self.max_bytes:,} bytes after decoding", reason="too_large")
        return ArchivedResponse(uri, status, content_type, location, body)


# ----------------------------------------------------------------------------------------------------------------
# Resolving: look up, choose, follow redirects, read
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class _Chase:
    request: CaptureRequest
    current: str
    chain: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    redirect_status: int | None = None  # the status of the last redirect followed


class CommonCrawl:
    """Resolves cited URLs to archived pages (see the module docstring); one per task, :meth:`close` when done.

    Args:
        config (:class:`CommonCrawlConfig`): where and how.
        captures (:class:`CaptureTable`, *optional*): with a columnar index, what the join of all cited URLs found
            for this task's URLs; then the index itself is read only for URLs the join did not cover (targets of
            captured redirects), and only the files whose key range holds them.
    """

    def __init__(self, config: CommonCrawlConfig, captures: CaptureTable | None = None) -> None:
        if captures is not None and not config.cc_index:
            raise ValueError("captures (a join's output) need a columnar index (cc_index)")
        self.config = config
        self.captures = captures
        self.columnar = None
        if config.cc_index and captures is None:
            self.columnar = ColumnarIndex(config.cc_index, config.crawls, config.cc_data)
        self.faults = NetworkFaults()  # every fault of this task's lookups and reads, by kind
        retry = {"retries": config.retries, "backoff_s": config.backoff_s,
                 "max_retry_after_s": config.max_retry_after_s, "faults": self.faults}
        self.cdx = None if config.cc_index else CdxServer(config.cdx_endpoints(), config.cdx_min_interval_s,
                                                          timeout_s=config.timeout_s, **retry)
        self.reader = WarcRecordReader(config.cc_data, config.timeout_s, max_bytes=config.max_record_bytes, **retry)
        self._pool = ThreadPoolExecutor(config.lookup_workers, thread_name_prefix="commoncrawl")
        self._cache: dict[str, list[IndexedCapture]] = dict(captures.captures) if captures is not None else {}
        self.files_scanned = 0  # index files read by this task's own joins (those after the join stage's)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self.columnar is not None:
            self.columnar.close()

    def __enter__(self) -> CommonCrawl:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def prepare(self, urls: Iterable[str]) -> None:
        """With the columnar index, look every URL of the task up in one join now (later lookups hit the cache; with
        `captures`, only the URLs the join did not cover); with a CDX server, nothing (lookups are per URL)."""
        if self.config.cc_index:
            wanted = [url for url in dict.fromkeys(urls) if url not in self._cache]
            if wanted:
                self._cache.update(self._join(wanted))

    def _join(self, urls: Sequence[str]) -> dict[str, list[IndexedCapture]]:
        """The captures of `urls` from the columnar index: the whole index, or (with `captures`) the files whose
        key range holds one of the URLs' keys."""
        if self.columnar is not None:
            before = self.columnar.files_scanned
            found = self.columnar.captures_many(urls)
            self.files_scanned += self.columnar.files_scanned - before
            return found
        assert self.captures is not None
        files = files_for_keys(self.captures.ranges, (key for url in urls for key in _surt_keys(url)))
        if not files:
            return {url: [] for url in urls}
        index = ColumnarIndex(self.config.cc_index or "", self.config.crawls, self.config.cc_data, files=files)
        try:
            found = index.captures_many(urls)
        finally:
            index.close()
        self.files_scanned += index.files_scanned
        return found

    def _lookup(self, urls: Sequence[str], newest_only: set[str]) -> dict[str, list[IndexedCapture] | Exception]:
        found: dict[str, list[IndexedCapture] | Exception] = {url: self._cache[url] for url in urls
                                                              if url in self._cache}
        missing = [url for url in urls if url not in found]
        if not missing:
            return found
        if self.config.cc_index:
            captures = self._join(missing)
            self._cache.update(captures)
            found.update(captures)
            return found

        def one(url: str) -> list[IndexedCapture] | Exception:
            try:
                return self.cdx.captures(url, first_crawl_with_200=url in newest_only)
            except IndexLookupError as error:
                return error

        found.update(zip(missing, self._pool.map(one, missing), strict=True))
        return found

    def resolve(self, requests: Sequence[CaptureRequest]) -> list[CrawlResult]:
        """One :class:`CrawlResult` per request, in order.

        Raises:
            IndexUnavailableError: the CDX server failed too many lookups in a row.
        """
        results: list[CrawlResult | None] = [None] * len(requests)
        active = {i: _Chase(request, request.url) for i, request in enumerate(requests)}
        chosen: dict[int, tuple[IndexedCapture, _Chase]] = {}
        for hop in range(self.config.max_redirects + 1):
            if not active:
                break
            urls = list(dict.fromkeys(chase.current for chase in active.values()))
            newest_only = {chase.current for chase in active.values() if chase.request.near is None}
            newest_only -= {chase.current for chase in active.values() if chase.request.near is not None}
            found = self._lookup(urls, newest_only)
            following: dict[int, tuple[IndexedCapture, _Chase]] = {}
            for i, chase in active.items():
                outcome = self._choose(chase, found[chase.current], hop)
                if isinstance(outcome, CrawlResult):
                    results[i] = outcome
                elif 300 <= (outcome.status or 0) < 400:
                    following[i] = (outcome, chase)
                else:
                    chosen[i] = (outcome, chase)
            active = self._follow(following, results)
        for i, chase in active.items():
            results[i] = CrawlResult(chase.request.url, "non_200", final_url=chase.current, redirects=tuple(chase.chain),
                                     detail=f"{chase.request.url}: more than {self.config.max_redirects} captured "
                                            "redirects")
        read = list(self._pool.map(lambda item: self._read(*item), chosen.values()))
        for i, result in zip(chosen, read, strict=True):
            results[i] = result
        assert all(result is not None for result in results)  # every request ends in one result
        return results  # type: ignore[return-value]

    def _choose(self, chase: _Chase, found: list[IndexedCapture] | Exception, hop: int) -> CrawlResult | IndexedCapture:
        url = chase.request.url
        if isinstance(found, Exception):
            return CrawlResult(url, "lookup_failed", redirects=tuple(chase.chain), detail=str(found),
                               transient=not getattr(found, "answered", False))
        usable = [capture for capture in found if capture.status is not None]
        if not usable:
            if hop == 0:
                return CrawlResult(url, "not_captured", detail=f"{url}: no capture in {self._index_name()}")
            return CrawlResult(url, "non_200", final_url=chase.current, http_status=chase.redirect_status,
                               redirects=tuple(chase.chain),
                               detail=f"{url}: redirected to {chase.current}, which has no capture")
        ok = [capture for capture in usable if capture.status == 200]
        if ok:
            html = [capture for capture in ok if not _is_known_non_html(capture.mime)]
            if not html:
                best = choose_capture(ok, chase.request.near, _time_of)
                return CrawlResult(url, "not_html", best, best.url, 200, best.mime, redirects=tuple(chase.chain),
                                   detail=f"{url}: captured as {best.mime} ({best.record}), not HTML")
            return choose_capture(html, chase.request.near, _time_of)
        redirects = [capture for capture in usable if 300 <= capture.status < 400]
        if redirects:
            return choose_capture(redirects, chase.request.near, _time_of)
        best = choose_capture(usable, chase.request.near, _time_of)
        statuses = ", ".join(str(status) for status in sorted({capture.status for capture in usable}))
        return CrawlResult(url, "non_200", best, best.url, best.status, redirects=tuple(chase.chain),
                           detail=f"{url}: captured with HTTP {statuses} only")

    def _follow(self, following: dict[int, tuple[IndexedCapture, _Chase]],
                results: list[CrawlResult | None]) -> dict[int, _Chase]:
        """Move each chase to its redirect's target (Location from the index, else read from the record)."""
        unread = [i for i, (capture, _) in following.items() if not capture.redirect]
        locations: dict[int, str | WarcReadError] = {}

        def location(i: int) -> str | WarcReadError:
            capture = following[i][0]
            try:
                return self.reader.read(capture).location or ""
            except WarcReadError as error:
                return error

        locations.update(zip(unread, self._pool.map(location, unread), strict=True))
        moved: dict[int, _Chase] = {}
        for i, (capture, chase) in following.items():
            url = chase.request.url
            target = capture.redirect if capture.redirect else locations[i]
            if isinstance(target, WarcReadError):
                results[i] = CrawlResult(url, "fetch_failed", capture, capture.url, capture.status,
                                         redirects=tuple(chase.chain), detail=f"{url}: {target}",
                                         transient=target.reason == "network")
                continue
            if not target.strip():
                results[i] = CrawlResult(url, "non_200", capture, capture.url, capture.status,
                                         redirects=tuple(chase.chain),
                                         detail=f"{url}: captured redirect {capture.record} has no Location")
                continue
            chase.seen.add(_loop_key(chase.current))
            chase.chain.append(capture.url)
            chase.redirect_status = capture.status
            chase.current = unwrap_wayback(urljoin(capture.url, target.strip()))
            if _loop_key(chase.current) in chase.seen:
                results[i] = CrawlResult(url, "non_200", capture, chase.current, capture.status,
                                         redirects=tuple(chase.chain),
                                         detail=f"{url}: captured redirects loop back to {chase.current}")
                continue
            moved[i] = chase
        return moved

    def _read(self, capture: IndexedCapture, chase: _Chase) -> CrawlResult:
        url, redirects = chase.request.url, tuple(chase.chain)
        try:
            response = self.reader.read(capture)
        except WarcReadError as error:
            return CrawlResult(url, "fetch_failed", capture, capture.url, capture.status, redirects=redirects,
                               detail=f"{url}: {error}", transient=error.reason == "network")
        if response.status != 200:
            return CrawlResult(url, "fetch_failed", capture, capture.url, response.status, redirects=redirects,
                               detail=f"{capture.record}: the record holds HTTP {response.status}, the index says 200")
        if response.content_type and not is_html_content_type(response.content_type) \
                and _is_known_non_html(response.content_type):
            return CrawlResult(url, "not_html", capture, capture.url, 200, response.content_type, redirects=redirects,
                               detail=f"{url}: {capture.record} is {media_type(response.content_type)}, not HTML")
        return CrawlResult(url, "found", capture, response.target_uri, 200, response.content_type, response.body,
                           redirects)

    def _index_name(self) -> str:
        if self.config.cc_index:
            return f"the columnar index {self.config.cc_index}"
        return "CDX " + ", ".join(endpoint for endpoint, _ in self.cdx.endpoints)


def _loop_key(url: str) -> str:
    try:
        return url_key(url)
    except ValueError:
        return url
