"""Common Crawl as a source of cited pages, against real servers on 127.0.0.1.

The statements are extracted from the real sample dump with the project's extractor; real news pages are written
as WARC captures of URLs those statements cite, with capture dates around the citations' access-dates, a redirect,
a 404, a PDF and a record whose WARC file is not served. pywb indexes the WARC files (and real Common Crawl WARCs)
into two collections named after crawls and serves its CDX API; werkzeug serves the WARC files (and the Parquet
index) with Range support. The same captures also form a columnar URL index with Common Crawl's schema; both
lookups must give the same documents.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("pywb")
pytest.importorskip("cdx_toolkit")
pytest.importorskip("duckdb")

from archive_servers import Capture, pywb_server, range_server, write_columnar_index, write_warc  # noqa: E402

from wikiref_dataset.web.captures import choose_capture, citation_date, target_date  # noqa: E402
from wikiref_dataset.web.commoncrawl import (  # noqa: E402
    CaptureRequest,
    CaptureTable,
    CdxServer,
    CommonCrawl,
    CommonCrawlConfig,
    IndexedCapture,
    IndexLookupError,
    WarcRecordReader,
    file_key_ranges,
    files_for_keys,
    index_shares,
)
from wikiref_dataset.web.documents import CitedDocument, DocumentSources, citation_key, run_documents  # noqa: E402
from wikiref_dataset.web.urls import normalize_url  # noqa: E402
from wikiref_dataset.web.warc import WarcReadError  # noqa: E402

REALDATA = Path(__file__).resolve().parents[4] / "shared" / "realdata"
DUMP = REALDATA / "wikipedia_dump" / "enwiki-pages-articles-sample.xml.bz2"
NEWS = REALDATA / "html_news" / "trafilatura"
REAL_WARC = REALDATA / "warc" / "resiliparse" / "warcfile.warc.gz"
NEW, OLD = "CC-MAIN-2024-10", "CC-MAIN-2023-50"  # crawls, newest first
SAMPLE_CRAWL = "CC-MAIN-2024-26"  # the embedded sample's pages, for the end-to-end build

pytestmark = pytest.mark.skipif(not (DUMP.is_file() and NEWS.is_dir() and REAL_WARC.is_file()),
                                reason="../shared/realdata is not present")


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Expected:
    """What the documents stage must make of one cited URL."""

    url: str
    status: str
    capture_date: str | None = None
    warc_filename: str | None = None
    final_url: str | None = None
    page: str | None = None  # the news page the chosen capture holds (its extracted title and text must match)


@dataclass
class Archive:
    root: Path
    statements: Path
    cdx_api: str  # with {crawl}
    data_url: str  # the WARC files, over HTTP
    columnar: Path
    columnar_listing: Path  # the same files over HTTP, as a .paths listing
    expected: dict[str, Expected]  # normalized URL -> expectation
    cited: int  # distinct normalized URLs cited by the statements
    asked: int  # those that normalize (the others are bad_url, not looked up)
    real_url: str  # a URL of the real Common Crawl WARC
    sample: SampleSplit | None = None


@dataclass
class SampleSplit:
    """The embedded sample's pages, half in a local WARC file and half in Common Crawl (one behind a redirect, one
    with an older capture of another page)."""

    local_warc: Path
    local: dict[str, int] = field(default_factory=dict)  # URL -> offset in the local WARC
    crawled: dict[str, str] = field(default_factory=dict)  # cited URL -> final URL
    moved: str = ""  # the cited URL that redirects


def _split_sample(data: Path, root: Path) -> tuple[SampleSplit, Path]:
    from warcio.archiveiterator import ArchiveIterator

    from wikiref_dataset.wikiref.build import sample_inputs

    records = []
    with open(sample_inputs()[1][0], "rb") as handle:
        for record in ArchiveIterator(handle):
            if record.rec_type == "response":
                records.append((record.rec_headers.get_header("WARC-Target-URI"), record.content_stream().read()))
    records.sort()
    split = SampleSplit(root / "local-sample.warc.gz")
    local = [Capture(url, "2024-06-15T00:00:00Z", body) for url, body in records[0::2]]
    crawled: list[Capture] = []
    for number, (url, body) in enumerate(records[1::2]):
        if number == 0:  # captured as a redirect to where the page now is
            split.moved, final = url, url + "/index.html"
            crawled += [Capture(url, "2024-06-20T08:00:00Z", b"", "301 Moved Permanently", location=final),
                        Capture(final, "2024-06-20T08:00:05Z", body)]
        else:
            final = url
            crawled.append(Capture(url, "2024-06-20T08:00:00Z", body))
            if number == 1:  # an older capture of something else: without a citation date the newest wins
                crawled.append(Capture(url, "2023-01-01T00:00:00Z", (NEWS / "wired.com.burn.html").read_bytes()))
        split.crawled[url] = final
    write_warc(split.local_warc, local)
    with open(split.local_warc, "rb") as handle:
        iterator = ArchiveIterator(handle)
        for record in iterator:
            if record.rec_type == "response":
                split.local[record.rec_headers.get_header("WARC-Target-URI")] = iterator.get_record_offset()
    return split, write_warc(data / "sample-cc-00000.warc.gz", crawled)


def _normalizes(url: str) -> bool:
    try:
        normalize_url(url)
    except ValueError:
        return False
    return True


_EXTRACTED: dict[str, tuple[str, str]] = {}


def _extracted(name: str) -> tuple[str, str]:
    """(title, text) the project's extractor gives for a news page."""
    if name not in _EXTRACTED:
        from wikiref_dataset.web.extract import extract_page

        page = extract_page((NEWS / name).read_bytes(), "http://example.com/", "text/html")
        _EXTRACTED[name] = (page.title, page.text)
    return _EXTRACTED[name]


def _statements(limit_pages: int = 40) -> list:
    from wikiref_dataset.wiki.dump import iter_pages
    from wikiref_dataset.wiki.statements import StatementExtractor

    extractor = StatementExtractor()
    statements = []
    for number, page in enumerate(iter_pages(DUMP)):
        statements.extend(extractor.extract(page))
        if number + 1 >= limit_pages:
            break
    return statements


