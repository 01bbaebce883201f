"""Tests for wikiref_dataset.web.warc: indexing, lookup preferences, reading back, recovery from bad records, and
the per-file counts on the real WARC files of ../shared/realdata/warc."""

from __future__ import annotations

import gzip
import pickle
import zlib
from pathlib import Path

import pytest

from wikiref_dataset.web.warc import WarcIndex, WarcReadError

PAGE = b"<html><head><title>T</title></head><body><p>Hello archive.</p></body></html>"


def test_index_lookup_and_read(tmp_path: Path, warc_builder) -> None:
    gzipped = zlib.compressobj(wbits=31)
    encoded = gzipped.compress(PAGE) + gzipped.flush()
    chunked = b"".join(f"{len(part):x}\r\n".encode() + part + b"\r\n" for part in (encoded[:20], encoded[20:]))
    chunked += b"0\r\n\r\n"
    warc = (
        warc_builder()
        .response("http://www.Example.com/plain/", PAGE)
        .response("http://example.com/encoded", chunked, headers=[
            ("Content-Type", "text/html"), ("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")])
        .resource("https://example.com/resource", b"<html><p>resource</p></html>")
        .resource("metadata://crawler/log.txt", b"log", content_type="text/plain")
        .request("http://example.com/plain/")
        .revisit("http://example.com/plain/")
        .response("<https://example.com/bracketed>", PAGE)
        .write(tmp_path / "a.warc.gz")
    )  # fmt: skip
    index = WarcIndex()
    stats = index.add(warc)
    assert (stats.layout, stats.indexed, dict(stats.skipped)) == ("gzip-members", 4, {})
    assert dict(stats.ignored) == {"warcinfo": 1, "request": 1, "revisit": 1, "non_http_uri": 1}
    assert len(index) == 4

    capture = index.lookup("https://example.com/plain?utm_source=wiki#section")
    assert capture is not None and capture.status == 200 and capture.date == "2020-01-01T00:00:00Z"
    assert capture.content_type == "text/html; charset=utf-8" and capture.layout == "gzip-members"
    assert index.read(capture) == PAGE
    assert index.read(index.lookup("http://example.com/encoded")) == PAGE  # chunked + gzip decoded
    resource = index.lookup("http://example.com/resource")
    assert resource.record_type == "resource" and resource.content_type == "text/html"
    assert index.read(resource) == b"<html><p>resource</p></html>"
    assert index.lookup("https://example.com/bracketed").url == "https://example.com/bracketed"
    wayback = "https://web.archive.org/web/20200101000000/http://example.com/plain"
    assert index.lookup(wayback) == capture
    assert index.lookup("http://example.com/never-captured") is None
    with pytest.raises(WarcReadError) as error:
        index.read(capture, max_bytes=10)
    assert error.value.reason == "too_large" and str(capture.path) in str(error.value)


def test_lookup_near_a_date_takes_the_nearest_capture(tmp_path: Path, warc_builder) -> None:
    from datetime import datetime, timezone

    warc = (
        warc_builder()
        .response("http://example.com/page", b"<html>2019</html>", date="2019-01-01T00:00:00Z")
        .response("http://example.com/page", b"<html>2021</html>", date="2021-06-01T00:00:00Z")
        .response("http://example.com/page", b"<html>2016</html>", date="2016-03-01T00:00:00Z")
        .response("http://example.com/page", b"gone", status="404 Not Found", date="2019-01-02T00:00:00Z")
        .response("http://example.com/old", b"", status="301 Moved Permanently", headers=[("Location", "/a")],
                  date="2015-01-01T00:00:00Z")
        .response("http://example.com/old", b"", status="301 Moved Permanently", headers=[("Location", "/b")],
                  date="2022-01-01T00:00:00Z")
        .response("http://example.com/a", b"<html>a</html>")
        .response("http://example.com/b", b"<html>b</html>")
        .write(tmp_path / "dated.warc.gz")
    )  # fmt: skip
    index = WarcIndex()
    index.add(warc)

    def read(url: str, year: int | None) -> bytes:
        near = datetime(year, 1, 1, tzinfo=timezone.utc) if year else None
        return index.read(index.lookup(url, near=near))

    assert read("http://example.com/page", None) == b"<html>2021</html>"  # no date: the latest 200
    assert read("http://example.com/page", 2018) == b"<html>2019</html>"  # the nearest 200, never the 404
    assert read("http://example.com/page", 2010) == b"<html>2016</html>"
    assert read("http://example.com/old", 2014) == b"<html>a</html>"  # the redirect captured nearest the date
    assert read("http://example.com/old", 2023) == b"<html>b</html>"


