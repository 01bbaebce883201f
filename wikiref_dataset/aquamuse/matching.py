"""AQuaMuSe's sentence matching and example assembly (§2 of Kulkarni et al., 2020, "Sentence Matching" to "Top-K").

For a long answer a = [l_1 .. l_n] and corpus documents d_i = [d_i1 ..], a sentence match is a pair (l_k, d_ij) whose
cosine s_kij lies strictly between θL and θU (0.8 / 0.99: near paraphrases, not copies of Wikipedia). A document's
score is the sum of its matches with the answer, ψ(d_i) = Σ_{k,j} s_kij; the top K (7) documents by score are the
example's input. Summary recall is the share of answer sentences matched by at least one sentence of those
documents; examples below ``min_recall`` (0.75) are dropped.

Two variants share the query, the target and the documents' selection: *abstractive* keeps the documents as found;
*extractive* replaces, in place, each matched document sentence by the answer sentence it matched (its best match
when it matched several), so that the target can be extracted from the inputs.

:class:`SentenceMatcher` finds the matches of a batch of corpus documents (the map side, one per datatrove task);
:class:`ExampleAssembly` groups every matched document by question and builds the examples (the reduce side) in
bounded memory: a first pass over the matched documents keeps, per question, only the top-K candidates' ids, scores
and matches; a second pass sends the chosen documents' texts through an external sort by question id
(:mod:`wikiref_dataset.utils.external_sort`), so examples come out one at a time, in id order, and no pass holds the corpus's
matched documents. :func:`assemble_examples` is the same on lists.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .questions import Question

__all__ = [
    "AQuaMuSeExample", "ExampleAssembly", "MatchedDocument", "MatchingConfig", "SentenceMatch", "SentenceMatcher",
    "assemble_examples", "replace_sentences",
]  # fmt: skip


@dataclass(frozen=True)
class MatchingConfig:
    """The thresholds of the paper, all tunable.

    Args:
        theta_lower (`float`, *optional*, defaults to 0.8): θL, a match scores strictly more.
        theta_upper (`float`, *optional*, defaults to 0.99): θU, a match scores strictly less (no near-copies; a
            value above 1 keeps exact copies).
        top_k (`int`, *optional*, defaults to 7): documents kept per example, best score first.
        min_recall (`float`, *optional*, defaults to 0.75): lowest summary recall kept.
        neighbours (`int`, *optional*, defaults to 10): answer sentences looked up per corpus sentence.
        min_sentence_words (`int`, *optional*, defaults to 4): shorter corpus sentences (menus, buttons) are not
            embedded.
    """

    theta_lower: float = field(default=0.8, metadata={"help": "θL: matches score strictly above."})
    theta_upper: float = field(default=0.99, metadata={"help": "θU: matches score strictly below."})
    top_k: int = field(default=7, metadata={"help": "Documents kept per example."})
    min_recall: float = field(default=0.75, metadata={"help": "Lowest summary recall kept."})
    neighbours: int = field(default=10, metadata={"help": "Answer sentences looked up per corpus sentence."})
    min_sentence_words: int = field(default=4, metadata={"help": "Shorter corpus sentences are not embedded."})

    def __post_init__(self) -> None:
        if not -1.0 <= self.theta_lower < self.theta_upper <= 2.0:  # θU > 1 keeps exact copies
            raise ValueError(f"need -1 <= theta_lower < theta_upper <= 2, got {self.theta_lower}, {self.theta_upper}")
        if not 0.0 <= self.min_recall <= 1.0:
            raise ValueError(f"min_recall must lie in [0, 1], got {self.min_recall}")
        for name in ("top_k", "neighbours", "min_sentence_words"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SentenceMatch:
    """Answer sentence ``answer_sentence`` of question ``question_id`` matched document sentence
    ``document_sentence`` with cosine ``score``."""

    question_id: str
    answer_sentence: int
    document_sentence: int
    score: float


@dataclass
class MatchedDocument:
    """A corpus document with at least one match: its sentences, their character spans in ``text`` and the
    matches."""

    id: str
    url: str
    text: str
    sentences: list[str]
    sentence_spans: list[tuple[int, int]]
    matches: list[SentenceMatch]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> MatchedDocument:
        return cls(id=values["id"], url=values["url"], text=values["text"], sentences=list(values["sentences"]),
                   sentence_spans=[tuple(span) for span in values["sentence_spans"]],
                   matches=[SentenceMatch(*m) if isinstance(m, list) else SentenceMatch(**m)
                            for m in values["matches"]])


class SentenceMatcher:
    """Finds the sentence matches of corpus documents against the indexed answer sentences.

    Args:
        questions (`Sequence[Question]`): the questions, with answer sentences.
        encoder: a :class:`~.embedding.SentenceEncoder` (or any object with ``encode(list[str]) -> np.ndarray`` of
            unit rows).
        config (:class:`MatchingConfig`, *optional*): thresholds.
        answer_vectors (`np.ndarray`, *optional*): precomputed answer-sentence embeddings, in question order then
            sentence order (encoded with ``encoder`` when None).
        index_options (`dict`, *optional*): arguments of :class:`~.embedding.AnswerIndex`.
    """

    def __init__(self, questions: Sequence[Question], encoder: Any, config: MatchingConfig | None = None,
                 answer_vectors: np.ndarray | None = None, index_options: dict[str, Any] | None = None) -> None:
        from .embedding import AnswerIndex

        self.config = config or MatchingConfig()
        self.encoder = encoder
        self.keys = [(q.id, k) for q in questions for k in range(len(q.answer_sentences))]
        if answer_vectors is None:
            answer_vectors = encoder.encode([s for q in questions for s in q.answer_sentences])
        if len(answer_vectors) != len(self.keys):
            raise ValueError(f"{len(answer_vectors)} answer vectors for {len(self.keys)} answer sentences")
        self.index = AnswerIndex(answer_vectors, **(index_options or {}))
        self.stats: Counter[str] = Counter()

    def match(self, documents: Sequence[Any], sentences: Sequence[list[str]],
              spans: Sequence[list[tuple[int, int]]]) -> list[MatchedDocument]:
        """The documents (with ``id``, ``url``, ``text``) that match some answer sentence, with their matches;
        ``sentences[i]``/``spans[i]`` are document i's sentences and their character spans."""
        config = self.config
        owners: list[tuple[int, int]] = []
        texts: list[str] = []
        for position, document_sentences in enumerate(sentences):
            for number, sentence in enumerate(document_sentences):
                if len(sentence.split()) >= config.min_sentence_words:
                    owners.append((position, number))
                    texts.append(sentence)
        self.stats["documents_searched"] += len(documents)
        self.stats["sentences_searched"] += sum(len(s) for s in sentences)
        self.stats["sentences_embedded"] += len(texts)
        if not texts:
            return []
        scores, rows = self.index.search(self.encoder.encode(texts), config.neighbours)
        found: dict[int, list[SentenceMatch]] = defaultdict(list)
        # compared in the scores' float32, so that a score equal to a threshold is excluded as the paper says
        lower, upper = np.float32(config.theta_lower), np.float32(config.theta_upper)
        hits = np.argwhere((scores > lower) & (scores < upper) & (rows >= 0))
        self.stats["above_theta_upper"] += int(((scores >= upper) & (rows >= 0)).sum())
        for query_row, column in hits:
            position, number = owners[query_row]
            question_id, answer_sentence = self.keys[rows[query_row, column]]
            found[position].append(SentenceMatch(question_id, answer_sentence, number,
                                                 round(float(scores[query_row, column]), 6)))
        matched = []
        for position in sorted(found):
            document = documents[position]
            matches = sorted(found[position], key=lambda m: (m.question_id, m.answer_sentence, m.document_sentence))
            matched.append(MatchedDocument(document.id, document.url, document.text, list(sentences[position]),
                                           [tuple(span) for span in spans[position]], matches))
        self.stats["sentence_matches"] += sum(len(m.matches) for m in matched)
        self.stats["matched_documents"] += len(matched)
        return matched


