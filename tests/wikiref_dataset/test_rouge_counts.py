"""The scorer's gram counts (plain and numpy paths) against the readable Counter definitions (ngram_counts, skip bigrams)."""

import random
from collections import Counter

import pytest

from wikiref_dataset.rouge import RougeConfig, RougeScorer, clipped_hits, ngram_counts, skip_bigram_counts


def _texts(seed):
    rng = random.Random(seed)
    vocabulary = [f"w{k}" for k in range(rng.randint(2, 12))]
    return [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 40))) for _ in range(3)]


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize(("max_n", "skip_distance", "skip_unigrams"), [(4, 4, True), (3, 0, False), (2, -1, True)])
def test_encoded_hits_equal_counter_definitions(seed, max_n, skip_distance, skip_unigrams, rouge_path):
    config = RougeConfig(max_n=max_n, skip_distance=skip_distance, skip_unigrams=skip_unigrams, stem=False,
                         word_limit=None)
    scorer = RougeScorer(config)
    system, *references = _texts(seed)
    scores = scorer.score(system, references)
    system_tokens = system.split()
    for metric in config.metric_names:
        skip = metric.startswith("rouge_s")
        n = 0 if skip else int(metric.split("_")[1])

        def count(tokens, skip=skip, n=n):
            return skip_bigram_counts(tokens, skip_distance, skip_unigrams) if skip else ngram_counts(tokens, n)

        system_counts = count(system_tokens)
        reference_counts = [count(reference.split()) for reference in references]
        assert scores[metric].hit == sum(clipped_hits(system_counts, ref) for ref in reference_counts), metric
        assert scores[metric].model_count == sum(sum(ref.values()) for ref in reference_counts), metric
        assert scores[metric].peer_count == len(references) * sum(system_counts.values()), metric


def test_vocabulary_generation_reset_keeps_scores(monkeypatch):
    import wikiref_dataset.rouge.scorer as scorer_module

    fresh = RougeScorer().score("the cat sat on the mat", ["a cat sat on a mat"])
    monkeypatch.setattr(scorer_module, "_VOCABULARY_RESET", 3)
    scorer = RougeScorer()
    for k in range(5):  # every item starts a new generation once the vocabulary passes 3 stems
        scorer.score(f"filler{k} words here", ["other filler words"])
    assert scorer.score("the cat sat on the mat", ["a cat sat on a mat"]) == fresh
    old = scorer.analyze("the cat")
    scorer.score("more new words", ["and more"])
    with pytest.raises(ValueError, match="vocabulary generations"):
        scorer.score_analyzed(old, [scorer.analyze("the cat")])


def test_counter_definitions_are_what_rouge_counts():
    assert ngram_counts(["a", "b", "a", "b"], 2) == Counter({("a", "b"): 2, ("b", "a"): 1})
    assert skip_bigram_counts(["a", "b", "c"], 0, False) == Counter({("a", "b"): 1, ("b", "c"): 1})
