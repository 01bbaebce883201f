"""Test helper: a Wikimedia-style multistream dump (``*-multistream.xml.bz2`` + ``*-multistream-index.txt.bz2``) made
from an XML dump: the header (``<siteinfo>``) as the first bz2 stream, ``pages_per_stream`` pages per stream after
it, ``</mediawiki>`` as the last stream, and the index's ``offset:page_id:title`` line for every page."""

from __future__ import annotations

import bz2
import re
from pathlib import Path

_PAGE = re.compile(r"[ \t]*<page>.*?</page>\s*\n", re.DOTALL)


def make_multistream(xml: str, folder: Path, name: str = "testwiki-20240601-pages-articles",
                     pages_per_stream: int = 10) -> tuple[Path, Path]:
    pages = list(_PAGE.finditer(xml))
    header, footer = xml[:pages[0].start()], xml[pages[-1].end():]
    folder.mkdir(parents=True, exist_ok=True)
    dump, index = folder / f"{name}-multistream.xml.bz2", folder / f"{name}-multistream-index.txt.bz2"
    lines = []
    with open(dump, "wb") as handle:
        handle.write(bz2.compress(header.encode("utf-8")))
        for start in range(0, len(pages), pages_per_stream):
            offset = handle.tell()
            group = pages[start:start + pages_per_stream]
            for page in group:
                page_id = re.search(r"<id>(\d+)</id>", page.group()).group(1)
                title = re.search(r"<title>(.*?)</title>", page.group()).group(1)
                lines.append(f"{offset}:{page_id}:{title}\n")
            handle.write(bz2.compress("".join(page.group() for page in group).encode("utf-8")))
        handle.write(bz2.compress(footer.encode("utf-8")))
    index.write_bytes(bz2.compress("".join(lines).encode("utf-8")))
    return dump, index
