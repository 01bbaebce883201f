"""What the three benchmark converters share: the row shape, the conversion statistics, writing and reading a folder
(one split of it as the evaluation and fine-tuning read it: `QfsSplit`, :func:`load_split`).

A converted benchmark has the row shape of a converted DUC year (:mod:`wikiref_dataset.duc.reader`), so that the baselines,
the oracle, the training scripts and the evaluation read both the same way:

* ``topic_id`` — the row's id, unique in the folder (``Bed002/specific-3``, ``63833/q2``, ``valid/17``);
* ``query`` — the query as a list of levels (one element here: the released query or question);
* ``documents`` — ``docno``, ``date`` and ``headline`` (empty: the benchmarks have none), ``sentences``;
* ``references`` — the reference summaries (one for QMSum and Debatepedia, four for SQuALITY), one sentence per line
  as ROUGE reads them (a DUC reference keeps its lines the same way), so that ROUGE-L is the summary-level LCS over
  sentences that the benchmarks' scoring computes (``rougeLsum``).

and adds each benchmark's own fields (:data:`BENCHMARK_FIELDS`): ``benchmark``; QMSum's ``query_type``, ``domain``,
``answer_spans`` and ``answer_sentences`` and, per sentence, its ``speakers`` and ``turns``; SQuALITY's
``question_number`` and ``reference_workers``.

Storage: ``data/<split>-00000-of-00001-<sha256>.parquet`` per split (content-addressed, so the `datasets` cache never
serves an earlier conversion) and a ``README.md`` card whose ``configs`` block names each split's file, written in a
staging folder and renamed into place (:func:`wikiref_dataset.process.folders.publish_folder`): an interrupted conversion
leaves the previous one intact. Splits are named ``train``, ``validation`` and ``test`` (the released ``val``,
``dev`` and ``valid`` are the validation split); the card says which released file each came from.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import datasets

__all__ = ["BENCHMARKS", "BENCHMARK_FIELDS", "QFS_KIND", "QfsError", "QfsSplit", "QfsStats", "SPLITS",
           "benchmark_features", "chosen_splits", "converted_splits", "load_split", "read_converted", "reference_lines",
           "released_name", "write_benchmark"]

BENCHMARKS: tuple[str, ...] = ("qmsum", "squality", "debatepedia")  # qfs/cli.py repeats it to stay light
SPLITS: tuple[str, ...] = ("train", "validation", "test")
QFS_KIND = "qfs"
"""The folder kind (:data:`wikiref_dataset.process.folders.KINDS`) of a converted benchmark."""

BENCHMARK_FIELDS: dict[str, tuple[str, ...]] = {
    "qmsum": ("query_type", "domain", "answer_spans", "answer_sentences"),
    "squality": ("question_number", "reference_workers"),
    "debatepedia": (),
}
"""Each benchmark's own row fields, beside the DUC row shape."""


class QfsError(ValueError):
    """A release folder that cannot be converted, or a folder that is not a converted benchmark."""


def benchmark_features(benchmark: str) -> datasets.Features:
    """The `datasets` features of a converted ``benchmark``: the DUC row shape and the benchmark's own fields."""
    import datasets

    if benchmark not in BENCHMARKS:
        raise QfsError(f"unknown benchmark {benchmark!r}; known: {', '.join(BENCHMARKS)}")
    string, strings = datasets.Value("string"), datasets.List(datasets.Value("string"))
    document: dict[str, Any] = {"docno": string, "date": string, "headline": string, "sentences": strings}
    row: dict[str, Any] = {"topic_id": string, "benchmark": string, "query": strings}
    if benchmark == "qmsum":
        document |= {"speakers": strings, "turns": datasets.List(datasets.Value("int32"))}
        row |= {"query_type": string, "domain": string,
                "answer_spans": datasets.List({"start": datasets.Value("int32"), "end": datasets.Value("int32")}),
                "answer_sentences": datasets.List(datasets.Value("int32"))}
    elif benchmark == "squality":
        row |= {"question_number": datasets.Value("int32"), "reference_workers": strings}
    return datasets.Features({**row, "documents": datasets.List(document), "references": strings})


@dataclass
class QfsStats:
    """What a conversion read, per split, and what it skipped or repaired, each named.

    ``problems`` maps a kind of problem (``"unreadable file"``, ``"span out of range"``, ...) to the records it
    touched (``"train/IS1002b.json: specific query 3"``): the summary prints the counts and the first few names,
    :meth:`to_dict` keeps them all.
    """

    benchmark: str
    source: str = ""
    pipeline: str = ""
    rows: Counter[str] = field(default_factory=Counter)
    documents: Counter[str] = field(default_factory=Counter)
    sentences: Counter[str] = field(default_factory=Counter)
    references: Counter[str] = field(default_factory=Counter)
    released_files: dict[str, list[str]] = field(default_factory=dict)
    notes: Counter[str] = field(default_factory=Counter)
    problems: dict[str, list[str]] = field(default_factory=dict)

    def problem(self, kind: str, record: str) -> None:
        """Count one malformed or repaired record under ``kind``, by name."""
        self.problems.setdefault(kind, []).append(record)

    def summary(self) -> str:
        """A few lines for people: per split the counts, then the notes and the problems with the records named."""
        lines = []
        for split in SPLITS:
            if split in self.rows:
                released = ", ".join(self.released_files.get(split, []))
                lines.append(f"{split}: {self.rows[split]:,} queries, {self.documents[split]:,} documents, "
                             f"{self.sentences[split]:,} sentences, {self.references[split]:,} reference summaries"
                             + (f" (from {released})" if released else ""))
        for note, count in sorted(self.notes.items()):
            lines.append(f"{note}: {count:,}")
        for kind, records in sorted(self.problems.items()):
            shown = ", ".join(records[:5]) + (f" and {len(records) - 5} more" if len(records) > 5 else "")
            lines.append(f"{kind}: {len(records)} ({shown})")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "source": self.source, "pipeline": self.pipeline, "rows": dict(self.rows),
                "documents": dict(self.documents), "sentences": dict(self.sentences),
                "references": dict(self.references), "released_files": self.released_files,
                "notes": dict(self.notes), "problems": self.problems}