def _pick(statements: list) -> dict[str, object]:
    """The statements whose cited URLs get captures, one per role, each with another normalized URL."""
    roles = {"nearest": "access", "nearest_two": "access", "redirect": "access", "gone": "access", "pdf": "access",
             "unserved": "access", "date_only": "date", "newest": "none"}
    picked: dict[str, object] = {}
    used: set[str] = set()
    for statement in statements:
        citation = statement.citation
        key = citation_key(citation.fetch_url or citation.url or "")
        if key in used:
            continue
        used.add(key)  # the first statement citing a URL gives its dates (the documents stage's rule)
        if citation.fetch_url != citation.url or not citation.url.startswith("http"):
            continue  # the original URL is what Common Crawl is asked for; keep archive-less citations
        kind = ("access" if citation_date(citation.access_date) else "date" if citation_date(citation.date)
                else "none")
        for role, wanted in roles.items():
            if role not in picked and wanted == kind:
                picked[role] = statement
                break
        if len(picked) == len(roles):
            return picked
    raise AssertionError(f"the sample dump lacks citations for roles {set(roles) - set(picked)}")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("commoncrawl")
    statements = _statements()
    statements_file = root / "statements.jsonl.gz"
    with gzip.open(statements_file, "wt", encoding="utf-8") as handle:
        for statement in statements:
            document = statement.to_document()
            handle.write(json.dumps({"text": document.text, "id": document.id, "metadata": document.metadata}) + "\n")
    cited = {citation_key(s.citation.fetch_url) for s in statements if s.citation.fetch_url}
    asked = {key for key in cited if _normalizes(key)}  # the URLs Common Crawl is asked for
    picked = _pick(statements)

    def page(name: str) -> bytes:
        return (NEWS / name).read_bytes()

    def near(role: str) -> datetime:
        citation = picked[role].citation
        return target_date(citation.access_date, citation.date)

    url = {role: picked[role].citation.url for role in picked}
    data = root / "data"  # the files the Range server serves
    data.mkdir()
    at = {role: near(role) for role in picked if role != "newest"}
    moved = url["redirect"].rstrip("/") + "-moved-permanently"
    new_captures = [
        Capture(url["nearest"], iso(at["nearest"] - timedelta(days=40)), page("bbc.com.52241221.html")),
        Capture(url["nearest"], iso(at["nearest"] + timedelta(days=400)), page("nytimes.com.blackouts.html")),
        Capture(url["nearest_two"], iso(at["nearest_two"] + timedelta(days=10)), page("reuters.com.parasite.html")),
        Capture(url["redirect"], iso(at["redirect"] + timedelta(days=3)), b"", "301 Moved Permanently",
                location=moved),
        Capture(moved, iso(at["redirect"] + timedelta(days=3, minutes=1)), page("theverge.com.ios13.html")),
        Capture(url["gone"], iso(at["gone"]), b"<html><body>Not here</body></html>", "404 Not Found"),
        Capture(url["pdf"], iso(at["pdf"]), b"%PDF-1.4 not a page", content_type="application/pdf"),
        Capture(url["date_only"], iso(at["date_only"] + timedelta(days=30)), page("salon.com.emissions.html")),
        Capture(url["newest"], "2024-02-25T10:00:00Z", page("politico.com.retirement.html")),
    ]
    old_captures = [
        Capture(url["nearest"], iso(at["nearest"] - timedelta(days=3 * 365)), page("theguardian.com.academics.html")),
        Capture(url["nearest_two"], iso(at["nearest_two"] - timedelta(days=200)), page("wired.com.burn.html")),
        Capture(url["date_only"], iso(at["date_only"] + timedelta(days=900)), page("nature.com.telescope.html")),
        Capture(url["newest"], "2023-12-05T10:00:00Z", page("economist.com.thinking.html")),
    ]
    new_warc = write_warc(data / "new-00000.warc.gz", new_captures)
    old_warc = write_warc(data / "old-00000.warc.gz", old_captures)
    real_warc = shutil.copy(REAL_WARC, data / "real-cc-2020-34.warc.gz")
    unserved = write_warc(root / "unserved-00000.warc.gz",
                          [Capture(url["unserved"], iso(at["unserved"]), page("vice.com.amazon.html"))])
    expected = {
        normalize_url(url["nearest"]): Expected(url["nearest"], "ok", iso(at["nearest"] - timedelta(days=40)),
                                                new_warc.name, url["nearest"], "bbc.com.52241221.html"),
        normalize_url(url["nearest_two"]): Expected(
            url["nearest_two"], "ok", iso(at["nearest_two"] + timedelta(days=10)), new_warc.name, url["nearest_two"],
            "reuters.com.parasite.html"),
        normalize_url(url["redirect"]): Expected(url["redirect"], "ok", iso(at["redirect"] + timedelta(days=3,
                                                 minutes=1)), new_warc.name, moved,
                                                 "theverge.com.ios13.html"),
        normalize_url(url["gone"]): Expected(url["gone"], "not_found"),
        normalize_url(url["pdf"]): Expected(url["pdf"], "not_html"),
        normalize_url(url["unserved"]): Expected(url["unserved"], "archive_read_error"),
        normalize_url(url["date_only"]): Expected(url["date_only"], "ok",
                                                  iso(at["date_only"] + timedelta(days=30)), new_warc.name,
                                                  url["date_only"], "salon.com.emissions.html"),
        normalize_url(url["newest"]): Expected(url["newest"], "ok", "2024-02-25T10:00:00Z", new_warc.name,
                                               url["newest"], "politico.com.retirement.html"),
    }
    from warcio.archiveiterator import ArchiveIterator

    with open(REAL_WARC, "rb") as handle:
        real_url = next(r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(handle)
                        if r.rec_type == "response" and r.http_headers.get_statuscode() == "200"
                        and "html" in (r.http_headers.get_header("Content-Type") or ""))
    crawls = {NEW: [new_warc, unserved], OLD: [old_warc, Path(real_warc)]}
    sample, sample_warc = _split_sample(data, root)
    columnar = root / "cc-index" / "table" / "cc-main" / "warc"
    parquet_files = write_columnar_index(crawls, columnar)
    served_index = data / "cc-index" / "table" / "cc-main" / "warc"
    shutil.copytree(columnar, served_index)
    listing = root / "cc-index-table.paths.gz"
    with gzip.open(listing, "wt") as handle:  # paths relative to the data server, as Common Crawl lists them
        for path in parquet_files:
            handle.write(str((served_index / path.relative_to(columnar)).relative_to(data)) + "\n")
    with pywb_server(root / "pywb", {**crawls, SAMPLE_CRAWL: [sample_warc]}) as pywb, range_server(data) as data_url:
        yield Archive(root, statements_file, pywb + "/{crawl}/cdx", data_url, columnar, listing, expected,
                      len(cited), len(asked), real_url, sample)


