"""Cited spans of a section: its wikitext walked node by node, block by block as MediaWiki makes paragraphs and list
items, and cut at each citation (a ``<ref>``, a ``{{r|name}}`` reuse, a short footnote) into the text that citation
cites (:class:`BlockWalker`, :class:`CitedSpan`).

A span is the rendered text between the previous citation of its block (or the block start) and its own; the
sentence-final punctuation right after a ref is its span's. With the sentence rules, a sentence that holds several refs
goes whole to its last ref: an earlier ref keeps the whole sentences before it, or nothing. The statement extractor
(:mod:`~wikiref_dataset.wiki.statements`) turns spans into statements.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from mwparserfromhell.nodes import Comment, Heading, Tag, Template, Text, Wikilink

from .holes import HOLE_START, find_holes, strip_holes
from .markup import RefTag
from .plaintext import LIST_MARKUP, is_dropped_link, render_pieces
from .templates.arguments import canonical_template_name
from .templates.registry import template_renderer
from .templates.silent import is_silent_template

__all__ = ["BlockWalker", "CitationMarker", "CitedSpan", "holds_citation"]

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
# not the minus of "-5 °C"; CJK full stops and commas too (Japanese and Chinese put the ref before the 。)
_LEADING_JUNK = re.compile(r"^(?:[\s.,;:!?)\]}–—。、，．！？：；）」』】〕]|-(?!\d))+")
# sentence-final punctuation (any script's), closing quotes and brackets after it: what ends a sentence right after a
# ref (French puts a space before ! and ?), and whether a span already ends one
# (a full stop followed by a letter or digit is a decimal point or an abbreviation's: 3<ref/>.5)
_CLOSERS = "[\"'”’»」』）)\\]】〕]*"  # closing quotes and brackets after the punctuation
_SENTENCE_END = re.compile(rf"(?:[ \u00a0\u202f](?=[!?]))?((?:[!?。．！？][.!?。．！？]*|\.+(?!\w)){_CLOSERS})")
_ENDS_SENTENCE = re.compile(rf"[.!?。．！？]{_CLOSERS}\s*$")
_LONGEST_SENTENCE = 2000  # characters of an unfinished sentence carried to the next ref, at most


@dataclass
class CitationMarker:
    """Where a citation stands in the text: a ref tag, a ``{{r|name}}`` reuse, or a short footnote."""

    ref: RefTag | None = None
    reuse: str | None = None  # the name a {{r|name}} reuses
    short_footnote: str | None = None


@dataclass(slots=True)
class CitedSpan:
    """A cited span of a block: its plain text (``None`` when its ref is left with no statement: the ref stood inside
    a sentence that a later ref of the same sentence was given), its citation, the unrendered templates in its text,
    and where the text comes from: ``nodes`` render as ``rendered``, whose first ``start`` characters are earlier
    spans' text (carried to it) or leading punctuation, and the rest the span's text as first cut."""

    text: str | None
    marker: CitationMarker
    holes: list[str]
    nodes: list[Any]
    rendered: str
    start: int


class BlockWalker:
    """Walks the nodes of one section and collects its cited spans (:class:`CitedSpan`), block by block.

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
        self.spans: list[CitedSpan] = []
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
                    self.cite(CitationMarker(ref=ref))
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
            if name == "nowiki" or (name == "sup" and not holds_citation(str(node))):
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
                self.cite(CitationMarker(reuse=reused))
        elif name in _SHORT_FOOTNOTES:
            self.line_has_content = True
            self.cite(CitationMarker(short_footnote=name))
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
        self.cite(CitationMarker(ref=RefTag(index=-1, name=ref_name or None, content=content)))

    # -- citations -----------------------------------------------------------------------------------------------

    def _render(self, nodes: list[Any]) -> tuple[str, str]:
        """``nodes`` as plain text, with the hole markers of unrendered templates and without them (rendered again
        without the holes rather than cleaned twice: cleaning is not idempotent on "(, ,")."""
        with_holes = render_pieces(nodes, self.current_date, keep_holes=True)
        return with_holes, render_pieces(nodes, self.current_date) if HOLE_START in with_holes else with_holes

    def cite(self, marker: CitationMarker) -> None:
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
        self.spans.append(CitedSpan(text, marker, holes, nodes, plain, start))
        self.open_span = len(self.spans) - 1


def _strip_leading_junk(text: str) -> str:
    if text and not text[0].isalnum():
        text = _LEADING_JUNK.sub("", text)
    return text


def _shows_text(piece: str) -> bool:
    """Whether a piece of text shows anything (hole markers of unrendered tags such as ``<math>`` alone do not)."""
    return bool(strip_holes(piece).strip())


def holds_citation(wikitext: str) -> bool:
    """Whether ``wikitext`` may hold a citation: a ref placeholder (:func:`~wikiref_dataset.wiki.markup.prepare`), a
    ``{{r|name}}``, a short footnote or a ``{{#tag:ref}}``."""
    return "\ue000" in wikitext or bool(_CITATION_HINT.search(wikitext))
