"""Citations: what a ``<ref>`` cites, its citation type, and the fields of a kept one (url, archive, title ...).

A ref's *type* is the canonical name of its first citation template (``cite web``, ``cite news``,
``cite press release``, ``cite magazine``, ``cite book``, ``citation`` ...; case, ``_`` and spacing variants and the
common redirects are folded by :func:`canonical_citation_type`), ``bare url`` for a ref holding only a link, ``text``
for a ref holding free text, or the canonical name of whatever other template it starts with (``harvnb``, ``sfn``
...). Types are decided on the raw wikitext with a regular expression; only citations of a kept type are parsed
(mwparserfromhell) to read their fields, except ``{{citation}}``:

* ``{{citation}}`` (Citation Style 2) cites any kind of source; its parameters say which. It is typed ``citation``
  when it has a ``url`` and cites a web page or a periodical, and otherwise ``citation (journal)`` (``journal=``),
  ``citation (encyclopedia)`` (``encyclopedia=``), ``citation (conference)``, ``citation (book)`` (``isbn``,
  ``chapter``/``contribution``, ``edition``, or a url into Google Books or an Internet Archive scan) or ``citation
  (no url)``, so that the web and news sources among them can be kept and the others are counted apart.
* A ref that starts with ``{{wayback}}`` or ``{{webarchive}}`` (an archived web page, often after a bare link) is
  typed ``wayback``/``webarchive``; its ``url`` is the *original* page (``url=`` of ``{{wayback}}``, the page an
  Internet Archive or archive.today address names, or else the link before the template) and the archive is kept
  as ``archive_url`` and ``archive_date``.

Fields follow Citation Style 1: ``url``; ``archive-url`` (``archiveurl``); ``archive-date`` (``archivedate``);
``url-status`` (and the pre-2019 ``deadurl``/``dead-url``: ``yes`` → ``dead``, ``no`` → ``live``); ``title``;
``publisher``; ``work`` (or its aliases ``website``, ``newspaper``, ``magazine``, ``periodical``, ``agency``); ``date``
(or ``year``). A ``{{webarchive}}`` or ``{{wayback}}`` template next to the citation in the same ref supplies an
archive the citation lacks, and a ``{{dead link}}`` marks the url dead. :func:`fetch_url` decides what the documents
stage downloads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote

import mwparserfromhell
from mwparserfromhell.nodes import Template
from mwparserfromhell.wikicode import Wikicode

from .holes import HOLE_START, strip_holes
from .languages import WikiLanguage, wiki_language
from .plaintext import TemplateArgs, render
from .templates.arguments import canonical_template_name

__all__ = [
    "ARCHIVE_TYPES",
    "BARE_URL",
    "CITATION",
    "CITATION_TYPE_ALIASES",
    "DEAD_URL_STATUSES",
    "TEXT",
    "Citation",
    "archived_original",
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

_ENGLISH = wiki_language("en")
CITATION_TYPE_ALIASES: dict[str, str] = dict(_ENGLISH.citation_types)
"""Redirects and spelling variants of English citation templates → canonical citation type (canonical names are the
Citation Style 1 templates'), from ``data/languages/en.toml``; other languages add theirs (:class:`WikiLanguage`)."""

# Templates that are citations although their names do not start with "cite " (first template in a ref wins).
_OTHER_CITATION_TEMPLATES = frozenset({"citation", "vcite", "cite", "wayback", "webarchive", "harvnb", "harv",
                                       "harvp", "harvtxt", "sfn", "sfnp"})
# Templates inside a ref that are not the citation (a ref may start with a language icon or a "See").
_NOT_CITATIONS = _ENGLISH.not_citation_templates
_TEMPLATE_NAME = re.compile(r"\{\{\s*([^{}|<>\[\]\n]+?)\s*(?=[|}])")
_LINK = re.compile(r"(?:https?:)?//[^\s\]\[|<>\"{}]+", re.IGNORECASE)
_BRACKETED_LINK = re.compile(r"\[((?:https?:)?//[^\s\]\[<>\"]+)(?:\s+([^\]]*))?\]", re.IGNORECASE)
_ICON = re.compile(r"^[a-z]{2,3} icon$")


def canonical_citation_type(name: str, language: WikiLanguage | None = None) -> str:
    """The canonical type of a citation template name: ``Cite_Web`` → ``cite web``, ``Cite newspaper`` →
    ``cite news``, ``cite pr`` → ``cite press release`` (German ``Internetquelle`` → ``cite web`` with ``language``
    German); other names are returned canonicalised."""
    name = canonical_template_name(name)
    return (language or _ENGLISH).citation_types.get(name, name)


def _is_citation_name(name: str, aliases: Mapping[str, str]) -> bool:
    return name.startswith("cite ") or name in _OTHER_CITATION_TEMPLATES or name in aliases


def classify_ref(content: str, language: WikiLanguage | None = None) -> str:
    """The citation type of a ref's wikitext content (see the module docstring), with the template names of
    ``language`` (default: English)."""
    lang = language or _ENGLISH
    aliases, not_citations = lang.citation_types, lang.not_citation_templates
    first_other = None
    for match in _TEMPLATE_NAME.finditer(content):
        name = canonical_template_name(match.group(1))
        if _is_citation_name(name, aliases):
            citation_type = aliases.get(name, name)
            return _citation_kind(content, language) if citation_type == CITATION else citation_type
        if first_other is None and name not in not_citations and not _ICON.match(name):
            first_other = name
    if _LINK.search(content):
        return BARE_URL
    if first_other is not None:
        return first_other
    return TEXT


CITATION = "citation"
"""Type of a ``{{citation}}`` with a url that cites a web page, news article or other periodical."""

# {{citation}} parameters that make it a citation of another kind (first match wins), as Citation Style 2 reads them.
_CITATION_KINDS = (
    ("citation (journal)", ("journal",)),
    ("citation (encyclopedia)", ("encyclopedia", "encyclopaedia", "dictionary")),
    ("citation (conference)", ("conference", "book-title", "booktitle")),
    ("citation (book)", ("isbn", "chapter", "contribution", "chapter-url", "contribution-url", "edition")),
)


_BOOK_SCAN = re.compile(r"//books\.google\.|//(?:www\.)?archive\.org/details/", re.IGNORECASE)


def _citation_kind(content: str, language: WikiLanguage | None = None) -> str:
    """The type of the first ``{{citation}}`` of a ref (or of a template ``language`` types ``citation``, such as
    Polish ``{{Cytuj}}``): ``citation`` when it has a url and cites a web page or a periodical, else what it cites
    (``citation (journal)`` ...) or ``citation (no url)``."""
    url_names = ("url",) if language is None else language.names("url")
    for template in mwparserfromhell.parse(content).ifilter_templates(recursive=False):
        if canonical_citation_type(str(template.name), language) != CITATION:
            continue
        given = {str(param.name).strip().lower() for param in template.params if str(param.value).strip()}
        for kind, names in _CITATION_KINDS:
            if given.intersection(names):
                return kind
        url_name = next((name for name in url_names if name in given), None)
        if url_name is None:
            return "citation (no url)"
        return "citation (book)" if _BOOK_SCAN.search(str(template.get(url_name).value)) else CITATION
    return CITATION


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
        access_date (`str`, *optional*): when the editor read the page (``access-date``/``accessdate``), as written
            in English; in other languages in ISO 8601 where the language's date parser reads it (``abruf=1. März
            2020`` → ``2020-03-01``). The documents stage picks the archived capture nearest to it.
        ref_name (`str`, *optional*): the ``name`` of the ref the statement used.
        archive_date (`str`, *optional*): when the archive was made (``archive-date`` as written, or the date of a
            Wayback timestamp as ``YYYY-MM-DD``); ``None`` without an archive.
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
    archive_date: str | None = None
    access_date: str | None = None


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


