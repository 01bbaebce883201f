"""AQuaMuSe's web corpus: documents read from C4-style JSON lines, CCNet/RedPajama JSON lines, WET or WARC files.

* ``.jsonl``/``.json`` (optionally ``.gz``): one object per line; the text is ``text`` (C4, Dolma) or
  ``raw_content`` (CCNet, RedPajama), the URL ``url`` (or ``metadata.url``, or an ``id`` that is a URL).
* ``.wet``/``.warc.wet`` (optionally ``.gz``): Common Crawl's extracted text, ``conversion`` records (warcio).
* ``.warc``/``.arc`` (optionally ``.gz``): raw captures, read through the WikiRef WARC index
  (:class:`~wikiref_dataset.web.warc.WarcIndex`, which copes with the malformed archives found in the wild) and
  extracted with the WikiRef extractor (trafilatura, :mod:`wikiref_dataset.web.extract`); only 200 HTML captures.

Every format streams record by record: a page body is read when the extractor asks for it, in batches of 64, so
memory does not grow with the file (a Common Crawl WARC is ~5 GB of pages).

A document's id is its URL where it has one (else ``file:line`` / ``file:offset``). Bad records are counted by
reason and never stop the read; an unreadable file raises ``ValueError`` naming it. WET and WARC files are read with
the WARC index's recovery (:func:`~wikiref_dataset.web.warc.iter_warc_records`): a record cut short by a truncated
file is ``skipped/truncated`` (not kept as a shorter document), one that does not parse or decompress is
``skipped/corrupt_record``, and reading resumes at the next record, so every good record of a damaged file is kept.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..utils.jsonl import iter_json_objects

__all__ = ["CORPUS_FORMATS", "CorpusDocument", "corpus_format", "iter_corpus_documents"]

CORPUS_FORMATS = ("jsonl", "wet", "warc")


@dataclass
class CorpusDocument:
    """A web page of the corpus: ``id``, ``url``, main ``text`` and where it was read (``source``)."""

    id: str
    url: str
    text: str
    source: str = ""


def corpus_format(path: str | Path) -> str:
    """``jsonl``, ``wet`` or ``warc``, from the file name (``.wet`` before ``.warc``: WET files are WARC files)."""
    name = Path(path).name.lower()
    for suffix in (".gz", ".gzip"):
        name = name.removesuffix(suffix)
    if name.endswith(".wet") or ".wet." in name:
        return "wet"
    if name.endswith((".warc", ".arc")):
        return "warc"
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    raise ValueError(f"{path}: unknown corpus format (expected .jsonl/.json, .wet or .warc, optionally .gz)")


def iter_corpus_documents(path: str | Path, stats: Counter[str] | None = None,
                          errors: list[str] | None = None) -> Iterator[CorpusDocument]:
    """The documents of one corpus file; ``stats`` counts ``documents`` and ``skipped/<reason>``, ``errors`` gets a
    ``file:where: problem`` line per bad record."""
    stats = stats if stats is not None else Counter()
    errors = errors if errors is not None else []
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such corpus file")
    kind = corpus_format(path)
    reader = {"jsonl": _jsonl, "wet": _wet, "warc": _warc}[kind]
    for document in reader(path, stats, errors):
        stats["documents"] += 1
        yield document


def _jsonl(path: Path, stats: Counter[str], errors: list[str]) -> Iterator[CorpusDocument]:
    def bad(location: str, reason: str) -> None:
        stats["skipped/bad_json"] += 1
        errors.append(f"{location}: {reason}")

    for number, record in iter_json_objects(path, on_error=bad):
        text = record.get("text", record.get("raw_content"))
        if not isinstance(text, str):
            stats["skipped/no_text"] += 1
            errors.append(f"{path}:{number}: no string field 'text' (C4) or 'raw_content' (CCNet)")
            continue
        metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        identifier = record.get("id")
        url = record.get("url") or metadata.get("url") or (
            identifier if isinstance(identifier, str) and identifier.startswith(("http://", "https://")) else "")
        yield CorpusDocument(id=str(url or identifier or f"{path.name}:{number}"), url=str(url), text=text,
                             source=f"{path}:{number}")


def _wet(path: Path, stats: Counter[str], errors: list[str]) -> Iterator[CorpusDocument]:
    from ..web.warc import WarcFileStats, iter_warc_records

    def conversion(record, iterator) -> tuple[CorpusDocument | None, bool]:
        if record.rec_type != "conversion":
            return None, False
        url = (record.rec_headers.get_header("WARC-Target-URI") or "").strip("<>")
        # read before asking for the offset: get_record_offset() consumes the record's body
        text = record.content_stream().read().decode("utf-8", errors="replace")
        offset = iterator.get_record_offset()
        if getattr(record.raw_stream, "limit", 0) > 0:  # shorter than its Content-Length: the file was cut
            file_stats.skipped["truncated"] += 1
            errors.append(f"{path}:{offset}: record cut short (truncated file); skipped")
            return None, True
        return CorpusDocument(id=url or f"{path.name}:{offset}", url=url, text=text, source=f"{path}:{offset}"), False

    file_stats = WarcFileStats(path=str(path))
    try:
        yield from iter_warc_records(path, conversion, file_stats)
    except OSError as error:
        raise ValueError(f"{path}: cannot read the WET file ({error})") from error
    finally:
        for reason, count in file_stats.skipped.items():
            stats[f"skipped/{reason}"] += count


def _warc(path: Path, stats: Counter[str], errors: list[str]) -> Iterator[CorpusDocument]:
    from ..web.extract import ExtractionError, extract_pages
    from ..web.warc import WarcIndex, WarcReadError

    with WarcIndex() as index:
        file_stats = index.add(path)
        if file_stats.error:
            raise ValueError(f"{path}: cannot read the WARC file ({file_stats.error})")
        for reason, count in file_stats.skipped.items():
            stats[f"skipped/{reason}"] += count
        sources: deque[str] = deque()

        def bodies() -> Iterator[tuple[bytes, str, str | None]]:
            """Each 200 capture's body, read when the extractor asks for it (it works in batches of 64): a
            Common Crawl WARC holds ~5 GB of pages, never all in memory."""
            for capture in index.iter_captures():
                if capture.status != 200:
                    stats["skipped/not_200"] += 1
                    continue
                try:
                    body = index.read(capture)
                except WarcReadError as error:
                    stats[f"skipped/{error.reason}"] += 1
                    errors.append(str(error))
                    continue
                sources.append(capture.record)
                yield body, capture.url, capture.content_type

        for page in extract_pages(bodies(), sentences=False):
            source = sources.popleft()
            if isinstance(page, ExtractionError):
                stats[f"skipped/{page.reason}"] += 1
                continue
            text = "\n\n".join(part for part in [page.title, *(page.paragraphs or page.text.splitlines())] if part)
            yield CorpusDocument(id=page.url, url=page.url, text=text, source=source)
