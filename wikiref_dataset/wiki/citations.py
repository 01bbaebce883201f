"""Citations: what a ``<ref>`` cites, its citation type, and the fields of a kept one (url, archive, title ...).

A ref's *type* is the canonical name of its first citation template (``cite web``, ``cite news``,
``cite press release``, ``cite book``, ``citation`` ...; case, ``_`` and spacing variants and the common redirects
are folded by :func:`canonical_citation_type`), ``bare url`` for a ref holding only a link, ``text`` for a ref
holding free text, or the canonical name of whatever other template it starts with (``harvnb``, ``sfn``,
``wayback`` ...). Types are decided on the raw wikitext with a regular expression; only citations of a kept type are
parsed (mwparserfromhell) to read their fields.

Fields follow Citation Style 1: ``url``; ``archive-url`` (``archiveurl``); ``url-status`` (and the pre-2019
``deadurl``/``dead-url``: ``yes`` → ``dead``, ``no`` → ``live``); ``title``; ``publisher``; ``work`` (or its aliases
``website``, ``newspaper``, ``magazine``, ``periodical``, ``agency``); ``date`` (or ``year``). A ``{{webarchive}}`` or
``{{wayback}}`` template next to the citation in the same ref supplies an archive the citation lacks, and a
``{{dead link}}`` marks the url dead. :func:`fetch_url` decides what the documents stage downloads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import mwparserfromhell
from mwparserfromhell.nodes import Template

from .plaintext import TemplateArgs, canonical_template_name, render

__all__ = [
    "BARE_URL",
    "CITATION_TYPE_ALIASES",
    "DEAD_URL_STATUSES",
    "TEXT",
    "Citation",
    "canonical_citation_type",
    "classify_ref",
    "fetch_url",
    "is_valid_url",
    "parse_bare_url",
    "parse_citation",
]

BARE_URL = "bare url"
"""Type of a ref that holds a link but no citation template (``<ref>[http://... Title]</ref>``)."""
TEXT = "text"
"""Type of a ref that holds neither a template nor a link (``<ref>Smith 2001, p. 5.</ref>``)."""

DEAD_URL_STATUSES = frozenset({"dead", "unfit", "usurped"})
"""``url-status`` values for which the archive is fetched instead of the original url."""

# Redirects and spelling variants → canonical citation type (canonical names are the Citation Style 1 templates').
CITATION_TYPE_ALIASES: dict[str, str] = {
    # web pages
    "cite website": "cite web", "cite url": "cite web", "web cite": "cite web", "cite webpage": "cite web",
    "cite web page": "cite web", "cite-web": "cite web", "citeweb": "cite web", "cite w": "cite web",
    "cite blog": "cite web", "cite online": "cite web", "cite internet": "cite web", "cite site": "cite web",
    "cite web.": "cite web", "cita web": "cite web", "c web": "cite web", "cw": "cite web",
    # news articles
    "cite newspaper": "cite news", "cite-news": "cite news", "citenews": "cite news", "cite article": "cite news",
    "cite n": "cite news", "news cite": "cite news", "cite news article": "cite news", "cite newspaper article": "cite news",
    "cite new": "cite news", "cite paper": "cite news", "cite news.": "cite news",
    # press releases
    "cite pr": "cite press release", "cite press": "cite press release", "cite press-release": "cite press release",
    "press release": "cite press release", "cite press releases": "cite press release",
    "cite pressrelease": "cite press release",
    # skipped types: folded so that their counts are not split over redirects
    "cite video": "cite av media", "cite media": "cite av media", "cite audio": "cite av media",
    "cite film": "cite av media", "cite youtube": "cite av media", "cite av": "cite av media",
    "cite av media notes": "cite av media notes", "cite album-notes": "cite av media notes",
    "cite album notes": "cite av media notes", "cite liner notes": "cite av media notes",
    "cite jounal": "cite journal", "cite paper journal": "cite journal", "cite periodical": "cite journal",
    "cite books": "cite book", "cite-book": "cite book", "vcite book": "cite book", "vcite journal": "cite journal",
    "vcite web": "cite web", "vcite news": "cite news", "cite chapter": "cite book",
    "cite dictionary": "cite encyclopedia", "cite encyclopaedia": "cite encyclopedia",
    "cite conference paper": "cite conference", "cite proceedings": "cite conference",
    "cite dissertation": "cite thesis", "cite video game": "cite video game", "cite tv": "cite episode",
    "cite television": "cite episode", "cite patent": "cite patent", "cite legislation": "cite act",
}  # fmt: skip

# Templates that are citations although their names do not start with "cite " (first template in a ref wins).
_OTHER_CITATION_TEMPLATES = frozenset({"citation", "vcite", "cite", "wayback", "webarchive", "harvnb", "harv",
                                       "harvp", "harvtxt", "sfn", "sfnp"})
# Templates inside a ref that are not the citation (a ref may start with a language icon or a "See").
_NOT_CITATIONS = frozenset({"in lang", "en icon", "fr icon", "de icon", "es icon", "ru icon", "pt icon", "it icon",
                            "ja icon", "zh icon", "ar icon", "lang", "rp", "dead link", "deadlink", "cbignore",
                            "nbsp", "'", "ndash", "mdash", "sup", "small", "nowrap", "citation needed",
                            "page needed", "better source", "failed verification", "verify source", "clarify"})
_TEMPLATE_NAME = re.compile(r"\{\{\s*([^{}|<>\[\]\n]+?)\s*(?=[|}])")
_LINK = re.compile(r"(?:https?:)?//[^\s\]\[|<>\"{}]+", re.IGNORECASE)
_BRACKETED_LINK = re.compile(r"\[((?:https?:)?//[^\s\]\[<>\"]+)(?:\s+([^\]]*))?\]", re.IGNORECASE)
_ICON = re.compile(r"^[a-z]{2,3} icon$")


def canonical_citation_type(name: str) -> str:
    """The canonical type of a citation template name: ``Cite_Web`` → ``cite web``, ``Cite newspaper`` →
    ``cite news``, ``cite pr`` → ``cite press release``; other names are returned canonicalised."""
    name = canonical_template_name(name)
    return CITATION_TYPE_ALIASES.get(name, name)


def _is_citation_name(name: str) -> bool:
    return name.startswith("cite ") or name in _OTHER_CITATION_TEMPLATES or name in CITATION_TYPE_ALIASES


def classify_ref(content: str) -> str:
    """The citation type of a ref's wikitext content (see the module docstring)."""
    first_other = None
    for match in _TEMPLATE_NAME.finditer(content):
        name = canonical_template_name(match.group(1))
        if _is_citation_name(name):
            return CITATION_TYPE_ALIASES.get(name, name)
        if first_other is None and name not in _NOT_CITATIONS and not _ICON.match(name):
            first_other = name
    if _LINK.search(content):
        return BARE_URL
    if first_other is not None:
        return first_other
    return TEXT


@dataclass
class Citation:
    """The source a statement cites.

    Args:
        type (`str`): canonical citation type (``cite web``, ``cite news``, ``cite press release``, ``bare url`` ...).
        url (`str`): the cited url as written (``//host/...`` made ``https:``).
        archive_url (`str`, *optional*): an archived copy (``archive-url``, or a ``{{webarchive}}`` in the ref).
        url_status (`str`, *optional*): ``live``, ``dead``, ``unfit``, ``usurped`` ... as the citation states it.
        fetch_url (`str`): what the documents stage downloads (see :func:`fetch_url`).
        title, publisher, work, date (`str`, *optional*): plain-text citation fields.
        ref_name (`str`, *optional*): the ``name`` of the ref the statement used.
    """

    type: str
    url: str
    archive_url: str | None = None
    url_status: str | None = None
    fetch_url: str = ""
    title: str | None = None
    publisher: str | None = None
    work: str | None = None
    date: str | None = None
    ref_name: str | None = None


def fetch_url(url: str, archive_url: str | None, url_status: str | None, archive_when_status_missing: bool) -> str:
    """The archive when the citation says the original is dead, unfit or usurped (or, following CS1, when it gives an
    archive and no status at all and ``archive_when_status_missing``); otherwise the original url."""
    if archive_url:
        if url_status in DEAD_URL_STATUSES or (url_status is None and archive_when_status_missing) or not url:
            return archive_url
    return url


def _normalise_url(value: str) -> str:
    value = value.strip().strip("<>").strip()
    if value.startswith("//"):
        value = "https:" + value
    return value


def is_valid_url(url: str) -> bool:
    """Whether ``url`` is an absolute http(s) url (what the documents stage can fetch)."""
    return url.lower().startswith(("http://", "https://")) and len(url) > 10 and " " not in url


def _url_status(args: TemplateArgs) -> str | None:
    status = args.get("url-status", "urlstatus").lower()
    if status:
        return {"yes": "dead", "no": "live", "y": "dead", "n": "live", "true": "dead", "false": "live"}.get(
            status, status
        )
    legacy = args.get("dead-url", "deadurl").lower()
    if legacy:
        return "dead" if legacy in ("yes", "y", "true", "dead") else "live" if legacy in ("no", "n", "false") else legacy
    return None


def _optional(text: str) -> str | None:
    return text or None


def _raw_url(args: TemplateArgs, *names: str) -> str:
    for name in names:
        value = args.raw(name)
        if value:
            return _normalise_url(value)
    return ""


def parse_citation(content: str, citation_type: str, archive_when_status_missing: bool = True) -> Citation | None:
    """Fields of the first citation template of ``citation_type`` in a ref's wikitext; ``None`` if there is none."""
    code = mwparserfromhell.parse(content)
    citation: Template | None = None
    extra_archive = None
    dead_link = False
    for template in code.ifilter_templates(recursive=False):
        name = canonical_template_name(str(template.name))
        if citation is None and CITATION_TYPE_ALIASES.get(name, name) == citation_type:
            citation = template
        elif name in ("webarchive", "web archive", "wayback", "webcite", "archive.org", "cbignore webarchive"):
            extra_archive = extra_archive or _archive_from_template(template)
        elif name in ("dead link", "deadlink", "dead url", "404", "dl"):
            dead_link = True
    if citation is None:
        return None
    args = TemplateArgs(citation)
    url = _raw_url(args, "url", "website-url")
    archive_url = _raw_url(args, "archive-url", "archiveurl") or extra_archive or None
    if archive_url and not is_valid_url(archive_url):
        archive_url = None
    status = _url_status(args)
    if dead_link and status not in DEAD_URL_STATUSES:
        status = "dead"  # a {{dead link}} tag is a later finding than "deadurl=no"
    return Citation(
        type=citation_type,
        url=url,
        archive_url=archive_url,
        url_status=status,
        fetch_url=fetch_url(url, archive_url, status, archive_when_status_missing),
        title=_optional(args.get("title", "script-title", "trans-title")),
        publisher=_optional(args.get("publisher", "institution")),
        work=_optional(args.get("work", "website", "newspaper", "magazine", "periodical", "agency", "journal",
                                "site")),
        date=_optional(args.get("date", "publication-date", "year")),
    )


def _archive_from_template(template: Template) -> str | None:
    """An archive url from ``{{webarchive|url=...}}`` or ``{{wayback|url=original|date=YYYYMMDD...}}``."""
    args = TemplateArgs(template)
    name = canonical_template_name(str(template.name))
    if name == "wayback":
        original = _raw_url(args, "url") or _normalise_url(args.pos(1))
        stamp = args.get("date")
        if original and stamp.isdigit():
            return f"https://web.archive.org/web/{stamp}/{original}"
        return None
    url = _raw_url(args, "url", "url1") or _normalise_url(args.pos(1))
    return url or None


def parse_bare_url(content: str) -> Citation | None:
    """A ``bare url`` citation from the first link of a ref (``[url title]`` gives the title too)."""
    bracketed = _BRACKETED_LINK.search(content)
    if bracketed:
        url, label = _normalise_url(bracketed.group(1)), (bracketed.group(2) or "").strip()
    else:
        match = _LINK.search(content)
        if match is None:
            return None
        url, label = _normalise_url(match.group(0)), ""
    return Citation(type=BARE_URL, url=url, fetch_url=url, title=render(label) or None if label else None)
