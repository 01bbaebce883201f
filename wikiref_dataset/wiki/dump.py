"""Stream the pages of a MediaWiki XML dump (``pages-articles``), one :class:`WikiPage` at a time, in constant memory.

mwxml parses the XML; this module opens the file by its extension (``.xml``, ``.xml.bz2`` — a *multistream* dump is
a concatenation of bz2 streams, which :func:`bz2.open` reads through — and ``.xml.gz``), keeps the main namespace
and drops redirects by default, and takes the last revision of each page (a ``pages-articles`` dump has one).

Written here rather than left to mwxml alone: mwxml clears each ``<page>`` element after use but leaves the emptied
element attached to the root, so memory grows with the number of pages (about 17 million in English Wikipedia);
:func:`iter_pages` detaches them. Errors from a damaged or unknown file are raised as :class:`DumpError` naming it.

A damaged file (truncated or corrupt compression, XML cut off) raises :class:`DamagedDumpError` only after every page
read before the damage has been yielded; a page cut by the damage is not yielded. The build steps catch it, keep what
was read, and count the file under :func:`damaged_dump_stat` (``damaged_dump/<file name> (<error>)``, valued by the
pages read before the damage); :func:`damaged_dumps` reads those counters back for the closing summaries.

Splitting the reading between tasks (:func:`plan_dump_parts`, used by WikiRef's stage 1 and PSG2SUM): real dumps come
as many files, and tasks take whole files. A single *multistream* file (``*-multistream*.xml*.bz2``) whose index sits
beside it (``*-multistream-index*.txt*.bz2``, lines ``offset:page_id:title``) is cut at bz2 stream boundaries into
byte ranges (:class:`DumpPart`); a task reads its ranges as the header stream (``<siteinfo>``) + its streams +
``</mediawiki>``, a well-formed document, so every task reads only its share of the bytes.
"""

from __future__ import annotations

import bisect
import bz2
import gzip
import io
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from xml.etree.ElementTree import ParseError

import mwxml
from mwxml.element_iterator import ElementIterator
from mwxml.errors import MalformedXML

__all__ = ["DAMAGED_DUMP_STAT", "DamagedDumpError", "DumpError", "DumpPart", "WikiPage", "damaged_dump_stat",
           "damaged_dumps", "iter_pages", "multistream_index", "open_dump", "plan_dump_parts", "stream_offsets"]

logger = logging.getLogger(__name__)

def _open_7z(path: Path, mode: str) -> IO[bytes]:
    from .sevenzip import open_7z  # the 7z command or py7zr, looked up only for .7z files

    return open_7z(path)


_OPENERS = {".bz2": bz2.open, ".gz": gzip.open, ".7z": _open_7z}


class DumpError(Exception):
    """A dump file that cannot be read: unknown format, damaged compression or malformed XML."""


class DamagedDumpError(DumpError):
    """A dump that broke while being read (truncated or corrupt compression, XML cut off or garbled).

    Raised after the pages read before the damage were yielded, so a reader can keep them and go on.

    Args:
        path (`str`): the dump file.
        error (`BaseException`): what the decompressor or the XML parser raised.
        where (`str`): what was being read (``"the dump"``, ``"page 12"``, ``"the revisions of page 12"``).
    """

    def __init__(self, path: str | Path, error: BaseException, where: str = "the dump") -> None:
        message = " ".join(str(error).split()).removeprefix(f"{path}: ") or "no message"  # named once, below
        self.path = str(path)
        self.reason = f"{type(error).__name__}: {message[:160]}"
        super().__init__(f"{path}: cannot read {where} ({self.reason})")


DAMAGED_DUMP_STAT = "damaged_dump/"
"""Prefix of the counters that name a damaged dump file (see :func:`damaged_dump_stat`)."""


def damaged_dump_stat(error: DamagedDumpError) -> str:
    """The counter naming a damaged dump: ``damaged_dump/<file name> (<error>)``; a step adds the pages it read from
    the file before the damage to it. Every task that reads the file meets the same damage, so the key is the same."""
    return f"{DAMAGED_DUMP_STAT}{Path(error.path).name} ({error.reason})"


