"""The WikiRef build as datatrove stages: statements -> documents -> curation statistics -> filters/labels ->
split + Parquet.

Folder layout under the work folder (``--work``, default ``<out>.work`` beside the output folder):
``statements/<bucket>/<task>.jsonl.gz`` (stage 1: tasks take whole dump files, or byte ranges of a multistream file
with its index; each writes one file per bucket of the cited URL, ``shards`` buckets), ``documents/`` and ``failed/``
(stage 2: task k reads bucket k's statements and fetches those URLs), ``examples/`` + ``length_stats/`` (stage 3:
task k joins bucket k's statements and documents, then measure, rule 1,
exact per-task length values), ``curated/`` (stage 4: rules 2-3 and labels), ``rejects/`` (every dropped or bad
record with its reason), ``logs/<stage>/`` (datatrove's completion markers and stats), ``build.json`` (the closing
counts). Stage 5 (one task) sorts by id, splits, writes the folder (``data/*.parquet`` + card) under a staging
folder and publishes it as ``out`` in one rename (:mod:`wikiref_dataset.folders`): ``out`` holds the previous
complete build or this one, never a partial one; a build that keeps no example publishes nothing.

Determinism: every stage's sharding depends on ``shards`` (fixed by the config), never on ``workers``; stage 3
buckets examples by the cited URL's hash; stage 5 sorts by id. Resumability: datatrove skips tasks with a
completion marker and a rerun task overwrites its own files, so a killed build rerun gives the same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from .curation import (
    CurationConfig,
    Example,
    LengthFilter,
    LengthStatistics,
    OracleFilter,
    OracleLabeler,
    UnigramRecallFilter,
    assign_splits,
    measure_examples,
)  # fmt: skip
from .folders import (
    check_output_folder,
    empty_build_reason,
    finish_build,
    is_published,
    staging_folder,
    work_folder,
)
from .jsonl import iter_json_objects
from .text import TextPipeline
from .web.documents import BucketByCitedUrl
from .web.urls import url_key
from .wiki.statements import Statement

__all__ = ["BuildConfig", "BuildSummary", "CurationExamples", "WriteDataset", "build_stages", "run_build",
           "run_demo_build", "make_executor", "read_jsonl", "stage_stats", "stage_done", "file_identities",
           "restart_changed_stages", "connect_ray", "submit_slurm_chain", "default_slurm_partition"]

logger = logging.getLogger(__name__)

SAMPLE_DIR = Path(__file__).resolve().parent / "data" / "sample" / "wikiref"
STAGES = ("statements", "documents", "statistics", "curation", "dataset")


@dataclass
class BuildConfig:
    """What to build and how.

    Args:
        dumps (`list[str]`): ``pages-articles`` dump files. warcs (`list[str]`): WARC files with the cited pages.
        output_dir (`str`): the dataset folder (``data/``, ``README.md``, ``figures/``, ``build.json``).
        workers (`int`): tasks run at once. shards (`int`): tasks of stages 2-4 (fixes the output, not workers).
        executor (`str`): ``local`` (default), ``slurm`` or ``ray``. executor_options (`dict`): extra arguments
            of the cluster executor (e.g. ``{"partition": "cpu", "time": "12:00:00"}`` for Slurm).
        curation (:class:`CurationConfig`): filters, labels, split.
        work_dir (`str`, *optional*): intermediate, resumable state (default ``<output_dir>.work``).
        overwrite (`bool`): write into an output folder that holds something other than a previous WikiRef build
            (files the project did not write are kept).
    """

    dumps: list[str]
    warcs: list[str]
    output_dir: str
    workers: int = 1
    shards: int = 4
    executor: str = "local"
    executor_options: dict[str, Any] = field(default_factory=dict)
    curation: CurationConfig = field(default_factory=CurationConfig)
    work_dir: str | None = None
    overwrite: bool = False

    def __post_init__(self) -> None:
        if self.workers < 1 or self.shards < 1:
            raise ValueError(f"workers and shards must be >= 1 (got {self.workers}, {self.shards})")
        if self.executor not in ("local", "slurm", "ray"):
            raise ValueError(f"executor must be local, slurm or ray, got {self.executor!r}")
        if not self.dumps:
            raise ValueError("no dump file given")

    @property
    def work(self) -> Path:
        return work_folder(self.output_dir, self.work_dir)


def read_jsonl(path: Path, bad: list[str] | None = None) -> list[dict]:
    """The JSON objects of a (gzipped) JSON-lines file; unreadable lines are skipped and described in ``bad``."""
    def note(location: str, reason: str) -> None:
        if bad is not None:
            bad.append(f"{location}: {reason}")

    return [record for _, record in iter_json_objects(path, on_error=note)]


class CurationExamples(PipelineStep):
    """Stage 3's reader: joins this task's bucket of statements (by cited URL) with their documents.

    Task k reads only bucket k: ``statements/<k>/*.jsonl.gz`` (every stage-1 task's file of that bucket) and
    ``documents/<k>.jsonl.gz`` + ``failed/<k>.jsonl.gz`` (stage-2 task k fetched exactly that bucket); ``input_bytes``
    counts what it read. Statements whose page is missing or failed are dropped, counted ``missing/<status>`` and
    written to ``rejects_dir``; unreadable records are counted ``bad_records``. Yields :class:`Example` documents
    sorted by id.
    """

    name = "🔗 join statements + documents"
    type = "📖 - READER"

    def __init__(self, statements_dir: str, documents_dir: str, rejects_dir: str) -> None:
        super().__init__()
        self.statements_dir, self.documents_dir, self.rejects_dir = statements_dir, documents_dir, rejects_dir

    def _files(self, paths: list[Path]) -> list[Path]:
        present = [path for path in paths if path.is_file()]
        for path in present:
            self.stat_update("input_bytes", value=path.stat().st_size)
        return present

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from .web.documents import CitedDocument

        by_statement: dict[str, CitedDocument] = {}
        rejects: list[dict] = []
        bad_lines: list[str] = []
        documents = [Path(self.documents_dir) / folder / f"{rank:05d}.jsonl.gz" for folder in ("documents", "failed")]
        for path in self._files(documents):
            for record in read_jsonl(path, bad_lines):
                try:
                    cited = CitedDocument.from_document(record)
                except (TypeError, ValueError) as err:
                    bad_lines.append(f"{path}: document {record.get('id')!r}: {err}")
                    continue
                for statement_id in cited.statement_ids:
                    by_statement[statement_id] = cited
        examples: list[Example] = []
        for path in self._files(sorted((Path(self.statements_dir) / f"{rank:05d}").glob("*.jsonl.gz"))):
            for record in read_jsonl(path, bad_lines):
                try:
                    statement = Statement.from_document(Document(text=record.get("text", ""), id=record["id"],
                                                                 metadata=record.get("metadata", {})))
                except (KeyError, ValueError, TypeError) as err:
                    self.stat_update("bad_records")
                    rejects.append({"id": record.get("id"), "reason": "bad_record", "detail": str(err)})
                    continue
                fetch_url = statement.citation.fetch_url or statement.citation.url or ""
                self.stat_update("statements")
                cited = by_statement.get(statement.id)
                if cited is None or cited.status != "ok":
                    reason = f"missing/{cited.status if cited is not None else 'no_document'}"
                    self.stat_update(reason)
                    rejects.append({"id": statement.id, "reason": reason, "url": fetch_url})
                    continue
                try:
                    examples.append(_example(statement, cited))
                except (TypeError, ValueError, AttributeError) as err:
                    self.stat_update("bad_records")
                    rejects.append({"id": statement.id, "reason": "bad_record", "detail": str(err)})
        for detail in bad_lines:
            self.stat_update("bad_records")
            rejects.append({"id": None, "reason": "bad_record", "detail": detail})
        self._write_rejects(rejects, rank)
        examples.sort(key=lambda e: e.id)
        for example in examples:
            self.stat_update("examples")
            yield example.to_document()

    def _write_rejects(self, rejects: list[dict], rank: int) -> None:
        folder = Path(self.rejects_dir)
        folder.mkdir(parents=True, exist_ok=True)
        with gzip.open(folder / f"{rank:05d}.jsonl.gz", "wt", encoding="utf-8") as handle:
            for reject in rejects:
                handle.write(json.dumps(reject, sort_keys=True) + "\n")


def _example(statement: Statement, cited: Any) -> Example:
    citation = statement.citation
    title = (cited.title or "").strip()
    sentences = [s for s in cited.sentences if s.strip()]
    try:
        key = url_key(cited.normalized_url)
    except ValueError:
        key = cited.normalized_url
    return Example(
        id=statement.id, query=statement.query_levels, document_title=title,
        document=([title] if title and (not sentences or sentences[0] != title) else []) + sentences,
        summary=statement.text, url=citation.url or "",
        archive_url=citation.archive_url or "", citation_type=citation.type or "",
        wiki_page_id=statement.page_id, wiki_revision_id=statement.revision_id, wiki_title=statement.page_title,
        section_path=list(statement.section_path), url_key=key, wiki_timestamp=statement.timestamp,
    )


class MeasureExamples(PipelineStep):
    """Lengths and unigram recall of every example (:func:`~wikiref_dataset.curation.measure_examples`)."""

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
    """Stage 5 (one task): read the curated shards, split, write Parquet + card + ``build.json``."""

    name = "💾 split + Parquet"
    type = "💽 - WRITER"

    def __init__(self, config: BuildConfig) -> None:
        super().__init__()
        self.config = config

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from .builder import write_dataset_folder

        work = self.config.work
        examples = [Example.from_document(record) for path in sorted((work / "curated").glob("*.jsonl.gz"))
                    for record in read_jsonl(path)]
        splits = assign_splits(examples, self.config.curation)
        counts = collect_counts(work)
        counts.update({f"split {name}": len(values) for name, values in splits.items()})
        build = {"dumps": [Path(d).name for d in self.config.dumps], "warcs": [Path(w).name for w in self.config.warcs],
                 "latest_revision": max((e.wiki_timestamp for e in examples), default=""),
                 "config": self.config.curation.to_dict(), "counts": counts}
        staging = staging_folder(self.config.output_dir)
        sizes = write_dataset_folder(splits, staging, build)
        build["splits"] = sizes
        empty = None if sum(sizes.values()) else empty_build_reason(
            ("raw statements", counts.get("raw statements", 0)),
            {k: v for k, v in counts.items() if k.startswith("dropped")})
        finish_build(staging, self.config.output_dir, "wikiref", work, build, empty, self.config.overwrite)
        self.stat_update("examples", value=sum(sizes.values()))
        return
        yield


def build_stages(config: BuildConfig) -> list[tuple[str, list[PipelineStep], int]]:
    """The five stages as (name, datatrove steps, tasks). Every step lists its input files when it runs, not when it
    is built, so all five can be built (and submitted to a cluster) before stage 1 has run."""
    from datatrove.pipeline.writers import JsonlWriter

    from .web.documents import documents_pipeline
    from .wiki.steps import WikiDumpStatements

    work = config.work
    rejects = work / "rejects"
    curation = config.curation
    jsonl = dict(output_filename="${rank}.jsonl.gz", compression="gzip")
    return [
        ("statements", [WikiDumpStatements(config.dumps), BucketByCitedUrl(config.shards),
                        JsonlWriter(str(work / "statements"), output_filename="${url_bucket}/${rank}.jsonl.gz",
                                    compression="gzip")], statement_tasks(config)),
        ("documents", documents_pipeline([str(work / "statements")], work / "documents",
                                         warc_index=work / "warc_index.sqlite", bucketed=True), config.shards),
        ("statistics", [
            CurationExamples(str(work / "statements"), str(work / "documents"), str(rejects / "missing")),
            MeasureExamples(curation),
            UnigramRecallFilter(curation.min_unigram_recall,
                                exclusion_writer=JsonlWriter(str(rejects / "unigram_recall"), **jsonl)),
            LengthStatistics(work / "length_stats"),
            JsonlWriter(str(work / "examples"), **jsonl),
        ], config.shards),
        ("curation", [
            _ShardReader(str(work / "examples")),
            LengthFilter(work / "length_stats", curation,
                         exclusion_writer=JsonlWriter(str(rejects / "length"), **jsonl)),
            OracleFilter(curation.min_oracle_score, curation.oracle_max_sentences,
                         exclusion_writer=JsonlWriter(str(rejects / "oracle"), **jsonl)),
            OracleLabeler(),
            JsonlWriter(str(work / "curated"), **jsonl),
        ], config.shards),
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
        for record in read_jsonl(path):
            yield Document(text=record["text"], id=record["id"], metadata=record.get("metadata", {}))


def statement_tasks(config: BuildConfig) -> int:
    """Stage 1's tasks: one per dump file, or ``shards`` when there are fewer files (a multistream file with its
    index is then cut into byte ranges, :func:`~wikiref_dataset.wiki.dump.plan_dump_parts`)."""
    return max(len(config.dumps), config.shards)


def stage_steps(config: BuildConfig, stage: str) -> tuple[list[PipelineStep], int]:
    """The steps and tasks of one stage."""
    for name, steps, tasks in build_stages(config):
        if name == stage:
            return steps, tasks
    raise ValueError(f"unknown stage {stage!r}; stages: {STAGES}")


def _check_something_was_read(work: Path) -> None:
    """Stage 1 wrote no statement and a dump was damaged: say so, rather than let stage 2 miss its input folder."""
    from .wiki.dump import damaged_dumps

    if any((work / "statements").glob("*.jsonl.gz")):
        return
    counts = {key: value for counter in stage_stats(work, "statements").values() for key, value in counter.items()}
    damaged = damaged_dumps(counts)
    if damaged and not counts.get("pages"):
        raise ValueError(f"nothing could be read: {len(damaged)} damaged dump(s), no page read before the damage: "
                         + "; ".join(damaged))


def connect_ray(address: str | None = None) -> None:
    """Join a Ray cluster unless this process already has: ``address`` (``host:port`` of its head), else
    ``RAY_ADDRESS``, else the cluster ``ray start`` started on this machine, else a new one local to this process
    (Ray's own order of :func:`ray.init`)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address)


def make_executor(config: BuildConfig, stage: str, steps: list[PipelineStep], tasks: int, depends: Any = None) -> Any:
    """The datatrove executor of one stage (``config.executor``: local, slurm or ray), logging under
    ``config.work/logs/stage`` (also used by the PSG2SUM and AQuaMuSe builds, whose configs carry the same fields).
    A Ray executor joins the cluster named by the option ``address`` (see :func:`connect_ray`); its ``run()`` waits for
    the stage's tasks. A Slurm executor's ``run()`` submits one array job (``tasks`` tasks, at most ``workers`` at
    once) after those of ``depends``, and returns: see :func:`submit_slurm_chain`."""
    logging_dir = str(config.work / "logs" / stage)
    if config.executor == "slurm":
        from datatrove.executor import SlurmPipelineExecutor

        options = dict(config.executor_options)
        options["job_name"] = f"{options.get('job_name', 'wikiref')}-{stage}"  # a prefix: one job name per stage
        options.setdefault("time", "24:00:00")
        if "partition" not in options:
            options["partition"] = default_slurm_partition()
        if not {"env_command", "condaenv", "venv_path"} & options.keys():
            # the job script calls datatrove's console scripts by name: those of this Python, activated or not
            options["env_command"] = f"export PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH"
        return SlurmPipelineExecutor(steps, tasks=tasks, workers=config.workers, logging_dir=logging_dir,
                                     depends=depends, **options)
    if config.executor == "ray":
        from datatrove.executor import RayPipelineExecutor

        options = dict(config.executor_options)
        connect_ray(options.pop("address", None))
        return RayPipelineExecutor(steps, tasks=tasks, workers=config.workers, logging_dir=logging_dir,
                                   depends=depends, **options)
    from datatrove.executor import LocalPipelineExecutor

    return LocalPipelineExecutor(steps, tasks=tasks, workers=min(config.workers, tasks), logging_dir=logging_dir,
                                 depends=depends)


# ----------------------------------------------------------------------------------------------------------------
# Slurm: a whole build in one submission
# ----------------------------------------------------------------------------------------------------------------

SLURM_JOBS = "slurm_jobs.json"  # in the work folder: {stage: job id} of the last submission


def default_slurm_partition() -> str:
    """The partition ``sbatch`` picks when none is named (``sinfo`` marks it with ``*``)."""
    try:
        listing = subprocess.run(["sinfo", "-h", "-o", "%P"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise ValueError(f"cannot reach the Slurm cluster (sinfo: {getattr(err, 'stderr', None) or err})") from err
    for name in listing.split():
        if name.endswith("*"):
            return name[:-1]
    raise ValueError("the Slurm cluster has no default partition: name one, e.g. --executor-options "
                     "'{\"partition\": \"cpu\"}'")


def _slurm_queue() -> list[tuple[str, str, str]]:
    """(job id, Slurm's reason, its dependencies) of every queued or running job (array tasks share the id)."""
    try:
        listing = subprocess.run(["squeue", "-h", "-o", "%F|%r|%E"], capture_output=True, text=True,
                                 check=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise ValueError(f"cannot reach the Slurm cluster (squeue: {getattr(err, 'stderr', None) or err})") from err
    return [tuple(line.split("|", 2)) for line in listing.splitlines() if line.count("|") >= 2]  # type: ignore[misc]


def submit_slurm_chain(config: Any, stages: Sequence[tuple[str, list[PipelineStep], int]], build: str,
                       afterwards: str = "it prints the summary", progress: bool = True) -> dict[str, str]:
    """Submit a build's stages to Slurm in one go; returns {stage: job id} of the jobs queued for it.

    Each stage is one array job (:func:`make_executor`) whose tasks start once the previous stage's job has succeeded
    (``--dependency=afterok``), so the chain runs to its end unattended; a stage whose tasks all finished is not
    submitted. datatrove also submits a small ``merge_stats`` job after each stage. The ids are recorded in
    ``config.work/slurm_jobs.json``. While jobs of the previous submission (or jobs waiting on them) are queued or
    running, nothing is submitted: the same tasks would run twice. Jobs waiting on a failed one (Slurm's reason
    ``DependencyNeverSatisfied``) can never start: they are cancelled and the unfinished tasks submitted again.
    ``config`` carries ``work``, ``executor_options`` and ``workers``, as for :func:`make_executor`.
    """
    work = Path(config.work)
    record = work / SLURM_JOBS
    previous = set(json.loads(record.read_text(encoding="utf-8")).values()) if record.is_file() else set()
    ours = {job: reason for job, reason, depends in (_slurm_queue() if previous else [])
            if job in previous or previous & set(re.findall(r"\d+", depends))}
    if any(reason != "DependencyNeverSatisfied" for reason in ours.values()):
        if progress:
            print(f"the {build}'s Slurm jobs are still queued or running (squeue -j {','.join(sorted(ours, key=int))}): "
                  f"nothing submitted; run the same command again once they finished", flush=True)
        return json.loads(record.read_text(encoding="utf-8"))
    if ours:  # what is left of a chain that broke: a task failed (its logs say why)
        subprocess.run(["scancel", *sorted(ours, key=int)], check=True)
    chain, depends = [], None
    for stage, steps, tasks in stages:
        depends = make_executor(config, stage, steps, tasks, depends)
        chain.append((stage, tasks, depends))
    try:
        depends.run()  # submits the stages it depends on first, each with afterok on the one before
    except subprocess.CalledProcessError as err:
        raise RuntimeError(f"sbatch failed ({err}); see its message above") from err
    jobs = {stage: str(executor.job_id) for stage, _, executor in chain if executor.job_id not in (None, -1)}
    record.write_text(json.dumps(jobs, indent=1), encoding="utf-8")
    if progress and not jobs:
        print(f"the {build}'s stages have all finished: nothing to submit", flush=True)
    elif progress:
        lines = [f"submitted the {build} to Slurm, one array job per stage, each started once the one before it "
                 "succeeded (afterok):"]
        after = ""
        for stage, tasks, _ in chain:
            if stage in jobs:
                lines.append(f"  {stage:<11} job {jobs[stage]:>8}  {tasks} task(s){after}")
                after = f", after job {jobs[stage]}"
        lines += [f"  logs: {work / 'logs'}/<stage>/slurm_logs/ (Slurm's, one file per task) and .../logs/ "
                  "(datatrove's)",
                  f"  run the same command again once they finished (squeue -j {','.join(jobs.values())}): "
                  f"{afterwards}"]
        print("\n".join(lines), flush=True)
    return jobs


# ----------------------------------------------------------------------------------------------------------------
# Counts and the run
# ----------------------------------------------------------------------------------------------------------------


def stage_stats(work: Path, stage: str) -> dict[str, Counter]:
    """Per step name, the summed counters of a stage's finished tasks."""
    steps: dict[str, Counter] = {}
    for path in sorted((work / "logs" / stage / "stats").glob("*.json")):
        for step in json.loads(path.read_text(encoding="utf-8")):
            counter = steps.setdefault(step["name"], Counter())
            for key, value in step.get("stats", {}).items():
                counter[key] += int(value["total"] if isinstance(value, dict) else value)
    return steps


def collect_counts(work: Path) -> dict[str, int]:
    """The closing table: raw statements, each loss and drop, the examples after each rule; damaged inputs by file
    (dumps: pages read before the damage; WARC files: truncated and corrupt records skipped)."""
    from .web.warc import WarcIndex, warc_damage_counts
    from .wiki.dump import damaged_dumps

    counts: dict[str, int] = {}
    statements = stage_stats(work, "statements")
    counts["raw statements"] = sum(c.get("statements", 0) for c in statements.values())
    damaged = damaged_dumps({key: value for counter in statements.values() for key, value in counter.items()})
    if damaged:
        counts["damaged dump files"] = len(damaged)
        counts |= {f"damaged dump {name}: pages read": pages for name, pages in damaged.items()}
    if (work / "warc_index.sqlite").is_file():
        with WarcIndex(work / "warc_index.sqlite") as index:
            counts |= warc_damage_counts(index.file_stats())
    stats = stage_stats(work, "statistics")
    curated = stage_stats(work, "curation")
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

    def format(self) -> str:
        # a damaged file's row names the file and the error: it overflows the column rather than widening it
        width = max((len(name) for name in self.counts if len(name) <= 48), default=10)
        target = f"nothing published ({self.output_dir} unchanged)" if self.empty_reason else self.output_dir
        lines = [f"WikiRef build -> {target}", ""]
        lines += [f"  {name.ljust(width)}  {value:>9,}" for name, value in self.counts.items()]
        lines.append("")
        if self.seconds:  # a Slurm build's summary is read after its jobs ran: no timings
            lines.append("  time: " + ", ".join(f"{stage} {seconds:.1f}s" for stage, seconds in self.seconds.items()))
        if self.work:
            lines.append(f"  intermediate files: {self.work} (a rerun with the same inputs reuses them; delete when done)")
        return "\n".join(lines)


def _index_warcs(config: BuildConfig) -> None:
    from .web.warc import WarcIndex

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
    """
    check_output_folder(config.output_dir, "wikiref", config.overwrite)
    config.work.mkdir(parents=True, exist_ok=True)
    restarted = _check_inputs(config)
    if restarted and progress:
        print(f"inputs changed since the last run in {config.work}: redoing {', '.join(restarted)}", flush=True)
    _index_warcs(config)
    _republish_if_missing(config.work, config.output_dir)
    if config.executor == "slurm":
        if not (config.work / "build.json").is_file():
            submit_slurm_chain(config, build_stages(config), "WikiRef build", progress=progress)
            return None
        return _read_summary(config, {})
    seconds: dict[str, float] = {}
    for position, stage in enumerate(STAGES, start=1):
        steps, tasks = stage_steps(config, stage)
        if progress:
            print(f"[{position}/{len(STAGES)}] {stage}: {tasks} task(s), {config.workers} worker(s)", flush=True)
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
    return BuildSummary(config.output_dir, build["counts"], build["splits"], seconds, build.get("empty_reason"),
                        str(config.work))


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


def file_identities(paths: Sequence[str | Path]) -> list[list[Any]]:
    """``[resolved path, size, mtime_ns]`` of each input file, sorted: a file replaced in place is another input."""
    identities = []
    for path in paths:
        resolved = Path(path).resolve()
        try:
            info = resolved.stat()
            identities.append([str(resolved), info.st_size, info.st_mtime_ns])
        except OSError:
            identities.append([str(resolved), None, None])
    return sorted(identities, key=lambda item: item[0])


def restart_changed_stages(work: Path, stages: Sequence[tuple[str, dict[str, Any], Sequence[str]]]) -> list[str]:
    """Make a rerun with other inputs start over where they matter, instead of reusing stale outputs.

    ``stages`` lists, in order, each stage's name, its inputs (its options and the files it reads) and its outputs
    (paths relative to ``work``). From the first stage whose inputs differ from those ``work/inputs.json`` recorded on
    the previous run, every stage's outputs, logs and completion markers are deleted, so those stages run again;
    earlier stages are reused. Returns the stages restarted (empty for a new work folder)."""
    record = work / "inputs.json"
    try:
        previous = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else None
    except ValueError:
        previous = {}
    current = {name: json.loads(json.dumps(inputs, default=str)) for name, inputs, _ in stages}
    restarted: list[str] = []
    changed = False
    for name, _, outputs in stages:
        changed = changed or not isinstance(previous, dict) or previous.get(name) != current[name]
        if changed and previous is not None:
            for relative in [*outputs, f"logs/{name}"]:
                target = work / relative
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink(missing_ok=True)
            restarted.append(name)
    work.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(current, indent=1, sort_keys=True), encoding="utf-8")
    return restarted


def _check_inputs(config: BuildConfig) -> list[str]:
    """Restart the stages whose inputs changed since the previous run in this work folder (see
    :func:`restart_changed_stages`)."""
    return restart_changed_stages(config.work, [
        ("statements", {"dumps": file_identities(config.dumps), "buckets": config.shards}, ["statements"]),
        ("documents", {"warcs": file_identities(config.warcs)}, ["documents", "warc_index.sqlite"]),
        ("statistics", {"curation": config.curation.to_dict()},
         ["examples", "length_stats", "rejects/missing", "rejects/unigram_recall"]),
        ("curation", {}, ["curated", "rejects/length", "rejects/oracle"]),
        ("dataset", {}, ["build.json"]),
    ])


def sample_inputs() -> tuple[list[str], list[str]]:
    """The embedded sample: our own small dump and the WARC of the pages it cites."""
    return [str(SAMPLE_DIR / "samplewiki-20240601-pages-articles.xml")], [str(SAMPLE_DIR / "sample.warc.gz")]


def run_demo_build(out_dir: str | Path, workers: int = 1, progress: bool = True,
                   overwrite: bool = False) -> BuildSummary:
    """Build WikiRef from the embedded sample into ``out_dir``; print and return the closing table."""
    dumps, warcs = sample_inputs()
    summary = run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(out_dir), workers=workers, shards=2,
                                    overwrite=overwrite), progress=progress)
    if progress:
        print(summary.format())
    return summary


def dataset_hashes(output_dir: str | Path) -> dict[str, str]:
    """sha256 of every Parquet file of a build (the determinism tests compare these)."""
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted((Path(output_dir) / "data").glob("*.parquet"))}


def stage_done(work: str | Path, stage: str, tasks: int) -> bool:
    """Whether all ``tasks`` tasks of ``stage`` left their completion marker under the ``work`` folder."""
    completions = Path(work) / "logs" / stage / "completions"
    return all((completions / f"{rank:05d}").is_file() for rank in range(tasks))
