"""The WikiRef build as datatrove stages: statements -> documents -> curation statistics -> filters/labels ->
split + Parquet.

Folder layout under the work folder (``--work``, default ``<out>.work`` beside the output folder):
``statements/<bucket>/<task>.jsonl.gz`` (stage 1: tasks take whole dump files, or byte ranges of a multistream file
with its index; each writes one file per bucket of the cited URL, ``tasks`` buckets), ``documents/`` and ``failed/``
(stage 2: task k reads bucket k's statements and fetches those URLs), ``examples/`` + ``length_stats/`` (stage 3:
task k joins bucket k's statements and documents, then measure, rule 1,
exact per-task length values), ``curated/`` (stage 4: rules 2-3 and labels), ``rejects/`` (every dropped or bad
record with its reason), ``logs/<stage>/`` (datatrove's completion markers and stats), ``build.json`` (the closing
counts). Stage 5 (one task) sorts by id, splits, writes the folder (``data/*.parquet`` + card) under a staging
folder and publishes it as ``out`` in one rename (:mod:`wikiref_dataset.process.folders`): ``out`` holds the previous
complete build or this one, never a partial one; a build that keeps no example publishes nothing.

Determinism: every stage's sharding depends on ``tasks`` (fixed by the config), never on ``workers``; stage 3
buckets examples by the cited URL's hash; stage 5 sorts by id. Resumability: datatrove skips tasks with a
completion marker and a rerun task overwrites its own files, so a killed build rerun gives the same bytes.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from ..mining.stages import (
    clear_stage,
    file_identities,
    read_jsonl,
    read_stage_stats,
    restart_changed_stages,
    stage_done,
)
from ..process.executors import ExecutorConfig, connect_ray, live_slurm_chain, make_executor, submit_slurm_chain
from ..process.folders import check_output_folder, empty_build_reason, finish_build, is_published, staging_folder
from ..text import TextPipeline
from ..utils.jsonl import iter_json_objects
from ..web.documents import BucketByCitedUrl, DocumentSources, check_sources
from ..web.faults import fault_counts
from ..web.urls import url_key
from ..wiki.languages import wiki_language
from ..wiki.statements import Statement, StatementConfig
from .curation import (
    CurationConfig,
    Example,
    LengthFilter,
    LengthStatistics,
    OracleFilter,
    OracleLabeler,
    UnigramRecallFilter,
    measure_examples,
    plan_splits,
    split_group,
)

__all__ = ["BuildConfig", "BuildSummary", "CurationExamples", "WriteDataset", "build_stages", "run_build",
           "run_demo_build", "make_executor", "connect_ray", "submit_slurm_chain"]

logger = logging.getLogger(__name__)

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "data" / "sample" / "wikiref"  # wikiref_dataset/data/
STAGES = ("statements", "documents", "statistics", "curation", "dataset")


@dataclass
class BuildConfig(ExecutorConfig):
    """What to build and how (the output and executor fields are :class:`~wikiref_dataset.process.executors.ExecutorConfig`'s).

    Args:
        dumps (`list[str]`): ``pages-articles`` dump files. warcs (`list[str]`): WARC files with the cited pages.
        curation (:class:`CurationConfig`): filters, labels, split.
        statements (:class:`~wikiref_dataset.wiki.statements.StatementConfig`): stage 1's extraction settings
            (citation types kept, bare URLs, skipped sections, list items).
        sources (:class:`~wikiref_dataset.web.documents.DocumentSources`): stage 2's sources besides ``warcs``
            (Common Crawl, the live web, a documents folder to reuse), tried in order after the WARC files.
        tasks (`int`): tasks of every stage but the last: stage 1 writes, and stages 2-4 each read, one bucket of the
            cited URLs per task (stage 1 also takes at least one task per dump file). Fixes the output, not the speed
            (that is ``workers``); default 4.
        output_dir, work_dir, overwrite, workers, executor, executor_options: see
            :class:`~wikiref_dataset.process.executors.ExecutorConfig`.
    """

    dumps: list[str]
    warcs: list[str] = field(default_factory=list)
    _: KW_ONLY
    curation: CurationConfig = field(default_factory=CurationConfig)
    statements: StatementConfig = field(default_factory=StatementConfig)
    sources: DocumentSources = field(default_factory=DocumentSources)
    tasks: int = field(default=4, kw_only=True, metadata={
        "flag": "--tasks", "metavar": "N",
        "help": "tasks of every stage but the last: each writes (stage 1) or reads (stages 2-4) one bucket of the "
                "cited URLs; fixes the output, not the speed (that is --workers); default 4"})

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.dumps:
            raise ValueError("no dump file given")
        # the text pipeline, the lengths and the oracle's ROUGE follow the dumps' language
        text = wiki_language(self.statements.language).text_config(self.curation.text, "the dumps")
        if text is not self.curation.text:
            self.curation = dataclasses.replace(self.curation, text=text)

    @property
    def shards(self) -> int:
        """Deprecated name of :attr:`tasks`."""
        return self.tasks


def rouge_description(lang: str) -> str:
    """Which ROUGE curation and the oracle labels used, as the card and ``build.json`` state it."""
    if lang == "en":
        return "ROUGE-1.5.5 (its tokenizer and -m Porter stemming)"
    return (f"Unicode ROUGE: words of spaCy's {lang!r} tokenizer, lowercased, lemmas for stemming; ROUGE-1.5.5's "
            "counting otherwise")


class CurationExamples(PipelineStep):
    """Stage 3's reader: joins this task's bucket of statements (by cited URL) with their documents.

    Task k reads only bucket k: ``statements/<k>/*.jsonl.gz`` (every stage-1 task's file of that bucket) and
    ``documents/<k>.jsonl.gz`` + ``failed/<k>.jsonl.gz`` (stage-2 task k fetched exactly that bucket); ``input_bytes``
    counts what it read. Statements whose page is missing or failed are dropped, counted ``missing/<status>`` and
    written to ``rejects_dir``; unreadable records are counted ``bad_records``. Yields :class:`Example` documents
    sorted by id.

    The join is a merge join: the statements, and the documents as one record per statement they serve, are each
    sorted by statement id with :func:`~wikiref_dataset.utils.external_sort.external_sort` (runs spilled under ``spill_dir``
    past the sort buffer, counted ``sort_runs_spilled``), so the task's memory does not grow with its bucket.
    """

    name = "🔗 join statements + documents"
    type = "📖 - READER"

    def __init__(self, statements_dir: str, documents_dir: str, rejects_dir: str, spill_dir: str | None = None) -> None:
        super().__init__()
        self.statements_dir, self.documents_dir, self.rejects_dir = statements_dir, documents_dir, rejects_dir
        self.spill_dir = spill_dir

    def _files(self, paths: list[Path]) -> list[Path]:
        present = [path for path in paths if path.is_file()]
        for path in present:
            self.stat_update("input_bytes", value=path.stat().st_size)
        return present

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from ..utils.external_sort import external_sort

        folder = Path(self.rejects_dir)
        folder.mkdir(parents=True, exist_ok=True)
        sorting: Counter[str] = Counter()
        with gzip.open(folder / f"{rank:05d}.jsonl.gz", "wt", encoding="utf-8") as rejects:
            def reject(record: dict) -> None:
                rejects.write(json.dumps(record, sort_keys=True) + "\n")

            def bad_line(location: str, reason: str) -> None:
                self.stat_update("bad_records")
                reject({"id": None, "reason": "bad_record", "detail": f"{location}: {reason}"})

            documents = external_sort(self._documents(rank, bad_line), key=lambda item: item["statement"],
                                      folder=self.spill_dir, stats=sorting)
            statements = external_sort(self._statements(rank, bad_line), key=_statement_key, folder=self.spill_dir,
                                       stats=sorting)
            yield from self._join(statements, documents, reject)
        for key in ("sort_runs_spilled", "sort_bytes_spilled"):
            if sorting[key]:
                self.stat_update(key, value=sorting[key])

    def _documents(self, rank: int, bad_line: Any) -> Iterator[dict]:
        """``{"statement": id, "document": record}`` for every statement each fetched document serves."""
        from ..web.documents import CitedDocument

        documents = [Path(self.documents_dir) / folder / f"{rank:05d}.jsonl.gz" for folder in ("documents", "failed")]
        for path in self._files(documents):
            for _, record in iter_json_objects(path, on_error=bad_line):
                try:
                    cited = CitedDocument.from_document(record)
                except (TypeError, ValueError) as err:
                    bad_line(str(path), f"document {record.get('id')!r}: {err}")
                    continue
                for statement_id in cited.statement_ids:
                    yield {"statement": str(statement_id), "document": record}

    def _statements(self, rank: int, bad_line: Any) -> Iterator[dict]:
        for path in self._files(sorted((Path(self.statements_dir) / f"{rank:05d}").glob("*.jsonl.gz"))):
            for _, record in iter_json_objects(path, on_error=bad_line):
                yield record

    def _join(self, statements: Iterator[dict], documents: Iterator[dict], reject: Any) -> DocumentsPipeline:
        """Both inputs sorted by statement id; a statement served by several documents gets the last one read."""
        from ..web.documents import CitedDocument

        pending = next(documents, None)
        previous: tuple[str, dict | None] = ("", None)
        for record in statements:
            key = _statement_key(record)
            while pending is not None and pending["statement"] < key:
                pending = next(documents, None)
            found = previous[1] if previous[0] == key else None  # a statement id repeated in the input
            while pending is not None and pending["statement"] == key:
                found, pending = pending["document"], next(documents, None)
            previous = (key, found)
            try:
                statement = Statement.from_document(Document(text=record.get("text", ""), id=record["id"],
                                                             metadata=record.get("metadata", {})))
            except (KeyError, ValueError, TypeError) as err:
                self.stat_update("bad_records")
                reject({"id": record.get("id"), "reason": "bad_record", "detail": str(err)})
                continue
            fetch_url = statement.citation.fetch_url or statement.citation.url or ""
            self.stat_update("statements")
            cited = CitedDocument.from_document(found) if found is not None else None
            if cited is None or cited.status != "ok":
                reason = f"missing/{cited.status if cited is not None else 'no_document'}"
                self.stat_update(reason)
                reject({"id": statement.id, "reason": reason, "url": fetch_url})
                continue
            try:
                example = _example(statement, cited)
            except (TypeError, ValueError, AttributeError) as err:
                self.stat_update("bad_records")
                reject({"id": statement.id, "reason": "bad_record", "detail": str(err)})
                continue
            self.stat_update("examples")
            yield example.to_document()


def _statement_key(record: dict) -> str:
    """The join and sort key of a statement record: its id as the :class:`Statement` gets it."""
    return str(record.get("id", ""))


def _example(statement: Statement, cited: Any) -> Example:
    citation = statement.citation
    title = (cited.title or "").strip()
    sentences = [s for s in cited.sentences if s.strip()]
    try:
        key = url_key(cited.normalized_url)
    except ValueError:
        key = cited.normalized_url
    try:
        final_key = url_key(cited.final_url) if cited.final_url else key
    except ValueError:
        final_key = key
    return Example(
        id=statement.id, query=statement.query_levels, document_title=title,
        document=([title] if title and (not sentences or sentences[0] != title) else []) + sentences,
        summary=statement.text, url=citation.url or "",
        archive_url=citation.archive_url or "", citation_type=citation.type or "",
        wiki_page_id=statement.page_id, wiki_revision_id=statement.revision_id, wiki_title=statement.page_title,
        section_path=list(statement.section_path), url_key=key, wiki_timestamp=statement.timestamp,
        document_source=cited.source or "", capture_date=cited.capture_date or "", warc_filename=cited.warc_filename,
        warc_offset=cited.warc_offset, warc_length=cited.warc_length, final_url=cited.final_url or cited.fetch_url,
        final_url_key=final_key,
    )


class MeasureExamples(PipelineStep):
    """Lengths and unigram recall of every example (:func:`~wikiref_dataset.wikiref.curation.measure_examples`)."""

    name = "🔤 lemmas + lengths"
    type = "🔢 - MEASURE"

    def __init__(self, curation: CurationConfig) -> None:
        super().__init__()
        self.text = TextPipeline(curation.text)

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        examples = []
        for document in data or ():
            try:
                examples.append(Example.from_document(document))
            except (TypeError, ValueError) as err:
                self.stat_update("dropped_bad_record")
                logger.warning("example %s dropped: %s", document.id, err)
            if len(examples) >= 256:
                yield from self._measure(examples)
                examples = []
        yield from self._measure(examples)

    def _measure(self, examples: list[Example]) -> DocumentsPipeline:
        try:
            measured = list(measure_examples(examples, self.text))
        except (TypeError, ValueError):  # one bad text: measure one by one, drop only it
            measured = []
            for example in examples:
                try:
                    measured.extend(measure_examples([example], self.text))
                except (TypeError, ValueError) as err:
                    self.stat_update("dropped_bad_record")
                    logger.warning("example %s dropped: %s", example.id, err)
        for example in measured:
            self.stat_update("measured")
            yield example.to_document()


class WriteDataset(PipelineStep):
    """Stage 5 (one task): read the curated shards, split, write Parquet + card + ``build.json``.

    Two streaming passes: the first counts the examples of each URL group (the split needs only those sizes,
    :func:`~wikiref_dataset.wikiref.curation.plan_splits`); the second merges the shards, each already in id order
    (:func:`~wikiref_dataset.utils.external_sort.merge_sorted`), into :class:`~wikiref_dataset.wikiref.dataset.WikiRefFolderWriter`.
    Memory: one record per shard, one Parquet row group per split, and a count per URL group.
    """

    name = "💾 split + Parquet"
    type = "💽 - WRITER"

    def __init__(self, config: BuildConfig) -> None:
        super().__init__()
        self.config = config

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from ..mining.dataset_folder import SPLITS
        from ..utils.external_sort import merge_sorted
        from .dataset import WikiRefFolderWriter

        work = self.config.work
        shards = sorted((work / "curated").glob("*.jsonl.gz"))

        def examples(path: Path) -> Iterator[Example]:
            for record in read_jsonl(path):
                yield Example.from_document(record)

        groups: Counter[str] = Counter()
        latest = ""
        for path in shards:
            self.stat_update("input_bytes", value=path.stat().st_size)
            for example in examples(path):
                groups[split_group(example)] += 1
                latest = max(latest, example.wiki_timestamp)
        plan = plan_splits(groups, self.config.curation)
        counts = collect_counts(work)
        counts.update({f"split {name}": sum(size for group, size in groups.items() if plan[group] == name)
                       for name in SPLITS})
        build = {"dumps": [Path(d).name for d in self.config.dumps], "warcs": [Path(w).name for w in self.config.warcs],
                 "language": self.config.statements.language, "statements": self.config.statements.describe_rules(),
                 "rouge": rouge_description(self.config.curation.text.lang),
                 "latest_revision": latest, "config": self.config.curation.to_dict(), "counts": counts}
        if _document_sources(self.config).any:
            build["sources"] = _document_sources(self.config).to_dict()
        staging = staging_folder(self.config.output_dir)
        writer = WikiRefFolderWriter(staging)
        for example in merge_sorted([(str(path), examples(path)) for path in shards], key=lambda e: e.id):
            writer.add(plan[split_group(example)], example)
        sizes = writer.close(build)
        build["splits"] = sizes
        empty = None if sum(sizes.values()) else empty_build_reason(
            ("raw statements", counts.get("raw statements", 0)),
            {k: v for k, v in counts.items() if k.startswith("dropped")})
        finish_build(staging, self.config.output_dir, "wikiref", work, build, empty, self.config.overwrite)
        self.stat_update("examples", value=sum(sizes.values()))
        return
        yield


def build_stages(config: BuildConfig) -> list[tuple[str, list[PipelineStep], int]]:
    """The stages as (name, datatrove steps, tasks): the five of :data:`STAGES`, and with Common Crawl's columnar
    index two stages before ``documents``, ``index_keys`` and ``index_join``: one join of all cited URLs with the
    index, split by index file (:func:`~wikiref_dataset.web.documents.columnar_join_stages`). Every step lists its input files when it runs, not
    when it is built, so all stages can be built (and submitted to a cluster) before stage 1 has run."""
    from datatrove.pipeline.writers import JsonlWriter

    from ..web.documents import columnar_join_stages, documents_pipeline
    from ..wiki.steps import WikiDumpStatements

    work = config.work
    rejects = work / "rejects"
    curation = config.curation
    jsonl = dict(output_filename="${rank}.jsonl.gz", compression="gzip")
    crawl = config.sources.common_crawl
    joined = crawl is not None and bool(crawl.cc_index)
    join = [(name, steps, config.tasks) for name, steps in columnar_join_stages(
        [str(work / "statements")], work / "captures", crawl, bucketed=True)] if joined else []
    return [
        ("statements", [WikiDumpStatements(config.dumps, config=config.statements), BucketByCitedUrl(config.tasks),
                        JsonlWriter(str(work / "statements"), output_filename="${url_bucket}/${rank}.jsonl.gz",
                                    compression="gzip")], statement_tasks(config)),
        *join,
        ("documents", documents_pipeline([str(work / "statements")], work / "documents",
                                         warc_index=work / "warc_index.sqlite", bucketed=True,
                                         captures_dir=work / "captures" if joined else None,
                                         **_source_options(config)), config.tasks),
        ("statistics", [
            CurationExamples(str(work / "statements"), str(work / "documents"), str(rejects / "missing"),
                             spill_dir=str(work / "spill")),
            MeasureExamples(curation),
            UnigramRecallFilter(curation.min_unigram_recall,
                                exclusion_writer=JsonlWriter(str(rejects / "unigram_recall"), **jsonl)),
            LengthStatistics(work / "length_stats"),
            JsonlWriter(str(work / "examples"), **jsonl),
        ], config.tasks),
        ("curation", [
            _ShardReader(str(work / "examples")),
            LengthFilter(work / "length_stats", curation,
                         exclusion_writer=JsonlWriter(str(rejects / "length"), **jsonl)),
            OracleFilter(curation.min_oracle_score, curation.oracle_max_sentences,
                         exclusion_writer=JsonlWriter(str(rejects / "oracle"), **jsonl), language=curation.text.lang),
            OracleLabeler(curation.text.lang),
            JsonlWriter(str(work / "curated"), **jsonl),
        ], config.tasks),
        ("dataset", [WriteDataset(config)], 1),
    ]


class _ShardReader(PipelineStep):
    """Reads ``<folder>/<rank>.jsonl.gz`` (the shard the same rank wrote in the previous stage)."""

    name = "📂 shard reader"
    type = "📖 - READER"

    def __init__(self, folder: str) -> None:
        super().__init__()
        self.folder = folder

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        path = Path(self.folder) / f"{rank:05d}.jsonl.gz"
        if not path.is_file():
            return
        self.stat_update("input_bytes", value=path.stat().st_size)
        for record in read_jsonl(path):
            yield Document(text=record["text"], id=record["id"], metadata=record.get("metadata", {}))


def statement_tasks(config: BuildConfig) -> int:
    """Stage 1's tasks: one per dump file, or ``tasks`` when there are fewer files (a multistream file with its
    index is then cut into byte ranges, :func:`~wikiref_dataset.wiki.dump.plan_dump_parts`)."""
    return max(len(config.dumps), config.tasks)


def stage_steps(config: BuildConfig, stage: str) -> tuple[list[PipelineStep], int]:
    """The steps and tasks of one stage."""
    for name, steps, tasks in build_stages(config):
        if name == stage:
            return steps, tasks
    raise ValueError(f"unknown stage {stage!r}; stages: {STAGES}")


def _check_something_was_read(work: Path) -> None:
    """Stage 1 wrote no statement and a dump was damaged: say so, rather than let stage 2 miss its input folder."""
    from ..wiki.dump import damaged_dumps

    if any((work / "statements").glob("*.jsonl.gz")):
        return
    statements = read_stage_stats(work / "logs" / "statements").steps
    counts = {key: value for counter in statements.values() for key, value in counter.items()}
    damaged = damaged_dumps(counts)
    if damaged and not counts.get("pages"):
        raise ValueError(f"nothing could be read: {len(damaged)} damaged dump(s), no page read before the damage: "
                         + "; ".join(damaged))


# ----------------------------------------------------------------------------------------------------------------
# Counts and the run
# ----------------------------------------------------------------------------------------------------------------


def collect_counts(work: Path) -> dict[str, int]:
    """The closing table: raw statements, each loss and drop, the examples after each rule; damaged inputs by file
    (dumps: pages read before the damage; WARC files: truncated and corrupt records skipped)."""
    from ..web.warc import WarcIndex, warc_damage_counts
    from ..wiki.dump import damaged_dumps

    counts: dict[str, int] = {}
    statements = read_stage_stats(work / "logs" / "statements").steps
    counts["raw statements"] = sum(c.get("statements", 0) for c in statements.values())
    damaged = damaged_dumps({key: value for counter in statements.values() for key, value in counter.items()})
    if damaged:
        counts["damaged dump files"] = len(damaged)
        counts |= {f"damaged dump {name}: pages read": pages for name, pages in damaged.items()}
    if (work / "warc_index.sqlite").is_file():
        with WarcIndex(work / "warc_index.sqlite") as index:
            counts |= warc_damage_counts(index.file_stats())
    documents = read_stage_stats(work / "logs" / "documents").steps
    counts |= _document_counts(documents)
    joined = sum(counter.get("index_files", 0)
                 for counter in read_stage_stats(work / "logs" / "index_join").steps.values())
    if joined:
        counts["Common Crawl index files joined (each once)"] = joined
        counts["Common Crawl index files read again (redirects)"] = sum(
            counter.get("cc_index/files_read", 0) for counter in documents.values())
    stats = read_stage_stats(work / "logs" / "statistics").steps
    curated = read_stage_stats(work / "logs" / "curation").steps
    for name, counter in stats.items():
        if "join" in name:
            for key in sorted(counter):
                if key.startswith("missing/"):
                    counts[f"dropped: document {key[8:].replace('_', ' ')}"] = counter[key]
            if counter.get("bad_records"):
                counts["dropped: bad statement records"] = counter["bad_records"]
            counts["examples joined"] = counter.get("examples", 0)
    for stage in (stats, curated):
        for name, counter in stage.items():
            for key in sorted(counter):
                if key.startswith("dropped_"):
                    rule = name.split(": ", 1)[-1].split(" ", 1)[-1]
                    counts[f"dropped by {rule}: {key[8:].replace('_', ' ')}"] = counter[key]
    counts["examples curated"] = sum(c.get("labelled", 0) for c in curated.values())
    return counts


@dataclass
class BuildSummary:
    """What a build produced: the closing table's counts, split sizes, timings and the output folder."""

    output_dir: str
    counts: dict[str, int]
    splits: dict[str, int]
    seconds: dict[str, float]
    empty_reason: str | None = None
    work: str = ""
    waited_s: float | None = None
    """Seconds the documents stage's tasks spent waiting for CDX hosts' intervals (None: no CDX lookups)."""

    def format(self) -> str:
        # a damaged file's row names the file and the error: it overflows the column rather than widening it
        width = max((len(name) for name in self.counts if len(name) <= 48), default=10)
        target = f"nothing published ({self.output_dir} unchanged)" if self.empty_reason else self.output_dir
        lines = [f"WikiRef build -> {target}", ""]
        lines += [f"  {name.ljust(width)}  {value:>9,}" for name, value in self.counts.items()]
        lines.append("")
        if self.seconds:  # a Slurm build's summary is read after its jobs ran: no timings
            lines.append("  time: " + ", ".join(f"{stage} {seconds:.1f}s" for stage, seconds in self.seconds.items()))
        if self.waited_s is not None:
            of = f" of the documents stage's {self.seconds['documents']:.1f}s" if "documents" in self.seconds else ""
            lines.append(f"  waiting: {self.waited_s:.1f}s{of} spent holding CDX lookups to their hosts' intervals "
                         "(summed over tasks)")
        if self.work:
            lines.append(f"  intermediate files: {self.work} (a rerun with the same inputs reuses them; delete when done)")
            lines.append(f"  logs and statistics: {Path(self.work) / 'logs'} (each stage's datatrove task logs and "
                         "stats.json)")
        return "\n".join(lines)


def _document_counts(documents: dict[str, Counter]) -> dict[str, int]:
    """Stage 2's rows of the closing table: cited pages served by each source, and what Common Crawl gave for the
    pages it was asked for (found, not captured, non-200, not HTML, fetch failed, lookup failed)."""
    counts: dict[str, int] = {}
    names = {"warc": "WARC files", "cc": "Common Crawl", "http": "the live web"}
    for counter in documents.values():
        for key in sorted(counter, key=lambda key: (not key.startswith("source/"), key)):
            kind, _, name = key.partition("/")
            if kind == "source":
                counts[f"cited pages from {names.get(name, name)}"] = counter[key]
            elif kind == "cc":
                counts[f"Common Crawl: {name.replace('_', ' ')}"] = counter[key]
        if counter.get("reused"):
            counts["cited pages reused from the documents folder"] = counter["reused"]
    faults: Counter[str] = Counter()
    for counter in documents.values():
        faults.update({key[7:]: value for key, value in counter.items() if key.startswith("faults/")})
        for key, label in (("retried", "cited pages retried (network failures of the last run)"),
                           ("transient", "cited pages failed by the network (the next run retries them)")):
            if counter.get(key):
                counts[label] = counts.get(label, 0) + counter[key]
    counts |= fault_counts(faults)
    return counts


def _document_sources(config: BuildConfig) -> DocumentSources:
    return config.sources


def _source_options(config: BuildConfig) -> dict[str, Any]:
    """Stage 2's options for the sources besides the WARC files (the HTTP cache goes to the work folder)."""
    from ..web.documents import http_config_of_run

    sources = _document_sources(config)
    http_config = http_config_of_run(config.work, sources.http, sources.http_config)
    return {"http_config": http_config, "common_crawl": sources.common_crawl, "reuse_documents": sources.documents}


def _sources_input(config: BuildConfig) -> dict[str, Any]:
    """The sources as stage 2's inputs (a change restarts it); nothing for a WARC-only build, as before."""
    sources = _document_sources(config)
    return {"sources": sources.to_dict()} if sources.any else {}


def _index_warcs(config: BuildConfig) -> None:
    from ..web.warc import WarcIndex

    with WarcIndex(config.work / "warc_index.sqlite") as index:
        index.add_many(config.warcs)


def run_build(config: BuildConfig, progress: bool = True) -> BuildSummary | None:
    """Run every stage (finished tasks are skipped on rerun) and return the closing summary.

    With ``executor="ray"`` each stage's tasks run on the Ray cluster and this call waits for them, stage after stage,
    like the local executor: one call runs the whole build. With ``executor="slurm"`` one call submits the whole
    build, each stage's job waiting on the previous one's (:func:`submit_slurm_chain`), prints the job ids and returns
    ``None``; the same command run again once the jobs finished returns the summary (read from the work folder's
    ``build.json``), and run while they are still queued or running submits nothing.

    Raises:
        OutputFolderError: ``output_dir`` holds something other than a previous WikiRef build (see ``overwrite``).
        FileNotFoundError, ValueError: the columnar index (``sources.common_crawl.cc_index``) names no Parquet
            file, or one that cannot be read.
    """
    check_output_folder(config.output_dir, "wikiref", config.overwrite)
    check_sources(config.sources)  # a bad --cc-index fails now, not after stage 1
    if config.executor == "slurm" and live_slurm_chain(config.work):  # nothing in the work folder may change now
        submit_slurm_chain(config, [], "WikiRef build", progress=progress)  # says the chain still runs; submits none
        return None
    config.work.mkdir(parents=True, exist_ok=True)
    restarted = _check_inputs(config)
    if restarted and progress:
        print(f"inputs changed since the last run in {config.work}: redoing {', '.join(restarted)}", flush=True)
    _index_warcs(config)
    retrying = _retry_transient_failures(config)
    if retrying and progress:
        print(f"retrying {retrying} cited page(s) that failed on the last run because of the network", flush=True)
    _republish_if_missing(config.work, config.output_dir)
    if config.executor == "slurm":
        if not (config.work / "build.json").is_file():
            submit_slurm_chain(config, build_stages(config), "WikiRef build", progress=progress)
            return None
        return _read_summary(config, {})
    seconds: dict[str, float] = {}
    stages = build_stages(config)
    for position, (stage, steps, tasks) in enumerate(stages, start=1):
        if progress:
            print(f"[{position}/{len(stages)}] {stage}: {tasks} task(s), {config.workers} worker(s)", flush=True)
        started = time.perf_counter()
        make_executor(config, stage, steps, tasks).run()  # local and Ray run the stage's tasks and wait for them
        if config.executor == "ray" and not stage_done(config.work, stage, tasks):  # Ray logs failed tasks only
            raise RuntimeError(f"stage {stage!r}: some Ray tasks failed; see {config.work / 'logs' / stage}")
        if stage == "statements":
            _check_something_was_read(config.work)
        seconds[stage] = time.perf_counter() - started
    return _read_summary(config, seconds)


def _read_summary(config: BuildConfig, seconds: dict[str, float]) -> BuildSummary:
    build = json.loads((config.work / "build.json").read_text(encoding="utf-8"))
    documents = read_stage_stats(config.work / "logs" / "documents").steps
    waited = [counter["cdx/waited_ms"] for counter in documents.values() if "cdx/waited_ms" in counter]
    return BuildSummary(config.output_dir, build["counts"], build["splits"], seconds, build.get("empty_reason"),
                        str(config.work), waited_s=sum(waited) / 1000 if waited else None)


def _republish_if_missing(work: Path, output_dir: str) -> None:
    """A finished build whose output folder is gone or holds another build (deleted, or a kill between the two
    renames of publication) redoes its last stage, which publishes it again."""
    record = work / "build.json"
    if not record.is_file():
        return
    build = json.loads(record.read_text(encoding="utf-8"))
    if build.get("build_id") and not is_published(output_dir, build["build_id"]):
        record.unlink()
        for marker in (work / "logs" / "dataset" / "completions").glob("*"):
            marker.unlink()


def _check_inputs(config: BuildConfig) -> list[str]:
    """Restart the stages whose inputs changed since the previous run in this work folder (see
    :func:`restart_changed_stages`)."""
    return restart_changed_stages(config.work, _stage_table(config))


def _retry_transient_failures(config: BuildConfig) -> int:
    """A rerun tries again the cited pages the last run could not get because of the network: their documents
    tasks run again (:func:`~wikiref_dataset.web.documents.reopen_transient_failures`), and every stage after them
    too, so that the published folder takes in what the retry gets. Returns the number of pages retried."""
    from ..web.documents import reopen_transient_failures

    work = config.work
    pages = reopen_transient_failures(work / "documents", work / "logs" / "documents", config.tasks)
    if pages:
        table = _stage_table(config)
        after = [position for position, (name, _, _) in enumerate(table) if name == "documents"][0] + 1
        for name, _, outputs in table[after:]:
            clear_stage(work, name, outputs)
    return pages


def _stage_table(config: BuildConfig) -> list[tuple[str, dict[str, Any], list[str]]]:
    """Each stage's name, inputs and outputs (relative to the work folder), in order (see
    :func:`restart_changed_stages`)."""
    return [
        ("statements", {"dumps": file_identities(config.dumps), "buckets": config.tasks,
                        "statements": config.statements.to_dict()}, ["statements"]),
        ("index_keys", _sources_input(config), ["captures"]),
        ("index_join", {}, []),
        ("documents", {"warcs": file_identities(config.warcs), **_sources_input(config)},
         ["documents", "warc_index.sqlite"]),
        ("statistics", {"curation": config.curation.to_dict()},
         ["examples", "length_stats", "rejects/missing", "rejects/unigram_recall"]),
        ("curation", {}, ["curated", "rejects/length", "rejects/oracle"]),
        ("dataset", {}, ["build.json"]),
    ]


def sample_inputs() -> tuple[list[str], list[str]]:
    """The embedded sample: our own small dump and the WARC of the pages it cites."""
    return [str(SAMPLE_DIR / "samplewiki-20240601-pages-articles.xml")], [str(SAMPLE_DIR / "sample.warc.gz")]


def run_demo_build(out_dir: str | Path, workers: int = 1, progress: bool = True,
                   overwrite: bool = False) -> BuildSummary:
    """Build WikiRef from the embedded sample into ``out_dir``; print and return the closing table."""
    dumps, warcs = sample_inputs()
    summary = run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(out_dir), workers=workers, tasks=2,
                                    overwrite=overwrite), progress=progress)
    if progress:
        print(summary.format())
    return summary


def dataset_hashes(output_dir: str | Path) -> dict[str, str]:
    """sha256 of every Parquet file of a build (the determinism tests compare these)."""
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted((Path(output_dir) / "data").glob("*.parquet"))}

