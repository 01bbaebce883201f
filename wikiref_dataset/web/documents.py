"""Stage 2 of the WikiRef build: the pages that statements cite, as documents (title + text + sentences).

Input: the statements of stage 1, datatrove JSONL (``*.jsonl`` / ``*.jsonl.gz``) records
``{"text": statement, "id": ..., "metadata": {"fetch_url": ..., "url": ..., ...}}``. Only ``metadata.fetch_url``
(the URL to download: the archive copy when the original is dead), ``metadata.url`` (its fallback) and the id
are used.

Each cited page is handled once: citations are grouped by :func:`~wikiref_dataset.web.urls.normalize_url`, and
one :class:`CitedDocument` per normalized URL lists the ids of the statements citing it. A page comes from the
WARC index when it holds a usable capture (the offline, reproducible default), else — with ``http`` on — from
the live web through :class:`~wikiref_dataset.web.http.HttpFetcher` (a Wayback snapshot URL is fetched in its
raw ``id_`` form, without the Wayback toolbar); downloads run several hosts at once
(:class:`~wikiref_dataset.web.http.CrawlScheduler`; see *Order* below). Its title and main text come from :func:`~wikiref_dataset.web.extract.extract_pages`. Every URL ends with one status: ``ok``
(fetched), a *missing* reason (``not_archived``: no capture and HTTP off; ``not_found``: 404/410) or a *failed*
reason (the fetch statuses of :class:`~wikiref_dataset.web.http.FetchResult`, ``redirect_not_archived``,
``archive_read_error``, and the extraction reasons ``not_html``, ``no_text``, ``parse_error``).

Sources are tried in a fixed order, each for the URLs the ones before it could not serve (:class:`DocumentSources`):
a previous documents folder (``documents``: its ``ok`` documents are taken as they are), the local WARC index,
Common Crawl (``common_crawl``: :mod:`~wikiref_dataset.web.commoncrawl`, per-URL CDX lookups or one join with the
columnar URL index, records read by byte range; outcomes counted as ``cc/<outcome>``), then the live web. Archived
pages are the captures nearest the citation's access-date, else its date, else the newest
(:mod:`~wikiref_dataset.web.captures`). Each document records its provenance: ``source`` (``warc``, ``cc``,
``http``), ``capture_date`` (the capture's time, or the download's), ``warc_filename`` + ``warc_offset`` +
``warc_length`` (archived pages) and ``final_url`` (after redirects).

As datatrove steps (the project's build is a datatrove pipeline): :class:`StatementReader` ->
:class:`FetchCitedDocuments` -> :class:`KeepFetched` (failures go to its exclusion writer, counted by reason) ->
``JsonlWriter``. With several tasks, every task reads all statements and keeps the URLs of its own bucket — by
URL, or by host when HTTP is on so that a host's rate limit holds across tasks — so documents are deduplicated
globally, whatever the number of tasks. :func:`run_documents` builds the WARC index, runs that pipeline with
``LocalPipelineExecutor`` (finished tasks are skipped on rerun) and returns a :class:`DocumentsSummary`.

Order: a task writes its documents in URL order, or with HTTP on in crawl order
(:func:`~wikiref_dataset.web.http.crawl_order` of the URLs to download: each host's URLs spread evenly over the
task, at a phase fixed by the host name). Either is a function of the task's URLs alone, so a rerun writes the same
bytes. The scheduler reaches only ``HttpConfig.lookahead`` URLs past the next document to write (that bounds the
pages held); in URL order a host cited thousands of times (a news site) leaves it one host, at one host's polite
rate, for as long as its URLs last, whereas in crawl order every stretch holds every host in its share, and a
batch's downloads finish early enough for its extraction to overlap the next ones. Nothing downstream needs URL
order: stage 3 (:class:`~wikiref_dataset.wikiref.build.CurationExamples`) sorts the documents by statement id, the reuse
of a documents folder looks them up by normalized URL, and files are named by task. Keeping URL order and bounding
the finished-but-unwritten pages instead (spilled to the HTTP cache) would need the cache on, and the whole task's
archive and Common Crawl reads, which hold bodies too, started ahead of the writer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.filters.base_filter import BaseFilter

from ..text import TextConfig, TextPipeline
from ..utils.jsonl import iter_json_objects
from ..utils.walk import find_files, walk_files  # noqa: F401 (find_files: re-exported)
from .captures import target_date
from .commoncrawl import CaptureRequest, CaptureTable, CommonCrawl, CommonCrawlConfig, CrawlResult
from .extract import ExtractedPage, ExtractionConfig, ExtractionError, extract_pages
from .faults import describe_faults, is_retried_status
from .http import CrawlScheduler, FetchResult, HttpConfig, HttpFetcher, crawl_order
from .urls import normalize_url, unwrap_wayback, wayback_raw_url
from .warc import IndexStats, WarcIndex, WarcReadError

logger = logging.getLogger(__name__)

__all__ = [
    "CitedDocument", "DocumentSources", "DocumentsSummary", "CitedUrlKeys", "FetchCitedDocuments", "JoinColumnarIndex",
    "KeepFetched", "StatementReader", "check_sources", "citation_bucket", "group_citations", "columnar_join_stages", "documents_pipeline", "run_documents",
]  # fmt: skip

MISSING_STATUSES = ("not_archived", "not_found")
"""Statuses that mean "no copy of the page exists in the sources used" (the rest of the non-ok ones: failed)."""

STATEMENT_SUFFIXES = (".jsonl", ".jsonl.gz", ".json.gz", ".jsonl.gzip")


@dataclass
class CitedDocument:
    """One cited page (one per normalized URL), fetched or not.

    Args:
        url (`str`): the citation's original URL (`metadata.url`).
        fetch_url (`str`): the URL that was to be downloaded (`metadata.fetch_url`).
        normalized_url (`str`): the dedup key (:func:`normalize_url`).
        source (`str`): `warc` (local WARC files), `cc` (Common Crawl), `http` (live web), or `""` when no source
            answered.
        status (`str`): `ok` or why there is no document (see the module docstring).
        title (`str`): the page title.
        text (`str`): the main text, one paragraph per line.
        sentences (`list[str]`): the sentences of `text`.
        capture_date (`str`, *optional*): when the archived capture was made, or the time of the HTTP download
            (ISO 8601 UTC).
        content_type (`str`, *optional*): the page's Content-Type.
        final_url (`str`, *optional*): the URL that answered (after redirects).
        warc_record (`str`, *optional*): `path:offset` of the WARC record used.
        warc_filename (`str`, *optional*): the WARC file of the record: its name for a local file, its path in the
            crawl for Common Crawl (``crawl-data/CC-MAIN-.../warc/....warc.gz``).
        warc_offset (`int`, *optional*), warc_length (`int`, *optional*): where the record lies in it (what an
            HTTP Range request for it needs).
        statement_ids (`list[str]`): ids of the statements citing the page.
        detail (`str`): what went wrong, when something did.
        transient (`bool`): the failure came from the network (a source still failing after its retries: an index
            or archive that did not answer, a live site that timed out or answered 429/5xx); the next run retries
            the page (:func:`reopen_transient_failures`).
        cc_outcome (`str`, *optional*): what Common Crawl gave for the page, when it was asked
            (:data:`~wikiref_dataset.web.commoncrawl.OUTCOMES`).
    """

    url: str
    fetch_url: str
    normalized_url: str
    source: str = ""
    status: str = "not_archived"
    title: str = ""
    text: str = ""
    sentences: list[str] = field(default_factory=list)
    capture_date: str | None = None
    content_type: str | None = None
    final_url: str | None = None
    warc_record: str | None = None
    statement_ids: list[str] = field(default_factory=list)
    detail: str = ""
    warc_filename: str | None = None
    warc_offset: int | None = None
    warc_length: int | None = None
    transient: bool = False
    cc_outcome: str | None = None

    @property
    def document_id(self) -> str:
        """A stable id: the first 20 hex digits of the SHA-1 of the normalized URL."""
        return hashlib.sha1(self.normalized_url.encode("utf-8")).hexdigest()[:20]

    def to_document(self) -> Document:
        """A datatrove Document: `text` is the main text, every other field goes to `metadata`."""
        metadata = {k: v for k, v in dataclasses.asdict(self).items() if k != "text"}
        return Document(text=self.text, id=self.document_id, metadata=metadata)

    @classmethod
    def from_document(cls, document: Document | dict) -> CitedDocument:
        """Back from a Document (or its JSON dict, as JsonlWriter writes it)."""
        if isinstance(document, dict):
            text, metadata = document.get("text", ""), document.get("metadata", {})
        else:
            text, metadata = document.text, document.metadata
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(text=text, **{k: v for k, v in metadata.items() if k in names and k != "text"})


# ----------------------------------------------------------------------------------------------------------------
# Statements in
# ----------------------------------------------------------------------------------------------------------------


def statement_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """The statement files named by `paths` (files, or folders of `*.jsonl[.gz]` searched recursively)."""
    return find_files(paths, STATEMENT_SUFFIXES, "statement files (*.jsonl, *.jsonl.gz)")


class StatementReader(PipelineStep):
    """Reads statement JSONL files (plain or gzip). Without `bucketed`, every task reads every file and
    :class:`FetchCitedDocuments` with `partition=True` keeps its own share of the URLs. With `bucketed` (the WikiRef
    build), `paths` is one folder of per-bucket subfolders (`<bucket>/<writer rank>.jsonl.gz`, written after
    :class:`BucketByCitedUrl`) and task k reads only bucket k's files. A bad line is logged (file:line) and counted
    (`bad_records`), never fatal; `input_bytes` counts the bytes of the files read."""

    name = "📜 statements"
    type = "📖 - READER"

    def __init__(self, paths: Iterable[str | os.PathLike], bucketed: bool = False) -> None:
        super().__init__()
        self.bucketed = bucketed
        self.paths = [str(path) for path in paths]
        self.files = [] if bucketed else [str(path) for path in statement_files(self.paths)]

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        if data:
            yield from data
        files = self.files
        if self.bucketed:
            files = [str(path) for folder in self.paths
                     for path in sorted((Path(folder) / f"{rank:05d}").glob("*.jsonl.gz"))]
        for file in files:
            self.stat_update("input_bytes", value=os.path.getsize(file))
            yield from self._read(file, count=self.bucketed or rank == 0)

    def _read(self, file: str, count: bool) -> Iterator[Document]:
        def skip(location: str, reason: str) -> None:
            if count:
                logger.warning("%s: bad statement record (%s); skipped", location, reason)
                self.stat_update("bad_records")

        try:
            for line_number, record in iter_json_objects(file, on_error=skip, errors="replace"):
                metadata = record.get("metadata") or {}
                if not isinstance(metadata, dict):
                    skip(f"{file}:{line_number}", "'metadata' is not an object")
                    continue
                yield Document(text=str(record.get("text") or ""),
                               id=str(record.get("id", f"{Path(file).name}:{line_number}")), metadata=metadata)
        except (OSError, EOFError) as error:  # unreadable or truncated gzip: keep what was read
            if count:
                logger.warning("%s: cannot read further (%s)", file, error)
                self.stat_update("bad_files")


# ----------------------------------------------------------------------------------------------------------------
# Fetching
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class _Citations:
    """The citations of one normalized URL (the first statement's URLs are the ones used)."""

    url: str
    fetch_url: str
    normalized_url: str
    statement_ids: list[str] = field(default_factory=list)
    problem: str = ""  # why the URL cannot be normalized (then `normalized_url` is the URL as written)
    problem_status: str = "bad_url"
    access_date: str | None = None  # the citation's, as written
    date: str | None = None

    @property
    def near(self) -> datetime | None:
        """The day whose capture is wanted: access-date, else date, else None (the newest)."""
        return target_date(self.access_date, self.date)

    @property
    def original_url(self) -> str:
        """The page itself (not an archive's copy of it): what Common Crawl is asked for."""
        return unwrap_wayback(self.url or self.fetch_url)


@dataclass
class _Acquired:
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


@dataclass
class _Started:
    """A batch with the archive's answers and its downloads queued (see `FetchCitedDocuments.run`)."""

    batch: list[_Citations]
    acquired: list[_Acquired]
    downloads: dict[int, Future[FetchResult]]  # index in the batch -> its download
    seconds: float = 0.0  # spent starting it (archive reads)

    def done(self) -> bool:
        return all(download.done() for download in self.downloads.values())


def _bucket(key: str, world_size: int) -> int:
    return int(hashlib.sha1(key.encode("utf-8")).hexdigest()[:12], 16) % world_size


def citation_key(fetch_url: str) -> str:
    """The key a cited URL is grouped and bucketed by: its normalized form, or the URL as written when it does not
    normalize (it still gets its record, ``bad_url``)."""
    try:
        return normalize_url(fetch_url)
    except ValueError:
        return str(fetch_url).strip()


def url_bucket(fetch_url: str, buckets: int) -> int:
    """The bucket (of ``buckets``) of a cited URL: stage 2 task k fetches bucket k, stage 3 task k joins it."""
    return _bucket(citation_key(fetch_url), buckets)


def citation_bucket(fetch_url: str, buckets: int, by: Literal["url", "host"] = "url") -> int:
    """The fetch task (of ``buckets``) that handles a cited URL: by its normalized URL (:func:`url_bucket`), or by
    its host (``by="host"``: a crawl keeps each host in one task)."""
    key = citation_key(fetch_url)
    if by == "host":
        try:
            normalize_url(fetch_url)
            key = urlsplit(key).hostname or key
        except ValueError:
            pass
    return _bucket(key, buckets)


class BucketByCitedUrl(PipelineStep):
    """Tags each statement with the bucket of its cited URL (``metadata["url_bucket"]``, 5 digits), so that the
    writer after it (``output_filename="${url_bucket}/${rank}.jsonl.gz"``) writes one file per bucket per task and
    stage-2/3 task k reads only the files of bucket k."""

    name = "🪣 bucket by cited URL"
    type = "🔀 - PARTITION"

    def __init__(self, buckets: int) -> None:
        super().__init__()
        if buckets < 1:
            raise ValueError(f"buckets must be >= 1, got {buckets}")
        self.buckets = buckets

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for document in data or ():
            metadata = document.metadata or {}
            fetch_url = metadata.get("fetch_url") or metadata.get("url") or ""
            metadata["url_bucket"] = f"{url_bucket(str(fetch_url), self.buckets):05d}"
            document.metadata = metadata
            yield document


def group_citations(data: Iterable[Document], rank: int = 0, world_size: int = 1, partition: bool = False,
                    partition_by: Literal["url", "host"] = "url",
                    stat_update: Callable[..., None] = lambda *_, **__: None) -> list[_Citations]:
    """Task `rank`'s cited URLs, one entry per normalized URL with the citing statement ids, sorted by URL: all the
    statements' URLs, or with `partition` only this task's share (:func:`citation_bucket`). `stat_update` counts
    ``statements`` and ``statements_without_url`` (once over all tasks when every task sees every statement)."""
    count_statements = not partition or rank == 0  # with partition, every task sees every statement
    groups: dict[str, _Citations] = {}
    for document in data:
        metadata = document.metadata or {}
        url = metadata.get("url") or ""
        fetch_url = metadata.get("fetch_url") or url
        if count_statements:
            stat_update("statements")
        if not isinstance(fetch_url, str) or not fetch_url.strip():
            if count_statements:
                stat_update("statements_without_url")
            continue
        problem = ""
        key = citation_key(fetch_url)  # the URL as written when it does not normalize: still gets its record
        try:
            normalize_url(fetch_url)
        except ValueError as error:
            problem = f"statement {document.id}: {error}"
        if partition and world_size > 1 and citation_bucket(fetch_url, world_size, partition_by) != rank:
            continue
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Citations(str(url or fetch_url), fetch_url, key, problem=problem,
                                             access_date=_text_or_none(metadata.get("access_date")),
                                             date=_text_or_none(metadata.get("date")))
            scheme = urlsplit(key).scheme.lower() if "://" in key else ""
            if problem and scheme and scheme not in ("http", "https"):
                group.problem_status = "bad_scheme"
        group.statement_ids.append(str(document.id))
    return [groups[key] for key in sorted(groups)]


class CitedUrlKeys(PipelineStep):
    """The first half of the one join of all cited URLs with Common Crawl's columnar index: after a
    :class:`StatementReader`, task k writes the URLs fetch task k will ask Common Crawl for (each citation's page,
    not an archive's copy of it: :func:`group_citations`, as the fetch step groups them), with their SURT keys
    (:meth:`~wikiref_dataset.web.commoncrawl.CaptureTable.write_keys`), so that each key is computed once.

    Args:
        captures_dir (`str`): where the keys go (``keys/<k>.parquet``).
        partition (`bool`, defaults to `False`): keep only this task's share of the URLs (every task reads every
            statement), split as the fetch tasks split them (`partition_by`, :func:`citation_bucket`).
    """

    name = "🔑 cited URL keys"
    type = "🔗 - FETCH"

    def __init__(self, captures_dir: str | os.PathLike, partition: bool = False,
                 partition_by: Literal["url", "host"] = "url") -> None:
        super().__init__()
        self.captures_dir = str(captures_dir)
        self.partition = partition
        self.partition_by = partition_by

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        with self.track_time():
            groups = group_citations(data or [], rank, world_size, self.partition, self.partition_by)
            written = CaptureTable.write_keys(self.captures_dir, rank,
                                              (group.original_url for group in groups if not group.problem))
        self.stat_update("cited_urls", value=written)
        return
        yield


class JoinColumnarIndex(PipelineStep):
    """The second half of the one join of all cited URLs with Common Crawl's columnar index: task r joins every
    fetch task's keys (:class:`CitedUrlKeys`) with its share of the index files in DuckDB and files the captures it
    finds under the fetch task that asks for them (:func:`~wikiref_dataset.web.commoncrawl.join_index_share`). The
    fetch tasks then read their captures, not the index: each index file is read once, rather than once per task.

    Args:
        captures_dir (`str`): where the keys are and the captures go.
        common_crawl (`CommonCrawlConfig`): the index (`cc_index`), its crawls and `cc_data`.
    """

    name = "🗂️ Common Crawl index join"
    type = "🔗 - FETCH"

    def __init__(self, captures_dir: str | os.PathLike, common_crawl: CommonCrawlConfig) -> None:
        super().__init__()
        if not common_crawl.cc_index:
            raise ValueError("JoinColumnarIndex needs a columnar index (common_crawl.cc_index)")
        self.captures_dir = str(captures_dir)
        self.common_crawl = common_crawl

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from .commoncrawl import join_index_share

        with self.track_time():
            counts = join_index_share(self.common_crawl, rank, world_size, self.captures_dir)
        for key, value in counts.items():
            self.stat_update(key, value=value)
        return
        yield


def check_sources(sources: DocumentSources | None) -> None:
    """Fail now, not hours later in a stage, when the columnar index names no Parquet file, one without the
    index's columns, or a remote one that cannot be read (one file's footer is read).

    Raises:
        FileNotFoundError, ValueError: as :class:`~wikiref_dataset.web.commoncrawl.ColumnarIndex` does.
    """
    crawl = sources.common_crawl if sources is not None else None
    if crawl is None or not crawl.cc_index:
        return
    from .commoncrawl import ColumnarIndex, index_files

    listed = index_files(crawl.cc_index, crawl.crawls, crawl.cc_data)
    ColumnarIndex(crawl.cc_index, crawl.crawls, crawl.cc_data, files=listed.files[:1]).close()


def columnar_join_stages(statement_paths: Iterable[str | os.PathLike], captures_dir: str | os.PathLike,
                         common_crawl: CommonCrawlConfig, bucketed: bool = False,
                         partition_by: Literal["url", "host"] = "url") -> list[tuple[str, list[PipelineStep]]]:
    """The two stages of the one join of all cited URLs with the columnar index, as (name, steps), to run with the
    fetch stage's number of tasks before it (its `captures_dir`)."""
    return [("index_keys", [StatementReader(statement_paths, bucketed=bucketed),
                            CitedUrlKeys(captures_dir, partition=not bucketed, partition_by=partition_by)]),
            ("index_join", [JoinColumnarIndex(captures_dir, common_crawl)])]


class FetchCitedDocuments(PipelineStep):
    """Statement Documents in, one cited-document Document per normalized URL out (see the module docstring).

    Args:
        warc_index (`str`, *optional*): path of a :class:`WarcIndex` database.
        http_config (`HttpConfig`, *optional*): fetch missing pages from the web with these rules; None = no HTTP.
        extraction (`ExtractionConfig`, *optional*): trafilatura settings.
        text_config (`TextConfig`, *optional*): the sentence splitter's configuration.
        partition (`bool`, defaults to `False`): keep only this task's bucket of URLs (every task must then see
            all statements, as with :class:`StatementReader`). With `False` each task handles what it reads.
        partition_by (`str`, *optional*): `url` or `host`; by default `host` with HTTP, `url` without.
        batch_size (`int`, defaults to 32): pages extracted and sentence-split together.
        max_body_bytes (`int`, defaults to 20,000,000): largest archived body read.
        progress (`bool`, defaults to `False`): show a progress bar over the URLs of the task.
        common_crawl (`CommonCrawlConfig`, *optional*): look pages the WARC index lacks up in Common Crawl (before
            HTTP).
        reuse_documents (`str`, *optional*): a previous documents folder (with `documents/`, `failed/`) whose `ok`
            documents are taken as they are, before any other source.
        retry_dir (`str`, *optional*): where :func:`reopen_transient_failures` moved this step's own earlier output
            (``<retry_dir>/documents/<rank>.jsonl.gz``, ``<retry_dir>/failed/<rank>.jsonl.gz``): its documents and
            lasting failures are taken as they are, and only its transient failures are fetched again.
        captures_dir (`str`, *optional*): with a columnar index, the output of :class:`JoinColumnarIndex` run
            with as many tasks: task k reads bucket k's captures there instead of joining the whole index itself.
    """

    name = "🌐 cited documents"
    type = "🔗 - FETCH"

    def __init__(
        self,
        warc_index: str | os.PathLike | None = None,
        http_config: HttpConfig | None = None,
        extraction: ExtractionConfig | None = None,
        text_config: TextConfig | None = None,
        partition: bool = False,
        partition_by: Literal["url", "host"] | None = None,
        batch_size: int = 32,
        max_body_bytes: int = 20_000_000,
        progress: bool = False,
        common_crawl: CommonCrawlConfig | None = None,
        reuse_documents: str | os.PathLike | None = None,
        captures_dir: str | os.PathLike | None = None,
        retry_dir: str | os.PathLike | None = None,
    ) -> None:
        super().__init__()
        if captures_dir is not None and (common_crawl is None or not common_crawl.cc_index):
            raise ValueError("captures_dir (a join of the columnar index) needs common_crawl with a cc_index")
        if warc_index is None and http_config is None and common_crawl is None and reuse_documents is None:
            raise ValueError("FetchCitedDocuments needs a source: a WARC index, an HTTP configuration, Common Crawl "
                             "or a documents folder")
        if partition_by not in (None, "url", "host"):
            raise ValueError(f"partition_by must be 'url' or 'host', got {partition_by!r}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.warc_index = None if warc_index is None else str(warc_index)
        self.http_config = http_config
        self.extraction = extraction or ExtractionConfig()
        self.text_pipeline = TextPipeline(text_config)
        self.partition = partition
        self.partition_by = partition_by or ("host" if http_config is not None else "url")
        self.batch_size = batch_size
        self.max_body_bytes = max_body_bytes
        self.progress = progress
        self.common_crawl = common_crawl
        self.reuse_documents = None if reuse_documents is None else str(reuse_documents)
        self.captures_dir = None if captures_dir is None else str(captures_dir)
        self.retry_dir = None if retry_dir is None else str(retry_dir)
        self._crawl: CommonCrawl | None = None  # open while `run` runs
        self._reused: dict[str, CitedDocument] = {}
        self._carried: dict[str, CitedDocument] = {}

    # ---- grouping -------------------------------------------------------------------------------------------

    def group_citations(self, data: Iterable[Document], rank: int = 0, world_size: int = 1) -> list[_Citations]:
        """This task's cited URLs, one entry per normalized URL with the citing statement ids, sorted by URL."""
        return group_citations(data, rank, world_size, self.partition, self.partition_by, self.stat_update)

    # ---- sources --------------------------------------------------------------------------------------------

    def _from_archive(self, index: WarcIndex, citations: _Citations) -> _Acquired:
        near = citations.near
        capture = index.lookup(citations.fetch_url, near=near)
        if capture is None and citations.url and citations.url != citations.fetch_url:
            capture = index.lookup(citations.url, near=near)
        if capture is None:
            return _Acquired("not_archived", detail=f"{citations.fetch_url}: no capture in the WARC index")
        acquired = _Acquired("ok", "warc", content_type=capture.content_type, capture_date=capture.date,
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
            acquired.body = index.read(capture, max_bytes=self.max_body_bytes)
        except WarcReadError as error:
            acquired.status = "too_large" if error.reason == "too_large" else "archive_read_error"
            acquired.detail = str(error)
        return acquired

    @staticmethod
    def _from_common_crawl(result: CrawlResult) -> _Acquired:
        status = {"found": "ok", "not_captured": "not_archived", "not_html": "not_html",
                  "fetch_failed": "archive_unreachable" if result.transient else "archive_read_error",
                  "lookup_failed": "index_error" if result.transient else "index_refused"}.get(result.outcome)
        if status is None:  # non_200
            code = result.http_status
            status = ("not_found" if code in (404, 410) else "redirect_not_archived" if code and 300 <= code < 400
                      else f"http_error_{code}" if code else "http_error")
        capture = result.capture
        acquired = _Acquired(status, "cc" if status == "ok" else "", result.body, result.content_type,
                             final_url=result.final_url, detail=result.detail, transient=result.transient,
                             cc_outcome=result.outcome)
        if capture is not None:
            acquired.capture_date, acquired.warc_record = capture.timestamp, capture.record
            acquired.warc_filename, acquired.warc_offset = capture.filename, capture.offset
            acquired.warc_length = capture.length
        return acquired

    @staticmethod
    def _from_http(result: FetchResult) -> _Acquired:
        transient = result.status in ("connection_error", "timeout") or (
            not result.from_cache and result.http_status is not None and is_retried_status(result.http_status)
            and result.status.startswith("http_error_"))
        return _Acquired(
            result.status, "http" if result.ok else "", result.body, result.content_type, result.fetched_at,
            result.final_url, None, result.detail, transient=transient,
        )

    # ---- the step -------------------------------------------------------------------------------------------

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        groups = self.group_citations(data or [], rank, world_size)
        if self.http_config is not None:  # crawl order (see the module docstring)
            groups = [groups[i] for i in crawl_order([wayback_raw_url(group.fetch_url) for group in groups])]
        self.stat_update("urls", value=len(groups))
        if not groups:
            return
        index = WarcIndex(self.warc_index) if self.warc_index else None
        fetcher = HttpFetcher(self.http_config) if self.http_config is not None else None
        self._reused = self._load_reused({group.normalized_url for group in groups}) if self.reuse_documents else {}
        self._carried = self._load_carried(rank)
        if self._carried:
            self.stat_update("retried", value=sum(document.transient for document in self._carried.values()))
        if self.common_crawl is not None:
            captures = CaptureTable.read(self.captures_dir, rank) if self.captures_dir is not None else None
            self._crawl = CommonCrawl(self.common_crawl, captures)
            to_look_up = [group.original_url for group in groups
                          if not group.problem and group.normalized_url not in self._reused
                          and getattr(self._carried.get(group.normalized_url), "transient", True)]
            self._crawl.prepare(to_look_up)
            if self._crawl.cdx is not None and to_look_up:  # what the per-host intervals imply, before waiting
                from datatrove.utils.logging import logger as task_logger  # the task's log file, and the console

                for line in self._crawl.cdx.plan(len(to_look_up)):
                    task_logger.info(f"task {rank}: {line}")
        progress = None
        if self.progress:
            from tqdm.auto import tqdm

            progress = tqdm(total=len(groups), desc=f"cited pages (task {rank})", unit="url", position=rank)
        scheduler = CrawlScheduler(fetcher) if fetcher is not None else None
        # Later batches are started (archive read, downloads queued) while the first one waits on its hosts'
        # intervals, so that the scheduler serves the other hosts meanwhile; documents come out in batch order, and
        # `lookahead` bounds the pages held.
        lookahead = self.http_config.lookahead if self.http_config is not None else 0
        batches = iter([groups[start : start + self.batch_size] for start in range(0, len(groups), self.batch_size)])
        upcoming = next(batches, None)
        started: deque[_Started] = deque()
        try:
            while upcoming is not None or started:
                in_window = sum(len(item.batch) for item in started) + len(upcoming or ())
                if upcoming is not None and (not started or (in_window <= lookahead and not started[0].done())):
                    started.append(self._start(upcoming, index, scheduler))
                    upcoming = next(batches, None)
                    continue
                finished = started.popleft()
                yield from self._process(finished)
                if progress is not None:
                    progress.update(len(finished.batch))
        finally:
            if scheduler is not None:
                scheduler.close()
            if index is not None:
                index.close()
            faults = fetcher.faults.counts() if fetcher is not None else {}
            if self._crawl is not None:
                if self.common_crawl.cc_index:
                    self.stat_update("cc_index/files_read", value=self._crawl.files_scanned)
                if self._crawl.cdx is not None:  # wall time held back by CDX politeness (the closing summary's)
                    self.stat_update("cdx/waited_ms", value=int(self._crawl.cdx.waited_s * 1000))
                faults |= self._crawl.faults.counts()
                self._crawl.close()
                self._crawl = None
            for key, count in sorted(faults.items()):  # network faults met by this task, by source and kind
                self.stat_update(f"faults/{key}", value=count)
            if progress is not None:
                progress.close()

    def _start(self, batch: list[_Citations], index: WarcIndex | None, scheduler: CrawlScheduler | None) -> _Started:
        """The archive's answers for a batch, and the downloads of the pages it lacks queued."""
        began = time.perf_counter()
        acquired: list[_Acquired] = []
        for citations in batch:
            reused = self._reused.get(citations.normalized_url)
            carried = self._carried.get(citations.normalized_url)
            if citations.problem:
                acquired.append(_Acquired(citations.problem_status, detail=citations.problem))
            elif carried is not None and not carried.transient:  # this task's own result of the earlier run
                acquired.append(_Acquired(carried.status, carried.source, reused=carried, carried=True))
            elif reused is not None and reused.status == "ok":
                acquired.append(_Acquired("ok", reused.source, reused=reused))
            elif index is not None:
                acquired.append(self._from_archive(index, citations))
            elif reused is not None:  # it failed before; the sources after it may still serve it
                acquired.append(_Acquired(reused.status, detail=f"documents folder: {reused.detail}"))
            else:
                acquired.append(_Acquired("not_archived"))
        if self._crawl is not None:
            missing = [i for i, item in enumerate(acquired)
                       if item.status != "ok" and not item.carried and not batch[i].problem]
            requests = [CaptureRequest(batch[i].original_url, batch[i].near) for i in missing]
            for i, result in zip(missing, self._crawl.resolve(requests), strict=True):
                crawled = self._from_common_crawl(result)
                if acquired[i].status != "not_archived" and crawled.status != "ok":
                    crawled.detail = f"archive: {acquired[i].detail}; Common Crawl: {crawled.detail}"
                acquired[i] = crawled
        downloads = {}
        if scheduler is not None:
            downloads = {i: scheduler.submit(wayback_raw_url(batch[i].fetch_url))
                         for i, item in enumerate(acquired)
                         if item.status != "ok" and not item.carried and not batch[i].problem}
        return _Started(batch, acquired, downloads, time.perf_counter() - began)

    def _process(self, started: _Started) -> Iterator[Document]:
        """A started batch's documents, in its order: downloads awaited, pages extracted and sentence-split."""
        began = time.perf_counter()
        batch, acquired = started.batch, started.acquired
        for i, download in started.downloads.items():
            result = self._from_http(download.result())
            result.cc_outcome = acquired[i].cc_outcome
            if acquired[i].status != "not_archived" and result.status != "ok":
                result.detail = f"archive: {acquired[i].detail}; live web: {result.detail}"
                result.transient = result.transient or acquired[i].transient  # a source a later run may get past
            acquired[i] = result
        with_body = [i for i, item in enumerate(acquired) if item.status == "ok" and item.reused is None]
        pages = ((acquired[i].body, acquired[i].final_url or batch[i].fetch_url, acquired[i].content_type)
                 for i in with_body)
        extracted: dict[int, ExtractedPage | ExtractionError] = dict(
            zip(with_body, extract_pages(pages, self.extraction, self.text_pipeline), strict=True)
        )
        self.stats.time_stats.update(started.seconds + time.perf_counter() - began, unit="batch")
        for i, citations in enumerate(batch):
            item = acquired[i]
            if item.reused is not None:  # as the folder has it, cited by this run's statements
                if not item.carried:
                    self.stat_update("reused")
                document = dataclasses.replace(item.reused, url=citations.url, fetch_url=citations.fetch_url,
                                               statement_ids=citations.statement_ids)
            else:
                document = CitedDocument(
                    url=citations.url, fetch_url=citations.fetch_url, normalized_url=citations.normalized_url,
                    source=item.source, status=item.status, capture_date=item.capture_date,
                    content_type=item.content_type, final_url=item.final_url, warc_record=item.warc_record,
                    statement_ids=citations.statement_ids, detail=item.detail, warc_filename=item.warc_filename,
                    warc_offset=item.warc_offset, warc_length=item.warc_length,
                    transient=item.transient and item.status != "ok", cc_outcome=item.cc_outcome,
                )  # fmt: skip
            page = extracted.get(i)
            if isinstance(page, ExtractionError):
                document.status, document.detail = page.reason, str(page)
            elif isinstance(page, ExtractedPage):
                document.title, document.text, document.sentences = page.title, page.text, page.sentences
            if document.cc_outcome is not None:
                self.stat_update(f"cc/{document.cc_outcome}")
            if document.transient:
                self.stat_update("transient")
            self.stat_update(f"status/{document.status}")
            self.stat_update("citing_statements", value=len(citations.statement_ids))
            if document.status == "ok":
                self.stat_update(f"source/{document.source}")
            yield document.to_document()

    def _load_carried(self, rank: int) -> dict[str, CitedDocument]:
        """This task's own output of an earlier run, moved aside by :func:`reopen_transient_failures`."""
        if self.retry_dir is None:
            return {}
        found: dict[str, CitedDocument] = {}
        for name in ("documents", "failed"):
            path = Path(self.retry_dir) / name / f"{rank:05d}.jsonl.gz"
            if not path.is_file():
                continue
            for _, record in iter_json_objects(path, on_error=lambda where, why: self.stat_update("retry_bad_records")):
                try:
                    document = CitedDocument.from_document(record)
                except (TypeError, ValueError):
                    self.stat_update("retry_bad_records")
                    continue
                found[document.normalized_url] = document
        return found

    def _load_reused(self, keys: set[str]) -> dict[str, CitedDocument]:
        """The documents of :attr:`reuse_documents` whose normalized URL is one of `keys` (an `ok` one wins)."""
        found: dict[str, CitedDocument] = {}
        for path in reused_document_files(self.reuse_documents):
            for _, record in iter_json_objects(path, on_error=lambda where, why: self.stat_update("reused_bad_records")):
                metadata = record.get("metadata") or {}
                if metadata.get("normalized_url") not in keys:
                    continue
                try:
                    document = CitedDocument.from_document(record)
                except (TypeError, ValueError):
                    self.stat_update("reused_bad_records")
                    continue
                previous = found.get(document.normalized_url)
                if previous is None or (previous.status != "ok" and document.status == "ok"):
                    found[document.normalized_url] = document
        return found


def _text_or_none(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def reused_document_files(folder: str | os.PathLike) -> list[Path]:
    """The JSONL files of a documents folder (a `wikiref documents` output folder or a build's
    ``<work>/documents``): ``documents/*.jsonl.gz`` and ``failed/*.jsonl.gz``.

    Raises:
        FileNotFoundError: the folder holds neither `documents/` nor `failed/`.
    """
    root = Path(folder)
    parts = [root / name for name in ("documents", "failed") if (root / name).is_dir()]
    if not parts:
        raise FileNotFoundError(f"{root}: not a documents folder (no documents/ or failed/ in it; give the --out "
                                "folder of `wikiref documents`)")
    return sorted(path for part in parts for path in part.glob("*.jsonl*"))


class KeepFetched(BaseFilter):
    """Keeps the documents whose status is `ok`; the others go to the exclusion writer, counted by status."""

    name = "✅ fetched"

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        status = doc.metadata.get("status", "")
        return True if status == "ok" else (False, status)


# ----------------------------------------------------------------------------------------------------------------
# The stage
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class DocumentSources:
    """Where stage 2 looks for the cited pages besides the local WARC files (given apart: ``warc_paths`` of
    :func:`run_documents`, the build's ``warcs``). Sources are tried in this order, each for the pages the ones before
    could not serve: `documents`, the WARC files, `common_crawl`, `http`; each document records which one served it.

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
class DocumentsSummary:
    """What stage 2 did.

    Args:
        statements (`int`): statement records read.
        bad_statements (`int`): statement lines that could not be read (and unreadable file ends).
        statements_without_url (`int`): statements without `fetch_url`/`url`.
        urls (`int`): distinct normalized URLs cited.
        citing_statements (`int`): statements behind those URLs.
        fetched (`Counter[str]`): documents written, by source (`warc`, `cc`, `http`).
        missing (`Counter[str]`): URLs with no copy in the sources, by reason (`not_archived`, `not_found`).
        failed (`Counter[str]`): URLs that could not be turned into documents, by reason.
        archive (`IndexStats`, *optional*): the WARC index's totals.
        output_dir (`str`): where `documents/` and `failed/` were written.
        common_crawl (`Counter[str]`): what Common Crawl gave for the URLs it was asked (`found`, `not_captured`,
            `non_200`, `not_html`, `fetch_failed`, `lookup_failed`).
        reused (`int`): documents taken from a previous documents folder.
        index_files_joined (`int`): columnar index files read by the join of all cited URLs (each once).
        index_files_reread (`int`): index files read again by the fetch tasks, for URLs the join did not cover
            (targets of captured redirects), only those whose key range holds one.
        faults (`Counter[str]`): network faults met by the tasks (of the run that last ran each), as
            ``<source>/<kind>`` (``cdx/http_503``, ``warc/reset``, ``http/timeout`` ...) and ``<source>/gave_up``.
        transient (`int`): pages that failed because of the network; the next run tries them again.
        retried (`int`): pages of an earlier run's transient failures this run tried again.
    """

    statements: int = 0
    bad_statements: int = 0
    statements_without_url: int = 0
    urls: int = 0
    citing_statements: int = 0
    fetched: Counter[str] = field(default_factory=Counter)
    missing: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    archive: IndexStats | None = None
    output_dir: str = ""
    common_crawl: Counter[str] = field(default_factory=Counter)
    reused: int = 0
    index_files_joined: int = 0
    index_files_reread: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    transient: int = 0
    retried: int = 0

    @property
    def n_fetched(self) -> int:
        return sum(self.fetched.values())

    @property
    def n_missing(self) -> int:
        return sum(self.missing.values())

    @property
    def n_failed(self) -> int:
        return sum(self.failed.values())

    def add_status(self, status: str, source: str, count: int = 1) -> None:
        if status == "ok":
            self.fetched[source] += count
        elif status in MISSING_STATUSES:
            self.missing[status] += count
        else:
            self.failed[status] += count

    def format(self) -> str:
        """A short human summary (the command line prints it at the end)."""

        def counts(counter: Counter[str]) -> str:
            return ", ".join(f"{name} {value}" for name, value in counter.most_common()) or "none"

        lines = [
            f"statements: {self.statements} read, {self.statements_without_url} without URL, "
            f"{self.bad_statements} unreadable",
            f"cited pages: {self.urls} distinct URLs (cited by {self.citing_statements} statements)",
            f"  fetched  {self.n_fetched:>7}  ({counts(self.fetched)})",
            f"  missing  {self.n_missing:>7}  ({counts(self.missing)})",
            f"  failed   {self.n_failed:>7}  ({counts(self.failed)})",
        ]
        if self.common_crawl:
            lines.append(f"Common Crawl: {sum(self.common_crawl.values())} URLs looked up ({counts(self.common_crawl)})")
        if self.index_files_joined:
            lines.append(f"Common Crawl index: {self.index_files_joined} files joined once with all cited URLs, "
                         f"{self.index_files_reread} read again for redirect targets")
        if self.faults:
            lines.append(f"network faults: {describe_faults(dict(self.faults))}")
        if self.retried:
            lines.append(f"retried: {self.retried} pages that failed on the previous run with network faults")
        if self.transient:
            lines.append(f"network failures: {self.transient} pages still failing after their retries (the next run "
                         "tries them again)")
        if self.reused:
            lines.append(f"reused: {self.reused} documents of the documents folder")
        if self.archive is not None:
            lines.append(f"archive: {self.archive.format()}")
        if self.output_dir:
            lines.append(f"written to {self.output_dir}/documents (failures with reasons in {self.output_dir}/failed)")
        return "\n".join(lines)


def documents_pipeline(
    statement_paths: Iterable[str | os.PathLike],
    output_dir: str | os.PathLike,
    warc_index: str | os.PathLike | None = None,
    http_config: HttpConfig | None = None,
    extraction: ExtractionConfig | None = None,
    text_config: TextConfig | None = None,
    progress: bool = False,
    bucketed: bool = False,
    common_crawl: CommonCrawlConfig | None = None,
    reuse_documents: str | os.PathLike | None = None,
    captures_dir: str | os.PathLike | None = None,
) -> list[PipelineStep]:
    """The stage as datatrove steps: read statements, fetch + extract, keep `ok`, write JSONL.

    Writes `output_dir/documents/${rank}.jsonl.gz` and the failures to `output_dir/failed/${rank}.jsonl.gz`. With
    `bucketed`, `statement_paths` is a folder of per-bucket subfolders and task k reads bucket k only (see
    :class:`StatementReader`); otherwise every task reads every statement and keeps its share of the URLs.
    """
    from datatrove.pipeline.writers import JsonlWriter

    output = Path(output_dir)
    return [
        StatementReader(statement_paths, bucketed=bucketed),
        FetchCitedDocuments(warc_index=warc_index, http_config=http_config, extraction=extraction,
                            text_config=text_config, partition=not bucketed, progress=progress,
                            common_crawl=common_crawl, reuse_documents=reuse_documents,
                            captures_dir=captures_dir, retry_dir=output / RETRY_FOLDER),
        KeepFetched(exclusion_writer=JsonlWriter(str(output / "failed"))),
        JsonlWriter(str(output / "documents")),
    ]


RETRY_FOLDER = "retry"
"""Under a documents folder: the earlier output of the tasks :func:`reopen_transient_failures` reopened."""


def reopen_transient_failures(output: str | os.PathLike, logs: str | os.PathLike, tasks: int) -> int:
    """Make the next run of the documents stage try again the pages that failed because of the network.

    For every finished task (its completion marker under ``logs/completions``) whose ``failed/<rank>.jsonl.gz`` in
    `output` holds a transient failure (:attr:`CitedDocument.transient`), its two output files are moved to
    ``output/retry/`` and its marker deleted: the task runs again, takes its documents and lasting failures from
    there as they are, and fetches only the transient failures again. Returns the number of pages to retry (0: the
    folder is left as it is)."""
    output, completions = Path(output), Path(logs) / "completions"
    pages = 0
    for rank in range(tasks):
        marker, failed = completions / f"{rank:05d}", output / "failed" / f"{rank:05d}.jsonl.gz"
        if not marker.is_file() or not failed.is_file():
            continue
        transient = sum(bool((record.get("metadata") or {}).get("transient"))
                        for _, record in iter_json_objects(failed, on_error=lambda where, why: None))
        if not transient:
            continue
        for name in ("documents", "failed"):
            source = output / name / f"{rank:05d}.jsonl.gz"
            if source.is_file():
                target = output / RETRY_FOLDER / name / source.name
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)
        marker.unlink()
        pages += transient
    return pages


def _check_same_inputs(output: Path, inputs: dict) -> None:
    """A rerun into a folder resumes it (finished tasks are skipped): refuse when the inputs changed, since the
    skipped tasks' documents would then be stale."""
    record = output / "inputs.json"
    if record.is_file() and (output / "logs" / "completions").is_dir():
        previous = json.loads(record.read_text(encoding="utf-8"))
        if previous != inputs:
            changed = ", ".join(sorted(k for k in inputs if previous.get(k) != inputs[k]))
            raise ValueError(f"{output} holds a run with other inputs ({changed} changed); use a new output folder "
                             "or delete this one")
    record.write_text(json.dumps(inputs, indent=1), encoding="utf-8")


def run_documents(
    statement_paths: Iterable[str | os.PathLike],
    output_dir: str | os.PathLike,
    warc_paths: Iterable[str | os.PathLike] = (),
    http: bool = False,
    http_config: HttpConfig | None = None,
    workers: int = 1,
    tasks: int | None = None,
    warc_index: str | os.PathLike | None = None,
    extraction: ExtractionConfig | None = None,
    text_config: TextConfig | None = None,
    progress: bool = True,
    sources: DocumentSources | None = None,
) -> DocumentsSummary:
    """Run stage 2: index `warc_paths`, fetch every cited page once, write documents; returns the summary.

    Args:
        statement_paths: statement JSONL files or folders of them.
        output_dir: output folder (`documents/`, `failed/`, `logs/`, and by default `warc_index.sqlite` and
            `http_cache/`).
        warc_paths: WARC/ARC files to index (files already in the index are not read again).
        http: fetch pages missing from the archive from the live web.
        http_config: HTTP rules (defaults when None); its cache goes to `output_dir/http_cache` when it names none.
        workers: processes running at once; tasks: number of tasks (defaults to `workers`).
        warc_index: index database path (default `output_dir/warc_index.sqlite` when `warc_paths` are given).
        progress: progress bars.
        sources: the other sources (Common Crawl, a documents folder to reuse, HTTP), tried in the order
            :class:`DocumentSources` gives. Its `http`/`http_config` and the arguments of the same names add up.

    A rerun into the same folder resumes it (finished tasks are skipped); it is refused when the statements, the
    indexed WARC files, `http`, `sources` or `tasks` changed.

    Raises:
        ValueError: no source at all, bad numbers, or `output_dir` holds a run with other inputs.
        FileNotFoundError: a statement path or the named index does not exist.
    """
    from ..process.executors import local_executor  # datatrove's LocalPipelineExecutor, quiet under --quiet

    tasks = _check_task_counts(workers, tasks)
    warc_paths = [Path(p) for p in warc_paths]
    statement_paths = list(statement_paths)
    statements = [str(path.resolve()) for path in statement_files(statement_paths)]  # fails early on a bad path
    output = Path(output_dir)
    sources = sources or DocumentSources()
    http = http or sources.http
    http_config = http_config or sources.http_config
    index_path = _warc_index_path(output, warc_paths, warc_index, http, sources)
    output.mkdir(parents=True, exist_ok=True)
    check_sources(sources)
    archive = _index_archives(output, index_path, warc_paths, statements, http, tasks, sources, progress)
    http_config = http_config_of_run(output, http, http_config)

    summary = DocumentsSummary(archive=archive, output_dir=str(output))
    captures_dir = _join_columnar_index(summary, statements, output, sources.common_crawl, http_config, tasks, workers)
    retrying = reopen_transient_failures(output, output / "logs", tasks)
    if retrying and progress:
        print(f"retrying {retrying} cited page(s) that failed on the last run because of the network", flush=True)
    pipeline = documents_pipeline(statement_paths, output, index_path, http_config, extraction, text_config,
                                  progress=progress and workers == 1, common_crawl=sources.common_crawl,
                                  reuse_documents=sources.documents, captures_dir=captures_dir)
    local_executor(pipeline, tasks=tasks, workers=workers, logging_dir=str(output / "logs")).run()
    _add_task_counts(summary, output / "logs", tasks, reader_name=str(pipeline[0]), fetch_name=str(pipeline[1]))
    return summary


def _check_task_counts(workers: int, tasks: int | None) -> int:
    """The number of tasks (``workers`` when None), after checking both are positive integers."""
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    tasks = workers if tasks is None else tasks
    if not isinstance(tasks, int) or tasks < 1:
        raise ValueError(f"tasks must be a positive integer, got {tasks!r}")
    return tasks


def _warc_index_path(output: Path, warc_paths: list[Path], warc_index: str | os.PathLike | None, http: bool,
                     sources: DocumentSources) -> Path | None:
    """Where the WARC index lives: `warc_index`, else ``output/warc_index.sqlite`` when WARC files are given, else
    none. Refuses a run with no source at all, and a named index that does not exist when no WARC file would make
    it."""
    index_path: Path | None = Path(warc_index) if warc_index is not None else None
    if index_path is None and not warc_paths and not http and not sources.any:
        raise ValueError("nothing to fetch from: give WARC files (or an index), Common Crawl, a documents folder "
                         "and/or enable HTTP")
    if index_path is not None and not warc_paths and not index_path.is_file():
        raise FileNotFoundError(f"{index_path}: no such WARC index")
    if warc_paths:
        index_path = index_path or output / "warc_index.sqlite"
    return index_path


def _index_archives(output: Path, index_path: Path | None, warc_paths: list[Path], statements: list[str],
                    http: bool, tasks: int, sources: DocumentSources, progress: bool) -> IndexStats | None:
    """Refuse a rerun with other inputs (:func:`_check_same_inputs`; the WARC files the index already holds are
    inputs too), then add `warc_paths` to the index (files already in it are not read again). Returns the index's
    totals (None without an index)."""
    archive: IndexStats | None = None
    index = WarcIndex(index_path) if index_path is not None else None
    try:
        indexed = {stats.path for stats in index.file_stats()} if index is not None else set()
        inputs = {"statements": statements, "warc_files": sorted(indexed | {str(p.resolve()) for p in warc_paths}),
                  "http": http, "tasks": tasks}
        if sources.common_crawl is not None or sources.documents is not None:
            inputs["sources"] = sources.to_dict()
        _check_same_inputs(output, inputs)
        if index is not None:
            index.add_many(warc_paths, progress=progress)
            archive = index.stats
    finally:
        if index is not None:
            index.close()
    return archive


def http_config_of_run(output: Path, http: bool, http_config: HttpConfig | None) -> HttpConfig | None:
    """The HTTP rules of the run (None: HTTP off); its cache goes to ``output/http_cache`` when it names none."""
    if not http:
        return None
    http_config = http_config or HttpConfig()
    if http_config.cache_dir is None:
        http_config = dataclasses.replace(http_config, cache_dir=str(output / "http_cache"))
    return http_config


def _join_columnar_index(summary: DocumentsSummary, statements: list[str], output: Path,
                         crawl: CommonCrawlConfig | None, http_config: HttpConfig | None, tasks: int,
                         workers: int) -> Path | None:
    """With Common Crawl's columnar index, join all cited URLs with it once, split by index file, into
    ``output/captures`` (:func:`columnar_join_stages`; partitioned by host when HTTP is on, as the fetch tasks are);
    counts the index files read in `summary`. Returns the captures folder (None without a columnar index)."""
    from ..mining.stages import read_stage_stats
    from ..process.executors import local_executor

    if crawl is None or not crawl.cc_index:
        return None
    captures_dir = output / "captures"
    for name, steps in columnar_join_stages(statements, captures_dir, crawl,
                                            partition_by="host" if http_config is not None else "url"):
        local_executor(steps, tasks=tasks, workers=workers, logging_dir=str(output / "logs" / name)).run()
    logs = output / "logs" / "index_join"
    stats = read_stage_stats(logs, tasks)
    _warn_failed_tasks(stats.missing, logs)
    summary.index_files_joined += stats.totals().get("index_files", 0)
    return captures_dir


def _add_task_counts(summary: DocumentsSummary, logs: Path, tasks: int, reader_name: str, fetch_name: str) -> None:
    """Add to `summary` the counters the documents tasks left in datatrove's stats (summed over the tasks): the
    statement reader's unreadable records, and the fetch step's statements, URLs, statuses by reason, sources,
    Common Crawl outcomes and network faults."""
    from ..mining.stages import read_stage_stats

    stats = read_stage_stats(logs, tasks)
    _warn_failed_tasks(stats.missing, logs)
    reader, fetch = stats.step(reader_name), stats.step(fetch_name)
    summary.bad_statements += reader.get("bad_records", 0) + reader.get("bad_files", 0)
    summary.statements += fetch.get("statements", 0)
    summary.statements_without_url += fetch.get("statements_without_url", 0)
    summary.urls += fetch.get("urls", 0)
    summary.citing_statements += fetch.get("citing_statements", 0)
    summary.reused += fetch.get("reused", 0)
    summary.transient += fetch.get("transient", 0)
    summary.retried += fetch.get("retried", 0)
    for label, value in fetch.items():
        kind, _, name = label.partition("/")
        if kind == "status" and name != "ok":
            summary.add_status(name, "", value)
        elif kind == "source":
            summary.add_status("ok", name, value)
        elif kind == "cc":
            summary.common_crawl[name] += value
        elif kind == "faults":
            summary.faults[name] += value
    summary.index_files_reread += fetch.get("cc_index/files_read", 0)


def _warn_failed_tasks(missing: list[int], logs: Path) -> None:
    """A task that left no stats file failed: its counts are missing from the summary, so say which one."""
    for rank in missing:
        logger.warning("task %d left no statistics (%s): it failed, see %s", rank, logs / "stats" / f"{rank:05d}.json",
                       logs)
