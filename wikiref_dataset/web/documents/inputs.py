"""Stage 2's input: the statements of stage 1, and their cited URLs grouped one per normalized URL and dealt to tasks.

The statements are datatrove JSONL (``*.jsonl`` / ``*.jsonl.gz``) records
``{"text": statement, "id": ..., "metadata": {"fetch_url": ..., "url": ..., ...}}`` (:class:`StatementReader`). Only
``metadata.fetch_url`` (the URL to download: the archive copy when the original is dead), ``metadata.url`` (its
fallback), the citation's ``access_date`` and ``date``, and the id are used. :func:`group_citations` groups them by
normalized URL (:func:`citation_key`) into :class:`Citations`; :func:`citation_bucket` says which task handles a URL,
by URL or by host (:class:`BucketByCitedUrl` files the statements by it in the build).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from ...utils.jsonl import iter_json_objects
from ...utils.walk import find_files
from ..captures import target_date
from ..urls import normalize_url, unwrap_wayback

logger = logging.getLogger(__name__)

__all__ = ["STATEMENT_SUFFIXES", "BucketByCitedUrl", "Citations", "StatementReader", "citation_bucket", "citation_key",
           "group_citations", "statement_files", "url_bucket"]

STATEMENT_SUFFIXES = (".jsonl", ".jsonl.gz", ".json.gz", ".jsonl.gzip")


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


@dataclass
class Citations:
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
                    stat_update: Callable[..., None] = lambda *_, **__: None) -> list[Citations]:
    """Task `rank`'s cited URLs, one entry per normalized URL with the citing statement ids, sorted by URL: all the
    statements' URLs, or with `partition` only this task's share (:func:`citation_bucket`). `stat_update` counts
    ``statements`` and ``statements_without_url`` (once over all tasks when every task sees every statement)."""
    count_statements = not partition or rank == 0  # with partition, every task sees every statement
    groups: dict[str, Citations] = {}
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
            group = groups[key] = Citations(str(url or fetch_url), fetch_url, key, problem=problem,
                                             access_date=_text_or_none(metadata.get("access_date")),
                                             date=_text_or_none(metadata.get("date")))
            scheme = urlsplit(key).scheme.lower() if "://" in key else ""
            if problem and scheme and scheme not in ("http", "https"):
                group.problem_status = "bad_scheme"
        group.statement_ids.append(str(document.id))
    return [groups[key] for key in sorted(groups)]


def _text_or_none(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None
