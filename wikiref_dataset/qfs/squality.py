"""SQuALITY reader: the released story files → rows of the DUC shape, one row per question.

SQuALITY (Wang et al., 2022, "SQuALITY: Building a Long-Document Summarization Dataset the Hard Way") is released as
JSON lines, one story per line, under ``data/<version>/txt/{train,dev,test}.jsonl`` (plain text; ``html/`` beside it
keeps the markup). The newest version folder is read unless ``version`` names one (``v1-3``). A story line holds:

* ``metadata`` — ``passage_id`` (the Project Gutenberg story), ``uid``, ``license``;
* ``document`` — the story, paragraphs separated by blank lines;
* ``questions`` — five, each with ``question_text``, ``question_number`` (1-5; question 1 is always "What is the
  plot of the story?") and ``responses``: four reference answers, each with ``worker_id``, ``uid`` and
  ``response_text``.

What a row is: ``topic_id`` ``<passage_id>/q<question_number>``, ``query`` (the question), ``question_number``,
one document (the story: ``docno`` its passage id, ``sentences`` from the project's sentence splitter, a blank line
always ending a sentence), ``references`` (the four answers, one sentence per line: the leading and trailing blank
lines many have are gone) and ``reference_workers`` (their writers, in the same order).

Malformed records are skipped, counted and named: a line that is not a JSON object with a document and questions
(the story is skipped), a question without text or without a non-empty answer (the question is skipped). A story
whose questions do not number 1-5 or whose questions do not have four answers each is converted and counted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import QfsError, QfsStats, chosen_splits, reference_lines, released_name

if TYPE_CHECKING:
    from ..text import TextPipeline

__all__ = ["RELEASED_SPLITS", "read_squality", "read_story"]

RELEASED_SPLITS: dict[str, str] = {"train": "train", "dev": "validation", "test": "test"}
"""Released file stem → split name."""

_VERSION = re.compile(r"^v(\d+)(?:-(\d+))?$")


def read_story(line: str, pipeline: TextPipeline, stats: QfsStats, split: str, label: str) -> list[dict[str, Any]]:
    """The rows of one story line; ``[]`` for a line that cannot be read (counted and named)."""
    try:
        record = json.loads(line)
        if not isinstance(record, dict):
            raise TypeError(f"not a JSON object but {type(record).__name__}")
        document, questions = record["document"], record["questions"]
        passage = str((record.get("metadata") or {}).get("passage_id") or "").strip()
        if not isinstance(document, str) or not document.strip() or not isinstance(questions, list) or not passage:
            raise TypeError("needs a non-empty 'document', a 'questions' list and metadata.passage_id")
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        reason = f"missing key {error}" if isinstance(error, KeyError) else " ".join(str(error).split())[:200]
        stats.problem("unreadable story line (skipped)", f"{label}: {reason}")
        return []
    sentences = pipeline.split_sentences(document)
    name = f"{label} (story {passage})"
    rows = []
    numbers = []
    for position, question in enumerate(questions):
        text = str(question.get("question_text") or "").strip() if isinstance(question, dict) else ""
        responses = question.get("responses") if isinstance(question, dict) else None
        answers = [(str(response.get("worker_id") or ""), reference_lines(pipeline, response.get("response_text")))
                   for response in responses or [] if isinstance(response, dict)]
        answers = [(worker, answer) for worker, answer in answers if answer]
        if not text or not answers:
            stats.problem("question without text or answer (skipped)", f"{name}: question {position + 1}")
            continue
        number = question.get("question_number")
        number = number if isinstance(number, int) else position + 1
        numbers.append(number)
        if len(answers) != 4:
            stats.problem("question without four answers (kept)", f"{name}: question {number}: {len(answers)}")
        rows.append({"topic_id": f"{passage}/q{number}", "benchmark": "squality", "query": [" ".join(text.split())],
                     "question_number": number,
                     "documents": [{"docno": passage, "date": "", "headline": "", "sentences": sentences}],
                     "references": [answer for _, answer in answers],
                     "reference_workers": [worker for worker, _ in answers]})
    if sorted(numbers) != [1, 2, 3, 4, 5]:
        stats.problem("story whose questions are not numbered 1-5 (kept)", f"{name}: {numbers}")
    if rows:
        stats.rows[split] += len(rows)
        stats.documents[split] += 1
        stats.sentences[split] += len(sentences)
        stats.references[split] += sum(len(row["references"]) for row in rows)
    return rows


def _version_folder(path: Path, version: str | None) -> Path:
    """The ``txt`` folder of the chosen version (the newest ``data/v*`` holding one, unless ``version`` names it)."""
    data = path / "data" if (path / "data").is_dir() else path
    found = {}
    for folder in data.iterdir() if data.is_dir() else []:
        match = _VERSION.match(folder.name)
        if match and (folder / "txt").is_dir():
            found[folder.name] = (int(match.group(1)), int(match.group(2) or 0))
    if (path / "txt").is_dir() and not found:  # the path is a version folder itself
        return path / "txt"
    if not found:
        raise QfsError(f"{path}: not a SQuALITY release (expected data/v<version>/txt/{{train,dev,test}}.jsonl)")
    if version is None:
        version = max(found, key=found.__getitem__)
    elif version not in found:
        raise QfsError(f"{path}: no version {version!r}; the release has {', '.join(sorted(found))}")
    return data / version / "txt"


def read_squality(path: str | Path, pipeline: TextPipeline, splits: list[str] | None = None,
                  version: str | None = None, progress: bool = False
                  ) -> tuple[dict[str, list[dict[str, Any]]], QfsStats]:
    """Every released split of the SQuALITY release at ``path`` (or those in ``splits``) → ``({split: rows}, stats)``,
    stories in file order.

    Raises:
        QfsError: ``path`` is not a SQuALITY release, ``version`` is not in it, or a split in ``splits`` is not.
    """
    from tqdm.auto import tqdm

    folder = _version_folder(Path(path), version)
    stats = QfsStats("squality", source=str(path))
    present = {split: folder / f"{stem}.jsonl" for stem, split in RELEASED_SPLITS.items()
               if (folder / f"{stem}.jsonl").is_file()}
    if not present:
        raise QfsError(f"{folder}: no train.jsonl, dev.jsonl or test.jsonl")
    rows: dict[str, list[dict[str, Any]]] = {}
    for split, file in chosen_splits(present, splits, path).items():
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise QfsError(f"{file}: cannot be read ({error})") from None
        stats.released_files[split] = [released_name(file, path)]
        rows[split] = []
        for number, line in enumerate(tqdm(lines, desc=f"SQuALITY {split}", unit="story", disable=not progress), 1):
            if line.strip():
                rows[split] += read_story(line, pipeline, stats, split, f"{file.name}:{number}")
    return rows, stats
