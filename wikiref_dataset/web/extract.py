"""HTML -> title + main text of a cited page (trafilatura), then sentences (the project's text pipeline).

Extraction is trafilatura's, tuned for precision: a WikiRef document should hold what the cited page says, not
its navigation, teasers or reader comments. Defaults (:class:`ExtractionConfig`): ``favor_precision=True``;
comments off (reader comments are not the cited source); tables off (cells flatten into "sentences" without
verbs or punctuation that only add noise to the ROUGE-based oracle; the paper's newspaper extractor also kept
paragraphs only); links and images off. On trafilatura's own evaluation pages (its benchmark's ``html_news`` set)
these settings keep about 92% of the must-have snippets and 5% of the boilerplate ones.

Bytes are decoded the way browsers do: a byte-order mark first, then the charset of the HTTP Content-Type, else
trafilatura's own detection (``<meta charset>``, then a guess). Each trafilatura output line is a paragraph,
heading or list item, except where the page had a ``<br>`` inside a paragraph; sentences are therefore split from
trafilatura's XML body — each heading, paragraph and list item its own block, a ``<br>`` inside one a mere line
break — so that a heading without a full stop never runs into the next sentence and a ``<br>`` never cuts one. Sentences come from
:meth:`TextPipeline.split_sentences_many`, batched over pages (:func:`extract_pages`).

Hand-written: only the small content-type/HTML sniffing helpers used by both sources.
"""

from __future__ import annotations

import codecs
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..text import TextPipeline, default_pipeline
from ..utils.batching import batched

logger = logging.getLogger(__name__)

__all__ = [
    "HTML_CONTENT_TYPES", "ExtractedPage", "ExtractionConfig", "ExtractionError", "extract_page", "extract_pages",
    "is_html_content_type", "looks_like_html",
]  # fmt: skip

HTML_CONTENT_TYPES: tuple[str, ...] = ("text/html", "application/xhtml+xml")
"""Media types accepted as HTML pages."""

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<meta", b"<p>", b"<div")


class ExtractionError(Exception):
    """A page yielded no document. `reason` is one of `not_html`, `no_text`, `parse_error`; the message names the
    URL and the problem."""

    def __init__(self, url: str, reason: str, message: str) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.reason = reason


