"""Selection rules: DUC (bigram redundancy, 250-word budget, truncation), WikiRef (threshold, trigram blocking,
threshold tuning) and the cluster flattening helper."""

import math

import numpy as np
import pytest

from wikiref_dataset.rouge import RougeConfig, RougeScorer
from wikiref_dataset.selection import (
    ClusterSentences,
    rank_by_score,
    select_duc,
    select_wikiref,
    summary_text,
    tune_threshold,
)

# ---- DUC rule ----------------------------------------------------------------------------------------------------


def test_score_order_and_ties_keep_original_order():
    assert rank_by_score([0.1, 0.5, 0.5, 0.9]) == [3, 1, 2, 0]
    assert select_duc(["a b c", "d e f", "g h i"], [0.1, 0.5, 0.5]) == [1, 2, 0]


def test_more_than_half_of_the_bigrams_in_the_summary_is_redundant():
    sentences = [
        "the cat sat on the mat",      # first: 5 bigrams
        "the cat sat on a hat",        # the cat, cat sat, sat on already in: 3/5 > 1/2 -> skipped
        "the cat sat down fast",       # the cat, cat sat: 2/4 = 1/2, not more than half -> kept
        "The cats sat on the mats.",   # stemmed (cats -> cat, mats -> mat): 5/5 -> skipped
        "a dog ran",                   # 0/2 -> kept
    ]
    assert select_duc(sentences, [5, 4, 3, 2, 1]) == [0, 2, 4]
    assert select_duc(sentences, [5, 4, 3, 2, 1], redundancy=0.0) == [0, 4]  # any shared bigram
    assert select_duc(sentences, [5, 4, 3, 2, 1], redundancy=1.0) == [0, 1, 2, 3, 4]


def test_budget_includes_the_crossing_sentence_and_stops():
    sentences = ["w1 w2 w3 w4", "x1 x2 x3 x4", "y1 y2 y3 y4", "z1 z2 z3 z4"]
    scores = [4, 3, 2, 1]
    assert select_duc(sentences, scores, max_words=10) == [0, 1, 2]  # 8 < 10, the third crosses: 12
    assert select_duc(sentences, scores, max_words=8) == [0, 1]  # exactly 8: the budget is full
    assert select_duc(sentences, scores, max_words=1) == [0]


def test_budget_counts_words_as_rouge_l_does():
    # "U.S.-led" is one word for ROUGE's -l (whitespace fields) though it gives three ROUGE tokens.
    sentences = ["U.S.-led forces attacked.", "second sentence here", "third one"]
    assert select_duc(sentences, [3, 2, 1], max_words=6) == [0, 1]  # 3 + 3 = 6 words


def test_empty_and_one_word_sentences():
    assert select_duc(["", "   ", "a b"], [3, 2, 1]) == [2]  # no word: never selected
    assert select_duc(["Yes.", "Yes."], [2, 1]) == [0, 1]  # no bigram: never redundant


def test_truncation_matches_rouge():
    sentences = [" ".join(f"s{i}w{j}" for j in range(40)) for i in range(10)]
    chosen = select_duc(sentences, list(range(10, 0, -1)))
    assert chosen == list(range(7))  # 6 x 40 = 240 < 250, the 7th crosses
    text = summary_text(sentences, chosen)
    cut = summary_text(sentences, chosen, max_words=250)
    assert len(cut.split()) == 250 and cut.split("\n")[-1] == " ".join(f"s6w{j}" for j in range(10))
    # What the metric reads (-l 250) is the cut summary.
    assert RougeScorer().analyze(text).tokens == RougeScorer(RougeConfig(word_limit=None)).analyze(cut).tokens


def test_summary_text_joins_in_selection_order():
    assert summary_text(["a b c", "d e"], [1, 0]) == "d e\na b c"
    assert summary_text(["a b c", "d e"], [1, 0], max_words=3) == "d e\na"


def test_bad_inputs():
    with pytest.raises(ValueError, match="2 scores for 3 sentences"):
        select_duc(["a", "b", "c"], [1, 2])
    with pytest.raises(ValueError, match="score 1 is NaN"):
        select_duc(["a", "b"], [1, math.nan])
    with pytest.raises(TypeError, match="not one string"):
        select_duc("a b", [1, 2, 3])
    with pytest.raises(ValueError, match="max_words"):
        select_duc(["a"], [1], max_words=0)
    with pytest.raises(ValueError, match="redundancy"):
        select_duc(["a"], [1], redundancy=1.5)


def test_array_scores():
    assert select_duc(["a b", "c d"], np.array([0.1, 0.9], dtype=np.float32)) == [1, 0]


# ---- WikiRef rule ------------------------------------------------------------------------------------------------

WIKI_SENTENCES = ["alpha beta gamma delta", "beta gamma delta epsilon", "zeta eta theta", "iota kappa"]
WIKI_SCORES = [0.9, 0.8, 0.7, 0.2]


