"""The AQuaMuSe dataset folders: query-disjoint splits, Parquet shards, statistics (Table 1-2 of Kulkarni et al., 2020), the
coverage/density plot (Figure 2) and a card.

Each variant (``abstractive``, ``extractive``) is its own folder shaped as the WikiRef and PSG2SUM ones: written by
the same deterministic Parquet writer, with a ``README.md`` whose ``configs:`` block makes
``datasets.load_dataset(folder)`` load its splits (empty splits are left out: ``datasets`` cannot load them). The
split is the project's hashing split (:func:`wikiref_dataset.mining.splits.assign_group_splits`) grouped by the
normalised query, so no query is in two splits (the paper split by a hash of the long answer); both variants get the
same split. Dev and test scale from the paper's 440 and 524 of 5,519 examples. The split needs only the queries of
the kept examples (:func:`plan_query_splits`), so the build decides it before the examples' texts are read, and
:class:`AQuaMuSeFolderWriter` writes a variant's folder from examples streamed in id order, keeping running sums
and two numbers per example for the plot (:class:`Table1Statistics`).

Coverage and density are Grusky et al. (2018)'s extractive-fragment measures of the target against the concatenated
input documents (lowercased tokens of the project's text pipeline); the plot shows coverage against density divided
by the target's length ("normalised density", in [0, 1]).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import datasets

from ..mining.dataset_folder import SPLITS, SplitFilesWriter, card_front_matter
from ..mining.splits import assign_group_splits, plan_group_splits
from ..text import TextPipeline
from ..utils.running_stats import ExactMean
from .matching import AQuaMuSeExample

__all__ = ["FEATURES", "VARIANTS", "AQuaMuSeFolderWriter", "Table1Statistics", "extractive_fragments",
           "plan_query_splits", "split_examples", "table1_statistics", "write_aquamuse_folder"]

VARIANTS = ("abstractive", "extractive")

FEATURES = datasets.Features({
    "id": datasets.Value("string"),
    "query": datasets.Value("string"),
    "target": datasets.Value("string"),
    "target_sentences": datasets.List(datasets.Value("string")),
    "documents": datasets.List({
        "url": datasets.Value("string"),
        "text": datasets.Value("string"),
        "score": datasets.Value("float32"),
    }),
    "matches": datasets.List({
        "document": datasets.Value("int32"),
        "document_sentence": datasets.Value("int32"),
        "answer_sentence": datasets.Value("int32"),
        "score": datasets.Value("float32"),
    }),
    "summary_recall": datasets.Value("float32"),
})  # fmt: skip

FULL_SCALE = (5_519, 440, 524)
"""The paper's examples, dev and test sizes (Kulkarni et al., 2020, "AQuaMuSe", §3)."""

_DESCRIPTION = {
    "abstractive": """AQuaMuSe (abstractive): query-based multi-document summarization examples mined from Natural
Questions and a web corpus (Kulkarni et al., 2020, "AQuaMuSe: Automatically Generating Datasets for
Query-Based Multi-Document Summarization"). The query is a Natural Questions question answered only by a long answer,
the target is that long answer, the documents are the top-K web pages whose sentences are near paraphrases of the
answer's sentences (θL < cosine < θU).""",
    "extractive": """AQuaMuSe (extractive): the abstractive examples with each matched document sentence replaced,
in place, by the answer sentence it matched (§2 of Kulkarni et al., 2020), so the target can be extracted from the documents.""",
}

_CITATION = """@article{kulkarni2020aquamuse,
  title   = {AQuaMuSe: Automatically Generating Datasets for Query-Based Multi-Document Summarization},
  author  = {Kulkarni, Sayali and Chammas, Sheide and Zhu, Wan and Sha, Fei and Ie, Eugene},
  journal = {arXiv preprint arXiv:2010.12694},
  year    = {2020},
}"""


def _group(query: str) -> str:
    return re.sub(r"\s+", " ", query.lower()).strip()


