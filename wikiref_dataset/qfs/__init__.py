"""Query-focused summarization benchmarks beyond DUC, converted to the DUC row shape: QMSum, SQuALITY, Debatepedia.

``wikiref qfs convert BENCHMARK RELEASE --out DIR`` (:func:`convert_benchmark`) reads a benchmark's release folder as
its authors publish it (the folder holding its ``data/``) and writes a `datasets` folder, one split per released
split, that ``datasets.load_dataset(DIR)`` reads. The rows have the shape of a converted DUC year (see
:mod:`wikiref_dataset.qfs.common`), so the baselines, the oracle, the training scripts and the evaluation treat a
benchmark as they treat a DUC year. One reader per benchmark: :mod:`~wikiref_dataset.qfs.qmsum`,
:mod:`~wikiref_dataset.qfs.squality`, :mod:`~wikiref_dataset.qfs.debatepedia`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import BENCHMARK_FIELDS, BENCHMARKS, SPLITS, QfsError, QfsSplit, QfsStats, load_split, read_converted

if TYPE_CHECKING:
    from ..text import TextPipeline

__all__ = ["BENCHMARKS", "BENCHMARK_FIELDS", "SPLITS", "QfsError", "QfsSplit", "QfsStats", "benchmark_content",
           "benchmark_title", "convert_benchmark", "dataset_card", "load_split", "read_benchmark", "read_converted"]

_ABOUT = {  # benchmark: (title, its text and queries in a phrase, what it is, licence, its converted rows)
    "qmsum": (
        "QMSum",
        "meeting transcripts; queries: questions about a whole meeting or a part of it",
        "Query-based meeting summarization (Zhong et al., 2021, \"QMSum: A New Benchmark for Query-based Multi-domain "
        "Meeting Summarization\"): transcripts of product-design meetings (AMI), research-group meetings (ICSI) and "
        "parliamentary committee meetings, with general queries about a whole meeting and specific queries about a "
        "part of it. Each query has one reference answer written by an annotator; each specific query has the spans "
        "of turns that answer it.",
        "MIT (the QMSum annotations, Copyright (c) 2021 Yale-LILY); the transcripts remain under the licences of their "
        "corpora (AMI and ICSI: CC BY 4.0; the committee transcripts: the Welsh Parliament's and the House of "
        "Commons of Canada's terms).",
        "One row per query: `query_type` (general or specific), `domain` (academic: ICSI, product: AMI, committee), "
        "one document (the meeting) whose `sentences` are the turns split into sentences, with the `speakers` and "
        "released turn index (`turns`) of each, `references` (the answer), `answer_spans` (the released turn spans, "
        "both ends included) and `answer_sentences` (the sentences inside those spans: the annotators' extractive "
        "labels). Transcribers' tags (`{disfmarker}`, `{vocalsound}`, ...) are removed and AMI's underscored acronyms "
        "(`T_V_`) made words (`TV`), as the QMSum baselines prepare the text; a turn left empty has no sentence."),
    "squality": (
        "SQuALITY",
        "science-fiction stories; queries: questions about a story",
        "Question-focused summarization of long stories (Wang et al., 2022, \"SQuALITY: Building a Long-Document "
        "Summarization Dataset the Hard Way\"): public-domain science-fiction stories from Project Gutenberg, five "
        "questions per story (the first is always \"What is the plot of the story?\"), four reference answers per "
        "question, each written by a different writer.",
        "CC BY 4.0 (the questions and answers); the stories are in the public domain in the United States, from "
        "Project Gutenberg (see its licence in the release).",
        "One row per question: `question_number`, one document (the story) split into sentences, `references` (the "
        "four answers, leading and trailing blank lines removed) and `reference_workers` (who wrote each)."),
    "debatepedia": (
        "Debatepedia",
        "short debate arguments; queries: debate questions",
        "Query-focused abstractive summarization of short arguments (Nema et al., 2017, \"Diversity driven Attention "
        "Model for Query-based Abstractive Summarization\"): arguments from the Debatepedia encyclopedia of debates, "
        "each with the debate question it answers and a one-line abstract.",
        "No licence file is published with the release; the text comes from Debatepedia (a wiki whose content was "
        "published under CC BY 3.0). Check the terms before redistributing.",
        "One row per released line: one document (the argument) split into sentences, `query`, and `references` "
        "(the one-line abstract). The text is as released: lowercased and tokenized, `<s>`/`<eos>` markers removed "
        "(digits are masked as `#` in the released training files)."),
}


def benchmark_title(benchmark: str) -> str:
    """How tables name a benchmark (``qmsum`` -> ``QMSum``); an unknown name as it is."""
    return _ABOUT[benchmark][0] if benchmark in _ABOUT else benchmark


def benchmark_content(benchmark: str) -> str:
    """What a benchmark's rows are made of, in one phrase (``qmsum`` -> ``"meeting transcripts; queries: questions
    about a whole meeting or a part of it"``), for a model card saying what a model was trained on; an unknown name
    reads as a converted benchmark."""
    return _ABOUT[benchmark][1] if benchmark in _ABOUT else "a converted query-focused benchmark"


def read_benchmark(benchmark: str, path: str | os.PathLike, pipeline: TextPipeline | None = None,
                   splits: list[str] | None = None, progress: bool = False, **options: Any
                   ) -> tuple[dict[str, list[dict[str, Any]]], QfsStats]:
    """``({split: rows}, stats)`` of ``benchmark``'s release at ``path``; ``options`` go to its reader
    (``keep_markup`` for QMSum, ``version`` for SQuALITY).

    Raises:
        QfsError: unknown benchmark, a folder that is not its release, an option its reader does not take.
    """
    if benchmark not in BENCHMARKS:
        raise QfsError(f"unknown benchmark {benchmark!r}; known: {', '.join(BENCHMARKS)}")
    if not Path(path).is_dir():
        what = "not a folder" if Path(path).exists() else "no such folder"
        raise QfsError(f"{path}: {what} (give the {benchmark_title(benchmark)} release folder, the one holding its data/)")
    if splits:
        unknown = [split for split in splits if split not in SPLITS]
        if unknown:
            raise QfsError(f"unknown split {', '.join(unknown)}; splits: {', '.join(SPLITS)}")
    if pipeline is None:
        from ..text import TextConfig, TextPipeline

        # Debatepedia's release is lowercased: a sentence there starts with a lowercase letter.
        pipeline = TextPipeline(TextConfig(lowercased=benchmark == "debatepedia"))
    if benchmark == "qmsum":
        from .qmsum import read_qmsum as reader
    elif benchmark == "squality":
        from .squality import read_squality as reader
    else:
        from .debatepedia import read_debatepedia as reader
    try:
        rows, stats = reader(path, pipeline, splits=splits, progress=progress, **options)
    except TypeError as error:
        if "unexpected keyword" in str(error):
            raise QfsError(f"{benchmark}: {error}") from None
        raise
    stats.pipeline = pipeline.description
    return rows, stats


def dataset_card(stats: QfsStats) -> str:
    """The card body (under the YAML header) of a converted benchmark: what it is, its licence, the row fields, how
    it was converted and what the conversion counted."""
    title, _, what, licence, rows = _ABOUT[stats.benchmark]
    lines = [f"# {title} (converted)", "", what, "", f"**Licence**: {licence}", "", "## Rows", "",
             "The row shape of a converted DUC year (`topic_id`, `query`, `documents` with `docno`, `date`, `headline` "
             "and `sentences`, `references`), so that the same baselines, oracle, training and evaluation apply. "
             + rows, "", "Load: `datasets.load_dataset(\"<this folder>\", split=\"validation\")` (splits: "
             + ", ".join(f"`{split}`" for split in SPLITS if split in stats.rows) + ").", "",
             "## Conversion", "", f"Converted by `wikiref qfs convert {stats.benchmark}` from the release as "
             "published; `train`, `validation` and `test` are the released train, validation (QMSum `val`, SQuALITY "
             "`dev`, Debatepedia `valid`) and test splits.", "", f"- sentences: {stats.pipeline}"]
    lines += [f"- {line}" for line in stats.summary().splitlines()]
    return "\n".join(lines) + "\n"


def convert_benchmark(benchmark: str, path: str | os.PathLike, out_dir: str | os.PathLike,
                      splits: list[str] | None = None, pipeline: TextPipeline | None = None, progress: bool = False,
                      overwrite: bool = False, **options: Any) -> QfsStats:
    """Read ``benchmark``'s release at ``path`` (:func:`read_benchmark`) and write it to ``out_dir`` as a `datasets`
    folder with its card; returns the statistics.

    Raises:
        QfsError: as :func:`read_benchmark`, or no row could be converted.
        OutputFolderError: ``out_dir`` holds something else and ``overwrite`` is false (checked before reading).
    """
    from ..process.folders import check_output_folder
    from .common import QFS_KIND, write_benchmark

    check_output_folder(out_dir, QFS_KIND, overwrite)
    rows, stats = read_benchmark(benchmark, path, pipeline, splits=splits, progress=progress, **options)
    empty = [split for split, split_rows in rows.items() if not split_rows]
    if empty:
        raise QfsError(f"{path}: no {benchmark} row converted in {', '.join(empty)} (see the problems listed:\n"
                       f"{stats.summary()})")
    write_benchmark(rows, out_dir, stats, dataset_card(stats), overwrite=overwrite)
    return stats
