"""Cited URLs resolved to archived pages (:class:`CommonCrawl`): each URL looked up (:mod:`.cdx` or :mod:`.columnar`),
its capture chosen, captured redirects followed, the record read (:mod:`.record_reader`).

Choosing (:meth:`CommonCrawl.resolve`): among a URL's 200 captures whose type is not known to be other than HTML, the
one nearest the citation's access-date, else its date, else the newest (:mod:`~wikiref_dataset.web.captures`).
Without a 200 capture, a 3xx capture (chosen the same way) is followed to its ``Location`` — from the index when it
records it (Common Crawl's ``redirect`` / ``fetch_redirect``), else read from the 3xx record — and the target looked
up again, at most ``max_redirects`` hops, loops stopped; the final URL is recorded.

Every URL ends with one outcome (:data:`OUTCOMES`): ``found``, ``not_captured``, ``non_200`` (only 404s, 5xx or a
redirect whose target is not captured), ``not_html``, ``fetch_failed`` (the record could not be read) or
``lookup_failed`` (the index server failed for it or refused it). A ``fetch_failed`` or ``lookup_failed`` that
the network caused (still failing after the retries) is marked :attr:`CrawlResult.transient`: the documents stage
records it as failed, never as not captured, and a rerun of the build asks again. An index server that fails
:attr:`~wikiref_dataset.web.commoncrawl.cdx.CdxServer.max_failures`
lookups in a row raises :class:`~wikiref_dataset.web.commoncrawl.cdx.IndexUnavailableError` instead: the task stops,
and a rerun resumes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urljoin

from ..captures import choose_capture
from ..extract import is_html_content_type, media_type
from ..faults import NetworkFaults
from ..urls import unwrap_wayback, url_key
from ..warc import WarcReadError
from .cdx import CdxServer, IndexLookupError
from .columnar import ColumnarIndex
from .config import CommonCrawlConfig
from .index_join import CaptureTable, files_for_keys
from .indexed_capture import IndexedCapture, lookup_keys
from .record_reader import WarcRecordReader

__all__ = ["OUTCOMES", "CaptureRequest", "CommonCrawl", "CrawlResult"]

OUTCOMES = ("found", "not_captured", "non_200", "not_html", "fetch_failed", "lookup_failed")
"""What happened to one URL (see the module docstring)."""

_UNKNOWN_TYPES = ("", "unk", "-", "application/octet-stream", "unknown")


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


def _is_known_non_html(mime: str | None) -> bool:
    kind = media_type(mime)
    return kind not in _UNKNOWN_TYPES and not kind.startswith("warc/") and not is_html_content_type(kind)


def _time_of(capture: IndexedCapture) -> datetime | None:
    return capture.time


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
        files = files_for_keys(self.captures.ranges, (key for url in urls for key in lookup_keys(url)))
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
