"""QMSum reader: the released meeting files → rows of the DUC shape, one row per query.

QMSum (Zhong et al., 2021, "QMSum: A New Benchmark for Query-based Multi-domain Meeting Summarization") is released
as one JSON file per meeting under ``data/ALL/{train,val,test}/`` (the repository also holds per-domain copies and
JSON-lines versions of the same meetings; this reader reads ``data/ALL``). A meeting file has exactly four keys:

* ``meeting_transcripts`` — the turns: ``speaker``, ``content``;
* ``general_query_list`` — ``query`` and ``answer`` of queries about the whole meeting;
* ``specific_query_list`` — ``query``, ``answer`` and ``relevant_text_span``: ``[start, end]`` pairs of turn
  indices, written as strings, both ends included (topics run ``[0, 90]`` then ``[91, 288]``);
* ``topic_list`` — the meeting's topics with their spans (not used: no query comes with them).

What a row is: ``topic_id`` ``<meeting>/general-<i>`` or ``<meeting>/specific-<i>`` (i: the position in the
released list), ``query`` (the query), ``query_type``, ``domain`` (``academic``: ICSI meetings ``B..nnn``;
``product``: AMI meetings ``ES/IS/TS/EN nnnn x``; ``committee``: the parliamentary committees), one document (the
meeting: ``docno`` its file name) whose ``sentences`` are the turns split into sentences, each with its
``speakers`` entry and the released index of its turn (``turns``), ``references`` (the answer, one sentence per
line), ``answer_spans``
(the released spans as integers) and ``answer_sentences`` (the sentences whose turn lies in a span: the extractive
labels the annotators gave).

Transcript text, as the QMSum baselines and Vig et al. (2022, "Exploring Neural Models for Query-Focused
Summarization") prepare it, unless ``keep_markup``: the transcribers' tags (``{disfmarker}``, ``{vocalsound}``,
``{gap}``, ``{pause}``, ``{comment}``, ``{nonvocalsound}``) are removed, and AMI's spelled-out acronyms written with
underscores (``T_V_``, ``L_C_D_s``) become words (``TV``, ``LCDs``). A turn left without text has no sentence (its
index stays reserved, so spans still point at the released turns). The AMI and ICSI transcripts are tokenized as
released (``we 're``); nothing is re-tokenized.

Malformed records are skipped or repaired, counted and named (:class:`~wikiref_dataset.qfs.common.QfsStats`): an
unreadable or incomplete meeting file (skipped), a query without text or answer (skipped), a span that is not two
integers in range with start ≤ end (dropped; a specific query left without a span keeps its row, with no extractive
label), spans that overlap or are out of order (kept, counted: ``train/IS1002b.json`` has both).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import QfsError, QfsStats, chosen_splits, reference_lines, released_name

if TYPE_CHECKING:
    from ..text import TextPipeline


__all__ = ["RELEASED_SPLITS", "clean_turn", "meeting_domain", "read_meeting", "read_qmsum"]

RELEASED_SPLITS: dict[str, str] = {"train": "train", "val": "validation", "test": "test"}
"""Released folder under ``data/ALL`` → split name."""

_TAG = re.compile(r"\{[a-z]+\}")
_ACRONYM = re.compile(r"\b((?:[A-Z]_)+)(s?)\b")
_SPACES = re.compile(r"\s+")
_ICSI = re.compile(r"^B[a-z]{2}\d{3}$")
_AMI = re.compile(r"^(ES|IS|TS|EN)\d{4}[a-e]$")


def clean_turn(text: str, keep_markup: bool = False) -> str:
    """A turn's text as the models see it: tags removed, ``T_V_`` → ``TV``, whitespace runs made single spaces."""
    if not keep_markup:
        text = _TAG.sub(" ", text)
        text = _ACRONYM.sub(lambda match: match.group(1).replace("_", "") + match.group(2), text)
    return _SPACES.sub(" ", text).strip()


def meeting_domain(meeting_id: str) -> str:
    """``academic`` (ICSI: ``Bed002``), ``product`` (AMI: ``ES2004a``) or ``committee`` (the rest)."""
    if _ICSI.match(meeting_id):
        return "academic"
    if _AMI.match(meeting_id):
        return "product"
    return "committee"


def _spans(raw: Any, n_turns: int, name: str, stats: QfsStats) -> list[dict[str, int]]:
    """The valid ``[start, end]`` spans of one query as integers; the others are dropped, counted and named."""
    if not isinstance(raw, list):
        stats.problem("spans not a list (query kept without spans)", name)
        return []
    spans: list[dict[str, int]] = []
    for pair in raw:
        try:
            start, end = (int(value) for value in pair)
        except (TypeError, ValueError):
            stats.problem("span not two integers (dropped)", f"{name}: {pair!r}")
            continue
        if not 0 <= start <= end < n_turns:
            stats.problem("span out of range or reversed (dropped)", f"{name}: [{start}, {end}] of {n_turns} turns")
            continue
        spans.append({"start": start, "end": end})
    ordered = sorted(spans, key=lambda span: (span["start"], span["end"]))
    if ordered != spans or any(b["start"] <= a["end"] for a, b in zip(ordered, ordered[1:])):
        stats.problem("spans overlapping or out of order (kept)", name)
    return spans


