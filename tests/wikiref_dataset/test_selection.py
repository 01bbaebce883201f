"""Selection rules: DUC (bigram redundancy, 250-word budget, truncation), WikiRef (threshold, trigram blocking,
threshold tuning) and the cluster flattening helper."""

import functools
import math
import subprocess
import sys

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


# ---- MMR and concept coverage (ILP) ------------------------------------------------------------------------------

from itertools import combinations  # noqa: E402

from wikiref_dataset import selection  # noqa: E402
from wikiref_dataset.rouge import count_words  # noqa: E402
from wikiref_dataset.selection import CLUSTER_RULES, select_cluster, select_ilp, select_mmr  # noqa: E402

NEWS = [
    "storm floods the coastal town of harbor bay",       # 0: best score
    "storm floods the coastal town of harbor bay again",  # 1: nearly the same sentence
    "rescue teams evacuate families from flooded homes",  # 2: new content
    "officials estimate damage at ten million dollars",   # 3: new content
]


def test_mmr_with_tradeoff_one_ranks_by_score_and_below_one_skips_a_near_copy():
    scores = [0.9, 0.85, 0.6, 0.5]
    assert select_mmr(NEWS, scores, max_words=15, tradeoff=1.0) == [0, 1]
    assert select_mmr(NEWS, scores, max_words=15, tradeoff=0.5) == [0, 2]  # 0.5*0.875 - 0.5*0.93 < 0.5*0.25


def test_ilp_covers_new_concepts_where_the_greedy_rule_takes_a_near_copy():
    scores = [0.9, 0.85, 0.6, 0.5]
    greedy = select_duc(NEWS, scores, max_words=16, redundancy=1.0)
    assert greedy[:2] == [0, 1]
    chosen = select_ilp(NEWS, scores, max_words=16, fill=False)
    assert not {0, 1} <= set(chosen) and 2 in chosen  # one of the near copies (1 holds all of 0's bigrams), new news
    assert sum(count_words(NEWS[index]) for index in chosen) <= 16
    assert chosen == sorted(chosen, key=lambda index: -scores[index])  # score order out


def _coverage(sentences, scores, chosen, pool):
    """The program's objective, by hand: concepts of the pool weighted by the min-max scaled scores of the pool's
    sentences that hold them, counted once when a chosen sentence holds them."""
    values = [scores[index] for index in pool]
    low, high = min(values), max(values)
    scaled = {index: (scores[index] - low) / (high - low) for index in pool}
    weight: dict = {}
    for index in pool:
        for gram in selection.sentence_ngrams(sentences[index], 2):
            weight[gram] = weight.get(gram, 0.0) + scaled[index]
    covered = set().union(*(set(selection.sentence_ngrams(sentences[index], 2)) for index in chosen)) if chosen else set()
    return sum(weight[gram] for gram in covered)


@pytest.mark.parametrize("seed", range(6))
def test_ilp_finds_the_best_cover_that_brute_force_finds(seed):
    rng = np.random.default_rng(seed)
    vocabulary = "storm flood rain wind town city river bank family school road bridge power water help".split()
    sentences = [" ".join(rng.choice(vocabulary, size=int(rng.integers(3, 8)))) for _ in range(9)]
    scores = list(rng.random(9))
    budget = 14
    pool = sorted(range(9), key=lambda index: -scores[index])[:7]
    chosen = select_ilp(sentences, scores, max_words=budget, candidates=7, fill=False)
    assert set(chosen) <= set(pool)
    assert sum(count_words(sentences[index]) for index in chosen) <= budget
    best = max(_coverage(sentences, scores, subset, pool) for size in range(len(pool) + 1)
               for subset in combinations(pool, size) if sum(count_words(sentences[i]) for i in subset) <= budget)
    assert _coverage(sentences, scores, chosen, pool) == pytest.approx(best, abs=1e-4)


def _weighted_objective(sentences, scores, chosen, pool, documents, unigram, per_document, own):
    """The program's objective with every setting, by hand: bigram concepts weighted by the pool's scaled scores,
    unigram concepts by ``unigram`` times them, each concept plus ``per_document`` per document whose pool sentences
    hold it, and each chosen sentence's own scaled score times ``own``."""
    values = [scores[index] for index in pool]
    low, high = min(values), max(values)
    scaled = {index: (scores[index] - low) / (high - low) for index in pool}
    weight: dict = {}
    held: dict = {}
    for index in pool:
        for n, factor in ((2, 1.0), (1, unigram)):
            for gram in selection.sentence_ngrams(sentences[index], n):
                weight[(n, gram)] = weight.get((n, gram), 0.0) + factor * scaled[index]
                held.setdefault((n, gram), set()).add(documents[index])
    covered = {(n, gram) for index in chosen for n in (1, 2) for gram in selection.sentence_ngrams(sentences[index], n)}
    return (sum(weight[concept] + per_document * len(held[concept]) for concept in covered)
            + own * sum(scaled[index] for index in chosen))


