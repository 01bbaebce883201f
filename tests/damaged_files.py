"""Damaged copies of real input files for the bad-input tests: cut at a fraction (a truncated download), one byte
flipped (a corrupt disk or transfer), recompressed as ``.gz`` or ``.7z``. The sources are the real samples under
``../shared/realdata/`` (tests skip when it is absent); the copies are written to the test's ``tmp_path``."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"


def real_file(relative: str) -> Path:
    """``../shared/realdata/<relative>``, or skip the test when it is absent."""
    path = REALDATA / relative
    if not path.is_file():
        pytest.skip(f"../shared/realdata/{relative} is absent")
    return path


def truncated(data: bytes, target: Path, fraction: float) -> Path:
    """The first ``fraction`` of ``data`` written to ``target``."""
    target.write_bytes(data[: int(len(data) * fraction)])
    return target


def flipped(data: bytes, target: Path, fraction: float) -> Path:
    """``data`` with the byte at ``fraction`` of its length inverted, written to ``target``."""
    position = int(len(data) * fraction)
    target.write_bytes(data[:position] + bytes([data[position] ^ 0xFF]) + data[position + 1 :])
    return target


def gzipped(data: bytes) -> bytes:
    """``data`` as one gzip member (``mtime=0``: the same bytes every run)."""
    return gzip.compress(data, mtime=0)


def seven_zipped(data: bytes, name: str, target: Path) -> Path:
    """``data`` as the single file ``name`` of a ``.7z`` archive (py7zr; the test skips without it)."""
    py7zr = pytest.importorskip("py7zr")
    with py7zr.SevenZipFile(target, "w") as archive:
        archive.writestr(data, name)
    return target


def two_page_history() -> bytes:
    """The two real "Anarchism" history windows (400 revisions from 2001-2003, then 300 from January 2006) as one
    ``pages-meta-history`` XML of two pages, so that a cut inside the second page leaves the first one whole (the
    test skips without them)."""
    import bz2

    first = bz2.decompress(real_file("revision_history/derived_Anarchism_history_first400.xml.bz2").read_bytes())
    second = bz2.decompress(real_file("revision_history/derived_Anarchism_history_rev6000_6300.xml.bz2").read_bytes())
    page = second[second.index(b"<page>") : second.rindex(b"</page>") + len(b"</page>")]
    return first[: first.rindex(b"</mediawiki>")] + b"  " + page + b"\n</mediawiki>\n"


def repeated_wet(copies: int) -> bytes:
    """The real Common Crawl WET file of ``warc/whirlwind`` (a ``warcinfo`` member, then one ``conversion``
    record) with its conversion member repeated ``copies`` times: a WET file of several pages, gzip member by
    member as Common Crawl writes them (the test skips without it)."""
    import zlib

    data = real_file("warc/whirlwind/whirlwind.warc.wet.gz").read_bytes()
    decompressor = zlib.decompressobj(31)
    decompressor.decompress(data)
    conversion = decompressor.unused_data
    return data[: len(data) - len(conversion)] + conversion * copies
