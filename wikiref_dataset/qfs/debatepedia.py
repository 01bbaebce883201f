"""Debatepedia reader: the released line-aligned files → rows of the DUC shape, one row per line.

The Debatepedia query-focused abstractive dataset (Nema et al., 2017, "Diversity driven Attention Model for
Query-based Abstractive Summarization") is released as plain-text files under ``data/``:
``{train,valid,test}_{content,query,summary}``, aligned by line number (line i of ``valid_content`` is the argument
whose query is line i of ``valid_query`` and whose one-line abstract is line i of ``valid_summary``). Every line is
lowercased, tokenized (``n't``, `````` ``…''``) and wrapped in ``<s> … <eos>``; in the training files digits are
masked as ``#``.

What a row is: ``topic_id`` ``<released split>/<line number>`` (``valid/17``), ``query`` (the query line), one
document (the argument: ``docno`` as the topic id, ``sentences`` from the project's sentence splitter) and
``references`` (the summary line). The markers are removed; the text is kept as released (lowercased and tokenized:
the references are in that form, and ROUGE compares like with like).

A split is converted when its three files are present. A split with only its query and summary files (a copy of the
release without ``train_content``) is not converted, and the summary says so. Files of one split with different line
counts are refused (the alignment cannot be trusted). A line whose content, query or summary is empty is skipped,
counted and named.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import QfsError, QfsStats, chosen_splits, reference_lines, released_name

if TYPE_CHECKING:
    from ..text import TextPipeline

__all__ = ["PARTS", "RELEASED_SPLITS", "read_debatepedia", "strip_markers"]

RELEASED_SPLITS: dict[str, str] = {"train": "train", "valid": "validation", "test": "test"}
"""Released file prefix → split name."""
PARTS = ("content", "query", "summary")


def strip_markers(line: str) -> str:
    """A released line without its ``<s>`` and ``<eos>`` markers and surrounding whitespace."""
    words = line.split()
    if words[:1] == ["<s>"]:
        words = words[1:]
    if words[-1:] == ["<eos>"]:
        words = words[:-1]
    return " ".join(words)


def _read_lines(file: Path) -> list[str]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise QfsError(f"{file}: cannot be read ({error})") from None
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") or not text else lines


def read_debatepedia(path: str | Path, pipeline: TextPipeline, splits: list[str] | None = None,
                     progress: bool = False) -> tuple[dict[str, list[dict[str, Any]]], QfsStats]:
    """Every complete released split of the Debatepedia release at ``path`` (or those in ``splits``) → ``({split:
    rows}, stats)``, lines in file order.

    Raises:
        QfsError: ``path`` holds no complete split, a split named in ``splits`` is incomplete or absent, or a
            split's files differ in line count.
    """
    root = Path(path) / "data" if (Path(path) / "data").is_dir() else Path(path)
    stats = QfsStats("debatepedia", source=str(path))
    complete, partial = {}, {}
    for prefix, split in RELEASED_SPLITS.items():
        files = {part: root / f"{prefix}_{part}" for part in PARTS}
        have = [part for part, file in files.items() if file.is_file()]
        if len(have) == len(PARTS):
            complete[split] = root / prefix
        elif have:
            partial[split] = (prefix, [part for part in PARTS if part not in have])
    for split, (prefix, missing) in partial.items():
        note = f"{split} not converted: {', '.join(f'{prefix}_{part}' for part in missing)} missing"
        if splits and split in splits:
            raise QfsError(f"{path}: {note}")
        stats.notes[note] += 1
    if not complete:
        raise QfsError(f"{path}: not a Debatepedia release with a complete split (expected data/valid_content, "
                       "data/valid_query and data/valid_summary, or the train_/test_ files)")
    train_pairs = _train_pairs(root)
    rows: dict[str, list[dict[str, Any]]] = {}
    for split, stem in chosen_splits(complete, splits, path).items():
        prefix = stem.name
        parts = {part: _read_lines(root / f"{prefix}_{part}") for part in PARTS}
        counts = {f"{prefix}_{part}": len(lines) for part, lines in parts.items()}
        if len(set(counts.values())) != 1:
            raise QfsError(f"{root}: the {split} files are not aligned (line counts "
                           f"{', '.join(f'{name} {count:,}' for name, count in counts.items())})")
        stats.released_files[split] = [released_name(root / name, path) for name in counts]
        kept = []
        for number, (content, query, summary) in enumerate(zip(*(parts[part] for part in PARTS)), 1):
            content, query, summary = strip_markers(content), strip_markers(query), strip_markers(summary)
            if not (content and query and summary):
                empty = [part for part, text in zip(PARTS, (content, query, summary)) if not text]
                stats.problem("line with an empty part (skipped)", f"{prefix} line {number}: {', '.join(empty)}")
                continue
            kept.append((number, content, query, summary))
            if split != "train" and (query, summary) in train_pairs:
                stats.notes[f"{split} rows whose query and summary also stand in train_query/train_summary"] += 1
        sentences = pipeline.split_sentences_many(content for _, content, _, _ in kept)
        rows[split] = [{"topic_id": f"{prefix}/{number}", "benchmark": "debatepedia", "query": [query],
                        "documents": [{"docno": f"{prefix}/{number}", "date": "", "headline": "",
                                       "sentences": split_content}],
                        "references": [reference_lines(pipeline, summary)]}
                       for (number, _, query, summary), split_content in zip(kept, sentences)]
        stats.rows[split] = stats.documents[split] = stats.references[split] = len(rows[split])
        stats.sentences[split] = sum(len(row["documents"][0]["sentences"]) for row in rows[split])
        if progress:
            print(f"Debatepedia {split}: {len(rows[split]):,} rows", flush=True)
    return rows, stats


def _train_pairs(root: Path) -> set[tuple[str, str]]:
    """The (query, summary) pairs of the training files, when present (for the overlap count of the other splits)."""
    if not ((root / "train_query").is_file() and (root / "train_summary").is_file()):
        return set()
    return set(zip(map(strip_markers, _read_lines(root / "train_query")),
                   map(strip_markers, _read_lines(root / "train_summary"))))