@pytest.mark.parametrize("seed", range(4))
def test_ilp_with_unigram_document_and_sentence_weights_finds_the_best_choice(seed):
    rng = np.random.default_rng(100 + seed)
    vocabulary = "storm flood rain wind town city river bank family school road bridge power water help".split()
    sentences = [" ".join(rng.choice(vocabulary, size=int(rng.integers(3, 8)))) for _ in range(9)]
    scores = list(rng.random(9))
    documents = [int(value) for value in rng.integers(0, 3, size=9)]
    settings = {"unigram_weight": 0.5, "document_weight": 0.3, "sentence_weight": 0.7}
    pool = sorted(range(9), key=lambda index: -scores[index])[:7]
    chosen = select_ilp(sentences, scores, max_words=14, candidates=7, fill=False, documents=documents, **settings)
    assert set(chosen) <= set(pool) and sum(count_words(sentences[index]) for index in chosen) <= 14
    objective = functools.partial(_weighted_objective, sentences, scores, pool=pool, documents=documents,
                                  unigram=0.5, per_document=0.3, own=0.7)
    best = max(objective(subset) for size in range(len(pool) + 1) for subset in combinations(pool, size)
               if sum(count_words(sentences[i]) for i in subset) <= 14)
    assert objective(chosen) == pytest.approx(best, abs=1e-4)
    assert _coverage(sentences, scores, select_ilp(sentences, scores, max_words=14, candidates=7, fill=False),
                     pool) >= _coverage(sentences, scores, chosen, pool) - 1e-9  # the default: bigrams alone


def test_ilp_settings_reach_it_through_the_cluster_and_bad_values_are_refused():
    scores = [0.9, 0.85, 0.6, 0.5]
    cluster = ClusterSentences.from_documents([NEWS[:2], NEWS[2:]])
    assert cluster.select(scores, max_words=16, rule="ilp", document_weight=0.5) == select_ilp(
        NEWS, scores, max_words=16, document_weight=0.5, documents=[0, 0, 1, 1])  # the cluster names the documents
    assert select_cluster("ilp", NEWS, scores, max_words=16, unigram_weight=0.0) == select_ilp(NEWS, scores, 16)
    for name, value, message in (("unigram_weight", -1.0, "unigram_weight must be a number of 0 or more, got -1"),
                                 ("sentence_weight", math.nan, "sentence_weight must be a number of 0 or more"),
                                 ("document_weight", math.inf, "document_weight must be a number of 0 or more")):
        with pytest.raises(ValueError, match=message):
            select_ilp(NEWS, scores, documents=[0, 0, 1, 1], **{name: value})
    with pytest.raises(ValueError, match="give each sentence's document"):
        select_ilp(NEWS, scores, document_weight=0.5)
    with pytest.raises(ValueError, match="documents gives 2 document"):
        select_ilp(NEWS, scores, documents=[0, 1])


