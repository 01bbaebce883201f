"""A template call as its renderer reads it: the template's canonical name, its arguments as plain text
(:class:`TemplateArgs`), and the hole it leaves when its arguments cannot be rendered (:func:`unrendered`).

A renderer is a function of :class:`TemplateArgs` to text (:data:`Renderer`). The arguments are wikitext, rendered on
demand by the wikitext renderer that met the template: it gives :meth:`TemplateArgs.render`
(:class:`wikiref_dataset.wiki.plaintext.TemplateArgs`), so that this package needs nothing of the renderer that
reads it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

from mwparserfromhell.nodes import Template
from mwparserfromhell.wikicode import Wikicode

from ..holes import hole

__all__ = ["Renderer", "TemplateArgs", "canonical_template_name", "strip_argument", "unrendered"]

_SPACES = re.compile(r"[\s_]+")
_WHITESPACE = re.compile(r"\s+")


def canonical_template_name(name: str) -> str:
    """A template's name as the lookup tables spell it: lowercased, ``_`` and runs of spaces → one space, without a
    ``Template:`` prefix (MediaWiki only folds the first letter; many case variants exist as redirects anyway)."""
    name = _SPACES.sub(" ", name).strip().lower()
    if name.startswith("template:"):
        name = name[9:].lstrip()
    return name


def strip_argument(text: str) -> str:
    """Rendered argument text as renderers read it: each whitespace run one space, stripped."""
    return _WHITESPACE.sub(" ", text).strip()


class TemplateArgs:
    """A template's arguments as plain text, rendered on demand: positional ``1..n`` (explicit ``|2=x`` counts)
    and named (keys lowercased). ``current_date`` is the date templates relative to today are rendered at (``None``:
    unknown, they are holes). The wikitext renderer says how wikitext becomes text (:meth:`render`)."""

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

    def render(self, code: Wikicode) -> str:
        """A piece of the template's wikitext (an argument, the name of a parser function) as plain text at
        :attr:`current_date`, not cleaned, unrendered templates as holes: given by the wikitext renderer
        (:class:`wikiref_dataset.wiki.plaintext.TemplateArgs`)."""
        raise NotImplementedError("template arguments are rendered by wikiref_dataset.wiki.plaintext.TemplateArgs")

    def pos(self, index: int, default: str = "") -> str:
        """Positional argument ``index`` (1-based), rendered and stripped."""
        value = self._positional.get(index)
        if value is None:
            return default
        return strip_argument(self.render(value))

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
                text = strip_argument(self.render(value))
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


Renderer = Callable[[TemplateArgs], str]
"""A template renderer: the text a template call shows."""


def unrendered(args: TemplateArgs) -> str:
    """The hole a template leaves when its arguments cannot be rendered (a date "now", an unknown unit ...)."""
    return hole(canonical_template_name(str(args.template.name)))