def _config(archive: Archive, **options) -> CommonCrawlConfig:
    return CommonCrawlConfig(crawls=(NEW, OLD), cc_data=archive.data_url, cdx_min_interval_s=0.0, **options)


def _documents(folder: Path) -> dict[str, CitedDocument]:
    documents = {}
    for name in ("documents", "failed"):
        for path in sorted((folder / name).glob("*.jsonl.gz")):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                for line in handle:
                    document = CitedDocument.from_document(json.loads(line))
                    documents[document.normalized_url] = document
    return documents


def _check_expected(archive: Archive, documents: dict[str, CitedDocument]) -> None:
    for key, expected in archive.expected.items():
        document = documents[key]
        assert document.status == expected.status, (key, document.status, document.detail)
        if expected.status != "ok":
            assert document.detail and expected.url.split("//", 1)[1][:20] in document.detail
            continue
        assert document.source == "cc"
        assert document.capture_date == expected.capture_date, key
        assert document.warc_filename == expected.warc_filename
        assert document.final_url == expected.final_url
        assert document.warc_offset is not None and document.warc_length > 0
        assert (document.title, document.text) == _extracted(expected.page), key


def test_cdx_lookups_choose_the_capture_nearest_the_access_date(archive: Archive, tmp_path: Path) -> None:
    started = time.perf_counter()
    summary = run_documents([archive.statements], tmp_path / "out", tasks=2, progress=False,
                            sources=DocumentSources(common_crawl=_config(archive, cdx_api=archive.cdx_api)))
    seconds = time.perf_counter() - started
    documents = _documents(tmp_path / "out")
    assert len(documents) == archive.cited == summary.urls
    _check_expected(archive, documents)
    found = 5
    assert summary.common_crawl == {"found": found, "non_200": 1, "not_html": 1, "fetch_failed": 1,
                                    "not_captured": archive.asked - found - 3}
    assert summary.fetched == {"cc": found}
    assert summary.missing["not_found"] == 1 and summary.missing["not_archived"] == archive.asked - found - 3
    assert summary.failed == {"not_html": 1, "archive_read_error": 1, **({"bad_url": archive.cited - archive.asked}
                                                                          if archive.cited > archive.asked else {})}
    assert "Common Crawl:" in summary.format() and "not_captured" in summary.format()
    redirect = next(d for d in documents.values() if d.final_url and d.final_url.endswith("-moved-permanently"))
    assert normalize_url(redirect.url) != normalize_url(redirect.final_url)
    print(f"\n{archive.cited} URLs through pywb in {seconds:.1f}s")


def test_columnar_index_gives_the_same_documents(archive: Archive, tmp_path: Path) -> None:
    cdx = run_documents([archive.statements], tmp_path / "cdx", progress=False,
                        sources=DocumentSources(common_crawl=_config(archive, cdx_api=archive.cdx_api)))
    local = run_documents([archive.statements], tmp_path / "local", tasks=2, progress=False,
                          sources=DocumentSources(common_crawl=_config(archive, cc_index=str(archive.columnar))))
    remote = run_documents([archive.statements], tmp_path / "remote", progress=False,
                           sources=DocumentSources(common_crawl=_config(archive, cc_index=str(archive.columnar_listing))))
    assert cdx.common_crawl == local.common_crawl == remote.common_crawl
    index_files = sorted(archive.columnar.rglob("*.parquet"))
    assert local.index_files_joined == remote.index_files_joined == len(index_files)  # each file read once
    assert cdx.index_files_joined == 0
    assert 0 < local.index_files_reread < len(index_files) * 2  # only the files that may hold a redirect target
    assert "files joined once" in local.format()
    expected = _documents(tmp_path / "cdx")
    _check_expected(archive, _documents(tmp_path / "local"))
    for folder in ("local", "remote"):
        got = _documents(tmp_path / folder)
        assert got.keys() == expected.keys()
        for key, document in got.items():
            assert document.to_document().metadata | {"detail": ""} == expected[key].to_document().metadata | {
                "detail": ""}, key


def test_one_crawl_only_and_the_newest_crawl_first(archive: Archive) -> None:
    """Without a date the crawls are asked newest first and the first one with a 200 capture answers; with
    one crawl only, the older crawl's captures are not seen."""
    newest = next(e for e in archive.expected.values() if e.capture_date == "2024-02-25T10:00:00Z")
    with CommonCrawl(_config(archive, cdx_api=archive.cdx_api)) as crawl:
        [result] = crawl.resolve([CaptureRequest(newest.url)])
        assert result.outcome == "found" and result.capture.crawl == NEW and crawl.cdx.requests == 1
        nearest = next(e for e in archive.expected.values() if e.page == "bbc.com.52241221.html")
        [old] = crawl.resolve([CaptureRequest(nearest.url, datetime(2000, 1, 1, tzinfo=timezone.utc))])
        assert old.capture.crawl == OLD  # the oldest capture, in the older crawl, is nearest to 2000
    config = CommonCrawlConfig(crawls=(OLD,), cdx_api=archive.cdx_api, cc_data=archive.data_url, cdx_min_interval_s=0)
    with CommonCrawl(config) as crawl:
        [result] = crawl.resolve([CaptureRequest(newest.url)])
        assert result.outcome == "found" and result.capture.timestamp == "2023-12-05T10:00:00Z"
        [real] = crawl.resolve([CaptureRequest(archive.real_url)])  # a real Common Crawl record, read by range
        assert real.outcome == "found" and real.capture.filename == "real-cc-2020-34.warc.gz"
        assert real.capture.timestamp.startswith("2020-08") and b"<" in real.body