def test_ilp_fill_uses_the_whole_budget_as_the_greedy_rule_does():
    sentences = [f"sentence number {word} speaks of {word} things" for word in "one two three four five six".split()]
    scores = [0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
    unfilled = select_ilp(sentences, scores, max_words=20, fill=False)
    filled = select_ilp(sentences, scores, max_words=20)
    assert filled[:len(unfilled)] == unfilled and len(filled) == len(unfilled) + 1
    assert sum(count_words(sentences[index]) for index in filled) >= 20  # ROUGE's -l cuts the crossing one


def test_cluster_rules_by_name_and_their_errors():
    assert CLUSTER_RULES == ("duc", "mmr", "ilp")
    scores = [0.9, 0.85, 0.6, 0.5]
    assert select_cluster("duc", NEWS, scores, max_words=16) == select_duc(NEWS, scores, max_words=16)
    assert select_cluster("mmr", NEWS, scores, max_words=16, tradeoff=0.5) == select_mmr(NEWS, scores, 16, 0.5)
    cluster = ClusterSentences.from_documents([NEWS[:2], NEWS[2:]])
    assert cluster.select(scores, max_words=16, rule="ilp") == select_ilp(NEWS, scores, max_words=16)
    with pytest.raises(ValueError, match="unknown selection rule 'best'"):
        select_cluster("best", NEWS, scores)
    with pytest.raises(ValueError, match="'mmr' takes no setting candidates"):
        select_cluster("mmr", NEWS, scores, candidates=3)
    with pytest.raises(ValueError, match="candidates must be a whole number of 1 or more"):
        select_ilp(NEWS, scores, candidates=0)
    with pytest.raises(ValueError, match=r"tradeoff must lie in \[0, 1\]"):
        select_mmr(NEWS, scores, tradeoff=1.5)
    with pytest.raises(ValueError, match="score 1 is NaN"):
        select_ilp(NEWS, [0.1, math.nan, 0.2, 0.3])
    assert select_ilp(["", " "], [0.5, 0.4]) == [] and select_mmr([], []) == []


def test_within_budget_keeps_the_rules_sentences_that_fit_and_fills_with_whole_ones():
    sentences = ["one two three four five six seven eight",  # 8 words, best
                 "a b c d e f g h i j k l",                  # 12 words: crosses a 16-word budget after the first
                 "short one here",                           # 3 words
                 "tiny",                                     # 1 word
                 "last words of all four"]                   # 5 words
    scores = [0.9, 0.8, 0.3, 0.2, 0.1]
    rule = select_duc(sentences, scores, max_words=16)
    assert rule == [0, 1]  # the rule's own choice crosses the budget (8 + 12 words) for ROUGE's -l to cut
    kept = selection.within_budget(sentences, scores, rule, max_words=16)
    assert kept == [0, 2, 3]  # the crossing sentence dropped, the words left filled by score with whole sentences
    assert sum(count_words(sentences[index]) for index in kept) <= 16
    assert selection.within_budget(sentences, scores, [0], max_words=16) == [0, 2, 3]
    assert selection.within_budget(sentences, scores, [1, 0], max_words=12) == [1]  # the rule's order, while it fits
    assert selection.within_budget(sentences, scores, [], max_words=2) == [3]
    with pytest.raises(ValueError, match="max_words must be at least 1, got 0"):
        selection.within_budget(sentences, scores, rule, max_words=0)


@pytest.mark.parametrize("seed", range(6))
def test_within_budget_never_passes_the_budget_and_keeps_what_fits_of_every_rule(seed):
    rng = np.random.default_rng(seed)
    vocabulary = "storm flood town harbor bay rescue team family home damage million dollar river rain".split()
    sentences = [" ".join(rng.choice(vocabulary, size=int(rng.integers(1, 30)))) for _ in range(40)]
    scores = rng.random(40).tolist()
    for rule in CLUSTER_RULES:
        for budget in (5, 40, 100):
            chosen = select_cluster(rule, sentences, scores, max_words=budget)
            kept = selection.within_budget(sentences, scores, chosen, max_words=budget)
            assert sum(count_words(sentences[index]) for index in kept) <= budget, (rule, budget)
            fitting, words = [], 0
            for index in chosen:  # the rule's sentences, in its order, while each fits
                if words + count_words(sentences[index]) <= budget:
                    fitting.append(index)
                    words += count_words(sentences[index])
            assert kept[:len(fitting)] == fitting and len(set(kept)) == len(kept)


GUARDED_WRITES = r'''
import ctypes, os, sys, threading
from wikiref_dataset.selection import native_stdout_to_stderr

print("before", flush=False)  # still in Python's buffer: flushed to stdout before the redirection
with native_stdout_to_stderr():
    os.write(1, b"os.write inside\n")
    ctypes.CDLL(None).printf(b"printf inside\n")  # C's buffer (stdout is a pipe): flushed before fd 1 is put back
    entered, release = threading.Barrier(2), threading.Event()

    def nested():
        with native_stdout_to_stderr():
            entered.wait()
            release.wait()
            os.write(1, b"thread inside\n")

    thread = threading.Thread(target=nested)
    thread.start()
    entered.wait()
with native_stdout_to_stderr():  # the thread's block still holds the redirection
    pass
os.write(1, b"while the thread's block runs\n")
release.set()
thread.join()
print("after", flush=True)
os.write(1, b"os.write after\n")
'''


def test_native_writes_to_descriptor_1_go_to_stderr_inside_the_guard():
    """What C code writes to file descriptor 1 inside `native_stdout_to_stderr` (HiGHS's debug lines during an ILP
    solve) reaches stderr, not stdout, even from C's own buffer; Python's earlier output stays on stdout; blocks in
    two threads share the redirection, which ends with the last of them. A fresh process: the test swaps fd 1."""
    done = subprocess.run([sys.executable, "-c", GUARDED_WRITES], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "before\nafter\nos.write after\n"
    for line in ("os.write inside", "printf inside", "thread inside", "while the thread's block runs"):
        assert line in done.stderr, done.stderr