def test_prefers_latest_200_and_follows_captured_redirects(tmp_path: Path, warc_builder) -> None:
    warc = (
        warc_builder()
        .response("http://example.com/page", b"<html>old</html>", date="2019-01-01T00:00:00Z")
        .response("http://example.com/page", b"<html>new</html>", date="2021-06-01T00:00:00Z")
        .response("http://example.com/page", b"gone", status="404 Not Found", date="2022-01-01T00:00:00Z")
        .response("http://example.com/old", b"", status="301 Moved Permanently",
                  headers=[("Location", "/new/")], date="2020-01-01T00:00:00Z")
        .response("http://example.com/new", b"<html>moved here</html>")
        .response("http://example.com/loop-a", b"", status="302 Found", headers=[("Location", "/loop-b")])
        .response("http://example.com/loop-b", b"", status="302 Found", headers=[("Location", "/loop-a")])
        .response("http://example.com/dead", b"", status="302 Found", headers=[("Location", "/nowhere")])
        .response("http://example.com/missing", b"no", status="404 Not Found")
        .write(tmp_path / "b.warc", compress=False)
    )  # fmt: skip
    index = WarcIndex()
    assert index.add(warc).indexed == 9
    assert index.read(index.lookup("http://example.com/page")) == b"<html>new</html>"
    assert [c.status for c in index.captures("http://example.com/page")] == [200, 200, 404]

    moved = index.lookup("http://example.com/old")
    assert moved.url == "http://example.com/new" and moved.redirected_from == ("http://example.com/old",)
    assert index.read(moved) == b"<html>moved here</html>"
    loop = index.lookup("http://example.com/loop-a")  # stops, returns the redirect itself
    assert loop.status == 302 and loop.url == "http://example.com/loop-a"
    assert index.lookup("http://example.com/dead").status == 302
    assert index.lookup("http://example.com/missing").status == 404
    assert index.lookup("http://example.com/old", max_redirects=0).status == 301


def test_post_responses_are_ignored(tmp_path: Path, warc_builder) -> None:
    warc = (
        warc_builder()
        .response("http://example.com/form", b"<html>posted</html>", record_id="<urn:uuid:post-response>")
        .request("http://example.com/form", "POST", concurrent_to="<urn:uuid:post-response>")
        .response("http://example.com/get", b"<html>got</html>", record_id="<urn:uuid:get-response>")
        .request("http://example.com/get", "GET", concurrent_to="<urn:uuid:get-response>")
        .write(tmp_path / "post.warc.gz")
    )  # fmt: skip
    index = WarcIndex()
    stats = index.add(warc)
    assert stats.indexed == 1 and stats.ignored["non_get_response"] == 1
    assert index.lookup("http://example.com/form") is None and index.lookup("http://example.com/get")


def test_bad_records_are_skipped_and_reading_resumes(tmp_path: Path, warc_builder) -> None:
    first = warc_builder().response("http://example.com/1", PAGE).write_bytes(compress=True)
    second = warc_builder().response("http://example.com/2", PAGE).write_bytes(compress=True)
    garbage = gzip.compress(b"this is not a WARC record at all\r\n\r\n")
    broken_member = b"\x1f\x8b\x08\x00" + b"\x00" * 40  # a gzip header followed by nonsense
    path = tmp_path / "damaged.warc.gz"
    path.write_bytes(first + garbage + broken_member + second)
    index = WarcIndex()
    stats = index.add(path)
    # the garbage record and the broken member after it are one corrupt stretch
    assert (stats.layout, stats.indexed, dict(stats.skipped)) == ("gzip-members", 2, {"corrupt_record": 1})
    assert dict(stats.ignored) == {"warcinfo": 2}
    assert index.read(index.lookup("http://example.com/2")) == PAGE

    plain_first = warc_builder().response("http://example.com/3", PAGE).write_bytes(compress=False)
    plain_second = warc_builder().response("http://example.com/4", PAGE).write_bytes(compress=False)
    plain = tmp_path / "damaged.warc"
    plain.write_bytes(plain_first + b"GARBAGE LINE\r\nmore garbage\r\n\r\n" + plain_second)
    stats = index.add(plain)
    assert stats.layout == "uncompressed" and stats.indexed == 2 and stats.skipped == {"corrupt_record": 1}
    assert index.read(index.lookup("http://example.com/4")) == PAGE