def test_reusing_a_documents_folder(archive: Archive, tmp_path: Path) -> None:
    first = run_documents([archive.statements], tmp_path / "first", progress=False,
                          sources=DocumentSources(common_crawl=_config(archive, cc_index=str(archive.columnar))))
    again = run_documents([archive.statements], tmp_path / "again", progress=False,
                          sources=DocumentSources(documents=str(tmp_path / "first")))
    assert again.reused == first.n_fetched == 5 and again.fetched == first.fetched
    before, after = _documents(tmp_path / "first"), _documents(tmp_path / "again")
    for key, document in before.items():
        if document.status == "ok":
            assert after[key] == document
        else:  # no other source: the folder's failure stands, with its reason
            assert after[key].status == document.status
    with pytest.raises(FileNotFoundError, match="not a documents folder"):
        DocumentSources(documents=str(tmp_path))


def test_record_reader_errors_name_the_file(archive: Archive, tmp_path: Path) -> None:
    capture = IndexedCapture("http://example.com/", "2024-01-01T00:00:00Z", 200, "text/html", "new-00000.warc.gz",
                             10 ** 9, 500)
    with pytest.raises(WarcReadError, match=r"new-00000\.warc\.gz.*beyond the end"):
        WarcRecordReader(archive.data_url, retries=0).read(capture)
    with pytest.raises(WarcReadError, match=r"nothere\.warc\.gz: HTTP 404"):
        WarcRecordReader(archive.data_url, retries=0).read(
            IndexedCapture("http://example.com/", "2024-01-01T00:00:00Z", 200, None, "nothere.warc.gz", 0, 10))
    with pytest.raises(WarcReadError, match=r"expected a record of http://example\.com/"):
        WarcRecordReader(str(archive.root / "pywb" / "collections" / NEW / "archive")).read(
            IndexedCapture("http://example.com/", "2024-01-01T00:00:00Z", 200, None, "new-00000.warc.gz",
                           *_first_response(archive.root / "pywb" / "collections" / NEW / "archive" /
                                            "new-00000.warc.gz")))
    with pytest.raises(WarcReadError, match="no WARC location"):
        WarcRecordReader(archive.data_url).read(IndexedCapture("http://x.org/", "2024", 200, None, "", None, None))


def _first_response(path: Path) -> tuple[int, int]:
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as handle:
        iterator = ArchiveIterator(handle)
        for record in iterator:
            if record.rec_type == "response":
                offset = iterator.get_record_offset()
                iterator.read_to_end(record)
                return offset, iterator.get_record_length()
    raise AssertionError(f"{path}: no response record")


def test_cdx_server_failures(local_server) -> None:
    from archive_servers import free_port
    from web_testing import Route

    dead = f"http://127.0.0.1:{free_port()}/coll/cdx"
    server = CdxServer([(dead, None)], min_interval_s=0, retries=0, max_failures=2)
    with pytest.raises(IndexLookupError, match=r"127\.0\.0\.1.*lookup of http://example\.com/a failed"):
        server.captures("http://example.com/a")
    with pytest.raises(RuntimeError, match="2 CDX lookups failed in a row"):
        server.captures("http://example.com/b")
    local_server.routes["/refuses/cdx"] = Route(400, b"bad url")
    local_server.routes["/html/cdx"] = Route(200, b"<html>not a CDX server</html>")
    local_server.routes["/none/cdx"] = Route(404, b'{"message": "No Captures found for: example.com/a"}')
    refusing = CdxServer([(local_server.url("/refuses/cdx"), None)], min_interval_s=0, retries=0, max_failures=2)
    for _ in range(3):  # the server answers: refused URLs do not stop the task
        with pytest.raises(IndexLookupError, match=r"refuses/cdx: lookup of http://example\.com/a refused \(HTTP 400"):
            refusing.captures("http://example.com/a")
    with pytest.raises(IndexLookupError, match="unexpected answer"):
        CdxServer([(local_server.url("/html/cdx"), None)], min_interval_s=0).captures("http://example.com/a")
    assert CdxServer([(local_server.url("/none/cdx"), None)], min_interval_s=0).captures("http://example.com/a") == []


def test_cdx_hosts_on_the_loopback_interface_are_not_spaced() -> None:
    """One's own CDX server on this machine gets no politeness interval unless one is given; every other host keeps
    cdx_toolkit's (1 s for Common Crawl's index server, 3 s for others)."""
    from wikiref_dataset.web.commoncrawl.cdx import _cdx_interval, is_loopback_host

    for host in ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST."):
        assert is_loopback_host(host) and _cdx_interval(host, None) == 0.0, host
        assert _cdx_interval(host, 2.5) == 2.5  # --cdx-min-interval still rules
    for host in ("index.commoncrawl.org", "10.0.0.1", "192.168.1.1", "example.org", "128.0.0.1", "::2"):
        assert not is_loopback_host(host)
    assert _cdx_interval("index.commoncrawl.org", None) == 1.0
    assert _cdx_interval("web.archive.example", None) == 3.0
    server = CdxServer([("http://127.0.0.1:1/coll/cdx", None), ("https://index.commoncrawl.org/X-index", "X"),
                        ("https://index.commoncrawl.org/Y-index", "Y")])
    assert server._intervals == {"127.0.0.1": 0.0, "index.commoncrawl.org": 1.0}
    assert server.plan(461) == [  # said at the start of the lookups: 461 URLs x 2 crawls at 1 s
        "CDX lookups on 127.0.0.1: no spacing (a server on this machine; --cdx-min-interval sets one), 461 URL(s) x "
        "1 crawl(s)",
        "CDX lookups on index.commoncrawl.org: 1 s apart (cdx_toolkit's politeness for this host; --cdx-min-interval "
        "changes it): at least 15 min 22 s for 461 URL(s) x 2 crawl(s)"]
    given = CdxServer([("http://127.0.0.1:1/coll/cdx", None)], min_interval_s=3)
    assert given.plan(4000) == ["CDX lookups on 127.0.0.1: 3 s apart (--cdx-min-interval): at least 3 h 20 min for "
                                "4,000 URL(s) x 1 crawl(s)"]


