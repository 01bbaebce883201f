"""DUC 2005-2007 reader: the folders NIST distributes → one `datasets` dataset per year, one row per cluster.

DUC data comes from NIST to registered users and cannot be shipped; users point this reader at the folders they
received. What it reads (all three years, located under one root folder, see :func:`locate_duc`), each file parsed
by :mod:`wikiref_dataset.duc.nist`:

* **topics** — ``duc{year}_topics.sgml``: the ``<topic>`` elements (``<num>``, ``<title>``, ``<narr>``, 2005's
  ``<granularity>``).
* **documents** — one folder per topic (``duc2005_docs/d301i/``, ``duc2006_docs/D0601A/``,
  ``duc2007_testdocs/main/D0701A/``), one SGML file per document named by its DOCNO (AQUAINT newswire, Financial
  Times and Los Angeles Times, each its own dialect). A document that cannot be read (no ``<TEXT>``, no sentence,
  unreadable file) is skipped, counted by reason and logged; it never stops the conversion.
* **reference summaries** — ``…/ROUGE/models/D0601.M.250.A.A``, plain text, kept as ROUGE reads them.

Output (:data:`DUC_FEATURES`): ``topic_id`` (upper case, ``D0601A``; 2005's ``d301i`` becomes ``D301I``),
``year``, ``granularity`` (2005 only, else ``""``), ``query`` (the query levels: the title, then each sentence of the
narrative), ``documents`` (``docno``, ``date`` as ISO ``yyyy-mm-dd`` or ``""``, ``headline``, ``sentences``,
sorted by DOCNO) and ``references`` (sorted by assessor letter). Sentences come from the project's
:class:`~wikiref_dataset.text.TextPipeline` (batch API); a document's paragraphs are unwrapped and separated by a
blank line, so a paragraph always ends a sentence.

Storage: a folder with ``data/test-00000-of-00001.parquet`` (the `datasets` features are in the Parquet schema)
and a ``README.md`` dataset card whose ``configs`` block names the split, so ``datasets.load_dataset(folder)``
reads it (:func:`load_duc`). The split is called ``test`` because DUC is an evaluation benchmark; the cross-year
protocol (:func:`cross_year_folds`, :func:`load_cross_year`) trains on two years and tests on the third.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from ..utils.walk import walk
from .nist import (
    DucDocument,
    DucError,
    DucTopic,
    _read_text,
    clean_text,
    date_from_docno,
    decode_bytes,
    normalize_topic_id,
    parse_date,
    parse_documents,
    parse_topics,
    read_reference,
    reference_topic_id,
)

if TYPE_CHECKING:  # spaCy (the build extra) is imported only where raw text is split: read_duc, convert_duc
    import datasets

    from ..text import TextPipeline

__all__ = [
    "DUC_YEARS",
    "DUC_FEATURES",  # noqa: F822 (built on first use by the module's __getattr__)
    "duc_features",
    "read_converted",
    "DUC_SPLIT",
    "DucError",
    "DucTopic",
    "DucDocument",
    "DucSources",
    "DucStats",
    "CrossYearFold",
    "clean_text",
    "decode_bytes",
    "normalize_topic_id",
    "parse_topics",
    "parse_documents",
    "parse_date",
    "date_from_docno",
    "read_reference",
    "reference_topic_id",
    "locate_duc",
    "read_duc",
    "convert_duc",
    "write_duc",
    "load_duc",
    "cross_year_folds",
    "load_cross_year",
]

logger = logging.getLogger(__name__)

DUC_YEARS: tuple[int, ...] = (2005, 2006, 2007)  # duc_cli.py repeats it to stay light
DUC_SPLIT = "test"
"""Name of the one split of a converted year (DUC is an evaluation benchmark)."""

def duc_features() -> datasets.Features:
    """The `datasets` features of a converted year (:data:`DUC_FEATURES`)."""
    import datasets

    return datasets.Features(
        {
            "topic_id": datasets.Value("string"),
            "year": datasets.Value("int32"),
            "granularity": datasets.Value("string"),
            "query": datasets.List(datasets.Value("string")),
            "documents": datasets.List(
                {
                    "docno": datasets.Value("string"),
                    "date": datasets.Value("string"),
                    "headline": datasets.Value("string"),
                    "sentences": datasets.List(datasets.Value("string")),
                }
            ),
            "references": datasets.List(datasets.Value("string")),
        }
    )


def __getattr__(name: str) -> Any:
    # DUC_FEATURES (`datasets.Features`) is built on first use: importing this module (the evaluation reads
    # converted years with read_converted) must not import `datasets` (≈1.7 s and 150 MB on a 2-core machine).
    if name == "DUC_FEATURES":
        value = globals()["DUC_FEATURES"] = duc_features()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Where each year's files sit in the NIST distribution (relative parts searched for under the root folder).
_TOPICS_FILE = "duc{year}_topics.sgml"
_DOCS_DIRS: dict[int, tuple[str, ...]] = {
    2005: ("duc2005_docs",),
    2006: ("duc2006_docs",),
    2007: ("duc2007_testdocs", "main"),
}

# ---- locating a year's files -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DucSources:
    """Where one year's topics file, per-topic document folders and reference-summary folders are."""

    year: int
    topics_file: Path
    docs_dir: Path
    models_dirs: tuple[Path, ...]


