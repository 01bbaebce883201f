"""NIST's DUC files parsed: the topics file, the documents of a cluster, their dates and the reference summaries.

* **topics** — ``duc{year}_topics.sgml``: a sequence of ``<topic>`` elements with ``<num>``, ``<title>``,
  ``<narr>`` (2005 adds ``<granularity>``). The files are not valid XML (bare ``&``, stray markup, a missing
  closing tag here and there), so every element is found with forgiving patterns: a field without its closing
  tag ends where the next field starts.
* **documents** — one SGML file per document named by its DOCNO. The sources differ:
  AQUAINT newswire (AP ``APW…``, New York Times ``NYT…``, Xinhua ``XIE…``: ``<DATE_TIME>``, ``<HEADLINE>``,
  ``<TEXT>`` of ``<P>`` paragraphs, AQUAINT entities such as ``&AMP;`` and ``&HT;``), Financial Times
  (``FT921-…``: ``<DATE>920214``, plain ``<TEXT>`` with blank-line paragraphs) and Los Angeles Times
  (``LA010190-…``: ``<DATE><P>January 1, 1990, Monday, …``, ``<P>`` in headline and text). A document that
  cannot be read raises :class:`DucError`, whose ``reason`` the reader counts it under.
* **reference summaries** — ``D0601.M.250.A.A`` (topic, ``M``, length, topic selector, assessor;
  2005: ``D301.M.250.I.A``), plain text, one or more sentences per line. They are kept as read (lines stripped,
  blank lines dropped, ``"\\n"`` between lines) because ROUGE reads them that way.

Dates: from ``<DATE_TIME>``/``<DATE>`` when they parse, else from the DOCNO: ``APW19990707.0181`` → 1999-07-07,
``LA010190-0001`` (LA Times, ``LAmmddyy``) → 1990-01-01, ``FT921-5037`` → 1992-01-01 (the FT DOCNO carries the year
only; the digit after it is a TREC volume number, so month and day are set to 01).

Where the files are and how a year is read and written is :mod:`wikiref_dataset.duc.reader`.
"""

from __future__ import annotations

import datetime
import html
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

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

# NIST's summary file names: topic, M, length, topic selector, assessor (or system id).
_REFERENCE_NAME = re.compile(r"^(D\d{3,4})\.M\.(\d+)\.([A-Z])\.([A-Z0-9]+)$", re.IGNORECASE)


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

