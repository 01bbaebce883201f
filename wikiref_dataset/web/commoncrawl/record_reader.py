"""One WARC record read by byte range (:class:`WarcRecordReader`): ``length`` bytes at ``offset`` of the WARC file an
index names, from a URL prefix (``https://data.commoncrawl.org``) with an HTTP ``Range`` request or from a local
folder, parsed with warcio (chunked transfer and gzip/deflate/brotli content encodings decoded) into the HTTP
response it holds (:class:`ArchivedResponse`).

Hand-written on ``requests`` rather than cdx_toolkit's ``fetch_warc_record``: that one spaces all requests to a host by
one global interval (3 s for hosts other than Common Crawl's) shared by every thread, retries a connection failure for
up to 100 minutes, has no size cap and reads no local files. Reads follow the project's retry rule
(:mod:`~wikiref_dataset.web.faults`), as lookups do.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..faults import IncompleteBody, NetworkFault, NetworkFaults, get_with_retries
from ..warc import WarcReadError
from .config import is_remote, thread_session
from .indexed_capture import IndexedCapture, int_or_none

__all__ = ["ArchivedResponse", "WarcRecordReader"]


@dataclass
class ArchivedResponse:
    """An HTTP response read back from a WARC record."""

    target_uri: str
    status: int
    content_type: str | None
    location: str | None
    body: bytes


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
        self.remote = is_remote(base)
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
                status = int_or_none(record.http_headers.get_statuscode()) or 0
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
