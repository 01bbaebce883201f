"""The Wikipedia language a page is rendered in, as the template renderers read it: its own inline templates and
number format (:class:`LanguageTemplates`), set for a block of work in :data:`LANGUAGE_TEMPLATES` by
:func:`~wikiref_dataset.wiki.inline.language_templates`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .arguments import Renderer

if TYPE_CHECKING:
    from ..languages import NumberFormat

__all__ = ["LANGUAGE_TEMPLATES", "LanguageTemplates"]


@dataclass(frozen=True)
class LanguageTemplates:
    silent: frozenset[str] = frozenset()
    first_argument: frozenset[str] = frozenset()
    renders_as: Mapping[str, str] = field(default_factory=dict)
    holes: frozenset[str] = frozenset()
    dropped_namespaces: frozenset[str] = frozenset()
    inline: Mapping[str, Renderer] = field(default_factory=dict)  # the [inline] table's renderers
    inline_patterns: tuple[tuple[re.Pattern, Renderer], ...] = ()
    numbers: NumberFormat | None = None  # None: English (1,234.5)

    @property
    def english(self) -> bool:
        """English: its name heuristics apply (silent "s-"/"... icon" prefixes and suffixes); every other language
        comes with its own number format."""
        return self.numbers is None


# The inline templates of the language being read (:func:`~wikiref_dataset.wiki.inline.language_templates`).
LANGUAGE_TEMPLATES: ContextVar[LanguageTemplates] = ContextVar("wikiref_language_templates",
                                                                 default=LanguageTemplates())  # noqa: B039 (frozen)
