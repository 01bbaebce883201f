"""The fetch step of stage 2 (:class:`FetchCitedDocuments`): a task's cited URLs through the sources in order
(:mod:`.sources`), downloads scheduled across hosts (:class:`~wikiref_dataset.web.http.CrawlScheduler`), the pages
extracted and sentence-split (:func:`~wikiref_dataset.web.extract.extract_pages`), one document per URL.

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
import os
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from ...text import TextConfig, TextPipeline
from ...utils.jsonl import iter_json_objects
from ..commoncrawl import CaptureRequest, CaptureTable, CommonCrawl, CommonCrawlConfig
from ..extract import ExtractedPage, ExtractionConfig, ExtractionError, extract_pages
from ..http import CrawlScheduler, FetchResult, HttpConfig, HttpFetcher, crawl_order
from ..urls import wayback_raw_url
from ..warc import WarcIndex
from .inputs import Citations, group_citations
from .outputs import CitedDocument, reused_document_files
from .sources import Acquired

__all__ = ["FetchCitedDocuments"]


@dataclass
class _Started:
    """A batch with the archive's answers and its downloads queued (see `FetchCitedDocuments.run`)."""

    batch: list[Citations]
    acquired: list[Acquired]
    downloads: dict[int, Future[FetchResult]]  # index in the batch -> its download
    seconds: float = 0.0  # spent starting it (archive reads)

    def done(self) -> bool:
        return all(download.done() for download in self.downloads.values())


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

    def group_citations(self, data: Iterable[Document], rank: int = 0, world_size: int = 1) -> list[Citations]:
        """This task's cited URLs, one entry per normalized URL with the citing statement ids, sorted by URL."""
        return group_citations(data, rank, world_size, self.partition, self.partition_by, self.stat_update)

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

    def _start(self, batch: list[Citations], index: WarcIndex | None, scheduler: CrawlScheduler | None) -> _Started:
        """The archive's answers for a batch, and the downloads of the pages it lacks queued."""
        began = time.perf_counter()
        acquired: list[Acquired] = []
        for citations in batch:
            reused = self._reused.get(citations.normalized_url)
            carried = self._carried.get(citations.normalized_url)
            if citations.problem:
                acquired.append(Acquired(citations.problem_status, detail=citations.problem))
            elif carried is not None and not carried.transient:  # this task's own result of the earlier run
                acquired.append(Acquired(carried.status, carried.source, reused=carried, carried=True))
            elif reused is not None and reused.status == "ok":
                acquired.append(Acquired("ok", reused.source, reused=reused))
            elif index is not None:
                acquired.append(Acquired.from_archive(index, citations, self.max_body_bytes))
            elif reused is not None:  # it failed before; the sources after it may still serve it
                acquired.append(Acquired(reused.status, detail=f"documents folder: {reused.detail}"))
            else:
                acquired.append(Acquired("not_archived"))
        if self._crawl is not None:
            missing = [i for i, item in enumerate(acquired)
                       if item.status != "ok" and not item.carried and not batch[i].problem]
            requests = [CaptureRequest(batch[i].original_url, batch[i].near) for i in missing]
            for i, result in zip(missing, self._crawl.resolve(requests), strict=True):
                crawled = Acquired.from_common_crawl(result)
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
            result = Acquired.from_http(download.result())
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
