"""Live HTTP source of cited pages, for users with network: polite, bounded, and safe with untrusted URLs.

Wikipedia citation URLs are untrusted input. :class:`HttpFetcher` therefore:

* refuses every scheme but ``http``/``https`` (``bad_scheme``);
* resolves the host itself, refuses it when *any* resolved address is loopback, private, link-local, multicast,
  reserved, unspecified or otherwise not globally routable — IPv4-mapped, 6to4, Teredo and NAT64 IPv6 addresses
  are judged by the IPv4 address they carry — (``blocked_address``), and then connects to one of the addresses
  it checked, never to a name: DNS rebinding between the check and the connection cannot bypass the guard.
  Every redirect hop is checked the same way. No proxy from the environment is used (it would connect
  elsewhere). :attr:`HttpConfig.allow_hosts_for_testing` exempts named hosts, for tests against servers on
  loopback addresses only;
* reads ``robots.txt`` (RFC 9309: longest match wins, ``*`` and ``$`` patterns, 4xx = allow all, 5xx =
  disallow all) and honours ``Crawl-delay`` up to a cap; spaces requests to one host by a minimum interval;
* bounds everything: connect/read timeouts and a total deadline per response, a size cap on the bytes received
  and a separate cap on the bytes after gzip/deflate decoding (a gzip bomb stops at the cap), a redirect limit,
  retries with exponential backoff (``Retry-After`` honoured up to a cap) on 429/5xx and connection failures;
* checks the content type before downloading a body (HTML only by default);
* keeps an on-disk cache (one JSON + one body file per URL, written atomically) so reruns cost no requests;
* reports one status per URL in :class:`FetchResult` instead of raising.

Many URLs go through :class:`CrawlScheduler` (or :meth:`HttpFetcher.fetch_many`, built on it): one queue per host,
at most :attr:`HttpConfig.concurrency` requests in flight in all and :attr:`HttpConfig.per_host_connections` to one
host, a host served only once its interval has passed. Citation URLs come sorted, so one host's URLs follow each
other; taking them in that order would hold every worker on one host's interval while the other hosts wait. The
scheduler reaches only :attr:`HttpConfig.lookahead` URLs past the result taken next (the pages held are bounded),
so a host with more URLs than that in a row would still leave it one host to serve: :func:`crawl_order` gives the
order to take URLs in — each host's URLs spread evenly over the whole order — so that any stretch of it holds every
host in its share of the whole, and an ordered crawl keeps pace with its slowest host's total time.

Hand-written on the standard library (``http.client`` over a socket this module opens): httpx/urllib resolve
and connect by name inside the library, so the address that was checked could differ from the one connected
to. robots.txt is read with ``protego`` (RFC 9309), not ``urllib.robotparser``, which follows the 1996 draft
(first match, no wildcards).
"""

from __future__ import annotations

import hashlib
import heapq
import http.client
import ipaddress
import itertools
import json
import logging
import os
import socket
import ssl
import tempfile
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from .extract import is_html_content_type, looks_like_html, media_type
from .faults import NetworkFaults, classify_error, is_retried_status, parse_retry_after, retry_delay

logger = logging.getLogger(__name__)

__all__ = [
    "CrawlScheduler", "FetchResult", "HttpConfig", "HttpFetcher", "RobotsRules", "crawl_order", "is_public_address",
    "resolve_host",
]  # fmt: skip

Resolver = Callable[[str, int], list[str]]
"""`(host, port) -> IP address strings`; raises `socket.gaierror` when the name does not resolve."""

_NETWORK_FAILURES = ("timeout", "connection_error", "dns_error", "tls_error", "blocked_address", "bad_response")
_CACHEABLE = ("ok", "not_found", "not_html", "too_large", "too_many_redirects")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