def reference_lines(pipeline: Any, text: Any) -> str:
    """A reference summary as ROUGE reads it: its sentences (the project's splitter), one per line; ``""`` for none."""
    text = str(text or "").strip()
    return "\n".join(pipeline.split_sentences(text)) if text else ""


def chosen_splits(present: Mapping[str, Path], splits: Sequence[str] | None, release: str | os.PathLike
                  ) -> dict[str, Path]:
    """The splits to convert: every one ``present`` in the release, or those named in ``splits``.

    Raises:
        QfsError: a split named in ``splits`` is not in the release.
    """
    if not splits:
        return dict(present)
    missing = [split for split in splits if split not in present]
    if missing:
        raise QfsError(f"{release}: no {', '.join(missing)} split; the release holds "
                       f"{', '.join(present) or 'no split'}")
    return {split: present[split] for split in SPLITS if split in splits}


def released_name(path: Path, release: str | os.PathLike) -> str:
    """``path`` relative to the release folder, for the card (the absolute path when it lies elsewhere)."""
    try:
        return path.relative_to(Path(release)).as_posix()
    except ValueError:
        return str(path)


def write_benchmark(rows_by_split: Mapping[str, Sequence[Mapping[str, Any]]], out_dir: str | os.PathLike,
                    stats: QfsStats, card: str, overwrite: bool = False) -> dict[str, Path]:
    """Write the rows of each split as Parquet and ``card`` (the body under the YAML header) as ``README.md`` into
    ``out_dir``, published whole (staging folder, then a rename); returns ``{split: parquet path}``.

    Raises:
        OutputFolderError: ``out_dir`` holds something other than a converted benchmark and ``overwrite`` is false.
    """
    import json

    from ..mining.dataset_folder import card_front_matter, write_split_files
    from ..process.folders import check_output_folder, publish_folder, staging_folder

    check_output_folder(out_dir, QFS_KIND, overwrite)
    staging = staging_folder(out_dir)
    ordered = {split: list(rows_by_split[split]) for split in SPLITS if split in rows_by_split}
    files = write_split_files(ordered, staging, benchmark_features(stats.benchmark))
    licence = {"qmsum": "mit", "squality": "cc-by-4.0", "debatepedia": "other"}[stats.benchmark]
    front = card_front_matter(f"{stats.benchmark} (converted)", files, licence=licence)
    (staging / "README.md").write_text("\n".join(front) + card, encoding="utf-8")
    (staging / "conversion.json").write_text(json.dumps(stats.to_dict(), indent=1), encoding="utf-8")
    publish_folder(staging, out_dir, QFS_KIND, overwrite, record={"benchmark": stats.benchmark})
    return {split: Path(out_dir) / name for split, name in files.items()}


def converted_splits(path: str | os.PathLike) -> dict[str, list[Path]]:
    """``{split: Parquet files}`` of a converted benchmark folder, as its card names them.

    Raises:
        QfsError: ``path`` is not a folder written by ``wikiref qfs convert``.
    """
    from ..process.folders import card_data_files

    folder = Path(path)
    if not (folder / "README.md").is_file() or not (folder / "conversion.json").is_file():
        raise QfsError(f"{folder}: not a converted benchmark (expected README.md and conversion.json; make one with "
                       "`wikiref qfs convert`)")
    files = card_data_files(folder)
    if not files:
        raise QfsError(f"{folder}: its README.md names no split file")
    return files


def read_converted(path: str | os.PathLike, split: str) -> list[dict[str, Any]]:
    """The rows of one split of a converted benchmark, read with pyarrow (no `datasets` import, no cache written): the
    same rows, in the same order, as ``list(load_dataset(path, split=split))``.

    Raises:
        QfsError: ``path`` is not a converted benchmark, has no split ``split``, or a file is not Parquet.
    """
    from ..process.folders import read_parquet_rows

    files = converted_splits(path)
    if split not in files:
        raise QfsError(f"{path}: no split {split!r}; it has {', '.join(files)}")
    return read_parquet_rows(files[split], QfsError)


@dataclass
class QfsSplit:
    """One split of a converted benchmark: its folder, benchmark, split name and rows."""

    path: Path
    benchmark: str
    split: str
    rows: list[dict[str, Any]]

    @property
    def key(self) -> str:
        """How tables and JSON name it: ``qmsum/validation``."""
        return f"{self.benchmark}/{self.split}"


def load_split(path: str | os.PathLike, split: str = "validation") -> QfsSplit:
    """A split of a converted benchmark (:func:`read_converted`: pyarrow, no `datasets`), every row of one benchmark
    and with a reference (the evaluation scores each row, fine-tuning labels each against its references).

    Raises:
        QfsError: not a converted benchmark, no such split, rows of several benchmarks, or a row without a reference.
    """
    rows = read_converted(path, split)
    benchmarks = sorted({row["benchmark"] for row in rows})
    if len(benchmarks) != 1:
        raise QfsError(f"{path}: expected the rows of one benchmark, found {benchmarks or 'none'}")
    without = [row["topic_id"] for row in rows if not any(row["references"])]
    if without:
        raise QfsError(f"{path} {split}: {len(without)} row(s) without a reference ({', '.join(without[:3])})")
    return QfsSplit(Path(path), benchmarks[0], split, rows)
