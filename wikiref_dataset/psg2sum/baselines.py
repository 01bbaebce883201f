"""PSG2SUM baselines (Table 4 of Zhou, Wei and Zhou, 2020): LEAD1 and TextRank, scored with the project's ROUGE.

* **LEAD1** — the passage's first sentence.
* **TextRank** (Mihalcea & Tarau 2004) — a graph over the passage's sentences with edge weight
  ``|{w : w ∈ S_i, w ∈ S_j}| / (log |S_i| + log |S_j|)`` (words = lowercased word tokens of the project's
  :class:`~wikiref_dataset.text.TextPipeline`), PageRank with ``networkx.pagerank`` (damping 0.85; a sentence with
  no edge spreads its score evenly), top-1 sentence; ties go to the earlier sentence. (The hand-written power
  iteration this replaced gave the same top sentence on every real passage and scores equal to 1e-9.) The paper used gensim, which refuses passages of fewer than three sentences and then
  picked a random sentence; here TextRank runs on every passage (one sentence: itself; two: a tie, the first),
  which is deterministic.

Scores are ROUGE-1/2/L recall, precision and F1 with bootstrap 95% intervals, from
:func:`wikiref_dataset.rouge.rouge` with stemming, no length limit and ROUGE-L on (the official script's
``-m -n 2 -c 95 -r 1000``, as Table 4 reports).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..rouge import RougeConfig, RougeResult, RougeScorer
from ..text import TextPipeline

__all__ = ["BASELINES", "ROUGE_CONFIG", "evaluate_baselines", "format_table", "lead1", "textrank", "textrank_scores"]

ROUGE_CONFIG = RougeConfig(max_n=2, rouge_l=True, skip_distance=None, word_limit=None)
"""ROUGE-1, -2, -L with ROUGE-1.5.5's stemmer, no length limit, 95% bootstrap intervals (1,000 resamples)."""


def lead1(sentences: Sequence[str], pipeline: TextPipeline | None = None) -> str:
    """The first sentence (empty for an empty passage)."""
    return sentences[0] if sentences else ""


def textrank_scores(words: Sequence[Sequence[str]], damping: float = 0.85, tolerance: float = 1e-12,
                    max_iterations: int = 1000) -> np.ndarray:
    """PageRank scores of sentences given their words (Mihalcea & Tarau's similarity as edge weights)."""
    import networkx as nx

    n = len(words)
    if n == 0:
        return np.zeros(0)
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    sets = [set(w) for w in words]
    for i in range(n):
        for j in range(i + 1, n):
            denominator = math.log(len(words[i])) + math.log(len(words[j])) if words[i] and words[j] else 0.0
            overlap = len(sets[i] & sets[j])
            if denominator > 0 and overlap:
                graph.add_edge(i, j, weight=overlap / denominator)
    ranks = nx.pagerank(graph, alpha=damping, weight="weight", tol=tolerance, max_iter=max_iterations)
    return np.array([ranks[i] for i in range(n)])


def textrank(sentences: Sequence[str], pipeline: TextPipeline | None = None) -> str:
    """The top-1 TextRank sentence of a passage (ties: the earlier one)."""
    if len(sentences) <= 1:
        return sentences[0] if sentences else ""
    pipeline = pipeline or TextPipeline()
    words = [[token.lower() for token in analysis.words] for analysis in pipeline.analyze_many(sentences)]
    scores = np.round(textrank_scores(words), 12)
    return sentences[int(np.argmax(scores))]


BASELINES: dict[str, Callable[[Sequence[str], TextPipeline | None], str]] = {"LEAD1": lead1, "TextRank": textrank}


def evaluate_baselines(rows: Sequence[dict[str, Any]], pipeline: TextPipeline | None = None,
                       config: RougeConfig = ROUGE_CONFIG) -> dict[str, RougeResult]:
    """ROUGE of each baseline on dataset rows (``passage_sentences`` → prediction, ``summary`` → reference):
    ROUGE-1.5.5 for English, the Unicode ROUGE of the pipeline's language otherwise
    (:meth:`~wikiref_dataset.text.TextPipeline.unicode_rouge_texts`, lemmas in place of ``-m`` stemming)."""
    pipeline = pipeline or TextPipeline()
    english = pipeline.config.lang == "en"
    scorer = RougeScorer(config if english else dataclasses.replace(config, stem=False))
    references = [row["summary"] for row in rows]
    results = {}
    for name, baseline in BASELINES.items():
        predictions = [baseline(row["passage_sentences"], pipeline) for row in rows]
        if not english:
            texts = pipeline.unicode_rouge_texts([*predictions, *references], lemmas=config.stem)
            predictions, scored_references = texts[:len(predictions)], texts[len(predictions):]
        else:
            scored_references = references
        results[name] = scorer.evaluate(predictions, scored_references)
    return results


def format_table(results: dict[str, RougeResult]) -> str:
    """A Table 4-style markdown table: R / P / F1 of ROUGE-1, -2, -L in percent, ± half the 95% interval."""
    metrics = [("rouge_1", "ROUGE-1"), ("rouge_2", "ROUGE-2"), ("rouge_l", "ROUGE-L")]
    header = "| Model | " + " | ".join(f"{label} {v}" for _, label in metrics for v in ("R", "P", "F1")) + " |"
    lines = [header, "|---|" + "---:|" * 9]
    for name, result in results.items():
        cells = []
        for metric, _ in metrics:
            average = result.averages[metric]
            for value in ("recall", "precision", "f"):
                low, high = getattr(average, f"{value}_ci")
                cells.append(f"{100 * getattr(average, value):.2f}±{100 * (high - low) / 2:.2f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