@dataclass
class AQuaMuSeExample:
    """One example of either variant.

    Args:
        id (`str`): the question's id. query (`str`): the question. target (`str`): the long answer.
        target_sentences (`list[str]`): its sentences.
        documents (`list[dict]`): ``{url, text, score}`` of the top-K documents, best first (extractive: with the
            matched sentences replaced).
        matches (`list[dict]`): ``{document, document_sentence, answer_sentence, score}`` (``document`` indexes
            ``documents``).
        summary_recall (`float`): share of target sentences matched in ``documents``.
    """

    id: str
    query: str
    target: str
    target_sentences: list[str]
    documents: list[dict[str, Any]]
    matches: list[dict[str, Any]]
    summary_recall: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def replace_sentences(document: MatchedDocument, replacements: dict[int, str]) -> str:
    """``document.text`` with sentence j replaced, in place, by ``replacements[j]`` (text between sentences kept)."""
    pieces, cursor = [], 0
    for number in sorted(replacements):
        start, end = document.sentence_spans[number]
        pieces += [document.text[cursor:start], replacements[number]]
        cursor = end
    return "".join(pieces) + document.text[cursor:]


@dataclass
class _Kept:
    """A question that becomes an example: its position in the questions, recall, and its ranked documents as
    ``(document ordinal, document id, url, matches with this question)``, best first."""

    index: int
    question: Question
    recall: float
    ranked: list[tuple[int, str, list[SentenceMatch]]]


