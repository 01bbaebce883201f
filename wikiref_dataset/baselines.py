"""The DUC baselines of Table VI of Zhu et al. (2022): LEAD, QUERY-SIM and ORACLE, on converted DUC rows.

Each baseline takes one cluster (a row of the dataset ``wikiref duc convert`` writes: ``query``, ``documents`` with
``docno``/``date``/``sentences``, ``references``) and returns indices into
:class:`~wikiref_dataset.selection.ClusterSentences` ``.from_row(row)``, in selection order. LEAD and QUERY-SIM
only produce scores and go through the DUC selection of the model (:func:`~wikiref_dataset.selection.select_duc`:
bigram redundancy, 250 words); ORACLE is the project's greedy oracle
(:class:`~wikiref_dataset.oracle.ExtractiveOracle`).

* **LEAD** — the leading sentences of the most recent document, continuing into the next most recent one when the
  budget is not full. Documents are ordered by date (most recent first; an unknown date counts as oldest), equal
  dates by DOCNO, highest first (within a source the DOCNO's sequence number grows through the day).
* **QUERY-SIM** — TF-IDF cosine similarity of each sentence to the query (all query levels together). Terms are
  ROUGE tokens (the metric's tokenizer and stemmer) without the spaCy English stop words of the project's
  :class:`~wikiref_dataset.text.TextPipeline` (read from the package's copy of the list,
  :mod:`wikiref_dataset.stopwords`, so that evaluation needs no spaCy); TF is the raw count, IDF is computed over the
  sentences of the cluster, smoothed as ``ln((1 + N) / (1 + df)) + 1`` (N sentences, df sentences holding the term)
  so that a term every sentence holds still counts. Sentence-level IDF, because with document-level IDF the cluster's topic words
  (in every document) would weigh nothing.
* **ORACLE** — greedy selection of the sentence that raises ROUGE-2 recall against all the references most
  (``-f A`` pooling), until none raises it or the next would take the summary past 250 words.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .oracle import ExtractiveOracle, OracleConfig
from .rouge import RougeConfig, RougeScorer
from .selection import DUC_MAX_WORDS, ClusterSentences, select_duc

__all__ = [
    "BASELINES",
    "BASELINE_NAMES",
    "lead",
    "lead_scores",
    "query_sim",
    "query_sim_scores",
    "oracle",
    "baseline_summary",
    "sentences_cut",
]


def lead_scores(row: Mapping[str, Any]) -> list[float]:
    """One score per flat sentence of the cluster: higher for more recent documents, then for earlier sentences."""
    documents = row["documents"]
    recency = sorted(range(len(documents)), key=lambda d: (documents[d]["date"], documents[d]["docno"]), reverse=True)
    rank_of_document = {doc_index: rank for rank, doc_index in enumerate(recency)}
    positions = ClusterSentences.from_row(row).positions
    order = sorted(range(len(positions)), key=lambda k: (rank_of_document[positions[k][0]], positions[k][1]))
    scores = [0.0] * len(positions)
    for rank, flat_index in enumerate(order):
        scores[flat_index] = -float(rank)
    return scores


def lead(row: Mapping[str, Any], max_words: int = DUC_MAX_WORDS) -> list[int]:
    """LEAD: leading sentences of the most recent document, then of the next most recent, through :func:`select_duc`."""
    return select_duc(ClusterSentences.from_row(row).sentences, lead_scores(row), max_words=max_words)


@functools.cache
def _term_scorer() -> RougeScorer:
    """ROUGE tokenizer + stemmer with the project's English stop words removed before stemming (spaCy's list, read
    from the copy shipped with the package: evaluation needs no spaCy)."""
    from wikiref_dataset.stopwords import english_stop_words

    return RougeScorer(RougeConfig(max_n=1, skip_distance=None, word_limit=None, resamples=1,
                                   stopwords=english_stop_words()))


def _terms(text: str) -> Counter:
    scorer = _term_scorer()
    return Counter(token for line in text.split("\n") for token in scorer.tokens(line))


def query_sim_scores(query: Sequence[str] | str, sentences: Sequence[str]) -> list[float]:
    """TF-IDF cosine of each sentence to the query, IDF over ``sentences`` (see the module docstring)."""
    query_text = query if isinstance(query, str) else "\n".join(query)
    sentence_terms = [_terms(sentence) for sentence in sentences]
    n_sentences = len(sentence_terms)
    document_frequency: Counter = Counter()
    for terms in sentence_terms:
        document_frequency.update(terms.keys())

    def weights(terms: Counter) -> dict[str, float]:
        return {term: count * (math.log((1 + n_sentences) / (1 + document_frequency[term])) + 1.0)
                for term, count in terms.items()}

    query_vector = weights(_terms(query_text))
    query_norm = math.sqrt(sum(value * value for value in query_vector.values()))
    scores = []
    for terms in sentence_terms:
        vector = weights(terms)
        norm = math.sqrt(sum(value * value for value in vector.values()))
        if not norm or not query_norm:
            scores.append(0.0)
            continue
        dot = sum(value * query_vector.get(term, 0.0) for term, value in vector.items())
        scores.append(dot / (norm * query_norm))
    return scores


def query_sim(row: Mapping[str, Any], max_words: int = DUC_MAX_WORDS) -> list[int]:
    """QUERY-SIM: sentences by TF-IDF cosine to the query, through :func:`select_duc`."""
    cluster = ClusterSentences.from_row(row)
    return select_duc(cluster.sentences, query_sim_scores(row["query"], cluster.sentences), max_words=max_words)


def oracle(row: Mapping[str, Any], max_words: int = DUC_MAX_WORDS) -> list[int]:
    """ORACLE: the greedy ROUGE-2-recall oracle against all the references, within ``max_words`` words."""
    references = list(row["references"])
    if not references:
        raise ValueError(f"topic {row.get('topic_id', '?')}: ORACLE needs reference summaries, the cluster has none")
    search = ExtractiveOracle(OracleConfig(objective="recall", max_sentences=None, max_words=max_words))
    return list(search.select(ClusterSentences.from_row(row).sentences, references).indices)


BASELINES: dict[str, Callable[..., list[int]]] = {"lead": lead, "query-sim": query_sim, "oracle": oracle}
"""Baselines by command-line name."""

BASELINE_NAMES: dict[str, str] = {"lead": "LEAD", "query-sim": "QUERY-SIM", "oracle": "ORACLE"}
"""The names Table VI of Zhu et al. (2022) prints."""


def sentences_cut(row: Mapping[str, Any], max_words: int) -> dict[str, Any]:
    """``row`` with every sentence longer than ``max_words`` cut to its first ``max_words`` words (as ROUGE's ``-l``
    cuts a line); the row itself is not changed."""
    from .rouge import truncate_lines

    documents = [{**document, "sentences": [truncate_lines([sentence], max_words)[0] if sentence.strip() else sentence
                                            for sentence in document["sentences"]]}
                 for document in row["documents"]]
    return {**row, "documents": documents}


def baseline_summary(name: str, row: Mapping[str, Any], max_words: int = DUC_MAX_WORDS, cut: bool = False) -> str:
    """The summary (one sentence per line) a baseline gives for one cluster.

    ``cut``: the summary must keep to ``max_words`` on its own (a benchmark scored without ROUGE's ``-l``): it is cut
    to the budget the way ``-l`` cuts, and ORACLE's candidates are the sentences cut to the budget
    (:func:`sentences_cut`; ORACLE never takes a sentence past the budget, so without it an argument whose sentences
    are all longer than Debatepedia's 10 words would have no oracle summary)."""
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}")
    if cut and name == "oracle":
        row = sentences_cut(row, max_words)
    return ClusterSentences.from_row(row).summary(BASELINES[name](row, max_words=max_words),
                                                  max_words=max_words if cut else None)