def test_threshold_and_trigram_blocking():
    # sentence 1 shares "beta gamma delta" with sentence 0; sentence 3 is below the threshold
    assert select_wikiref(WIKI_SENTENCES, WIKI_SCORES, threshold=0.5) == [0, 2]
    assert select_wikiref(WIKI_SENTENCES, WIKI_SCORES, threshold=0.7) == [0]  # strictly above
    assert select_wikiref(WIKI_SENTENCES, WIKI_SCORES, threshold=0.0, max_sentences=2) == [0, 2]
    assert select_wikiref(WIKI_SENTENCES, WIKI_SCORES, threshold=0.0) == [0, 2, 3]
    # trigrams are stemmed ROUGE tokens: "cats sat down" and "cat sat down" are one trigram
    assert select_wikiref(["The cats sat down.", "A cat sat down."], [2, 1], threshold=0) == [0]


def test_no_sentence_above_the_threshold():
    assert select_wikiref(WIKI_SENTENCES, WIKI_SCORES, threshold=0.95) == [0]  # the top-1 sentence
    assert select_wikiref(WIKI_SENTENCES, WIKI_SCORES, threshold=0.95, min_sentences=0) == []
    assert select_wikiref(WIKI_SENTENCES, WIKI_SCORES, threshold=0.95, min_sentences=2) == [0, 2]  # 1 is blocked
    assert select_wikiref([], [], threshold=0.5) == []
    with pytest.raises(ValueError, match="max_sentences"):
        select_wikiref(WIKI_SENTENCES, WIKI_SCORES, 0.5, max_sentences=0)


DEV = [
    (["the cat sat on the mat", "dogs run in the park"], [0.9, 0.2], "the cat sat on the mat"),
    (["birds fly south", "fish swim in the sea"], [0.6, 0.4], ["fish swim in the sea"]),
]


def test_tune_threshold_hand_computed():
    search = tune_threshold(DEV, candidates=[0.5, 0.0, 0.3])
    # t=0.0: example 1 takes both sentences: 10 system bigrams ("mat dog" spans the line break), 5 hits:
    #        R=1, P=0.5, F=0.66667; example 2 takes both: 7 bigrams, 4 hits: R=1, P=0.57143, F=0.72727.
    # t=0.3: example 1 takes sentence 0 only (F=1), example 2 both (F=0.72727).
    # t=0.5: example 1 F=1; example 2 takes "birds fly south" (F=0).
    expected = [(0.0, (0.66667 + 0.72727) / 2), (0.3, (1 + 0.72727) / 2), (0.5, 0.5)]
    assert [threshold for threshold, _ in search.table] == [0.0, 0.3, 0.5]
    for (_, value), (_, want) in zip(search.table, expected):
        assert value == pytest.approx(want, abs=1e-5)
    assert search.best_threshold == 0.3
    assert search.best_rouge2_f1 == pytest.approx(0.863635, abs=1e-5)


def test_tune_threshold_ties_and_default_candidates():
    # 0.5 and 0.7 give the same summaries (at 0.7 example 2 falls back to its top-1 sentence): the smaller wins
    assert tune_threshold(DEV, candidates=[0.7, 0.5]).best_threshold == 0.5
    search = tune_threshold(DEV)
    assert [threshold for threshold, _ in search.table] == [0.2, 0.4, 0.6, 0.9]  # quantiles of the pooled scores
    assert search.best_threshold == 0.2  # same selections as 0.3
    with pytest.raises(ValueError, match="at least one dev example"):
        tune_threshold([])
    with pytest.raises(ValueError, match="example 0: got 1 scores for 2 sentences"):
        tune_threshold([(["a", "b"], [1], "a")])


# ---- clusters ----------------------------------------------------------------------------------------------------

ROW = {"documents": [{"docno": "A", "sentences": ["a one.", "a two."]}, {"docno": "B", "sentences": ["b one."]}]}


def test_cluster_sentences():
    cluster = ClusterSentences.from_row(ROW)
    assert cluster.sentences == ("a one.", "a two.", "b one.")
    assert cluster.positions == ((0, 0), (0, 1), (1, 0))
    assert cluster.offsets == (0, 2, 3) and cluster.n_documents == 2 and len(cluster) == 3
    assert cluster.document_sentences(1) == ("b one.",)
    scores = cluster.flatten_scores([[0.1, 0.9], [0.5]])
    assert scores == [0.1, 0.9, 0.5]
    assert cluster.summary(cluster.select(scores)) == "a two.\nb one.\na one."


def test_cluster_score_shape_errors():
    cluster = ClusterSentences.from_row(ROW)
    with pytest.raises(ValueError, match="scores for 1 documents, the cluster has 2"):
        cluster.flatten_scores([[0.1, 0.9]])
    with pytest.raises(ValueError, match="document 1: got 2 scores for 1 sentences"):
        cluster.flatten_scores([[0.1, 0.9], [0.5, 0.4]])
    with pytest.raises(TypeError, match="document 0"):
        ClusterSentences.from_documents(["not a list"])