class ExampleAssembly:
    """The examples of both variants from the matched documents, in two passes and bounded memory.

    1. :meth:`rank` every matched document (in a fixed order; a document id seen before is skipped: the same page
       read twice counts once); per question only the ``top_k`` best candidates (by ψ, then document id) are kept, as
       ids, scores and matches. :meth:`select` then applies the recall filter in question order and returns the
       assembly's counts (``questions``, ``questions_with_matches``, ``dropped/no_match``, ``dropped/low_recall``,
       ``examples``); :attr:`kept` lists the examples to be (question and recall).
    2. :meth:`examples` reads the same documents again in the same order, sorts the chosen ones' texts by (question id,
       question position, rank) with :func:`~wikiref_dataset.utils.external_sort.external_sort` and yields
       ``(question position, abstractive, extractive)`` in question-id order.
    """

    def __init__(self, questions: Sequence[Question], config: MatchingConfig | None = None) -> None:
        self.questions = questions
        self.config = config or MatchingConfig()
        self._seen: set[str] = set()
        self._candidates: dict[str, list[tuple[float, str, int, list[SentenceMatch]]]] = defaultdict(list)
        self.kept: list[_Kept] = []

    def rank(self, document: MatchedDocument) -> None:
        """Pass 1: count ``document`` among its questions' candidates."""
        if document.id in self._seen:
            return
        ordinal = len(self._seen)
        self._seen.add(document.id)
        grouped: dict[str, list[SentenceMatch]] = defaultdict(list)
        for match in document.matches:
            grouped[match.question_id].append(match)
        for question_id, matches in grouped.items():
            candidates = self._candidates[question_id]
            candidates.append((-sum(m.score for m in matches), document.id, ordinal, matches))
            if len(candidates) >= 4 * self.config.top_k:  # keep the best top_k: (score, id) are distinct
                candidates.sort(key=lambda item: item[:2])
                del candidates[self.config.top_k:]

    def select(self) -> Counter[str]:
        """The recall filter, in question order (after :meth:`rank`); fills :attr:`kept`."""
        stats: Counter[str] = Counter()
        self.kept = []
        for index, question in enumerate(self.questions):
            stats["questions"] += 1
            candidates = self._candidates.get(question.id)
            if not candidates:
                stats["dropped/no_match"] += 1
                continue
            stats["questions_with_matches"] += 1
            ranked = sorted(candidates, key=lambda item: item[:2])[: self.config.top_k]
            matched_answers = {m.answer_sentence for *_, matches in ranked for m in matches}
            recall = len(matched_answers) / len(question.answer_sentences)
            if recall < self.config.min_recall:
                stats["dropped/low_recall"] += 1
                continue
            self.kept.append(_Kept(index, question, recall, [(ordinal, doc_id, matches)
                                                            for _, doc_id, ordinal, matches in ranked]))
            stats["examples"] += 1
        self._candidates.clear()
        return stats

    def examples(self, documents: Iterable[MatchedDocument], spill_dir: str | Path | None = None,
                 sort_stats: Counter[str] | None = None) -> Iterator[tuple[int, AQuaMuSeExample, AQuaMuSeExample]]:
        """Pass 2 (after :meth:`select`): ``documents`` again, in the order :meth:`rank` saw them."""
        from ..utils.external_sort import external_sort

        wanted: dict[int, list[tuple[str, int, int]]] = defaultdict(list)
        kept = {}
        for example in self.kept:
            kept[example.index] = example
            for position, (ordinal, _, _) in enumerate(example.ranked):
                wanted[ordinal].append((example.question.id, example.index, position))

        def chosen() -> Iterator[dict[str, Any]]:
            seen: set[str] = set()
            for document in documents:
                if document.id in seen:
                    continue
                ordinal = len(seen)
                seen.add(document.id)
                for question_id, index, position in wanted.get(ordinal, ()):
                    yield {"question": question_id, "index": index, "position": position, "url": document.url,
                           "text": document.text, "sentence_spans": [list(span) for span in document.sentence_spans]}

        def key(record: dict[str, Any]) -> tuple[str, int, int]:
            return record["question"], record["index"], record["position"]

        group: list[dict[str, Any]] = []
        for record in external_sort(chosen(), key=key, folder=spill_dir, stats=sort_stats):
            if group and group[0]["index"] != record["index"]:
                yield self._build(kept[group[0]["index"]], group)
                group = []
            group.append(record)
        if group:
            yield self._build(kept[group[0]["index"]], group)

    @staticmethod
    def _build(kept: _Kept, documents: list[dict[str, Any]]) -> tuple[int, AQuaMuSeExample, AQuaMuSeExample]:
        question = kept.question
        plain, replaced, details = [], [], []
        for position, ((_, _, matches), record) in enumerate(zip(kept.ranked, documents, strict=True)):
            document = MatchedDocument(id="", url=record["url"], text=record["text"], sentences=[],
                                       sentence_spans=[tuple(span) for span in record["sentence_spans"]], matches=[])
            score = round(sum(m.score for m in matches), 6)
            plain.append({"url": document.url, "text": document.text, "score": score})
            best: dict[int, SentenceMatch] = {}
            for match in matches:
                details.append({"document": position, "document_sentence": match.document_sentence,
                                "answer_sentence": match.answer_sentence, "score": match.score})
                if match.document_sentence not in best or match.score > best[match.document_sentence].score:
                    best[match.document_sentence] = match
            text = replace_sentences(document, {j: question.answer_sentences[m.answer_sentence]
                                                for j, m in best.items()})
            replaced.append({"url": document.url, "text": text, "score": score})
        common = {"id": question.id, "query": question.query, "target": question.answer,
                  "target_sentences": list(question.answer_sentences), "matches": details,
                  "summary_recall": round(kept.recall, 6)}
        return kept.index, AQuaMuSeExample(documents=plain, **common), AQuaMuSeExample(documents=replaced, **common)


def assemble_examples(questions: Iterable[Question], documents: Iterable[MatchedDocument],
                      config: MatchingConfig | None = None) -> tuple[list[AQuaMuSeExample], list[AQuaMuSeExample],
                                                                     Counter[str]]:
    """The abstractive and extractive examples (same ids, same documents; in question order) and the counts of the
    assembly (``questions``, ``questions_with_matches``, ``dropped/low_recall``, ``examples``):
    :class:`ExampleAssembly` on lists."""
    documents = list(documents)
    assembly = ExampleAssembly(list(questions), config)
    for document in documents:
        assembly.rank(document)
    stats = assembly.select()
    built = sorted(assembly.examples(documents), key=lambda item: item[0])
    return [item[1] for item in built], [item[2] for item in built], stats
