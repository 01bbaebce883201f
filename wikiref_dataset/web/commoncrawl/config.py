"""Where and how to look cited pages up in Common Crawl (or another CDX-indexed archive): the settings
(:class:`CommonCrawlConfig`), Common Crawl's own servers, and the ``requests`` session every lookup and read goes
through."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["COMMON_CRAWL_DATA", "COMMON_CRAWL_INDEX", "CommonCrawlConfig", "is_remote", "thread_session"]

COMMON_CRAWL_INDEX = "https://index.commoncrawl.org"
"""Common Crawl's CDX index server; crawl ``C`` is served at ``<this>/C-index``."""
COMMON_CRAWL_DATA = "https://data.commoncrawl.org"
"""Where Common Crawl's WARC files are served (the index's ``filename``/``warc_filename`` are relative to it)."""

_CRAWL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
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


def is_remote(location: str) -> bool:
    """Whether a location (`cc_index`, `cc_data`, an index file) is read over the network rather than from disk."""
    return "://" in location and not location.lower().startswith("file://")