def test_truncated_record_is_skipped(tmp_path: Path, warc_builder) -> None:
    data = warc_builder().response("http://example.com/ok", PAGE).response("http://example.com/cut", PAGE * 50)
    raw = data.write_bytes(compress=False)
    path = tmp_path / "cut.warc"
    path.write_bytes(raw[: len(raw) - 500])
    stats = WarcIndex().add(path)
    assert stats.indexed == 1 and stats.skipped == {"truncated": 1}


def test_whole_file_gzip_is_read_as_a_stream(tmp_path: Path, warc_builder) -> None:
    plain = warc_builder().response("http://example.com/x", PAGE).response("http://example.com/y", b"<p>y</p>")
    path = tmp_path / "single-member.warc.gz"
    path.write_bytes(gzip.compress(plain.write_bytes(compress=False)))
    index = WarcIndex()
    stats = index.add(path)
    assert (stats.layout, stats.indexed, dict(stats.skipped)) == ("gzip-stream", 2, {})
    capture = index.lookup("http://example.com/y")
    assert capture.layout == "gzip-stream" and index.read(capture) == b"<p>y</p>"


def test_spaces_in_target_uri(tmp_path: Path, warc_builder) -> None:
    path = warc_builder().response("http://example.com/a page.html", PAGE).write(tmp_path / "space.warc.gz")
    index = WarcIndex()
    assert index.add(path).indexed == 1
    assert index.lookup("http://example.com/a page.html").url == "http://example.com/a%20page.html"


def test_persistence_resume_and_pickling(tmp_path: Path, warc_builder) -> None:
    warc = warc_builder().response("http://example.com/p", PAGE).write(tmp_path / "p.warc.gz")
    db = tmp_path / "index" / "warc.sqlite"
    with WarcIndex.build([warc, tmp_path / "missing.warc.gz"], db) as index:
        assert index.stats.indexed == 1 and index.stats.unreadable_files == 0  # a missing file is not stored
    with WarcIndex(db) as reopened:
        assert reopened.lookup("http://example.com/p") is not None
        again = reopened.add(warc)  # unchanged: not read again
        assert again.indexed == 1 and len(reopened) == 1
        clone = pickle.loads(pickle.dumps(reopened))
        assert clone.read(clone.lookup("http://example.com/p")) == PAGE
        clone.close()
    warc_builder().response("http://example.com/p", PAGE).response("http://example.com/q", PAGE).write(warc)
    with WarcIndex(db) as changed:
        assert changed.add(warc).indexed == 2 and len(changed) == 2  # changed file: indexed again, no duplicates
    missing = WarcIndex().add(tmp_path / "missing.warc.gz")
    assert missing.error and "missing.warc.gz" in missing.path
    with pytest.raises(TypeError):
        pickle.dumps(WarcIndex())
    not_an_index = tmp_path / "text.sqlite"
    not_an_index.write_text("hello, I am not a database " * 20)
    with pytest.raises(ValueError, match="not a WARC index"):
        WarcIndex(not_an_index)


