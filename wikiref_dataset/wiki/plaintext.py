"""Plain text of parsed wikitext: what a reader sees, with the numbers and names that inline templates carry.

mwparserfromhell parses wikitext into nodes, and its ``strip_code()`` drops every template. That loses the value of
``{{convert|5|km}}``, the text of ``{{lang|fr|...}}``, the amount of ``{{US$|5 million}}`` and the date of
``{{as of|2010}}``, which matter in a statement that is later compared with its cited page. Expanding templates
properly needs MediaWiki itself (Lua modules, the template pages); no Python library renders them for our needs, so
the common inline templates are rendered by the renderers of :mod:`~wikiref_dataset.wiki.templates` (one module per
family, read from its registry: :data:`~wikiref_dataset.wiki.templates.registry.TEMPLATE_RENDERERS`), the templates
that show no words of the running text (maintenance tags such as ``{{citation needed}}``, footnote marks, icons,
infoboxes, navboxes) are dropped from an explicit list (:mod:`~wikiref_dataset.wiki.templates.silent`), and every
other template leaves a *hole* (:mod:`~wikiref_dataset.wiki.holes`): a marker that :func:`clean_text` removes unless
asked to keep it, and that :func:`~wikiref_dataset.wiki.holes.find_holes` reports when it stands inside a sentence.
This module is the renderer: the nodes of wikitext to text, superscripts, cleaning. The statement extractor drops
such statements: ``{{inflation|US|800|1861}}`` gone from "$800 ($... in current dollar terms)" would
change what the article says.

Rendering rules (:func:`render`):

* text is kept; HTML entities are decoded; HTML comments are dropped;
* ``[[target|label]]`` → ``label`` (``[[target]]`` → ``target``; the pipe trick ``[[a (b)|]]`` → ``a``);
  ``File:``/``Image:``/``Media:``/``Category:`` links and interlanguage links are dropped with their captions;
* ``[url label]`` → ``label``; ``[url]`` and bare URLs are dropped;
* bold/italic markup is removed; inline HTML tags (``span``, ``small``, ``sub``, ``abbr``, ``u``, ``code``, ...) keep
  their text (``H<sub>2</sub>O`` → ``H2O``); a numeric superscript is a power (:func:`superscript`:
  ``10<sup>18</sup>`` → ``10^18``, ``km<sup>2</sup>`` → ``km²``); ``<br>`` is a space; struck text (``s``, ``del``,
  ``strike``), tables, galleries and the other non-prose tags are dropped; ``<math>``, ``<chem>`` ... leave holes
  (:func:`~wikiref_dataset.wiki.markup.prepare` puts them in);
* templates: as :func:`~wikiref_dataset.wiki.templates.registry.template_renderer` finds their renderer:
  :data:`~wikiref_dataset.wiki.templates.registry.TEMPLATE_RENDERERS`; ``lang-xx`` and ``IPA-xx`` by prefix,
  ``... span`` templates (``{{citation needed span|text}}``) show their text; a language's own inline templates as
  its table says (:func:`~wikiref_dataset.wiki.inline.language_templates`, :mod:`~wikiref_dataset.wiki.inline`); the
  parser functions ``formatnum`` (with the language's separators, :func:`format_number`), ``lc``, ``uc``,
  ``lcfirst``, ``ucfirst``, ``#expr`` (:mod:`~wikiref_dataset.wiki.expressions`), ``#if``, ``#ifeq`` and
  ``#switch``, which need no page data (:mod:`~wikiref_dataset.wiki.templates.parser_functions`); templates relative
  to today (``{{age|1950|1|2}}``, ``{{CURRENTYEAR}}``) at ``current_date`` (the statement extractor passes the
  revision's date; without one they are holes); silent templates → nothing; everything else → a hole;
* :func:`clean_text` then normalises whitespace, removes the spaces a dropped template leaves before punctuation,
  empty brackets (``Alabama ({{IPAc-en|...}}) is`` → ``Alabama is``), stray ``''``/``'''`` and magic words.

Statements never contain markup: whatever still looks like markup after rendering is reported by
:func:`find_markup`, and the statement extractor drops (and counts) such statements instead of emitting them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from datetime import date

import mwparserfromhell
from mwparserfromhell.nodes import (
    Argument,
    Comment,
    ExternalLink,
    Heading,
    HTMLEntity,
    Node,
    Tag,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.wikicode import Wikicode

from .holes import HOLE_END, HOLE_START, find_holes, hole, strip_holes
from .templates import arguments
from .templates.arguments import canonical_template_name, unrendered
from .templates.context import LANGUAGE_TEMPLATES, LanguageTemplates
from .templates.dates import format_date
from .templates.formatting import superscript_template
from .templates.numbers import format_number
from .templates.registry import TEMPLATE_RENDERERS, template_renderer
from .templates.silent import SILENT_TEMPLATES, is_silent_template

__all__ = [
    "unrendered",
    "DROPPED_TAGS",
    "HOLE_END",
    "HOLE_START",
    "LIST_MARKUP",
    "SILENT_TEMPLATES",
    "TEMPLATE_RENDERERS",
    "TemplateArgs",
    "canonical_template_name",
    "clean_text",
    "find_holes",
    "find_markup",
    "format_date",
    "format_number",
    "hole",
    "is_dropped_link",
    "is_silent_template",
    "LANGUAGE_TEMPLATES",
    "LanguageTemplates",
    "render",
    "render_nodes",
    "render_pieces",
    "strip_holes",
    "superscript",
    "template_renderer",
]

# Re-exported above for the modules that import them from here: the template names and arguments, the holes, the
# registry, the silent templates, format_date and format_number (wikiref_dataset.wiki.templates has them).

# ----------------------------------------------------------------------------------------------------------------
# Links and tags
# ----------------------------------------------------------------------------------------------------------------

# Namespaces whose links are not text: images with their captions and category tags.
_DROPPED_LINK_NAMESPACES = frozenset({"file", "image", "media", "category"})
# Interwiki prefixes whose links do show their text ("[[wikt:word|word]]"); other short lowercase prefixes are
# language codes of interlanguage links, which are not part of the article text.
_VISIBLE_INTERWIKI = frozenset({"w", "wikt", "wiktionary", "s", "wikisource", "q", "wikiquote", "b", "wikibooks",
                                "n", "wikinews", "v", "wikiversity", "voy", "wikivoyage", "species", "wikispecies",
                                "c", "commons", "m", "meta", "mw", "d", "wikidata", "oldwikisource", "iarchive",
                                "doi", "hdl", "arxiv", "rfc", "imdbname", "imdbtitle"})
_LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{1,8})*\Z")
_SPACES = re.compile(r"[\s_]+")

# Tags whose content is not prose text (dropped with their content).
DROPPED_TAGS = frozenset({
    "table", "tr", "td", "th", "caption", "math", "chem", "ce", "score", "gallery", "imagemap", "timeline",
    "graph", "templatedata", "syntaxhighlight", "source", "pre", "references", "ref", "includeonly", "mapframe",
    "maplink", "categorytree", "inputbox", "hiero", "style", "script", "s", "strike", "del", "poem", "blockquote",
    "templatestyles", "section", "indicator", "charinsert", "hr",
})  # fmt: skip
LIST_MARKUP = frozenset({"*", "#", ":", ";"})
"""``Tag.wiki_markup`` of list items (``*``, ``#``) and definition lists (``:``, ``;``)."""


def is_dropped_link(title: str) -> bool:
    """Whether a wikilink's target is a file, image or category (``File:``, and the language's own names such as
    ``Datei:`` within :func:`~wikiref_dataset.wiki.inline.language_templates`): such links show no text."""
    if ":" not in title or title.lstrip().startswith(":"):
        return False
    return _dropped_namespace(_SPACES.sub(" ", title.split(":", 1)[0]).strip().lower())


def _dropped_namespace(prefix: str) -> bool:
    return prefix in _DROPPED_LINK_NAMESPACES or prefix in LANGUAGE_TEMPLATES.get().dropped_namespaces


# ----------------------------------------------------------------------------------------------------------------
# Rendering
# ----------------------------------------------------------------------------------------------------------------


def render(code: Wikicode | str | None, current_date: date | None = None, keep_holes: bool = False) -> str:
    """Plain text of wikitext (a parsed :class:`Wikicode` or a string), cleaned with :func:`clean_text`.

    Args:
        code (`Wikicode` or `str`): the wikitext.
        current_date (`datetime.date`, *optional*): the date that templates relative to today (``{{age}}``,
            ``{{CURRENTYEAR}}``) are rendered at; without it they are holes.
        keep_holes (`bool`): leave the hole markers of unrendered templates in the text (see :func:`find_holes`);
            by default they are removed.
    """
    if code is None:
        return ""
    if isinstance(code, str):
        code = mwparserfromhell.parse(code)
    return clean_text(render_raw(code, current_date), keep_holes=keep_holes)


def render_raw(code: Wikicode | None, current_date: date | None = None) -> str:
    """Plain text of a node list without the final :func:`clean_text` (for template arguments and link labels);
    unrendered templates are hole markers."""
    if code is None:
        return ""
    out: list[str] = []
    render_nodes(code.nodes, out, current_date)
    return "".join(out)


def render_nodes(nodes: Iterable[Node], out: list[str], current_date: date | None = None) -> None:
    """Append the visible text of ``nodes`` to ``out`` (not yet cleaned)."""
    for node in nodes:
        handler = _NODE_HANDLERS.get(type(node))
        if handler is not None:
            handler(node, out, current_date)


def render_pieces(pieces: Iterable[str | Node], current_date: date | None = None, keep_holes: bool = False) -> str:
    """Plain text of a sequence of strings (taken as plain text) and parsed nodes, cleaned with :func:`clean_text`
    (arguments as for :func:`render`)."""
    out: list[str] = []
    for piece in pieces:
        if type(piece) is str:
            out.append(piece)
        else:
            handler = _NODE_HANDLERS.get(type(piece))
            if handler is not None:
                handler(piece, out, current_date)
    return clean_text("".join(out), keep_holes=keep_holes)


def _text(node: Text, out: list[str], current_date: date | None) -> None:
    out.append(node.value)


def _entity(node: HTMLEntity, out: list[str], current_date: date | None) -> None:
    try:
        out.append(node.normalize())
    except ValueError:  # an invalid numeric entity
        pass


def _wikilink(node: Wikilink, out: list[str], current_date: date | None) -> None:
    title = str(node.title).strip()
    if title.startswith(":"):  # [[:Category:X|x]] is a visible link
        title = title[1:].lstrip()
    elif ":" in title:
        prefix = title.split(":", 1)[0].strip().lower()
        if _dropped_namespace(prefix):
            return
        if prefix not in _VISIBLE_INTERWIKI and _LANGUAGE_CODE.match(prefix) and node.text is None:
            return  # interlanguage link
    if node.text is not None:
        label = render_raw(node.text, current_date)
        if label.strip():
            out.append(label)
            return
        if str(node.text).strip():  # the label was only markup that renders as nothing
            return
        # the pipe trick: [[Paris, Texas|]] → "Paris", [[Pipe (computing)|]] → "Pipe"
        title = re.sub(r"\s*\(.*\)\s*$", "", title.split(":", 1)[-1] if ":" in title else title)
        title = title.split(",", 1)[0]
    if "{{" in title or "<" in title or "&" in title:
        title = render_raw(mwparserfromhell.parse(title), current_date)
    out.append(title)


def _external_link(node: ExternalLink, out: list[str], current_date: date | None) -> None:
    if node.brackets and node.title is not None:
        render_nodes(node.title.nodes, out, current_date)
    # bare URLs and [url] without a label are not text


def _tag(node: Tag, out: list[str], current_date: date | None) -> None:
    markup = node.wiki_markup
    if markup is not None:
        if markup in LIST_MARKUP:
            out.append("\n")
            return
        if markup.startswith("{|") or markup == "----":
            return
    name = str(node.tag).strip().lower()
    if name in DROPPED_TAGS:
        return
    if name == "br":
        out.append(" ")
        return
    if name == "nowiki":
        if node.contents is not None:
            out.append(html.unescape(str(node.contents)))
        return
    if name in ("li", "dd", "dt", "p", "div", "center", "ul", "ol", "dl"):
        out.append(" ")
    if node.contents is not None and not node.self_closing:
        if name == "sup":
            out.append(superscript(render_raw(node.contents, current_date), "".join(out[-4:])))
        else:
            render_nodes(node.contents.nodes, out, current_date)


def _template(node: Template, out: list[str], current_date: date | None) -> None:
    name = canonical_template_name(str(node.name))
    renderer = template_renderer(node, name)
    if renderer is superscript_template:  # needs the text before it: 10{{sup|18}} → 10^18
        out.append(superscript(TemplateArgs(node, current_date).pos(1), "".join(out[-4:])))
    elif renderer is not None:
        out.append(renderer(TemplateArgs(node, current_date)))
    elif not is_silent_template(name):
        out.append(hole(name.split(":", 1)[0] + ":" if ":" in name else name))


def _heading(node: Heading, out: list[str], current_date: date | None) -> None:
    out.append("\n")
    render_nodes(node.title.nodes, out, current_date)
    out.append("\n")


def _ignore(node: Node, out: list[str], current_date: date | None) -> None:
    return None


_NODE_HANDLERS: dict[type, Callable[[Node, list[str], date | None], None]] = {
    Text: _text,
    Wikilink: _wikilink,
    ExternalLink: _external_link,
    Tag: _tag,
    Template: _template,
    HTMLEntity: _entity,
    Heading: _heading,
    Comment: _ignore,
    Argument: _ignore,
}


# ----------------------------------------------------------------------------------------------------------------
# Superscripts
# ----------------------------------------------------------------------------------------------------------------

_EXPONENT = re.compile(r"[−\-+]?\d{1,3}\Z")
_FOOTNOTE_MARK = re.compile(r"\[\w{1,3}\]\Z|\*\Z")
_SUPERSCRIPT_DIGITS = str.maketrans("0123456789−-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁻⁺")


def superscript(content: str, before: str) -> str:
    """Plain text of a superscript (``<sup>`` or ``{{sup}}``) given the text ``before`` it.

    A numeric exponent after a number is a power: ``10<sup>18</sup>`` → ``10^18`` (not "1018"), ``1024<sup>2</sup>``
    → ``1024^2``. After a letter or a closing bracket it is written with superscript characters, as :func:`render`
    writes units (``km<sup>2</sup>`` → ``km²``, ``mc<sup>2</sup>`` → ``mc²``). Bracketed marks
    (``<sup>[1]</sup>``) are dropped; any other content (``1<sup>st</sup>``, ``H<sup>+</sup>``, the mass number of
    ``<sup>137</sup>Cs``) is kept as written.
    """
    content = content.strip()
    if _FOOTNOTE_MARK.match(content):
        return ""
    if not _EXPONENT.match(content):
        return content
    before = before.rstrip("'")  # ''mc''<sup>2</sup>: italic markup is removed later
    if not before or before[-1].isspace():
        return content
    if before[-1].isdigit():
        return f"^{content}"
    if before[-1].isalpha() or before[-1] in ")]":
        return content.translate(_SUPERSCRIPT_DIGITS)
    return content


# ----------------------------------------------------------------------------------------------------------------
# Cleaning
# ----------------------------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile("\ue000[0-9]*\ue001?")
_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\ufeff]")
_APOSTROPHE_MARKUP = re.compile(r"'{2,}")
_MAGIC_WORD = re.compile(r"__[A-Z]{3,}__")
_WHITESPACE = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r" (?=[,.;:!?%)\]])")
_SPACE_AFTER_OPEN = re.compile(r"(?<=[(\[]) ")
_EMPTY_BRACKETS = re.compile(r"\s*[(\[][\s,;:]*[)\]]")
_OPEN_SEPARATOR = re.compile(r"(?<=[(\[])(?:[,;:]\s*)+")
_DOUBLE_PUNCT = re.compile(r"([,;])(?:\s*[,;])+")