def _url_status(args: TemplateArgs, language: WikiLanguage | None = None) -> str | None:
    if language is not None and language.code != "en":  # the language's own parameters and values first
        for name in language.names("url_status"):
            if name not in _ENGLISH_STATUS_NAMES:
                status = language.url_status(args.get(name))
                if status:
                    return status
    status = args.get("url-status", "urlstatus").lower()
    if status:
        return {"yes": "dead", "no": "live", "y": "dead", "n": "live", "true": "dead", "false": "live"}.get(
            status, status
        )
    legacy = args.get("dead-url", "deadurl").lower()
    if legacy:
        return "dead" if legacy in ("yes", "y", "true", "dead") else "live" if legacy in ("no", "n", "false") else legacy
    return None


_ENGLISH_STATUS_NAMES = frozenset({"url-status", "urlstatus", "dead-url", "deadurl"})


def _optional(text: str) -> str | None:
    if HOLE_START in text:  # a template in a field that plain text cannot render
        text = " ".join(strip_holes(text).split())
    return text or None


def _raw_url(args: TemplateArgs, *names: str) -> str:
    for name in names:
        value = args.raw(name)
        if value:
            return _normalise_url(value)
    return ""


def parse_citation(content: str, citation_type: str, archive_when_status_missing: bool = True,
                   language: WikiLanguage | None = None) -> Citation | None:
    """Fields of the first citation template of ``citation_type`` in a ref's wikitext; ``None`` if there is none.
    For the types ``wayback`` and ``webarchive`` the citation is the archived page (see the module docstring).
    ``language`` (default: English) gives the template and parameter names (German ``{{Internetquelle|titel=}}``)."""
    lang = _ENGLISH if language is None else language
    code = mwparserfromhell.parse(content)
    citation: Template | None = None
    archives: list[Template] = []
    dead_link = False
    for template in code.ifilter_templates(recursive=False):
        name = canonical_template_name(str(template.name))
        if citation is None and lang.citation_types.get(name, name) == citation_type:
            citation = template
        elif name in lang.archive_templates:
            archives.append(template)
        elif name in lang.dead_link_templates:
            dead_link = True
    if citation is None:
        return None
    if canonical_template_name(str(citation.name)) in lang.dead_link_templates:
        dead_link = True  # a template that cites a dead link (French {{Lien brisé}})
    if citation_type in ARCHIVE_TYPES:
        return _archived_page(code, citation, citation_type, dead_link, archive_when_status_missing, lang)
    args = TemplateArgs(citation)
    url = _raw_url(args, *lang.names("url"))
    archive_url = _raw_url(args, *lang.names("archive_url")) or None
    archive_date = _optional(args.get(*lang.names("archive_date")))
    if archive_url is None:  # a {{webarchive}} or {{wayback}} after the citation
        for template in archives:
            archive_url, stamp, _ = _archive_from_template(template)
            if archive_url:
                archive_date = stamp
                break
    if archive_url and not is_valid_url(archive_url):
        archive_url = archive_date = None
    status = _url_status(args, language)
    if dead_link and status not in DEAD_URL_STATUSES:
        status = "dead"  # a {{dead link}} tag is a later finding than "deadurl=no"
    return Citation(
        type=citation_type,
        url=url,
        archive_url=archive_url,
        url_status=status,
        fetch_url=fetch_url(url, archive_url, status, archive_when_status_missing),
        title=_optional(args.get(*lang.names("title"))),
        publisher=_optional(args.get(*lang.names("publisher"))),
        work=_optional(args.get(*lang.names("work"))),
        date=_dated(_optional(args.get(*lang.names("date"))), language),
        archive_date=archive_date if archive_url else None,
        access_date=_dated(_optional(args.get(*lang.names("access_date"))), language),
    )


