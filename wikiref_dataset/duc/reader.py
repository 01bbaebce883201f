"""DUC 2005-2007 reader: the folders NIST distributes → one `datasets` dataset per year, one row per cluster.

DUC data comes from NIST to registered users and cannot be shipped; users point this reader at the folders they
received. What it reads (all three years, located under one root folder, see :func:`locate_duc`):

* **topics** — ``duc{year}_topics.sgml``: a sequence of ``<topic>`` elements with ``<num>``, ``<title>``,
  ``<narr>`` (2005 adds ``<granularity>``). The files are not valid XML (bare ``&``, stray markup, a missing
  closing tag here and there), so every element is found with forgiving patterns: a field without its closing
  tag ends where the next field starts.
* **documents** — one folder per topic (``duc2005_docs/d301i/``, ``duc2006_docs/D0601A/``,
  ``duc2007_testdocs/main/D0701A/``), one SGML file per document named by its DOCNO. The sources differ:
  AQUAINT newswire (AP ``APW…``, New York Times ``NYT…``, Xinhua ``XIE…``: ``<DATE_TIME>``, ``<HEADLINE>``,
  ``<TEXT>`` of ``<P>`` paragraphs, AQUAINT entities such as ``&AMP;`` and ``&HT;``), Financial Times
  (``FT921-…``: ``<DATE>920214``, plain ``<TEXT>`` with blank-line paragraphs) and Los Angeles Times
  (``LA010190-…``: ``<DATE><P>January 1, 1990, Monday, …``, ``<P>`` in headline and text). A document that
  cannot be read (no ``<TEXT>``, no sentence, unreadable file) is skipped, counted by reason and logged; it never
  stops the conversion.
* **reference summaries** — ``…/ROUGE/models/D0601.M.250.A.A`` (topic, ``M``, length, topic selector, assessor;
  2005: ``D301.M.250.I.A``), plain text, one or more sentences per line. They are kept as read (lines stripped,
  blank lines dropped, ``"\\n"`` between lines) because ROUGE reads them that way.

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

Dates: from ``<DATE_TIME>``/``<DATE>`` when they parse, else from the DOCNO: ``APW19990707.0181`` → 1999-07-07,
``LA010190-0001`` (LA Times, ``LAmmddyy``) → 1990-01-01, ``FT921-5037`` → 1992-01-01 (the FT DOCNO carries the year
only; the digit after it is a TREC volume number, so month and day are set to 01).
"""

from __future__ import annotations

import datetime
import html
import itertools
import logging
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from ..utils.walk import walk

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
_REFERENCE_NAME = re.compile(r"^(D\d{3,4})\.M\.(\d+)\.([A-Z])\.([A-Z0-9]+)$", re.IGNORECASE)

# ---- lenient SGML ------------------------------------------------------------------------------------------------