def _sizes(examples: int, groups: int, dev_size: int | None, test_size: int | None) -> tuple[int, int]:
    def scaled(size: int | None, full: int) -> int:
        if size is not None:
            return size
        return max(1, round(full * examples / FULL_SCALE[0])) if groups >= 3 else 0

    return scaled(dev_size, FULL_SCALE[1]), scaled(test_size, FULL_SCALE[2])


def split_examples(examples: Sequence[AQuaMuSeExample], seed: int = 42, dev_size: int | None = None,
                   test_size: int | None = None) -> dict[str, list[AQuaMuSeExample]]:
    """Query-disjoint train/validation/test split; dev and test default to the paper's shares of the examples (at
    least one each when there are three queries or more)."""
    groups = len({_group(e.query) for e in examples})
    return assign_group_splits(examples, lambda e: _group(e.query), lambda e: e.id,
                               *_sizes(len(examples), groups, dev_size, test_size), seed)


def plan_query_splits(queries: Iterable[str], seed: int = 42, dev_size: int | None = None,
                      test_size: int | None = None) -> Callable[[str], str]:
    """:func:`split_examples` from the kept examples' queries alone: returns ``split_of(query)``."""
    sizes = Counter(_group(query) for query in queries)
    plan = plan_group_splits(sizes, *_sizes(sum(sizes.values()), len(sizes), dev_size, test_size), seed)
    return lambda query: plan[_group(query)]


def extractive_fragments(article: Sequence[str], summary: Sequence[str]) -> list[int]:
    """Lengths of the greedy extractive fragments of ``summary`` in ``article`` (Grusky et al. 2018, Alg. 1)."""
    fragments, i = [], 0
    positions: dict[str, list[int]] = {}
    for j, token in enumerate(article):
        positions.setdefault(token, []).append(j)
    while i < len(summary):
        longest = 0
        for j in positions.get(summary[i], ()):
            length = 0
            while i + length < len(summary) and j + length < len(article) and summary[i + length] == article[j + length]:
                length += 1
            longest = max(longest, length)
        if longest:
            fragments.append(longest)
        i += max(longest, 1)
    return fragments


def _words(tokens: Sequence[str]) -> list[str]:
    return [token.lower() for token in tokens if any(ch.isalnum() for ch in token)]


def _measure(examples: Sequence[AQuaMuSeExample], pipeline: TextPipeline) -> list[dict[str, float]]:
    """Per example: target words/sentences, input words/sentences, documents, coverage, density."""
    measures = []
    for example in examples:
        target = _words(pipeline.tokenize(example.target))
        documents = [_words(tokens) for tokens in pipeline.tokenize_many(d["text"] for d in example.documents)]
        article = [token for document in documents for token in document]
        fragments = extractive_fragments(article, target)
        n = max(len(target), 1)
        measures.append({
            "summary_words": len(target), "summary_sents": len(example.target_sentences),
            "input_words": len(article), "input_sents": sum(len(pipeline.split_sentences(d["text"]))
                                                           for d in example.documents),
            "documents": len(example.documents), "coverage": sum(fragments) / n,
            "density": sum(f * f for f in fragments) / n, "normalised_density": sum(f * f for f in fragments) / n / n,
        })
    return measures


