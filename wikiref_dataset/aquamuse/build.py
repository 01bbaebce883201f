"""The AQuaMuSe build: questions -> answer-sentence embeddings -> corpus matching (datatrove) -> examples -> the two
dataset folders.

Folder layout: ``out/abstractive/`` and ``out/extractive/`` (each a ``load_dataset``-able folder),
``out/build.json`` (inputs, config, counts, timings), published together at the end (:mod:`wikiref_dataset.process.folders`;
a build that keeps no example publishes nothing). The work folder (``--work``, default ``out.work`` beside ``out``)
holds ``answers/`` (kept questions and their sentence embeddings), ``matches/`` (the corpus stage's output: matched
documents, one ``.jsonl.gz`` per task), ``logs/corpus/`` (datatrove's completion markers and stats). The corpus stage runs on datatrove's local,
Slurm or Ray executor (the WikiRef build's executor wiring); finished tasks are skipped on rerun. The examples are
assembled in two passes over ``matches/`` (:class:`~.matching.ExampleAssembly`: candidates' keys, then the chosen
documents' texts through an external sort spilled under ``spill/``) and written to both folders as they come.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import KW_ONLY, asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..process.executors import ExecutorConfig
from ..process.folders import (
    check_output_folder,
    empty_build_reason,
    finish_build,
    publish_folder,
    staging_folder,
    work_folder,
)
from .matching import MatchingConfig
from .questions import Question, QuestionConfig

__all__ = ["AQuaMuSeBuildConfig", "AQuaMuSeSummary", "build_released_folder", "run_aquamuse"]


@dataclass
class AQuaMuSeBuildConfig(ExecutorConfig):
    """What to build and how (the output and executor fields are :class:`~wikiref_dataset.process.executors.ExecutorConfig`'s;
    ``output_dir`` receives the two dataset folders).

    Args:
        nq (`list[str]`): Natural Questions files (simplified or original jsonl, or released-format lines).
        corpus (`list[str]`): corpus files (C4/CCNet jsonl, WET, WARC).
        matching (:class:`MatchingConfig`): θL, θU, K, recall. questions (:class:`QuestionConfig`): question filter.
        model (`str`, *optional*): sentence-transformers model directory (default: the packaged MiniLM).
        device (`str`, *optional*): encoder device (default: cuda when available).
        encode_batch_size (`int`): sentences per forward pass. documents_per_batch (`int`): documents matched together.
        exact_below (`int`): answer sets smaller than this get an exact index. nprobe (`int`): IVF lists searched.
        seed (`int`), dev_size / test_size (`int`, *optional*): the split (``dev_size`` examples go to the split named
            ``validation``).
        tasks (`int`, *optional*): corpus tasks, each searching the answer index with its share of the corpus
            (default: one per corpus file).
        output_dir, work_dir, overwrite, workers, executor, executor_options: see
            :class:`~wikiref_dataset.process.executors.ExecutorConfig`.
    """

    nq: list[str]
    corpus: list[str]
    _: KW_ONLY
    matching: MatchingConfig = field(default_factory=MatchingConfig)
    questions: QuestionConfig = field(default_factory=QuestionConfig)
    model: str | None = None
    device: str | None = None
    encode_batch_size: int = 128
    documents_per_batch: int = 256
    exact_below: int = 50_000
    nprobe: int = 16
    seed: int = 42
    dev_size: int | None = None
    test_size: int | None = None
    tasks: int | None = field(default=None, kw_only=True, metadata={
        "flag": "--tasks", "metavar": "N",
        "help": "corpus tasks, each searching the answer index with its share of the corpus (default: one per "
                "corpus file)"})

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.nq:
            raise ValueError("no Natural Questions file given")
        if not self.corpus:
            raise ValueError("no corpus file given")


@dataclass
class AQuaMuSeSummary:
    """What a build produced: counts, split sizes per variant, statistics, timings, throughput."""

    output_dir: str
    counts: dict[str, int]
    splits: dict[str, dict[str, int]]
    statistics: dict[str, Any]
    seconds: dict[str, float]
    question_errors: list[str] = field(default_factory=list)
    empty_reason: str | None = None
    damaged_files: list[str] = field(default_factory=list)

    def format(self) -> str:
        # a damaged file's row names the file: it overflows the column rather than widening it
        width = max((len(name) for name in self.counts if len(name) <= 48), default=10)
        target = f"nothing published ({self.output_dir} unchanged)" if self.empty_reason else self.output_dir
        lines = [f"AQuaMuSe build -> {target}", ""]
        lines += [f"  {name.ljust(width)}  {value:>10,}" for name, value in self.counts.items()]
        lines.append("")
        for variant, sizes in self.splits.items():
            lines.append(f"  {variant}: " + ", ".join(f"{split} {size:,}" for split, size in sizes.items())
                         + ("" if self.empty_reason else f"  -> {Path(self.output_dir) / variant}"))
        table = self.statistics
        if table and table.get("documents"):
            lines.append(f"  Table 1: {table['queries']:,} queries, summary {table['summary']['words']} words / "
                         f"{table['summary']['sents']} sents, inputs {table['inputs']['words']} words / "
                         f"{table['inputs']['sents']} sents, {table['per_input_doc']['words']} words per document")
        embedded = self.counts.get("corpus sentences embedded", 0)
        matching = self.seconds.get("corpus", 0.0)
        lines.append("  time: " + ", ".join(f"{stage} {seconds:.1f}s" for stage, seconds in self.seconds.items())
                     + (f"; corpus stage {embedded / matching:,.0f} sentences/s" if matching and embedded else ""))
        return "\n".join(lines)


def _check_inputs(config: AQuaMuSeBuildConfig) -> list[str]:
    """Redo the stages whose inputs changed since the previous run in the work folder
    (:func:`wikiref_dataset.mining.stages.restart_changed_stages`): questions, then corpus matching."""
    from ..mining.stages import file_identities, restart_changed_stages

    return restart_changed_stages(config.work, [
        ("questions", {"nq": file_identities(config.nq), "questions": asdict(config.questions),
                       "model": config.model}, ["answers"]),
        ("corpus", {"corpus": file_identities(config.corpus), "tasks": config.tasks,
                    "matching": config.matching.to_dict()}, ["matches"]),
    ])


def run_aquamuse(config: AQuaMuSeBuildConfig, progress: bool = True, encoder: Any = None) -> AQuaMuSeSummary | None:
    """Run the build and return its summary. The questions stage runs here; the corpus stage runs on the executor (the
    local and Ray executors wait for it; with Slurm this call submits it, prints the job id and returns ``None``: the
    same command run again once the job finished assembles the examples here and returns the summary, and run
    while it is still queued or running submits nothing). ``encoder`` replaces the sentence encoder (tests use small
    ones); it travels to the corpus tasks pickled (:class:`~.embedding.SentenceEncoder` as its settings).

    Raises:
        OutputFolderError: ``output_dir`` holds something other than a previous AQuaMuSe build (see ``overwrite``).
    """
    from .embedding import SentenceEncoder

    _check_paths(config)
    restarted = _check_inputs(config)
    if restarted and progress:
        print(f"inputs changed since the last run in {config.work}: redoing {', '.join(restarted)}", flush=True)
    seconds: dict[str, float] = {}
    encoder = encoder if encoder is not None else SentenceEncoder(config.model, config.device,
                                                                  config.encode_batch_size)
    started = time.perf_counter()
    questions, question_log = _question_stage(config, encoder, progress)
    seconds["questions"] = time.perf_counter() - started
    if not _corpus_stage(config, encoder, progress, seconds):
        return None
    return _example_stage(config, encoder, questions, question_log, seconds, progress)


def _check_paths(config: AQuaMuSeBuildConfig) -> None:
    """Every input file exists, and the output folder is empty or holds a previous AQuaMuSe build (or ``overwrite``
    is on): checked before anything is read."""
    for path in [*config.nq, *config.corpus]:
        if not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
    check_output_folder(config.output_dir, "aquamuse", config.overwrite)


def _question_stage(config: AQuaMuSeBuildConfig, encoder: Any,
                    progress: bool) -> tuple[list[Question], dict[str, Any]]:
    """Stage 1, here: the questions the filter keeps and their long answers' sentence embeddings, written to
    ``answers/`` in the work folder (a rerun reuses them). Returns the kept questions and the stage's log (the
    filter's counts under ``stats``, the unreadable lines under ``errors``)."""
    from tqdm.auto import tqdm

    from .questions import QuestionReader
    from .steps import read_questions_file, write_answer_side

    answers = config.work / "answers"
    reader = QuestionReader(config.questions)
    if not (answers / "answer_vectors.npy").is_file():
        if progress:
            print("[1/3] questions: reading and embedding long answers", flush=True)
        bar = tqdm(desc="questions", unit=" kept", disable=not progress)
        questions = []
        for question in reader.read(config.nq):
            questions.append(question)
            bar.update()
        bar.close()
        write_answer_side(questions, encoder.encode([s for q in questions for s in q.answer_sentences]), answers)
        (answers / "stats.json").write_text(json.dumps({"stats": reader.stats, "errors": reader.errors}),
                                            encoding="utf-8")
    questions = read_questions_file(answers / "questions.jsonl")
    return questions, json.loads((answers / "stats.json").read_text(encoding="utf-8"))


