"""Per-URL lookups on a CDX index server (:class:`CdxServer`; small builds): the API that Common Crawl's index server
(``https://index.commoncrawl.org/<crawl>-index``), pywb (``http://host/<collection>/cdx``) and the Wayback Machine
speak.

Queries follow the project's retry rule (:mod:`~wikiref_dataset.web.faults`: 429/5xx, resets, refused
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

A lookup that fails raises :class:`IndexLookupError`; a server that fails :attr:`CdxServer.max_failures` lookups in
a row raises :class:`IndexUnavailableError` instead: the task stops, and a rerun resumes it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from ...utils.formatting import format_seconds
from ..captures import iso_utc
from ..faults import NetworkFault, NetworkFaults, get_with_retries
from ..http import HostSpacing
from .config import thread_session
from .indexed_capture import IndexedCapture, int_or_none

__all__ = ["CdxServer", "IndexLookupError", "IndexUnavailableError", "is_loopback_host"]


class IndexLookupError(Exception):
    """One lookup failed (the message names the index and the URL). `answered`: the server answered (it refused
    this URL), as opposed to not answering at all."""

    def __init__(self, message: str, answered: bool = False) -> None:
        super().__init__(message)
        self.answered = answered


class IndexUnavailableError(RuntimeError):
    """The index server failed too many lookups in a row: the task stops (a rerun resumes it)."""


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
    status = int_or_none(row.get("status"))
    return IndexedCapture(
        url=str(row["url"]), timestamp=iso_utc(str(row["timestamp"])) or str(row["timestamp"]), status=status,
        mime=row.get("mime-detected") or row.get("mime"), filename=str(row.get("filename") or ""),
        offset=int_or_none(row.get("offset")), length=int_or_none(row.get("length")),
        redirect=row.get("redirect") or None, crawl=crawl or row.get("source-coll") or None,
    )  # fmt: skip