def damaged_dumps(counts: Mapping[str, int]) -> dict[str, int]:
    """``{"<file name> (<error>)": pages read before the damage}`` from a step's summed counters."""
    return {key[len(DAMAGED_DUMP_STAT):]: value for key, value in sorted(counts.items())
            if key.startswith(DAMAGED_DUMP_STAT)}


@dataclass
class WikiPage:
    """One page of a dump (its last revision).

    Args:
        page_id (`int`): the page id.
        title (`str`): the title, with its namespace prefix for pages outside the main namespace.
        namespace (`int`): the namespace number (0 = articles).
        revision_id (`int`): the id of the revision whose text this is.
        timestamp (`str`): the revision's timestamp, ISO 8601 (``2016-04-22T10:19:33Z``).
        text (`str`): the wikitext.
        redirect (`str`, *optional*): the redirect target when the page is a redirect.
    """

    page_id: int
    title: str
    namespace: int
    revision_id: int
    timestamp: str
    text: str
    redirect: str | None = None


def open_dump(path: str | Path) -> IO[bytes]:
    """Open a dump as a binary stream: ``.bz2`` (also multistream), ``.gz``, ``.7z`` (:mod:`.sevenzip`: the ``7z``
    command or ``py7zr``; Wikimedia publishes history dumps so) or plain ``.xml``."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in _OPENERS:
        return _OPENERS[suffix](path, "rb")
    if suffix == ".xml":
        return open(path, "rb")
    raise DumpError(f"{path}: unknown dump format {suffix or '(no extension)'!r}; expected .xml, .xml.bz2, .xml.gz or .7z")


# ---- splitting the reading between tasks --------------------------------------------------------------------------


@dataclass(frozen=True)
class DumpPart:
    """What one task reads of a dump: the whole file, or the page streams in bytes ``[start, end)`` of a multistream
    ``.bz2`` (``end`` ``None``: to the end of the file, whose last stream closes ``</mediawiki>``), read after the
    header stream ``[0, header_end)``."""

    path: str
    start: int = 0
    end: int | None = None
    header_end: int = 0

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.end is None

    @property
    def num_bytes(self) -> int:
        """The compressed bytes this part reads (the header stream of a range included)."""
        size = Path(self.path).stat().st_size if Path(self.path).is_file() else 0
        if self.whole:
            return size
        return self.header_end + (self.end if self.end is not None else size) - self.start

    def __str__(self) -> str:
        return self.path if self.whole else f"{self.path}[{self.start}:{'' if self.end is None else self.end}]"


def multistream_index(path: str | Path) -> Path | None:
    """The index beside a multistream dump (Wikimedia's naming: ``…-multistream.xml.bz2`` →
    ``…-multistream-index.txt.bz2``, ``…-multistream1.xml-p1p41242.bz2`` → ``…-multistream-index1.txt-p1p41242.bz2``),
    or ``None``."""
    path = Path(path)
    name = path.name
    if "multistream" not in name or "multistream-index" in name or not name.endswith(".bz2"):
        return None
    candidate = path.with_name(name.replace("multistream", "multistream-index", 1).replace(".xml", ".txt", 1))
    return candidate if candidate.is_file() else None


def stream_offsets(index: str | Path) -> list[int]:
    """The distinct byte offsets of a multistream dump's page streams, sorted, from its index (``.bz2`` or plain)."""
    index = Path(index)
    opener = bz2.open if index.suffix == ".bz2" else open
    offsets: set[int] = set()
    with opener(index, "rt", encoding="utf-8") as handle:
        for line in handle:
            head = line.split(":", 1)[0]
            if head.isdigit():
                offsets.add(int(head))
    return sorted(offsets)


