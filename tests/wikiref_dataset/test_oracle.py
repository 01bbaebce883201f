"""The greedy oracle against a from-scratch rescoring of every candidate set, and its labels/scores contract."""

import random
from collections import Counter
from itertools import combinations

import pytest

from wikiref_dataset.oracle import ExtractiveOracle, OracleConfig, greedy_oracle
from wikiref_dataset.rouge import RougeConfig, RougeScorer, clipped_hits, ngram_counts

DOCUMENT = [
    "The cat sat on the mat.",
    "Dogs bark at night.",
    "A cat sat quietly on a red mat.",
    "Nothing here matters.",
]
SUMMARY = "The cat sat on a red mat at night."


_SCORER = RougeScorer(RougeConfig(word_limit=None, skip_distance=None))


def _tokens(sentence: str) -> list[str]:
    return _SCORER.tokens(sentence)


def _score_from_scratch(sentences, references, chosen, objective, n=2):
    """Recount the candidate set's n-grams (per sentence) and rescore it: the straightforward definition."""
    candidate = Counter()
    for index in chosen:
        candidate.update(ngram_counts(_tokens(sentences[index]), n))
    reference_counts = [ngram_counts(_tokens(reference), n) for reference in references]
    hit = sum(clipped_hits(candidate, reference) for reference in reference_counts)
    reference_total = sum(sum(reference.values()) for reference in reference_counts)
    peer_total = sum(candidate.values()) * len(references)
    if objective == "recall":
        return hit / reference_total if reference_total else 0.0
    if objective == "precision":
        return hit / peer_total if peer_total else 0.0
    return 2 * hit / (peer_total + reference_total) if hit else 0.0


def _greedy_from_scratch(sentences, references, objective, max_sentences):
    chosen, score = [], 0.0
    while max_sentences is None or len(chosen) < max_sentences:
        best, best_score = -1, score
        for index in range(len(sentences)):
            if index in chosen:
                continue
            value = _score_from_scratch(sentences, references, chosen + [index], objective)
            if value > best_score:
                best, best_score = index, value
        if best < 0:
            break
        chosen.append(best)
        score = best_score
    return tuple(chosen), score


def test_hand_computed_recall_path():
    # summary bigrams (8): the cat, cat sat, sat on, on a, a red, red mat, mat at, at night
    result = greedy_oracle(DOCUMENT, SUMMARY)
    assert result.indices == (2, 0, 1)  # 4/8, then +2 (the cat, sat on), then +1 (at night)
    assert result.score == pytest.approx(7 / 8)
    assert result.sorted_indices == [0, 1, 2]
    assert result.labels(len(DOCUMENT)) == [1, 1, 1, 0]


def test_max_sentences_and_max_words():
    assert greedy_oracle(DOCUMENT, SUMMARY, max_sentences=1).indices == (2,)
    # sentence 2 has 8 words; with 12 words allowed, the 6-word sentence 0 no longer fits, the 4-word sentence 1 does.
    assert greedy_oracle(DOCUMENT, SUMMARY, max_sentences=None, max_words=12).indices == (2, 1)


@pytest.mark.parametrize("objective", ["recall", "f1", "precision"])
@pytest.mark.parametrize("seed", range(6))
def test_matches_from_scratch_greedy(objective, seed):
    rng = random.Random(seed)
    vocabulary = "river town flood wall bridge water homes rebuilt shop grant fund alert sirens channel".split()
    sentences = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 12))) for _ in range(rng.randint(4, 14))]
    references = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(6, 20))) for _ in range(rng.randint(1, 3))]
    oracle = ExtractiveOracle(OracleConfig(objective=objective, max_sentences=None))
    result = oracle.search(oracle.prepare(sentences, references))
    expected_indices, expected_score = _greedy_from_scratch(sentences, references, objective, None)
    assert result.indices == expected_indices
    assert result.score == pytest.approx(expected_score)


def test_greedy_is_never_better_than_exhaustive_and_close_on_small_input():
    oracle = ExtractiveOracle(OracleConfig(objective="recall", max_sentences=2))
    problem = oracle.prepare(DOCUMENT, SUMMARY)
    best = max(_score_from_scratch(DOCUMENT, [SUMMARY], list(pair), "recall") for pair in combinations(range(4), 2))
    assert oracle.search(problem).score <= best + 1e-12


