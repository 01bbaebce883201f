"""Stream the revisions of a ``pages-meta-history`` dump, page by page, in constant memory.

:func:`~wikiref_dataset.wiki.dump.iter_pages` keeps only a page's last revision, so the revision stream lives here.
The page loop is :func:`~wikiref_dataset.wiki.dump.iter_page_elements` (same opener, optional ``<siteinfo>``,
:class:`~wikiref_dataset.wiki.dump.DumpError`, sharding); this module yields, per page, a lazy iterator of its
revisions. mwxml empties each ``<revision>`` element after use but leaves it attached to its ``<page>``; a
page with a million revisions would keep a million empty elements, so each one is detached as soon as it has been
read (and each ``<page>`` from the root, as ``iter_pages`` does).

``.7z`` dumps (the format Wikimedia publishes history dumps in, beside ``.bz2``) are streamed by
:func:`~wikiref_dataset.wiki.sevenzip.open_7z` (the ``7z`` command when installed, else ``py7zr``), which
:func:`~wikiref_dataset.wiki.dump.open_dump` uses for the ``.7z`` extension; with neither installed the error names
the file and what to install.

Pages can be sharded across tasks: task ``rank`` of ``world_size`` gets the pages whose position in the file is
``rank`` modulo ``world_size`` (the others are skipped without reading their revisions' text).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mwxml

from ..wiki.dump import READ_ERRORS, DamagedDumpError, DumpError, DumpPart, iter_page_elements
from ..wiki.sevenzip import SevenZipUnavailable

__all__ = ["PageHistory", "Revision", "iter_histories"]



@dataclass
class Revision:
    """One revision of a page.

    Args:
        revision_id (`int`): the revision id.
        parent_id (`int`, *optional*): the ``<parentid>`` the dump gives (``None`` for a page's first revision).
        timestamp (`str`): ISO 8601 timestamp (empty when the dump has none).
        text (`str`, *optional*): the wikitext; ``None`` when the dump has no text (missing element, empty, or
            deleted — see ``text_deleted``).
        text_deleted (`bool`): ``<text deleted="deleted"/>``: the revision was suppressed.
        sha1 (`str`, *optional*): the dump's ``<sha1>`` of the text, when given.
    """

    revision_id: int
    parent_id: int | None
    timestamp: str
    text: str | None
    text_deleted: bool = False
    sha1: str | None = None


@dataclass
class PageHistory:
    """A page and a one-shot, lazy iterator over its revisions (oldest first, as dumps store them)."""

    page_id: int
    title: str
    namespace: int
    redirect: str | None
    revisions: Iterator[Revision]


def iter_histories(
    path: str | Path | DumpPart,
    namespaces: Iterable[int] | None = (0,),
    skip_redirects: bool = True,
    rank: int = 0,
    world_size: int = 1,
) -> Iterator[PageHistory]:
    """The pages of a history dump with their revisions, streamed.

    Consume (or abandon) each page's ``revisions`` before asking for the next page.

    Args:
        path (`str`, `Path` or `DumpPart`): a ``.xml``, ``.xml.bz2``, ``.xml.gz`` or ``.xml.7z`` dump, or a byte range
            of a multistream one (:func:`~wikiref_dataset.wiki.dump.plan_dump_parts`).
        namespaces (`Iterable[int]`, *optional*): namespaces kept (default articles); ``None`` keeps all.
        skip_redirects (`bool`): drop pages that are redirects (as of the dump).
        rank (`int`), world_size (`int`): this task's share of the pages (position modulo ``world_size``).

    Raises:
        DumpError: missing or unknown file, or no 7z reader installed (the message names it).
        DamagedDumpError: the file broke while being read (raised after the pages read before; a page cut by the
            damage raises from its ``revisions``).
    """
    try:
        pages = iter_page_elements(path, namespaces, skip_redirects, rank, world_size)
        first = next(pages, None)
    except SevenZipUnavailable as err:
        raise DumpError(str(err)) from err
    if first is None:
        return
    for page, page_element in _chain_first(first, pages):
        yield PageHistory(
            page_id=int(page.id),
            title=page.title,
            namespace=int(page.namespace),
            redirect=page.redirect,
            revisions=_revisions(Path(str(path)), page, page_element),  # str: a DumpPart names its range
        )


def _chain_first(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def _revisions(path: Path, page: mwxml.Page, page_element: Any) -> Iterator[Revision]:
    try:
        yield from _read_revisions(page, page_element)
    except READ_ERRORS as err:
        raise DamagedDumpError(path, err, f"the revisions of page {page.id}") from err


def _read_revisions(page: mwxml.Page, page_element: Any) -> Iterator[Revision]:
    for revision in page:
        del page_element[:]  # detach the <revision> just read (and the page header) from the <page>
        parent = getattr(revision, "parent_id", None)
        deleted = getattr(revision, "deleted", None)
        yield Revision(
            revision_id=int(revision.id),
            parent_id=int(parent) if parent not in (None, "") else None,
            timestamp=str(revision.timestamp) if revision.timestamp is not None else "",
            text=revision.text if revision.text else None,
            text_deleted=bool(deleted is not None and deleted.text),
            sha1=revision.sha1,
        )