def test_host_spacing_counts_the_wall_time_held_back_once() -> None:
    """Three threads waiting together for one host's 0.2 s interval: the waiting clock runs while any of them waits
    (about 0.4 s: the second waits 0.2 s, the third 0.4 s, overlapping), not the 0.6 s their waits add up to."""
    import threading

    from wikiref_dataset.web.http import HostSpacing

    spacing = HostSpacing()
    threads = [threading.Thread(target=spacing.wait, args=("h", 0.2)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 0.35 <= spacing.waited_s <= 0.55
    spacing.wait("other", 0.2)  # a host's first request never waits
    assert spacing.waited_s <= 0.55


# ---- settings and choice ----------------------------------------------------------------------------------------


def test_config_endpoints_and_validation() -> None:
    assert CommonCrawlConfig(crawls="CC-MAIN-2024-10,CC-MAIN-2023-50").cdx_endpoints() == [
        ("https://index.commoncrawl.org/CC-MAIN-2024-10-index", "CC-MAIN-2024-10"),
        ("https://index.commoncrawl.org/CC-MAIN-2023-50-index", "CC-MAIN-2023-50")]
    assert CommonCrawlConfig(crawls=("A",), cdx_api="http://h/{crawl}/cdx").cdx_endpoints() == [("http://h/A/cdx", "A")]
    assert CommonCrawlConfig(cdx_api="http://h/coll/cdx").cdx_endpoints() == [("http://h/coll/cdx", None)]
    for options, message in [({}, "needs crawls"), ({"crawls": ("a b",)}, "not crawl names"),
                             ({"cdx_api": "http://h/{crawl}"}, "no crawl is given"),
                             ({"cdx_api": "http://h/", "cc_index": "x"}, "not both"),
                             ({"crawls": ("A", "A")}, "named twice"), ({"cdx_api": "ftp://h/"}, "http"),
                             ({"crawls": ("A",), "lookup_workers": 0}, "lookup_workers")]:
        with pytest.raises(ValueError, match=message):
            CommonCrawlConfig(**options)
    assert CommonCrawlConfig(crawls=("A",)).to_dict()["crawls"] == ["A"]


def test_citation_dates_and_the_choice() -> None:
    assert citation_date("14 April 2008") == datetime(2008, 4, 14, tzinfo=timezone.utc)
    assert citation_date("September 8, 2012") == datetime(2012, 9, 8, tzinfo=timezone.utc)
    assert citation_date("2016-01-12") == datetime(2016, 1, 12, tzinfo=timezone.utc)
    assert citation_date("May 2010") == datetime(2010, 5, 1, tzinfo=timezone.utc)
    assert [citation_date(text) for text in ("n.d.", "", None, "May", "Spring", "1850", "2012-13-45")] == [None] * 7
    assert target_date("garbage", "2001") == datetime(2001, 1, 1, tzinfo=timezone.utc)
    times = {"a": datetime(2010, 1, 1, tzinfo=timezone.utc), "b": datetime(2012, 1, 1, tzinfo=timezone.utc),
             "c": None}
    assert choose_capture("abc", None, times.get) == "b"  # newest
    assert choose_capture("abc", datetime(2010, 6, 1, tzinfo=timezone.utc), times.get) == "a"
    assert choose_capture("abc", datetime(2011, 1, 1, 12, tzinfo=timezone.utc), times.get) == "b"  # nearer
    assert choose_capture("c", None, times.get) == "c" and choose_capture([], None, times.get) is None


def test_build_with_warc_files_then_common_crawl(archive: Archive, tmp_path: Path) -> None:
    """The embedded sample built from two sources in order — half its pages in a local WARC file, half in Common
    Crawl — gives the examples the one-WARC build gives, each with the provenance of the source that served it."""
    import pyarrow.parquet as pq

    from wikiref_dataset.wikiref.build import BuildConfig, run_build, sample_inputs

    dumps, warcs = sample_inputs()
    plain = run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(tmp_path / "plain"), tasks=2),
                      progress=False)
    sources = DocumentSources(common_crawl=CommonCrawlConfig(
        crawls=(SAMPLE_CRAWL,), cdx_api=archive.cdx_api, cc_data=archive.data_url, cdx_min_interval_s=0))
    combined = run_build(BuildConfig(dumps=dumps, warcs=[str(archive.sample.local_warc)],
                                     output_dir=str(tmp_path / "combined"), tasks=2, sources=sources), progress=False)

    def rows(folder: Path) -> dict[str, dict]:
        return {row["id"]: row for path in sorted((folder / "data").glob("*.parquet"))
                for row in pq.read_table(path).to_pylist()}

    before, after = rows(tmp_path / "plain"), rows(tmp_path / "combined")
    assert sum(plain.splits.values()) == sum(combined.splits.values()) == len(after) > 0
    provenance = ("document_source", "capture_date", "warc_filename", "warc_offset", "warc_length", "final_url")
    assert after.keys() == before.keys()
    for key, row in after.items():
        assert {k: v for k, v in row.items() if k not in provenance} == {
            k: v for k, v in before[key].items() if k not in provenance}, key
        assert before[key]["document_source"] == "warc" and before[key]["warc_filename"] == "sample.warc.gz"
        if row["url"] in archive.sample.local:
            assert (row["document_source"], row["capture_date"], row["warc_filename"], row["warc_offset"],
                    row["final_url"]) == ("warc", "2024-06-15T00:00:00Z", archive.sample.local_warc.name,
                                          archive.sample.local[row["url"]], row["url"])
        else:
            final = archive.sample.crawled[row["url"]]
            assert (row["document_source"], row["warc_filename"], row["final_url"]) == (
                "cc", "sample-cc-00000.warc.gz", final)
            assert row["capture_date"] == ("2024-06-20T08:00:05Z" if final != row["url"] else "2024-06-20T08:00:00Z")
            assert row["warc_offset"] >= 0 and row["warc_length"] > 0
    sources_seen = {row["document_source"] for row in after.values()}
    assert sources_seen == {"warc", "cc"}
    assert any(row["final_url"] != row["url"] for row in after.values())  # the redirect made it to the dataset
    build = json.loads((tmp_path / "combined" / "build.json").read_text(encoding="utf-8"))
    counts = build["counts"]
    assert counts["cited pages from WARC files"] == len(archive.sample.local)
    assert counts["cited pages from Common Crawl"] == len(archive.sample.crawled)
    assert build["sources"]["common_crawl"]["crawls"] == [SAMPLE_CRAWL]
    card = (tmp_path / "combined" / "README.md").read_text(encoding="utf-8")
    assert f"Common Crawl: crawls {SAMPLE_CRAWL}" in card and "## Provenance of the documents" in card


