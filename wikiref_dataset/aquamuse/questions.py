"""AQuaMuSe's summaries: Natural Questions questions whose only answer is a long one (§2 of Kulkarni et al., 2020).

See ``docs/aquamuse.md``.

Reads Natural Questions in both released formats, one JSON object per line (``.jsonl`` or ``.jsonl.gz``):

* *simplified* (``document_text``: the page as space-separated tokens, HTML tags among them as ``<P>`` ... tokens);
* *original* (``document_tokens``: ``{token, start_byte, end_byte, html_token}`` objects, ``document_html``).

A question is kept when some annotator marked a long answer and no annotator gave a short answer or a yes/no answer
(such questions "cannot be addressed tersely"); the long answer is the span most annotators chose. By default only
paragraph long answers (``<P>``) are kept: tables and lists have no sentences to match. The answer's HTML tokens are
dropped (by the original format's ``html_token`` flags, or by their tag shape in the simplified one) and the remaining tokens joined into text.
The answer is split into sentences by the project's :class:`~wikiref_dataset.text.TextPipeline`.

Lines of the released AQuaMuSe format (``{"query", "target"}``, see :mod:`.released`) are accepted too: their
target already is a cleaned long answer. Every dropped question is counted by reason; a malformed line is counted
as ``bad_record`` with a message naming the file, the line and the problem, and never stops the read.
"""

from __future__ import annotations

import gzip
import html
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..text import TextPipeline
from ..utils.batching import batched

__all__ = ["DROP_REASONS", "Question", "QuestionConfig", "QuestionReader", "clean_long_answer_tokens"]

DROP_REASONS = ("no_long_answer", "short_answer", "yes_no_answer", "not_paragraph", "empty_answer", "bad_record")

_HTML_TOKEN = re.compile(r"^</?[A-Za-z][^>]*>$")
_SPACE_BEFORE = re.compile(r" ([,.;:!?%)\]}]|'s\b|'re\b|'ve\b|'ll\b|'d\b|'m\b|n't\b|'(?= ))")
_SPACE_AFTER = re.compile(r"([(\[{$]) ")
_OPEN_QUOTE = re.compile(r"``\s*")
_CLOSE_QUOTE = re.compile(r"\s*''")


@dataclass(frozen=True)
class QuestionConfig:
    """Which Natural Questions are AQuaMuSe summaries.

    Args:
        paragraphs_only (`bool`, *optional*, defaults to `True`):
            Keep only long answers that are paragraphs (``<P>``), not tables or lists.
        min_answer_sentences (`int`, *optional*, defaults to 1):
            Fewest sentences a long answer must have.
    """

    paragraphs_only: bool = field(default=True, metadata={"help": "Keep only paragraph long answers."})
    min_answer_sentences: int = field(default=1, metadata={"help": "Fewest sentences of a long answer."})

    def __post_init__(self) -> None:
        if not isinstance(self.paragraphs_only, bool):
            raise ValueError(f"paragraphs_only must be a bool, got {self.paragraphs_only!r}")
        if not isinstance(self.min_answer_sentences, int) or self.min_answer_sentences < 1:
            raise ValueError(f"min_answer_sentences must be a positive integer, got {self.min_answer_sentences!r}")


@dataclass
class Question:
    """A query and its long answer (the summary target).

    Args:
        id (`str`): the NQ ``example_id`` (or, for released lines, a hash of the query).
        query (`str`): the question as the user typed it.
        answer (`str`): the long answer's text.
        answer_sentences (`list[str]`): its sentences.
        url (`str`): the Wikipedia page the answer comes from ("" when unknown).
        source (`str`): ``file:line`` the question was read from.
    """

    id: str
    query: str
    answer: str
    answer_sentences: list[str] = field(default_factory=list)
    url: str = ""
    source: str = ""


class _Drop(Exception):
    def __init__(self, reason: str, message: str = "") -> None:
        super().__init__(message or reason)
        self.reason = reason


def clean_long_answer_tokens(tokens: Sequence[str], is_html: Sequence[bool] | None = None) -> str:
    """Text of a tokenized long answer: HTML tokens dropped (``is_html`` flags, else tokens that look like tags),
    tokens joined with the spaces Penn-Treebank-style tokenization removed put back (``Cin ( `` Chin '' ) ,`` ->
    ``Cin ("Chin"),``) and HTML entities decoded."""
    words = [token for position, token in enumerate(tokens)
             if not (is_html[position] if is_html is not None else _HTML_TOKEN.match(token))]
    text = " ".join(words)
    text = _OPEN_QUOTE.sub('"', text)
    text = _CLOSE_QUOTE.sub('"', text)
    text = _SPACE_BEFORE.sub(r"\1", text)
    text = _SPACE_AFTER.sub(r"\1", text)
    return html.unescape(re.sub(r"\s+", " ", text)).strip()


def _open_text(path: Path):
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="utf-8") if gzipped else open(path, encoding="utf-8")


