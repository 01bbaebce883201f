"""The one join of every cited URL with Common Crawl's columnar index, as two datatrove stages run before the fetch
stage with as many tasks: :class:`CitedUrlKeys` (each task's URLs with their SURT keys) then
:class:`JoinColumnarIndex` (each task joins all keys with its share of the index files); the fetch tasks then read
their captures instead of the index (:mod:`~wikiref_dataset.web.commoncrawl.index_join`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Literal

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from ..commoncrawl import CaptureTable, CommonCrawlConfig
from .inputs import StatementReader, group_citations

__all__ = ["CitedUrlKeys", "JoinColumnarIndex", "columnar_join_stages"]


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
        from ..commoncrawl import join_index_share

        with self.track_time():
            counts = join_index_share(self.common_crawl, rank, world_size, self.captures_dir)
        for key, value in counts.items():
            self.stat_update(key, value=value)
        return
        yield


def columnar_join_stages(statement_paths: Iterable[str | os.PathLike], captures_dir: str | os.PathLike,
                         common_crawl: CommonCrawlConfig, bucketed: bool = False,
                         partition_by: Literal["url", "host"] = "url") -> list[tuple[str, list[PipelineStep]]]:
    """The two stages of the one join of all cited URLs with the columnar index, as (name, steps), to run with the
    fetch stage's number of tasks before it (its `captures_dir`)."""
    return [("index_keys", [StatementReader(statement_paths, bucketed=bucketed),
                            CitedUrlKeys(captures_dir, partition=not bucketed, partition_by=partition_by)]),
            ("index_join", [JoinColumnarIndex(captures_dir, common_crawl)])]
