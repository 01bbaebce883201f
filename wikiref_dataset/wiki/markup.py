"""Page-level wikitext preparation before mwparserfromhell: comments, extension tags, ``<ref>`` tags, sections.

MediaWiki itself takes extension tags (``<ref>``, ``<references>``, ``<math>``, ``<nowiki>``, ``<gallery>`` ...)
out of the text before it parses the rest, leaving a "strip marker" in their place; this module does the same:

* HTML comments are removed (a commented-out ``<ref>`` is not a citation);
* every ``<ref>...</ref>`` / ``<ref ... />`` becomes a :class:`RefTag` and a placeholder
  ``"\\ue000<index>\\ue001"`` (private-use characters, which wikitext never contains) in the text, so that the
  parser sees where each ref stood without building nodes for the citation templates inside it;
* named definitions (``<ref name="x">...</ref>``) are collected from the *whole* page, wherever they stand:
  in the prose, inside a template (``{{reflist|refs=...}}``, an infobox) or inside ``<references>...</references>``
  (list-defined refs). The first definition of a name wins, as in MediaWiki;
* non-prose extension tags (math, chem, gallery, timeline, pre, syntaxhighlight, score, poem ...) are removed with
  their content; ``<nowiki>`` keeps its content as literal text (escaped as entities so it is not parsed). The tags
  whose content is words or symbols of a sentence (``<math>``, ``<chem>``, ``<ce>``, ``<hiero>``, ``<score>``) leave
  a hole marker (:func:`~wikiref_dataset.wiki.holes.hole`, named ``math tag`` ...) so that a statement missing a
  formula in mid-sentence can be told from one where a displayed formula stood on a line of its own.

The result is split into sections at heading lines (``== Title ==``). Doing all this with regular expressions is
what MediaWiki does, and it is also what makes the extractor fast: parsing cost is proportional to the number of
nodes, and the citation templates inside refs are most of a page's nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .holes import hole

__all__ = ["PLACEHOLDER", "PreparedPage", "RefTag", "Section", "prepare", "parse_ref_attributes", "split_sections"]

PLACEHOLDER = re.compile("\ue000([0-9]+)\ue001")
"""A ref placeholder in prepared text; group 1 is the index into :attr:`PreparedPage.refs`."""

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# Extension tags that MediaWiki strips before parsing. "ref" is handled specially; "references" keeps its refs'
# definitions; "nowiki" keeps its text literally; everything else is dropped with its content.
_EXTENSION_TAGS = ("ref", "references", "nowiki", "math", "chem", "ce", "score", "gallery", "imagemap", "timeline",
                   "graph", "templatedata", "syntaxhighlight", "source", "pre", "hiero", "mapframe", "maplink",
                   "categorytree", "inputbox", "poem", "templatestyles", "section", "charinsert", "indicator")
_EXTENSION_OPEN = re.compile(r"<(" + "|".join(_EXTENSION_TAGS) + r")(\s[^<>]*?)?\s*(/?)>", re.IGNORECASE)
_CLOSE = {tag: re.compile(rf"</{tag}\s*>", re.IGNORECASE) for tag in _EXTENSION_TAGS}
_REF_OPEN = re.compile(r"<ref[\s/>]", re.IGNORECASE)
_ATTRIBUTE = re.compile(r"""([a-zA-Z][\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_HEADING = re.compile(r"^(={1,6})(.+?)(={1,6})[ \t]*$", re.MULTILINE)
_TEXT_TAGS = frozenset({"math", "chem", "ce", "hiero", "score"})  # their content is part of a sentence
_NOWIKI_ESCAPES = str.maketrans({char: f"&#{ord(char)};" for char in "[]{}|<>'=*#:;~&_-"})


@dataclass
class RefTag:
    """One ``<ref>`` tag of a page.

    Args:
        index (`int`): position among the page's refs (the number in its placeholder).
        name (`str`, *optional*): the ``name`` attribute (quotes removed, stripped).
        group (`str`, *optional*): the ``group`` attribute; grouped refs are explanatory notes, not citations.
        content (`str`, *optional*): the wikitext between the tags; ``None`` for ``<ref name="x" />``.
    """

    index: int
    name: str | None = None
    group: str | None = None
    content: str | None = None

    @property
    def is_reuse(self) -> bool:
        """Whether the tag reuses a definition made elsewhere (named, without content of its own)."""
        return self.name is not None and not (self.content or "").strip()


@dataclass
class Section:
    """A section of a prepared page: its heading (``level`` 0 and an empty title for the lead) and body text."""

    level: int
    title: str
    body: str


@dataclass
class PreparedPage:
    """A page's text with comments and extension tags taken out, its refs, and the named-ref definitions."""

    text: str
    refs: list[RefTag] = field(default_factory=list)
    definitions: dict[tuple[str, str], str] = field(default_factory=dict)
    unclosed_refs: int = 0

    def definition(self, group: str, name: str) -> str | None:
        """The content defined for a named ref; a name that differs only by ``_``/space runs matches too (editors
        write ``name=Smith_2007`` for ``name="Smith 2007"``)."""
        content = self.definitions.get((group, name))
        if content is None:
            loose = _loose_name(name)
            for (defined_group, defined_name), defined in self.definitions.items():
                if defined_group == group and _loose_name(defined_name) == loose:
                    return defined
        return content


def _loose_name(name: str) -> str:
    return " ".join(name.replace("_", " ").split())


def parse_ref_attributes(attributes: str | None) -> tuple[str | None, str | None]:
    """``(name, group)`` from a ref tag's attribute text; quoted and unquoted values; empty values → ``None``."""
    name = group = None
    if attributes:
        for match in _ATTRIBUTE.finditer(attributes):
            key = match.group(1).lower()
            value = next(v for v in match.group(2, 3, 4) if v is not None).strip()
            if key == "name" and value:
                name = value.rstrip("/").strip() or None
            elif key == "group" and value:
                group = value
    return name, group


def prepare(text: str) -> PreparedPage:
    """Remove comments and extension tags from a page's wikitext; put ref placeholders in; collect definitions."""
    page = PreparedPage(text="")
    if "<!--" in text:
        text = _COMMENT.sub("", text)
    page.text = _strip_extensions(text, page, keep_refs=True)
    return page


def _strip_extensions(text: str, page: PreparedPage, keep_refs: bool) -> str:
    """The text with extension tags replaced; refs are registered in ``page`` (placeholders only if ``keep_refs``)."""
    if "<" not in text:
        return text
    out: list[str] = []
    position = 0
    search = _EXTENSION_OPEN.search
    while True:
        match = search(text, position)
        if match is None:
            break
        tag = match.group(1).lower()
        self_closing = bool(match.group(3))
        out.append(text[position : match.start()])
        if self_closing:
            content = None
            end = match.end()
        else:
            close = _CLOSE[tag].search(text, match.end())
            if close is None or (tag == "ref" and _REF_OPEN.search(text, match.end(), close.start())):
                # no closing tag before the next ref: MediaWiki shows an error; we drop the opening tag
                if tag == "ref":
                    page.unclosed_refs += 1
                position = match.end()
                continue
            content = text[match.end() : close.start()]
            end = close.end()
        if tag == "ref":
            out.append(_register_ref(page, match.group(2), content, keep_refs))
        elif tag == "references":
            if content:  # list-defined refs: only their definitions matter
                _strip_extensions(content, page, keep_refs=False)
        elif tag == "nowiki":
            if content:
                out.append(content.translate(_NOWIKI_ESCAPES))
        elif tag in _TEXT_TAGS and keep_refs:
            out.append(hole(f"{tag} tag"))
        position = end
    out.append(text[position:])
    return "".join(out)


def _register_ref(page: PreparedPage, attributes: str | None, content: str | None, keep: bool) -> str:
    name, group = parse_ref_attributes(attributes)
    if content is not None and "<" in content:
        # refs may hold comments' leftovers or extension tags (nowiki, math) of their own
        content = _strip_extensions(content, PreparedPage(text=""), keep_refs=False)
    if name is not None and content is not None and content.strip():
        page.definitions.setdefault((group or "", name), content)
    if not keep:
        return ""
    ref = RefTag(index=len(page.refs), name=name, group=group, content=content)
    page.refs.append(ref)
    return f"\ue000{ref.index}\ue001"


def split_sections(text: str) -> list[Section]:
    """Sections at heading lines; the lead (text before the first heading) is level 0 with an empty title.
    A heading's level is that of its shorter side (``== x ===`` is level 2 titled ``x =``, as in MediaWiki)."""
    sections: list[Section] = []
    level, title, start = 0, "", 0
    for match in _HEADING.finditer(text):
        sections.append(Section(level, title, text[start : match.start()]))
        left, inner, right = match.groups()
        level = min(len(left), len(right))
        title = ("=" * (len(left) - level) + inner + "=" * (len(right) - level)).strip()
        start = match.end()
    sections.append(Section(level, title, text[start:]))
    return sections
