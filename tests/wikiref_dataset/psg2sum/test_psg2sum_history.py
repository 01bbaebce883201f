"""Revision streaming of pages-meta-history dumps (wikiref_dataset/psg2sum/history.py)."""

import bz2
import tracemalloc
from pathlib import Path

import pytest
from damaged_files import flipped, gzipped, real_file, seven_zipped, truncated, two_page_history

from wikiref_dataset.psg2sum.history import iter_histories
from wikiref_dataset.wiki.dump import DamagedDumpError, DumpError

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "psg2sum" / "history.xml"
REALDATA = Path(__file__).resolve().parents[4] / "shared" / "realdata" / "revision_history"


def test_fixture_revisions_and_malformed_ones():
    pages = [(page, list(page.revisions)) for page in iter_histories(FIXTURE)]
    assert [page.page_id for page, _ in pages] == [1]  # Talk: page and redirect left out
    revisions = pages[0][1]
    assert [r.revision_id for r in revisions] == list(range(101, 112))
    assert revisions[0].parent_id is None and revisions[1].parent_id == 101
    deleted = next(r for r in revisions if r.revision_id == 105)
    missing = next(r for r in revisions if r.revision_id == 106)
    assert deleted.text_deleted and deleted.text is None
    assert not missing.text_deleted and missing.text is None
    assert revisions[1].timestamp == "2020-01-02T00:00:00Z"


def test_namespaces_redirects_and_sharding():
    everything = [page.page_id for page in iter_histories(FIXTURE, namespaces=None, skip_redirects=False)]
    assert everything == [1, 2, 3]
    shards = [[page.page_id for page in iter_histories(FIXTURE, None, False, rank, 2)] for rank in range(2)]
    assert shards == [[1, 3], [2]]
    with pytest.raises(ValueError):
        list(iter_histories(FIXTURE, rank=2, world_size=2))


def test_errors_name_the_file(tmp_path):
    with pytest.raises(DumpError, match="no such dump file"):
        list(iter_histories(tmp_path / "missing.xml"))
    broken = tmp_path / "broken.xml"
    broken.write_text("<mediawiki><page><title>x</title><ns>0</ns><id>1</id><revision><id>1</id>")
    with pytest.raises(DumpError, match="broken.xml"):
        for page in iter_histories(broken):
            list(page.revisions)
    unknown = tmp_path / "dump.xml.lzma"
    unknown.write_bytes(b"7z")
    with pytest.raises(DumpError, match="unknown dump format"):
        list(iter_histories(unknown))


def test_memory_does_not_grow_with_revisions(tmp_path):
    """Each <revision> is detached from its <page> once read: 20,000 revisions leave no trace (without the
    detaching, the emptied elements alone peak at about 1.9 MB here; with it, about 0.3 MB)."""
    revisions = "".join(f"<revision><id>{i}</id><timestamp>2020-01-01T00:00:00Z</timestamp><text>t{i}</text>"
                        "</revision>" for i in range(20_000))
    path = tmp_path / "big.xml.bz2"
    path.write_bytes(bz2.compress(f"<mediawiki><page><title>Big</title><ns>0</ns><id>7</id>{revisions}"
                                  "</page></mediawiki>".encode()))
    tracemalloc.start()
    count = 0
    for page in iter_histories(path):
        for _ in page.revisions:
            count += 1
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 20_000
    assert peak < 1_000_000


@pytest.mark.skipif(not REALDATA.is_dir(), reason="../shared/realdata/revision_history is not present")
def test_real_histories():
    def revisions(name):
        return [(page.title, len(list(page.revisions))) for page in iter_histories(REALDATA / name)]

    assert revisions("derived_Anarchism_history_first400.xml.bz2") == [("Anarchism", 400)]
    assert revisions("derived_Anarchism_history_rev6000_6300.xml.bz2") == [("Anarchism", 300)]
    assert revisions("pywikibot_xml/article-pear.xml") == [("Pear", 4)]
    assert revisions("pywikibot_xml/article-pyrus.xml.bz2") == [("Pyrus", 6)]


# ---- damaged history dumps ---------------------------------------------------------------------------------------


def _read_until_damaged(path: Path) -> tuple[list[tuple[int, list[int]]], DamagedDumpError]:
    pages = []
    with pytest.raises(DamagedDumpError) as raised:
        for page in iter_histories(path):
            pages.append((page.page_id, []))
            for revision in page.revisions:
                pages[-1][1].append(revision.revision_id)
    return pages, raised.value


@pytest.mark.parametrize("compression", ["bz2", "gz"])
def test_truncated_history_keeps_the_revisions_before_the_cut(tmp_path, compression):
    xml = two_page_history()
    whole = [(page.page_id, [r.revision_id for r in page.revisions]) for page in iter_histories(_xml(tmp_path, xml))]
    assert [len(revisions) for _, revisions in whole] == [400, 300]
    data = bz2.compress(xml) if compression == "bz2" else gzipped(xml)
    path = truncated(data, tmp_path / f"cut.xml.{compression}", 0.7)  # inside the second page
    pages, error = _read_until_damaged(path)
    assert pages[0] == whole[0]  # the first page whole
    assert len(pages) == 2 and 0 < len(pages[1][1]) < 300 and pages[1][1] == whole[1][1][: len(pages[1][1])]
    assert error.path == str(path) and error.reason.startswith("EOFError")


def test_corrupt_7z_history_keeps_the_revisions_before_the_damage(tmp_path, monkeypatch):
    window = bz2.decompress(real_file("revision_history/derived_Anarchism_history_first400.xml.bz2").read_bytes())
    archive = seven_zipped(window, "history.xml", tmp_path / "whole.xml.7z").read_bytes()
    monkeypatch.setattr("wikiref_dataset.wiki.sevenzip.find_7z_command", lambda: None)  # py7zr on every machine
    monkeypatch.setattr("py7zr.py7zr.get_memory_limit", lambda: 1 << 16)  # blocks of a big dump, not one of 6 MB
    whole = [r.revision_id for page in iter_histories(_xml(tmp_path, window)) for r in page.revisions]
    pages, error = _read_until_damaged(flipped(archive, tmp_path / "history.xml.7z", 0.5))
    assert 0 < len(pages[0][1]) < 400 and pages[0][1] == whole[: len(pages[0][1])]
    assert "LZMAError" in error.reason
    pages, error = _read_until_damaged(truncated(archive, tmp_path / "history.xml.7z", 0.5))
    assert pages == [] and "Bad7zFile" in error.reason  # the headers are at the end: nothing to read


def _xml(folder: Path, xml: bytes) -> Path:
    path = folder / "whole.xml"
    path.write_bytes(xml)
    return path