def clean_text(text: str, keep_holes: bool = False) -> str:
    """Normalise rendered text: one space for any whitespace run, no space before ``,.;:!?)]%``, no empty
    brackets, no stray ``''``/``'''`` or ``__MAGICWORDS__``, no leftover ref placeholders, and no hole markers
    unless ``keep_holes``."""
    if "\ue000" in text:
        text = _PLACEHOLDER.sub("", text)
    if not keep_holes:
        text = strip_holes(text)
    text = _INVISIBLE.sub("", text)
    if "''" in text:
        text = _APOSTROPHE_MARKUP.sub("", text)
    if "__" in text:
        text = _MAGIC_WORD.sub("", text)
    text = _WHITESPACE.sub(" ", text)
    if "(" in text or "[" in text:
        text = _SPACE_AFTER_OPEN.sub("", text)
        text = _OPEN_SEPARATOR.sub("", text)
        text = _EMPTY_BRACKETS.sub("", text)
    text = _SPACE_BEFORE_PUNCT.sub("", text)
    text = _DOUBLE_PUNCT.sub(r"\1", text)
    return text.strip()


# What must never appear in a statement. "|" alone, "=" and "'" are ordinary characters.
_MARKUP = re.compile(
    r"\{\{|\}\}|\[\[|\]\]|<ref|</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>|<!--|-->|'''|\{\||\|\}|"
    r"\b(?:File|Image|Category):|\bthumb\||\|thumb\b|\ue000",
    re.IGNORECASE,
)


def find_markup(text: str) -> str | None:
    """The first piece of wiki or HTML markup left in ``text``, or ``None`` when it is clean plain text."""
    match = _MARKUP.search(text)
    return match.group(0) if match else None


# ----------------------------------------------------------------------------------------------------------------
# Template arguments
# ----------------------------------------------------------------------------------------------------------------


class TemplateArgs(arguments.TemplateArgs):
    """The arguments a template renderer receives (:class:`~wikiref_dataset.wiki.templates.arguments.TemplateArgs`),
    rendered by this module's :func:`render_raw`: ``TemplateArgs(template, current_date)``."""

    __slots__ = ()

    def render(self, code: Wikicode) -> str:
        return render_raw(code, self.current_date)