class Table1Statistics:
    """Table 1-2 of a variant from examples added one at a time (:meth:`add`, in the folder's order: split by split):
    exact running means (:class:`~wikiref_dataset.utils.running_stats.ExactMean`), counts, the distinct queries, and each
    example's coverage and normalised density for the plot."""

    _MEANS = ("summary_words", "summary_sents", "input_words", "input_sents", "coverage", "density")

    def __init__(self, pipeline: TextPipeline) -> None:
        self.pipeline = pipeline
        self.examples = {split: 0 for split in SPLITS}
        self.queries: set[str] = set()
        self.means = {key: ExactMean() for key in self._MEANS}
        self.totals = Counter()  # documents, input words, input sentences
        self.documents_per_example: Counter[int] = Counter()
        self.points: list[dict[str, float]] = []

    def add(self, split: str, example: AQuaMuSeExample) -> None:
        measure = _measure([example], self.pipeline)[0]
        self.examples[split] += 1
        self.queries.add(_group(example.query))
        for key in self._MEANS:
            self.means[key].add(measure[key])
        self.totals.update({"documents": measure["documents"], "words": measure["input_words"],
                            "sents": measure["input_sents"]})
        self.documents_per_example[int(measure["documents"])] += 1
        self.points.append({"coverage": measure["coverage"], "normalised_density": measure["normalised_density"]})

    def merge(self, other: Table1Statistics) -> None:
        """Add ``other``'s examples after this one's."""
        for split, count in other.examples.items():
            self.examples[split] += count
        self.queries |= other.queries
        for key, mean in other.means.items():
            self.means[key].merge(mean)
        self.totals.update(other.totals)
        self.documents_per_example.update(other.documents_per_example)
        self.points.extend(other.points)

    def result(self) -> dict[str, Any]:
        """The statistics; ``per_example`` holds the plot's two numbers per example."""
        def mean(key: str, digits: int = 1) -> float:
            return round(self.means[key].mean(), digits) if self.means[key].count else 0.0

        n_documents = self.totals["documents"]
        per_document = {key: round(self.totals[key] / n_documents, 1) if n_documents else 0.0
                        for key in ("words", "sents")}
        return {
            "queries": len(self.queries),
            "examples": dict(self.examples),
            "summary": {"words": mean("summary_words"), "sents": mean("summary_sents")},
            "inputs": {"words": mean("input_words"), "sents": mean("input_sents")},
            "per_input_doc": per_document,
            "documents": n_documents,
            "input_documents_per_example": dict(sorted(self.documents_per_example.items())),
            "coverage": mean("coverage", 3),
            "density": mean("density", 3),
            "per_example": self.points,
        }


def table1_statistics(splits: dict[str, list[AQuaMuSeExample]], pipeline: TextPipeline) -> dict[str, Any]:
    """Table 1 (queries, examples per split, mean summary/input/per-document words and sentences), Table 2 (input
    document counts), mean coverage and density, and the per-example coverage and normalised density (for the
    plot)."""
    accumulated = Table1Statistics(pipeline)
    for split in SPLITS:
        for example in splits.get(split, []):
            accumulated.add(split, example)
    return accumulated.result()


def _plot(measures: list[dict[str, float]], variant: str, path: Path) -> None:
    from matplotlib.figure import Figure  # not pyplot: no global figure state, and the caller's backend stays as is

    path.parent.mkdir(parents=True, exist_ok=True)
    figure = Figure(figsize=(4.5, 4))
    axis = figure.add_subplot()
    x = [m["coverage"] for m in measures]
    y = [m["normalised_density"] for m in measures]
    if len(measures) >= 20:
        axis.hexbin(x, y, gridsize=20, extent=(0, 1, 0, 1), cmap="Blues", mincnt=1)
    else:
        axis.scatter(x, y, s=14, color="#4878a8")
    axis.set_xlim(0, 1)
    axis.set_ylim(0, 1)
    axis.set_xlabel("coverage")
    axis.set_ylabel("density / target words")
    axis.set_title(f"AQuaMuSe ({variant}): coverage vs normalised density")
    figure.tight_layout()
    figure.savefig(path, dpi=90, metadata={"Software": None})


