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
3. The other sections are parsed with mwparserfromhell and walked node by node into cited spans
   (:mod:`~wikiref_dataset.wiki.spans`). Blocks follow MediaWiki: a blank line (or a line that renders nothing, such
   as a lone ``{{main|...}}`` or image) ends a paragraph, a list item ends at its line end, tables, block quotes and
   galleries are skipped. Inside inline markup (bold, ``<span>``, ``<small>`` ...) refs are still found.
   ``{{r|name}}`` reuses a named ref, ``{{#tag:ref|...}}`` is a ref, ``{{sfn}}``-style short footnotes are citations
   of type ``sfn``; grouped refs (``<ref group="note">``) and ``{{efn}}``-style notes are explanatory notes: not
   citations, no boundary.
4. Each cited span is rendered to plain text (:mod:`~wikiref_dataset.wiki.plaintext`), templates relative to today
   (``{{age}}``, ``{{CURRENTYEAR}}``) at the date of the revision; spans with no letters or digits (the text between
   two refs that stand together) are not statements. A template that is neither rendered nor known to show no words
   (:func:`~wikiref_dataset.wiki.templates.silent.is_silent_template`), or a ``<math>`` formula, standing inside a
   sentence leaves a hole (:func:`~wikiref_dataset.wiki.holes.find_holes`): such a statement would not say what the
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
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import date
from typing import Any

import mwparserfromhell

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
from .markup import PLACEHOLDER, PreparedPage, prepare, split_sections
from .plaintext import find_markup, render
from .spans import BlockWalker, CitationMarker, holds_citation

__all__ = [
    "DEFAULT_KEEP_TYPES",
    "DEFAULT_SKIP_SECTIONS",
    "Citation",
    "Statement",
    "StatementConfig",
    "StatementExtractor",
]

logger = logging.getLogger(__name__)

_UNPARSED = object()
_STOP_INSIDE = re.compile(r"[.!?。．！？]\W*\w")  # sentence-final punctuation with a word after it
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
            if not holds_citation(body):
                continue
            walker = BlockWalker(prepared.refs, counts, self.config.include_list_items, current_date,
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
        marker: CitationMarker, holes: list[str], counts: Counter,
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

    def _citation(self, marker: CitationMarker, prepared: PreparedPage, counts: Counter) -> Citation | None:
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