# Every file of ../shared/realdata/warc: (path, layout, records, indexed, skipped, ignored)
# Why these counts:
# - dolma: wget WARCs, one response per request (22 and 15), plus wget's metadata:// resources (ignored);
# - resiliparse/clipped: its only response is cut before its Content-Length (truncated);
# - resiliparse/clueweb-quirk: WARC/0.18 records with LF-only HTTP headers and invalid dates: all 29 usable;
# - resiliparse/warcfile: 16 responses; 17 requests (the last response is not in the excerpt);
# - bad.arc: three ARC records with lengths -1, 1 and "abc";
# - example-bad-non-chunked / example-bad.warc.gz.bad / example-wrong-chunks: gzip not one member per record,
#   read as one stream: every response found (1, 2 — a 200 and a 302 —, and 1);
# - example-space-in-url.arc: its record ends 12 bytes before its declared length (truncated);
# - example-trunc.warc: a Content-Length 2 bytes short: indexed with a warning;
# - post-test: three responses to POST requests, which are not pages a citation links to;
# - whirlwind WAT/WET: metadata and conversion records only.
REAL_WARCS = [
    ("dolma/sample-0000.warc.gz", "gzip-members", 48, 22, {}, {"metadata": 1, "non_http_uri": 2, "request": 22,
                                                              "warcinfo": 1}),
    ("dolma/sample-0001.warc.gz", "gzip-members", 34, 15, {}, {"metadata": 1, "non_http_uri": 2, "request": 15,
                                                              "warcinfo": 1}),
    ("resiliparse/clipped.warc.gz", "gzip-members", 1, 0, {"truncated": 1}, {}),
    ("resiliparse/clueweb-quirk.warc.gz", "gzip-members", 30, 29, {}, {"warcinfo": 1}),
    ("resiliparse/warcfile.warc.gz", "gzip-members", 50, 16, {}, {"metadata": 16, "request": 17, "warcinfo": 1}),
    ("warcio_testdata/test/data/bad.arc", "uncompressed", 4, 0, {"bad_content_length": 2, "bad_http_status": 1},
     {"warcinfo": 1}),
    ("warcio_testdata/test/data/example-bad-non-chunked.warc.gz", "gzip-stream", 6, 1, {},
     {"request": 2, "revisit": 1, "warcinfo": 2}),
    ("warcio_testdata/test/data/example-bad.warc.gz.bad", "gzip-stream", 6, 2, {},
     {"request": 2, "revisit": 1, "warcinfo": 1}),
    ("warcio_testdata/test/data/example-digest.warc", "uncompressed", 4, 0, {}, {"request": 4}),
    ("warcio_testdata/test/data/example-iana.org-chunked.warc", "uncompressed", 3, 1, {},
     {"request": 1, "warcinfo": 1}),
    ("warcio_testdata/test/data/example-resource.warc.gz", "gzip-members", 3, 1, {}, {"warcinfo": 2}),
    ("warcio_testdata/test/data/example-space-in-target-uri.warc.gz", "gzip-members", 2, 0, {},
     {"non_http_uri": 1, "warcinfo": 1}),
    ("warcio_testdata/test/data/example-space-in-url.arc", "uncompressed", 2, 0, {"truncated": 1}, {"warcinfo": 1}),
    ("warcio_testdata/test/data/example-trunc.warc", "uncompressed", 4, 1, {}, {"request": 1, "warcinfo": 2}),
    ("warcio_testdata/test/data/example-wget-bad-target-uri.warc.gz", "gzip-members", 6, 1, {},
     {"metadata": 1, "non_http_uri": 2, "request": 1, "warcinfo": 1}),
    ("warcio_testdata/test/data/example-wrong-chunks.warc.gz", "gzip-stream", 2, 1, {}, {"request": 1}),
    ("warcio_testdata/test/data/example.arc", "uncompressed", 2, 1, {}, {"warcinfo": 1}),
    ("warcio_testdata/test/data/example.arc.gz", "gzip-members", 2, 1, {}, {"warcinfo": 1}),
    ("warcio_testdata/test/data/example.warc", "uncompressed", 6, 1, {}, {"request": 2, "revisit": 1, "warcinfo": 2}),
    ("warcio_testdata/test/data/example.warc.gz", "gzip-members", 6, 1, {},
     {"request": 2, "revisit": 1, "warcinfo": 2}),
    ("warcio_testdata/test/data/post-test.warc.gz", "gzip-members", 6, 0, {}, {"non_get_response": 3, "request": 3}),
    ("whirlwind/whirlwind.warc.gz", "gzip-members", 4, 1, {}, {"metadata": 1, "request": 1, "warcinfo": 1}),
    ("whirlwind/whirlwind.warc.wat.gz", "gzip-members", 2, 0, {}, {"metadata": 1, "warcinfo": 1}),
    ("whirlwind/whirlwind.warc.wet.gz", "gzip-members", 2, 0, {}, {"conversion": 1, "warcinfo": 1}),
]


def test_real_warc_files_are_all_listed(realdata: Path) -> None:
    root = realdata / "warc"
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != "LICENSE"}
    assert on_disk == {row[0] for row in REAL_WARCS}