def _card(variant: str, stats: dict[str, Any], build: dict[str, Any], files: dict[str, str]) -> str:
    front = card_front_matter(f"AQuaMuSe ({variant})", files, licence="other")
    table = stats
    lines = [f"# AQuaMuSe ({variant})", "", _DESCRIPTION[variant], "", "## How it was built", "",
             f"- Questions: {', '.join(build.get('nq', [])) or 'n/a'}",
             f"- Corpus: {', '.join(build.get('corpus', [])) or 'n/a'}",
             f"- Sentence encoder: {build.get('encoder', 'n/a')}; index: {build.get('index', 'n/a')}",
             "- Matching config: `" + json.dumps(build.get("config", {}), sort_keys=True) + "`", "",
             "| step | count |", "|---|---:|"]
    lines += [f"| {name} | {value:,} |" for name, value in build.get("counts", {}).items()]
    lines += ["", "## Table 1", "",
              "| # queries | train | dev | test | summary # words | summary # sents | inputs # words | inputs # sents "
              "| per-doc # words | per-doc # sents |", "|" + "---:|" * 10,
              f"| {table['queries']:,} | {table['examples']['train']:,} | {table['examples']['validation']:,} | "
              f"{table['examples']['test']:,} | {table['summary']['words']} | {table['summary']['sents']} | "
              f"{table['inputs']['words']} | {table['inputs']['sents']} | {table['per_input_doc']['words']} | "
              f"{table['per_input_doc']['sents']} |", "",
              "## Table 2: input documents per example", "", "| documents | examples |", "|---:|---:|"]
    lines += [f"| {count} | {number:,} |" for count, number in table["input_documents_per_example"].items()]
    lines += ["", f"Mean coverage {table['coverage']}, mean density {table['density']} (Grusky et al., 2018).", "",
              "![coverage vs density](figures/coverage_density.png)", "", "## Licence", "",
              "Queries and targets come from Natural Questions (CC BY-SA 3.0; targets are Wikipedia text). Documents "
              "are web pages and remain their publishers' copyright; they are provided for research only.", "",
              "## Citation", "", "```bibtex", _CITATION, "```", ""]
    return "\n".join(front + lines)


def _row(example: AQuaMuSeExample) -> dict[str, Any]:
    return example.to_dict()


class AQuaMuSeFolderWriter:
    """One variant's folder written as examples stream in: :meth:`add` each example (in id order within its split),
    then :meth:`close` writes the plot, ``statistics.json`` and the card and returns the statistics. The plot draws
    the examples split by split, as the folder lists them."""

    def __init__(self, variant: str, output_dir: str | Path, pipeline: TextPipeline | None = None) -> None:
        from ..text import default_pipeline

        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        self.variant = variant
        self.output = Path(output_dir)
        self.files = SplitFilesWriter(self.output, FEATURES, ordered_by="id")
        self.statistics = {split: Table1Statistics(pipeline or default_pipeline()) for split in SPLITS}

    @property
    def sizes(self) -> dict[str, int]:
        return dict(self.files.sizes)

    def add(self, split: str, example: AQuaMuSeExample) -> None:
        self.files.add(split, _row(example))
        self.statistics[split].add(split, example)

    def close(self, build: dict[str, Any] | None = None) -> dict[str, Any]:
        files = self.files.close()
        whole = Table1Statistics(self.statistics[SPLITS[0]].pipeline)
        for split in SPLITS:
            whole.merge(self.statistics[split])
        stats = whole.result()
        _plot(stats["per_example"], self.variant, self.output / "figures" / "coverage_density.png")
        summary = {key: value for key, value in stats.items() if key != "per_example"}
        (self.output / "statistics.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
        (self.output / "README.md").write_text(_card(self.variant, stats, build or {}, files), encoding="utf-8")
        return summary


def write_aquamuse_folder(variant: str, splits: dict[str, list[AQuaMuSeExample]], output_dir: str | Path,
                          build: dict[str, Any] | None = None, pipeline: TextPipeline | None = None) -> dict[str, Any]:
    """Write one variant's Parquet shards, ``statistics.json``, the plot and the card from lists of examples
    (:class:`AQuaMuSeFolderWriter`); returns the statistics."""
    writer = AQuaMuSeFolderWriter(variant, output_dir, pipeline)
    for split in SPLITS:
        for example in sorted(splits.get(split, []), key=lambda e: e.id):
            writer.add(split, example)
    return writer.close(build)
