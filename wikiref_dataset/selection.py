"""Sentence selection: turn per-sentence scores into an extractive summary (§IV-C and §V-B of Zhu et al., 2022).

Usable without a model: the DUC baselines (``baselines.py``) feed their own scores through the same rules.

* :func:`select_duc` — DUC: rank every sentence of a cluster by score, take them in that order, skip a sentence
  when more than half of its bigrams are already in the summary, stop once the summary has 250 words.
* :func:`select_wikiref` — WikiRef: rank by score, add a sentence if its score exceeds a threshold and it shares
  no trigram with the summary so far (trigram blocking); :func:`tune_threshold` picks the threshold on a dev set
  for the best mean ROUGE-2 F1.
* :func:`select_mmr` — maximal marginal relevance (Carbonell and Goldstein, 1998): repeatedly take the sentence with
  the best trade-off between its score and its largest unigram cosine to the summary so far, up to 250 words.
* :func:`select_ilp` — concept coverage (Gillick and Favre, 2009, the ICSI summarizer): choose the sentences whose
  stemmed bigram "concepts", each weighted by the model's scores of the sentences that hold it, cover the most weight
  under the word budget, solved exactly as an integer linear program by HiGHS (``scipy.optimize.milp``), then fill
  what the budget has left as :func:`select_duc` would.
* :data:`CLUSTER_RULES` and :func:`select_cluster` — the multi-document rules by name (``"duc"``, ``"mmr"``, ``"ilp"``),
  as the pipeline, ``finetune_duc.py`` and ``wikiref rescore`` take them.
* :data:`BUDGETS` and :func:`within_budget` — a rule's summary as a reader gets it (whole sentences, never over the
  budget), beside the rules' own, whose crossing sentence ROUGE's ``-l`` cuts (what DUC evaluation scores).
* :class:`ClusterSentences` — a DUC cluster's documents flattened into one list of sentences, remembering for each
  its (document index, sentence index), so that per-document scores can be selected across the cluster.

"Bigram", "trigram" and "word" mean what the metric counts: n-grams come from the ROUGE engine's tokenizer and
``-m`` stemmer (``wikiref_dataset.rouge``), counted inside each sentence (as the oracle does), and the word budget is
ROUGE's ``-l`` count (:func:`~wikiref_dataset.rouge.count_words`). Ties in score are broken by the original order.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from wikiref_dataset.rouge import RougeConfig, RougeScorer, count_words, ngram_counts, truncate_lines

__all__ = [
    "BUDGETS",
    "CLUSTER_RULES",
    "DUC_MAX_WORDS",
    "RULE_SETTINGS",
    "ClusterSentences",
    "ThresholdSearch",
    "check_rule",
    "check_settings",
    "min_max_scaled",
    "native_stdout_to_stderr",
    "rank_by_score",
    "rule_settings",
    "sentence_ngrams",
    "select_cluster",
    "select_duc",
    "select_ilp",
    "select_mmr",
    "select_wikiref",
    "summary_text",
    "tune_threshold",
    "within_budget",
]

DUC_MAX_WORDS = 250
"""The DUC 2005-2007 summary length (ROUGE's ``-l 250``)."""


@functools.cache
def _scorer() -> RougeScorer:
    """ROUGE-1/2 without word limit, with the ROUGE tokenizer + stemmer (one stem cache for the process)."""
    return RougeScorer(RougeConfig(max_n=2, skip_distance=None, word_limit=None, resamples=1))


def sentence_ngrams(sentence: str, n: int) -> Counter:
    """The n-grams ROUGE-N counts in one sentence: ROUGE tokens, stemmed, over all the sentence's lines."""
    scorer = _scorer()
    tokens = [token for line in sentence.split("\n") for token in scorer.tokens(line)]
    return ngram_counts(tokens, n)


def _check_scores(sentences: Sequence[str], scores: Sequence[float]) -> list[float]:
    if isinstance(sentences, str):
        raise TypeError("sentences must be a sequence of sentence strings, not one string")
    values = [float(score) for score in scores]
    if len(values) != len(sentences):
        raise ValueError(f"got {len(values)} scores for {len(sentences)} sentences")
    for position, value in enumerate(values):
        if math.isnan(value):
            raise ValueError(f"score {position} is NaN")
    return values


def rank_by_score(scores: Sequence[float]) -> list[int]:
    """Sentence indices from the highest score to the lowest; equal scores keep their original order."""
    return sorted(range(len(scores)), key=lambda index: (-scores[index], index))


def select_duc(
    sentences: Sequence[str],
    scores: Sequence[float],
    max_words: int = DUC_MAX_WORDS,
    redundancy: float = 0.5,
) -> list[int]:
    """DUC selection: indices of the chosen sentences, in the order they were chosen (score order).

    Sentences are taken by decreasing score (ties: original order). One is skipped when more than ``redundancy`` of
    its bigram occurrences (ROUGE-2's bigrams: ROUGE tokens, stemmed) already occur in the summary; a sentence
    without bigrams (one word) is never redundant, and a sentence without any word is skipped. Selection stops once
    the summary holds at least ``max_words`` words as ROUGE's ``-l`` counts them: the sentence that crosses the
    budget is included, because ROUGE's ``-l 250`` truncation cuts it (the usual DUC practice: the summary uses the
    whole budget). :func:`summary_text` with ``max_words`` cuts it the same way where a hard limit is wanted.

    Args:
        sentences (`Sequence[str]`): every sentence of every document of the cluster.
        scores (`Sequence[float]`): one score per sentence, higher is better (any scale; NaN is refused).
        max_words (`int`, *optional*, defaults to 250): the budget, ROUGE's ``-l``.
        redundancy (`float`, *optional*, defaults to 0.5): the largest share of a sentence's bigrams that may already
            be in the summary ("more than half" are redundant).
    """
    values = _check_scores(sentences, scores)
    check_settings(max_words=max_words, redundancy=redundancy)
    return _fill_budget(sentences, values, [], max_words, redundancy)


def min_max_scaled(values: Sequence[float]) -> list[float]:
    """Scores min-max scaled to [0, 1] within the cluster (all 1.0 when they are equal): MMR's trade-off and the
    concepts' weights need one scale whatever the model's (regressed ROUGE, logits, probabilities)."""
    low, high = min(values), max(values)
    if high <= low:
        return [1.0] * len(values)
    return [(value - low) / (high - low) for value in values]


def _cosine(left: Counter, right: Counter, left_norm: float, right_norm: float) -> float:
    if not left_norm or not right_norm:
        return 0.0
    if len(left) > len(right):
        left, right = right, left
    return sum(count * right.get(term, 0) for term, count in left.items()) / (left_norm * right_norm)


def select_mmr(
    sentences: Sequence[str],
    scores: Sequence[float],
    max_words: int = DUC_MAX_WORDS,
    tradeoff: float = 0.7,
) -> list[int]:
    """Maximal marginal relevance (Carbonell and Goldstein, 1998): indices of the chosen sentences, in the order
    they were chosen.

    Each step takes the sentence that maximises ``tradeoff * score - (1 - tradeoff) * similarity``, where ``score``
    is the sentence's score min-max scaled to [0, 1] within the cluster and ``similarity`` its largest cosine (ROUGE's
    stemmed unigrams) to a sentence already chosen; ties go to the original order. Selection stops once the summary
    holds ``max_words`` words, the crossing sentence included (ROUGE's ``-l`` cuts it), as in :func:`select_duc`.

    Args:
        sentences (`Sequence[str]`): every sentence of every document of the cluster.
        scores (`Sequence[float]`): one score per sentence, higher is better (NaN is refused).
        max_words (`int`, *optional*, defaults to 250): the budget, ROUGE's ``-l``.
        tradeoff (`float`, *optional*, defaults to 0.7): weight of the score against redundancy, in [0, 1]; 1 is
            plain ranking by score.
    """
    values = _check_scores(sentences, scores)
    check_settings(max_words=max_words, tradeoff=tradeoff)
    relevance = min_max_scaled(values) if values else []
    lengths = [count_words(sentence) for sentence in sentences]
    remaining = [index for index in range(len(sentences)) if lengths[index]]
    vectors = {index: sentence_ngrams(sentences[index], 1) for index in remaining}
    norms = {index: math.sqrt(sum(count * count for count in vector.values())) for index, vector in vectors.items()}
    similarity = dict.fromkeys(remaining, 0.0)
    chosen: list[int] = []
    words = 0
    while remaining and words < max_words:
        best = max(remaining, key=lambda index: (tradeoff * relevance[index] - (1 - tradeoff) * similarity[index],
                                                 -index))
        chosen.append(best)
        words += lengths[best]
        remaining.remove(best)
        for index in remaining:
            similarity[index] = max(similarity[index],
                                    _cosine(vectors[index], vectors[best], norms[index], norms[best]))
    return chosen


def select_ilp(
    sentences: Sequence[str],
    scores: Sequence[float],
    max_words: int = DUC_MAX_WORDS,
    candidates: int = 300,
    fill: bool = True,
    time_limit: float = 30.0,
    unigram_weight: float = 0.0,
    document_weight: float = 0.0,
    sentence_weight: float = 0.0,
    documents: Sequence[int] | None = None,
) -> list[int]:
    """Concept coverage by integer linear programming (Gillick and Favre, 2009): indices of the chosen sentences,
    in score order.

    The ``candidates`` best-scored sentences are the pool. Their concepts are the bigrams ROUGE-2 counts (ROUGE
    tokens, stemmed, inside each line; stop-word bigrams included, as ROUGE-2 includes them: leaving them out, as
    Gillick and Favre do, scored 0.2 ROUGE-2 lower on DUC 2006); a concept's weight is the sum of the scores, min-max scaled
    to [0, 1] over the pool, of the pool's sentences that hold it, so a bigram many good sentences share weighs most.
    The program picks sentences ``s_j`` and concepts ``c_i`` (binary) to maximise ``sum w_i c_i`` (plus a tie-break
    of 1e-6 times each chosen sentence's scaled score) under ``sum len_j s_j <= max_words``, with a concept counted
    only when a chosen sentence holds it; HiGHS solves it through ``scipy.optimize.milp``. The sentences come out by
    decreasing score. With ``fill`` (the default), the words the budget has left are filled as :func:`select_duc`
    would go on (next sentences by score, skipping redundant ones, the crossing one included for ROUGE's ``-l`` to
    cut), so the summary uses the whole budget as the greedy rule's does.

    Args:
        sentences (`Sequence[str]`): every sentence of every document of the cluster.
        scores (`Sequence[float]`): one score per sentence, higher is better (NaN is refused).
        max_words (`int`, *optional*, defaults to 250): the budget, ROUGE's ``-l``.
        candidates (`int`, *optional*, defaults to 300): how many of the best-scored sentences the program chooses
            from (the ICSI summarizer prunes the same way; the program grows with it).
        fill (`bool`, *optional*, defaults to `True`): fill the budget's remainder greedily.
        time_limit (`float`, *optional*, defaults to 30): seconds HiGHS may take; past it, its best solution so far.
        unigram_weight (`float`, *optional*, defaults to 0): unigram concepts beside the bigrams (ROUGE-1's units:
            stemmed ROUGE tokens, stop words included as ROUGE-1 counts them; a word every sentence holds adds the
            same to every choice), each weighing this times the scaled scores of the pool's sentences that hold it.
            0: bigrams only.
        document_weight (`float`, *optional*, defaults to 0): adds to each concept's weight this times the number of
            documents whose pool sentences hold it (Gillick and Favre weigh concepts by document frequency alone);
            needs ``documents``.
        sentence_weight (`float`, *optional*, defaults to 0): a chosen sentence's own value, this times its scaled
            score, beside the concepts it covers (0: the score only breaks ties).
        documents (`Sequence[int]`, *optional*): the document of each sentence, for ``document_weight``.

    Raises:
        RuntimeError: the solver returned no solution (it always has one: choosing nothing is feasible).
    """
    values = _check_scores(sentences, scores)
    _check_ilp_settings(len(sentences), max_words, candidates, unigram_weight, document_weight, sentence_weight,
                        documents)
    lengths = [count_words(sentence) for sentence in sentences]
    pool = [index for index in rank_by_score(values) if lengths[index]][:candidates]
    if not pool:
        return []
    relevance = min_max_scaled([values[index] for index in pool])
    weights, holds = _concepts(sentences, pool, relevance, unigram_weight, document_weight, documents)
    sentence_values = [(1e-6 + sentence_weight) * value for value in relevance]
    chosen = _solve_coverage([lengths[index] for index in pool], sentence_values, weights, holds, max_words,
                             time_limit)
    selected = [pool[position] for position in chosen]
    selected.sort(key=lambda index: (-values[index], index))
    if fill:
        selected = _fill_budget(sentences, values, selected, max_words)
    return selected


def _check_ilp_settings(n_sentences: int, max_words: int, candidates: int, unigram_weight: float,
                        document_weight: float, sentence_weight: float, documents: Sequence[int] | None) -> None:
    """Refuse settings of :func:`select_ilp` that name no program, in one line each."""
    check_settings(max_words=max_words, candidates=candidates, unigram_weight=unigram_weight,
                   document_weight=document_weight, sentence_weight=sentence_weight)
    if document_weight and documents is None:
        raise ValueError("document_weight weighs a concept by the documents that hold it; give each sentence's "
                         "document (documents=...)")
    if documents is not None and len(documents) != n_sentences:
        raise ValueError(f"documents gives {len(documents)} document(s) for {n_sentences} sentence(s)")


def _concepts(sentences: Sequence[str], pool: Sequence[int], relevance: Sequence[float], unigram_weight: float,
              document_weight: float, documents: Sequence[int] | None) -> tuple[list[float], list[tuple[int, int]]]:
    """The concepts of :func:`select_ilp`'s pool: each concept's weight and the ``(pool position, concept id)`` pairs
    of the sentences that hold it. Bigrams always; unigrams when ``unigram_weight``; plus
    ``document_weight`` times the documents holding a concept."""
    concept_ids: dict[Any, int] = {}
    weights: list[float] = []
    holds: list[tuple[int, int]] = []  # (pool position, concept id)
    holding_documents: list[set[int]] = []  # only when document_weight counts them
    counting = bool(document_weight) and documents is not None
    kinds = [(2, 1.0)] + ([(1, unigram_weight)] if unigram_weight else [])
    for position, index in enumerate(pool):
        for n, factor in kinds:
            for gram in sentence_ngrams(sentences[index], n):
                concept = concept_ids.setdefault((n, gram), len(concept_ids))
                if concept == len(weights):
                    weights.append(0.0)
                    if counting:
                        holding_documents.append(set())
                weights[concept] += factor * relevance[position]
                holds.append((position, concept))
                if counting:
                    holding_documents[concept].add(documents[index])
    if counting:
        weights = [weight + document_weight * len(held) for weight, held in zip(weights, holding_documents)]
    return weights, holds


def _solve_coverage(lengths: Sequence[int], relevance: Sequence[float], weights: Sequence[float],
                    holds: Sequence[tuple[int, int]], max_words: int, time_limit: float) -> list[int]:
    """The pool positions the concept-coverage program chooses (see :func:`select_ilp`); ``relevance`` is each
    sentence's own value in the objective.

    A concept that only one sentence of the pool holds is covered exactly when that sentence is chosen, so its
    weight moves onto the sentence's own variable and the concept leaves the program: the same optimum, a program a
    fraction of the size (most bigrams occur once)."""
    try:
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import coo_array
    except ImportError as error:
        raise ImportError(f"the 'ilp' selection rule solves its program with scipy (HiGHS): pip install scipy "
                          f"({error})") from None

    holders: dict[int, list[int]] = {}
    for position, concept in holds:
        holders.setdefault(concept, []).append(position)
    sentence_weights = list(relevance)  # at least the tie-break: the better-scored of equal covers
    shared = []
    for concept, positions in holders.items():
        if len(positions) == 1:
            sentence_weights[positions[0]] += weights[concept]
        else:
            shared.append(concept)
    renumber = {concept: new for new, concept in enumerate(shared)}
    holds = [(position, renumber[concept]) for position, concept in holds if concept in renumber]
    weights = [weights[concept] for concept in shared]
    n_sentences, n_concepts = len(lengths), len(weights)
    objective = -np.concatenate([np.asarray(sentence_weights, dtype=float), np.asarray(weights, dtype=float)])
    rows, columns, data = [], [], []
    for position, length in enumerate(lengths):  # row 0: the budget
        rows.append(0), columns.append(position), data.append(float(length))
    for row, (position, concept) in enumerate(holds, start=1):  # s_j - c_i <= 0: a chosen sentence covers its concepts
        rows += [row, row]
        columns += [position, n_sentences + concept]
        data += [1.0, -1.0]
    first = 1 + len(holds)
    for position, concept in holds:  # c_i - sum_j s_j <= 0: a concept counts only when a chosen sentence holds it
        rows.append(first + concept), columns.append(position), data.append(-1.0)
    for concept in range(n_concepts):
        rows.append(first + concept), columns.append(n_sentences + concept), data.append(1.0)
    matrix = coo_array((data, (rows, columns)), shape=(first + n_concepts, n_sentences + n_concepts)).tocsr()
    upper = np.zeros(first + n_concepts)
    upper[0] = max_words
    # HiGHS prints a few debug lines of its own (its solution repair) straight to file descriptor 1, whatever disp
    # says: they go to stderr, standard output is the caller's (`wikiref summarize --json`)
    with native_stdout_to_stderr():
        result = milp(objective, constraints=LinearConstraint(matrix, -np.inf, upper),
                      integrality=np.ones(n_sentences + n_concepts), bounds=Bounds(0, 1),
                      options={"time_limit": float(time_limit)})
    if result.x is None:
        raise RuntimeError(f"the concept-coverage program has no solution: {result.message}")
    return [position for position in range(n_sentences) if result.x[position] > 0.5]


_native_stdout_lock = threading.Lock()
_native_stdout_held = 0
_native_stdout_saved: int | None = None


@contextmanager
def native_stdout_to_stderr() -> Iterator[None]:
    """Within this block, whatever is written to file descriptor 1 goes to standard error instead. Native code writes
    there past ``sys.stdout`` (HiGHS, behind ``scipy.optimize.milp``, prints
    ``HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();`` when it repairs a solution, whatever
    ``disp`` says): ``contextlib.redirect_stdout`` does not see it, and on a command whose standard output is data
    (``wikiref summarize --json``) the line would corrupt it. On leaving, the C library's and Python's buffers are
    flushed and descriptor 1 put back, so nothing written inside reaches standard output later.

    Thread-safe: descriptor 1 is one per process, so blocks in several threads share one redirection, made by the
    first to enter and undone by the last to leave (no thread waits for another's block to end); what another thread
    prints on standard output meanwhile goes to standard error too. Where descriptor 1 or 2 is not open, the block
    changes nothing. Lives here, not in a helper module: this module is shipped as code with published models."""
    global _native_stdout_held, _native_stdout_saved
    with _native_stdout_lock:
        if _native_stdout_held == 0:
            _flush_stdout()
            try:
                _native_stdout_saved = os.dup(1)
            except OSError:
                _native_stdout_saved = None
            else:
                try:
                    os.dup2(2, 1)
                except OSError:
                    os.close(_native_stdout_saved)
                    _native_stdout_saved = None
        _native_stdout_held += 1
    try:
        yield
    finally:
        with _native_stdout_lock:
            _native_stdout_held -= 1
            if _native_stdout_held == 0 and _native_stdout_saved is not None:
                _flush_stdout()
                os.dup2(_native_stdout_saved, 1)
                os.close(_native_stdout_saved)
                _native_stdout_saved = None


def _flush_stdout() -> None:
    """Flush Python's ``sys.stdout`` and the C library's output buffers (a ``printf`` into a pipe waits there, and
    would reach descriptor 1 once it is put back); what cannot be flushed (a closed stream, no C library) is left."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):
        pass
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):
        pass


def _fill_budget(sentences: Sequence[str], values: Sequence[float], chosen: list[int], max_words: int,
                 redundancy: float = 0.5, whole: bool = False) -> list[int]:
    """``chosen`` followed by the greedy rule's choices from there (:func:`select_duc` is this from nothing): the next
    sentences by score while the summary is below ``max_words``, a sentence without words skipped, and one skipped
    when more than ``redundancy`` of its bigram occurrences are already in the summary. With ``whole``, a sentence
    longer than the words left is skipped too (the summary never passes the budget)."""
    selected = list(chosen)
    taken = set(selected)
    summary_bigrams: set = set()
    words = 0
    for index in selected:
        summary_bigrams.update(sentence_ngrams(sentences[index], 2))
        words += count_words(sentences[index])
    for index in rank_by_score(values):
        if words >= max_words:
            break
        if index in taken or not (length := count_words(sentences[index])) or (whole and words + length > max_words):
            continue
        bigrams = sentence_ngrams(sentences[index], 2)
        total = sum(bigrams.values())
        if total and sum(count for gram, count in bigrams.items() if gram in summary_bigrams) > redundancy * total:
            continue
        selected.append(index)
        summary_bigrams.update(bigrams)
        words += length
    return selected


BUDGETS = ("strict", "rouge")
"""How a cluster rule's summary meets its word budget: ``"strict"``, whole sentences and never more words than the
budget (:func:`within_budget`), what a reader gets; ``"rouge"``, the rule's own choice, whose last sentence may cross
the budget for ROUGE's ``-l`` to cut, as DUC systems submit and DUC evaluation scores them."""


def within_budget(sentences: Sequence[str], scores: Sequence[float], indices: Sequence[int], max_words: int,
                  redundancy: float = 0.5) -> list[int]:
    """A cluster rule's choice (``indices``) as a reader gets it: whole sentences, never more than ``max_words``
    words. The rule's sentences are kept, in its order, while each fits in the words left (the sentence that crosses
    the budget, which ROUGE's ``-l`` would cut mid-way, is dropped, and so is any later one that does not fit); the
    words still left are filled as the greedy rule fills a budget (:func:`select_duc`'s order, redundant sentences
    skipped), with sentences that fit whole.

    Raises:
        ValueError: ``max_words`` or ``redundancy`` out of range, or scores that do not fit the sentences.
    """
    values = _check_scores(sentences, scores)
    check_settings(max_words=max_words, redundancy=redundancy)
    kept, words = [], 0
    for index in indices:
        length = count_words(sentences[index])
        if words + length <= max_words:
            kept.append(index)
            words += length
    return _fill_budget(sentences, values, kept, max_words, redundancy, whole=True)


CLUSTER_RULES = ("duc", "mmr", "ilp")
"""The multi-document selection rules by name: the paper's greedy rule (:func:`select_duc`), :func:`select_mmr` and
:func:`select_ilp`."""

RULE_SETTINGS = {"duc": ("redundancy",), "mmr": ("tradeoff",),
                 "ilp": ("candidates", "fill", "time_limit", "unigram_weight", "document_weight", "sentence_weight",
                         "documents")}
"""The settings each cluster rule takes (its function's keyword arguments besides ``max_words``)."""


def check_rule(rule: str) -> str:
    """``rule`` when it names one of :data:`CLUSTER_RULES`.

    Raises:
        ValueError: an unknown rule, in one line that names the rules there are.
    """
    if rule not in CLUSTER_RULES:
        raise ValueError(f"unknown selection rule {rule!r}; choose one of {', '.join(CLUSTER_RULES)}")
    return rule


def rule_settings(rule: str, **given: Any) -> dict[str, Any]:
    """Of ``given`` (every rule's settings, ``None`` where not set), the ones ``rule`` takes and that are set: a caller
    that offers all the rules' settings at once (the pipeline, ``wikiref rescore``) passes on only the chosen rule's."""
    return {name: given[name] for name in RULE_SETTINGS.get(rule, ()) if given.get(name) is not None}


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _in_unit_interval(value: Any) -> bool:
    return _is_number(value) and 0.0 <= value <= 1.0


def _at_least_one(value: Any) -> bool:
    return _is_number(value) and value >= 1


def _whole_at_least_one(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1


def _finite_non_negative(value: Any) -> bool:
    return _is_number(value) and 0.0 <= value < math.inf


def _positive(value: Any) -> bool:
    return _is_number(value) and 0.0 < value < math.inf


SETTING_RANGES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "max_words": (_at_least_one, "must be at least 1"),
    "redundancy": (_in_unit_interval, "must lie in [0, 1]"),
    "tradeoff": (_in_unit_interval, "must lie in [0, 1]"),
    "candidates": (_whole_at_least_one, "must be a whole number of 1 or more"),
    "time_limit": (_positive, "must be a number above 0"),
    "unigram_weight": (_finite_non_negative, "must be a number of 0 or more"),
    "document_weight": (_finite_non_negative, "must be a number of 0 or more"),
    "sentence_weight": (_finite_non_negative, "must be a number of 0 or more"),
}
"""Each numeric setting of the selection rules, with its test and how its error says the range."""


def check_settings(**settings: Any) -> None:
    """Refuse a selection setting outside its range (:data:`SETTING_RANGES`; ``None`` is "not set"), in one line
    that names it: ``tradeoff must lie in [0, 1], got 3``.

    The one check of these values: the rules run it, and so do the callers that take them from a user before
    anything slow starts (the pipeline's parameters, ``wikiref summarize``, ``wikiref rescore``), which put ``--``
    before the message.

    Raises:
        ValueError: the first setting out of range.
    """
    for name, value in settings.items():
        if value is None or name not in SETTING_RANGES:
            continue
        accepts, expected = SETTING_RANGES[name]
        if not accepts(value):
            raise ValueError(f"{name} {expected}, got {value}")


def select_cluster(rule: str, sentences: Sequence[str], scores: Sequence[float], max_words: int = DUC_MAX_WORDS,
                   **settings: Any) -> list[int]:
    """The chosen sentences of the multi-document rule named ``rule`` (one of :data:`CLUSTER_RULES`), with that
    rule's own ``settings`` (:data:`RULE_SETTINGS`: ``redundancy`` for ``"duc"``, ``tradeoff`` for ``"mmr"``,
    ``candidates`` for ``"ilp"``).

    Raises:
        ValueError: an unknown rule, or a setting the rule does not take.
    """
    functions = {"duc": select_duc, "mmr": select_mmr, "ilp": select_ilp}
    check_rule(rule)
    unknown = sorted(set(settings) - set(RULE_SETTINGS[rule]))
    if unknown:
        raise ValueError(f"selection rule {rule!r} takes no setting {', '.join(unknown)} "
                         f"(it takes {', '.join(sorted(RULE_SETTINGS[rule]))})")
    return functions[rule](sentences, scores, max_words=max_words, **settings)


def select_wikiref(
    sentences: Sequence[str],
    scores: Sequence[float],
    threshold: float,
    max_sentences: int | None = None,
    min_sentences: int = 1,
) -> list[int]:
    """WikiRef selection: indices of the chosen sentences, in score order.

    Sentences are taken by decreasing score (ties: original order) while their score exceeds ``threshold``
    (strictly); one that shares a trigram (ROUGE tokens, stemmed) with the summary so far is skipped (trigram
    blocking), as is one without any word.

    When fewer than ``min_sentences`` pass the threshold, the best-ranked non-blocked sentences below it are added
    until there are ``min_sentences``: by default a summary is never empty (the top-1 sentence), because an empty
    summary scores 0 whatever the document and a too-high threshold on one example should not make it worthless.
    Pass ``min_sentences=0`` for the strict rule.

    Args:
        sentences (`Sequence[str]`): the document's sentences.
        scores (`Sequence[float]`): one score per sentence, higher is better.
        threshold (`float`): a sentence is added only if its score is above this (see ``min_sentences``).
        max_sentences (`int`, *optional*): at most this many sentences (``None``: no limit).
        min_sentences (`int`, *optional*, defaults to 1): at least this many sentences when the document has them.
    """
    values = _check_scores(sentences, scores)
    if max_sentences is not None and max_sentences < 1:
        raise ValueError(f"max_sentences must be >= 1 or None, got {max_sentences}")
    if min_sentences < 0:
        raise ValueError(f"min_sentences must be >= 0, got {min_sentences}")
    limit = len(values) if max_sentences is None else max_sentences
    chosen: list[int] = []
    summary_trigrams: set = set()
    for index in rank_by_score(values):
        if len(chosen) >= limit or (values[index] <= threshold and len(chosen) >= min_sentences):
            break
        sentence = sentences[index]
        if count_words(sentence) == 0:
            continue
        trigrams = sentence_ngrams(sentence, 3)
        if not summary_trigrams.isdisjoint(trigrams):
            continue
        chosen.append(index)
        summary_trigrams.update(trigrams)
    return chosen


def summary_text(sentences: Sequence[str], indices: Iterable[int], max_words: int | None = None) -> str:
    """The selected sentences, one per line (``"\\n"``-joined, in the order of ``indices``), as ROUGE reads a summary.

    With ``max_words``, the text is cut the way ROUGE's ``-l`` cuts it (whole lines while below the budget, the
    crossing line cut to the remaining words), for outputs that must respect the limit on their own.
    """
    lines = [sentences[index] for index in indices]
    if max_words is not None:
        lines = truncate_lines(lines, max_words)
    return "\n".join(lines)


# ---- WikiRef threshold tuning ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThresholdSearch:
    """The threshold with the best mean ROUGE-2 F1 on the dev examples, and every candidate's mean.

    ``table`` holds ``(threshold, mean ROUGE-2 F1)`` for each candidate, in increasing threshold order.
    """

    best_threshold: float
    best_rouge2_f1: float
    table: tuple[tuple[float, float], ...]


def _default_candidates(scores: Sequence[float], steps: int = 20) -> list[float]:
    """Quantiles 0, 1/steps, …, (steps-1)/steps of the pooled scores: the candidates follow the score scale of
    whatever produced them (sigmoid probabilities or regressed ROUGE values)."""
    ordered = sorted(scores)
    if not ordered:
        return [0.0]
    return sorted({ordered[min(len(ordered) - 1, (len(ordered) * step) // steps)] for step in range(steps)})


def tune_threshold(
    examples: Iterable[tuple[Sequence[str], Sequence[float], str | Sequence[str]]],
    candidates: Sequence[float] | None = None,
    max_sentences: int | None = None,
    min_sentences: int = 1,
) -> ThresholdSearch:
    """Pick the :func:`select_wikiref` threshold that maximises the mean ROUGE-2 F1 over dev examples.

    ROUGE-2 F1 is the ROUGE-1.5.5 engine's per-item F (stemmed, no word limit) against the example's reference (a
    string, or a list of references scored with ``-f A``). Ties go to the smallest threshold.

    Args:
        examples: ``(sentences, scores, reference_summary)`` per dev example.
        candidates (`Sequence[float]`, *optional*): thresholds to try; by default 20 quantiles of the pooled scores
            (0 %, 5 %, …, 95 %).
        max_sentences, min_sentences: passed to :func:`select_wikiref`.
    """
    scorer = _scorer()
    prepared = []
    for position, (sentences, scores, reference) in enumerate(examples):
        references = [reference] if isinstance(reference, str) else list(reference)
        try:
            values = _check_scores(sentences, scores)
        except (TypeError, ValueError) as error:
            raise type(error)(f"example {position}: {error}") from error
        if not references:
            raise ValueError(f"example {position}: no reference summary")
        prepared.append((list(sentences), values, [scorer.analyze(text) for text in references]))
    if not prepared:
        raise ValueError("tune_threshold needs at least one dev example")
    if candidates is None:
        candidates = _default_candidates([value for _, values, _ in prepared for value in values])
    thresholds = sorted({float(value) for value in candidates})
    if not thresholds:
        raise ValueError("tune_threshold needs at least one candidate threshold")
    table = []
    for threshold in thresholds:
        total = 0.0
        for sentences, values, references in prepared:
            chosen = select_wikiref(sentences, values, threshold, max_sentences, min_sentences)
            if not chosen:
                continue  # empty summary: F1 = 0
            system = scorer.analyze(summary_text(sentences, chosen))
            total += scorer.score_analyzed(system, references)["rouge_2"].f
        table.append((threshold, total / len(prepared)))
    best_threshold, best_f1 = max(table, key=lambda row: (row[1], -row[0]))
    return ThresholdSearch(best_threshold=best_threshold, best_rouge2_f1=best_f1, table=tuple(table))


# ---- DUC clusters ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterSentences:
    """A cluster's documents as one flat list of sentences, for selection across the cluster.

    ``positions[k] = (document index, sentence index)`` of flat sentence ``k``; ``offsets[d]`` is where document
    ``d`` starts in the flat list (``offsets[-1] == len(sentences)``).

    Example:
        >>> cluster = ClusterSentences.from_row(duc_row)
        >>> scores = cluster.flatten_scores(model_scores_per_document)   # one list per document
        >>> summary = cluster.summary(select_duc(cluster.sentences, scores))
    """

    sentences: tuple[str, ...]
    positions: tuple[tuple[int, int], ...]
    offsets: tuple[int, ...]

    @classmethod
    def from_documents(cls, documents: Sequence[Sequence[str]]) -> ClusterSentences:
        """From each document's sentence list."""
        sentences: list[str] = []
        positions: list[tuple[int, int]] = []
        offsets = [0]
        for doc_index, document in enumerate(documents):
            if isinstance(document, str):
                raise TypeError(f"document {doc_index} must be a list of sentences, got a string")
            for sent_index, sentence in enumerate(document):
                sentences.append(sentence)
                positions.append((doc_index, sent_index))
            offsets.append(len(sentences))
        return cls(tuple(sentences), tuple(positions), tuple(offsets))

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ClusterSentences:
        """From a DUC dataset row (``row["documents"][d]["sentences"]``)."""
        return cls.from_documents([document["sentences"] for document in row["documents"]])

    @property
    def n_documents(self) -> int:
        return len(self.offsets) - 1

    def __len__(self) -> int:
        return len(self.sentences)

    def document_sentences(self, doc_index: int) -> tuple[str, ...]:
        """The sentences of document ``doc_index``."""
        return self.sentences[self.offsets[doc_index]:self.offsets[doc_index + 1]]

    def flatten_scores(self, per_document: Sequence[Sequence[float]]) -> list[float]:
        """One list of scores per document → one score per flat sentence (checked against the document lengths)."""
        if len(per_document) != self.n_documents:
            raise ValueError(f"got scores for {len(per_document)} documents, the cluster has {self.n_documents}")
        flat: list[float] = []
        for doc_index, scores in enumerate(per_document):
            expected = self.offsets[doc_index + 1] - self.offsets[doc_index]
            if len(scores) != expected:
                raise ValueError(f"document {doc_index}: got {len(scores)} scores for {expected} sentences")
            flat.extend(float(score) for score in scores)
        return flat

    def select(self, scores: Sequence[float], max_words: int = DUC_MAX_WORDS, redundancy: float = 0.5,
               rule: str = "duc", **settings: Any) -> list[int]:
        """The chosen flat indices: :func:`select_duc` over the cluster's sentences, or the rule named ``rule``
        (:func:`select_cluster`, with that rule's ``settings``)."""
        if rule == "duc":
            settings = {"redundancy": redundancy, **settings}
        if rule == "ilp" and settings.get("document_weight") and settings.get("documents") is None:
            settings = {**settings, "documents": [document for document, _ in self.positions]}
        return select_cluster(rule, self.sentences, scores, max_words=max_words, **settings)

    def summary(self, indices: Iterable[int], max_words: int | None = None) -> str:
        """:func:`summary_text` of flat indices."""
        return summary_text(self.sentences, indices, max_words=max_words)
