"""Stage 2 on its own: the pipeline (:func:`documents_pipeline`), and :func:`run_documents`, which indexes the WARC
files, joins the cited URLs with Common Crawl's columnar index when one is given, runs the fetch tasks with
``LocalPipelineExecutor`` (finished tasks are skipped on rerun; a rerun with other inputs is refused) and returns what
they did (:class:`DocumentsSummary`)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from datatrove.pipeline.base import PipelineStep

from ...text import TextConfig
from ..commoncrawl import CommonCrawlConfig
from ..extract import ExtractionConfig
from ..faults import describe_faults
from ..http import HttpConfig
from ..warc import IndexStats, WarcIndex
from .columnar_join import columnar_join_stages
from .fetch import FetchCitedDocuments
from .inputs import StatementReader, statement_files
from .outputs import MISSING_STATUSES, RETRY_FOLDER, KeepFetched, reopen_transient_failures
from .sources import DocumentSources, check_sources

logger = logging.getLogger(__name__)

__all__ = ["DocumentsSummary", "documents_pipeline", "http_config_of_run", "run_documents"]


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
    from ...process.executors import local_executor  # datatrove's LocalPipelineExecutor, quiet under --quiet

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
    from ...mining.stages import read_stage_stats
    from ...process.executors import local_executor

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
    from ...mining.stages import read_stage_stats

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