def _corpus_steps(config: AQuaMuSeBuildConfig, encoder: Any) -> list[Any]:
    """The corpus stage's datatrove steps: read the corpus, split it into sentences, match them against the answer
    sentences, write the matched documents to ``matches/<rank>.jsonl.gz``."""
    from datatrove.pipeline.writers import JsonlWriter

    from .steps import CorpusReader, MatchAnswerSentences, SplitCorpusSentences

    return [CorpusReader(config.corpus), SplitCorpusSentences(),
            MatchAnswerSentences(config.work / "answers", config.matching, encoder, config.documents_per_batch,
                                 {"exact_below": config.exact_below, "nprobe": config.nprobe}),
            JsonlWriter(str(config.work / "matches"), output_filename="${rank}.jsonl.gz", compression="gzip")]


def _corpus_stage(config: AQuaMuSeBuildConfig, encoder: Any, progress: bool, seconds: dict[str, float]) -> bool:
    """Stage 2, on the executor (finished tasks are skipped): the local and Ray executors run it and its time goes
    to ``seconds``; Slurm gets it submitted unless it already finished. Returns whether it is done (False: submitted,
    the next run goes on).

    Raises:
        RuntimeError: some tasks ended without their completion marker."""
    from ..mining.stages import stage_done
    from ..process.executors import make_executor, submit_slurm_chain

    work = config.work
    tasks = config.tasks or len(config.corpus)
    steps = _corpus_steps(config, encoder)
    if progress:
        print(f"[2/3] corpus: {len(config.corpus)} file(s), {tasks} task(s), {config.workers} worker(s)", flush=True)
    started = time.perf_counter()
    if config.executor == "slurm":
        if not stage_done(work, "corpus", tasks):
            submit_slurm_chain(config, [("corpus", steps, tasks)], "AQuaMuSe corpus stage",
                               afterwards="it assembles the examples here and prints the summary", progress=progress)
            return False
    else:  # the Slurm jobs' time is not this call's: no corpus timing then
        make_executor(config, "corpus", steps, tasks).run()
        seconds["corpus"] = time.perf_counter() - started
    if not stage_done(work, "corpus", tasks):
        raise RuntimeError(f"corpus stage: some tasks failed; see {work / 'logs' / 'corpus'}")
    return True