def _walk_dirs(root: Path) -> Iterator[Path]:
    for current, dirnames, _ in walk(root):
        for name in dirnames:
            yield Path(current) / name


def _find_file(root: Path, name: str) -> Path | None:
    for current, _, filenames in walk(root):
        for filename in sorted(filenames):
            if filename.lower() == name.lower():
                return Path(current) / filename
    return None


def _find_docs_dir(root: Path, parts: tuple[str, ...]) -> Path | None:
    for candidate in itertools.chain([root], _walk_dirs(root)):
        if candidate.name.lower() != parts[0].lower():
            continue
        path = candidate.joinpath(*parts[1:])
        if path.is_dir():
            return path
        if len(parts) > 1:  # e.g. duc2007_testdocs without its main/ level
            return candidate
    return None


def locate_duc(
    root: str | os.PathLike | None,
    year: int,
    topics: str | os.PathLike | None = None,
    docs: str | os.PathLike | None = None,
    models: Sequence[str | os.PathLike] | None = None,
) -> DucSources:
    """Find a year's files under ``root`` (the folder NIST's archives were unpacked into), or take them as given.

    Searched: ``duc{year}_topics.sgml``; ``duc2005_docs/``, ``duc2006_docs/``, ``duc2007_testdocs/main/``; every
    ``models`` folder inside a ``ROUGE`` folder (``…/ROUGE/models/``). Symbolic links to folders are followed
    (each real folder is searched once, so a link loop ends).

    Raises:
        DucError: unknown year, or a topics file / documents folder that is neither given nor found.
    """
    if year not in _DOCS_DIRS:
        raise DucError(f"DUC year must be one of {list(_DOCS_DIRS)}, got {year}")
    base = Path(root) if root is not None else None
    if base is not None and not base.is_dir():
        raise DucError(f"{base}: not a folder")
    if base is None and (topics is None or docs is None):
        raise DucError("give the NIST folder, or both the topics file and the documents folder")
    topics_name = _TOPICS_FILE.format(year=year)
    topics_file = Path(topics) if topics is not None else _find_file(base, topics_name)
    if topics_file is None or not topics_file.is_file():
        where = topics_file if topics_file is not None else f"{topics_name} under {base}"
        raise DucError(f"DUC {year} topics file not found: {where}")
    docs_dir = Path(docs) if docs is not None else _find_docs_dir(base, _DOCS_DIRS[year])
    if docs_dir is None or not docs_dir.is_dir():
        where = docs_dir if docs_dir is not None else f"{'/'.join(_DOCS_DIRS[year])} under {base}"
        raise DucError(f"DUC {year} documents folder not found: {where}")
    if models is not None:
        models_dirs = tuple(Path(path) for path in models)
        for path in models_dirs:
            if not path.is_dir():
                raise DucError(f"reference summaries folder not found: {path}")
    else:
        models_dirs = tuple(path for path in _walk_dirs(base)
                            if path.name.lower() == "models" and path.parent.name.upper() == "ROUGE")
    return DucSources(year=year, topics_file=topics_file, docs_dir=docs_dir, models_dirs=models_dirs)


# ---- reading a year ----------------------------------------------------------------------------------------------