def _dated(text: str | None, language: WikiLanguage | None) -> str | None:
    """A citation date of a language other than English in ISO 8601 when the language's date parser reads it
    (``1. März 2020`` → ``2020-03-01``), else as written; English dates as written (the documents stage reads them)."""
    if text is None or language is None or language.code == "en":
        return text
    return language.iso_date(text) or text


ARCHIVE_TYPES = frozenset({"wayback", "webarchive"})
"""Types of refs whose citation is an archived web page (``{{wayback}}`` or ``{{webarchive}}`` first)."""
_ARCHIVE_TEMPLATES = _ENGLISH.archive_templates
_WAYBACK_ADDRESS = re.compile(r"https?://(?:web\.|www\.|wayback\.)?archive\.org/web/(\d{4,14})[a-z_]*/+(.+)\Z",
                              re.IGNORECASE)
_ARCHIVE_TODAY_ADDRESS = re.compile(r"https?://archive\.(?:today|is|ph|li|vn|fo|md)/(\d{4,14})/(.+)\Z", re.IGNORECASE)
_WEBCITE_ADDRESS = re.compile(r"https?://(?:www\.)?webcitation\.org/\S*?[?&]url=([^&\s]+)", re.IGNORECASE)
_ARCHIVE_HOSTS = re.compile(r"https?://(?:[a-z0-9-]+\.)*(?:archive\.org|archive\.(?:today|is|ph|li|vn|fo|md)|"
                            r"webcitation\.org)/", re.IGNORECASE)


