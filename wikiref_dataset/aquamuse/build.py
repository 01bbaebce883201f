"""The AQuaMuSe build: questions -> answer-sentence embeddings -> corpus matching (datatrove) -> examples -> the two
dataset folders.

Folder layout: ``out/abstractive/`` and ``out/extractive/`` (each a ``load_dataset``-able folder),
``out/build.json`` (inputs, config, counts, timings), ``out/work/answers/`` (kept questions and their sentence
embeddings), ``out/work/matches/`` (the corpus stage's output: matched documents, one ``.jsonl.gz`` per task),
``out/work/logs/corpus/`` (datatrove's completion markers and stats). The corpus stage runs on datatrove's local,
Slurm or Ray executor (the WikiRef build's executor wiring); finished tasks are skipped on rerun.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .matching import MatchingConfig
from .questions import QuestionConfig

__all__ = ["AQuaMuSeBuildConfig", "AQuaMuSeSummary", "build_released_folder", "run_aquamuse"]


@dataclass
class AQuaMuSeBuildConfig:
    """What to build and how.

    Args:
        nq (`list[str]`): Natural Questions files (simplified or original jsonl, or released-format lines).
        corpus (`list[str]`): corpus files (C4/CCNet jsonl, WET, WARC).
        output_dir (`str`): where the two dataset folders go.
        matching (:class:`MatchingConfig`): θL, θU, K, recall. questions (:class:`QuestionConfig`): question filter.
        model (`str`, *optional*): sentence-transformers model directory (default: the packaged MiniLM).
        device (`str`, *optional*): encoder device (default: cuda when available).
        encode_batch_size (`int`): sentences per forward pass. documents_per_batch (`int`): documents matched together.
        exact_below (`int`): answer sets smaller than this get an exact index. nprobe (`int`): IVF lists searched.
        tasks (`int`): corpus tasks (default: one per corpus file). workers (`int`): tasks run at once.
        executor (`str`): ``local``, ``slurm`` or ``ray``. executor_options (`dict`): extra executor arguments.
        seed (`int`), dev_size / test_size (`int`, *optional*): the split.
    """

    nq: list[str]
    corpus: list[str]
    output_dir: str
    matching: MatchingConfig = field(default_factory=MatchingConfig)
    questions: QuestionConfig = field(default_factory=QuestionConfig)
    model: str | None = None
    device: str | None = None
    encode_batch_size: int = 128
    documents_per_batch: int = 256
    exact_below: int = 50_000
    nprobe: int = 16
    tasks: int | None = None
    workers: int = 1
    executor: str = "local"
    executor_options: dict[str, Any] = field(default_factory=dict)
    seed: int = 42
    dev_size: int | None = None
    test_size: int | None = None

    def __post_init__(self) -> None:
        if not self.nq:
            raise ValueError("no Natural Questions file given")
        if not self.corpus:
            raise ValueError("no corpus file given")
        if self.executor not in ("local", "slurm", "ray"):
            raise ValueError(f"executor must be local, slurm or ray, got {self.executor!r}")
        if self.workers < 1 or (self.tasks is not None and self.tasks < 1):
            raise ValueError(f"workers and tasks must be >= 1 (got {self.workers}, {self.tasks})")

    @property
    def work(self) -> Path:
        return Path(self.output_dir) / "work"


@dataclass
class AQuaMuSeSummary:
    """What a build produced: counts, split sizes per variant, statistics, timings, throughput."""

    output_dir: str
    counts: dict[str, int]
    splits: dict[str, dict[str, int]]
    statistics: dict[str, Any]
    seconds: dict[str, float]
    question_errors: list[str] = field(default_factory=list)

    def format(self) -> str:
        width = max(len(name) for name in self.counts) if self.counts else 10
        lines = [f"AQuaMuSe build -> {self.output_dir}", ""]
        lines += [f"  {name.ljust(width)}  {value:>10,}" for name, value in self.counts.items()]
        lines.append("")
        for variant, sizes in self.splits.items():
            lines.append(f"  {variant}: " + ", ".join(f"{split} {size:,}" for split, size in sizes.items())
                         + f"  -> {Path(self.output_dir) / variant}")
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


class _ExecutorSettings:
    """What :func:`wikiref_dataset.pipeline.make_executor` reads from a build config."""

    def __init__(self, config: AQuaMuSeBuildConfig) -> None:
        self.work, self.executor = config.work, config.executor
        self.workers, self.executor_options = config.workers, config.executor_options


def _check_inputs(config: AQuaMuSeBuildConfig) -> None:
    """A rerun into the same folder must use the same inputs, or skipped tasks' outputs would be stale."""
    inputs = {"nq": sorted(str(Path(p).resolve()) for p in config.nq),
              "corpus": sorted(str(Path(p).resolve()) for p in config.corpus), "tasks": config.tasks,
              "matching": config.matching.to_dict(), "questions": asdict(config.questions), "model": config.model}
    record = config.work / "inputs.json"
    if record.is_file() and json.loads(record.read_text(encoding="utf-8")) != json.loads(json.dumps(inputs)):
        raise ValueError(f"{config.output_dir} holds a build with other inputs; use a new folder or delete it")
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(inputs, indent=1, sort_keys=True), encoding="utf-8")


