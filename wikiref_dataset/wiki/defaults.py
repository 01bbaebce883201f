"""The default extraction settings of stage 1 (:class:`~.statements.StatementConfig`), in a module of their own that
imports only the standard library (and :mod:`.languages`, which does too): the ``statements`` and ``build`` parsers
show them in ``--help`` without importing the wikitext parser (mwparserfromhell, in the build extra).
:mod:`.statements` re-exports them."""

from __future__ import annotations

from .languages import wiki_language

__all__ = ["DEFAULT_KEEP_TYPES", "DEFAULT_SKIP_SECTIONS"]

DEFAULT_SKIP_SECTIONS: tuple[str, ...] = wiki_language("en").skip_sections
"""Non-prose sections skipped by default (compared lowercased, whitespace collapsed): the ``[sections]`` of
``data/languages/en.toml``."""

DEFAULT_KEEP_TYPES: tuple[str, ...] = (
    "cite web", "cite news", "cite press release", "cite magazine", "citation", "wayback", "webarchive",
)  # fmt: skip
"""Citation types kept by default: web pages, news articles, magazine articles ("press") and press releases, the four
kinds of source of §II-A of Zhu et al. (2022): ``cite web``, ``cite news``, ``cite press release``, ``cite
magazine``, a ``{{citation}}`` with a url that cites a web page or a periodical (type ``citation``; its book, journal,
encyclopedia and conference uses are typed apart and skipped) and archived web pages cited through ``{{wayback}}`` or
``{{webarchive}}`` (their url is the original page's)."""
