"""Templates of links and references: the text a reader sees of a link (``{{url}}``, interlanguage links
``{{ill}}``) and of a reference written in the running text (``{{ISBN}}``, ``{{US patent}}``, ``{{bibleref}}``)."""

from __future__ import annotations

import re

from .arguments import Renderer, TemplateArgs, unrendered
from .numbers import group_thousands

__all__ = ["RENDERERS"]


def _interlanguage_link(args: TemplateArgs) -> str:
    return args.get("lt") or args.pos(1)


def _url(args: TemplateArgs) -> str:
    label = args.pos(2)
    if label:
        return label
    return re.sub(r"^(?:https?:)?//(?:www\.)?", "", args.pos(1)).rstrip("/")


def _isbn(args: TemplateArgs) -> str:
    values = [value for value in args.positionals() if value]
    return "ISBN " + ", ".join(values) if values else "ISBN"


def _us_patent(args: TemplateArgs) -> str:
    """``{{US patent|1781541}}`` → ``U.S. patent 1,781,541``."""
    number = args.pos(1)
    return f"U.S. patent {group_thousands(number) if number.isdigit() else number}" if number else unrendered(args)


def _bible_reference(args: TemplateArgs) -> str:
    """``{{bibleref|Mark|3:25|9}}`` → ``Mark 3:25`` (book and verses; the version is a link target)."""
    return " ".join(value for value in (args.pos(1), args.pos(2)) if value) or unrendered(args)


RENDERERS: tuple[tuple[Renderer, tuple[str, ...]], ...] = (
    (_interlanguage_link, ("ill", "interlanguage link", "illm", "interlanguage link multi", "ill2")),
    (_url, ("url",)),
    (_isbn, ("isbn",)),
    (_us_patent, ("us patent",)),
    (_bible_reference, ("bibleref", "bibleref2", "bibleverse", "bible verse")),
)
"""The rendered templates of links and references: (renderer, the canonical names it renders)."""