@dataclass
class DucStats:
    """What a conversion read and what it skipped (Table V of Zhu et al., 2022, gives the reference counts)."""

    year: int
    clusters: int = 0
    documents: int = 0
    sentences: int = 0
    references: int = 0
    skipped_documents: Counter[str] = field(default_factory=Counter)
    topics_without_documents: list[str] = field(default_factory=list)
    topics_without_references: list[str] = field(default_factory=list)
    folders_without_topic: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few lines for people: the counts, then what was skipped."""
        lines = [f"DUC {self.year}: {self.clusters} clusters, {self.documents:,} documents, "
                 f"{self.sentences:,} sentences, {self.references} reference summaries"]
        if not self.references:
            lines.append("references: 0 (no reference summary found: ROUGE cannot score this year; point --models "
                         "at the ROUGE/models folders)")
        if self.skipped_documents:
            reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(self.skipped_documents.items()))
            lines.append(f"skipped documents: {sum(self.skipped_documents.values())} ({reasons})")
        for label, topics in (("topics without a documents folder (not converted)", self.topics_without_documents),
                              ("topics without reference summaries", self.topics_without_references),
                              ("document folders without a topic (ignored)", self.folders_without_topic)):
            if topics:
                lines.append(f"{label}: {', '.join(topics)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"year": self.year, "clusters": self.clusters, "documents": self.documents,
                "sentences": self.sentences, "references": self.references,
                "skipped_documents": dict(self.skipped_documents),
                "topics_without_documents": self.topics_without_documents,
                "topics_without_references": self.topics_without_references,
                "folders_without_topic": self.folders_without_topic}


def _read_cluster(folder: Path, stats: DucStats) -> list[DucDocument]:
    documents: dict[str, DucDocument] = {}
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.name.startswith("."):
            continue
        try:
            parsed = parse_documents(_read_text(path), str(path))
        except (OSError, DucError) as error:
            stats.skipped_documents[error.reason if isinstance(error, DucError) else "unreadable"] += 1
            logger.warning("document skipped: %s", error)
            continue
        for document in parsed:
            if document.docno in documents:
                stats.skipped_documents["duplicate DOCNO"] += 1
                logger.warning("%s: DOCNO %s already read in %s; skipped", path, document.docno, folder)
                continue
            documents[document.docno] = document
    return [documents[docno] for docno in sorted(documents)]


def _read_references(models_dirs: Iterable[Path], topic_ids: set[str]) -> dict[str, list[str]]:
    found: dict[str, dict[str, str]] = {}
    for folder in models_dirs:
        for path in sorted(folder.iterdir()):
            parsed = reference_topic_id(path.name) if path.is_file() else None
            if parsed is None or parsed[0] not in topic_ids:
                continue
            topic_id, assessor = parsed
            try:
                text = read_reference(path)
            except OSError as error:
                logger.warning("%s: reference summary unreadable (%s); skipped", path, error)
                continue
            if not text:
                logger.warning("%s: reference summary is empty; skipped", path)
                continue
            found.setdefault(topic_id, {}).setdefault(assessor, text)
    return {topic: [texts[assessor] for assessor in sorted(texts)] for topic, texts in found.items()}


def read_duc(
    sources: DucSources, pipeline: TextPipeline | None = None, progress: bool = False
) -> tuple[list[dict[str, Any]], DucStats]:
    """Read one year: rows in :data:`DUC_FEATURES` layout (sorted by topic id) and the statistics.

    Sentences of all documents of a cluster are split in one batch through ``pipeline`` (the project's default
    :class:`TextPipeline` when ``None``). Topics without a documents folder are left out (and listed in the
    statistics); topics without reference summaries are kept with ``references=[]``.
    """
    if pipeline is None:
        from ..text import TextPipeline

        pipeline = TextPipeline()
    stats = DucStats(year=sources.year)
    topics = parse_topics(sources.topics_file)
    folders = {normalize_topic_id(path.name): path for path in sources.docs_dir.iterdir() if path.is_dir()}
    known = {topic.topic_id for topic in topics}
    stats.folders_without_topic = sorted(name for name in folders if name not in known)
    for name in stats.folders_without_topic:
        logger.warning("%s: no topic %s in %s; folder ignored", folders[name], name, sources.topics_file)
    references = _read_references(sources.models_dirs, known)
    narratives = pipeline.split_sentences_many(topic.narrative for topic in topics)
    rows = []
    for topic, narrative in tqdm(list(zip(topics, narratives)), desc=f"DUC {sources.year}", unit="cluster",
                                 disable=not progress):
        folder = folders.get(topic.topic_id)
        if folder is None:
            stats.topics_without_documents.append(topic.topic_id)
            logger.warning("%s: topic %s has no documents folder in %s; not converted",
                           sources.topics_file, topic.topic_id, sources.docs_dir)
            continue
        documents = _read_cluster(folder, stats)
        kept = []
        for document, sentences in zip(documents, pipeline.split_sentences_many(d.text for d in documents)):
            if not sentences:
                stats.skipped_documents["no sentence"] += 1
                logger.warning("%s: document %s has no sentence; skipped", folder, document.docno)
                continue
            kept.append({"docno": document.docno, "date": document.date, "headline": document.headline,
                         "sentences": sentences})
        if not kept:
            stats.topics_without_documents.append(topic.topic_id)
            logger.warning("%s: no readable document for topic %s; not converted", folder, topic.topic_id)
            continue
        topic_references = references.get(topic.topic_id, [])
        if not topic_references:
            stats.topics_without_references.append(topic.topic_id)
            logger.warning("topic %s: no reference summary found in %s", topic.topic_id,
                           ", ".join(map(str, sources.models_dirs)) or "(no ROUGE/models folder)")
        query = ([topic.title] if topic.title else []) + narrative
        rows.append({"topic_id": topic.topic_id, "year": sources.year, "granularity": topic.granularity,
                     "query": query, "documents": kept, "references": topic_references})
        stats.clusters += 1
        stats.documents += len(kept)
        stats.sentences += sum(len(document["sentences"]) for document in kept)
        stats.references += len(topic_references)
    rows.sort(key=lambda row: row["topic_id"])
    return rows, stats


# ---- writing and loading -----------------------------------------------------------------------------------------

_CARD = """---
configs:
- config_name: default
  data_files:
  - split: {split}
    path: {path}