def read_meeting(path: Path, pipeline: TextPipeline, stats: QfsStats, split: str, label: str,
                 keep_markup: bool = False) -> list[dict[str, Any]]:
    """The rows of one meeting file (general queries first, then specific ones, each in released order); ``[]`` for
    a file that cannot be read, counted and named."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(record, dict):
            raise TypeError(f"not a JSON object but {type(record).__name__}")
        turns = record["meeting_transcripts"]
        general, specific = record["general_query_list"], record["specific_query_list"]
        if not isinstance(turns, list) or not isinstance(general, list) or not isinstance(specific, list):
            raise TypeError("meeting_transcripts, general_query_list and specific_query_list must be lists")
        texts = [clean_turn(str(turn.get("content") or ""), keep_markup) for turn in turns]
        speakers = [str(turn.get("speaker") or "") for turn in turns]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as error:
        reason = f"missing key {error}" if isinstance(error, KeyError) else " ".join(str(error).split())[:200]
        stats.problem("unreadable meeting file (skipped)", f"{label}: {reason}")
        return []
    meeting = path.stem
    sentences: list[str] = []
    sentence_speakers: list[str] = []
    sentence_turns: list[int] = []
    kept = [index for index, text in enumerate(texts) if text]
    stats.notes["turns"] += len(texts)
    stats.notes["turns without text once tags are removed (no sentence)"] += len(texts) - len(kept)
    for index, split_turn in zip(kept, pipeline.split_sentences_many(texts[index] for index in kept)):
        sentences += split_turn
        sentence_speakers += [speakers[index]] * len(split_turn)
        sentence_turns += [index] * len(split_turn)
    if not sentences:
        stats.problem("meeting without text (skipped)", label)
        return []
    document = {"docno": meeting, "date": "", "headline": "", "sentences": sentences,
                "speakers": sentence_speakers, "turns": sentence_turns}
    domain = meeting_domain(meeting)
    rows = []
    for query_type, queries in (("general", general), ("specific", specific)):
        for position, query in enumerate(queries):
            name = f"{label}: {query_type} query {position}"
            if not isinstance(query, dict) or not str(query.get("query") or "").strip() \
                    or not str(query.get("answer") or "").strip():
                stats.problem("query without text or answer (skipped)", name)
                continue
            spans = _spans(query.get("relevant_text_span", []), len(texts), name, stats) \
                if query_type == "specific" else []
            if query_type == "specific" and not spans:
                stats.problem("specific query without a valid span (no extractive label)", name)
            in_span = [any(span["start"] <= turn <= span["end"] for span in spans) for turn in sentence_turns]
            rows.append({"topic_id": f"{meeting}/{query_type}-{position}", "benchmark": "qmsum",
                         "query": [" ".join(str(query["query"]).split())], "query_type": query_type,
                         "domain": domain, "answer_spans": spans,
                         "answer_sentences": [i for i, inside in enumerate(in_span) if inside],
                         "documents": [document], "references": [reference_lines(pipeline, query["answer"])]})
            stats.notes[f"{query_type} queries"] += 1
    stats.rows[split] += len(rows)
    stats.documents[split] += 1
    stats.sentences[split] += len(sentences)
    stats.references[split] += len(rows)
    return rows


def _release_root(path: Path) -> Path:
    """``data/ALL`` under the release folder (or the folder itself when it is ``data/ALL`` or ``data``)."""
    for candidate in (path / "data" / "ALL", path / "ALL", path):
        if any((candidate / name).is_dir() for name in RELEASED_SPLITS):
            return candidate
    raise QfsError(f"{path}: not a QMSum release (expected data/ALL/train, data/ALL/val or data/ALL/test with one "
                   "JSON file per meeting)")


def read_qmsum(path: str | Path, pipeline: TextPipeline, splits: Sequence[str] | None = None,
               keep_markup: bool = False, progress: bool = False) -> tuple[dict[str, list[dict[str, Any]]], QfsStats]:
    """Every released split of the QMSum release at ``path`` (or those named in ``splits``) → ``({split: rows},
    stats)``; meetings in file-name order.

    Raises:
        QfsError: ``path`` is not a QMSum release, or a split named in ``splits`` is not in it.
    """
    from tqdm.auto import tqdm

    root = _release_root(Path(path))
    stats = QfsStats("qmsum", source=str(path))
    present = {RELEASED_SPLITS[name]: root / name for name in RELEASED_SPLITS if (root / name).is_dir()}
    chosen = chosen_splits(present, splits, path)
    rows: dict[str, list[dict[str, Any]]] = {}
    for split, folder in chosen.items():
        files = sorted(folder.glob("*.json"))
        if not files:
            raise QfsError(f"{folder}: no meeting file (*.json)")
        stats.released_files[split] = [f"{released_name(folder, path)}/ ({len(files)} meetings)"]
        rows[split] = []
        for file in tqdm(files, desc=f"QMSum {split}", unit="meeting", disable=not progress):
            rows[split] += read_meeting(file, pipeline, stats, split, f"{folder.name}/{file.name}", keep_markup)
    return rows, stats