def _wikiref(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``wikiref ARGV`` as a user runs it: the console script beside this Python (else its module), a fresh process."""
    script = Path(sys.executable).with_name("wikiref")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "trainer_scripts.cli"]
    return subprocess.run([*command, *argv], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def _published_rows(out: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return [row for path in sorted((out / "data").glob("*.parquet")) for row in pq.read_table(path).to_pylist()]


def _check_sample_rows(archive: Archive, out: Path) -> list[dict]:
    """The rows of a build of the embedded sample from a local WARC file and Common Crawl: each row's provenance
    points at the record that served it (returned for further checks)."""
    rows = _published_rows(out)
    assert rows and {row["document_source"] for row in rows} == {"warc", "cc"}
    for row in rows:
        if row["document_source"] == "cc":
            assert row["warc_filename"] == "sample-cc-00000.warc.gz"
            assert row["final_url"] == archive.sample.crawled[row["url"]]
        else:
            assert row["warc_offset"] == archive.sample.local[row["url"]]
    return rows


def test_build_command_with_crawl_and_cdx_api(archive: Archive, tmp_path: Path) -> None:
    """``wikiref build DUMP --warc LOCAL --crawl C --cdx-api URL --cc-data URL``: the command line reaches the same
    sources as the Python API; the published rows point at the records that served them."""

    from wikiref_dataset.wikiref.build import sample_inputs

    dumps, _ = sample_inputs()
    result = _wikiref(["build", *dumps, "--warc", str(archive.sample.local_warc), "--crawl", SAMPLE_CRAWL,
                       "--cdx-api", archive.cdx_api, "--cc-data", archive.data_url,  # loopback: no spacing by default
                       "--out", str(tmp_path / "wikiref"), "--tasks", "2", "-v"], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Common Crawl" in result.stdout
    # Each task says what the hosts' intervals imply before it looks anything up (in its log file, and, with -v, on
    # the console as datatrove shows a task's log); the summary, what was waited.
    plan = re.compile(r"task (\d): CDX lookups on 127\.0\.0\.1: no spacing \(a server on this machine; "
                      r"--cdx-min-interval sets one\), [\d,]+ URL\(s\) x 1 crawl\(s\)$")
    assert any(plan.search(line) for line in result.stderr.splitlines()), result.stderr[-3000:]
    task_logs = sorted(tmp_path.glob("**/documents/logs/task_*.log"))
    assert len(task_logs) == 2, sorted(str(path) for path in tmp_path.glob("**/logs/task_*.log"))
    assert [[match[1] for line in path.read_text().splitlines() if (match := plan.search(line))]
            for path in task_logs] == [["0"], ["1"]]
    waiting = re.search(r"waiting: ([\d.]+)s of the documents stage's ([\d.]+)s spent holding CDX lookups",
                        result.stdout)
    assert waiting and float(waiting[1]) < 1.0, result.stdout  # a loopback server: nothing held back
    _check_sample_rows(archive, tmp_path / "wikiref")
    build = json.loads((tmp_path / "wikiref" / "build.json").read_text(encoding="utf-8"))
    assert build["counts"]["cited pages from Common Crawl"] == len(archive.sample.crawled)


def _few_statements(archive: Archive, target: Path, others: int = 12) -> Path:
    """The statements citing the expected pages, and statements citing `others` distinct pages not captured (fewer
    lookups)."""
    other_keys: set[str] = set()
    with gzip.open(archive.statements, "rt", encoding="utf-8") as source, \
            gzip.open(target, "wt", encoding="utf-8") as written:
        for line in source:
            record = json.loads(line)
            key = citation_key(record["metadata"].get("fetch_url") or "")
            if key in archive.expected or key in other_keys:
                written.write(line)
            elif len(other_keys) < others and _normalizes(key) and (record["metadata"]["fetch_url"]
                                                                    == record["metadata"]["url"]):
                other_keys.add(key)
                written.write(line)
    return target


def test_network_faults_are_retried_counted_and_change_nothing(archive: Archive, tmp_path: Path) -> None:
    """Common Crawl's index throttling (503 with Retry-After), reset connections and stalled answers, every Nth
    request, in front of both servers: the documents are exactly those of a run without faults, and every fault
    injected is counted once, by kind."""
    from archive_servers import faulty_proxy

    statements = _few_statements(archive, tmp_path / "statements.jsonl.gz")
    pywb = archive.cdx_api.split("/{crawl}")[0]
    with faulty_proxy(pywb, {"503": 4, "reset": 7, "stall": 11}, retry_after="1", stall_s=2.0) as cdx, \
            faulty_proxy(archive.data_url, {"503": 5, "reset_body": 6, "reset": 9, "stall": 13}, stall_s=2.0) as data:
        config = CommonCrawlConfig(crawls=(NEW, OLD), cdx_api=cdx.url + "/{crawl}/cdx", cc_data=data.url,
                                   cdx_min_interval_s=0.0, timeout_s=0.7, retries=8, backoff_s=0.02)
        summary = run_documents([statements], tmp_path / "out", tasks=2, progress=False,
                                sources=DocumentSources(common_crawl=config))
        clean = run_documents([statements], tmp_path / "clean", tasks=2, progress=False,
                              sources=DocumentSources(common_crawl=_config(archive, cdx_api=archive.cdx_api)))
    def without_detail(folder: Path) -> dict:  # details name the server asked (the proxy or pywb)
        return {key: dataclasses.replace(document, detail="") for key, document in _documents(folder).items()}

    assert without_detail(tmp_path / "out") == without_detail(tmp_path / "clean")
    _check_expected(archive, _documents(tmp_path / "out"))
    assert summary.common_crawl == clean.common_crawl and summary.common_crawl["found"] == 5
    assert summary.common_crawl["not_captured"] >= 10
    assert summary.transient == 0 and "archive_unreachable" not in summary.failed
    assert cdx.injected["503"] >= 3 and cdx.injected["reset"] >= 1 and cdx.injected["stall"] >= 1
    assert data.injected["503"] >= 1 and data.injected["reset_body"] >= 1
    faults = summary.faults
    assert faults["cdx/http_503"] == cdx.injected["503"] and faults["cdx/timeout"] == cdx.injected["stall"]
    assert faults["cdx/reset"] == cdx.injected["reset"]
    assert faults["warc/http_503"] == data.injected["503"] and faults["warc/timeout"] == data.injected["stall"]
    assert faults["warc/reset"] + faults["warc/incomplete"] == data.injected["reset"] + data.injected["reset_body"]
    assert not any(key.endswith("gave_up") for key in faults)
    assert "network faults: CDX index: HTTP 503 x" in summary.format()


def test_documents_rerun_retries_the_pages_the_network_kept_from_it(archive: Archive, tmp_path: Path) -> None:
    """``run_documents`` (the ``wikiref documents`` command) run again into its folder: the pages a dead index
    server kept from it are fetched again, and only those; the rest of each task's output is kept as it was."""
    from archive_servers import faulty_proxy

    statements = _few_statements(archive, tmp_path / "statements.jsonl.gz")
    pywb = archive.cdx_api.split("/{crawl}")[0]
    with faulty_proxy(pywb, {"reset": 3}) as cdx:  # every 3rd lookup fails, with no retry left to get past it
        config = CommonCrawlConfig(crawls=(NEW, OLD), cdx_api=cdx.url + "/{crawl}/cdx", cc_data=archive.data_url,
                                   cdx_min_interval_s=0.0, retries=0, backoff_s=0.0)
        first = run_documents([statements], tmp_path / "out", tasks=2, progress=False,
                              sources=DocumentSources(common_crawl=config))
        assert first.transient > 0 and first.failed["index_error"] == first.transient
        assert first.common_crawl["lookup_failed"] == first.transient and "cdx/reset" in first.faults
        kept = {document.url for document in _documents(tmp_path / "out").values() if document.status != "index_error"}
        cdx.every = {}
        asked = len(cdx.targets)
        second = run_documents([statements], tmp_path / "out", tasks=2, progress=False,
                               sources=DocumentSources(common_crawl=config))
        looked_up = {parse_qs(urlsplit(target).query)["url"][0] for target in cdx.targets[asked:]}
    assert looked_up and not looked_up & kept  # only the failed pages (and their redirects' targets) were asked
    assert second.retried == first.transient and second.transient == 0 and "index_error" not in second.failed
    _check_expected(archive, _documents(tmp_path / "out"))
    assert second.urls == first.urls and second.common_crawl["found"] == 5


def test_a_page_the_network_keeps_from_us_is_failed_and_the_next_build_gets_it(archive: Archive,
                                                                                tmp_path: Path) -> None:
    """The WARC server answers 503 to every request during a build: the pages it serves are failed (archive
    unreachable), never "not captured", and counted; the next run of the same command, with the server back, fetches
    those pages only and publishes what a build without faults publishes; the run after that redoes nothing."""
    from archive_servers import faulty_proxy

    from wikiref_dataset.wikiref.build import sample_inputs

    dumps, _ = sample_inputs()

    def build(out: Path, data_url: str) -> subprocess.CompletedProcess:
        return _wikiref(["build", *dumps, "--warc", str(archive.sample.local_warc), "--crawl", SAMPLE_CRAWL,
                         "--cdx-api", archive.cdx_api, "--cc-data", data_url, "--cdx-min-interval", "0",
                         "--cc-retries", "2", "--cc-backoff", "0.01", "--out", str(out), "--tasks", "2", "--quiet"],
                        tmp_path)

    clean = build(tmp_path / "clean", archive.data_url)
    assert clean.returncode == 0, clean.stderr[-3000:]
    clean_counts = json.loads((tmp_path / "clean" / "build.json").read_text(encoding="utf-8"))["counts"]
    out = tmp_path / "wikiref"
    with faulty_proxy(archive.data_url) as data:
        data.down = "503"
        first = build(out, data.url)
        assert first.returncode == 0, first.stderr[-3000:]
        counts = json.loads((out / "build.json").read_text(encoding="utf-8"))["counts"]
        crawled = len(archive.sample.crawled)
        assert counts["Common Crawl: fetch failed"] == crawled  # failed, not "not captured":
        assert counts.get("Common Crawl: not captured") == clean_counts.get("Common Crawl: not captured")
        assert counts["cited pages failed by the network (the next run retries them)"] == crawled
        assert counts["network faults, WARC range reads: HTTP 503"] == data.injected["503"] == 3 * crawled
        assert counts["requests given up after their retries, WARC range reads"] == crawled
        assert counts["dropped: document archive unreachable"] >= crawled
        assert "cited pages from Common Crawl" not in counts
        assert "network faults, WARC range reads: HTTP 503" in first.stdout
        data.down = None
        requests_before = data.requests
        second = build(out, data.url)
        assert second.returncode == 0, second.stderr[-3000:]
        assert "cited pages retried (network failures of the last run)" in second.stdout
        # only the failed pages were read again: one record each, and the redirect's record before its target's
        assert data.requests - requests_before == crawled + 1
        published = (out / "build.json").read_bytes()
        third = build(out, data.url)
        assert third.returncode == 0, third.stderr[-3000:]
        assert data.requests - requests_before == crawled + 1 and (out / "build.json").read_bytes() == published
    assert _published_rows(out) == _published_rows(tmp_path / "clean")
    _check_sample_rows(archive, out)
    counts = json.loads((out / "build.json").read_text(encoding="utf-8"))["counts"]
    assert counts["cited pages from Common Crawl"] == crawled and counts["cited pages retried (network failures of the last run)"] == crawled
    assert not any(key.startswith(("network faults", "dropped: document archive")) for key in counts)
    assert {key: value for key, value in counts.items() if "retried" not in key} == clean_counts


def test_documents_command_with_the_columnar_index(archive: Archive, tmp_path: Path) -> None:
    """``wikiref documents STATEMENTS --crawl NEW,OLD --cc-index DIR --cc-data URL`` on statements of the real dump
    sample: the DuckDB join picks the captures the per-URL lookup picks."""
    result = _wikiref(["documents", str(archive.statements), "--crawl", f"{NEW},{OLD}", "--cc-index",
                       str(archive.columnar), "--cc-data", archive.data_url, "--out", str(tmp_path / "docs"),
                       "--quiet"], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    _check_expected(archive, _documents(tmp_path / "docs"))
    bad = _wikiref(["documents", str(archive.statements), "--cdx-api", archive.cdx_api, "--cc-index",
                    str(archive.columnar), "--out", str(tmp_path / "bad")], tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("wikiref documents: error:") and "not both" in bad.stderr



def _key_ranges_by_hand(files: list[Path]) -> dict[str, tuple[str, str]]:
    import pyarrow.parquet as pq

    ranges = {}
    for file in files:
        keys = pq.read_table(file, columns=["url_surtkey"]).column("url_surtkey").to_pylist()
        ranges[str(file)] = (min(keys), max(keys))
    return ranges


def test_build_command_with_the_columnar_index_joins_each_index_file_once(archive: Archive, tmp_path: Path) -> None:
    """``wikiref build DUMP --warc LOCAL --crawl C --cc-index DIR --cc-data URL --tasks 3`` on an index of several
    files, each a sorted range of keys as Common Crawl's are: a ``captures`` stage joins all cited URLs with the
    index, each file read by exactly one task; the fetch tasks read the index again only for the captured redirect's
    target, in the files whose key range holds it; the rows point at the records that served them."""
    import surt

    from wikiref_dataset.wikiref.build import sample_inputs

    dumps, _ = sample_inputs()
    index = tmp_path / "index"
    files = write_columnar_index({SAMPLE_CRAWL: [archive.root / "data" / "sample-cc-00000.warc.gz"]}, index,
                                 parts=3)
    assert len(files) >= 4
    out = tmp_path / "wikiref"
    result = _wikiref(["build", *dumps, "--warc", str(archive.sample.local_warc), "--crawl", SAMPLE_CRAWL,
                       "--cc-index", str(index), "--cc-data", archive.data_url, "--out", str(out), "--tasks", "3",
                       "--quiet"], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = _check_sample_rows(archive, out)
    assert any(row["final_url"] != row["url"] for row in rows)  # the redirect was followed
    counts = json.loads((out / "build.json").read_text(encoding="utf-8"))["counts"]
    assert counts["cited pages from Common Crawl"] == len(archive.sample.crawled)
    assert counts["Common Crawl index files joined (each once)"] == len(files)
    target = surt.surt(archive.sample.crawled[archive.sample.moved])
    holding = [file for file, (low, high) in _key_ranges_by_hand(files).items() if low <= target <= high]
    assert len(holding) >= 1
    assert counts["Common Crawl index files read again (redirects)"] == len(holding) < len(files)
    shares = [[file for file, _, _ in json.loads(path.read_text(encoding="utf-8"))]
              for path in sorted((tmp_path / "wikiref.work" / "captures" / "ranges").glob("*.json"))]
    assert len(shares) == 3 and all(shares)
    assert sorted(file for share in shares for file in share) == sorted(str(file) for file in files)
    assert "Common Crawl index files joined" in result.stdout
    again = _wikiref(["build", *dumps, "--warc", str(archive.sample.local_warc), "--crawl", SAMPLE_CRAWL,
                      "--cc-index", str(index), "--cc-data", archive.data_url, "--out", str(out), "--tasks", "3"],
                     tmp_path)  # the same command again: every stage reused, the same rows
    assert again.returncode == 0, again.stderr[-3000:]
    assert "[2/7] index_keys: 3 task(s)" in again.stdout and "[3/7] index_join" in again.stdout
    assert _published_rows(out) == rows


def test_index_shares_deal_each_file_to_one_task() -> None:
    files = [f"part-{i}.parquet" for i in range(7)]
    sizes = [70, 10, 10, 10, 30, 30, 40]
    shares = index_shares(files, 3, sizes)
    assert sorted(file for share in shares for file in share) == sorted(files)
    loads = [sum(sizes[files.index(file)] for file in share) for share in shares]
    assert max(loads) == 70 and min(loads) >= 60  # the largest file alone; the others balanced around it
    assert index_shares(files[::-1], 3, sizes[::-1]) == shares  # the order given does not matter
    assert [len(share) for share in index_shares(files, 10)] == [1] * 7 + [0] * 3
    with pytest.raises(ValueError, match="tasks"):
        index_shares(files, 0)


def test_key_ranges_choose_the_files_that_may_hold_a_key(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = []
    for name, keys, statistics in (("a", ["com,a)/", "com,b)/", "com,c)/"], True),
                                   ("b", ["com,d)/", "com,f)/"], True), ("c", ["org,x)/"], False)):
        files.append(str(tmp_path / f"{name}.parquet"))
        pq.write_table(pa.table({"url_surtkey": keys, "url": keys}), files[-1], write_statistics=statistics)
    ranges = file_key_ranges(files)
    assert ranges[:2] == [(files[0], "com,a)/", "com,c)/"), (files[1], "com,d)/", "com,f)/")]
    assert ranges[2] == (files[2], None, None)  # no statistics: read for every lookup
    assert files_for_keys(ranges, ["com,e)/"]) == [files[1], files[2]]
    assert files_for_keys(ranges, ["com,c)/x"]) == [files[2]]  # between two files' ranges
    assert files_for_keys(ranges, ["com,a)/", "com,f)/"]) == files
    with pytest.raises(FileNotFoundError, match="no join"):
        CaptureTable.read(tmp_path / "nothing", 0)


def test_a_bad_columnar_index_fails_before_any_stage(tmp_path: Path) -> None:
    """A build with an index that names no Parquet file, or files without the index's columns, stops at once (exit
    2, one line naming the index) instead of after stage 1 has read the dump."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from wikiref_dataset.wikiref.build import sample_inputs

    dumps, _ = sample_inputs()
    empty = tmp_path / "empty-index"
    empty.mkdir()
    wrong = tmp_path / "wrong-index"
    wrong.mkdir()
    pq.write_table(pa.table({"url": ["http://example.com/"]}), wrong / "part-00000.parquet")
    for index, message in ((empty, "no Parquet file"), (wrong, "not a Common Crawl columnar URL index")):
        out = tmp_path / f"out-{index.name}"
        result = _wikiref(["build", *dumps, "--crawl", SAMPLE_CRAWL, "--cc-index", str(index), "--out", str(out)],
                          tmp_path)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.startswith("wikiref build: error:") and message in result.stderr
        assert str(index) in result.stderr and "[1/" not in result.stdout
        assert not Path(f"{out}.work").exists()