def _ranges(path: Path, pieces: int) -> list[DumpPart]:
    """``path`` (multistream, indexed) cut at the stream offsets nearest to ``pieces`` equal byte ranges."""
    offsets = stream_offsets(multistream_index(path))
    size = path.stat().st_size
    if len(offsets) < 2 or pieces < 2:
        return [DumpPart(str(path))]
    first = offsets[0]
    cuts = [first]
    for piece in range(1, pieces):
        goal = first + piece * (size - first) / pieces
        position = bisect.bisect_left(offsets, goal)
        near = min(offsets[max(position - 1, 0):position + 1], key=lambda offset: abs(offset - goal))
        if near > cuts[-1]:
            cuts.append(near)
    bounds = [*cuts, None]
    return [DumpPart(str(path), start, end, first) for start, end in zip(bounds[:-1], bounds[1:])]


def plan_dump_parts(dumps: Iterable[str | Path], tasks: int) -> list[list[DumpPart]]:
    """Each of ``tasks`` tasks' parts of the dumps, so that each reads about 1/``tasks`` of the bytes.

    With at least as many files as tasks, tasks take whole files. Otherwise each multistream file with its index is
    cut at stream boundaries into about (its size / (total size / tasks)) ranges; files without an index stay whole.
    Parts are dealt largest first to the task that has read least; the plan depends only on the files and
    ``tasks``, so every task computes the same one.
    """
    if tasks < 1:
        raise ValueError(f"tasks must be >= 1, got {tasks}")
    paths = [Path(dump) for dump in dumps]
    sizes = [path.stat().st_size if path.is_file() else 0 for path in paths]
    parts: list[DumpPart] = []
    target = sum(sizes) / tasks if tasks else 0
    for path, size in zip(paths, sizes):
        pieces = round(size / target) if target and len(paths) < tasks and multistream_index(path) else 1
        parts += _ranges(path, pieces) if pieces > 1 else [DumpPart(str(path))]
    plan: list[list[DumpPart]] = [[] for _ in range(tasks)]
    loads = [0] * tasks
    for part in sorted(parts, key=lambda item: (-item.num_bytes, item.path, item.start)):
        task = min(range(tasks), key=lambda rank: (loads[rank], rank))
        plan[task].append(part)
        loads[task] += part.num_bytes
    return [sorted(task, key=lambda item: (item.path, item.start)) for task in plan]


class _Range(io.RawIOBase):
    """Bytes ``[start, end)`` of a binary file, as a readable stream."""

    def __init__(self, handle: IO[bytes], start: int, end: int | None) -> None:
        handle.seek(start)
        self.handle, self.left = handle, None if end is None else end - start

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = len(buffer) if self.left is None else min(len(buffer), self.left)
        data = self.handle.read(size)
        buffer[:len(data)] = data
        if self.left is not None:
            self.left -= len(data)
        return len(data)


class _Chain(io.RawIOBase):
    """Several readable streams, one after the other."""

    def __init__(self, streams: list[IO[bytes]], owned: list[IO[bytes]]) -> None:
        self.streams, self.owned = streams, owned

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        for stream in self.owned:
            stream.close()
        super().close()

    def readinto(self, buffer: Any) -> int:
        while self.streams:
            data = self.streams[0].read(len(buffer))
            if data:
                buffer[:len(data)] = data
                return len(data)
            self.streams.pop(0)
        return 0


def open_part(part: DumpPart) -> IO[bytes]:
    """A part as one XML document: the whole file (:func:`open_dump`), or the header stream, the part's streams and
    a closing ``</mediawiki>`` when the range stops before the file's last stream."""
    if part.whole:
        return open_dump(part.path)
    with open(part.path, "rb") as head:
        header = bz2.decompress(head.read(part.header_end))
    raw = open(part.path, "rb")
    body = bz2.BZ2File(_Range(raw, part.start, part.end))
    streams: list[IO[bytes]] = [io.BytesIO(header), body]
    if part.end is not None:
        streams.append(io.BytesIO(b"</mediawiki>\n"))
    return io.BufferedReader(_Chain(streams, owned=[body, raw]), buffer_size=1 << 16)


