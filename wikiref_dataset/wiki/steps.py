"""Stage 1 of the WikiRef build as datatrove steps: dump files → statement documents → JSONL shards.

:class:`WikiDumpStatements` is a reader step: task ``rank`` of ``world_size`` takes its share of the dumps
(:func:`~wikiref_dataset.wiki.dump.plan_dump_parts`: whole files, or byte ranges of a multistream file with its index;
the plan depends on the files and the number of tasks, never the workers, so a resumed or re-run build writes the
same shards; ``input_bytes`` counts the compressed bytes a task read) and yields one ``Document`` per statement (:meth:`Statement.to_document`). Every counter of
:class:`~wikiref_dataset.wiki.statements.StatementExtractor` goes to datatrove's stats, per page. A dump that breaks
while being read (truncated, corrupt) keeps the statements of the pages read before the damage, is counted under
:func:`~wikiref_dataset.wiki.dump.damaged_dump_stat` (file, error, pages read) and the task goes on with its next file.

:func:`build_statements_pipeline` puts it in front of a ``JsonlWriter`` (``<output_dir>/<rank>.jsonl.gz``) in a
``LocalPipelineExecutor`` whose logs, completion markers and stats go to ``logging_dir`` (default
``<output_dir>/logs``; read the shards with the glob :data:`STATEMENTS_GLOB` so the logs are not taken for data).
:func:`run_statements` runs it and sums the per-task stats files into a :class:`StatementsSummary`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from ..utils.jsonl import iter_json_objects
from .dump import DamagedDumpError, damaged_dump_stat, damaged_dumps, iter_pages, plan_dump_parts
from .statements import Statement, StatementConfig, StatementExtractor

__all__ = [
    "STATEMENTS_GLOB",
    "StatementsSummary",
    "WikiDumpStatements",
    "build_statements_pipeline",
    "iter_statements",
    "read_summary",
    "run_statements",
]

logger = logging.getLogger(__name__)

STATEMENTS_GLOB = "*.jsonl.gz"
"""The statement shards in an output folder (``00000.jsonl.gz`` ...), without the ``logs/`` folder."""


class WikiDumpStatements(PipelineStep):
    """Reads dump files and yields one statement ``Document`` per cited statement.

    Args:
        dumps (`str`, `Path` or a sequence of them): ``pages-articles`` dump files (``.xml``, ``.xml.bz2``,
            multistream ``.xml.bz2``, ``.xml.gz``); task ``rank`` reads its part of
            :func:`~wikiref_dataset.wiki.dump.plan_dump_parts` ``(dumps, world_size)``.
        config (:class:`StatementConfig`, *optional*): extraction settings.
        namespaces (`tuple[int, ...]`): namespaces read (default: articles).
        limit (`int`): stop after this many pages per task (``-1``: no limit), for smoke runs.
        progress (`bool`): show a tqdm bar over pages (for in-process runs).
    """

    name = "📜 WikiRef statements"
    type = "📖 - READER"

    def __init__(
        self,
        dumps: str | Path | Sequence[str | Path],
        config: StatementConfig | None = None,
        namespaces: tuple[int, ...] = (0,),
        limit: int = -1,
        progress: bool = False,
    ):
        super().__init__()
        self.dumps = [str(dumps)] if isinstance(dumps, (str, Path)) else [str(path) for path in dumps]
        if not self.dumps:
            raise ValueError("WikiDumpStatements needs at least one dump file")
        self.config = config if config is not None else StatementConfig()
        self.namespaces = tuple(namespaces)
        self.limit = limit
        self.progress = progress

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        if data:
            yield from data
        parts = plan_dump_parts(self.dumps, world_size)[rank]  # whole files, or multistream byte ranges
        if not parts:
            logger.info("task %d of %d: nothing to read (%d dump files)", rank, world_size, len(self.dumps))
            return
        extractor = StatementExtractor(self.config)
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(desc="extracting", unit=" pages", total=None if self.limit < 0 else self.limit)
        pages = 0
        try:
            for part in parts:
                self.stat_update("dump_files" if part.whole else "dump_ranges")
                self.stat_update("input_bytes", value=part.num_bytes)
                pages_before = pages
                try:
                    for page in iter_pages(part, namespaces=self.namespaces):
                        if 0 <= self.limit <= pages:
                            break
                        with self.track_time("page"):
                            statements = extractor.extract(page)
                        pages += 1
                        for key, value in extractor.page_stats.items():
                            self.stat_update(key, value=value, unit="page")
                        if bar is not None:
                            bar.update()
                            bar.set_postfix(statements=extractor.stats["statements"], refresh=False)
                        for statement in statements:
                            yield statement.to_document()
                except DamagedDumpError as err:  # keep what was read, go on with the next file
                    logger.warning("%s; the %d pages read before the damage are kept", err, pages - pages_before)
                    self.stat_update(damaged_dump_stat(err), value=pages - pages_before)
        finally:
            if bar is not None:
                bar.close()


def build_statements_pipeline(
    dumps: Sequence[str | Path],
    output_dir: str | Path,
    config: StatementConfig | None = None,
    tasks: int | None = None,
    workers: int = 1,
    logging_dir: str | Path | None = None,
    limit: int = -1,
    progress: bool = False,
) -> Any:
    """A ``LocalPipelineExecutor`` for stage 1: :class:`WikiDumpStatements` → ``JsonlWriter``.

    Args:
        dumps: dump files; one task per file by default (``tasks``), tasks take files ``rank::tasks``.
        output_dir: where ``${rank}.jsonl.gz`` shards are written (``00000.jsonl.gz`` ...).
        config: extraction settings (:class:`StatementConfig`).
        tasks: number of tasks (default: the number of dump files; more tasks than files leaves some idle).
        workers: tasks run at once (``1``: in this process, one after the other).
        logging_dir: datatrove's logs, stats and completion markers (default ``<output_dir>/logs``); finished tasks
            are skipped when the pipeline is run again.
        limit: pages per task (``-1``: all).
        progress: tqdm bar over pages (only sensible with ``workers=1``).
    """
    from datatrove.pipeline.writers import JsonlWriter

    from ..process.executors import local_executor  # datatrove's LocalPipelineExecutor, quiet under --quiet

    dumps = [str(path) for path in dumps]
    if not dumps:
        raise ValueError("no dump file given")
    tasks = len(dumps) if tasks is None else tasks
    if tasks < 1 or workers < 1:
        raise ValueError(f"tasks and workers must be >= 1 (got tasks={tasks}, workers={workers})")
    if tasks > len(dumps):
        logger.warning("%d tasks for %d dump files: %d tasks will have nothing to read", tasks, len(dumps),
                       tasks - len(dumps))
    output_dir = Path(output_dir)
    logging_dir = Path(logging_dir) if logging_dir is not None else output_dir / "logs"
    pipeline = [
        WikiDumpStatements(dumps, config=config, limit=limit, progress=progress),
        JsonlWriter(str(output_dir), output_filename="${rank}.jsonl.gz", compression="gzip"),
    ]
    return local_executor(pipeline, tasks=tasks, workers=workers, logging_dir=str(logging_dir))


# ----------------------------------------------------------------------------------------------------------------
# Summary
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class StatementsSummary:
    """What stage 1 did, summed over all finished tasks of an output folder.

    Args:
        output_dir (`str`): the folder of the statement shards.
        tasks (`int`): tasks whose stats were found.
        pages, pages_failed, statements (`int`): pages read, pages that raised, statements written.
        kept (`dict[str, int]`): statements per kept citation type.
        skipped (`dict[str, int]`): cited spans per citation type not kept.
        bare_urls_skipped, named_refs_resolved, refs_unresolved, archive_urls_used (`int`): see the extractor.
        damaged_dumps (`dict[str, int]`): ``"<file name> (<error>)"`` -> pages read before the damage.
        counts (`dict[str, int]`): every counter.
        logging_dir (`str`): datatrove's task logs and statistics (``stats.json``) of the run, named in the summary:
            the console shows them only with ``-v``.
    """

    output_dir: str
    tasks: int = 0
    pages: int = 0
    pages_failed: int = 0
    statements: int = 0
    kept: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    bare_urls_skipped: int = 0
    named_refs_resolved: int = 0
    refs_unresolved: int = 0
    archive_urls_used: int = 0
    damaged_dumps: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    logging_dir: str = ""

    @classmethod
    def from_counts(cls, counts: dict[str, int], output_dir: str | Path, tasks: int) -> StatementsSummary:
        def by_prefix(prefix: str) -> dict[str, int]:
            items = ((key[len(prefix) :], value) for key, value in counts.items() if key.startswith(prefix))
            return dict(sorted(items, key=lambda item: (-item[1], item[0])))

        return cls(
            output_dir=str(output_dir),
            tasks=tasks,
            pages=counts.get("pages", 0),
            pages_failed=counts.get("pages_failed", 0),
            statements=counts.get("statements", 0),
            kept=by_prefix("kept/"),
            skipped=by_prefix("skipped/"),
            bare_urls_skipped=counts.get("bare_urls_skipped", 0),
            named_refs_resolved=counts.get("named_refs_resolved", 0),
            refs_unresolved=counts.get("refs_unresolved", 0),
            archive_urls_used=counts.get("archive_urls_used", 0),
            damaged_dumps=damaged_dumps(counts),
            counts=dict(sorted(counts.items())),
        )

    def format(self, top_skipped: int = 8) -> str:
        """A short human summary."""

        def listing(items: dict[str, int], limit: int | None = None) -> str:
            shown = list(items.items())[:limit] if limit else list(items.items())
            text = ", ".join(f"{name} {count:,}" for name, count in shown)
            rest = len(items) - len(shown)
            if rest > 0:
                text += f", {rest} more types ({sum(list(items.values())[len(shown):]):,})"
            return text or "none"

        lines = [
            f"statements: {self.statements:,} from {self.pages:,} pages"
            + (f" ({self.pages_failed:,} failed)" if self.pages_failed else "")
            + f" in {self.tasks} task{'s' if self.tasks != 1 else ''} -> {self.output_dir}",
            f"  kept by type: {listing(self.kept)}",
            f"  skipped types: {listing(self.skipped, top_skipped)}",
            f"  bare-url refs skipped: {self.bare_urls_skipped:,}; named refs resolved: {self.named_refs_resolved:,},"
            f" unresolved: {self.refs_unresolved:,}; archive urls used: {self.archive_urls_used:,}",
        ]
        inside = self.counts.get("refs_mid_sentence", 0)
        if inside or self.counts.get("sentence_end_after_ref", 0):
            lines.append(f"  sentences: {self.counts.get('sentence_end_after_ref', 0):,} statements took the "
                         f"sentence-final punctuation after their ref; {inside:,} refs stood inside a sentence that "
                         f"goes on, which went whole to its last ref ({self.counts.get('mid_sentence_completed', 0):,}"
                         f" refs got the rest of their sentence, {self.counts.get('refs_inside_later_statement', 0):,}"
                         f" gave no statement of their own)")
        dropped = {key: self.counts.get(key, 0) for key in ("dropped_no_url", "dropped_too_short", "dropped_markup",
                                                            "dropped_unrendered_template", "dropped_lead_in")}
        if any(dropped.values()):
            lines.append("  dropped: " + ", ".join(f"{key[8:].replace('_', ' ')} {value:,}"
                                                   for key, value in dropped.items()))
        for name, pages in self.damaged_dumps.items():
            lines.append(f"  damaged dump: {name}: {pages:,} pages read before the damage, kept")
        if self.logging_dir:
            lines.append(f"  logs and statistics: {self.logging_dir} (datatrove's task logs, stats.json)")
        return "\n".join(lines)


def read_summary(output_dir: str | Path, logging_dir: str | Path | None = None) -> StatementsSummary:
    """Sum the per-task stats files (``<logging_dir>/stats/*.json``) of :class:`WikiDumpStatements`
    (:func:`~wikiref_dataset.mining.stages.read_stage_stats`); an unreadable stats file is named in a warning and
    left out."""
    from ..mining.stages import read_stage_stats

    logging_dir = Path(logging_dir) if logging_dir is not None else Path(output_dir) / "logs"
    stats = read_stage_stats(logging_dir, skip_unreadable=True)
    for path, reason in stats.unreadable:
        logger.warning("%s: unreadable stats file (%s)", path, reason)
    step_name = f"{WikiDumpStatements.type}: {WikiDumpStatements.name}"
    summary = StatementsSummary.from_counts(dict(stats.step(step_name)), output_dir, stats.tasks[step_name])
    summary.logging_dir = str(logging_dir)
    return summary


def run_statements(
    dumps: Sequence[str | Path] | str | Path,
    output_dir: str | Path,
    config: StatementConfig | None = None,
    tasks: int | None = None,
    workers: int = 1,
    logging_dir: str | Path | None = None,
    limit: int = -1,
    progress: bool = False,
) -> StatementsSummary:
    """Run stage 1 (see :func:`build_statements_pipeline`) and return the summary of the output folder."""
    dumps = [dumps] if isinstance(dumps, (str, Path)) else list(dumps)
    executor = build_statements_pipeline(dumps, output_dir, config=config, tasks=tasks, workers=workers,
                                         logging_dir=logging_dir, limit=limit, progress=progress)
    executor.run()
    return read_summary(output_dir, logging_dir)


def iter_statements(output_dir: str | Path) -> Iterator[Statement]:
    """The statements of an output folder, shard by shard (``00000.jsonl.gz`` ...)."""
    from datatrove.data import Document

    for path in sorted(Path(output_dir).glob(STATEMENTS_GLOB)):
        for line_number, record in iter_json_objects(path):
            try:
                document = Document(text=record.get("text", ""), id=record["id"], metadata=record.get("metadata", {}))
            except (KeyError, TypeError) as err:
                raise ValueError(f"{path}:{line_number}: not a statement record ({err})") from err
            yield Statement.from_document(document)
