"""The corpus side of AQuaMuSe as datatrove steps, so a Common Crawl-sized corpus shards across tasks and machines:

``CorpusReader`` (task ``rank`` reads the corpus files at positions ``rank`` modulo ``world_size``) ->
``SplitCorpusSentences`` (sentences and their character spans, the project's text pipeline) ->
``MatchAnswerSentences`` (embeds the sentences in batches, searches the answer-sentence index, yields only the
documents with a match) -> a ``JsonlWriter``. The answer side (questions and their sentence embeddings) is prepared
once, before the tasks start, and each task loads it (:func:`write_answer_side` / ``MatchAnswerSentences``).
Counters go to datatrove's stats; :func:`matched_from_document` reads a written document back.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from ..text import TextConfig, TextPipeline
from ..utils.batching import batched
from ..utils.jsonl import iter_json_objects
from ..web.warc import DAMAGE_REASONS
from .corpus import CorpusDocument, iter_corpus_documents
from .matching import MatchedDocument, MatchingConfig
from .questions import Question

__all__ = ["CorpusReader", "MatchAnswerSentences", "SplitCorpusSentences", "matched_from_document",
           "read_questions_file", "write_answer_side"]

CORPUS_TEXT_CONFIG = TextConfig(newline_breaks="line")
"""Corpus texts hold one paragraph or heading per line (C4, CCNet, WET): every line break ends a sentence."""


def write_answer_side(questions: Sequence[Question], vectors: np.ndarray, folder: str | Path) -> None:
    """``questions.jsonl`` + ``answer_vectors.npy`` (rows in question order, then sentence order)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "questions.jsonl", "w", encoding="utf-8") as handle:
        for question in questions:
            handle.write(json.dumps(question.__dict__, ensure_ascii=False) + "\n")
    np.save(folder / "answer_vectors.npy", np.ascontiguousarray(vectors, dtype=np.float32))


def read_questions_file(path: str | Path) -> list[Question]:
    """The questions :func:`write_answer_side` wrote."""
    return [Question(**record) for _, record in iter_json_objects(path)]


def matched_from_document(document: Document | dict[str, Any]) -> MatchedDocument:
    """A :class:`MatchedDocument` from the document ``MatchAnswerSentences`` yielded (or its JSON line)."""
    if isinstance(document, Document):
        values = {"id": document.id, "text": document.text, **document.metadata}
    else:
        values = {"id": document["id"], "text": document["text"], **document.get("metadata", {})}
    return MatchedDocument.from_dict(values)


class CorpusReader(PipelineStep):
    """Reads C4/CCNet JSON lines, WET and WARC files (:mod:`.corpus`), record by record; one document per page. A
    damaged WET/WARC file is also counted by name: ``damaged/<file name>: truncated`` (or ``corrupt_record``) ->
    records skipped; ``input_bytes`` counts the bytes of the files the task read.

    Args:
        files (`Sequence[str]`): corpus files; task ``rank`` reads ``files[rank::world_size]``.
    """

    name = "🌐 AQuaMuSe corpus"
    type = "📖 - READER"

    def __init__(self, files: Sequence[str | Path]) -> None:
        super().__init__()
        self.files = [str(file) for file in files]
        if not self.files:
            raise ValueError("CorpusReader needs at least one corpus file")

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        if data:
            yield from data
        for file in self.files[rank::world_size]:
            self.stat_update("input_bytes", value=Path(file).stat().st_size)
            stats: Counter[str] = Counter()
            errors: list[str] = []
            for document in iter_corpus_documents(file, stats, errors):
                yield Document(text=document.text, id=document.id,
                               metadata={"url": document.url, "source": document.source})
            stats["files"] += 1
            for key, value in stats.items():
                self.stat_update(key, value=value)
            for reason in DAMAGE_REASONS:  # name the damaged file in the closing summary and build.json
                if stats[f"skipped/{reason}"]:
                    self.stat_update(f"damaged/{Path(file).name}: {reason}", value=stats[f"skipped/{reason}"])
            for error in errors[:20]:
                from datatrove.utils.logging import logger

                logger.warning(error)


class SplitCorpusSentences(PipelineStep):
    """Adds ``sentences`` and ``sentence_spans`` (character offsets in ``text``) to each document's metadata.

    Args:
        text_config (:class:`TextConfig`, *optional*): the text pipeline (default: every line break ends a sentence).
        batch_size (`int`, *optional*, defaults to 64): documents per ``nlp.pipe`` batch.
    """

    name = "✂ sentences"
    type = "🔢 - TOKENIZER"

    def __init__(self, text_config: TextConfig | None = None, batch_size: int = 64) -> None:
        super().__init__()
        self.pipeline = TextPipeline(text_config or CORPUS_TEXT_CONFIG)
        self.batch_size = batch_size

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for batch in batched(data or (), self.batch_size):
            with self.track_time("batch"):
                analyses = list(self.pipeline.analyze_many(document.text for document in batch))
            for document, analysis in zip(batch, analyses, strict=True):
                document.metadata["sentences"] = analysis.sentences
                document.metadata["sentence_spans"] = [list(span) for span in analysis.sentence_char_spans]
                self.stat_update("sentences_split", value=len(analysis.sentences))
                yield document


class MatchAnswerSentences(PipelineStep):
    """Embeds corpus sentences, finds their matches among the answer sentences and yields the matched documents
    (``metadata``: ``url``, ``sentences``, ``sentence_spans``, ``matches``).

    Args:
        answer_dir (`str`): the folder :func:`write_answer_side` wrote.
        config (:class:`MatchingConfig`, *optional*): thresholds.
        encoder (*optional*): a :class:`~.embedding.SentenceEncoder` (default: MiniLM), or any object with
            ``encode(list[str]) -> np.ndarray`` of unit rows and the same dimension as the answer vectors.
        batch_size (`int`, *optional*, defaults to 256): documents embedded and searched together.
        index_options (`dict`, *optional*): arguments of :class:`~.embedding.AnswerIndex`.
    """

    name = "🔎 AQuaMuSe sentence matches"
    type = "🔻 - FILTER"

    def __init__(self, answer_dir: str | Path, config: MatchingConfig | None = None, encoder: Any = None,
                 batch_size: int = 256, index_options: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.answer_dir = str(answer_dir)
        self.config = config or MatchingConfig()
        self.encoder = encoder
        self.batch_size = batch_size
        self.index_options = index_options or {}

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from .embedding import SentenceEncoder
        from .matching import SentenceMatcher

        folder = Path(self.answer_dir)
        questions = read_questions_file(folder / "questions.jsonl")
        vectors = np.load(folder / "answer_vectors.npy")
        encoder = self.encoder if self.encoder is not None else SentenceEncoder()
        matcher = SentenceMatcher(questions, encoder, self.config, answer_vectors=vectors,
                                  index_options=self.index_options)
        for batch in batched(data or (), self.batch_size):
            documents = [CorpusDocument(d.id, d.metadata.get("url", ""), d.text) for d in batch]
            before = matcher.stats.copy()
            with self.track_time("batch"):
                matched = matcher.match(documents, [d.metadata["sentences"] for d in batch],
                                        [d.metadata["sentence_spans"] for d in batch])
            for key, value in (matcher.stats - before).items():
                self.stat_update(key, value=value)
            for document in matched:
                values = document.to_dict()
                values["matches"] = [[m["question_id"], m["answer_sentence"], m["document_sentence"], m["score"]]
                                     for m in values["matches"]]
                yield Document(text=values.pop("text"), id=values.pop("id"), metadata=values)