def test_sentence_scores_are_each_sentences_own_rouge2():
    oracle = ExtractiveOracle()
    problem = oracle.prepare(DOCUMENT, SUMMARY)
    scores = oracle.sentence_scores(problem, objective="f1")
    for index, value in enumerate(scores):
        assert value == pytest.approx(_score_from_scratch(DOCUMENT, [SUMMARY], [index], "f1"))
    assert scores[3] == 0.0
    assert oracle.sentence_scores(problem, objective="recall")[2] == pytest.approx(4 / 8)


def test_one_preparation_serves_several_searches():
    oracle = ExtractiveOracle(OracleConfig(objective="recall", max_sentences=5))
    problem = oracle.prepare(DOCUMENT, SUMMARY)
    recall = oracle.search(problem)
    f1 = oracle.search(problem, objective="f1", max_sentences=None)
    assert recall.indices == (2, 0, 1)
    assert f1.indices == _greedy_from_scratch(DOCUMENT, [SUMMARY], "f1", None)[0]


def test_uses_rouge_stemming():
    # "agreements" and "agreement" share ROUGE's stem, so the bigram matches only with stemming.
    doc = ["The trade agreements were signed."]
    assert greedy_oracle(doc, "trade agreement", stem=True).indices == (0,)
    assert greedy_oracle(doc, "trade agreement", stem=False).indices == ()


def test_degenerate_inputs():
    assert greedy_oracle([], SUMMARY).indices == ()
    assert greedy_oracle(DOCUMENT, "").indices == ()
    assert greedy_oracle(["", "..."], SUMMARY).score == 0.0


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(TypeError, match="list of sentence strings"):
        greedy_oracle("one string document", SUMMARY)
    with pytest.raises(TypeError, match="document sentence 1"):
        greedy_oracle(["fine", None], SUMMARY)
    with pytest.raises(ValueError, match="at least one reference"):
        greedy_oracle(DOCUMENT, [])
    with pytest.raises(ValueError, match="objective"):
        OracleConfig(objective="bleu")
    with pytest.raises(ValueError, match="max_sentences"):
        OracleConfig(max_sentences=0)
    with pytest.raises(ValueError, match="objective"):
        ExtractiveOracle().search(ExtractiveOracle().prepare(DOCUMENT, SUMMARY), objective="rouge")


# ---- the Unicode ROUGE of other languages ---------------------------------------------------------------------


@pytest.mark.parametrize(("language", "sentences", "summary", "chosen"), [
    ("de", ["Die Stadt hat zwölf Bezirke.", "Berlin liegt an der Spree und an der Havel."],
     "Berlin liegt an der Spree.", (1,)),
    ("ja", ["ベルリンはドイツの首都である。", "人口は約370万人である。"], "ベルリンの人口は約370万人", (1,)),
    ("zh", ["柏林是德国首都。", "柏林人口约370万。"], "柏林人口约370万", (1,)),
])
def test_other_languages_use_the_words_of_their_tokenizer(language, sentences, summary, chosen):
    """ROUGE-1.5.5 keeps [A-Za-z0-9] only: Japanese and Chinese have no token, 'zwölf' is two. The Unicode ROUGE
    counts the language's words, so the oracle finds the sentence."""
    oracle = ExtractiveOracle(OracleConfig(n=2, objective="recall", language=language))
    problem = oracle.prepare(sentences, summary)
    assert oracle.search(problem).indices == chosen and oracle.search(problem).score > 0.5
    assert problem.sentence_words == [len(tokens) for tokens in oracle._tokenized(sentences, [])[0]]
    english = ExtractiveOracle(OracleConfig(n=2, objective="recall"))
    if language != "de":
        assert english.search(english.prepare(sentences, summary)).score == 0.0  # no ASCII bigram in common


def test_unicode_rouge_texts_score_like_the_oracle():
    """The same words through the ROUGE-1.5.5 engine (aliased to ASCII): ROUGE-2 recall equals the oracle's."""
    from wikiref_dataset.text import TextConfig, TextPipeline

    pipeline = TextPipeline(TextConfig(lang="ja", model="blank"))
    prediction, reference = pipeline.unicode_rouge_texts(["人口は約370万人である。", "ベルリンの人口は約370万人"])
    assert prediction.split() and all(token.startswith("w") for token in prediction.split())
    score = RougeScorer(RougeConfig(stem=False, resamples=1)).evaluate([prediction], [reference])
    oracle = ExtractiveOracle(OracleConfig(n=2, objective="recall", language="ja"))
    expected = oracle.search(oracle.prepare(["人口は約370万人である。"], "ベルリンの人口は約370万人")).score
    assert score.averages["rouge_2"].recall == pytest.approx(expected, abs=1e-5)