def _example_stage(config: AQuaMuSeBuildConfig, encoder: Any, questions: list[Question], question_log: dict[str, Any],
                   seconds: dict[str, float], progress: bool) -> AQuaMuSeSummary:
    """Stage 3, here: rank each question's matched documents and keep the examples
    (:class:`~.matching.ExampleAssembly`, two passes over ``matches/``), split them by query, write both variants'
    folders and publish them together (a build that keeps no example publishes nothing and says why). Returns the
    summary."""
    from ..mining.stages import read_jsonl, read_stage_stats
    from ..text import default_pipeline
    from .dataset import VARIANTS, AQuaMuSeFolderWriter, plan_query_splits
    from .matching import ExampleAssembly
    from .steps import matched_from_document

    if progress:
        print("[3/3] examples: ranking documents, recall filter, splits, dataset folders", flush=True)
    work = config.work
    started = time.perf_counter()
    shards = sorted((work / "matches").glob("*.jsonl.gz"))

    def matched() -> Iterator[Any]:  # read twice, in the same order: ranking, then the chosen documents' texts
        return (matched_from_document(record) for path in shards for record in read_jsonl(path))

    examples = ExampleAssembly(questions, config.matching)
    for document in matched():
        examples.rank(document)
    assembly = examples.select()
    split_of = plan_query_splits((kept.question.query for kept in examples.kept), config.seed, config.dev_size,
                                 config.test_size)
    counts = _closing_counts(question_log["stats"], questions, read_stage_stats(work / "logs" / "corpus").totals(),
                             assembly)
    pipeline = default_pipeline()
    build = {"nq": [Path(p).name for p in config.nq], "corpus": [Path(p).name for p in config.corpus],
             "config": config.matching.to_dict(), "counts": counts,
             "encoder": getattr(encoder, "description", type(encoder).__name__)}
    staging = staging_folder(config.output_dir)
    writers = {variant: AQuaMuSeFolderWriter(variant, staging / variant, pipeline) for variant in VARIANTS}
    for _, abstractive, extractive in examples.examples(matched(), spill_dir=work / "spill"):
        split = split_of(abstractive.query)  # both variants get the same split
        writers["abstractive"].add(split, abstractive)
        writers["extractive"].add(split, extractive)
    statistics = {variant: writer.close(build) for variant, writer in writers.items()}
    seconds["examples"] = time.perf_counter() - started
    sizes = {variant: writer.sizes for variant, writer in writers.items()}
    record = {**build, "splits": sizes, "seconds": seconds, "statistics": statistics}
    empty_reason = _empty_reason(counts, len(questions))
    finish_build(staging, config.output_dir, "aquamuse", work, record, empty_reason, config.overwrite)
    return AQuaMuSeSummary(config.output_dir, counts, sizes, statistics["abstractive"], seconds,
                           question_log["errors"], empty_reason)