@dataclass
class HttpConfig:
    """How :class:`HttpFetcher` downloads pages.

    Args:
        user_agent (`str`): User-Agent header; its first word (before `/`) is the robots.txt product token.
        connect_timeout_s (`float`, defaults to 10): seconds to open a connection.
        read_timeout_s (`float`, defaults to 20): seconds a read may wait for data.
        total_timeout_s (`float`, defaults to 60): seconds for one whole response (against slow drips).
        max_bytes (`int`, defaults to 5,000,000): largest body received, before decoding.
        max_decoded_bytes (`int`, defaults to 20,000,000): largest body after gzip/deflate decoding.
        html_only (`bool`, defaults to `True`): refuse responses whose content type is not HTML (`not_html`).
        max_redirects (`int`, defaults to 5): redirects followed per URL.
        retries (`int`, defaults to 2): extra attempts after a 429/5xx answer or a connection failure.
        retry_on_timeout (`bool`, defaults to `False`): also retry after a timeout.
        backoff_s (`float`, defaults to 1): wait before retry *n* is `backoff_s * 2**n` (or Retry-After).
        max_retry_after_s (`float`, defaults to 30): longest Retry-After honoured.
        min_interval_s (`float`, defaults to 1): least time between the starts of two requests to one host (the
            per-host politeness interval; a longer robots.txt Crawl-delay wins).
        concurrency (`int`, defaults to 8): requests in flight at once, all hosts together, when many URLs are
            fetched (:class:`CrawlScheduler`'s worker threads).
        per_host_connections (`int`, defaults to 1): requests in flight at once to one host.
        lookahead (`int`, defaults to 512): URLs, counted in input order from the next result the caller takes,
            that may be downloading or downloaded ahead of it, so that other hosts are served while one host's
            interval holds the next result back; the pages held meanwhile are at most this many. A host with more
            URLs than this in a row leaves the others out of reach: see :func:`crawl_order`.
        respect_robots (`bool`, defaults to `True`): obey robots.txt.
        max_crawl_delay_s (`float`, defaults to 10): largest robots.txt Crawl-delay honoured.
        cache_dir (`str`, *optional*): folder of the on-disk cache; None disables it.
        cache_ttl_s (`float`, *optional*): cache entries older than this are fetched again; None = never.
        ca_file (`str`, *optional*): extra CA certificates (PEM) to trust, e.g. a test server's.
        allow_hosts_for_testing (`frozenset[str]`): hosts exempted from the address guard. For tests against
            local servers only; never set it when fetching citations.
    """

    user_agent: str = field(
        default="wikiref-documents/0.1 (research dataset builder; obeys robots.txt)",
        metadata={"help": "User-Agent header; the word before '/' is the robots.txt product token."},
    )
    connect_timeout_s: float = field(default=10.0, metadata={"help": "Seconds to open a connection."})
    read_timeout_s: float = field(default=20.0, metadata={"help": "Seconds a read may wait for data."})
    total_timeout_s: float = field(default=60.0, metadata={"help": "Seconds for one whole response."})
    max_bytes: int = field(default=5_000_000, metadata={"help": "Largest body received (before decoding)."})
    max_decoded_bytes: int = field(default=20_000_000, metadata={"help": "Largest body after gzip/deflate."})
    html_only: bool = field(default=True, metadata={"help": "Refuse non-HTML content types."})
    max_redirects: int = field(default=5, metadata={"help": "Redirects followed per URL."})
    retries: int = field(default=2, metadata={"help": "Extra attempts after 429/5xx or a connection failure."})
    retry_on_timeout: bool = field(default=False, metadata={"help": "Also retry after a timeout."})
    backoff_s: float = field(default=1.0, metadata={"help": "Base of the exponential backoff between retries."})
    max_retry_after_s: float = field(default=30.0, metadata={"help": "Longest Retry-After honoured."})
    min_interval_s: float = field(default=1.0, metadata={"help": "Least seconds between requests to one host."})
    concurrency: int = field(default=8, metadata={"help": "Requests in flight at once, all hosts together."})
    per_host_connections: int = field(default=1, metadata={"help": "Requests in flight at once to one host."})
    lookahead: int = field(
        default=512, metadata={"help": "URLs (in input order) that may be fetched ahead of the next one taken."}
    )
    respect_robots: bool = field(default=True, metadata={"help": "Obey robots.txt."})
    max_crawl_delay_s: float = field(default=10.0, metadata={"help": "Largest Crawl-delay honoured."})
    cache_dir: str | None = field(default=None, metadata={"help": "On-disk cache folder (None: no cache)."})
    cache_ttl_s: float | None = field(default=None, metadata={"help": "Cache entry lifetime (None: forever)."})
    ca_file: str | None = field(default=None, metadata={"help": "Extra CA certificates (PEM) to trust."})
    allow_hosts_for_testing: frozenset[str] = field(
        default=frozenset(), metadata={"help": "TESTS ONLY: hosts exempted from the private-address guard."}
    )

    def __post_init__(self) -> None:
        if not isinstance(self.user_agent, str) or not self.user_agent.strip():
            raise ValueError("user_agent must be a non-empty string")
        for name in ("connect_timeout_s", "read_timeout_s", "total_timeout_s"):
            if not isinstance(getattr(self, name), (int, float)) or getattr(self, name) <= 0:
                raise ValueError(f"{name} must be a positive number, got {getattr(self, name)!r}")
        for name in ("backoff_s", "max_retry_after_s", "min_interval_s", "max_crawl_delay_s"):
            if not isinstance(getattr(self, name), (int, float)) or getattr(self, name) < 0:
                raise ValueError(f"{name} must be a number >= 0, got {getattr(self, name)!r}")
        for name in ("max_bytes", "max_decoded_bytes"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        for name in ("concurrency", "per_host_connections", "lookahead"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        for name in ("max_redirects", "retries"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {getattr(self, name)!r}")
        if self.cache_ttl_s is not None and self.cache_ttl_s <= 0:
            raise ValueError(f"cache_ttl_s must be None or positive, got {self.cache_ttl_s!r}")
        if isinstance(self.allow_hosts_for_testing, str):
            raise ValueError("allow_hosts_for_testing must be a set of host names, not a string")
        self.allow_hosts_for_testing = frozenset(h.strip().lower() for h in self.allow_hosts_for_testing)
        if self.allow_hosts_for_testing:
            logger.warning("HttpConfig: address guard disabled for %s (tests only)", sorted(self.allow_hosts_for_testing))

    @property
    def robots_token(self) -> str:
        return self.user_agent.split("/", 1)[0].split()[0].lower()


@dataclass
class FetchResult:
    """The outcome of fetching one URL.

    Args:
        url (`str`): the URL asked for.
        final_url (`str`): the URL that answered, after redirects.
        status (`str`): `ok`, `not_found` (404/410), `robots_disallowed`, `blocked_address`, `bad_scheme`,
            `bad_url`, `dns_error`, `connection_error`, `tls_error`, `timeout`, `too_large`, `not_html`,
            `too_many_redirects`, `bad_response`, `http_error_<code>`, `unsupported_encoding`.
        http_status (`int`, *optional*): the last HTTP status code received.
        content_type (`str`, *optional*): the Content-Type of the final response.
        body (`bytes`, *optional*): the decoded body (only when `status == "ok"`).
        from_cache (`bool`): answered by the on-disk cache, without a request.
        detail (`str`): what went wrong, naming the URL.
        fetched_at (`str`, *optional*): when the response was received (ISO 8601 UTC).
        redirects (`tuple[str, ...]`): the URLs that redirected, in order.
    """

    url: str
    final_url: str
    status: str
    http_status: int | None = None
    content_type: str | None = None
    body: bytes | None = None
    from_cache: bool = False
    detail: str = ""
    fetched_at: str | None = None
    redirects: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"


# ----------------------------------------------------------------------------------------------------------------
# Address guard
# ----------------------------------------------------------------------------------------------------------------


def is_public_address(address: str | ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether an IP address is globally routable (and so may be connected to for an untrusted URL)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0] if isinstance(address, str) else address)
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None and not is_public_address(embedded):
            return False
    return bool(ip.is_global) and not (
        ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
        or ip.is_unspecified
    )  # fmt: skip


def resolve_host(host: str, port: int) -> list[str]:
    """The IP addresses of `host` (system resolver, TCP); raises `socket.gaierror` when it does not resolve."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(info[4][0] for info in infos))


def open_connection(address: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to a checked IP address (module-level so tests can watch every connection made)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect((address, port))
    except BaseException:
        sock.close()
        raise
    return sock


# ----------------------------------------------------------------------------------------------------------------
# robots.txt (RFC 9309)
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class RobotsRules:
    """The rules of one robots.txt that apply to one user agent, matched by ``protego`` (the RFC 9309 parser Scrapy
    uses: longest match wins, Allow wins ties, ``*`` and ``$`` patterns, percent-encoding normalised)."""

    parser: Any = None  # protego.Protego, None: allow everything
    token: str = "*"
    crawl_delay: float | None = None

    @classmethod
    def allow_all(cls) -> RobotsRules:
        return cls()

    @classmethod
    def disallow_all(cls) -> RobotsRules:
        return cls.parse("User-agent: *\nDisallow: /\n", "*")

    @classmethod
    def parse(cls, text: str, token: str) -> RobotsRules:
        """Rules of the groups naming `token` (case-insensitive), else of the `*` groups."""
        from protego import Protego

        parser = Protego.parse(text)
        return cls(parser=parser, token=token, crawl_delay=parser.crawl_delay(token))

    def allowed(self, path: str) -> bool:
        """Whether `path` (path + query, as sent) may be fetched."""
        if path == "/robots.txt" or self.parser is None:
            return True
        return bool(self.parser.can_fetch(path, self.token))


# ----------------------------------------------------------------------------------------------------------------
# Fetcher
# ----------------------------------------------------------------------------------------------------------------


class _Failure(Exception):
    """`kind`: the fault kind (:data:`~wikiref_dataset.web.faults.FAULT_KINDS`) of a network failure."""

    def __init__(self, status: str, detail: str, http_status: int | None = None, kind: str = "") -> None:
        super().__init__(detail)
        self.status, self.detail, self.http_status, self.kind = status, detail, http_status, kind


@dataclass
class _Response:
    url: str
    http_status: int
    content_type: str | None
    location: str | None = None
    body: bytes | None = None
    retry_after: float | None = None


class _BoundedDecoder:
    """gzip/deflate decoding that stops at a size cap (decompression-bomb safe)."""

    def __init__(self, encoding: str, limit: int, url: str) -> None:
        self.limit, self.url, self.size, self.parts = limit, url, 0, []
        self.encoding = encoding
        if encoding in ("gzip", "x-gzip"):
            self.decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self.decompressor = zlib.decompressobj(zlib.MAX_WBITS)
        elif encoding in ("", "identity"):
            self.decompressor = None
        else:
            raise _Failure("unsupported_encoding", f"{url}: unsupported Content-Encoding {encoding!r}")
        self.started = False

    def _keep(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            raise _Failure("too_large", f"{self.url}: body exceeds {self.limit:,} bytes after decoding")
        self.parts.append(data)

    def feed(self, data: bytes) -> None:
        if self.decompressor is None:
            self._keep(data)
            return
        try:
            out = self.decompressor.decompress(data, self.limit - self.size + 1)
        except zlib.error:
            if self.encoding == "deflate" and not self.started:  # some servers send raw deflate
                self.decompressor = zlib.decompressobj(-zlib.MAX_WBITS)
                self.started = True
                self.feed(data)
                return
            raise _Failure("bad_response", f"{self.url}: corrupt {self.encoding} body") from None
        self.started = True
        self._keep(out)
        while self.decompressor.unconsumed_tail:
            self._keep(self.decompressor.decompress(self.decompressor.unconsumed_tail, self.limit - self.size + 1))

    def result(self) -> bytes:
        if self.decompressor is not None:
            self._keep(self.decompressor.flush())
        return b"".join(self.parts)


def _utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class HostSpacing:
    """Per-host minimum interval between request starts (thread-safe). A caller takes the host when its next start
    is due and sets the one after from the time it actually took it: a thread that wakes late (a busy CPU) pushes
    the next request back rather than letting it land early, which reserving slots ahead of time would do."""

    def __init__(self) -> None:
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()
        self._waiters = 0
        self._waiting_since = 0.0
        self.waited_s = 0.0
        """Wall time during which at least one caller was held back by an interval (not summed over threads)."""

    def wait(self, host: str, interval: float) -> None:
        waiting = False
        try:
            while True:
                with self._lock:
                    now = time.monotonic()
                    due = self._next.get(host, 0.0)
                    if now >= due:
                        self._next[host] = now + interval
                        return
                    if not waiting:
                        waiting = True
                        if self._waiters == 0:
                            self._waiting_since = now
                        self._waiters += 1
                time.sleep(due - now)
        finally:
            if waiting:
                with self._lock:
                    self._waiters -= 1
                    if self._waiters == 0:
                        self.waited_s += time.monotonic() - self._waiting_since

    def ready_at(self, host: str) -> float:
        """The `time.monotonic()` from which a request to `host` starts without waiting."""
        with self._lock:
            return self._next.get(host, 0.0)


class HttpFetcher:
    """Downloads cited pages under :class:`HttpConfig`'s rules; thread-safe (use one per process).

    Args:
        config (`HttpConfig`, *optional*): the rules (defaults when None).
        resolver (`Callable[[str, int], list[str]]`, *optional*): host name -> IP addresses; the system
            resolver (:func:`resolve_host`) when None. Tests pass a fake one.
    """

    def __init__(self, config: HttpConfig | None = None, resolver: Resolver | None = None) -> None:
        self.config = config or HttpConfig()
        self.resolver = resolver
        self._spacing = HostSpacing()
        self.faults = NetworkFaults()  # counted as http/<kind>
        self._robots: dict[tuple[str, str, int], RobotsRules | _Failure] = {}
        self._robots_locks: dict[tuple[str, str, int], threading.Lock] = {}
        self._lock = threading.Lock()
        self._ssl_context: ssl.SSLContext | None = None
        self.requests_made = 0

    # ---- public ---------------------------------------------------------------------------------------------

    def fetch(self, url: str) -> FetchResult:
        """Fetch one page (HTML only unless `html_only=False`); never raises for a bad URL or a bad server."""
        url = url.strip() if isinstance(url, str) else ""
        problem = self._check_url(url)
        if problem is not None:
            return FetchResult(url, url, problem.status, detail=problem.detail)
        cached = self._cache_get(url, "page")
        if cached is not None:
            return cached
        result = self._fetch_following(url, for_robots=False)
        self._cache_put(result, "page")
        return result

    def fetch_many(self, urls: Iterable[str], ordered: bool = True) -> Iterator[tuple[int, FetchResult]]:
        """Fetch many pages, several hosts at once (:class:`CrawlScheduler`); yields `(index in urls, result)`.

        With `ordered`, results come in the order of `urls` (output that does not depend on timing), else as they
        complete. URLs are taken from `urls` lazily, at most `config.lookahead` ahead of the result yielded next,
        so give them in :func:`crawl_order` when a host may have more than that in a row (sorted URLs). Closing the
        generator early cancels the downloads not started and waits for those under way.
        """
        window = self.config.lookahead
        source = enumerate(urls)
        pending: dict[int, Future[FetchResult]] = {}
        next_index = 0
        with CrawlScheduler(self) as scheduler:
            while True:
                for index, url in itertools.islice(source, window - len(pending)):
                    pending[index] = scheduler.submit(url)
                if not pending:
                    return
                if ordered:
                    done = [next_index]
                    next_index += 1
                else:
                    finished, _ = wait(pending.values(), return_when=FIRST_COMPLETED)
                    done = sorted(index for index, future in pending.items() if future in finished)
                for index in done:
                    yield index, pending.pop(index).result()

    # ---- checks ---------------------------------------------------------------------------------------------

    @staticmethod
    def _check_url(url: str) -> _Failure | None:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 (raises ValueError on a bad port)
        except ValueError as error:
            return _Failure("bad_url", f"{url!r}: not a valid URL ({error})")
        if parts.scheme.lower() not in ("http", "https"):
            return _Failure("bad_scheme", f"{url!r}: only http and https URLs are fetched, not {parts.scheme!r}")
        if not parts.hostname:
            return _Failure("bad_url", f"{url!r}: URL has no host")
        return None

    def _checked_addresses(self, url: str, host: str, port: int) -> list[str]:
        """Resolve `host` and check every address; raises `_Failure` (dns_error / blocked_address)."""
        try:
            addresses = [str(ipaddress.ip_address(host.split("%", 1)[0]))]
        except ValueError:
            addresses = []
        if not addresses:
            try:
                addresses = (self.resolver or resolve_host)(host, port)
            except (OSError, UnicodeError) as error:
                raise _Failure("dns_error", f"{url}: cannot resolve {host!r} ({error})") from None
            if not addresses:
                raise _Failure("dns_error", f"{url}: {host!r} has no address")
        if host.lower() in self.config.allow_hosts_for_testing:
            return addresses
        blocked = [address for address in addresses if not is_public_address(address)]
        if blocked:
            raise _Failure(
                "blocked_address",
                f"{url}: {host!r} resolves to a non-public address ({', '.join(blocked)}); refused",
            )
        return addresses

    # ---- request machinery ----------------------------------------------------------------------------------

    def _fetch_following(self, url: str, for_robots: bool) -> FetchResult:
        """One URL, redirects followed (each hop checked: scheme, address, robots.txt)."""
        config = self.config
        redirects: list[str] = []
        current = url
        last_status: int | None = None
        try:
            for _ in range(config.max_redirects + 1):
                problem = self._check_url(current)
                if problem is not None:
                    raise problem
                if not for_robots and config.respect_robots:
                    self._check_robots(current)
                response = self._request_with_retries(current, for_robots)
                last_status = response.http_status
                if response.location is None:
                    return FetchResult(url, current, "ok", response.http_status, response.content_type,
                                       response.body, fetched_at=_utc_now(), redirects=tuple(redirects))
                redirects.append(current)
                current = urljoin(current, response.location)
                if current in redirects:
                    raise _Failure("too_many_redirects", f"{url}: redirect loop through {current}", last_status)
            raise _Failure("too_many_redirects", f"{url}: more than {config.max_redirects} redirects", last_status)
        except _Failure as failure:
            return FetchResult(url, current, failure.status, failure.http_status or last_status,
                               detail=failure.detail, fetched_at=_utc_now(), redirects=tuple(redirects))

    def _request_with_retries(self, url: str, for_robots: bool) -> _Response:
        """One request under the project's retry rule (:mod:`~wikiref_dataset.web.faults`): 429/5xx and connection
        failures (timeouts too with `retry_on_timeout`) are retried; every one is counted in :attr:`faults`."""
        config = self.config
        for attempt in range(config.retries + 1):
            try:
                response = self._request(url, for_robots)
            except _Failure as failure:
                if failure.status not in ("connection_error", "timeout"):
                    raise
                self.faults.add("http", failure.kind or failure.status.removesuffix("_error"))
                retry = failure.status == "connection_error" or config.retry_on_timeout
                if not retry or attempt == config.retries:
                    self.faults.gave_up("http")
                    raise
                delay = retry_delay(attempt, config.backoff_s)
            else:
                if not is_retried_status(response.http_status):
                    return self._classify(url, response)
                self.faults.add("http", f"http_{response.http_status}")
                if attempt == config.retries:
                    self.faults.gave_up("http")
                    return self._classify(url, response)
                delay = retry_delay(attempt, config.backoff_s, response.retry_after, config.max_retry_after_s)
            logger.debug("%s: retrying in %.2f s (attempt %d)", url, delay, attempt + 2)
            time.sleep(delay)
        raise AssertionError("unreachable")

    @staticmethod
    def _classify(url: str, response: _Response) -> _Response:
        code = response.http_status
        if 300 <= code < 400 and response.location:
            return response
        if code in (404, 410):
            raise _Failure("not_found", f"{url}: HTTP {code}", code)
        if not 200 <= code < 300:
            raise _Failure(f"http_error_{code}", f"{url}: HTTP {code}", code)
        return response

    def _request(self, url: str, for_robots: bool) -> _Response:
        """One GET, no redirect following: guard, spacing, connection, headers, bounded body."""
        config = self.config
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname
        port = parts.port or (443 if scheme == "https" else 80)
        addresses = self._checked_addresses(url, host, port)
        self._spacing.wait(host.lower(), self._host_interval(scheme, host, port))
        deadline = time.monotonic() + config.total_timeout_s
        sock = self._connect(url, addresses, port)
        connection = None
        try:
            if scheme == "https":
                try:
                    sock = self._tls_context().wrap_socket(sock, server_hostname=host)
                except (ssl.SSLError, ssl.CertificateError) as error:
                    raise _Failure("tls_error", f"{url}: TLS handshake failed ({error})") from None
            sock.settimeout(config.read_timeout_s)
            connection = http.client.HTTPConnection(host, port, timeout=config.read_timeout_s)
            connection.sock = sock  # the checked connection; http.client never connects by name
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            connection.putrequest("GET", target, skip_accept_encoding=True)
            connection.putheader("User-Agent", config.user_agent)
            connection.putheader("Accept", "text/plain" if for_robots else "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1")
            connection.putheader("Accept-Encoding", "gzip, deflate")
            connection.putheader("Connection", "close")
            connection.endheaders()
            with self._lock:
                self.requests_made += 1
            response = connection.getresponse()
            return self._read_response(url, response, sock, deadline, for_robots)
        except _Failure:
            raise
        except TimeoutError:
            raise _Failure("timeout", f"{url}: no answer within {config.read_timeout_s:g} s", kind="timeout") from None
        except (http.client.RemoteDisconnected, http.client.IncompleteRead) as error:  # closed or cut short
            raise _Failure("connection_error", f"{url}: connection failed ({type(error).__name__}: {error})",
                           kind=classify_error(error)) from None
        except (http.client.HTTPException, ValueError) as error:
            raise _Failure("bad_response", f"{url}: malformed HTTP response ({type(error).__name__}: {error})") from None
        except OSError as error:
            raise _Failure("connection_error", f"{url}: connection failed ({error})", kind=classify_error(error)) from None
        finally:
            if connection is not None:
                connection.close()
            sock.close()

    def _connect(self, url: str, addresses: list[str], port: int) -> socket.socket:
        errors = []
        for address in addresses:
            try:
                return open_connection(address, port, self.config.connect_timeout_s)
            except TimeoutError:
                errors.append(f"{address}: timed out")
            except OSError as error:
                errors.append(f"{address}: {error.strerror or error}")
        status = "timeout" if all(e.endswith("timed out") for e in errors) else "connection_error"
        refused = all("refused" in e for e in errors)
        raise _Failure(status, f"{url}: cannot connect ({'; '.join(errors)})",
                       kind="timeout" if status == "timeout" else "refused" if refused else "connection")

    def _tls_context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            context = ssl.create_default_context()
            if self.config.ca_file:
                context.load_verify_locations(self.config.ca_file)
            self._ssl_context = context
        return self._ssl_context

    def _read_response(
        self, url: str, response: http.client.HTTPResponse, sock: socket.socket, deadline: float, for_robots: bool
    ) -> _Response:
        config = self.config
        code = response.status
        content_type = response.getheader("Content-Type")
        result = _Response(url, code, content_type, retry_after=parse_retry_after(response.getheader("Retry-After")))
        if 300 <= code < 400:
            result.location = response.getheader("Location")
            return result
        if not 200 <= code < 300:
            return result
        if config.html_only and not for_robots and content_type and not is_html_content_type(content_type):
            raise _Failure("not_html", f"{url}: content type {media_type(content_type)!r} is not HTML", code)
        max_bytes = 500_000 if for_robots else config.max_bytes  # RFC 9309: parse at least 500 KiB
        declared = response.getheader("Content-Length")
        if not for_robots and declared and declared.strip().isdigit() and int(declared) > max_bytes:
            raise _Failure("too_large", f"{url}: Content-Length {int(declared):,} exceeds {max_bytes:,} bytes", code)
        encoding = (response.getheader("Content-Encoding") or "").strip().lower()
        decoder = _BoundedDecoder(encoding, config.max_decoded_bytes, url)
        received = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Failure("timeout", f"{url}: response took longer than {config.total_timeout_s:g} s", code)
            sock.settimeout(min(config.read_timeout_s, remaining))
            chunk = response.read1(65536) if hasattr(response, "read1") else response.read(65536)
            if not chunk:
                break
            received += len(chunk)
            if received > max_bytes:
                if for_robots:  # RFC 9309: a longer robots.txt is cut, not refused
                    break
                raise _Failure("too_large", f"{url}: body exceeds {max_bytes:,} bytes", code)
            decoder.feed(chunk)
        body = decoder.result()
        if config.html_only and not for_robots and not content_type and not looks_like_html(body):
            raise _Failure("not_html", f"{url}: no content type and the body does not look like HTML", code)
        result.body = body
        return result

    # ---- robots.txt -----------------------------------------------------------------------------------------

    def _origin(self, url: str) -> tuple[str, str, int]:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)

    def _rules_for(self, scheme: str, host: str, port: int) -> RobotsRules | _Failure:
        origin = (scheme, host, port)
        with self._lock:
            lock = self._robots_locks.setdefault(origin, threading.Lock())
        with lock:
            if origin not in self._robots:
                self._robots[origin] = self._load_robots(scheme, host, port)
            return self._robots[origin]

    def _load_robots(self, scheme: str, host: str, port: int) -> RobotsRules | _Failure:
        netloc = f"[{host}]" if ":" in host else host
        default = 443 if scheme == "https" else 80
        robots_url = f"{scheme}://{netloc}{'' if port == default else f':{port}'}/robots.txt"
        result = self._cache_get(robots_url, "robots")
        if result is None:
            result = self._fetch_following(robots_url, for_robots=True)
            self._cache_put(result, "robots")
        if result.ok:
            text = (result.body or b"").decode("utf-8", errors="replace")
            return RobotsRules.parse(text, self.config.robots_token)
        code = result.http_status or 0
        if result.status == "not_found" or 400 <= code < 500:
            return RobotsRules.allow_all()
        if result.status in _NETWORK_FAILURES:
            return _Failure(result.status, f"robots.txt unreachable: {result.detail}")
        return RobotsRules.disallow_all()  # 5xx and the like: RFC 9309 says assume complete disallow

    def _check_robots(self, url: str) -> None:
        rules = self._rules_for(*self._origin(url))
        if isinstance(rules, _Failure):
            raise _Failure(rules.status, f"{url}: {rules.detail}")
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if not rules.allowed(path):
            raise _Failure("robots_disallowed", f"{url}: disallowed by robots.txt")

    def _host_interval(self, scheme: str, host: str, port: int) -> float:
        interval = self.config.min_interval_s
        rules = self._robots.get((scheme, host.lower(), port))
        if isinstance(rules, RobotsRules) and rules.crawl_delay:
            interval = max(interval, min(rules.crawl_delay, self.config.max_crawl_delay_s))
        return interval

    # ---- on-disk cache --------------------------------------------------------------------------------------

    def _cache_paths(self, url: str, kind: str) -> tuple[Path, Path] | None:
        if not self.config.cache_dir:
            return None
        digest = hashlib.sha256(f"{kind}\n{url}".encode()).hexdigest()
        folder = Path(self.config.cache_dir) / digest[:2]
        return folder / f"{digest}.json", folder / f"{digest}.body"

    def _cache_get(self, url: str, kind: str) -> FetchResult | None:
        paths = self._cache_paths(url, kind)
        if paths is None or not paths[0].is_file():
            return None
        try:
            entry = json.loads(paths[0].read_text(encoding="utf-8"))
            if self.config.cache_ttl_s is not None and time.time() - entry["stored"] > self.config.cache_ttl_s:
                return None
            body = paths[1].read_bytes() if entry["has_body"] else None
            if entry["has_body"] and hashlib.sha256(body).hexdigest() != entry["body_sha256"]:
                return None
        except (OSError, ValueError, KeyError) as error:
            logger.warning("%s: unreadable cache entry %s (%s); fetching again", url, paths[0], error)
            return None
        values = {f.name: entry["result"][f.name] for f in fields(FetchResult) if f.name in entry["result"]}
        values["redirects"] = tuple(values.get("redirects", ()))
        return FetchResult(**{**values, "body": body, "from_cache": True})

    def _cache_put(self, result: FetchResult, kind: str) -> None:
        paths = self._cache_paths(result.url, kind)
        if paths is None or result.status not in _CACHEABLE and not result.status.startswith("http_error_4"):
            return
        if result.http_status in (408, 429):
            return
        meta_path, body_path = paths
        record = {f.name: getattr(result, f.name) for f in fields(FetchResult) if f.name not in ("body", "from_cache")}
        entry = {"result": record, "stored": time.time(), "has_body": result.body is not None}
        try:
            meta_path.parent.mkdir(parents=True, exist_ok=True)
            if result.body is not None:
                entry["body_sha256"] = hashlib.sha256(result.body).hexdigest()
                _atomic_write(body_path, result.body)
            _atomic_write(meta_path, json.dumps(entry).encode("utf-8"))
        except OSError as error:
            logger.warning("%s: cannot write the cache entry %s (%s)", result.url, meta_path, error)


def _atomic_write(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# ----------------------------------------------------------------------------------------------------------------
# Many URLs: scheduling across hosts
# ----------------------------------------------------------------------------------------------------------------


def crawl_order(urls: Sequence[str]) -> list[int]:
    """The indices of `urls` in the order to fetch them when the results are taken in order (a deterministic
    function of `urls`, never of timing).

    Each host's URLs keep their order among themselves and are spread evenly over the whole order: its k-th of n
    URLs sits at (k + phase) / n, with a phase in [0, 1) fixed by the host name (so that hosts with one URL, or the
    same number, do not bunch up). Any stretch of the order then holds each host in its share of the whole, so a
    crawl that reaches `lookahead` URLs ahead keeps every host busy until the end, and takes about the time of its
    slowest host (URLs x interval) whatever the number of URLs one host has in a row; sorted input would leave one
    host in reach for as long as it has more than `lookahead` URLs in a row. URLs without a host (refused unfetched)
    are spread as one host.
    """
    by_host: dict[str, list[int]] = {}
    for index, url in enumerate(urls):
        try:
            host = (urlsplit(url.strip()).hostname or "").lower()
        except (AttributeError, ValueError):
            host = ""
        by_host.setdefault(host, []).append(index)
    keyed: list[tuple[float, str, int]] = []
    for host, indices in by_host.items():
        phase = int(hashlib.sha1(host.encode("utf-8")).hexdigest()[:13], 16) / 16**13
        keyed.extend(((rank + phase) / len(indices), host, index) for rank, index in enumerate(indices))
    return [index for _, _, index in sorted(keyed)]


class CrawlScheduler:
    """Fetches many URLs with one :class:`HttpFetcher`, several hosts at once and each host politely.

    Each submitted URL waits in its host's queue, in submission order. A worker thread (at most
    `config.concurrency`, started as URLs come) takes the first URL of a *ready* host — fewer than
    `config.per_host_connections` of its URLs in flight, and its interval (`config.min_interval_s`, or a longer
    robots.txt Crawl-delay) passed since its last request started — choosing, among the ready hosts, the one with
    the most URLs queued (when the workers are the bottleneck, a host left with many URLs at the end would be
    fetched alone, one interval after the other), and among those the one whose first URL was submitted earliest.
    When no host is ready the workers sleep until one is. The fetcher's own spacing still holds every request it makes
    (robots.txt, retries, a redirect hop to another host): the scheduler chooses the order and never loosens the
    politeness. A URL the fetcher refuses without a request (bad scheme, bad URL) is answered at once.

    Use it as a context manager (leaving the block cancels the URLs not started and waits for those under way), or
    call :meth:`close`.

    Args:
        fetcher (`HttpFetcher`): downloads under its `config`, which also gives the limits.
    """

    def __init__(self, fetcher: HttpFetcher) -> None:
        self.fetcher = fetcher
        self.concurrency = fetcher.config.concurrency
        self.per_host_connections = fetcher.config.per_host_connections
        self._condition = threading.Condition()
        self._queues: dict[str, deque[tuple[int, str, Future[FetchResult]]]] = {}
        self._in_flight: dict[str, int] = {}
        # Every host with queued URLs and a free connection has one entry in one of two heaps: _waiting until its
        # interval passes, then _ready, ordered by URLs queued (most first; counted when the host became ready),
        # then by the number of its first URL.
        self._scheduled: set[str] = set()
        self._waiting: list[tuple[float, int, str]] = []  # (ready at, number of its first URL, host)
        self._ready: list[tuple[int, int, str]] = []  # (-URLs queued, number of its first URL, host)
        self._submitted = 0
        self._workers: list[threading.Thread] = []
        self._closed = False

    def __enter__(self) -> CrawlScheduler:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def submit(self, url: str) -> Future[FetchResult]:
        """Queue `url`; the future's result is :meth:`HttpFetcher.fetch`'s answer (it never raises for a bad URL or
        server). Raises `RuntimeError` once the scheduler is closed."""
        future: Future[FetchResult] = Future()
        url = url.strip() if isinstance(url, str) else ""
        refused = HttpFetcher._check_url(url) is not None
        with self._condition:
            if self._closed:
                raise RuntimeError("CrawlScheduler.submit: the scheduler is closed")
            if not refused:
                host = urlsplit(url).hostname.lower()
                self._queues.setdefault(host, deque()).append((self._submitted, url, future))
                self._submitted += 1
                self._schedule(host)
                if len(self._workers) < self.concurrency:
                    worker = threading.Thread(target=self._work, name=f"wikiref-http-{len(self._workers)}", daemon=True)
                    self._workers.append(worker)
                    worker.start()
                self._condition.notify()
        if refused:
            future.set_running_or_notify_cancel()
            future.set_result(self.fetcher.fetch(url))  # answered by the URL check, no request
        return future

    def close(self, cancel_pending: bool = True) -> None:
        """Stop: cancel the URLs not started (or, with `cancel_pending=False`, fetch them first), wait for the
        requests under way (bounded by the fetcher's timeouts) and end the worker threads."""
        with self._condition:
            self._closed = True
            if cancel_pending:
                for queue in self._queues.values():
                    for _, _, future in queue:
                        future.cancel()
                self._queues.clear()
                self._scheduled.clear()
                self._waiting.clear()
                self._ready.clear()
            self._condition.notify_all()
            workers = list(self._workers)
        for worker in workers:
            worker.join()

    # ---- under self._condition ------------------------------------------------------------------------------

    def _schedule(self, host: str) -> None:
        """Give `host` its heap entry when it has queued URLs, a free connection and none yet."""
        queue = self._queues.get(host)
        if not queue or host in self._scheduled or self._in_flight.get(host, 0) >= self.per_host_connections:
            return
        self._scheduled.add(host)
        heapq.heappush(self._waiting, (self.fetcher._spacing.ready_at(host), queue[0][0], host))

    def _take(self) -> tuple[str, str, Future[FetchResult]] | None:
        """The next URL to fetch now, or None when no host is ready."""
        now = time.monotonic()
        while self._waiting and self._waiting[0][0] <= now:
            _, first, host = heapq.heappop(self._waiting)
            heapq.heappush(self._ready, (-len(self._queues[host]), first, host))
        while self._ready:
            _, first, host = heapq.heappop(self._ready)
            ready_at = self.fetcher._spacing.ready_at(host)
            if ready_at > now:  # a redirect hop or robots.txt request took the host's slot meanwhile
                heapq.heappush(self._waiting, (ready_at, first, host))
                continue
            queue = self._queues[host]
            _, url, future = queue.popleft()
            self._scheduled.discard(host)
            if not future.set_running_or_notify_cancel():  # cancelled by whoever submitted it
                if queue:
                    self._scheduled.add(host)
                    heapq.heappush(self._ready, (-len(queue), queue[0][0], host))
                else:
                    del self._queues[host]
                continue
            self._in_flight[host] = self._in_flight.get(host, 0) + 1
            if not queue:
                del self._queues[host]
            elif self._in_flight[host] < self.per_host_connections:
                # Another connection may open once this request's slot has passed (the host's interval: a longer
                # robots.txt Crawl-delay once it is known); re-checked against the fetcher's spacing when popped.
                self._scheduled.add(host)
                interval = self.fetcher._host_interval(*self.fetcher._origin(url))
                heapq.heappush(self._waiting, (now + interval, queue[0][0], host))
            return host, url, future
        return None

    # ---- worker threads -------------------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            with self._condition:
                job = self._take()
                while job is None:
                    if self._closed and not self._queues:
                        return
                    timeout = self._waiting[0][0] - time.monotonic() if self._waiting else None
                    self._condition.wait(timeout)
                    job = self._take()
            host, url, future = job
            try:
                future.set_result(self.fetcher.fetch(url))
            except Exception as error:  # a bug, not a bad page (fetch reports those): give it to the caller
                future.set_exception(error)
            finally:
                with self._condition:
                    self._in_flight[host] -= 1
                    if not self._in_flight[host]:
                        del self._in_flight[host]
                    self._schedule(host)
                    self._condition.notify_all()