@dataclass(frozen=True)
class ExtractionConfig:
    """How trafilatura extracts a page.

    Args:
        favor_precision (`bool`, *optional*, defaults to `True`):
            Prefer leaving out doubtful blocks (teasers, related links) to keeping them.
        include_comments (`bool`, *optional*, defaults to `False`):
            Keep reader comments below articles.
        include_tables (`bool`, *optional*, defaults to `False`):
            Keep the text of tables.
        min_text_chars (`int`, *optional*, defaults to 1):
            Pages whose extracted text is shorter count as `no_text`.
        max_html_bytes (`int`, *optional*, defaults to 20,000,000):
            Larger pages are cut before parsing (bounds time and memory on pathological pages).
    """

    favor_precision: bool = field(default=True, metadata={"help": "Prefer precision over recall (trafilatura)."})
    include_comments: bool = field(default=False, metadata={"help": "Keep reader comments."})
    include_tables: bool = field(default=False, metadata={"help": "Keep table text."})
    min_text_chars: int = field(default=1, metadata={"help": "Shorter extracted texts count as no_text."})
    max_html_bytes: int = field(default=20_000_000, metadata={"help": "Cut larger pages before parsing."})

    def __post_init__(self) -> None:
        for name in ("favor_precision", "include_comments", "include_tables"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")
        for name in ("min_text_chars", "max_html_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass
class ExtractedPage:
    """What a page says.

    Args:
        url (`str`): the page's URL.
        title (`str`): its title (`<title>`/`og:title`/first heading, as trafilatura finds it), possibly empty.
        text (`str`): its main text, one paragraph per line.
        sentences (`list[str]`): the sentences of `text` (the title is not among them).
        paragraphs (`list[str]`): the blocks of `text` (heading, paragraph, list item) sentences are split from.
    """

    url: str
    title: str
    text: str
    sentences: list[str] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list, repr=False)


def media_type(content_type: str | None) -> str:
    """`"text/html; charset=UTF-8"` -> `"text/html"` ("" for None)."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def charset_of(content_type: str | None) -> str | None:
    """The charset parameter of a Content-Type when Python knows the codec, else None."""
    for parameter in (content_type or "").split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            value = value.strip().strip("\"'")
            try:
                return codecs.lookup(value).name
            except LookupError:
                return None
    return None


def is_html_content_type(content_type: str | None) -> bool:
    """Whether a Content-Type names an HTML page (`text/html`, `application/xhtml+xml`)."""
    return media_type(content_type) in HTML_CONTENT_TYPES


def looks_like_html(body: bytes | str) -> bool:
    """Whether the start of a body looks like HTML (for captures and responses without a Content-Type)."""
    head = body[:2048]
    if isinstance(head, str):
        head = head.encode("utf-8", errors="ignore")
    head = head.lstrip(codecs.BOM_UTF8).lstrip().lower()
    return any(marker in head for marker in _HTML_MARKERS)


def decode_html(html: bytes | str, content_type: str | None = None) -> bytes | str:
    """Text for trafilatura: decoded by BOM or declared charset; otherwise the bytes, for its own detection."""
    if isinstance(html, str):
        return html
    for bom, encoding in _BOMS:
        if html.startswith(bom):
            return html[len(bom) :].decode(encoding, errors="replace")
    charset = charset_of(content_type)
    if charset is not None:
        return html.decode(charset, errors="replace")
    return html


def _paragraphs(body) -> list[str]:
    """Paragraph texts from trafilatura's XML body: each head/p/quote/list item is one; a `<lb/>` inside one
    becomes a line break (which does not end a sentence)."""
    paragraphs = []
    for element in body:
        blocks = element.iter("item") if element.tag == "list" else (element,)
        for block in blocks:
            for line_break in block.iter("lb"):
                line_break.tail = "\n" + (line_break.tail or "")
            text = "".join(block.itertext()).strip()
            if text:
                paragraphs.append(text)
    return paragraphs


def _trafilatura_extract(html: bytes | str, url: str, config: ExtractionConfig) -> tuple[str, str, list[str]]:
    try:
        import lxml_html_clean  # noqa: F401  (trafilatura needs it with lxml >= 5.2; fail loudly, not per page)
        import trafilatura
    except ImportError as error:
        raise ImportError(f"HTML extraction needs trafilatura and lxml_html_clean: {error}") from error
    from trafilatura.utils import load_html

    tree = load_html(html)
    if tree is None:
        return "", "", []
    document = trafilatura.bare_extraction(
        tree,  # trafilatura works on a copy of it
        url=url,
        with_metadata=False,
        favor_precision=config.favor_precision,
        include_comments=config.include_comments,
        include_tables=config.include_tables,
        include_images=False,
        include_links=False,
        deduplicate=False,
    )
    if document is None:
        return "", "", []
    text = (document.text or "").strip()
    paragraphs = _paragraphs(document.body) if document.body is not None else text.splitlines()
    return _title(tree), text, paragraphs


def _title(tree) -> str:
    """The page title trafilatura's metadata extraction gives (OpenGraph and meta tags, then JSON-LD, then the
    single ``<h1>`` or ``<title>``), cleaned as it cleans it. Its other metadata is not used, and its date search
    (htmldate: a deep copy of the page and dozens of patterns) was most of the extraction time."""
    from trafilatura.metadata import examine_meta, extract_meta_json, extract_title

    metadata = examine_meta(tree)
    try:
        metadata = extract_meta_json(tree, metadata)
    except Exception:  # noqa: BLE001  (trafilatura's own guard: bugs in its JSON-LD parsing lose the JSON-LD only)
        pass
    if not metadata.title:
        metadata.title = extract_title(tree)
    metadata.clean_and_trim()
    return (metadata.title or "").strip()


def _extract_one(
    html: bytes | str, url: str, content_type: str | None, config: ExtractionConfig
) -> ExtractedPage | ExtractionError:
    if content_type and not is_html_content_type(content_type):
        return ExtractionError(url, "not_html", f"content type {media_type(content_type)!r} is not HTML")
    if not content_type and not looks_like_html(html):
        return ExtractionError(url, "not_html", "no content type and the body does not look like HTML")
    if len(html) > config.max_html_bytes:
        html = html[: config.max_html_bytes]
    try:
        title, text, paragraphs = _trafilatura_extract(decode_html(html, content_type), url, config)
    except ImportError:
        raise
    except Exception as error:  # trafilatura/lxml raise many types on broken markup; one page never stops a run
        return ExtractionError(url, "parse_error", f"cannot parse the HTML ({type(error).__name__}: {error})")
    if len(text) < config.min_text_chars:
        return ExtractionError(url, "no_text", "no main text found")
    return ExtractedPage(url=url, title=title, text=text, paragraphs=paragraphs)


def extract_pages(
    pages: Iterable[tuple[bytes | str, str] | tuple[bytes | str, str, str | None]],
    config: ExtractionConfig | None = None,
    pipeline: TextPipeline | None = None,
    sentences: bool = True,
    batch_size: int = 64,
) -> Iterator[ExtractedPage | ExtractionError]:
    """Extract many pages, in order: `(html, url)` or `(html, url, content_type)` in, an :class:`ExtractedPage`
    or the :class:`ExtractionError` saying why there is none out (errors are yielded, not raised).

    Sentences are split by `pipeline` (the shared default pipeline when None) in batches of `batch_size` pages.
    """
    config = config or ExtractionConfig()
    results = (_extract_one(item[0], item[1], item[2] if len(item) > 2 else None, config) for item in pages)
    for batch in batched(results, batch_size):
        extracted = [page for page in batch if isinstance(page, ExtractedPage)]
        if sentences and extracted:
            nlp = pipeline or default_pipeline()
            texts = ("\n\n".join(page.paragraphs or page.text.splitlines()) for page in extracted)
            for page, page_sentences in zip(extracted, nlp.split_sentences_many(texts), strict=True):
                page.sentences = page_sentences
        yield from batch


def extract_page(
    html: bytes | str,
    url: str,
    content_type: str | None = None,
    config: ExtractionConfig | None = None,
    pipeline: TextPipeline | None = None,
    sentences: bool = True,
) -> ExtractedPage:
    """Title, main text and sentences of one page.

    Raises:
        ExtractionError: the page is not HTML (`not_html`), has no main text (`no_text`) or cannot be parsed
            (`parse_error`).
    """
    result = next(extract_pages([(html, url, content_type)], config, pipeline, sentences))
    if isinstance(result, ExtractionError):
        raise result
    return result
