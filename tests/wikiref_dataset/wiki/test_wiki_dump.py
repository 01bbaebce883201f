"""Streaming dump pages: plain XML, bz2, a two-stream multistream bz2, filters, errors, constant memory, and damaged
real dumps (truncated, a flipped byte; .bz2, .gz, .7z) keeping the pages before the damage."""

import bz2
import gzip
import re
import tracemalloc
from pathlib import Path

import pytest
from damaged_files import flipped, gzipped, real_file, seven_zipped, truncated

from wikiref_dataset.wiki.dump import DamagedDumpError, DumpError, WikiPage, damaged_dump_stat, iter_pages

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wiki"
TINY_DUMP = FIXTURES / "tiny-dump.xml"


def _split_after_second_page(xml: str) -> tuple[str, str]:
    cut = xml.index("</page>", xml.index("</page>") + 1) + len("</page>")
    return xml[:cut], xml[cut:]


@pytest.fixture(scope="module")
def dumps(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("dumps")
    xml = TINY_DUMP.read_text(encoding="utf-8")
    plain_bz2 = folder / "tiny-dump.xml.bz2"
    plain_bz2.write_bytes(bz2.compress(xml.encode("utf-8")))
    # a multistream dump: independent bz2 streams written one after the other
    first, second = _split_after_second_page(xml)
    multistream = folder / "tiny-dump-multistream.xml.bz2"
    multistream.write_bytes(bz2.compress(first.encode("utf-8")) + bz2.compress(second.encode("utf-8")))
    gz = folder / "tiny-dump.xml.gz"
    gz.write_bytes(gzip.compress(xml.encode("utf-8")))
    return {"xml": TINY_DUMP, "bz2": plain_bz2, "multistream": multistream, "gz": gz}


@pytest.mark.parametrize("kind", ["xml", "bz2", "multistream", "gz"])
def test_every_format_gives_the_same_pages(dumps, kind):
    pages = list(iter_pages(dumps[kind]))
    assert [page.title for page in pages] == ["Alpha Town", "Beta Village"]
    first = pages[0]
    assert isinstance(first, WikiPage)
    assert (first.page_id, first.namespace, first.revision_id, first.timestamp, first.redirect) == (
        101, 0, 1001, "2020-01-02T03:04:05Z", None)
    assert first.text.startswith("'''Alpha Town''' is a town.<ref>")


def test_multistream_really_has_two_streams(dumps):
    data = dumps["multistream"].read_bytes()
    assert data.count(b"BZh") >= 2
    assert bz2.BZ2Decompressor().decompress(data).count(b"<page>") == 2  # one decompressor stops after stream 1


def test_namespace_and_redirect_filters():
    everything = list(iter_pages(TINY_DUMP, namespaces=None, skip_redirects=False))
    assert [(page.page_id, page.namespace) for page in everything] == [(101, 0), (102, 0), (103, 1), (104, 0)]
    assert everything[1].redirect == "Alpha Town"
    assert [page.page_id for page in iter_pages(TINY_DUMP, namespaces=(1,))] == [103]
    assert [page.page_id for page in iter_pages(TINY_DUMP, skip_redirects=False)] == [101, 102, 104]


def test_dump_without_siteinfo(tmp_path):
    xml = TINY_DUMP.read_text(encoding="utf-8")
    start, end = xml.index("<siteinfo>"), xml.index("</siteinfo>") + len("</siteinfo>")
    path = tmp_path / "no-siteinfo.xml"
    path.write_text(xml[:start] + xml[end:], encoding="utf-8")
    assert [page.page_id for page in iter_pages(path)] == [101, 104]


@pytest.mark.parametrize("name, content", [
    ("garbage.xml.bz2", b"this is not bzip2 data"),
    ("garbage.xml", b"not xml at all <<<"),
    ("truncated.xml", b"<mediawiki><page><title>X</title>"),
    ("notes.txt", b"<mediawiki/>"),
])
def test_unreadable_files_raise_naming_the_file(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DumpError, match=name.replace(".", r"\.")):
        list(iter_pages(path))


def test_missing_file(tmp_path):
    with pytest.raises(DumpError, match="no such dump file"):
        list(iter_pages(tmp_path / "absent.xml.bz2"))


def _write_big_dump(path: Path, pages: int) -> None:
    head = TINY_DUMP.read_text(encoding="utf-8").split("<page>", 1)[0]
    text = "Some text."
    with bz2.open(path, "wt", encoding="utf-8") as handle:
        handle.write(head)
        for page_id in range(1, pages + 1):
            handle.write(f"<page><title>Page {page_id}</title><ns>0</ns><id>{page_id}</id><revision><id>{page_id}"
                         f"</id><timestamp>2020-01-01T00:00:00Z</timestamp><text>{text}</text></revision></page>\n")
        handle.write("</mediawiki>\n")


def test_memory_does_not_grow_with_the_number_of_pages(tmp_path):
    path = tmp_path / "big.xml.bz2"
    _write_big_dump(path, 3000)
    tracemalloc.start()
    try:
        sizes = {}
        for count, _page in enumerate(iter_pages(path), start=1):
            if count in (500, 3000):
                sizes[count] = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert count == 3000
    # mwxml alone keeps an emptied <page> element per page on the root (~50 bytes each: +125 kB here, ~1 GB for
    # English Wikipedia); iter_pages detaches them, so the traced memory stays flat
    assert sizes[3000] - sizes[500] < 40_000, sizes


# ---- damaged dumps: every page read before the damage is yielded, then DamagedDumpError names the file ---------


@pytest.fixture(scope="module")
def real_sample(tmp_path_factory) -> tuple[bytes, list[WikiPage], bytes]:
    """The real pages-articles sample (206 pages, 106 articles): its bz2 bytes, its articles, and as a .7z."""
    path = real_file("wikipedia_dump/enwiki-pages-articles-sample.xml.bz2")
    data = path.read_bytes()
    archive = seven_zipped(bz2.decompress(data), "sample.xml", tmp_path_factory.mktemp("7z") / "sample.xml.7z")
    return data, list(iter_pages(path)), archive.read_bytes()


def _damaged_sample(kind: str, real_sample: tuple, folder: Path, monkeypatch) -> Path:
    data, _, archive = real_sample
    xml = bz2.decompress(data)
    if kind == "truncated .bz2":
        return truncated(data, folder / "sample.xml.bz2", 0.5)
    if kind == "flipped byte .bz2":
        return flipped(data, folder / "sample.xml.bz2", 0.5)
    if kind == "truncated .gz":
        return truncated(gzipped(xml), folder / "sample.xml.gz", 0.5)
    if kind == "flipped byte .gz":
        return flipped(gzipped(xml), folder / "sample.xml.gz", 0.5)
    monkeypatch.setattr("wikiref_dataset.wiki.sevenzip.find_7z_command", lambda: None)  # py7zr on every machine
    if kind == "truncated .7z":  # a 7z archive keeps its headers at the end: nothing is readable
        return truncated(archive, folder / "sample.xml.7z", 0.5)
    # py7zr hands over blocks of up to 128 MB; a real dump has many, this 6 MB sample one: shrink them to see the
    # blocks decompressed before the flipped byte kept
    monkeypatch.setattr("py7zr.py7zr.get_memory_limit", lambda: 1 << 16)
    return flipped(archive, folder / "sample.xml.7z", 0.5)


@pytest.mark.parametrize("kind, kept", [
    ("truncated .bz2", 38), ("flipped byte .bz2", 38), ("truncated .gz", None), ("flipped byte .gz", None),
    ("truncated .7z", 0), ("flipped byte .7z", None),
])
def test_damaged_dump_yields_the_pages_before_the_damage(real_sample, tmp_path, monkeypatch, kind, kept):
    articles = real_sample[1]
    path = _damaged_sample(kind, real_sample, tmp_path, monkeypatch)
    pages = []
    with pytest.raises(DamagedDumpError, match=re.escape(str(path))) as raised:
        for page in iter_pages(path):
            pages.append(page)
    assert pages == articles[: len(pages)]  # the pages before the damage, whole and in order; the cut one is not
    if kept is not None:
        assert len(pages) == kept
    else:
        assert 0 < len(pages) < len(articles)
    print(f"{kind} at 50%: {len(pages)} of {len(articles)} articles kept ({raised.value.reason})")
    assert raised.value.path == str(path) and raised.value.reason.split(":")[0] in (
        "EOFError", "OSError", "ParseError", "MalformedXML")
    assert damaged_dump_stat(raised.value) == f"damaged_dump/{path.name} ({raised.value.reason})"
