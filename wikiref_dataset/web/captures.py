"""Which archived capture of a cited page to use: the one nearest the day the Wikipedia editor read it.

A page changes between captures; the statement describes the page as it was when it was cited. The capture chosen
is the one nearest the citation's ``access-date``, else its ``date`` (the publication date), else the newest one
(:func:`choose_capture`). Every source of archived pages — the local WARC index, the Common Crawl CDX servers and
the columnar URL index — chooses with these functions, so they agree.

Citation dates are free text as editors wrote them (``14 April 2008``, ``September 8, 2012``, ``2016-01-12``,
``May 2010``, ``2010``); :func:`citation_date` reads them with ``dateutil`` and refuses text without a four-digit
year (``dateutil`` would otherwise fill in the current year) or out of the web's range.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import TypeVar

__all__ = ["capture_time", "choose_capture", "citation_date", "iso_utc", "target_date"]

_T = TypeVar("_T")
_YEAR = re.compile(r"(?<!\d)(1[9]\d\d|2[01]\d\d)(?!\d)")
_DEFAULT = datetime(2000, 1, 1)  # fills the day (and month) a citation leaves out: "May 2010" -> 1 May 2010
_TIMESTAMP = re.compile(r"^\d{4,14}$")


def citation_date(text: str | None) -> datetime | None:
    """A citation's date field as a UTC datetime, or None when it does not say a day, month or year clearly.

    >>> citation_date("14 April 2008")
    datetime.datetime(2008, 4, 14, 0, 0, tzinfo=datetime.timezone.utc)
    """
    if not text or not isinstance(text, str) or not _YEAR.search(text):
        return None
    from dateutil import parser

    try:
        parsed = parser.parse(text.strip(), default=_DEFAULT)
    except (ValueError, OverflowError):
        return None
    if not 1990 <= parsed.year <= 2100:
        return None
    return parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed.astimezone(timezone.utc)


def target_date(access_date: str | None, date: str | None) -> datetime | None:
    """The day whose capture is wanted: the citation's access-date, else its date, else None (then: the newest)."""
    return citation_date(access_date) or citation_date(date)


def capture_time(value: str | datetime | None) -> datetime | None:
    """A capture's time from a CDX timestamp (``20240221123456``, shorter prefixes allowed), an ISO 8601 string
    (``2024-02-21T12:34:56Z``) or a datetime; None when it does not parse."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
    text = str(value).strip()
    try:
        if _TIMESTAMP.match(text):
            padded = (text + "0101000000"[len(text) - 4 :]) if len(text) < 14 else text
            return datetime.strptime(padded[:14], "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed.astimezone(timezone.utc)


def iso_utc(value: str | datetime | None) -> str | None:
    """A capture time as ISO 8601 UTC (``2024-02-21T12:34:56Z``); the value as given when it does not parse."""
    parsed = capture_time(value)
    if parsed is None:
        return None if value is None else str(value)
    return parsed.strftime("%Y-%m-%dT%H:%M:%SZ")


def choose_capture(captures: Iterable[_T], near: datetime | None, time_of: Callable[[_T], datetime | None]) -> _T | None:
    """The capture nearest `near` (ties: the later one); without `near`, the newest. Captures whose time does not
    parse come last (the first of them is returned when no time parses). None for no capture."""
    items = list(captures)
    if not items:
        return None
    dated = [(time_of(item), position, item) for position, item in enumerate(items)]
    known = [entry for entry in dated if entry[0] is not None]
    if not known:
        return items[0]
    if near is None:
        return max(known, key=lambda entry: (entry[0], -entry[1]))[2]
    return min(known, key=lambda entry: (abs((entry[0] - near).total_seconds()), -entry[0].timestamp(), entry[1]))[2]