def _closing_counts(q_stats: dict[str, int], questions: list[Question], corpus_counts: Counter[str],
                    assembly: Counter[str]) -> dict[str, int]:
    """The closing table, in its order: the NQ lines and each drop of the question filter, the kept questions, the
    corpus stage's counters (summed over its tasks and steps; damaged files by name), the matches and the
    examples."""
    counts = {"NQ lines read": q_stats.get("lines", 0)}
    counts |= {f"NQ dropped: {key[8:].replace('_', ' ')}": value for key, value in sorted(q_stats.items())
               if key.startswith("dropped/")}
    counts |= {"questions kept": len(questions),
               "answer sentences": sum(len(q.answer_sentences) for q in questions),
               "corpus files": corpus_counts.get("files", 0), "corpus documents": corpus_counts.get("documents", 0)}
    counts |= {f"corpus skipped: {key[8:].replace('_', ' ')}": value for key, value in sorted(corpus_counts.items())
               if key.startswith("skipped/")}
    counts |= {f"corpus damaged file {key[8:]}": value for key, value in sorted(corpus_counts.items())
               if key.startswith("damaged/")}  # "<file name>: truncated" / "corrupt_record" -> records skipped
    counts |= {"corpus sentences": corpus_counts.get("sentences_split", 0),
               "corpus sentences embedded": corpus_counts.get("sentences_embedded", 0),
               "pairs at or above θU (dropped)": corpus_counts.get("above_theta_upper", 0),
               "sentence matches": corpus_counts.get("sentence_matches", 0),
               "matched documents": corpus_counts.get("matched_documents", 0),
               "questions with a match": assembly.get("questions_with_matches", 0),
               "dropped: summary recall below minimum": assembly.get("dropped/low_recall", 0),
               "examples (each variant)": assembly.get("examples", 0)}
    return counts


def _empty_reason(counts: dict[str, int], questions: int) -> str | None:
    """Why a build kept no example (None when it kept some): the NQ lines read against each loss on the way."""
    if counts["examples (each variant)"]:
        return None
    drops = {name: value for name, value in counts.items() if name.startswith(("NQ dropped", "corpus skipped"))}
    drops["questions without a sentence match"] = questions - counts["questions with a match"]
    drops["dropped: summary recall below minimum"] = counts["dropped: summary recall below minimum"]
    return empty_build_reason(("NQ lines read", counts["NQ lines read"]), drops)


