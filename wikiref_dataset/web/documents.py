"""Stage 2 of the WikiRef build: the pages that statements cite, as documents (title + text + sentences).

Input: the statements of stage 1, datatrove JSONL (``*.jsonl`` / ``*.jsonl.gz``) records
``{"text": statement, "id": ..., "metadata": {"fetch_url": ..., "url": ..., ...}}``. Only ``metadata.fetch_url``
(the URL to download: the archive copy when the original is dead), ``metadata.url`` (its fallback) and the id
are used.

Each cited page is handled once: citations are grouped by :func:`~wikiref_dataset.web.urls.normalize_url`, and
one :class:`CitedDocument` per normalized URL lists the ids of the statements citing it. A page comes from the
WARC index when it holds a usable capture (the offline, reproducible default), else — with ``http`` on — from
the live web through :class:`~wikiref_dataset.web.http.HttpFetcher` (a Wayback snapshot URL is fetched in its
raw ``id_`` form, without the Wayback toolbar). Its title and main text come from
:func:`~wikiref_dataset.web.extract.extract_pages`. Every URL ends with one status: ``ok`` (fetched), a *missing*
reason (``not_archived``: no capture and HTTP off; ``not_found``: 404/410) or a *failed* reason (the fetch
statuses of :class:`~wikiref_dataset.web.http.FetchResult`, ``redirect_not_archived``, ``archive_read_error``,
and the extraction reasons ``not_html``, ``no_text``, ``parse_error``).

As datatrove steps (the project's build is a datatrove pipeline): :class:`StatementReader` ->
:class:`FetchCitedDocuments` -> :class:`KeepFetched` (failures go to its exclusion writer, counted by reason) ->
``JsonlWriter``. With several tasks, every task reads all statements and keeps the URLs of its own bucket — by
URL, or by host when HTTP is on so that a host's rate limit holds across tasks — so documents are deduplicated
globally, whatever the number of tasks. :func:`run_documents` builds the WARC index, runs that pipeline with
``LocalPipelineExecutor`` (finished tasks are skipped on rerun) and returns a :class:`DocumentsSummary`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.filters.base_filter import BaseFilter

from ..jsonl import iter_json_objects
from ..text import TextConfig, TextPipeline
from ..walk import walk_files
from .extract import ExtractedPage, ExtractionConfig, ExtractionError, extract_pages
from .http import FetchResult, HttpConfig, HttpFetcher
from .urls import normalize_url, wayback_raw_url
from .warc import IndexStats, WarcIndex, WarcReadError

logger = logging.getLogger(__name__)

__all__ = [
    "CitedDocument", "DocumentsSummary", "FetchCitedDocuments", "KeepFetched", "StatementReader",
    "documents_pipeline", "run_documents",
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
        source (`str`): `warc`, `http`, or `""` when no source answered.
        status (`str`): `ok` or why there is no document (see the module docstring).
        title (`str`): the page title.
        text (`str`): the main text, one paragraph per line.
        sentences (`list[str]`): the sentences of `text`.
        capture_date (`str`, *optional*): WARC-Date of the capture, or the time of the HTTP download (ISO 8601).
        content_type (`str`, *optional*): the page's Content-Type.
        final_url (`str`, *optional*): the URL that answered (after redirects).
        warc_record (`str`, *optional*): `path:offset` of the WARC record used.
        statement_ids (`list[str]`): ids of the statements citing the page.
        detail (`str`): what went wrong, when something did.
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


def find_files(paths: Iterable[str | os.PathLike], suffixes: tuple[str, ...], kind: str) -> list[Path]:
    """The files named by `paths`: files as given, folders searched recursively for names ending with one of
    `suffixes` (case-insensitive), sorted per folder.

    Raises:
        FileNotFoundError: a path does not exist, or a folder holds no such file (`kind` names them).
    """
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = [p for p in walk_files(path) if p.name.lower().endswith(suffixes)]  # linked folders too
            if not found:
                raise FileNotFoundError(f"{path}: no {kind} in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return files


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
        http_concurrency (`int`, defaults to 8): parallel downloads per task (per-host spacing still holds).
        batch_size (`int`, defaults to 32): pages extracted and sentence-split together.
        max_body_bytes (`int`, defaults to 20,000,000): largest archived body read.
        progress (`bool`, defaults to `False`): show a progress bar over the URLs of the task.
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
        http_concurrency: int = 8,
        batch_size: int = 32,
        max_body_bytes: int = 20_000_000,
        progress: bool = False,
    ) -> None:
        super().__init__()
        if warc_index is None and http_config is None:
            raise ValueError("FetchCitedDocuments needs a WARC index, an HTTP configuration or both")
        if partition_by not in (None, "url", "host"):
            raise ValueError(f"partition_by must be 'url' or 'host', got {partition_by!r}")
        for name, value in (("http_concurrency", http_concurrency), ("batch_size", batch_size)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.warc_index = None if warc_index is None else str(warc_index)
        self.http_config = http_config
        self.extraction = extraction or ExtractionConfig()
        self.text_pipeline = TextPipeline(text_config)
        self.partition = partition
        self.partition_by = partition_by or ("host" if http_config is not None else "url")
        self.http_concurrency = http_concurrency
        self.batch_size = batch_size
        self.max_body_bytes = max_body_bytes
        self.progress = progress

    # ---- grouping -------------------------------------------------------------------------------------------

    def group_citations(self, data: Iterable[Document], rank: int = 0, world_size: int = 1) -> list[_Citations]:
        """This task's cited URLs, one entry per normalized URL with the citing statement ids, sorted by URL."""
        count_statements = not self.partition or rank == 0  # with partition, every task sees every statement
        groups: dict[str, _Citations] = {}
        for document in data:
            metadata = document.metadata or {}
            url = metadata.get("url") or ""
            fetch_url = metadata.get("fetch_url") or url
            if count_statements:
                self.stat_update("statements")
            if not isinstance(fetch_url, str) or not fetch_url.strip():
                if count_statements:
                    self.stat_update("statements_without_url")
                continue
            problem = ""
            key = citation_key(fetch_url)  # the URL as written when it does not normalize: still gets its record
            try:
                normalize_url(fetch_url)
            except ValueError as error:
                problem = f"statement {document.id}: {error}"
            if self.partition and world_size > 1:
                bucket_key = key
                if self.partition_by == "host" and not problem:
                    bucket_key = urlsplit(key).hostname or key
                if _bucket(bucket_key, world_size) != rank:
                    continue
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Citations(str(url or fetch_url), fetch_url, key, problem=problem)
                scheme = urlsplit(key).scheme.lower() if "://" in key else ""
                if problem and scheme and scheme not in ("http", "https"):
                    group.problem_status = "bad_scheme"
            group.statement_ids.append(str(document.id))
        return [groups[key] for key in sorted(groups)]

    # ---- sources --------------------------------------------------------------------------------------------

    def _from_archive(self, index: WarcIndex, citations: _Citations) -> _Acquired:
        capture = index.lookup(citations.fetch_url)
        if capture is None and citations.url and citations.url != citations.fetch_url:
            capture = index.lookup(citations.url)
        if capture is None:
            return _Acquired("not_archived", detail=f"{citations.fetch_url}: no capture in the WARC index")
        acquired = _Acquired("ok", "warc", content_type=capture.content_type, capture_date=capture.date,
                             final_url=capture.url, warc_record=capture.record)
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
    def _from_http(fetcher: HttpFetcher, citations: _Citations) -> _Acquired:
        result: FetchResult = fetcher.fetch(wayback_raw_url(citations.fetch_url))
        return _Acquired(
            result.status, "http" if result.ok else "", result.body, result.content_type, result.fetched_at,
            result.final_url, None, result.detail,
        )

    # ---- the step -------------------------------------------------------------------------------------------

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        groups = self.group_citations(data or [], rank, world_size)
        self.stat_update("urls", value=len(groups))
        if not groups:
            return
        index = WarcIndex(self.warc_index) if self.warc_index else None
        fetcher = HttpFetcher(self.http_config) if self.http_config is not None else None
        progress = None
        if self.progress:
            from tqdm.auto import tqdm

            progress = tqdm(total=len(groups), desc=f"cited pages (task {rank})", unit="url", position=rank)
        pool = ThreadPoolExecutor(self.http_concurrency) if fetcher is not None else None
        try:
            for start in range(0, len(groups), self.batch_size):
                batch = groups[start : start + self.batch_size]
                yield from self._process(batch, index, fetcher, pool)
                if progress is not None:
                    progress.update(len(batch))
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            if index is not None:
                index.close()
            if progress is not None:
                progress.close()

    def _process(
        self,
        batch: list[_Citations],
        index: WarcIndex | None,
        fetcher: HttpFetcher | None,
        pool: ThreadPoolExecutor | None,
    ) -> Iterator[Document]:
        with self.track_time(unit="batch"):
            acquired: list[_Acquired] = []
            for citations in batch:
                if citations.problem:
                    acquired.append(_Acquired(citations.problem_status, detail=citations.problem))
                elif index is not None:
                    acquired.append(self._from_archive(index, citations))
                else:
                    acquired.append(_Acquired("not_archived"))
            if fetcher is not None and pool is not None:
                retry = [i for i, item in enumerate(acquired) if item.status != "ok" and not batch[i].problem]
                for i, result in zip(retry, pool.map(lambda i: self._from_http(fetcher, batch[i]), retry), strict=True):
                    if acquired[i].status != "not_archived" and result.status != "ok":
                        result.detail = f"archive: {acquired[i].detail}; live web: {result.detail}"
                    acquired[i] = result
            with_body = [i for i, item in enumerate(acquired) if item.status == "ok"]
            pages = ((acquired[i].body, acquired[i].final_url or batch[i].fetch_url, acquired[i].content_type)
                     for i in with_body)
            extracted: dict[int, ExtractedPage | ExtractionError] = dict(
                zip(with_body, extract_pages(pages, self.extraction, self.text_pipeline), strict=True)
            )
        for i, citations in enumerate(batch):
            item = acquired[i]
            document = CitedDocument(
                url=citations.url, fetch_url=citations.fetch_url, normalized_url=citations.normalized_url,
                source=item.source, status=item.status, capture_date=item.capture_date,
                content_type=item.content_type, final_url=item.final_url, warc_record=item.warc_record,
                statement_ids=citations.statement_ids, detail=item.detail,
            )  # fmt: skip
            page = extracted.get(i)
            if isinstance(page, ExtractionError):
                document.status, document.detail = page.reason, str(page)
            elif isinstance(page, ExtractedPage):
                document.title, document.text, document.sentences = page.title, page.text, page.sentences
            self.stat_update(f"status/{document.status}")
            self.stat_update("citing_statements", value=len(citations.statement_ids))
            if document.status == "ok":
                self.stat_update(f"source/{document.source}")
            yield document.to_document()


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
class DocumentsSummary:
    """What stage 2 did.

    Args:
        statements (`int`): statement records read.
        bad_statements (`int`): statement lines that could not be read (and unreadable file ends).
        statements_without_url (`int`): statements without `fetch_url`/`url`.
        urls (`int`): distinct normalized URLs cited.
        citing_statements (`int`): statements behind those URLs.
        fetched (`Counter[str]`): documents written, by source (`warc`, `http`).
        missing (`Counter[str]`): URLs with no copy in the sources, by reason (`not_archived`, `not_found`).
        failed (`Counter[str]`): URLs that could not be turned into documents, by reason.
        archive (`IndexStats`, *optional*): the WARC index's totals.
        output_dir (`str`): where `documents/` and `failed/` were written.
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
                            text_config=text_config, partition=not bucketed, progress=progress),
        KeepFetched(exclusion_writer=JsonlWriter(str(output / "failed"))),
        JsonlWriter(str(output / "documents")),
    ]


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

    A rerun into the same folder resumes it (finished tasks are skipped); it is refused when the statements, the
    indexed WARC files, `http` or `tasks` changed.

    Raises:
        ValueError: neither WARC files/index nor HTTP, bad numbers, or `output_dir` holds a run with other inputs.
        FileNotFoundError: a statement path or the named index does not exist.
    """
    from datatrove.executor import LocalPipelineExecutor

    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    tasks = workers if tasks is None else tasks
    if not isinstance(tasks, int) or tasks < 1:
        raise ValueError(f"tasks must be a positive integer, got {tasks!r}")
    warc_paths = [Path(p) for p in warc_paths]
    statement_paths = list(statement_paths)
    statements = [str(path.resolve()) for path in statement_files(statement_paths)]  # fails early on a bad path
    output = Path(output_dir)
    index_path: Path | None = Path(warc_index) if warc_index is not None else None
    if index_path is None and not warc_paths and not http:
        raise ValueError("nothing to fetch from: give WARC files (or an index) and/or enable HTTP")
    if index_path is not None and not warc_paths and not index_path.is_file():
        raise FileNotFoundError(f"{index_path}: no such WARC index")
    if warc_paths:
        index_path = index_path or output / "warc_index.sqlite"
    output.mkdir(parents=True, exist_ok=True)

    archive: IndexStats | None = None
    index = WarcIndex(index_path) if index_path is not None else None
    try:
        indexed = {stats.path for stats in index.file_stats()} if index is not None else set()
        inputs = {"statements": statements, "warc_files": sorted(indexed | {str(p.resolve()) for p in warc_paths}),
                  "http": http, "tasks": tasks}
        _check_same_inputs(output, inputs)
        if index is not None:
            index.add_many(warc_paths, progress=progress)
            archive = index.stats
    finally:
        if index is not None:
            index.close()
    if http:
        http_config = http_config or HttpConfig()
        if http_config.cache_dir is None:
            http_config = dataclasses.replace(http_config, cache_dir=str(output / "http_cache"))
    else:
        http_config = None

    pipeline = documents_pipeline(statement_paths, output, index_path, http_config, extraction, text_config,
                                  progress=progress and workers == 1)
    executor = LocalPipelineExecutor(pipeline, tasks=tasks, workers=workers, logging_dir=str(output / "logs"))
    executor.run()

    summary = DocumentsSummary(archive=archive, output_dir=str(output))
    reader_name, fetch_name = str(pipeline[0]), str(pipeline[1])
    for rank in range(tasks):
        stats_file = output / "logs" / "stats" / f"{rank:05d}.json"
        if not stats_file.is_file():
            logger.warning("task %d left no statistics (%s): it failed, see %s", rank, stats_file, output / "logs")
            continue
        for step in json.loads(stats_file.read_text(encoding="utf-8")):
            # datatrove writes a counter as its total, or as {"total": ..., ...} when it has more to say
            totals = {k: int(v["total"] if isinstance(v, dict) else v) for k, v in step.get("stats", {}).items()}
            if step["name"] == reader_name:
                summary.bad_statements += totals.get("bad_records", 0) + totals.get("bad_files", 0)
            elif step["name"] == fetch_name:
                summary.statements += totals.get("statements", 0)
                summary.statements_without_url += totals.get("statements_without_url", 0)
                summary.urls += totals.get("urls", 0)
                summary.citing_statements += totals.get("citing_statements", 0)
                for label, value in totals.items():
                    kind, _, name = label.partition("/")
                    if kind == "status" and name != "ok":
                        summary.add_status(name, "", value)
                    elif kind == "source":
                        summary.add_status("ok", name, value)
    return summary
