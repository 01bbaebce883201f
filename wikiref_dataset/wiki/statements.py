"""WikiRef statements (§II-A of Zhu et al., 2022; see ``docs/wikiref_build.md``): cited text spans of Wikipedia articles, with their section path and citation.

A *statement* is the plain text of a paragraph between the previous citation (or the paragraph start) and a
``<ref>``; when several refs stand together only the first counts; a statement may hold several sentences. The
sentence-final punctuation (``.!?``, ``。．！？``, closing quotes and brackets after it) that stands right after the ref
(or its group, with nothing that shows between) ends the statement that ref cites: Japanese, Chinese and French put the
citation before the full stop (``…となった<ref>…</ref>。``), English after it. Statements are made of whole sentences
(:attr:`StatementConfig.whole_sentences`, on by default): a sentence that holds several refs (``…a,<ref/> b.<ref/>``,
an enumeration, a ref before a comma or inside brackets) goes whole to its last ref, the earlier refs keeping only
the whole sentences before it (or giving no statement); a last sentence that ends with a colon introduces a list,
table or quote that is not in the statement, and is cut. Sentences are split by the project's one sentence splitter
(:class:`~wikiref_dataset.text.TextPipeline`, the language's blank pipeline without lemmas). Its query is the article title and the
heading path of its section; its document is the page its citation points to.

How a page is read (:meth:`StatementExtractor.extract`):

1. :func:`~wikiref_dataset.wiki.markup.prepare` removes comments and extension tags and replaces each ``<ref>`` by a
   placeholder, collecting named definitions from the whole page (list-defined refs in ``{{reflist|refs=...}}`` and
   ``<references>`` included); the text is split into sections at heading lines.
2. Sections whose heading is in :attr:`StatementConfig.skip_sections` are skipped with their subsections; a section
   without any citation is not parsed at all.
3. The other sections are parsed with mwparserfromhell and walked node by node. Blocks follow MediaWiki: a blank
   line (or a line that renders nothing, such as a lone ``{{main|...}}`` or image) ends a paragraph, a list item
   ends at its line end, tables, block quotes and galleries are skipped. Inside inline markup (bold, ``<span>``,
   ``<small>`` ...) refs are still found. ``{{r|name}}`` reuses a named ref, ``{{#tag:ref|...}}`` is a ref,
   ``{{sfn}}``-style short footnotes are citations of type ``sfn``; grouped refs (``<ref group="note">``) and
   ``{{efn}}``-style notes are explanatory notes: not citations, no boundary.
4. Each cited span is rendered to plain text (:mod:`~wikiref_dataset.wiki.plaintext`), templates relative to today
   (``{{age}}``, ``{{CURRENTYEAR}}``) at the date of the revision; spans with no letters or digits (the text between
   two refs that stand together) are not statements. A template that is neither rendered nor known to show no words
   (:func:`~wikiref_dataset.wiki.plaintext.is_silent_template`), or a ``<math>`` formula, standing inside a sentence
   leaves a hole (:func:`~wikiref_dataset.wiki.plaintext.find_holes`): such a statement would not say what the
   article says, and it is dropped. Every span gets the next ``position`` of the page, kept or not, so statement ids
   (``"{page_id}-{position}"``) do not depend on which citation types are kept.
5. The ref is resolved (named refs), typed (:func:`~wikiref_dataset.wiki.citations.classify_ref`), filtered by
   :attr:`StatementConfig.keep_types`, and the citation's fields are read. Statements that are too short, have no
   fetchable url, have a hole, are only a lead-in (``… as follows:``), or would still contain markup are dropped.
   Everything is counted in :attr:`StatementExtractor.stats`.

A page that raises is logged with its id and counted as ``pages_failed``; extraction goes on with the next page.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import date
from typing import Any

import mwparserfromhell
from mwparserfromhell.nodes import Comment, Heading, Tag, Template, Text, Wikilink

from .citations import (
    BARE_URL,
    Citation,
    canonical_citation_type,
    classify_ref,
    is_valid_url,
    parse_bare_url,
    parse_citation,
)
from .defaults import DEFAULT_KEEP_TYPES, DEFAULT_SKIP_SECTIONS
from .dump import WikiPage
from .inline import language_templates
from .languages import wiki_language
from .markup import PLACEHOLDER, PreparedPage, RefTag, prepare, split_sections
from .plaintext import (
    HOLE_START,
    LIST_MARKUP,
    canonical_template_name,
    find_holes,
    find_markup,
    is_dropped_link,
    is_silent_template,
    render,
    render_pieces,
    strip_holes,
    template_renderer,
)

__all__ = [
    "DEFAULT_KEEP_TYPES",
    "DEFAULT_SKIP_SECTIONS",
    "Citation",
    "Statement",
    "StatementConfig",
    "StatementExtractor",
]

logger = logging.getLogger(__name__)


# Templates that stand for a citation in the text.
_REUSE_TEMPLATES = frozenset({"r"})  # {{r|name}} reuses <ref name="name">
_SHORT_FOOTNOTES = frozenset({"sfn", "sfnp", "sfnm", "sfnmp"})
_NOTE_TEMPLATES = frozenset({"efn", "efn-ua", "efn-lr", "efn-la", "efn-lg", "efn-ur", "refn", "notetag", "nb",
                             "note label", "ref label", "cref", "cnote", "cnote2", "ref", "note", "fn", "fnb"})
# Tags whose content is inline text that may hold refs; walked into.
_INLINE_TAGS = frozenset({"b", "i", "u", "span", "small", "big", "sup", "sub", "abbr", "em", "strong", "font", "code",
                          "tt", "var", "kbd", "samp", "cite", "q", "ins", "bdi", "bdo", "mark", "time", "dfn",
                          "onlyinclude", "noinclude", "nowiki"})
# Block containers of prose: a block boundary before and after, content walked.
_BLOCK_CONTAINERS = frozenset({"p", "div", "center", "ul", "ol", "dl", "li", "dd", "dt", "section", "article"})
_DROPPED_LINK_PREFIXES = ("file:", "image:", "category:", "media:")
_CITATION_HINT = re.compile(r"\{\{\s*(?:r|sfnp?|sfnm|#tag:\s*ref)\s*\|", re.IGNORECASE)
_SPLIT_TEXT = re.compile("(\n|\ue000[0-9]+\ue001)")
_WORD = re.compile(r"\w")
_UNPARSED = object()
# not the minus of "-5 °C"; CJK full stops and commas too (Japanese and Chinese put the ref before the 。)
_LEADING_JUNK = re.compile(r"^(?:[\s.,;:!?)\]}–—。、，．！？：；）」』】〕]|-(?!\d))+")
# sentence-final punctuation (any script's), closing quotes and brackets after it: what ends a sentence right after a
# ref (French puts a space before ! and ?), and whether a span already ends one
# (a full stop followed by a letter or digit is a decimal point or an abbreviation's: 3<ref/>.5)
_CLOSERS = "[\"'”’»」』）)\\]】〕]*"  # closing quotes and brackets after the punctuation
_SENTENCE_END = re.compile(rf"(?:[ \u00a0\u202f](?=[!?]))?((?:[!?。．！？][.!?。．！？]*|\.+(?!\w)){_CLOSERS})")
_ENDS_SENTENCE = re.compile(rf"[.!?。．！？]{_CLOSERS}\s*$")
_STOP_INSIDE = re.compile(r"[.!?。．！？]\W*\w")  # sentence-final punctuation with a word after it
_LONGEST_SENTENCE = 2000  # characters of an unfinished sentence carried to the next ref, at most
_LEAD_IN = re.compile(r"[:：]\s*$")  # a sentence that introduces what follows it (a list, a table, a quote)


# ----------------------------------------------------------------------------------------------------------------
# Records
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class StatementConfig:
    """How statements are extracted.

    Args:
        skip_sections (`tuple[str, ...]`): headings of non-prose sections skipped with their subsections
            (case-insensitive). Default: :data:`DEFAULT_SKIP_SECTIONS`.
        keep_types (`tuple[str, ...]`): citation types kept (canonical names; variants such as ``Cite_Web`` or
            redirects such as ``cite newspaper`` are folded). Default: ``cite web``, ``cite news``, ``cite press
            release``, ``cite magazine``, ``citation``, ``wayback``, ``webarchive`` (:data:`DEFAULT_KEEP_TYPES`).
        include_bare_urls (`bool`, *optional*): also keep refs that hold only a link (type ``bare url``). Default
            ``None``: the language's choice (its table's ``bare_urls``: German, Dutch and Finnish keep them, the
            others not; ``docs/languages.md`` says why).
        min_statement_chars (`int`): shortest statement kept, in characters of plain text. Default 10.
        include_list_items (`bool`): take statements from list items (``* ...``) as well as paragraphs.
        archive_when_status_missing (`bool`): fetch the archive when a citation gives ``archive-url`` but no
            ``url-status`` (Citation Style 1 then treats the url as dead). Default ``True``.
        drop_unrendered_templates (`bool`): drop (and count) a statement when a template that is neither rendered
            nor known to show no words stands inside one of its sentences (the text would have a hole); off, such
            templates vanish from the text. Default ``True``.
        render_relative_dates (`bool`): render templates relative to today (``{{age}}``, ``{{CURRENTYEAR}}``, the
            age of ``{{birth date and age}}``) at the date of the page's revision; off, they are unrendered (and
            their statements dropped). Default ``True``.
        language (`str`): the Wikipedia language of the dump (``en``, ``de``, ``ja`` ...): its citation templates,
            their parameters, its non-prose sections and inline templates come from its table
            (:mod:`~wikiref_dataset.wiki.languages`). With the default ``skip_sections``, the language's section
            names are skipped as well as the English ones. Default ``en``.
        whole_sentences (`bool`): a statement is made of whole sentences. A ref that stands inside a sentence that
            goes on (``…a,<ref/> b.<ref/>``, ``…a<ref/>、b<ref/>。``) keeps only the whole sentences before it (or
            nothing, counted as ``refs_inside_later_statement``), and the sentence goes whole to its last ref; a ref
            that is the last of its sentence but not at its end gets the rest of the sentence; a last sentence that
            ends with a colon (a lead-in to a list, table or quote) is cut. Off, a statement is the text since the
            previous ref, fragments included, as the paper defines it. Default ``True``
            (``docs/languages.md`` has the hand check behind it).
    """

    skip_sections: tuple[str, ...] = field(
        default=DEFAULT_SKIP_SECTIONS,
        metadata={"help": "Headings of non-prose sections skipped with their subsections (case-insensitive)."},
    )
    keep_types: tuple[str, ...] = field(
        default=DEFAULT_KEEP_TYPES,
        metadata={"help": "Citation types kept (canonical names such as 'cite web'; variants are folded)."},
    )
    include_bare_urls: bool | None = field(
        default=None, metadata={"help": "Also keep refs that hold only a link (citation type 'bare url'); default: "
                                        "the language's choice."}
    )
    min_statement_chars: int = field(
        default=10, metadata={"help": "Shortest statement kept, in characters of plain text."}
    )
    include_list_items: bool = field(
        default=True, metadata={"help": "Take statements from list items as well as from paragraphs."}
    )
    archive_when_status_missing: bool = field(
        default=True,
        metadata={"help": "Fetch archive-url when a citation gives no url-status (CS1 then assumes 'dead')."},
    )
    drop_unrendered_templates: bool = field(
        default=True,
        metadata={"help": "Drop statements with an unrendered template inside a sentence (off: it vanishes)."},
    )
    render_relative_dates: bool = field(
        default=True,
        metadata={"help": "Render {{age}}, {{CURRENTYEAR}} ... at the revision's date (off: they are unrendered)."},
    )
    language: str = field(
        default="en",
        metadata={"help": "Wikipedia language of the dump (its citation templates and section names)."},
    )
    whole_sentences: bool = field(
        default=True,
        metadata={"help": "Give a sentence that holds several refs whole to its last ref (off: the text since the "
                          "previous ref, as the paper defines a statement)."},
    )

    def __post_init__(self):
        for name in ("skip_sections", "keep_types"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(item, str) for item in value):
                raise ValueError(f"StatementConfig.{name} must be a sequence of strings, got {value!r}")
        if not isinstance(self.language, str):
            raise ValueError(f"StatementConfig.language must be a language code, got {self.language!r}")
        self.language = self.language.strip().lower()
        language = wiki_language(self.language)  # UnsupportedLanguage (a ValueError) names the supported ones
        if self.include_bare_urls is None:
            self.include_bare_urls = language.bare_urls
        self.skip_sections = tuple(dict.fromkeys(_normalise_heading(name)
                                                 for name in language.sections_to_skip(self.skip_sections) if name))
        self.keep_types = tuple(dict.fromkeys(canonical_citation_type(name, language) for name in self.keep_types
                                              if name))
        if BARE_URL in self.keep_types:
            self.include_bare_urls = True
            self.keep_types = tuple(name for name in self.keep_types if name != BARE_URL)
        if not self.keep_types and not self.include_bare_urls:
            raise ValueError("StatementConfig.keep_types is empty and include_bare_urls is off: nothing would be kept")
        if isinstance(self.min_statement_chars, bool) or not isinstance(self.min_statement_chars, int):
            raise ValueError(f"StatementConfig.min_statement_chars must be an int, got {self.min_statement_chars!r}")
        if self.min_statement_chars < 0:
            raise ValueError(f"StatementConfig.min_statement_chars must be >= 0, got {self.min_statement_chars}")
        for name in ("include_bare_urls", "include_list_items", "archive_when_status_missing",
                     "drop_unrendered_templates", "render_relative_dates", "whole_sentences"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"StatementConfig.{name} must be a bool, got {getattr(self, name)!r}")

    def to_dict(self) -> dict[str, Any]:
        return {item.name: getattr(self, item.name) for item in fields(self)}

    def describe_rules(self) -> str:
        """The statement rules in one sentence, as a dataset card states them."""
        language = wiki_language(self.language)
        bare = "kept" if self.include_bare_urls else "not kept"
        chosen = "the language's default" if self.include_bare_urls == language.bare_urls else "set for this build"
        if self.whole_sentences:
            what = ("a statement is the whole sentences of a paragraph from the previous citation's sentence (or the "
                    "paragraph start) to a ref's sentence end, with the sentence-final punctuation that follows the "
                    "ref; a sentence holding several refs goes to its last ref; a lead-in ending with a colon is cut")
        else:
            what = ("a statement is the text of a paragraph from the previous citation (or the paragraph start) to a "
                    "ref, with the sentence-final punctuation that follows the ref")
        return (f"{what}; citation types kept: "
                f"{', '.join(self.keep_types)}; refs that hold only a link: {bare} ({chosen}); at least "
                f"{self.min_statement_chars} characters")


_CITATION_METADATA = {  # Citation field → Document metadata key
    "type": "citation_type", "url": "url", "archive_url": "archive_url", "url_status": "url_status",
    "fetch_url": "fetch_url", "title": "citation_title", "publisher": "publisher", "work": "work", "date": "date",
    "ref_name": "ref_name", "access_date": "access_date", "archive_date": "archive_date",
}  # fmt: skip


@dataclass
class Statement:
    """A cited statement of a Wikipedia article: the summary of a WikiRef example.

    Args:
        id (`str`): ``"{page_id}-{position}"``, stable across runs and citation-type settings.
        page_id, page_title, revision_id, timestamp: the article and the revision the text comes from.
        section_path (`list[str]`): headings from the top-level section down (empty in the lead).
        text (`str`): the statement, plain text.
        position (`int`): ordinal of the cited span in the page (0-based; counts spans of every citation type).
        citation (:class:`Citation`): what the statement cites.
    """

    id: str
    page_id: int
    page_title: str
    revision_id: int
    timestamp: str
    section_path: list[str]
    text: str
    position: int
    citation: Citation

    @property
    def query_levels(self) -> list[str]:
        """The query of the example: the article title followed by the section path."""
        return [self.page_title, *self.section_path]

    def to_document(self) -> Any:
        """A datatrove ``Document``: text = statement, id = statement id, flat JSON-serialisable metadata."""
        from datatrove.data import Document

        metadata: dict[str, Any] = {
            "page_id": self.page_id,
            "page_title": self.page_title,
            "revision_id": self.revision_id,
            "timestamp": self.timestamp,
            "section_path": list(self.section_path),
            "position": self.position,
        }
        citation = asdict(self.citation)
        for name, key in _CITATION_METADATA.items():
            metadata[key] = citation[name]
        return Document(text=self.text, id=self.id, metadata=metadata)

    @classmethod
    def from_document(cls, document: Any) -> Statement:
        """The statement a :meth:`to_document` document (or one read back from JSONL) holds."""
        metadata = document.metadata
        try:
            citation = Citation(**{name: metadata.get(key) for name, key in _CITATION_METADATA.items()})
            if citation.fetch_url is None:
                citation.fetch_url = ""
            return cls(
                id=str(document.id),
                page_id=int(metadata["page_id"]),
                page_title=str(metadata["page_title"]),
                revision_id=int(metadata["revision_id"]),
                timestamp=str(metadata.get("timestamp") or ""),
                section_path=[str(heading) for heading in metadata.get("section_path") or []],
                text=document.text,
                position=int(metadata["position"]),
                citation=citation,
            )
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"document {document.id!r} is not a WikiRef statement ({err})") from err


# ----------------------------------------------------------------------------------------------------------------
# Extraction
# ----------------------------------------------------------------------------------------------------------------


def _normalise_heading(heading: str) -> str:
    return " ".join(heading.split()).lower().rstrip(":").strip()


@dataclass
class _Marker:
    """Where a citation stands in the text: a ref tag, a ``{{r|name}}`` reuse, or a short footnote."""

    ref: RefTag | None = None
    reuse: str | None = None  # the name a {{r|name}} reuses
    short_footnote: str | None = None


@dataclass(slots=True)
class _Span:
    """A cited span of a block: its plain text (``None`` when its ref is left with no statement: the ref stood inside
    a sentence that a later ref of the same sentence was given), its citation, the unrendered templates in its text,
    and where the text comes from: ``nodes`` render as ``rendered``, whose first ``start`` characters are earlier
    spans' text (carried to it) or leading punctuation, and the rest the span's text as first cut."""

    text: str | None
    marker: _Marker
    holes: list[str]
    nodes: list[Any]
    rendered: str
    start: int


class _BlockWalker:
    """Walks the nodes of one section and collects its cited spans (:class:`_Span`), block by block.

    With ``sentence_spans`` (a function giving the ``(start, end)`` offsets of the sentences of a text), a sentence
    that holds several refs goes whole to its last ref: the part of a span after its last sentence end, when the
    sentence goes on after the ref, is carried to the next ref of the block (the earlier ref keeps its whole
    sentences, or nothing), and where no other ref follows in the sentence, the rest of the sentence is given to it.
    Without it, a span is the text between the previous ref and its own (the paper's statement)."""

    __slots__ = ("refs", "counts", "include_list_items", "current_date", "sentence_spans", "segment",
                 "line_has_content", "in_list", "after_citation", "spans", "open_span", "carry")

    def __init__(self, refs: list[RefTag], counts: Counter, include_list_items: bool,
                 current_date: date | None = None,
                 sentence_spans: Callable[[str], list[tuple[int, int]]] | None = None):
        self.refs = refs
        self.counts = counts
        self.include_list_items = include_list_items
        self.current_date = current_date
        self.sentence_spans = sentence_spans
        self.segment: list[Any] = []
        self.line_has_content = False
        self.in_list = False
        self.after_citation = False
        self.spans: list[_Span] = []
        # the span whose ref was the last thing seen (nothing visible since): the sentence-final punctuation that
        # comes next is its (…となった<ref>…</ref>。, …en 2010<ref>…</ref>.)
        self.open_span: int | None = None
        # a span whose ref stands inside a sentence that goes on: (its index, the text before its unfinished
        # sentence, as rendered from its nodes); its sentence goes to the last ref of the sentence
        self.carry: tuple[int, str] | None = None

    # -- blocks --------------------------------------------------------------------------------------------------

    def break_block(self) -> None:
        if self.carry is not None:
            self._finish_sentence()
        self.segment = []
        self.after_citation = False
        self.in_list = False
        self.open_span = None

    def visible(self, piece: str | None = None) -> None:
        """Something that shows is added to the text: a piece of text (``piece``; whitespace does not count), or a
        node. Sentence-final punctuation right after a ref ends the span that ref cites."""
        if self.open_span is None:
            return
        if piece is not None:
            end = _SENTENCE_END.match(piece)
            if end:
                span = self.spans[self.open_span]
                if not _ENDS_SENTENCE.search(span.text):
                    # (the space French puts before ! and ? is left out, as the rendered text leaves it out)
                    span.text = span.text.rstrip() + end.group(1)
                    self.counts["sentence_end_after_ref"] += 1
                self.open_span = None
                return
            if not piece.strip():
                return
        index, self.open_span = self.open_span, None
        if self.sentence_spans is not None and not _ENDS_SENTENCE.search(self.spans[index].text):
            self._carry(index)

    def _carry(self, index: int) -> None:
        """The sentence of span ``index`` goes on after its ref: the span keeps its whole sentences (or nothing), and
        its unfinished sentence waits for the sentence's last ref."""
        span = self.spans[index]
        self.counts["refs_mid_sentence"] += 1
        sentences = self.sentence_spans(span.text)
        cut = sentences[-1][0] if len(sentences) > 1 else 0
        if len(span.text) - cut > _LONGEST_SENTENCE:
            # a "sentence" this long is a list run together (A,<ref/> B,<ref/> … with no full stop): carrying it would
            # also render it again at every ref; the span stays as the text since the previous ref
            self.counts["mid_sentence_too_long"] += 1
            return
        if cut:
            span.text = span.text[:cut].rstrip()
        else:
            span.text = None
        self.carry = (index, span.rendered[: span.start + cut])

    def _finish_sentence(self) -> None:
        """The block ends with a carried sentence and no other ref: its rest goes to the carried span's ref, the last
        of the sentence."""
        (index, prefix), self.carry = self.carry, None
        with_holes, plain = self._render(self.spans[index].nodes + self.segment)
        if not plain.startswith(prefix):
            self.counts["mid_sentence_unaligned"] += 1
            return
        rest = _strip_leading_junk(plain[len(prefix):])
        sentences = self.sentence_spans(rest) if _WORD.search(rest) else []
        end = len(plain) - len(rest) + (sentences[0][1] if sentences else len(rest))
        self._complete(index, plain, end, find_holes(with_holes))

    def _complete(self, index: int, plain: str, end: int, holes: list[str]) -> None:
        """Span ``index`` gets its whole sentences up to ``end`` of ``plain`` (its nodes and what followed,
        rendered): its ref is the last of the sentence it stood in."""
        span = self.spans[index]
        span.text = plain[span.start:end].rstrip()
        span.holes = list(dict.fromkeys(span.holes + holes))  # (the sentence's holes; the earlier ones too, if any)
        self.counts["mid_sentence_completed"] += 1

    def newline(self) -> None:
        if self.in_list or not self.line_has_content:
            self.break_block()  # end of a list item, a blank line, or a line that shows nothing
        else:
            self.segment.append(" ")
        self.line_has_content = False

    # -- nodes ---------------------------------------------------------------------------------------------------

    def walk(self, nodes: list[Any]) -> None:
        for node in nodes:
            kind = type(node)
            if kind is Text:
                self.text(node.value)
            elif kind is Template:
                self.template(node)
            elif kind is Tag:
                self.tag(node)
            elif kind is Wikilink:
                title = str(node.title).lstrip().lower()
                if not title.startswith(_DROPPED_LINK_PREFIXES) and not is_dropped_link(title):
                    self.visible()
                    self.segment.append(node)
                    self.line_has_content = True
            elif kind is Heading:
                self.break_block()
            elif kind is not Comment:
                self.visible()
                self.segment.append(node)
                self.line_has_content = True

    def text(self, value: str) -> None:
        if "\n" not in value and "\ue000" not in value:
            self.visible(value)
            self.segment.append(value)
            if not self.line_has_content and _shows_text(value):
                self.line_has_content = True
            return
        for piece in _SPLIT_TEXT.split(value):
            if not piece:
                continue
            if piece == "\n":
                self.newline()
            elif piece[0] == "\ue000":
                self.line_has_content = True
                ref = self.refs[int(piece[1:-1])]
                if ref.group:
                    self.counts["notes_skipped"] += 1
                else:
                    self.cite(_Marker(ref=ref))
            else:
                self.visible(piece)
                self.segment.append(piece)
                if not self.line_has_content and _shows_text(piece):
                    self.line_has_content = True

    def tag(self, node: Tag) -> None:
        markup = node.wiki_markup
        if markup is not None:
            if markup in LIST_MARKUP:
                self.break_block()
                self.in_list = True
                return
            if markup.startswith("{|") or markup == "----":
                self.break_block()
                return
        name = str(node.tag).strip().lower()
        if name in _INLINE_TAGS:
            if name == "nowiki" or (name == "sup" and not _holds_citation(node)):
                self.visible()
                self.segment.append(node)  # a superscript is rendered whole: 10<sup>18</sup> → 10^18
                self.line_has_content = True
            elif node.contents is not None and not node.self_closing:
                self.walk(node.contents.nodes)
        elif name == "br":
            self.segment.append(" ")
        elif name in _BLOCK_CONTAINERS:
            self.break_block()
            if name in ("li", "dd", "dt"):
                self.in_list = True
            if node.contents is not None and not node.self_closing:
                self.walk(node.contents.nodes)
            self.break_block()
            self.line_has_content = False
        else:  # tables, block quotes, struck text, galleries, unknown tags: not prose
            if name in ("table", "blockquote", "poem", "pre", "gallery", "hr", "references"):
                self.break_block()

    def template(self, node: Template) -> None:
        name = canonical_template_name(str(node.name))
        if name in _REUSE_TEMPLATES:
            reused = str(node.get(1).value).strip() if node.has(1) else ""
            group = str(node.get("group").value).strip() if node.has("group") else ""
            if group:
                self.counts["notes_skipped"] += 1
            elif reused:
                self.line_has_content = True
                self.cite(_Marker(reuse=reused))
        elif name in _SHORT_FOOTNOTES:
            self.line_has_content = True
            self.cite(_Marker(short_footnote=name))
        elif name.startswith("#tag:"):
            if name.replace(" ", "") == "#tag:ref":
                self.tag_ref(node)
        elif name in _NOTE_TEMPLATES:
            self.counts["notes_skipped"] += 1
        elif template_renderer(node, name) is not None:
            if self.open_span is not None and _shows_text(render_pieces([node], self.current_date)):
                self.visible()  # a maintenance template that renders nothing ({{citation needed}}) is not text
            self.segment.append(node)
            self.line_has_content = True
        elif not is_silent_template(name):
            # rendered as a hole; a line holding only such templates (an infobox, a navbox) still shows nothing
            self.segment.append(node)

    def tag_ref(self, node: Template) -> None:
        """``{{#tag:ref|content|name=x|group=y}}``: a ref written as a parser function."""
        content = str(node.get(1).value) if node.has(1) else None
        ref_name = str(node.get("name").value).strip().strip("\"'") if node.has("name") else None
        group = str(node.get("group").value).strip().strip("\"'") if node.has("group") else None
        if group:
            self.counts["notes_skipped"] += 1
            return
        self.line_has_content = True
        self.cite(_Marker(ref=RefTag(index=-1, name=ref_name or None, content=content)))

    # -- citations -----------------------------------------------------------------------------------------------

    def _render(self, nodes: list[Any]) -> tuple[str, str]:
        """``nodes`` as plain text, with the hole markers of unrendered templates and without them (rendered again
        without the holes rather than cleaned twice: cleaning is not idempotent on "(, ,")."""
        with_holes = render_pieces(nodes, self.current_date, keep_holes=True)
        return with_holes, render_pieces(nodes, self.current_date) if HOLE_START in with_holes else with_holes

    def cite(self, marker: _Marker) -> None:
        segment, self.segment = self.segment, []
        if self.in_list and not self.include_list_items:
            return
        carry, self.carry = self.carry, None
        nodes = self.spans[carry[0]].nodes + segment if carry is not None else segment
        with_holes, plain = self._render(nodes)
        prefix = ""
        if carry is not None:
            if plain.startswith(carry[1]):
                prefix = carry[1]
            else:  # cleaning the joined text changed what came before (not seen on real pages): this ref's own text
                self.counts["mid_sentence_unaligned"] += 1
                nodes = segment
                with_holes, plain = self._render(nodes)
                carry = None
        text = _strip_leading_junk(plain[len(prefix):])
        start = len(plain) - len(text)
        holes = find_holes(with_holes)
        if carry is not None:
            sentences = self.sentence_spans(text)
            if len(sentences) > 1:
                # the carried sentence ended before this ref: its last ref is the carried one
                self._complete(carry[0], plain, start + sentences[0][1], holes)
                start += sentences[1][0]
                text = text[sentences[1][0]:]
        if not _WORD.search(text):
            self.counts["refs_grouped" if self.after_citation else "refs_without_text"] += 1
            self.after_citation = True
            return
        self.after_citation = True
        self.spans.append(_Span(text, marker, holes, nodes, plain, start))
        self.open_span = len(self.spans) - 1


def _strip_leading_junk(text: str) -> str:
    if text and not text[0].isalnum():
        text = _LEADING_JUNK.sub("", text)
    return text


def _shows_text(piece: str) -> bool:
    """Whether a piece of text shows anything (hole markers of unrendered tags such as ``<math>`` alone do not)."""
    return bool(strip_holes(piece).strip())


def _holds_citation(node: Tag) -> bool:
    wikitext = str(node)
    return "\ue000" in wikitext or bool(_CITATION_HINT.search(wikitext))


class StatementExtractor:
    """Extracts the :class:`Statement` records of a page; counts everything in :attr:`stats`.

    :attr:`stats` accumulates over all pages; :attr:`page_stats` holds the counts of the last page. Keys:
    ``pages``, ``pages_failed``, ``refs`` (ref tags), ``spans`` (cited spans, kept or not), ``statements``,
    ``kept/<type>``, ``skipped/<type>`` (citation types not kept), ``bare_urls_skipped``, ``named_refs_resolved``,
    ``refs_unresolved``, ``refs_grouped`` (refs after the first of a group), ``refs_without_text``,
    ``refs_unclosed``, ``notes_skipped``, ``sections_skipped``, ``archive_urls_used``, ``dropped_no_url``,
    ``dropped_too_short``, ``dropped_markup``, ``dropped_unrendered_template`` (with ``unrendered_template/<name>``
    for each template that left a hole), ``wikitext_chars``; the sentence rules: ``sentence_end_after_ref``,
    ``refs_mid_sentence`` (refs inside a sentence that goes on), ``mid_sentence_completed`` (the last ref of such a
    sentence, given its rest), ``refs_inside_later_statement`` (refs whose sentence went to a later ref: no statement
    of their own, not typed), ``mid_sentence_too_long`` (unfinished sentences past 2,000 characters, not carried:
    a list run together), ``mid_sentence_unaligned`` (should stay 0), ``lead_ins_cut``, ``dropped_lead_in``.
    """

    def __init__(self, config: StatementConfig | None = None):
        self.config = config if config is not None else StatementConfig()
        self.stats: Counter = Counter()
        self.page_stats: Counter = Counter()
        self._skip_sections = frozenset(self.config.skip_sections)
        self._keep_types = frozenset(self.config.keep_types)
        self._language = wiki_language(self.config.language)
        self._page_id = 0  # for log messages
        self._parsed: dict[str, Citation | None] = {}  # ref content → citation, for the current page
        self._sentences: Any = None  # the language's TextPipeline, made when a ref first stands inside a sentence

    def _sentence_spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of each sentence of ``text``, split as the rest of the project splits sentences."""
        if not _STOP_INSIDE.search(text):  # no sentence-final punctuation before the last word: one sentence (quick)
            stripped = text.strip()
            return [(text.index(stripped[0]), len(text.rstrip()))] if stripped else []
        if self._sentences is None:
            from ..text import SENTENCES_MODEL, TextConfig, TextPipeline

            self._sentences = TextPipeline(TextConfig(lang=self._language.spacy, model=SENTENCES_MODEL))
        return self._sentences.sentence_spans(text)

    def extract(self, page: WikiPage) -> list[Statement]:
        """The statements of ``page`` (an empty list for a page that fails, which is logged and counted)."""
        counts: Counter = Counter(pages=1)
        try:
            with language_templates(self._language):
                statements = self._extract(page, counts)
        except Exception as err:  # one bad page must not stop a dump
            logger.warning("page %s (%r, revision %s): statement extraction failed: %s: %s", page.page_id, page.title,
                           page.revision_id, type(err).__name__, err)
            counts = Counter(pages=1, pages_failed=1)
            statements = []
        self.page_stats = counts
        self.stats.update(counts)
        return statements

    def _extract(self, page: WikiPage, counts: Counter) -> list[Statement]:
        self._page_id = page.page_id
        self._parsed: dict[str, Citation | None] = {}
        counts["wikitext_chars"] += len(page.text)
        prepared = prepare(page.text)
        counts["refs"] += len(prepared.refs)
        if prepared.unclosed_refs:
            counts["refs_unclosed"] += prepared.unclosed_refs
        path: list[tuple[int, str]] = []
        skip_level: int | None = None
        statements: list[Statement] = []
        position = 0
        current_date = _revision_date(page.timestamp) if self.config.render_relative_dates else None
        for section in split_sections(prepared.text):
            if section.level:
                heading = _heading_text(section.title)
                while path and path[-1][0] >= section.level:
                    path.pop()
                path.append((section.level, heading))
                if skip_level is not None and section.level <= skip_level:
                    skip_level = None
                if skip_level is None and _normalise_heading(heading) in self._skip_sections:
                    skip_level = section.level
                    counts["sections_skipped"] += 1
            if skip_level is not None:
                continue
            body = section.body
            if "\ue000" not in body and not _CITATION_HINT.search(body):
                continue
            walker = _BlockWalker(prepared.refs, counts, self.config.include_list_items, current_date,
                                  self._sentence_spans if self.config.whole_sentences else None)
            walker.walk(mwparserfromhell.parse(body).nodes)
            walker.break_block()
            section_path = [heading for _, heading in path]
            for span in walker.spans:
                counts["spans"] += 1
                if span.text is None:
                    counts["refs_inside_later_statement"] += 1
                    statement = None
                else:
                    statement = self._statement(page, prepared, section_path, span.text, position, span.marker,
                                                span.holes, counts)
                position += 1
                if statement is not None:
                    statements.append(statement)
        return statements

    def _statement(
        self, page: WikiPage, prepared: PreparedPage, section_path: list[str], text: str, position: int,
        marker: _Marker, holes: list[str], counts: Counter,
    ) -> Statement | None:
        citation = self._citation(marker, prepared, counts)
        if citation is None:
            return None
        if self.config.whole_sentences and _LEAD_IN.search(text):
            # "… are as follows:" introduces a list, a table or a quote, which the statement does not hold
            spans = self._sentence_spans(text)
            text = text[: spans[-1][0]].rstrip() if len(spans) > 1 else ""
            counts["lead_ins_cut"] += 1
            if not text:
                counts["dropped_lead_in"] += 1
                return None
        if len(text) < self.config.min_statement_chars:
            counts["dropped_too_short"] += 1
            return None
        if holes and self.config.drop_unrendered_templates:
            counts["dropped_unrendered_template"] += 1
            for name in dict.fromkeys(holes):
                counts[f"unrendered_template/{name}"] += 1
            logger.debug("page %s (%r): statement %d dropped, unrendered template(s) %s in %r", page.page_id,
                         page.title, position, ", ".join(dict.fromkeys(holes)), text[:200])
            return None
        markup = find_markup(text)
        if markup is not None:
            counts["dropped_markup"] += 1
            logger.debug("page %s (%r): statement %d dropped, markup %r left in %r", page.page_id, page.title,
                         position, markup, text[:200])
            return None
        counts["statements"] += 1
        counts[f"kept/{citation.type}"] += 1
        if citation.archive_url and citation.fetch_url == citation.archive_url:
            counts["archive_urls_used"] += 1
        return Statement(
            id=f"{page.page_id}-{position}",
            page_id=page.page_id,
            page_title=page.title,
            revision_id=page.revision_id,
            timestamp=page.timestamp,
            section_path=list(section_path),
            text=text,
            position=position,
            citation=citation,
        )

    def _citation(self, marker: _Marker, prepared: PreparedPage, counts: Counter) -> Citation | None:
        if marker.short_footnote is not None:
            counts["skipped/sfn"] += 1
            return None
        if marker.reuse is not None:
            group, ref_name, content = "", marker.reuse, None
        else:
            ref = marker.ref
            group, ref_name, content = ref.group or "", ref.name, ref.content
        if content is None or not content.strip():
            if ref_name is None:
                counts["refs_empty"] += 1
                return None
            content = prepared.definition(group, ref_name)
            if content is None:
                counts["refs_unresolved"] += 1
                logger.debug("page %s: named ref %r (group %r) is never defined", self._page_id, ref_name, group)
                return None
            counts["named_refs_resolved"] += 1
        citation_type = classify_ref(content, self._language)
        if citation_type == BARE_URL:
            if not self.config.include_bare_urls:
                counts["bare_urls_skipped"] += 1
                return None
            citation = parse_bare_url(content)
        elif citation_type not in self._keep_types:
            counts[f"skipped/{citation_type}"] += 1
            return None
        else:
            # a named ref is often reused: its citation is parsed once per page
            citation = self._parsed.get(content, _UNPARSED)
            if citation is _UNPARSED:
                citation = parse_citation(content, citation_type, self.config.archive_when_status_missing,
                                          self._language)
                self._parsed[content] = citation
        if citation is None or not is_valid_url(citation.fetch_url):
            counts["dropped_no_url"] += 1
            logger.debug("page %s: %s citation without a fetchable url: %r", self._page_id, citation_type,
                         content[:300])
            return None
        return replace(citation, ref_name=ref_name)


def _revision_date(timestamp: str) -> date | None:
    """The date of a revision timestamp (``2016-05-01T12:00:00Z``); ``None`` when it is missing or malformed."""
    try:
        return date.fromisoformat(timestamp[:10])
    except (TypeError, ValueError):
        return None


def _heading_text(title: str) -> str:
    if any(char in title for char in "[{<'&\ue000"):
        return render(PLACEHOLDER.sub("", title))
    return " ".join(title.split())
