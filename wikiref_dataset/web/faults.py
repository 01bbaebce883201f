"""Network faults: the retry rule every network source of the documents stage follows, and the count of what went
wrong, by kind.

Common Crawl's index answers 503 when it throttles, range reads of WARC files get reset, live sites time out. A
request to the CDX index or a WARC range read therefore goes through :func:`get_with_retries`: a ``429`` or ``5xx``
answer, a connection reset (before or in the middle of the body), a refused connection, a timeout (connect, or no byte
for ``timeout`` seconds: a stalled response) and a body shorter than announced are each one *fault*; the request is
tried again after ``backoff_s * 2**attempt`` seconds, or after the server's ``Retry-After`` (seconds or an HTTP date)
when that is longer, up to ``max_retry_after_s``. Every fault is counted by source and kind in a
:class:`NetworkFaults`, as is every request given up after ``retries`` retries (:class:`NetworkFault` is raised; the
caller records the URL as failed, and a rerun of the build retries it).

Hand-written on ``requests`` rather than urllib3's ``Retry`` (mounted on an adapter): ``Retry`` covers the answer's
status and the connection, not a reset or a stall while the body is read (that happens after it returns), and it
keeps no count of what it retried. :class:`~wikiref_dataset.web.http.HttpFetcher`, which opens its own sockets,
follows the same rule (:func:`retry_delay`, :func:`parse_retry_after`) and counts into the same kinds.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

__all__ = ["FAULT_KINDS", "SOURCE_NAMES", "IncompleteBody", "NetworkFault", "NetworkFaults", "classify_error",
           "describe_faults", "fault_counts", "get_with_retries", "network_errors",
           "parse_retry_after", "retry_delay", "is_retried_status"]  # fmt: skip

FAULT_KINDS = ("http_429", "http_5xx", "reset", "refused", "timeout", "incomplete", "connection")
"""The kinds of fault counted (``http_5xx`` is counted under its code: ``http_503``, ``http_502`` ...)."""

SOURCE_NAMES = {"cdx": "CDX index", "warc": "WARC range reads", "http": "live web"}
"""How the closing summary names each source of faults."""

T = TypeVar("T")


def is_retried_status(code: int) -> bool:
    """Whether an HTTP answer with this status is a fault to retry (429 and every 5xx)."""
    return code == 429 or 500 <= code <= 599


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date); None when absent or bad."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def retry_delay(attempt: int, backoff_s: float, retry_after: float | None = None,
                max_retry_after_s: float = 30.0) -> float:
    """Seconds before retry ``attempt + 1``: exponential backoff, or the server's Retry-After (capped) if longer."""
    return max(backoff_s * 2**attempt, min(retry_after or 0.0, max_retry_after_s))


class NetworkFault(Exception):
    """A request given up after its retries; `kind` is the last fault's kind, `attempts` the requests made."""

    def __init__(self, message: str, kind: str, attempts: int) -> None:
        super().__init__(message)
        self.kind = kind
        self.attempts = attempts


class NetworkFaults:
    """Thread-safe counts of faults by ``<source>/<kind>``, and of requests given up (``<source>/gave_up``)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, source: str, kind: str) -> None:
        with self._lock:
            self._counts[f"{source}/{kind}"] += 1

    def gave_up(self, source: str) -> None:
        with self._lock:
            self._counts[f"{source}/gave_up"] += 1

    def counts(self) -> dict[str, int]:
        """``{"cdx/http_503": 4, "warc/reset": 2, "warc/gave_up": 1, ...}``."""
        with self._lock:
            return dict(self._counts)


def _chain(error: BaseException) -> Iterator[BaseException]:
    """`error`, its causes and contexts, the exceptions in its args and urllib3's `reason` (requests wraps urllib3,
    which wraps the socket's error), at most 12 deep."""
    pending, seen = [error], set()
    while pending and len(seen) < 12:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        pending += [item for item in (current.__cause__, current.__context__, getattr(current, "reason", None),
                                      *getattr(current, "args", ())) if isinstance(item, BaseException)]


