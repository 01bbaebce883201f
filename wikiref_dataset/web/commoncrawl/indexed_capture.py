"""One capture as an index lists it (:class:`IndexedCapture`: a CDX server's row, the columnar index's, the join's
output), and the SURT keys an index lists a URL under (:func:`surt_key`, :func:`lookup_keys`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..captures import capture_time
from ..urls import normalize_url

__all__ = ["IndexedCapture", "capture_order", "int_or_none", "lookup_keys", "surt_key"]


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


def capture_order(capture: IndexedCapture) -> tuple[str, str, int]:
    """The order a URL's captures are listed in: by time, then by record."""
    return capture.timestamp, capture.filename, capture.offset or 0


def surt_key(url: str) -> str:
    """The SURT form of `url` (``com,example)/a?b=1``), as Common Crawl's ``url_surtkey`` and CDX ``urlkey`` are."""
    import surt

    return surt.surt(url)


def lookup_keys(url: str) -> list[str]:
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


def int_or_none(value: Any) -> int | None:
    """An index field (offset, length, status) as an integer; None when it is missing or not a number."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