def iter_pages(
    path: str | Path | DumpPart, namespaces: Iterable[int] | None = (0,), skip_redirects: bool = True
) -> Iterator[WikiPage]:
    """The pages of a dump, streamed.

    Args:
        path (`str` or `Path`): a ``.xml``, ``.xml.bz2`` (multistream included) or ``.xml.gz`` dump.
        namespaces (`Iterable[int]`, *optional*): namespaces to keep (default: articles only); ``None`` keeps all.
        skip_redirects (`bool`): drop redirect pages (default ``True``).

    Raises:
        DumpError: the file is missing or of an unknown format (the message names the file).
        DamagedDumpError: the file broke while being read, after the pages read before were yielded.
    """
    for page, _ in iter_page_elements(path, namespaces, skip_redirects):
        revision = None
        try:
            for last in page:  # pages-articles: one; a history dump: the last one is kept
                revision = last
        except READ_ERRORS as err:
            raise DamagedDumpError(path, err, f"page {page.id}") from err
        if revision is None:
            continue
        yield WikiPage(
            page_id=int(page.id),
            title=page.title,
            namespace=int(page.namespace),
            revision_id=int(revision.id),
            timestamp=str(revision.timestamp) if revision.timestamp is not None else "",
            text=revision.text or "",
            redirect=page.redirect,
        )


# What mwxml, ElementTree and the decompressors raise on a damaged or truncated file.
READ_ERRORS = (ParseError, MalformedXML, OSError, EOFError, ValueError, AssertionError)


def iter_page_elements(
    path: str | Path | DumpPart,
    namespaces: Iterable[int] | None = (0,),
    skip_redirects: bool = True,
    rank: int = 0,
    world_size: int = 1,
) -> Iterator[tuple[mwxml.Page, Any]]:
    """``(mwxml page, its <page> element)`` for the pages of a dump: the one page loop that :func:`iter_pages` and
    the revision-history reader (``psg2sum/history.py``) share.

    Opens the file by extension, checks the root, filters namespaces and redirects, keeps this task's pages
    (position modulo ``world_size`` equal to ``rank``) and, once the consumer moves on, detaches the emptied
    ``<page>`` from the root (mwxml leaves it attached: ~50 bytes a page, about 1 GB for English Wikipedia).
    Read errors of the page loop become :class:`DamagedDumpError`; the consumer reads a page's revisions itself and
    converts the :data:`READ_ERRORS` it meets there.
    """
    part = path if isinstance(path, DumpPart) else DumpPart(str(path))
    path = Path(part.path)
    if not path.is_file():
        raise DumpError(f"{path}: no such dump file")
    if not 0 <= rank < world_size:
        raise ValueError(f"need 0 <= rank < world_size, got rank={rank}, world_size={world_size}")
    wanted = None if namespaces is None else frozenset(namespaces)
    with open_part(part) as handle:
        try:
            root = ElementIterator.from_file(handle)
            if root.tag != "mediawiki":
                raise DumpError(f"{path}: not a MediaWiki XML dump (root element <{root.tag}>)")
            for position, (page, element) in enumerate(_pages(root)):
                try:
                    if position % world_size != rank:
                        continue
                    if (wanted is not None and page.namespace not in wanted) or (skip_redirects and page.redirect):
                        continue
                    yield page, element
                finally:
                    del root.element[:]
        except DumpError:
            raise
        except READ_ERRORS as err:
            raise DamagedDumpError(path, err) from err


def _pages(root: ElementIterator) -> Iterator[tuple[mwxml.Page, Any]]:
    """``(page, its <page> element)`` for each page of a ``<mediawiki>`` element. Like ``mwxml.Dump`` but
    ``<siteinfo>`` is optional (exports made with Special:Export or by tools often lack it; ``<ns>`` tells each
    page's namespace anyway)."""
    namespace_map = None
    for element in root:
        if element.tag == "siteinfo":
            site_info = mwxml.SiteInfo.from_element(element)
            if site_info.namespaces is not None:
                namespace_map = {namespace.name: namespace for namespace in site_info.namespaces}
        elif element.tag == "page":
            yield mwxml.Page.from_element(element, namespace_map), element.element
        elif element.tag != "logitem":
            raise MalformedXML(f"unexpected <{element.tag}> in <mediawiki>")
