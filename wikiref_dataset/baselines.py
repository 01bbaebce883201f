"""The DUC baselines of Table VI of Zhu et al. (2022): LEAD, QUERY-SIM and ORACLE, on converted DUC rows, and the
names of the rows that show a system under a selection rule.

Each baseline takes one cluster (a row of the dataset ``wikiref duc convert`` writes: ``query``, ``documents`` with
``docno``/``date``/``sentences``, ``references``) and returns indices into
:class:`~wikiref_dataset.selection.ClusterSentences` ``.from_row(row)``, in selection order. LEAD and QUERY-SIM
only produce scores (:func:`baseline_scores`) and go through a cluster selection rule of the model
(:func:`~wikiref_dataset.selection.select_cluster`): their own, :data:`BASELINE_RULE`, is the paper's greedy DUC rule
(:func:`~wikiref_dataset.selection.select_duc`: bigram redundancy, 250 words), and ``rule=`` chooses their sentences
with another (``"ilp"``, ``"mmr"``), so that a table can show them under the rule a model chose with. ORACLE is the
project's greedy oracle (:class:`~wikiref_dataset.oracle.ExtractiveOracle`) and ignores the rule.

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

Row names (:func:`system_name`, the one place every table and results file takes them from): a system under its own
rule keeps its bare name, so ``QUERY-SIM`` and ``LEAD`` are the baselines under the paper's greedy rule as they always
were (and results files written before the rules were named still read the same); under another rule the row adds the
rule's label (:data:`RULE_LABELS`): ``QUERY-SIM (ILP)``, ``LEAD (MMR)``, and a model whose own rule is ILP shown under
the greedy rule is ``Q-BERT (greedy)``. ``ORACLE`` has no rule and keeps its name.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .oracle import ExtractiveOracle, OracleConfig
from .rouge import RougeConfig, RougeScorer
from .selection import DUC_MAX_WORDS, ClusterSentences, check_rule

__all__ = [
    "BASELINES",
    "BASELINE_NAMES",
    "BASELINE_RULE",
    "ORACLE_RULE",
    "RULE_LABELS",
    "baseline_key",
    "baseline_rule",
    "baseline_scores",
    "baseline_selection",
    "baseline_system",
    "lead",
    "lead_scores",
    "rule_label",
    "query_sim",
    "query_sim_scores",
    "oracle",
    "baseline_summary",
    "sentences_cut",
    "system_name",
]

BASELINE_RULE = "duc"
"""The baselines' own selection rule: the paper's greedy DUC rule, with which Table VI chose LEAD's and QUERY-SIM's
sentences."""

ORACLE_RULE = "oracle"
"""What an evaluation records as ORACLE's rule: its own greedy ROUGE-2 search against the references, the same
whichever rule the other systems are chosen with."""

RULE_LABELS: dict[str, str] = {"duc": "greedy", "mmr": "MMR", "ilp": "ILP", ORACLE_RULE: "oracle"}
"""How a row name and a table's Rule column say the rule a system was chosen with: the cluster rules
(:data:`~wikiref_dataset.selection.CLUSTER_RULES`; ``duc`` is the paper's greedy rule) and ORACLE's own search."""

_RULE_FREE_SYSTEMS = ("ORACLE",)


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


def lead(row: Mapping[str, Any], max_words: int = DUC_MAX_WORDS, rule: str = BASELINE_RULE,
         **settings: Any) -> list[int]:
    """LEAD: leading sentences of the most recent document, then of the next most recent, chosen by ``rule`` (its own:
    the paper's greedy rule) with that rule's ``settings`` (:func:`~wikiref_dataset.selection.select_cluster`)."""
    return ClusterSentences.from_row(row).select(lead_scores(row), max_words=max_words, rule=rule, **settings)


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


def query_sim(row: Mapping[str, Any], max_words: int = DUC_MAX_WORDS, rule: str = BASELINE_RULE,
              **settings: Any) -> list[int]:
    """QUERY-SIM: sentences by TF-IDF cosine to the query, chosen by ``rule`` (its own: the paper's greedy rule) with
    that rule's ``settings`` (:func:`~wikiref_dataset.selection.select_cluster`)."""
    cluster = ClusterSentences.from_row(row)
    return cluster.select(query_sim_scores(row["query"], cluster.sentences), max_words=max_words, rule=rule, **settings)


def oracle(row: Mapping[str, Any], max_words: int = DUC_MAX_WORDS, rule: str | None = None,
           **settings: Any) -> list[int]:
    """ORACLE: the greedy ROUGE-2-recall oracle against all the references, within ``max_words`` words. It has no
    selection rule: ``rule`` and ``settings`` are taken, as every baseline takes them, and ignored."""
    references = list(row["references"])
    if not references:
        raise ValueError(f"topic {row.get('topic_id', '?')}: ORACLE needs reference summaries, the cluster has none")
    search = ExtractiveOracle(OracleConfig(objective="recall", max_sentences=None, max_words=max_words))
    return list(search.select(ClusterSentences.from_row(row).sentences, references).indices)


BASELINES: dict[str, Callable[..., list[int]]] = {"lead": lead, "query-sim": query_sim, "oracle": oracle}
"""Baselines by command-line name."""

BASELINE_NAMES: dict[str, str] = {"lead": "LEAD", "query-sim": "QUERY-SIM", "oracle": "ORACLE"}
"""The names Table VI of Zhu et al. (2022) prints."""


def baseline_key(name: str) -> str:
    """The command-line name of a baseline however a user spells it: ``query-sim`` for ``query_sim`` (the experiments'
    row and ``rescore --mix``'s signal) or ``QUERY-SIM`` (the tables' row); another name comes back lower-cased, for
    the caller's error to name."""
    return name.strip().lower().replace("_", "-")


def _check_baseline(name: str) -> None:
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}")


def baseline_scores(name: str, row: Mapping[str, Any]) -> list[float]:
    """The scores LEAD (``"lead"``) or QUERY-SIM (``"query-sim"``) gives each flat sentence of the cluster ``row``,
    before a rule chooses from them.

    Raises:
        ValueError: an unknown baseline, or ORACLE (which searches against the references instead of scoring).
    """
    _check_baseline(name)
    if name == "lead":
        return lead_scores(row)
    if name == "query-sim":
        return query_sim_scores(row["query"], ClusterSentences.from_row(row).sentences)
    raise ValueError(f"baseline {name!r} gives no sentence scores: it searches against the references")


def baseline_rule(name: str, rule: str = BASELINE_RULE) -> str:
    """The rule an evaluation records for baseline ``name`` chosen with ``rule``: ``rule`` itself, or
    :data:`ORACLE_RULE` for ORACLE, which ignores it.

    Raises:
        ValueError: an unknown baseline or rule.
    """
    _check_baseline(name)
    check_rule(rule)
    return ORACLE_RULE if name == "oracle" else rule


def rule_label(rule: str) -> str:
    """How tables print ``rule`` (:data:`RULE_LABELS`: ``"greedy"`` for ``"duc"``, ``"ILP"`` for ``"ilp"``); a rule
    this version does not know (a newer results file's) as it is recorded."""
    return RULE_LABELS.get(rule, rule)


def system_name(system: str, rule: str, own_rule: str = BASELINE_RULE) -> str:
    """The row name of ``system`` (as tables print it: ``"QUERY-SIM"``, ``"Q-BERT"``, a model folder's name) with its
    summaries chosen by the cluster rule ``rule``: the bare name under the system's ``own_rule`` (the baselines': the
    paper's greedy rule), else the name and the rule's label, ``"QUERY-SIM (ILP)"``, ``"Q-BERT (greedy)"``. ORACLE has
    no rule and keeps its name. Every table and results file names its rows with this (see the module docstring).

    Raises:
        ValueError: an unknown rule.
    """
    check_rule(rule)
    check_rule(own_rule)
    if rule == own_rule or system in _RULE_FREE_SYSTEMS:
        return system
    return f"{system} ({RULE_LABELS[rule]})"


def baseline_system(name: str, rule: str = BASELINE_RULE) -> str:
    """The row name of baseline ``name`` (``"lead"``, ``"query-sim"``, ``"oracle"``) chosen with ``rule``:
    :func:`system_name` of its Table VI name, ``"QUERY-SIM"`` under its own rule, ``"QUERY-SIM (ILP)"`` under ILP.

    Raises:
        ValueError: an unknown baseline or rule.
    """
    _check_baseline(name)
    return system_name(BASELINE_NAMES[name], rule)


def baseline_selection(name: str, row: Mapping[str, Any], max_words: int = DUC_MAX_WORDS, rule: str = BASELINE_RULE,
                       **settings: Any) -> list[int]:
    """The flat sentence indices baseline ``name`` chooses for ``row``: LEAD's and QUERY-SIM's scores
    (:func:`baseline_scores`) through ``rule`` with its ``settings``; ORACLE's own search whatever the rule.

    Raises:
        ValueError: an unknown baseline or rule, or a setting the rule does not take.
    """
    _check_baseline(name)
    check_rule(rule)
    return BASELINES[name](row, max_words=max_words, rule=rule, **settings)


def sentences_cut(row: Mapping[str, Any], max_words: int) -> dict[str, Any]:
    """``row`` with every sentence longer than ``max_words`` cut to its first ``max_words`` words (as ROUGE's ``-l``
    cuts a line); the row itself is not changed."""
    from .rouge import truncate_lines

    documents = [{**document, "sentences": [truncate_lines([sentence], max_words)[0] if sentence.strip() else sentence
                                            for sentence in document["sentences"]]}
                 for document in row["documents"]]
    return {**row, "documents": documents}


def baseline_summary(name: str, row: Mapping[str, Any], max_words: int = DUC_MAX_WORDS, cut: bool = False,
                     rule: str = BASELINE_RULE, **settings: Any) -> str:
    """The summary (one sentence per line) a baseline gives for one cluster, its sentences chosen by ``rule`` with
    that rule's ``settings`` (:func:`baseline_selection`; by default the baselines' own, the paper's greedy rule).

    ``cut``: the summary must keep to ``max_words`` on its own (a benchmark scored without ROUGE's ``-l``): it is cut
    to the budget the way ``-l`` cuts, and ORACLE's candidates are the sentences cut to the budget
    (:func:`sentences_cut`; ORACLE never takes a sentence past the budget, so without it an argument whose sentences
    are all longer than Debatepedia's 10 words would have no oracle summary)."""
    _check_baseline(name)
    if cut and name == "oracle":
        row = sentences_cut(row, max_words)
    return ClusterSentences.from_row(row).summary(baseline_selection(name, row, max_words, rule, **settings),
                                                  max_words=max_words if cut else None)