def _chosen_long_answer(annotations: list[dict[str, Any]]) -> dict[str, Any]:
    """The long answer most annotators chose (the first chosen on ties); raises _Drop when the question has a short
    or yes/no answer or no long answer."""
    spans: Counter[tuple[int, int]] = Counter()
    chosen: dict[tuple[int, int], dict[str, Any]] = {}
    for annotation in annotations:
        if annotation.get("short_answers"):
            raise _Drop("short_answer")
        if str(annotation.get("yes_no_answer", "NONE")).upper() != "NONE":
            raise _Drop("yes_no_answer")
        long_answer = annotation.get("long_answer") or {}
        start, end = int(long_answer.get("start_token", -1)), int(long_answer.get("end_token", -1))
        if start >= 0 and end > start:
            spans[start, end] += 1
            chosen.setdefault((start, end), long_answer)
    if not spans:
        raise _Drop("no_long_answer")
    return chosen[spans.most_common(1)[0][0]]


class QuestionReader:
    """Reads question files and keeps the AQuaMuSe summaries; :attr:`stats` counts lines, kept questions and every
    drop reason, :attr:`errors` describes the bad records (``file:line: problem``).

    Args:
        config (:class:`QuestionConfig`, *optional*): which questions to keep.
        pipeline (:class:`TextPipeline`, *optional*): splits answers into sentences (the shared default when None).
        max_errors (`int`, *optional*, defaults to 1000): bad-record messages kept in :attr:`errors`.
    """

    def __init__(self, config: QuestionConfig | None = None, pipeline: TextPipeline | None = None,
                 max_errors: int = 1000) -> None:
        self.config = config or QuestionConfig()
        self.pipeline = pipeline
        self.stats: Counter[str] = Counter()
        self.errors: list[str] = []
        self.max_errors = max_errors

    def read(self, paths: Iterable[str | Path], batch_size: int = 256) -> Iterator[Question]:
        """The kept questions of ``paths`` in file order, with their answer sentences."""
        from ..text import default_pipeline

        pipeline = self.pipeline or default_pipeline()
        questions = (question for path in paths for question in self._read_file(Path(path)))
        for batch in batched(questions, batch_size):
            for question, sentences in zip(batch, pipeline.split_sentences_many(q.answer for q in batch),
                                           strict=True):
                if len(sentences) < self.config.min_answer_sentences:
                    self.stats["dropped/empty_answer"] += 1
                    continue
                question.answer_sentences = sentences
                self.stats["kept"] += 1
                yield question

    def _read_file(self, path: Path) -> Iterator[Question]:
        try:
            handle = _open_text(path)
        except OSError as error:
            raise ValueError(f"{path}: cannot open the question file ({error.strerror or error})") from None
        with handle:
            line_number = 0
            while True:
                try:
                    line = handle.readline()
                except (OSError, EOFError, UnicodeDecodeError) as error:
                    self._bad(f"{path}:{line_number + 1}: unreadable ({type(error).__name__}: {error})")
                    return
                if not line:
                    return
                line_number += 1
                if not line.strip():
                    continue
                self.stats["lines"] += 1
                try:
                    yield self.parse(json.loads(line), f"{path}:{line_number}")
                except json.JSONDecodeError as error:
                    self._bad(f"{path}:{line_number}: not valid JSON ({error.msg})")
                except _Drop as drop:
                    if drop.reason == "bad_record":
                        self._bad(f"{path}:{line_number}: {drop}")
                    else:
                        self.stats[f"dropped/{drop.reason}"] += 1

    def _bad(self, message: str) -> None:
        self.stats["dropped/bad_record"] += 1
        if len(self.errors) < self.max_errors:
            self.errors.append(message)

    def parse(self, record: Any, source: str = "") -> Question:
        """One JSON record as a question (answer sentences not yet split); raises ``_Drop`` with the reason."""
        if not isinstance(record, dict):
            raise _Drop("bad_record", f"expected a JSON object, got {type(record).__name__}")
        if "query" in record and "target" in record:
            return self._released(record, source)
        query = record.get("question_text")
        if not isinstance(query, str) or not query.strip():
            raise _Drop("bad_record", "no 'question_text' (neither a Natural Questions nor an AQuaMuSe record)")
        annotations = record.get("annotations")
        if not isinstance(annotations, list):
            raise _Drop("bad_record", "'annotations' must be a list")
        try:
            long_answer = _chosen_long_answer(annotations)
            start, end = int(long_answer["start_token"]), int(long_answer["end_token"])
            if "document_tokens" in record:
                tokens = record["document_tokens"][start:end]
                words = [str(token["token"]) for token in tokens]
                flags = [bool(token.get("html_token")) for token in tokens]
            elif "document_text" in record:
                words = str(record["document_text"]).split(" ")[start:end]
                flags = None
            else:
                raise _Drop("bad_record", "neither 'document_text' (simplified) nor 'document_tokens' (original)")
        except (KeyError, TypeError, ValueError) as error:
            raise _Drop("bad_record", f"malformed annotation or tokens ({type(error).__name__}: {error})") from None
        if len(words) != end - start:
            raise _Drop("bad_record", f"long answer tokens {start}:{end} lie outside the document")
        if self.config.paragraphs_only and (not words or words[0].upper() != "<P>"):
            raise _Drop("not_paragraph")
        answer = clean_long_answer_tokens(words, flags)
        if not answer:
            raise _Drop("empty_answer")
        return Question(id=str(record.get("example_id", source)), query=query.strip(), answer=answer,
                        url=str(record.get("document_url", "")), source=source)

    @staticmethod
    def _released(record: dict[str, Any], source: str) -> Question:
        from .released import ReleasedExample

        example = ReleasedExample.from_record(record, source)
        if not example.target:
            raise _Drop("empty_answer")
        return Question(id=example.id, query=example.query, answer=example.target, source=source)