# Fields of a <DOC> across the AQUAINT, FT and LA Times dialects: a field without its closing tag ends where the
# next of these opens (or the document closes). Inline tags (<P>, <ANNOTATION>, …) are not fields.
_DOC_FIELDS = (
    "DOCNO", "DOCID", "DOCTYPE", "DATE_TIME", "DATE", "HEADER", "BODY", "SLUG", "HEADLINE", "BYLINE", "DATELINE",
    "TEXT", "TRAILER", "PROFILE", "PUB", "PAGE", "SOURCE", "SECTION", "LENGTH", "GRAPHIC", "TYPE", "CORRECTION",
    "CORRECTION-DATE", "SUBJECT", "KEYWORD", "CO", "CN", "IN", "TP",
)  # fmt: skip
_DOC_END = r"</DOC\s*>|</BODY\s*>"
_TOPIC_FIELDS = ("num", "title", "narr", "granularity", "docs", "topic")
_TOPIC_END = r"</topic\s*>"
_DOC_START = re.compile(r"<DOC\s*>", re.IGNORECASE)
_DOC_CLOSE = re.compile(r"</DOC\s*>", re.IGNORECASE)
_TOPIC_START = re.compile(r"<topic\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z!][^<>]*>")
# Editorial notes inside a <TEXT> (AQUAINT corrections): not part of the story.
_NOTE = re.compile(r"<ANNOTATION\b[^<>]*>.*?</ANNOTATION\s*>", re.IGNORECASE | re.DOTALL)
_P_TAG = re.compile(r"</?P\b[^<>]*>", re.IGNORECASE)
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_INDENTED_LINE = re.compile(r"\n(?=[ \t]+\S)")
_ENTITY = re.compile(r"&(#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
# AQUAINT newswire codes (typesetting marks of the NYT and AP wires): a dash, the rest mean "space".
_AQUAINT_ENTITIES = {"MD": " -- ", "HT": " ", "QL": " ", "QR": " ", "QC": " ", "UR": " ", "LR": " ", "UN": " ",
                     "TP": " ", "TR": " "}


def _field_pattern(tag: str, siblings: Sequence[str], end: str) -> re.Pattern[str]:
    stops = "|".join(re.escape(name) for name in siblings)
    return re.compile(
        rf"<{re.escape(tag)}(?:\s[^<>]*)?>(.*?)(?:</{re.escape(tag)}\s*>|(?=<(?:{stops})(?:\s[^<>]*)?>|{end})|\Z)",
        re.IGNORECASE | re.DOTALL,
    )


_DOC_PATTERNS = {tag: _field_pattern(tag, _DOC_FIELDS, _DOC_END) for tag in _DOC_FIELDS}
_TOPIC_PATTERNS = {tag: _field_pattern(tag, _TOPIC_FIELDS, _TOPIC_END) for tag in _TOPIC_FIELDS}


def _replace_entity(match: re.Match[str]) -> str:
    name = match.group(1)
    if name in _AQUAINT_ENTITIES:
        return _AQUAINT_ENTITIES[name]
    for candidate in (match.group(0), f"&{name.lower()};"):  # SGML entity names are case-insensitive: &AMP; &LT;
        decoded = html.unescape(candidate)
        if decoded != candidate:
            return decoded
    return " "  # an unknown entity is a typesetting code, not text


def clean_text(text: str) -> str:
    """Markup (and ``<ANNOTATION>`` notes) removed, entities decoded (a bare ``&`` is kept), whitespace runs made one
    space, stripped."""
    text = _TAG.sub(" ", _NOTE.sub(" ", text))
    text = _ENTITY.sub(_replace_entity, text)
    return " ".join(text.split())


def _fields(block: str, patterns: Mapping[str, re.Pattern[str]], tag: str) -> list[str]:
    return [match.group(1) for match in patterns[tag].finditer(block)]


def _first(block: str, patterns: Mapping[str, re.Pattern[str]], tag: str) -> str | None:
    match = patterns[tag].search(block)
    return None if match is None else match.group(1)


def decode_bytes(data: bytes) -> str:
    """UTF-8 when the bytes are UTF-8, else Latin-1 (the TREC collections predate UTF-8); ``\\r\\n`` → ``\\n``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_text(path: Path) -> str:
    return decode_bytes(path.read_bytes())


# ---- errors and records ------------------------------------------------------------------------------------------


class DucError(ValueError):
    """A DUC input the reader cannot use (a missing topics file, a malformed record), with the file named.

    ``reason`` is a short label under which a skipped record is counted (``"no <TEXT>"``, ``"not SGML"``, …).
    """

    def __init__(self, message: str, reason: str = "malformed") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class DucTopic:
    """One ``<topic>`` of a topics file."""

    topic_id: str
    title: str
    narrative: str
    granularity: str = ""


@dataclass
class DucDocument:
    """One ``<DOC>``: its DOCNO, ISO date (``""`` when unknown), headline and paragraphs of plain text."""

    docno: str
    date: str
    headline: str
    paragraphs: list[str]

    @property
    def text(self) -> str:
        """The paragraphs separated by blank lines: what the sentence splitter reads (a paragraph ends a sentence)."""
        return "\n\n".join(self.paragraphs)


# ---- topics ------------------------------------------------------------------------------------------------------


def normalize_topic_id(value: str) -> str:
    """``" d301i "`` → ``"D301I"``: the form used in rows, folder lookups and reference file names."""
    return "".join(value.split()).upper()


def parse_topics(path: str | os.PathLike) -> list[DucTopic]:
    """The topics of a ``duc{year}_topics.sgml`` file, in file order.

    Raises:
        DucError: the file does not exist or holds no ``<topic>`` with a ``<num>``.
    """
    path = Path(path)
    if not path.is_file():
        raise DucError(f"{path}: topics file not found")
    text = _read_text(path)
    topics: list[DucTopic] = []
    seen: set[str] = set()
    for position, block in enumerate(_TOPIC_START.split(text)[1:], start=1):
        block = re.split(_TOPIC_END, block, maxsplit=1, flags=re.IGNORECASE)[0]
        number = clean_text(_first(block, _TOPIC_PATTERNS, "num") or "")
        if not number:
            logger.warning("%s: topic %d has no <num>; skipped", path, position)
            continue
        topic_id = normalize_topic_id(number)
        if topic_id in seen:
            logger.warning("%s: topic %s appears twice; the second one is skipped", path, topic_id)
            continue
        seen.add(topic_id)
        topics.append(DucTopic(
            topic_id=topic_id,
            title=clean_text(_first(block, _TOPIC_PATTERNS, "title") or ""),
            narrative=clean_text(_first(block, _TOPIC_PATTERNS, "narr") or ""),
            granularity=clean_text(_first(block, _TOPIC_PATTERNS, "granularity") or "").lower(),
        ))
    if not topics:
        raise DucError(f"{path}: no <topic> with a <num> found; is this a DUC topics file?")
    return topics


# ---- dates -------------------------------------------------------------------------------------------------------

_MONTHS = {name: number for number, names in enumerate(
    [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
     ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
     ("dec", "december")], start=1) for name in names}
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_US_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})\b")
_NAMED_DATE = re.compile(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})\b")
_COMPACT_DATE = re.compile(r"^\s*(\d{6}|\d{8})\b")
_AQUAINT_DOCNO = re.compile(r"^[A-Z]{2,4}(\d{4})(\d{2})(\d{2})\b")
_LA_DOCNO = re.compile(r"^LA(\d{2})(\d{2})(\d{2})-", re.IGNORECASE)
_FT_DOCNO = re.compile(r"^FT9(\d)\d-", re.IGNORECASE)


def _iso(year: int, month: int, day: int) -> str:
    if year < 100:
        year += 1900 if year >= 50 else 2000
    try:
        return datetime.date(year, month, day).isoformat()
    except ValueError:
        return ""


def parse_date(value: str) -> str:
    """An ISO ``yyyy-mm-dd`` date from a ``<DATE_TIME>``/``<DATE>`` field, or ``""``.

    Understands ``1999-07-07 17:52:03``, ``07/09/1999 05:12:00``, ``January 1, 1990, Monday, Home Edition`` and
    the compact ``920214``/``19920214`` of the Financial Times.
    """
    value = clean_text(value)
    if match := _ISO_DATE.search(value):
        return _iso(int(match[1]), int(match[2]), int(match[3]))
    if match := _US_DATE.search(value):
        return _iso(int(match[3]), int(match[1]), int(match[2]))
    if (match := _NAMED_DATE.search(value)) and match[1].lower() in _MONTHS:
        return _iso(int(match[3]), _MONTHS[match[1].lower()], int(match[2]))
    if match := _COMPACT_DATE.match(value):
        digits = match[1]
        if len(digits) == 6:
            return _iso(int(digits[:2]), int(digits[2:4]), int(digits[4:]))
        return _iso(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    return ""


def date_from_docno(docno: str) -> str:
    """The date a DOCNO encodes: ``APW19990707.0181`` → ``1999-07-07``, ``LA010190-0001`` → ``1990-01-01``,
    ``FT921-5037`` → ``1992-01-01`` (year only: month and day set to 01); ``""`` for other DOCNOs."""
    docno = docno.strip()
    if match := _AQUAINT_DOCNO.match(docno):
        return _iso(int(match[1]), int(match[2]), int(match[3]))
    if match := _LA_DOCNO.match(docno):
        return _iso(int(match[3]), int(match[1]), int(match[2]))
    if match := _FT_DOCNO.match(docno):
        return _iso(1990 + int(match[1]), 1, 1)
    return ""


# ---- documents ---------------------------------------------------------------------------------------------------


def _paragraphs(raw: str) -> list[str]:
    """Paragraphs of a ``<TEXT>``: ``<P>`` elements when there are any, else blank-line separated blocks, else
    indented first lines (TIPSTER style), else the whole text as one paragraph."""
    if _P_TAG.search(raw):
        pieces = _P_TAG.split(raw)
    elif _BLANK_LINE.search(raw.strip()):
        pieces = _BLANK_LINE.split(raw)
    elif len(_INDENTED_LINE.findall(raw)) >= 2:
        pieces = _INDENTED_LINE.split(raw)
    else:
        pieces = [raw]
    return [paragraph for paragraph in map(clean_text, pieces) if paragraph]


def parse_documents(text: str, source: str = "<text>") -> list[DucDocument]:
    """The ``<DOC>`` elements of one SGML file (usually one). A file with a ``<TEXT>`` but no ``<DOC>`` counts as one
    document; the DOCNO falls back to ``source``'s file name.

    Raises:
        DucError: neither ``<DOC>`` nor ``<TEXT>`` (not a DUC document), no ``<TEXT>`` or no text in it; the message
            names ``source`` and the DOCNO, :attr:`DucError.reason` says which.
    """
    blocks = _DOC_START.split(text)[1:]
    if not blocks:
        if not _DOC_PATTERNS["TEXT"].search(text):
            raise DucError(f"{source}: no <DOC> or <TEXT> element; not a DUC document", reason="not SGML")
        blocks = [text]
    documents = []
    for block in blocks:
        block = _DOC_CLOSE.split(block, maxsplit=1)[0]
        docno = clean_text(_first(block, _DOC_PATTERNS, "DOCNO") or "") or Path(source).name
        texts = _fields(block, _DOC_PATTERNS, "TEXT")
        if not texts:
            raise DucError(f"{source}: document {docno} has no <TEXT>", reason="no <TEXT>")
        paragraphs = [paragraph for raw in texts for paragraph in _paragraphs(raw)]
        if not paragraphs:
            raise DucError(f"{source}: document {docno} has an empty <TEXT>", reason="empty <TEXT>")
        date = ""
        for tag in ("DATE_TIME", "DATE"):
            value = _first(block, _DOC_PATTERNS, tag)
            if value and (date := parse_date(value)):
                break
        documents.append(DucDocument(
            docno=docno,
            date=date or date_from_docno(docno),
            headline=clean_text(_first(block, _DOC_PATTERNS, "HEADLINE") or ""),
            paragraphs=paragraphs,
        ))
    return documents


# ---- reference summaries -----------------------------------------------------------------------------------------


def reference_topic_id(name: str) -> tuple[str, str] | None:
    """``"D0601.M.250.A.B"`` → ``("D0601A", "B")`` (topic id, assessor or system id); ``None`` for other names."""
    match = _REFERENCE_NAME.match(name)
    if match is None:
        return None
    return normalize_topic_id(match[1] + match[3]), match[4].upper()


def read_reference(path: str | os.PathLike) -> str:
    """A summary file as ROUGE reads it: lines stripped, blank lines dropped, joined with ``"\\n"``."""
    lines = (clean_text(line) for line in _read_text(Path(path)).split("\n"))
    return "\n".join(line for line in lines if line)


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

    The folder is written beside ``out_dir`` and renamed into place (:func:`wikiref_dataset.process.folders.publish_folder`),
    so an interrupted run leaves the previous conversion intact, and the file name follows its content, so
    ``load_dataset`` never serves an earlier conversion from its cache.

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
