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
from dataclasses import dataclass
from urllib.parse import unquote

import mwparserfromhell
from mwparserfromhell.nodes import Template
from mwparserfromhell.wikicode import Wikicode

from .plaintext import HOLE_START, TemplateArgs, canonical_template_name, render, strip_holes

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
    # magazine articles
    "cite mag": "cite magazine", "cite-magazine": "cite magazine", "citemagazine": "cite magazine",
    "cite magazine article": "cite magazine",
    # archived web pages
    "web archive": "webarchive",
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
            citation_type = CITATION_TYPE_ALIASES.get(name, name)
            return _citation_kind(content) if citation_type == CITATION else citation_type
        if first_other is None and name not in _NOT_CITATIONS and not _ICON.match(name):
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


def _citation_kind(content: str) -> str:
    """The type of the first ``{{citation}}`` of a ref: ``citation`` when it has a url and cites a web page or a
    periodical, else what it cites (``citation (journal)`` ...) or ``citation (no url)``."""
    for template in mwparserfromhell.parse(content).ifilter_templates(recursive=False):
        if canonical_citation_type(str(template.name)) != CITATION:
            continue
        given = {str(param.name).strip().lower() for param in template.params if str(param.value).strip()}
        for kind, names in _CITATION_KINDS:
            if given.intersection(names):
                return kind
        if "url" not in given:
            return "citation (no url)"
        return "citation (book)" if _BOOK_SCAN.search(str(template.get("url").value)) else CITATION
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
        access_date (`str`, *optional*): when the editor read the page (``access-date``/``accessdate``), as written;
            the documents stage picks the archived capture nearest to it.
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
    if HOLE_START in text:  # a template in a field that plain text cannot render
        text = " ".join(strip_holes(text).split())
    return text or None


def _raw_url(args: TemplateArgs, *names: str) -> str:
    for name in names:
        value = args.raw(name)
        if value:
            return _normalise_url(value)
    return ""


def parse_citation(content: str, citation_type: str, archive_when_status_missing: bool = True) -> Citation | None:
    """Fields of the first citation template of ``citation_type`` in a ref's wikitext; ``None`` if there is none.
    For the types ``wayback`` and ``webarchive`` the citation is the archived page (see the module docstring)."""
    code = mwparserfromhell.parse(content)
    citation: Template | None = None
    archives: list[Template] = []
    dead_link = False
    for template in code.ifilter_templates(recursive=False):
        name = canonical_template_name(str(template.name))
        if citation is None and CITATION_TYPE_ALIASES.get(name, name) == citation_type:
            citation = template
        elif name in _ARCHIVE_TEMPLATES:
            archives.append(template)
        elif name in ("dead link", "deadlink", "dead url", "404", "dl"):
            dead_link = True
    if citation is None:
        return None
    if citation_type in ARCHIVE_TYPES:
        return _archived_page(code, citation, citation_type, dead_link, archive_when_status_missing)
    args = TemplateArgs(citation)
    url = _raw_url(args, "url", "website-url")
    archive_url = _raw_url(args, "archive-url", "archiveurl") or None
    archive_date = _optional(args.get("archive-date", "archivedate"))
    if archive_url is None:  # a {{webarchive}} or {{wayback}} after the citation
        for template in archives:
            archive_url, stamp, _ = _archive_from_template(template)
            if archive_url:
                archive_date = stamp
                break
    if archive_url and not is_valid_url(archive_url):
        archive_url = archive_date = None
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
        archive_date=archive_date if archive_url else None,
        access_date=_optional(args.get("access-date", "accessdate")),
    )


ARCHIVE_TYPES = frozenset({"wayback", "webarchive"})
"""Types of refs whose citation is an archived web page (``{{wayback}}`` or ``{{webarchive}}`` first)."""
_ARCHIVE_TEMPLATES = frozenset({"webarchive", "web archive", "wayback", "webcite", "archive.org",
                                "cbignore webarchive"})
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
    original = archived_original(url)
    stamp = args.get("date", "date1")
    if not stamp:
        match = _WAYBACK_ADDRESS.match(url) or _ARCHIVE_TODAY_ADDRESS.match(url)
        stamp = match.group(1) if match else ""
    return url, _archive_stamp(stamp), original


def _archived_page(code: Wikicode, template: Template, citation_type: str, dead_link: bool,
                   archive_when_status_missing: bool) -> Citation | None:
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
        title=_optional(args.get("title")) or (_optional(render(label)) if label else None),
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