def archived_original(archive_url: str) -> str | None:
    """The page an archive address names: ``https://web.archive.org/web/20100101000000/http://a.example.org/`` →
    ``http://a.example.org/`` (Internet Archive, archive.today with a timestamp, WebCite with ``?url=``); ``None``
    for addresses that do not name it (``https://archive.ph/AbCd1``)."""
    for pattern in (_WAYBACK_ADDRESS, _ARCHIVE_TODAY_ADDRESS):
        match = pattern.match(archive_url)
        if match:
            original = match.group(2)
            if not re.match(r"https?:", original, re.IGNORECASE):
                original = "http://" + original
            return re.sub(r"^(https?:)/+", r"\1//", original, flags=re.IGNORECASE)
    match = _WEBCITE_ADDRESS.match(archive_url)
    if match:
        return _normalise_url(unquote(match.group(1)))
    return None


def _archive_stamp(stamp: str) -> str | None:
    """An archive's date: a Wayback timestamp (``20090312022528``) as ``2009-03-12``, anything else as written."""
    stamp = stamp.strip()
    if re.fullmatch(r"\d{8,14}", stamp):
        return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}"
    return stamp or None


def _archive_from_template(template: Template) -> tuple[str | None, str | None, str | None]:
    """``(archive url, archive date, original url)`` from ``{{wayback|url=original|date=YYYYMMDDhhmmss}}`` or
    ``{{webarchive|url=archive|date=...}}`` (the original is read off the archive address where it names it)."""
    args = TemplateArgs(template)
    name = canonical_template_name(str(template.name))
    if name == "wayback":
        original = _raw_url(args, "url") or _normalise_url(args.pos(1))
        stamp = args.get("date")
        if original and stamp.isdigit():
            return f"https://web.archive.org/web/{stamp}/{original}", _archive_stamp(stamp), original
        return None, None, original or None
    url = _raw_url(args, "url", "url1") or _normalise_url(args.pos(1))
    if not is_valid_url(url):
        return None, None, None
    if not _ARCHIVE_HOSTS.match(url):  # German {{Webarchiv|url=original|wayback=stamp}} (or archive-is=stamp)
        wayback, archive_is = args.get("wayback"), args.get("archive-is")
        if wayback.isdigit():
            return f"https://web.archive.org/web/{wayback}/{url}", _archive_stamp(wayback), url
        if archive_is.isdigit():
            return f"https://archive.ph/{archive_is}/{url}", _archive_stamp(archive_is), url
    original = archived_original(url)
    stamp = args.get("date", "date1")
    if not stamp:
        match = _WAYBACK_ADDRESS.match(url) or _ARCHIVE_TODAY_ADDRESS.match(url)
        stamp = match.group(1) if match else ""
    return url, _archive_stamp(stamp), original


def _archived_page(code: Wikicode, template: Template, citation_type: str, dead_link: bool,
                   archive_when_status_missing: bool, language: WikiLanguage = _ENGLISH) -> Citation | None:
    """The citation of a ref that starts with an archive template: the page is the original the template names
    (``url=`` of ``{{wayback}}``, read off the address of ``{{webarchive}}``), or, where it names none
    (``https://archive.ph/AbCd1``), the link written before it
    (``[http://a.example.org Title] {{webarchive|...}}``)."""
    archive_url, archive_date, original = _archive_from_template(template)
    link_url, label = None, ""
    for link in code.ifilter_external_links(recursive=False):
        candidate = _normalise_url(str(link.url))
        if is_valid_url(candidate) and not _ARCHIVE_HOSTS.match(candidate):
            link_url, label = candidate, str(link.title or "").strip()
            break
    if original and is_valid_url(original):
        if link_url != original:
            label = ""  # the link names another page: its label is not this page's title
        url = original
    else:
        url = link_url or ""
    if not is_valid_url(url) and not archive_url:
        return None
    args = TemplateArgs(template)
    status = "dead" if dead_link else None
    return Citation(
        type=citation_type,
        url=url if is_valid_url(url) else "",
        archive_url=archive_url,
        url_status=status,
        fetch_url=fetch_url(url if is_valid_url(url) else "", archive_url, status, archive_when_status_missing),
        # English {{webarchive|title=}}; other languages' title names and ``text`` (German {{Webarchiv|text=}})
        title=_optional(args.get(*(("title",) if language.code == "en" else (*language.names("title"), "text"))))
        or (_optional(render(label)) if label else None),
        archive_date=archive_date if archive_url else None,
    )


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
