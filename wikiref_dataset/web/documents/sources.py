"""Where stage 2 finds the cited pages: the sources and the order they are tried in (:class:`DocumentSources`), and
what one source gave for a page (:class:`Acquired`: the WARC index's capture, Common Crawl's outcome, a live-web
download), as the fetch step records it.

Sources are tried in a fixed order, each for the URLs the ones before it could not serve: a previous documents folder
(``documents``: its ``ok`` documents are taken as they are), the local WARC index, Common Crawl (``common_crawl``:
:mod:`~wikiref_dataset.web.commoncrawl`, per-URL CDX lookups or one join with the columnar URL index, records read by
byte range; outcomes counted as ``cc/<outcome>``), then the live web (a Wayback snapshot URL is fetched in its raw
``id_`` form, without the Wayback toolbar). Archived pages are the captures nearest the citation's access-date, else
its date, else the newest (:mod:`~wikiref_dataset.web.captures`). Each document records its provenance: ``source``
(``warc``, ``cc``, ``http``), ``capture_date`` (the capture's time, or the download's), ``warc_filename`` +
``warc_offset`` + ``warc_length`` (archived pages) and ``final_url`` (after redirects).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..commoncrawl import CommonCrawlConfig, CrawlResult
from ..faults import is_retried_status
from ..http import FetchResult, HttpConfig
from ..warc import WarcIndex, WarcReadError
from .inputs import Citations
from .outputs import CitedDocument, reused_document_files

__all__ = ["Acquired", "DocumentSources", "check_sources"]


@dataclass
class DocumentSources:
    """Where stage 2 looks for the cited pages besides the local WARC files (given apart: ``warc_paths`` of
    :func:`~wikiref_dataset.web.documents.run.run_documents`, the build's ``warcs``). Sources are tried in this order,
    each for the pages the ones before could not serve: `documents`, the WARC files, `common_crawl`, `http`; each
    document records which one served it.

    Args:
        common_crawl (:class:`~wikiref_dataset.web.commoncrawl.CommonCrawlConfig`, *optional*): look the pages up in
            Common Crawl (or another CDX-indexed archive): per URL on a CDX server, or all at once in the columnar
            URL index.
        http (`bool`, defaults to `False`): then download what is still missing from the live web (needs network).
        http_config (:class:`~wikiref_dataset.web.http.HttpConfig`, *optional*): the rules of those downloads.
        documents (`str`, *optional*): a previous documents folder (the ``--out`` of ``wikiref documents``, or a
            build's ``<work>/documents``): its documents are taken as they are (title, text, sentences, provenance);
            the pages it lacks or failed on go to the other sources.
    """

    common_crawl: CommonCrawlConfig | None = field(
        default=None, metadata={"help": "Look pages up in Common Crawl (CDX server or columnar URL index)."})
    http: bool = field(default=False, metadata={"help": "Download pages still missing from the live web."})
    http_config: HttpConfig | None = field(default=None, metadata={"help": "Rules of the live-web downloads."})
    documents: str | None = field(
        default=None, metadata={"help": "Reuse a `wikiref documents` output folder's documents as they are."})

    def __post_init__(self) -> None:
        if self.common_crawl is not None and not isinstance(self.common_crawl, CommonCrawlConfig):
            raise ValueError(f"common_crawl must be a CommonCrawlConfig, got {type(self.common_crawl).__name__}")
        if self.http_config is not None and not self.http:
            raise ValueError("http_config is given but http is off")
        if self.documents is not None:
            self.documents = str(self.documents)
            reused_document_files(self.documents)  # raises FileNotFoundError for a folder that is not one

    @property
    def any(self) -> bool:
        """Whether any source besides the WARC files is on."""
        return self.common_crawl is not None or self.http or self.documents is not None

    def to_dict(self) -> dict:
        """JSON-ready settings (``build.json``; a rerun with other settings starts stage 2 over)."""
        return {"common_crawl": self.common_crawl.to_dict() if self.common_crawl is not None else None,
                "http": self.http, "documents": str(Path(self.documents).resolve()) if self.documents else None}


@dataclass
class Acquired:
    """A page body from one source, or why there is none."""

    status: str
    source: str = ""
    body: bytes | None = None
    content_type: str | None = None
    capture_date: str | None = None
    final_url: str | None = None
    warc_record: str | None = None
    detail: str = ""
    warc_filename: str | None = None
    warc_offset: int | None = None
    warc_length: int | None = None
    reused: CitedDocument | None = None  # a document of a previous documents folder, taken as it is
    transient: bool = False  # failed because of the network (see CitedDocument.transient)
    cc_outcome: str | None = None
    carried: bool = False  # `reused` is this task's own result of an earlier run (see reopen_transient_failures)

    @classmethod
    def from_archive(cls, index: WarcIndex, citations: Citations, max_bytes: int) -> Acquired:
        """The local WARC index's capture of the page (the one nearest the citation's date), with its body."""
        near = citations.near
        capture = index.lookup(citations.fetch_url, near=near)
        if capture is None and citations.url and citations.url != citations.fetch_url:
            capture = index.lookup(citations.url, near=near)
        if capture is None:
            return cls("not_archived", detail=f"{citations.fetch_url}: no capture in the WARC index")
        acquired = cls("ok", "warc", content_type=capture.content_type, capture_date=capture.date,
                       final_url=capture.url, warc_record=capture.record, warc_filename=Path(capture.path).name,
                       warc_offset=capture.offset, warc_length=capture.length)
        if capture.status != 200:
            if capture.status in (404, 410):
                acquired.status = "not_found"
            elif 300 <= capture.status < 400:
                acquired.status = "redirect_not_archived"
            else:
                acquired.status = f"http_error_{capture.status}"
            acquired.detail = f"{citations.fetch_url}: archived capture {capture.record} has HTTP {capture.status}"
            return acquired
        try:
            acquired.body = index.read(capture, max_bytes=max_bytes)
        except WarcReadError as error:
            acquired.status = "too_large" if error.reason == "too_large" else "archive_read_error"
            acquired.detail = str(error)
        return acquired

    @classmethod
    def from_common_crawl(cls, result: CrawlResult) -> Acquired:
        """What Common Crawl gave for the page, its outcome turned into a document status."""
        status = {"found": "ok", "not_captured": "not_archived", "not_html": "not_html",
                  "fetch_failed": "archive_unreachable" if result.transient else "archive_read_error",
                  "lookup_failed": "index_error" if result.transient else "index_refused"}.get(result.outcome)
        if status is None:  # non_200
            code = result.http_status
            status = ("not_found" if code in (404, 410) else "redirect_not_archived" if code and 300 <= code < 400
                      else f"http_error_{code}" if code else "http_error")
        capture = result.capture
        acquired = cls(status, "cc" if status == "ok" else "", result.body, result.content_type,
                       final_url=result.final_url, detail=result.detail, transient=result.transient,
                       cc_outcome=result.outcome)
        if capture is not None:
            acquired.capture_date, acquired.warc_record = capture.timestamp, capture.record
            acquired.warc_filename, acquired.warc_offset = capture.filename, capture.offset
            acquired.warc_length = capture.length
        return acquired

    @classmethod
    def from_http(cls, result: FetchResult) -> Acquired:
        """A live-web download; transient when the network or a 429/5xx answer (not the cache's) kept the page."""
        transient = result.status in ("connection_error", "timeout") or (
            not result.from_cache and result.http_status is not None and is_retried_status(result.http_status)
            and result.status.startswith("http_error_"))
        return cls(
            result.status, "http" if result.ok else "", result.body, result.content_type, result.fetched_at,
            result.final_url, None, result.detail, transient=transient,
        )


def check_sources(sources: DocumentSources | None) -> None:
    """Fail now, not hours later in a stage, when the columnar index names no Parquet file, one without the
    index's columns, or a remote one that cannot be read (one file's footer is read).

    Raises:
        FileNotFoundError, ValueError: as :class:`~wikiref_dataset.web.commoncrawl.ColumnarIndex` does.
    """
    crawl = sources.common_crawl if sources is not None else None
    if crawl is None or not crawl.cc_index:
        return
    from ..commoncrawl import ColumnarIndex, index_files

    listed = index_files(crawl.cc_index, crawl.crawls, crawl.cc_data)
    ColumnarIndex(crawl.cc_index, crawl.crawls, crawl.cc_data, files=listed.files[:1]).close()