@pytest.mark.parametrize(("name", "layout", "records", "indexed", "skipped", "ignored"), REAL_WARCS,
                         ids=[row[0].rsplit("/", 1)[-1] for row in REAL_WARCS])
def test_real_warc_counts(realdata: Path, name: str, layout: str, records: int, indexed: int, skipped: dict,
                          ignored: dict) -> None:
    index = WarcIndex()
    stats = index.add(realdata / "warc" / name)
    assert stats.error is None
    assert (stats.layout, stats.records, stats.indexed, dict(stats.skipped), dict(stats.ignored)) == (
        layout, records, indexed, skipped, ignored)
    assert stats.records == stats.indexed + sum(stats.skipped.values()) + sum(stats.ignored.values())
    for capture in index.iter_captures():  # every indexed capture reads back
        body = index.read(capture)
        assert capture.status != 200 or body, capture.record


def test_real_warc_warnings_and_lookup(realdata: Path) -> None:
    root = realdata / "warc"
    index = WarcIndex()
    assert index.add(root / "resiliparse/clueweb-quirk.warc.gz").warnings == {"bad_date": 29}
    assert index.add(root / "warcio_testdata/test/data/example-trunc.warc").warnings == {"content_length_mismatch": 1}
    index.add_many([root / "dolma/sample-0001.warc.gz", root / "warcio_testdata/test/data/example-bad.warc.gz.bad"])
    latest = index.lookup("https://www.allenai.org")  # three captures: the latest is returned
    assert latest.date == "2024-04-25T16:27:54Z" and len(index.captures("allenai.org/")) == 3
    quirk = index.lookup("http://www.uraharajuku.st/shopdetail/001005000005/019/000/order/")
    assert b"HEADPORTER" in index.read(quirk)  # Content-Encoding says gzip, the body is not: read as is
    redirect = index.lookup("http://www.iana.org/domains/example")
    assert redirect.status == 302  # its target was not captured


# ---- damaged real WARC files: the records before the damage are kept, the damage is counted per file -------------


def _captures(index: WarcIndex) -> list[tuple[str, bytes]]:
    return [(capture.url, index.read(capture)) for capture in index.iter_captures()]


@pytest.mark.parametrize("name, damage, kept, counts", [
    ("dolma/sample-0000.warc.gz", "truncated", 13, {"truncated": 1}),  # 22 responses
    ("dolma/sample-0000.warc.gz", "flipped", 21, {"corrupt_record": 1}),  # a WARC header garbled
    ("resiliparse/warcfile.warc.gz", "truncated", 6, {"truncated": 1}),  # 16 responses
    ("resiliparse/warcfile.warc.gz", "flipped", 15, {"corrupt_record": 1}),  # a member's checksum fails
    ("dolma/sample-0000.warc.gz", "truncated stream", 14, {"truncated": 1}),  # one gzip stream, not per record
])
def test_damaged_real_warc_keeps_the_records_around_the_damage(realdata, tmp_path, capsys, name, damage, kept,
                                                                counts) -> None:
    from damaged_files import flipped, gzipped, truncated

    from wikiref_dataset.web.warc import warc_damage_counts

    source = realdata / "warc" / name
    with WarcIndex() as index:
        index.add(source)
        whole = _captures(index)
    if damage == "flipped":
        path = flipped(source.read_bytes(), tmp_path / source.name, 0.5)
    else:
        data = source.read_bytes() if damage == "truncated" else gzipped(gzip.decompress(source.read_bytes()))
        path = truncated(data, tmp_path / source.name, 0.5)
    with WarcIndex() as index:
        stats = index.add(path)
        captures = _captures(index)
        summary = index.stats.format()  # the archive line of `wikiref documents`
    assert f"damaged: {path}: " in summary
    assert stats.damage() == counts and stats.indexed == len(captures) == kept
    assert stats.layout == ("gzip-stream" if damage == "truncated stream" else "gzip-members")
    if damage != "flipped":
        assert captures == whole[:kept]  # every record before the cut, bodies included
    else:
        assert set(captures) < set(whole)  # all but the damaged record, before and after it
    assert warc_damage_counts([stats]) == {**{f"WARC {path.name}: {reason}": n for reason, n in counts.items()},
                                           f"WARC {path.name}: captures kept": kept}
    assert "incorrect data check" not in capsys.readouterr().err  # warcio's own message no longer leaks to stderr