def classify_error(error: BaseException) -> str:
    """The fault kind of an exception raised by a request or while reading its body (see :data:`FAULT_KINDS`)."""
    import requests
    import urllib3

    chain = list(_chain(error))
    # refused first: urllib3's NewConnectionError (a refused connection) subclasses its ConnectTimeoutError
    if any(isinstance(item, ConnectionRefusedError) for item in chain):
        return "refused"
    if any(isinstance(item, (requests.Timeout, urllib3.exceptions.TimeoutError, socket.timeout, TimeoutError))
           and not isinstance(item, urllib3.exceptions.NewConnectionError) for item in chain):
        return "timeout"
    if any(isinstance(item, (http.client.IncompleteRead, urllib3.exceptions.IncompleteRead)) for item in chain):
        return "incomplete"
    if any(isinstance(item, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError,
                             http.client.RemoteDisconnected)) for item in chain):
        return "reset"
    if any("reset by peer" in str(item) or "Connection aborted" in str(item) for item in chain):
        return "reset"
    return "connection"


def network_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean the network failed (not the request being wrong): retried as faults."""
    import requests
    import urllib3

    return (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError,
            urllib3.exceptions.ProtocolError, urllib3.exceptions.TimeoutError, http.client.HTTPException,
            ConnectionError, TimeoutError, socket.timeout)  # fmt: skip


class IncompleteBody(Exception):
    """A body shorter than the request asked for (a `read` callback raises it; counted as ``incomplete``)."""


def get_with_retries(session: Any, url: str, read: Callable[[Any], T], *, source: str, faults: NetworkFaults,
                     params: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
                     timeout: float = 30.0, retries: int = 3, backoff_s: float = 1.0, max_retry_after_s: float = 30.0,
                     before: Callable[[], None] | None = None) -> T:
    """GET `url` with a ``requests`` session and return ``read(response)``, retrying faults (see the module docstring).

    Args:
        read: turns a response whose status is not a fault into the result; it reads the body (streamed), so a reset
            or stall in the middle of the body is a fault too. It may raise :class:`IncompleteBody`.
        source: the name faults are counted under (``cdx``, ``warc``).
        before: called before every attempt (a politeness interval).

    Raises:
        NetworkFault: the last attempt failed too; the message names the URL, the attempts and the last fault.
    """
    errors = network_errors()
    problem = kind = ""
    for attempt in range(retries + 1):
        if before is not None:
            before()
        retry_after = None
        try:
            with session.get(url, params=params, headers=headers, timeout=timeout, stream=True) as response:
                code = response.status_code
                if not is_retried_status(code):
                    return read(response)
                kind = f"http_{code}"
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                problem = f"HTTP {code}" + (f" (Retry-After {response.headers['Retry-After']})"
                                            if response.headers.get("Retry-After") else "")
        except IncompleteBody as error:
            kind, problem = "incomplete", str(error)
        except errors as error:
            kind, problem = classify_error(error), f"{type(error).__name__}: {error}"
        faults.add(source, kind)
        if attempt == retries:
            break
        time.sleep(retry_delay(attempt, backoff_s, retry_after, max_retry_after_s))
    faults.gave_up(source)
    raise NetworkFault(f"{url}: failed after {retries + 1} attempts (last: {problem})", kind, retries + 1)


def describe_faults(counts: dict[str, int]) -> str:
    """One line for a closing summary: ``CDX index: HTTP 503 x12, reset x3; WARC range reads: timeout x1 (2 requests
    given up)``, or "" when there was none."""
    by_source: dict[str, list[str]] = {}
    gave_up = 0
    for key in sorted(counts):
        source, _, kind = key.partition("/")
        if kind == "gave_up":
            gave_up += counts[key]
            continue
        name = kind.replace("http_", "HTTP ").replace("_", " ")
        by_source.setdefault(SOURCE_NAMES.get(source, source), []).append(f"{name} x{counts[key]}")
    if not by_source:
        return ""
    text = "; ".join(f"{source}: {', '.join(kinds)}" for source, kinds in by_source.items())
    return text + (f" ({gave_up} request(s) given up after their retries)" if gave_up else " (all retried)")


def fault_counts(counts: dict[str, int]) -> dict[str, int]:
    """The closing table's rows for `counts` (``<source>/<kind>``): ``network faults, CDX index: HTTP 503`` ...,
    then ``requests given up after their retries, CDX index``; none when there was no fault."""
    rows: dict[str, int] = {}
    for key in sorted(counts, key=lambda key: (key.endswith("/gave_up"), key)):
        source, _, kind = key.partition("/")
        if not counts[key]:
            continue
        name = SOURCE_NAMES.get(source, source)
        if kind == "gave_up":
            rows[f"requests given up after their retries, {name}"] = counts[key]
        else:
            rows[f"network faults, {name}: {kind.replace('http_', 'HTTP ').replace('_', ' ')}"] = counts[key]
    return rows
