"""Plain text of parsed wikitext: what a reader sees, with the numbers and names that inline templates carry.

mwparserfromhell parses wikitext into nodes, and its ``strip_code()`` drops every template. That loses the value of
``{{convert|5|km}}``, the text of ``{{lang|fr|...}}``, the amount of ``{{US$|5 million}}`` and the date of
``{{as of|2010}}``, which matter in a statement that is later compared with its cited page. Expanding templates
properly needs MediaWiki itself (Lua modules, the template pages); no Python library renders them for our needs, so
the common inline templates are rendered here from a documented table (:data:`TEMPLATE_RENDERERS`), the templates
that show no words of the running text (maintenance tags such as ``{{citation needed}}``, footnote marks, icons,
infoboxes, navboxes) are dropped from an explicit list (:data:`SILENT_TEMPLATES`, :func:`is_silent_template`), and
every other template leaves a *hole*: a marker (:data:`HOLE_START` name :data:`HOLE_END`) that :func:`clean_text`
removes unless asked to keep it, and that :func:`find_holes` reports when it stands inside a sentence. The statement
extractor drops such statements: ``{{inflation|US|800|1861}}`` gone from "$800 ($... in current dollar terms)" would
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
* templates: see :data:`TEMPLATE_RENDERERS`; ``lang-xx`` and ``IPA-xx`` by prefix, ``... span`` templates (``{{citation
  needed span|text}}``) show their text; a language's own inline templates as its table says
  (:func:`~wikiref_dataset.wiki.inline.language_templates`, :mod:`~wikiref_dataset.wiki.inline`); the parser functions ``formatnum`` (with the
  language's separators, :func:`format_number`), ``lc``, ``uc``, ``lcfirst``, ``ucfirst``, ``#expr``
  (:mod:`~wikiref_dataset.wiki.expressions`), ``#if``, ``#ifeq`` and ``#switch``, which need no page data; templates relative to today (``{{age|1950|1|2}}``, ``{{CURRENTYEAR}}``) at ``current_date`` (the
  statement extractor passes the revision's date; without one they are holes); silent templates → nothing;
  everything else → a hole;
* :func:`clean_text` then normalises whitespace, removes the spaces a dropped template leaves before punctuation,
  empty brackets (``Alabama ({{IPAc-en|...}}) is`` → ``Alabama is``), stray ``''``/``'''`` and magic words.

Statements never contain markup: whatever still looks like markup after rendering is reported by
:func:`find_markup`, and the statement extractor drops (and counts) such statements instead of emitting them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING

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

from .expressions import ExpressionError, evaluate_expression, format_expression_result

if TYPE_CHECKING:
    from .languages import NumberFormat

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

# ----------------------------------------------------------------------------------------------------------------
# Names
# ----------------------------------------------------------------------------------------------------------------

_SPACES = re.compile(r"[\s_]+")


def canonical_template_name(name: str) -> str:
    """A template's name as the lookup tables spell it: lowercased, ``_`` and runs of spaces → one space, without a
    ``Template:`` prefix (MediaWiki only folds the first letter; many case variants exist as redirects anyway)."""
    name = _SPACES.sub(" ", name).strip().lower()
    if name.startswith("template:"):
        name = name[9:].lstrip()
    return name


# Namespaces whose links are not text: images with their captions and category tags.
_DROPPED_LINK_NAMESPACES = frozenset({"file", "image", "media", "category"})
# Interwiki prefixes whose links do show their text ("[[wikt:word|word]]"); other short lowercase prefixes are
# language codes of interlanguage links, which are not part of the article text.
_VISIBLE_INTERWIKI = frozenset({"w", "wikt", "wiktionary", "s", "wikisource", "q", "wikiquote", "b", "wikibooks",
                                "n", "wikinews", "v", "wikiversity", "voy", "wikivoyage", "species", "wikispecies",
                                "c", "commons", "m", "meta", "mw", "d", "wikidata", "oldwikisource", "iarchive",
                                "doi", "hdl", "arxiv", "rfc", "imdbname", "imdbtitle"})
_LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{1,8})*\Z")

# Tags whose content is not prose text (dropped with their content).
DROPPED_TAGS = frozenset({
    "table", "tr", "td", "th", "caption", "math", "chem", "ce", "score", "gallery", "imagemap", "timeline",
    "graph", "templatedata", "syntaxhighlight", "source", "pre", "references", "ref", "includeonly", "mapframe",
    "maplink", "categorytree", "inputbox", "hiero", "style", "script", "s", "strike", "del", "poem", "blockquote",
    "templatestyles", "section", "indicator", "charinsert", "hr",
})  # fmt: skip
LIST_MARKUP = frozenset({"*", "#", ":", ";"})
"""``Tag.wiki_markup`` of list items (``*``, ``#``) and definition lists (``:``, ``;``)."""


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
    if renderer is _superscript_template:  # needs the text before it: 10{{sup|18}} → 10^18
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
# Holes
# ----------------------------------------------------------------------------------------------------------------

HOLE_START, HOLE_END = "\ue002", "\ue003"
"""Private-use characters around the name of an unrendered template in raw rendered text (wikitext never holds
them, like the ref placeholders of :mod:`~wikiref_dataset.wiki.markup`)."""
_HOLE = re.compile("\ue002([^\ue002\ue003]*)\ue003")
_WORD = re.compile(r"\w")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\Z")
_BRACKET_OPEN = re.compile(r"[(\[][\s,;:]*\Z")
_BRACKET_CLOSE = re.compile(r"[\s,;:]*[)\]]")


def hole(name: str) -> str:
    """The marker that an unrendered template (or a text-bearing tag such as ``<math>``) leaves in raw text."""
    return HOLE_START + name.replace(HOLE_START, "").replace(HOLE_END, "") + HOLE_END


def strip_holes(text: str) -> str:
    """``text`` without hole markers (whitespace is not normalised: :func:`clean_text` does that)."""
    return _HOLE.sub("", text) if HOLE_START in text else text


def find_holes(text: str) -> list[str]:
    """Names of the unrendered templates that leave a hole *inside* a sentence of ``text`` (rendered with
    ``keep_holes=True``), in order.

    An unrendered template is harmless where nothing it said could be missing from the sentence: before any word of
    the text (``{{quote|...}} He then ...``: the statement starts after it), right after the end of a sentence
    (``... in 1990.{{x}} Then ...``), or alone in brackets (``Alabama ({{x}}) is``: the brackets go with it).
    Everywhere else (``the notes A{{music|flat}}4``, ``on the {{railgauge|1000}} line``, ``in {{currentyear}}
    dollars``) the template very likely carried words the sentence needs.
    """
    if HOLE_START not in text:
        return []
    names = []
    for match in _HOLE.finditer(text):
        before = strip_holes(text[: match.start()]).rstrip()
        after = strip_holes(text[match.end() :]).lstrip()
        if not _WORD.search(before) or _SENTENCE_END.search(before):
            continue
        if _BRACKET_OPEN.search(before) and _BRACKET_CLOSE.match(after):
            continue
        names.append(match.group(1))
    return names


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
    if not keep_holes and HOLE_START in text:
        text = _HOLE.sub("", text)
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
# Templates
# ----------------------------------------------------------------------------------------------------------------


class TemplateArgs:
    """A template's arguments as plain text, rendered on demand: positional ``1..n`` (explicit ``|2=x`` counts)
    and named (keys lowercased). ``current_date`` is the date templates relative to today are rendered at (``None``:
    unknown, they are holes)."""

    __slots__ = ("template", "current_date", "_positional", "_named")

    def __init__(self, template: Template, current_date: date | None = None):
        self.template = template
        self.current_date = current_date
        self._positional: dict[int, Wikicode] = {}
        self._named: dict[str, Wikicode] = {}
        index = 0
        for param in template.params:
            if param.showkey:
                key = str(param.name).strip()
                if key.isdigit():
                    self._positional[int(key)] = param.value
                else:
                    self._named[key.lower()] = param.value
            else:
                index += 1
                self._positional[index] = param.value

    def pos(self, index: int, default: str = "") -> str:
        """Positional argument ``index`` (1-based), rendered and stripped."""
        value = self._positional.get(index)
        if value is None:
            return default
        return _strip_arg(render_raw(value, self.current_date))

    def positionals(self) -> list[str]:
        """All positional arguments 1..n in order (a gap renders as an empty string)."""
        if not self._positional:
            return []
        return [self.pos(index) for index in range(1, max(self._positional) + 1)]

    def get(self, *names: str, default: str = "") -> str:
        """The first of the named arguments ``names`` (a digit name is a positional argument) that is present and
        not empty, rendered and stripped."""
        for name in names:
            value = self._positional.get(int(name)) if name.isdigit() else self._named.get(name)
            if value is not None:
                text = _strip_arg(render_raw(value, self.current_date))
                if text:
                    return text
        return default

    def raw(self, name: str) -> str | None:
        """A named argument's wikitext (a positional one for a digit name), stripped (``None`` when absent)."""
        value = self._positional.get(int(name)) if name.isdigit() else self._named.get(name)
        return None if value is None else str(value).strip()

    def flag(self, *names: str) -> bool:
        """Whether one of the named arguments is set to a yes-like value (``y``, ``yes``, ``on``, ``true``)."""
        return any(self.get(name).lower() in ("y", "yes", "on", "true", "1") for name in names)


def _strip_arg(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


_Renderer = Callable[[TemplateArgs], str]


@dataclass(frozen=True)
class LanguageTemplates:
    silent: frozenset[str] = frozenset()
    first_argument: frozenset[str] = frozenset()
    renders_as: Mapping[str, str] = field(default_factory=dict)
    holes: frozenset[str] = frozenset()
    dropped_namespaces: frozenset[str] = frozenset()
    inline: Mapping[str, _Renderer] = field(default_factory=dict)  # the [inline] table's renderers
    inline_patterns: tuple[tuple[re.Pattern, _Renderer], ...] = ()
    numbers: NumberFormat | None = None  # None: English (1,234.5)

    @property
    def english(self) -> bool:
        """English: its name heuristics apply (silent "s-"/"... icon" prefixes and suffixes); every other language
        comes with its own number format."""
        return self.numbers is None


# The inline templates of the language being read (:func:`~wikiref_dataset.wiki.inline.language_templates`).
LANGUAGE_TEMPLATES: ContextVar[LanguageTemplates] = ContextVar("wikiref_language_templates",
                                                                 default=LanguageTemplates())  # noqa: B039 (frozen)


def template_renderer(template: Template, name: str | None = None) -> _Renderer | None:
    """The renderer for ``template`` (whose canonical name may be given): the language's ``[inline]`` templates and
    first-argument templates (:func:`~wikiref_dataset.wiki.inline.language_templates`), its ``[inline_patterns]``, :data:`TEMPLATE_RENDERERS`
    (directly or through the language's ``renders_as``), by prefix, or a parser function; ``None`` when the template
    is dropped."""
    if name is None:
        name = canonical_template_name(str(template.name))
    language = LANGUAGE_TEMPLATES.get()
    if language.inline and name in language.inline:
        return language.inline[name]
    if language.first_argument and name in language.first_argument:
        return _first_or_text
    if language.silent and name in language.silent:
        return None
    if language.holes and name in language.holes:
        return None
    for pattern, renderer in language.inline_patterns:
        if pattern.fullmatch(name):
            return renderer
    name = language.renders_as.get(name, name)
    renderer = TEMPLATE_RENDERERS.get(name)
    if renderer is not None:
        return renderer
    if ":" in name:
        return _parser_function(template)
    if name.endswith(" span"):  # {{citation needed span|text}}, {{clarify span|text}}: the text is shown
        return _first_or_text
    for prefix, prefixed in _PREFIX_RENDERERS:
        if name.startswith(prefix):
            return prefixed
    return None


# -- helpers -----------------------------------------------------------------------------------------------------

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_MONTH_BY_NAME = {name.lower(): number for number, name in enumerate(_MONTHS, start=1)}
_MONTH_BY_NAME.update({name[:3].lower(): number for number, name in enumerate(_MONTHS, start=1)})
_NUMBER = re.compile(r"[+\-−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:e[+\-]?\d+)?\Z", re.IGNORECASE)


def _is_number(text: str) -> bool:
    return bool(_NUMBER.match(text.strip()))


def _group_thousands(number: str) -> str:
    """``1234567.5`` → ``1,234,567.5``; in another language as it writes numbers (:func:`~wikiref_dataset.wiki.inline.language_templates`:
    ``1 234 567,5`` in French); anything that is not a plain number is returned unchanged."""
    numbers = LANGUAGE_TEMPLATES.get().numbers
    if numbers is not None:
        return format_number(number, numbers)
    match = re.fullmatch(r"([+\-−]?)(\d{4,})(\.\d+)?", number.strip())
    if not match:
        return number
    sign, whole, fraction = match.groups()
    return f"{sign}{int(whole):,}{fraction or ''}"


_PLAIN_NUMBER = re.compile(r"([+\-−–]?)(\d+)(?:([.,])(\d+))?\Z")


def format_number(number: str, numbers: NumberFormat, decimal_comma: bool = False) -> str:
    """A plain number (``1234567.5``) written as a language writes it (:class:`~wikiref_dataset.wiki.languages.
    NumberFormat`: ``1 234 567,5`` in French, ``1.234.567,5`` in German), grouped by three from ``min_digits``
    digits on. As in ``{{formatnum:}}`` the decimal mark read is ``.``; ``decimal_comma`` reads ``,`` too (French
    editors write ``{{unité|3743,31|km|2}}``). Anything else (already grouped, words) is returned unchanged. Group
    marks are written as a plain space where the language uses a (narrow) no-break space: text is cleaned to one."""
    match = _PLAIN_NUMBER.match(number.strip())
    if not match or (match.group(3) == "," and not decimal_comma):
        return number
    sign, whole, _, fraction = match.groups()
    if len(whole) >= max(numbers.min_digits, 4):
        head = len(whole) % 3 or 3
        whole = numbers.group.join([whole[:head]] + [whole[index:index + 3] for index in range(head, len(whole), 3)])
    return f"{sign}{whole}{numbers.decimal + fraction if fraction else ''}"


def _month(value: str) -> int | None:
    value = value.strip().lower()
    if value.isdigit():
        number = int(value)
        return number if 1 <= number <= 12 else None
    return _MONTH_BY_NAME.get(value) or _MONTH_BY_NAME.get(value[:3])


def _day(value: str) -> int | None:
    value = value.strip()
    return int(value) if value.isdigit() and 1 <= int(value) <= 31 else None


def format_date(year: str, month: str = "", day: str = "", dmy: bool = False) -> str:
    """``1950``, ``January 1950``, ``January 2, 1950`` (``dmy``: ``2 January 1950``) from template arguments."""
    year = year.strip()
    number = _month(month) if month else None
    if number is None:
        return year
    name = _MONTHS[number - 1]
    day_number = _day(day) if day else None
    if day_number is None:
        return f"{name} {year}".strip()
    return f"{day_number} {name} {year}" if dmy else f"{name} {day_number}, {year}"


def _age(y1: str, m1: str, d1: str, y2: str, m2: str, d2: str) -> int | None:
    try:
        born = date(int(y1), _month(m1) or 1, _day(d1) or 1)
        died = date(int(y2), _month(m2) or 1, _day(d2) or 1)
    except ValueError:
        return None
    return died.year - born.year - ((died.month, died.day) < (born.month, born.day))


def _dmy(args: TemplateArgs) -> bool:
    return args.flag("df") or args.get("df").lower() in ("dmy",)


# -- renderers ---------------------------------------------------------------------------------------------------


def _first(args: TemplateArgs) -> str:
    return args.pos(1)


def _second(args: TemplateArgs) -> str:
    return args.pos(2)


def _last(args: TemplateArgs) -> str:
    values = [value for value in args.positionals() if value]
    return values[-1] if values else ""


def _joined(separator: str) -> _Renderer:
    def render_joined(args: TemplateArgs) -> str:
        return separator.join(value for value in args.positionals() if value)

    return render_joined


def _constant(text: str) -> _Renderer:
    def render_constant(args: TemplateArgs) -> str:
        return text

    return render_constant


def _prefixed(prefix: str, suffix: str = "") -> _Renderer:
    def render_prefixed(args: TemplateArgs) -> str:
        value = args.pos(1)
        return f"{prefix}{value}{suffix}" if value else ""

    return render_prefixed


def _nbsp(args: TemplateArgs) -> str:
    count = args.pos(1)
    return " " * (int(count) if count.isdigit() and int(count) < 20 else 1)


# {{convert}}: value (range) unit [value unit ...]; the conversion itself is not computed.
_CONVERT_RANGES = {"-": "–", "–": "–", "to": " to ", "and": " and ", "or": " or ", "to(-)": " to ", "x": " × ",
                   "×": " × ", "by": " by ", "+/-": " ± ", "±": " ± ", "and(-)": " and ", "or(-)": " or ",
                   "&": " & ", "+": " + ", "to about": " to about ", "-to-": " to ", "xx": " × "}
_UNIT_SYMBOLS = {
    "km2": "km²", "m2": "m²", "cm2": "cm²", "mm2": "mm²", "sqkm": "km²", "mi2": "sq mi", "sqmi": "sq mi",
    "ft2": "sq ft", "sqft": "sq ft", "sqyd": "sq yd", "yd2": "sq yd", "in2": "sq in", "sqin": "sq in",
    "acre": "acres", "acres": "acres", "ha": "ha", "km3": "km³", "m3": "m³", "cm3": "cm³", "cuft": "cu ft",
    "ft3": "cu ft", "cuyd": "cu yd", "cumi": "cu mi", "C": "°C", "F": "°F", "K": "K", "kph": "km/h",
    "kmh": "km/h", "km/h": "km/h", "mph": "mph", "kn": "kn", "knot": "kn", "impgal": "imp gal", "USgal": "US gal",
    "usgal": "US gal", "L": "L", "l": "L", "LT": "long tons", "ST": "short tons", "t": "t", "MT": "t",
    "e3acre": "thousand acres", "e6acre": "million acres", "e3km2": "thousand km²", "e6km2": "million km²",
    "e3sqmi": "thousand sq mi", "e6sqmi": "million sq mi", "e3mi2": "thousand sq mi", "e6mi2": "million sq mi",
    "e6m3": "million m³", "e9m3": "billion m³", "e6cuft": "million cu ft", "e9cuft": "billion cu ft",
    "e3t": "thousand t", "e6t": "million t", "e6km": "million km", "e6mi": "million mi", "e9km": "billion km",
    "e3km": "thousand km", "e3mi": "thousand mi", "e6bbl": "million bbl", "e3bbl": "thousand bbl",
    "ftin": "ft in", "ft.in": "ft in", "stlb": "st lb", "lboz": "lb oz", "usgal/min": "US gal/min",
    "deg": "°", "°": "°", "percent": "%", "%": "%", "PD/sqmi": "/sq mi", "PD/mi2": "/sq mi", "PD/km2": "/km²",
    "PD/sqkm": "/km²", "PD/ha": "/ha", "PD/acre": "/acre",
}  # fmt: skip


def _unit(code: str) -> str:
    code = code.strip()
    return _UNIT_SYMBOLS.get(code, code)


def _convert(args: TemplateArgs) -> str:
    values = args.positionals()
    if not values or not values[0]:
        return ""
    parts = [_group_thousands(values[0])]
    index = 1
    while index + 1 < len(values) and values[index].strip().lower() in _CONVERT_RANGES and _is_number(values[index + 1]):
        parts.append(_CONVERT_RANGES[values[index].strip().lower()])
        parts.append(_group_thousands(values[index + 1]))
        index += 2
    if index < len(values) and values[index]:
        unit = _unit(values[index])
        parts.append(unit if unit.startswith(("/", "%")) else " " + unit)
        index += 1
        # compound input: {{convert|5|ft|6|in|m}} → "5 ft 6 in"
        while index + 2 < len(values) and _is_number(values[index]) and values[index + 1] and not _is_number(
            values[index + 1]
        ):
            parts.append(f" {_group_thousands(values[index])} {_unit(values[index + 1])}")
            index += 2
    return "".join(parts)


def _val(args: TemplateArgs) -> str:
    """``{{val|1.2|0.1|e=6|u=m}}`` → ``1.2±0.1×10^6 m``."""
    value = _group_thousands(args.pos(1))
    if not value:
        return ""
    uncertainty = args.pos(2)
    if uncertainty:
        value += f"±{uncertainty}"
    exponent = args.get("e")
    if exponent:
        value += f"×10^{exponent}"
    unit = args.get("u", "ul")
    return f"{value} {unit}" if unit else value


def _e_notation(args: TemplateArgs) -> str:
    exponent = args.pos(1)
    return f"×10^{exponent}" if exponent else ""


def _frac(args: TemplateArgs) -> str:
    values = args.positionals()
    if len(values) == 1:
        return f"1/{values[0]}"
    if len(values) == 2:
        return f"{values[0]}/{values[1]}"
    if len(values) >= 3:
        return f"{values[0]} {values[1]}/{values[2]}"
    return ""


_CURRENCY_SYMBOLS = {
    "us$": "US$", "usd": "US$", "us dollar": "US$", "$": "$", "£": "£", "gbp": "£", "€": "€", "eur": "€",
    "euro": "€", "¥": "¥", "jpy": "¥", "yen": "¥", "inr": "₹", "₹": "₹", "indian rupee": "₹", "cad": "CA$",
    "ca$": "CA$", "aud": "A$", "a$": "A$", "nzd": "NZ$", "nz$": "NZ$", "hkd": "HK$", "hk$": "HK$", "sgd": "S$",
    "cny": "CN¥", "rmb": "CN¥", "chf": "CHF ", "sek": "SEK ", "nok": "NOK ", "dkk": "DKK ", "rub": "₽",
    "krw": "₩", "brl": "R$", "mxn": "Mex$", "zar": "R", "try": "₺", "ils": "₪", "php": "₱", "pkr": "Rs ",
    "ngn": "₦", "egp": "E£", "aed": "AED ",
}  # fmt: skip


def _currency_symbol(symbol: str) -> _Renderer:
    def render_currency(args: TemplateArgs) -> str:
        amount = args.pos(1)
        return f"{symbol}{amount}" if amount else symbol.strip()

    return render_currency


def _currency(args: TemplateArgs) -> str:
    """``{{currency|1000|USD}}`` → ``US$1000``."""
    amount, code = args.pos(1), args.pos(2) or args.get("type")
    if not code:
        return amount
    symbol = _CURRENCY_SYMBOLS.get(code.lower())
    return f"{symbol}{amount}" if symbol else f"{amount} {code}"


def _format_price(args: TemplateArgs) -> str:
    value = args.pos(1).replace(",", "")
    try:
        number = float(value)
    except ValueError:
        return args.pos(1)
    for threshold, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if abs(number) >= threshold:
            return f"{number / threshold:.3g} {word}"
    return f"{number:,.0f}" if number == int(number) else f"{number:,.2f}"


def _as_of(args: TemplateArgs) -> str:
    """``{{as of|2010|5|1}}`` → ``As of 1 May 2010`` (``df=US``: ``May 1, 2010``); ``lc=y``; ``since=y``;
    ``alt=`` replaces the whole text; ``pre=``/``post=`` are added around the date."""
    alt = args.get("alt")
    if alt:
        return alt
    us = args.get("df").lower() in ("us", "mdy")
    when = format_date(args.pos(1), args.pos(2), args.pos(3), dmy=not us)
    lead = "since" if args.flag("since") else "as of"
    if not args.flag("lc"):
        lead = lead.capitalize()
    pre = args.get("pre")
    return f"{lead} {pre + ' ' if pre else ''}{when}{args.get('post')}"


def _date_template(args: TemplateArgs) -> str:
    """``{{birth date|1950|1|2}}``, ``{{start date|...}}`` ...: ``January 2, 1950`` (``df=y``: ``2 January 1950``).
    Ages relative to today (``birth date and age``) are not rendered: they would change with the build date."""
    if not _is_year(args.pos(1)):
        return args.pos(1)  # {{start date|May 2010}}-style free text
    return format_date(args.pos(1), args.pos(2), args.pos(3), dmy=_dmy(args))


def _is_year(text: str) -> bool:
    return bool(re.fullmatch(r"-?\d{1,4}", text.strip()))


def _death_date_and_age(args: TemplateArgs) -> str:
    """``{{death date and age|2000|1|1|1920|1|1}}`` → ``January 1, 2000 (aged 80)``."""
    values = args.positionals() + [""] * 6
    died = format_date(values[0], values[1], values[2], dmy=_dmy(args))
    if not _is_year(values[0]):
        return values[0]
    age = _age(values[3], values[4], values[5], values[0], values[1], values[2]) if _is_year(values[3]) else None
    return f"{died} (aged {age})" if age is not None else died


def _year_and_age(args: TemplateArgs) -> str:
    """``{{death year and age|2000|1920}}`` → ``2000 (aged 79–80)``; ``{{birth year and age|1950}}`` → ``1950 (age
    65–66)`` at a current date in 2016, ``1950`` without one."""
    year, other = args.pos(1), args.pos(2)
    if _is_year(year) and _is_year(other) and int(other) < int(year):
        age = int(year) - int(other)
        return f"{year} (aged {age - 1}–{age})"
    born = "birth" in canonical_template_name(str(args.template.name))
    if born and _is_year(year) and not other and args.current_date and args.current_date.year > int(year):
        age = args.current_date.year - int(year)
        return f"{year} (age {age - 1}–{age})"
    return year


def _iso_date(args: TemplateArgs) -> str:
    """``{{date|2010-05-01}}`` → ``1 May 2010``; other text is kept."""
    value = args.pos(1)
    match = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", value)
    if match:
        return format_date(match.group(1), match.group(2), match.group(3), dmy=True)
    return value


def _dts(args: TemplateArgs) -> str:
    """``{{dts|2010|5|1}}`` → ``May 1, 2010`` (``format=dmy``: ``1 May 2010``); one free-text argument is kept."""
    values = args.positionals()
    if len(values) == 1:
        return _iso_date(args)
    dmy = args.get("format").lower() == "dmy" or args.flag("df")
    return format_date(*(values + ["", ""])[:3], dmy=dmy) if values else ""


def _circa(args: TemplateArgs) -> str:
    first, second = args.pos(1), args.pos(2)
    if not first:
        return "c."
    return f"c. {first}–{second}" if second else f"c. {first}"


def _range_prefix(prefix: str) -> _Renderer:
    def render_range(args: TemplateArgs) -> str:
        first, second = args.pos(1), args.pos(2)
        if not first:
            return prefix.strip()
        return f"{prefix}{first}–{second}" if second else f"{prefix}{first}"

    return render_range


def _lang(args: TemplateArgs) -> str:
    """``{{lang|fr|texte}}`` → ``texte`` (the text, not the language name)."""
    return args.pos(2) or args.get("text")


def _lang_prefixed(args: TemplateArgs) -> str:
    """``{{lang-fr|texte}}`` → ``texte``."""
    return args.pos(1) or args.get("text")


def _nihongo(args: TemplateArgs) -> str:
    """``{{nihongo|Tokyo|東京|Tōkyō}}`` → ``Tokyo`` (the English form; the script form when there is none)."""
    return args.pos(1) or args.pos(2)


def _interlanguage_link(args: TemplateArgs) -> str:
    return args.get("lt") or args.pos(1)


def _ship(prefix: str) -> _Renderer:
    def render_ship(args: TemplateArgs) -> str:
        name, designation = args.pos(1), args.pos(2)
        if not name:
            return prefix
        return f"{prefix} {name} ({designation})" if designation else f"{prefix} {name}"

    return render_ship


def _marriage(args: TemplateArgs) -> str:
    name, start, end = args.pos(1), args.pos(2), args.pos(3)
    if not start:
        return name
    detail = f"m. {start}" + (f"; end {end}" if end else "")
    return f"{name} ({detail})" if name else detail


def _url(args: TemplateArgs) -> str:
    label = args.pos(2)
    if label:
        return label
    return re.sub(r"^(?:https?:)?//(?:www\.)?", "", args.pos(1)).rstrip("/")


def _sortname(args: TemplateArgs) -> str:
    return " ".join(value for value in (args.pos(1), args.pos(2)) if value)


def _sort(args: TemplateArgs) -> str:
    return args.pos(2) or args.pos(1)


def _as_is(args: TemplateArgs) -> str:
    return _joined("")(args)


def _hlist(args: TemplateArgs) -> str:
    return ", ".join(value for value in args.positionals() if value)


def _respell(args: TemplateArgs) -> str:
    return "-".join(value for value in args.positionals() if value)


def _angle_brackets(args: TemplateArgs) -> str:
    return f"⟨{args.pos(1)}⟩"


# -- templates that need more than their arguments -----------------------------------------------------------------


def unrendered(args: TemplateArgs) -> str:
    """The hole a template leaves when its arguments cannot be rendered (a date "now", an unknown unit ...)."""
    return hole(canonical_template_name(str(args.template.name)))


def _superscript_template(args: TemplateArgs) -> str:
    """``{{sup|x}}``; in running text :func:`superscript` also looks at the text before it."""
    return args.pos(1)


def _ordinal(args: TemplateArgs) -> str:
    """``{{ordinal|3}}`` → ``3rd``, ``{{ordinal|112}}`` → ``112th``."""
    value = args.pos(1)
    digits = value.replace(",", "")
    if not digits.isdigit():
        return value or unrendered(args)
    number = int(digits)
    suffix = "th" if number % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return value + suffix


def _wikt_lang(args: TemplateArgs) -> str:
    """``{{wikt-lang|fr|mot}}`` → ``mot`` (the displayed form, argument 3, when given); not the language code."""
    return args.pos(3) or args.pos(2)


def _date_args(values: list[str]) -> date | None:
    """A date from (year, month, day) arguments; month and day default to 1 when absent."""
    values = (values + ["", "", ""])[:3]
    if not _is_year(values[0]) or int(values[0]) < 1:
        return None
    month = _month(values[1]) if values[1] else 1
    day = _day(values[2]) if values[2] else 1
    if month is None or day is None:
        return None
    try:
        return date(int(values[0]), month, day)
    except ValueError:
        return None


def _span(start: date, end: date) -> tuple[int, int, int]:
    """Whole years, months and days from ``start`` to ``end`` (``end`` not before ``start``)."""
    years, months, days = end.year - start.year, end.month - start.month, end.day - start.day
    if days < 0:
        months -= 1
        days += (end.replace(day=1) - timedelta(days=1)).day  # the length of the month before end's
    if months < 0:
        years -= 1
        months += 12
    return years, months, days


def _plural(count: int, unit: str) -> str:
    return f"{count} {unit}" if count == 1 else f"{count} {unit}s"


def _age_template(style: str) -> _Renderer:
    """``{{age|1950|1|2|2000|1|1}}`` → ``49``; with one date the age is at ``current_date`` (the revision's date),
    and a hole without it. ``style``: ``years`` (``49``), ``days`` (``18,261``), ``years and days``, ``years and
    months``, ``ymd`` (``8 years, 4 months and 15 days``)."""

    def render_age(args: TemplateArgs) -> str:
        values = [value for value in args.positionals() if value]
        if len(values) not in (3, 6) or not all(_is_year(value) or _month(value) for value in values):
            return unrendered(args)
        start = _date_args(values[:3])
        end = _date_args(values[3:]) if len(values) == 6 else args.current_date
        if start is None or end is None or end < start:
            return unrendered(args)
        years, months, days = _span(start, end)
        if style == "years":
            return str(years)
        if style == "days":
            return _group_thousands(str((end - start).days))
        if style == "years and days":
            anniversary = _date_args([str(start.year + years), str(start.month), str(start.day)]) or start
            return f"{_plural(years, 'year')}, {_plural((end - anniversary).days, 'day')}"
        if style == "years and months":
            return f"{_plural(years, 'year')}, {_plural(months, 'month')}"
        return f"{_plural(years, 'year')}, {_plural(months, 'month')} and {_plural(days, 'day')}"

    return render_age


def _birth_date_and_age(args: TemplateArgs) -> str:
    """``{{birth date and age|1950|1|2}}`` → ``January 2, 1950 (age 66)`` at ``current_date``; the date alone when
    the current date is unknown (the age is an aside in brackets)."""
    born = _date_template(args)
    start = _date_args(args.positionals()[:3])
    if start is None or args.current_date is None or args.current_date < start:
        return born
    return f"{born} (age {_span(start, args.current_date)[0]})"


def _birth_date_and_age2(args: TemplateArgs) -> str:
    """``{{birth date and age2|2010|1|1|1950|1|2}}``: the age on the first date of someone born on the second →
    ``January 2, 1950 (age 59)``."""
    values = args.positionals() + [""] * 6
    when, start = _date_args(values[:3]), _date_args(values[3:6])
    if start is None:
        return unrendered(args)
    born = format_date(values[3], values[4], values[5], dmy=_dmy(args))
    return f"{born} (age {_span(start, when)[0]})" if when is not None and when >= start else born


def _current(part: str) -> _Renderer:
    """``{{CURRENTYEAR}}`` ... at ``current_date`` (the revision's date); a hole without it."""

    def render_current(args: TemplateArgs) -> str:
        when = args.current_date
        if when is None:
            return unrendered(args)
        return {"year": str(when.year), "month": f"{when.month:02d}", "monthname": _MONTHS[when.month - 1],
                "day": str(when.day)}[part]

    return render_current


_COMPASS = {"n": 1, "s": -1, "e": 1, "w": -1}


def _coord(args: TemplateArgs) -> str:
    """``{{coord|13|19|N|169|9|W}}`` → ``13°19′N 169°09′W``; ``{{coord|32.7|-86.7}}`` → ``32.7°N 86.7°W``;
    nothing when shown only in the page title (``display=title``)."""
    display = args.get("display").lower().replace(" ", "")
    if display and "inline" not in display and display not in ("it", "ti"):
        return ""
    values = [value for value in args.positionals() if value and ":" not in value]
    parts: list[str] = []
    numbers: list[str] = []
    for value in values:
        if value.lower() in _COMPASS:
            if not numbers or len(numbers) > 3 or not all(_is_number(number) for number in numbers):
                return unrendered(args)
            degrees = f"{numbers[0]}°" + "".join(f"{float(number):02.0f}{mark}" if number.isdigit() else
                                                 f"{number}{mark}" for number, mark in zip(numbers[1:], "′″"))
            parts.append(degrees + value.upper())
            numbers = []
        else:
            numbers.append(value)
    if not parts and len(numbers) == 2 and all(_is_number(number) for number in numbers):
        (latitude, longitude) = (float(number.replace("−", "-")) for number in numbers)
        parts = [f"{numbers[0].lstrip('-−')}°{'N' if latitude >= 0 else 'S'}",
                 f"{numbers[1].lstrip('-−')}°{'E' if longitude >= 0 else 'W'}"]
    elif numbers or len(parts) != 2:
        return unrendered(args)
    return " ".join(parts)


_NAMED_GAUGES = {"sg": 1435, "ussg": 1435, "standard": 1435, "metre": 1000, "meter": 1000, "cape": 1067,
                 "russian": 1520, "irish": 1600, "iberian": 1668, "indian": 1676, "broad": 1676}
_GAUGE_IMPERIAL = re.compile(r"(?:(\d+)\s*ft)?\s*(?:(\d+(?:\.\d+)?)\s*in)?\Z")


def _rail_gauge(args: TemplateArgs) -> str:
    """``{{railgauge|1000mm}}`` → ``1,000 mm``, ``{{railgauge|3ft6in}}`` → ``3 ft 6 in``, ``{{railgauge|sg}}`` →
    ``1,435 mm`` (the gauge as given; the conversion is not computed)."""
    value = args.pos(1).lower().replace(" ", "")
    millimetres = _NAMED_GAUGES.get(value)
    if millimetres is None:
        match = re.fullmatch(r"(\d+(?:\.\d+)?)(?:mm)?", value)
        if match and (value.endswith("mm") or float(match.group(1)) >= 100):
            return f"{_group_thousands(match.group(1))} mm"
        imperial = _GAUGE_IMPERIAL.match(value)
        if value and imperial and any(imperial.groups()):
            feet, inches = imperial.groups()
            return " ".join(part for part in (feet and f"{feet} ft", inches and f"{inches} in") if part)
        return unrendered(args)
    return f"{millimetres:,} mm"


def _us_patent(args: TemplateArgs) -> str:
    """``{{US patent|1781541}}`` → ``U.S. patent 1,781,541``."""
    number = args.pos(1)
    return f"U.S. patent {_group_thousands(number) if number.isdigit() else number}" if number else unrendered(args)


_MUSIC_SYMBOLS = {"flat": "♭", "b": "♭", "sharp": "♯", "#": "♯", "natural": "♮", "doubleflat": "𝄫", "bb": "𝄫",
                  "doublesharp": "𝄪", "x": "𝄪"}


def _music(args: TemplateArgs) -> str:
    """``{{music|flat}}`` → ``♭`` (accidentals; other music symbols are holes)."""
    return _MUSIC_SYMBOLS.get(args.pos(1).lower()) or unrendered(args)


def _bible_reference(args: TemplateArgs) -> str:
    """``{{bibleref|Mark|3:25|9}}`` → ``Mark 3:25`` (book and verses; the version is a link target)."""
    return " ".join(value for value in (args.pos(1), args.pos(2)) if value) or unrendered(args)


def _power_of_ten(args: TemplateArgs) -> str:
    """``{{10^|18}}`` → ``10^18``."""
    return f"10^{args.pos(1)}" if args.pos(1) else "10"


def _population_density(args: TemplateArgs) -> str:
    """``{{pop density|3645257|640081.87|km2|prec=1}}`` → ``5.7/km²`` (population / area, in the first unit)."""
    population, area = args.pos(1).replace(",", ""), args.pos(2).replace(",", "")
    precision = args.get("prec")
    try:
        density = float(population) / float(area)
        digits = int(precision) if precision else 1
    except (ValueError, ZeroDivisionError):
        return unrendered(args)
    return f"{density:,.{max(digits, 0)}f}{_unit('PD/' + args.pos(3)) if args.pos(3) else ''}"


def _ship_name(args: TemplateArgs) -> str:
    """``{{ship|USS|Enterprise|CV-6}}`` → ``USS Enterprise (CV-6)``."""
    prefix, name, designation = args.pos(1), args.pos(2), args.pos(3)
    text = " ".join(value for value in (prefix, name) if value)
    return f"{text} ({designation})" if designation else text


def _ship_class(args: TemplateArgs) -> str:
    """``{{sclass|Fletcher|destroyer}}`` → ``Fletcher-class destroyer``."""
    name, kind = args.pos(1), args.pos(2)
    return f"{name}-class {kind}".strip() if name else unrendered(args)


def _literally(args: TemplateArgs) -> str:
    """``{{lit|small river}}`` → ``lit. 'small river'`` (several meanings joined with "or")."""
    meanings = [value for value in args.positionals() if value]
    return "lit. " + " or ".join(f"'{meaning}'" for meaning in meanings) if meanings else "lit."


def _height(args: TemplateArgs) -> str:
    """``{{height|ft=6|in=2}}`` → ``6 ft 2 in``, ``{{height|m=1.83}}`` → ``1.83 m``."""
    parts = [f"{args.get(unit)} {unit}" for unit in ("m", "cm", "ft", "in") if args.get(unit)]
    return " ".join(parts) or unrendered(args)


def _chinese(args: TemplateArgs) -> str:
    """``{{zh|c=中国|p=Zhōngguó}}`` → ``中国; Zhōngguó`` (the forms, without their labels)."""
    forms = [args.get(key) for key in ("t", "s", "c", "p", "w", "j", "cy", "y", "poj", "tl")]
    return "; ".join(form for form in forms if form) or unrendered(args)


def _isbn(args: TemplateArgs) -> str:
    values = [value for value in args.positionals() if value]
    return "ISBN " + ", ".join(values) if values else "ISBN"

def _parser_function(template: Template) -> _Renderer | None:
    """``{{formatnum:1234}}``, ``{{lc:...}}``, ``{{uc:...}}``, ``{{lcfirst:...}}``, ``{{ucfirst:...}}``, and the
    ParserFunctions that need no page data: ``{{#expr:}}``, ``{{#if:}}``, ``{{#ifeq:}}``, ``{{#switch:}}``."""
    function = str(template.name).split(":", 1)[0].strip().lower()
    if function in _CONDITIONAL_FUNCTIONS:
        return _CONDITIONAL_FUNCTIONS[function]
    if function not in _PARSER_FUNCTIONS:
        return None
    transform = _PARSER_FUNCTIONS[function]

    def render_function(args: TemplateArgs) -> str:
        _, _, argument = render_raw(template.name, args.current_date).partition(":")
        return transform(argument.strip())

    return render_function


def _function_argument(args: TemplateArgs) -> str:
    """The text after the colon of a parser function (``{{#if: x | ...}}`` → ``x``), rendered."""
    return _strip_arg(render_raw(args.template.name, args.current_date).partition(":")[2])


def _branch(args: TemplateArgs, index: int) -> str:
    """A parser function's parameter ``index`` as its branch (``a=b`` is the text ``a=b``, as in ``{{#if:}}``), ``""``
    when there is none; only the branch shown is rendered."""
    params = args.template.params
    if index >= len(params):
        return ""
    param = params[index]
    return _strip_arg((render_raw(param.name, args.current_date) + "=" if param.showkey else "")
                      + render_raw(param.value, args.current_date))


def _holes_of(text: str) -> str:
    return "".join(hole(name) for name in _HOLE.findall(text))


def _expr(args: TemplateArgs) -> str:
    """``{{#expr: 3769495/10000 round -1}}`` → ``380`` (:mod:`~wikiref_dataset.wiki.expressions`); an expression
    holding an unrendered template (a population from a data template) leaves that template's hole."""
    expression = _function_argument(args)
    if HOLE_START in expression:
        return _holes_of(expression)
    try:
        return format_expression_result(evaluate_expression(html.unescape(expression).replace("−", "-")))
    except ExpressionError:  # MediaWiki shows an error message: named like any unrendered parser function
        return hole("#expr:")


def _if(args: TemplateArgs) -> str:
    """``{{#if: test | then | else}}``: ``then`` when the test shows anything."""
    return _branch(args, 0 if _function_argument(args) else 1)


def _numeric(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _ifeq(args: TemplateArgs) -> str:
    """``{{#ifeq: a | b | then | else}}``: ``a`` and ``b`` compared as numbers when both are, else as text."""
    left, right = _function_argument(args), _branch(args, 0)
    left_number, right_number = _numeric(left), _numeric(right)
    same = left == right if left_number is None or right_number is None else left_number == right_number
    return _branch(args, 1 if same else 2)


def _switch(args: TemplateArgs) -> str:
    """``{{#switch: x | a = 1 | b | c = 2 | #default = 3}}``: the value of the case equal to ``x`` (``b`` falls
    through to ``c``), else ``#default`` or a last case without ``=``."""
    value, default, falling = _function_argument(args), "", False
    params = args.template.params
    for index, param in enumerate(params):
        if param.showkey:
            keys = _strip_arg(render_raw(param.name, args.current_date))
            if falling or keys == value:
                return _strip_arg(render_raw(param.value, args.current_date))
            if keys == "#default":
                default = _strip_arg(render_raw(param.value, args.current_date))
        else:
            case = _strip_arg(render_raw(param.value, args.current_date))
            if index == len(params) - 1:
                default = case
            elif case == value:
                falling = True
    return default


_CONDITIONAL_FUNCTIONS: dict[str, _Renderer] = {"#expr": _expr, "#if": _if, "#ifeq": _ifeq, "#switch": _switch}

_PARSER_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "formatnum": _group_thousands,
    "lc": str.lower,
    "uc": str.upper,
    "lcfirst": lambda text: text[:1].lower() + text[1:],
    "ucfirst": lambda text: text[:1].upper() + text[1:],
}


def _table(entries: Iterable[tuple[_Renderer, Iterable[str]]]) -> dict[str, _Renderer]:
    table: dict[str, _Renderer] = {}
    for renderer, names in entries:
        for name in names:
            if name in table:
                raise ValueError(f"template {name!r} is listed twice in TEMPLATE_RENDERERS")
            table[name] = renderer
    return table


def _first_or_text(args: TemplateArgs) -> str:
    return args.pos(1) or args.get("text")


# Currency templates of the form {{US$|amount}}: template name → symbol.
_CURRENCY_TEMPLATES = {"us$": "US$", "usd": "US$", "£": "£", "gbp": "£", "€": "€", "eur": "€", "¥": "¥",
                       "jpy": "¥", "inr": "₹", "₹": "₹", "cad": "CA$", "ca$": "CA$", "aud": "A$", "a$": "A$",
                       "nzd": "NZ$", "hkd": "HK$", "sgd": "S$", "cny": "CN¥", "rmb": "CN¥", "chf": "CHF "}

TEMPLATE_RENDERERS: dict[str, _Renderer] = _table([
    # value + unit: "5 km", "5–10 mi", "5 ft 6 in" (the converted value is not computed)
    (_convert, ("convert", "cvt", "convinfobox")),
    (_val, ("val",)),
    (_e_notation, ("e",)),
    (_frac, ("frac", "fraction", "sfrac", "fracs")),
    # the text argument of a formatting or language template
    (_first_or_text, (
        "nowrap", "nobr", "nobreak", "no wrap", "small", "smaller", "big", "larger", "large", "huge", "em",
        "strong", "noitalic", "nobold", "highlight", "serif", "sans-serif", "mono", "code", "kbd", "samp", "var",
        "varserif", "mvar", "math", "tmath", "sub", "sc", "smallcaps", "small caps", "small-caps", "vanchor",
        "visible anchor", "tooltip", "abbr", "abbrlink", "abbr link", "nastaliq", "ipa", "ipa-all", "ipa2",
        "ipa3", "flag", "flagcountry", "flagu", "flag country", "nts", "keypress", "bold", "italic", "bolditalic",
        "underline", "font", "mxt", "tq", "xt", "start-date", "end-date", "chem2", "center", "centre", "lower",
        "upper", "not a typo", "notatypo", "as written", "proper name", "typo", "polytonic", "unicode", "script/arabic",
        "oldstyledate", "old style date", "span", "nq", "noquote",
    )),
    (_superscript_template, ("sup",)),
    (_power_of_ten, ("10^",)),
    (_ordinal, ("ordinal",)),
    (_wikt_lang, ("wikt-lang",)),
    (_literally, ("lit", "literally", "literal translation")),
    (_chinese, ("zh",)),
    (_second, ("script", "native name", "native phrase", "rtl-lang", "color", "colour", "font color", "audio")),
    (_lang, ("lang", "lang2", "language", "langx")),
    (_last, ("transl", "transliteration", "translit", "resize")),
    (_nihongo, ("nihongo", "nihongo2", "nihongo3", "nihongo foot")),
    (_interlanguage_link, ("ill", "interlanguage link", "illm", "interlanguage link multi", "ill2")),
    (_as_is, ("sic", "chem")),
    (_joined(" "), ("linktext", "gaps")),
    (_respell, ("respell",)),
    (_hlist, ("hlist", "flatlist", "plainlist", "ubl", "unbulleted list", "ublist", "bulleted list", "blist",
              "ordered list", "collapsible list", "cslist", "comma separated entries", "vunblist")),
    (_sortname, ("sortname",)),
    (_sort, ("sort",)),
    (_url, ("url",)),
    (_isbn, ("isbn",)),
    (_us_patent, ("us patent",)),
    (_bible_reference, ("bibleref", "bibleref2", "bibleverse", "bible verse")),
    (_coord, ("coord",)),
    (_rail_gauge, ("railgauge", "rail gauge", "gauge")),
    (_height, ("height",)),
    (_population_density, ("pop density", "popdensity")),
    (_music, ("music",)),
    (_angle_brackets, ("angbr", "angle bracket", "angle brackets")),
    # punctuation and spacing
    (_constant("'"), ("'", "apostrophe")),
    (_constant("'s"), ("'s",)),
    (_constant("a.k.a."), ("aka",)),
    (_constant("/"), ("slash",)),
    (_constant("-"), ("nbhyph", "non-breaking hyphen")),
    (_constant("'\""), ("' \"", "'\"")),
    (_constant("\"'"), ("\" '", "\"'")),
    (_constant("\""), ("\"",)),
    (_constant(" – "), ("snd", "spnd", "sndash", "spaced ndash", "spaced en dash", "snds")),
    (_constant("–"), ("ndash", "en dash", "endash", "–", "dash")),
    (_constant("—"), ("mdash", "em dash", "emdash", "—")),
    (_constant(" —"), ("mdashb", "spaced mdash", "spmdash")),
    (_constant(" "), ("thinsp", "thin space", "hair space", "hairsp", "spaces", "space", "sp", "break", "br")),
    (_nbsp, ("nbsp", "nbs")),
    (_constant(" · "), ("·", "dot", "middot")),
    (_constant(" • "), ("bull", "bullet", "•")),
    (_constant(","), (",",)),
    (_constant("="), ("=", "equals")),
    (_constant("|"), ("!", "pipe")),
    (_constant("ʻ"), ("okina", "ʻ")),
    (_constant("′"), ("prime",)),
    (_constant("±"), ("plusminus", "+-", "pm")),
    (_constant("×"), ("times",)),
    (_constant("−"), ("minus", "−")),
    (_constant(""), ("shy", "zwsp", "wbr", "zwj", "zwnj")),
    # money
    (_currency, ("currency",)),
    (_format_price, ("format price", "formatprice")),
    *((_currency_symbol(symbol), (name,)) for name, symbol in _CURRENCY_TEMPLATES.items()),
    # dates
    (_as_of, ("as of", "asof")),
    (_date_template, ("start date", "end date", "birth date", "death date", "start date and age",
                      "end date and age", "dob", "birth-date", "death-date", "film date", "start-date and age",
                      "birth date text")),
    (_birth_date_and_age, ("birth date and age", "bda", "birthdate and age")),
    (_birth_date_and_age2, ("birth date and age2",)),
    (_age_template("years"), ("age", "age in years", "age nts")),
    (_age_template("days"), ("age in days",)),
    (_age_template("years and days"), ("age in years and days", "ayd")),
    (_age_template("years and months"), ("age in years and months",)),
    (_age_template("ymd"), ("age in years, months and days", "age in years, months, and days", "aymd")),
    (_current("year"), ("currentyear", "localyear")),
    (_current("month"), ("currentmonth", "localmonth")),
    (_current("monthname"), ("currentmonthname", "localmonthname")),
    (_current("day"), ("currentday", "localday")),
    (_death_date_and_age, ("death date and age", "dda", "death-date and age", "deathdateandage")),
    (_year_and_age, ("death year and age", "birth year and age", "birth-year and age", "death-year and age")),
    (_iso_date, ("date",)),
    (_dts, ("dts", "dtsx", "date table sorting")),
    (_circa, ("circa", "c.", "ca.", "ca")),
    (_range_prefix("fl. "), ("floruit", "fl.")),
    (_range_prefix("r. "), ("reign", "r.")),
    (_prefixed("", " BC"), ("bc",)),
    (_prefixed("", " BCE"), ("bce",)),
    (_prefixed("AD "), ("ad",)),
    (_prefixed("", " CE"), ("ce",)),
    (_marriage, ("marriage", "married")),
    # ships
    (_ship("USS"), ("uss",)),
    (_ship("HMS"), ("hms",)),
    (_ship("HMAS"), ("hmas",)),
    (_ship("HMCS"), ("hmcs",)),
    (_ship("SS"), ("ss",)),
    (_ship("RMS"), ("rms",)),
    (_ship_name, ("ship",)),
    (_ship_class, ("sclass", "sclass-", "sclass2")),
])  # fmt: skip
"""Rendered templates, by canonical name (:func:`canonical_template_name`). Any template not found here (nor by
the ``lang-``/``IPA-`` prefixes, nor a parser function) renders as nothing."""

# Templates recognised by a prefix of their canonical name: "lang-fr", "ipa-de".
_PREFIX_RENDERERS: tuple[tuple[str, _Renderer], ...] = (
    ("lang-", _lang_prefixed),
    ("ipa-", _first),
)

SILENT_TEMPLATES = frozenset({
    # inline cleanup and maintenance tags: a reader sees a bracketed note, not words of the sentence
    "citation needed", "cn", "fact", "cite needed", "citeneeded", "citation required", "cn-needed", "refneeded",
    "clarify", "clarification needed", "when", "who", "whom", "by whom", "which", "which?", "where", "where?",
    "why", "why?", "how", "how?", "what", "dubious", "dubious discuss", "disputed inline", "according to whom",
    "vague", "weasel inline", "weasel word", "peacock term", "peacock inline", "verify source", "verify credibility",
    "failed verification", "better source", "better source needed",
    "unreliable source?", "unreliable source", "unreliable medical source", "self-published inline",
    "self-published source", "primary source inline", "third-party inline", "non-primary source needed",
    "full", "full citation", "page needed", "pages needed", "year needed", "date missing", "page missing",
    "update inline", "update after", "out of date", "outdated", "original research inline", "or", "or inline",
    "syn", "synthesis inline", "lopsided", "non sequitur", "example needed", "definition needed", "specify",
    "elucidate", "expand acronym", "explain", "further explanation needed", "qualify evidence", "nonspecific",
    "importance inline", "irrelevant citation", "inappropriate person", "sic?", "says who", "speculation inline",
    "time frame", "dead link", "deadlink", "cbignore", "bots", "citation not found", "not in citation given",
    "request quotation", "rquote", "quote needed", "attribution needed", "medical citation needed",
    "contradict inline", "contradictory inline", "fv", "pov statement", "npov inline", "neutrality inline",
    "ambiguous", "huh", "awkward", "incomprehensible inline", "typo help inline", "spelling?",
    "pronunciation needed", "ipa needed", "translation needed", "transliteration needed", "circular reference",
    "dated info", "when?", "refimprove", "more citations needed", "unreferenced", "citation style",
    "refimprove section", "more citations needed section", "unreferenced section", "update", "expand section",
    "inflation-fn", "inflation/fn", "inflation-year/fn",
    # footnotes, note marks and the page numbers that follow a citation (the statement walker handles refs)
    "efn", "efn-ua", "efn-lr", "efn-la", "efn-lg", "efn-ur", "refn", "notetag", "nb", "note label", "ref label",
    "cref", "cnote", "cnote2", "ref", "note", "fn", "fnb", "r", "rp", "sfn", "sfnp", "sfnm", "sfnmp", "sfnref",
    "notelist", "reflist", "refbegin", "refend", "references", "notelist-ua", "notelist-lr", "page number",
    # pronunciation in IPA-for-English, audio, icons and images: asides that leave no word out of the sentence
    "ipac-en", "ipac-ga", "ipac-es", "ipac-fr", "ipac-de", "ipac-it", "ipac-pl", "ipac-ar", "ipac-cmn", "ipac-yue",
    "ipac-ja", "ipac-ru", "ipac-hu", "ipac-nl", "ipac-pt", "ipac-sv", "ipac-nb", "pronunciation", "listen",
    "flagicon", "flag icon", "flagdeco", "flagicon image", "country flag icon", "in lang", "en icon", "fr icon",
    "de icon", "es icon", "ru icon", "it icon", "ja icon", "zh icon", "ar icon", "pt icon", "languageicon",
    "increase", "decrease", "steady", "up", "down",
    # layout, navigation and page-level templates
    "anchor", "anchors", "visible anchor end", "clear", "clr", "-", "clear left", "clear right",
    "nowrap begin", "nowrap end", "nobr begin", "nobr end", "endflatlist", "endplainlist", "end",
    "main", "main article", "see also", "further", "further information", "details", "for", "about", "redirect",
    "distinguish", "other uses", "hatnote", "selfref", "self reference", "portal", "portal bar", "commons",
    "commons category", "wiktionary", "wikiquote", "wikisource", "sister project links", "authority control",
    "taxonbar", "coord missing", "short description", "italic title", "lowercase title", "toc", "toc limit",
    "tocright", "toc right", "compact toc", "multiple image", "double image", "wide image", "panorama", "image",
    "col-begin", "col-end", "col-break", "div col", "div col end", "columns-list", "quote box", "pull quote",
    "rquote box", "sidebar", "stack", "stack begin", "stack end", "sticky header",
    "defaultsort", "displaytitle", "good article", "featured article", "featured list", "engvarb",
    "spoken wikipedia", "pp", "pp-semi", "pp-move", "pp-protected", "pp-vandalism", "pp-semi-indef",
    "pp-move-indef", "pp-pc1", "pp-sock", "pp-dispute", "pp-template",
})  # fmt: skip
"""Templates that render no words of the running text and are dropped silently (no hole): inline cleanup tags,
footnote marks, pronunciation asides, icons, and layout or navigation templates. Besides these, names ending with
``" needed"`` or ``" inline"`` and names starting with ``infobox``, ``navbox``, ``pp-``, ``use `` (``{{use dmy
dates}}``), ``ipac-`` or ``flagicon`` are silent. Any other template that :data:`TEMPLATE_RENDERERS` does not render
leaves a hole (:func:`find_holes`)."""

_SILENT_SUFFIXES = (" needed", " inline")
_SILENT_PREFIXES = ("infobox", "navbox", "pp-", "use ", "ipac-", "flagicon", "campaignbox", "s-", "taxobox",
                    "automatic taxobox", "speciesbox", "good article", "featured", "wikiproject")


def is_dropped_link(title: str) -> bool:
    """Whether a wikilink's target is a file, image or category (``File:``, and the language's own names such as
    ``Datei:`` within :func:`language_templates`): such links show no text."""
    if ":" not in title or title.lstrip().startswith(":"):
        return False
    return _dropped_namespace(_SPACES.sub(" ", title.split(":", 1)[0]).strip().lower())


def _dropped_namespace(prefix: str) -> bool:
    return prefix in _DROPPED_LINK_NAMESPACES or prefix in LANGUAGE_TEMPLATES.get().dropped_namespaces


def is_silent_template(name: str) -> bool:
    """Whether the template of canonical ``name`` renders no words of the running text (see
    :data:`SILENT_TEMPLATES`, and the language's silent templates within :func:`language_templates`); parser functions count by their function (``defaultsort:X`` → ``defaultsort``)."""
    if ":" in name:
        name = name.split(":", 1)[0].strip()
    language = LANGUAGE_TEMPLATES.get()
    if not language.english:
        return name in language.silent or name in SILENT_TEMPLATES
    return name in SILENT_TEMPLATES or name.endswith(_SILENT_SUFFIXES) or name.startswith(_SILENT_PREFIXES)
