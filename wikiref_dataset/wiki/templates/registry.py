"""The registry of inline-template renderers: every family's table by canonical name (:data:`TEMPLATE_RENDERERS`),
and the lookup the wikitext renderer makes for a template (:func:`template_renderer`): the language's own templates
first, then the table, parser functions and name prefixes.

A family module (:mod:`.numbers`, :mod:`.dates` ...) lists its renderers as ``RENDERERS``, pairs of a renderer and the
canonical names it renders; listing the module here wires it in. A name listed twice is an error.
"""

from __future__ import annotations

from collections.abc import Iterable

from mwparserfromhell.nodes import Template

from . import coordinates, currencies, dates, formatting, lang, links, numbers, punctuation, ships
from .arguments import Renderer, canonical_template_name
from .context import LANGUAGE_TEMPLATES
from .formatting import first_or_text
from .parser_functions import parser_function

__all__ = ["TEMPLATE_RENDERERS", "template_renderer"]


def _table(entries: Iterable[tuple[Renderer, Iterable[str]]]) -> dict[str, Renderer]:
    table: dict[str, Renderer] = {}
    for renderer, names in entries:
        for name in names:
            if name in table:
                raise ValueError(f"template {name!r} is listed twice in TEMPLATE_RENDERERS")
            table[name] = renderer
    return table


TEMPLATE_RENDERERS: dict[str, Renderer] = _table([
    *numbers.RENDERERS,
    *formatting.RENDERERS,
    *lang.RENDERERS,
    *links.RENDERERS,
    *coordinates.RENDERERS,
    *punctuation.RENDERERS,
    *currencies.RENDERERS,
    *dates.RENDERERS,
    *ships.RENDERERS,
])
"""Rendered templates, by canonical name (:func:`~.arguments.canonical_template_name`). Any template not found here
(nor by the ``lang-``/``IPA-`` prefixes, nor a parser function) renders as nothing when it is silent
(:func:`~.silent.is_silent_template`) and leaves a hole otherwise."""

_PREFIX_RENDERERS: tuple[tuple[str, Renderer], ...] = lang.PREFIX_RENDERERS


def template_renderer(template: Template, name: str | None = None) -> Renderer | None:
    """The renderer for ``template`` (whose canonical name may be given): the language's ``[inline]`` templates and
    first-argument templates (:func:`~wikiref_dataset.wiki.inline.language_templates`), its ``[inline_patterns]``,
    :data:`TEMPLATE_RENDERERS` (directly or through the language's ``renders_as``), by prefix, or a parser function;
    ``None`` when the template is dropped."""
    if name is None:
        name = canonical_template_name(str(template.name))
    language = LANGUAGE_TEMPLATES.get()
    if language.inline and name in language.inline:
        return language.inline[name]
    if language.first_argument and name in language.first_argument:
        return first_or_text
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
        return parser_function(template)
    if name.endswith(" span"):  # {{citation needed span|text}}, {{clarify span|text}}: the text is shown
        return first_or_text
    for prefix, prefixed in _PREFIX_RENDERERS:
        if name.startswith(prefix):
            return prefixed
    return None