---
# DUC {year} (converted)

Query-focused multi-document summarization clusters of DUC {year}, converted by `wikiref duc convert` from the
folders NIST distributes. One row per cluster: `topic_id`, `year`, `granularity` (DUC 2005 only), `query` (the
topic title, then each sentence of the narrative), `documents` (`docno`, ISO `date`, `headline`, `sentences`) and
`references` (the human summaries, one string each, lines separated by "\\n").

**Licence**: the text belongs to its publishers and is distributed by NIST to registered DUC users under NIST's
agreement. This folder is derived from that data: do not publish or share it.

Load: `datasets.load_dataset("<this folder>", split="{split}")`.

## Conversion

- sentences: {pipeline}
- {stats}
"""


def write_duc(rows: Sequence[Mapping[str, Any]], out_dir: str | os.PathLike, stats: DucStats,
              pipeline_description: str = "", overwrite: bool = False) -> Path:
    """Write rows as ``out_dir/data/test-00000-of-00001-<sha256>.parquet`` + ``out_dir/README.md``; returns the
    Parquet path.

    The folder is written beside ``out_dir`` and renamed into place
    (:func:`wikiref_dataset.process.folders.publish_folder`), so an interrupted run leaves the previous conversion
    intact, and the file name follows its content, so ``load_dataset`` never serves an earlier conversion from its
    cache.

    Raises:
        OutputFolderError: ``out_dir`` holds something other than a converted DUC year and ``overwrite`` is false.
    """
    from ..mining.dataset_folder import write_split_files
    from ..process.folders import check_output_folder, publish_folder, staging_folder

    check_output_folder(out_dir, "duc", overwrite)
    staging = staging_folder(out_dir)
    files = write_split_files({DUC_SPLIT: list(rows)}, staging, duc_features())
    card = _CARD.format(split=DUC_SPLIT, path=files[DUC_SPLIT], year=stats.year,
                        pipeline=pipeline_description or "TextPipeline", stats=stats.summary().replace("\n", "\n- "))
    (staging / "README.md").write_text(card, encoding="utf-8")
    publish_folder(staging, out_dir, "duc", overwrite)
    return Path(out_dir) / files[DUC_SPLIT]


def convert_duc(
    root: str | os.PathLike | None,
    year: int,
    out_dir: str | os.PathLike,
    topics: str | os.PathLike | None = None,
    docs: str | os.PathLike | None = None,
    models: Sequence[str | os.PathLike] | None = None,
    pipeline: TextPipeline | None = None,
    progress: bool = False,
    overwrite: bool = False,
) -> DucStats:
    """Locate, read and write one year (see :func:`locate_duc`, :func:`read_duc`, :func:`write_duc`).

    Raises:
        DucError: missing topics file or documents folder, or no cluster could be converted.
    """
    from ..process.folders import check_output_folder

    check_output_folder(out_dir, "duc", overwrite)  # before reading a year for minutes
    sources = locate_duc(root, year, topics=topics, docs=docs, models=models)
    if pipeline is None:
        from ..text import TextPipeline

        pipeline = TextPipeline()
    rows, stats = read_duc(sources, pipeline=pipeline, progress=progress)
    if not rows:
        raise DucError(f"DUC {year}: no cluster converted from {sources.docs_dir} (see the warnings above)")
    write_duc(rows, out_dir, stats, pipeline.description, overwrite=overwrite)
    return stats


def _converted_files(path: str | os.PathLike) -> list[Path]:
    folder = Path(path)
    files = sorted((folder / "data").glob(f"{DUC_SPLIT}-*.parquet"))
    if not (folder / "README.md").is_file() or not files:
        raise DucError(f"{folder}: not a converted DUC dataset (expected README.md and data/{DUC_SPLIT}-*.parquet; "
                       "make one with `wikiref duc convert`)")
    _check_converted_columns(folder, files[0])
    return files


CONVERTED_COLUMNS = ("topic_id", "year", "query", "documents", "references")
"""The columns every converted year's Parquet files hold (:func:`duc_features`), checked before a row is read: a
WikiRef build or a converted benchmark also keeps ``README.md`` and ``data/test-*.parquet``."""


def _check_converted_columns(folder: Path, first: Path) -> None:
    """Refuse, in one line, a folder whose data lacks the columns of a converted year (another dataset's folder)."""
    import pyarrow.parquet as pq

    try:
        names = set(pq.read_schema(first).names)
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
        raise DucError(f"{first}: not a readable Parquet file ({' '.join(str(error).split())[:200]})") from None
    lacking = [name for name in CONVERTED_COLUMNS if name not in names]
    if lacking:
        raise DucError(f"{folder}: not a converted DUC year: its data has no {', '.join(map(repr, lacking))} column"
                       f"{'s' if len(lacking) > 1 else ''} (another dataset's folder? make a DUC year with "
                       "`wikiref duc convert`)")


def load_duc(path: str | os.PathLike, cache_dir: str | None = None) -> datasets.Dataset:
    """A converted year as a `Dataset` (``datasets.load_dataset(path, split="test")``).

    Raises:
        DucError: ``path`` is not a folder written by :func:`convert_duc`.
    """
    _converted_files(path)
    from ..process.folders import load_dataset_folder

    return load_dataset_folder(Path(path), split=DUC_SPLIT, cache_dir=cache_dir)


def read_converted(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The rows of a converted year as Python objects, read straight from its Parquet files with pyarrow: the same
    rows, in the same order, as ``list(load_duc(path))``, without importing `datasets` or writing its cache (the
    evaluation of summaries reads a year this way: 0.3 s instead of 2 s). ``tests/wikiref_dataset/test_duc.py`` checks
    that both give the same rows.

    Raises:
        DucError: ``path`` is not a folder written by :func:`convert_duc`, or a file of it is not Parquet.
    """
    from ..process.folders import read_parquet_rows

    return read_parquet_rows(_converted_files(path), DucError)


# ---- cross-year protocol -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CrossYearFold:
    """One fold of the DUC protocol: train on ``train_years``, test on ``test_year``."""

    train_years: tuple[int, ...]
    test_year: int


def cross_year_folds(years: Sequence[int] = DUC_YEARS) -> list[CrossYearFold]:
    """Each year tested once, trained on the others: for 2005-2007, ``(2006, 2007) → 2005`` and so on."""
    years = sorted(set(years))
    if len(years) < 2:
        raise ValueError(f"the cross-year protocol needs at least two years, got {years}")
    return [CrossYearFold(tuple(y for y in years if y != test), test) for test in years]


def load_cross_year(
    by_year: Mapping[int, str | os.PathLike | datasets.Dataset], test_year: int
) -> tuple[datasets.Dataset, datasets.Dataset]:
    """``(train, test)`` for one fold: the other years concatenated (in year order), and ``test_year``.

    ``by_year`` maps each year to a converted folder or an already loaded `Dataset`.
    """
    if test_year not in by_year:
        raise ValueError(f"no dataset for the test year {test_year}; have {sorted(by_year)}")
    if len(by_year) < 2:
        raise ValueError("the cross-year protocol needs at least two years")
    import datasets

    loaded = {year: value if isinstance(value, datasets.Dataset) else load_duc(value)
              for year, value in by_year.items()}
    train = datasets.concatenate_datasets([loaded[year] for year in sorted(loaded) if year != test_year])
    return train, loaded[test_year]