def build_released_folder(files: list[str], output_dir: str | Path, warcs: list[str] | None = None,
                          progress: bool = True, work_dir: str | Path | None = None,
                          overwrite: bool = False) -> AQuaMuSeSummary:
    """The released AQuaMuSe files as the mining build's folders: ``out/abstractive/`` and ``out/extractive/`` (a
    variant with no record is left out) and ``out/build.json``, with the documents filled in from ``warcs`` where
    they were captured. ``files`` are TFRecord shards, their JSON-lines decoding, or folders (the release tree)
    walked for them; split and variant come from the release's folders, each record is kept once per variant, a
    damaged shard keeps the records before the damage (see :mod:`.released`). Returns the summary: the counts, the
    records per variant and split (``splits``) and the damaged files. The folders are published together at the end
    (:mod:`wikiref_dataset.process.folders`); the WARC index lives in the work folder (``work_dir``, default
    ``<output_dir>.work``).

    Raises:
        ValueError: a missing path, a file that is neither a TFRecord shard nor JSON lines, a malformed record.
        OutputFolderError: ``output_dir`` holds something other than a previous AQuaMuSe build (see ``overwrite``).
    """
    from ..text import default_pipeline
    from ..web.warc import WarcIndex, warc_damage_counts
    from .dataset import write_aquamuse_folder
    from .matching import AQuaMuSeExample
    from .released import fill_documents, read_release

    check_output_folder(output_dir, "aquamuse", overwrite)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    release = read_release(files)
    formats = Counter(file.format for file in release.files)
    counts = {"files": len(release.files), "TFRecord shards": formats["tfrecord"],
              "JSON-lines files": formats["jsonl"],
              "files naming no split (read as train)": sum(file.split is None for file in release.files),
              "files naming no variant (read as abstractive)": sum(file.variant is None for file in release.files),
              "records read": release.records_read,
              "duplicate records (skipped)": sum(release.duplicates.values()),
              "damaged files (records before the damage kept)": len(release.damaged)}
    records = {variant: sizes for variant, sizes in release.records.items() if any(sizes.values())}
    if not records:
        raise ValueError(f"no record in {', '.join(map(str, files))}"
                         + (f" ({len(release.damaged)} damaged file(s): {release.damaged[0]})" if release.damaged else ""))
    seconds["read"] = time.perf_counter() - started
    started = time.perf_counter()
    pipeline = default_pipeline()
    documents: Counter[str] = Counter()
    splits: dict[str, dict[str, list[AQuaMuSeExample]]] = {}
    work = work_folder(output_dir, work_dir)
    if warcs:
        work.mkdir(parents=True, exist_ok=True)
    with WarcIndex(work / "warc_index.sqlite" if warcs else None) as index:
        if warcs:
            index.add_many(warcs, progress=progress)
            counts |= warc_damage_counts(index.file_stats())  # "WARC <file name>: truncated" ... -> records skipped
        for variant in records:
            splits[variant] = {}
            for split, examples in release.examples[variant].items():
                documents["urls"] += sum(len(e.documents) for e in examples)
                for status, count in fill_documents(examples, index, pipeline).items():
                    documents[f"documents {status.replace('_', ' ')}"] += count
                sentences = pipeline.split_sentences_many(e.target for e in examples)
                splits[variant][split] = [
                    AQuaMuSeExample(example.id, example.query, example.target, target_sentences,
                                    [{"url": d.url, "text": d.text, "score": 0.0} for d in example.documents], [], 0.0)
                    for example, target_sentences in zip(examples, sentences, strict=True)]
    counts |= documents
    seconds["documents"] = time.perf_counter() - started
    started = time.perf_counter()
    build = {"nq": sorted({"/".join(file.path.parts[-3:]) for file in release.files}),
             "corpus": [Path(w).name for w in warcs or []], "counts": counts, "encoder": "n/a (released data)",
             "duplicates": release.duplicates, "damaged_files": release.damaged}
    staging = staging_folder(output_dir)
    statistics = {variant: write_aquamuse_folder(variant, splits[variant], staging / variant, build, pipeline)
                  for variant in records}
    seconds["examples"] = time.perf_counter() - started
    (staging / "build.json").write_text(json.dumps(
        {**build, "splits": records, "seconds": seconds, "statistics": statistics}, indent=1), encoding="utf-8")
    publish_folder(staging, output_dir, "aquamuse", overwrite)
    return AQuaMuSeSummary(str(output_dir), counts, records, next(iter(statistics.values()), {}), seconds,
                           damaged_files=release.damaged)