def _stage_counts(work: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    for path in sorted((work / "logs" / "corpus" / "stats").glob("*.json")):
        for step in json.loads(path.read_text(encoding="utf-8")):
            for key, value in step.get("stats", {}).items():
                counts[key] += int(value["total"] if isinstance(value, dict) else value)
    return counts


def run_aquamuse(config: AQuaMuSeBuildConfig, progress: bool = True, encoder: Any = None) -> AQuaMuSeSummary | None:
    """Run the build and return its summary (``None`` after submitting the corpus stage to a cluster: run again
    once it has finished). ``encoder`` replaces the sentence encoder (tests use small ones)."""
    from datatrove.pipeline.writers import JsonlWriter
    from tqdm.auto import tqdm

    from ..pipeline import make_executor, read_jsonl
    from ..text import default_pipeline
    from .dataset import VARIANTS, split_examples, write_aquamuse_folder
    from .embedding import SentenceEncoder
    from .matching import assemble_examples
    from .questions import QuestionReader
    from .steps import (
        CorpusReader,
        MatchAnswerSentences,
        SplitCorpusSentences,
        matched_from_document,
        read_questions_file,
        write_answer_side,
    )

    for path in [*config.nq, *config.corpus]:
        if not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
    work = config.work
    _check_inputs(config)
    seconds: dict[str, float] = {}
    encoder = encoder if encoder is not None else SentenceEncoder(config.model, config.device,
                                                                  config.encode_batch_size)
    answers = work / "answers"
    started = time.perf_counter()
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
    question_log = json.loads((answers / "stats.json").read_text(encoding="utf-8"))
    seconds["questions"] = time.perf_counter() - started

    tasks = config.tasks or len(config.corpus)
    steps = [CorpusReader(config.corpus), SplitCorpusSentences(),
             MatchAnswerSentences(answers, config.matching, encoder, config.documents_per_batch,
                                  {"exact_below": config.exact_below, "nprobe": config.nprobe}),
             JsonlWriter(str(work / "matches"), output_filename="${rank}.jsonl.gz", compression="gzip")]
    if progress:
        print(f"[2/3] corpus: {len(config.corpus)} file(s), {tasks} task(s), {config.workers} worker(s)", flush=True)
    started = time.perf_counter()
    executor = make_executor(_ExecutorSettings(config), "corpus", steps, tasks)  # type: ignore[arg-type]
    executor.run()
    seconds["corpus"] = time.perf_counter() - started
    completions = work / "logs" / "corpus" / "completions"
    if not all((completions / f"{rank:05d}").is_file() for rank in range(tasks)):
        if config.executor != "local":
            if progress:
                print(f"submitted the corpus stage to {config.executor}; run the command again when it finishes")
            return None
        raise RuntimeError(f"corpus stage: some tasks failed; see {work / 'logs' / 'corpus'}")

    if progress:
        print("[3/3] examples: ranking documents, recall filter, splits, dataset folders", flush=True)
    started = time.perf_counter()
    matched = [matched_from_document(record) for path in sorted((work / "matches").glob("*.jsonl.gz"))
               for record in read_jsonl(path)]
    abstractive, extractive, assembly = assemble_examples(questions, matched, config.matching)
    corpus_counts = _stage_counts(work)
    pipeline = default_pipeline()
    splits = {"abstractive": split_examples(abstractive, config.seed, config.dev_size, config.test_size)}
    ids = {example.id: split for split, examples in splits["abstractive"].items() for example in examples}
    splits["extractive"] = {split: [e for e in extractive if ids[e.id] == split] for split in splits["abstractive"]}
    q_stats = question_log["stats"]
    counts = {"NQ lines read": q_stats.get("lines", 0)}
    counts |= {f"NQ dropped: {key[8:].replace('_', ' ')}": value for key, value in sorted(q_stats.items())
               if key.startswith("dropped/")}
    counts |= {"questions kept": len(questions),
               "answer sentences": sum(len(q.answer_sentences) for q in questions),
               "corpus files": corpus_counts.get("files", 0), "corpus documents": corpus_counts.get("documents", 0)}
    counts |= {f"corpus skipped: {key[8:].replace('_', ' ')}": value for key, value in sorted(corpus_counts.items())
               if key.startswith("skipped/")}
    counts |= {"corpus sentences": corpus_counts.get("sentences_split", 0),
               "corpus sentences embedded": corpus_counts.get("sentences_embedded", 0),
               "pairs at or above θU (dropped)": corpus_counts.get("above_theta_upper", 0),
               "sentence matches": corpus_counts.get("sentence_matches", 0),
               "matched documents": corpus_counts.get("matched_documents", 0),
               "questions with a match": assembly.get("questions_with_matches", 0),
               "dropped: summary recall below minimum": assembly.get("dropped/low_recall", 0),
               "examples (each variant)": assembly.get("examples", 0)}
    build = {"nq": [Path(p).name for p in config.nq], "corpus": [Path(p).name for p in config.corpus],
             "config": config.matching.to_dict(), "counts": counts,
             "encoder": getattr(encoder, "description", type(encoder).__name__)}
    statistics = {}
    for variant in VARIANTS:
        statistics[variant] = write_aquamuse_folder(variant, splits[variant], Path(config.output_dir) / variant,
                                                    build, pipeline)
    seconds["examples"] = time.perf_counter() - started
    sizes = {variant: {split: len(examples) for split, examples in splits[variant].items()} for variant in VARIANTS}
    (Path(config.output_dir) / "build.json").write_text(json.dumps(
        {**build, "splits": sizes, "seconds": seconds, "statistics": statistics}, indent=1), encoding="utf-8")
    return AQuaMuSeSummary(config.output_dir, counts, sizes, statistics["abstractive"], seconds,
                           question_log["errors"])


def build_released_folder(files: list[str], output_dir: str | Path, warcs: list[str] | None = None,
                          progress: bool = True) -> dict[str, Any]:
    """The released AQuaMuSe files (TFRecord or decoded jsonl) as an abstractive dataset folder, with the documents
    filled in from ``warcs`` where they were captured. The split comes from the file name (``train``, ``dev`` or
    ``test`` in it; else train). Returns the counts and split sizes."""
    from ..text import default_pipeline
    from ..web.warc import WarcIndex
    from .dataset import write_aquamuse_folder
    from .matching import AQuaMuSeExample
    from .released import fill_documents, read_released

    pipeline = default_pipeline()
    splits: dict[str, list[AQuaMuSeExample]] = {"train": [], "validation": [], "test": []}
    counts: Counter[str] = Counter()
    with WarcIndex(Path(output_dir) / "work" / "warc_index.sqlite" if warcs else None) as index:
        if warcs:
            index.add_many(warcs, progress=progress)
        for file in files:
            name = Path(file).name.lower()
            split = "test" if "test" in name else "validation" if "dev" in name or "valid" in name else "train"
            examples = list(read_released(file))
            counts["examples"] += len(examples)
            counts["urls"] += sum(len(e.documents) for e in examples)
            for status, count in fill_documents(examples, index, pipeline).items():
                counts[f"documents {status.replace('_', ' ')}"] += count
            sentences = pipeline.split_sentences_many(e.target for e in examples)
            for example, target_sentences in zip(examples, sentences, strict=True):
                documents = [{"url": d.url, "text": d.text, "score": 0.0} for d in example.documents]
                splits[split].append(AQuaMuSeExample(example.id, example.query, example.target, target_sentences,
                                                     documents, [], 0.0))
    build = {"nq": [Path(f).name for f in files], "corpus": [Path(w).name for w in warcs or []],
             "counts": dict(counts), "encoder": "n/a (released data)"}
    write_aquamuse_folder("abstractive", splits, output_dir, build, pipeline)
    return {"counts": dict(counts), "splits": {split: len(examples) for split, examples in splits.items()}}
