"""Tests for wikiref_dataset.web.documents: the datatrove step, dedup by normalized URL, sources, summary, rerun."""

from __future__ import annotations

import contextlib
import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from datatrove.data import Document
from web_testing import LocalServer, Route, serve

from wikiref_dataset.text import BLANK_MODEL, TextConfig
from wikiref_dataset.web.documents import (
    CitedDocument,
    DocumentsSummary,
    FetchCitedDocuments,
    StatementReader,
    run_documents,
)
from wikiref_dataset.web.http import HttpConfig, crawl_order
from wikiref_dataset.web.warc import WarcIndex

BLANK = TextConfig(model=BLANK_MODEL)
BRIDGE = "https://ledger.example/news/bridge"


def statement(statement_id: str, url: str | None, fetch_url: str | None = None) -> dict:
    metadata = {"title": "Port Example", "section": ["History"]}
    if url is not None:
        metadata["url"] = url
    if fetch_url is not None:
        metadata["fetch_url"] = fetch_url
    return {"text": f"Statement {statement_id}.", "id": statement_id, "metadata": metadata}


def write_statements(path: Path, records: list[dict], extra_lines: tuple[str, ...] = ()) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
        for line in extra_lines:
            out.write(line + "\n")
    return path


def read_jsonl(folder: Path) -> list[dict]:
    records = []
    for file in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(file, "rt", encoding="utf-8") as handle:
            records += [json.loads(line) for line in handle if line.strip()]
    return records


@pytest.fixture
def archive(tmp_path: Path, web_fixtures: Path, warc_builder) -> Path:
    article = (web_fixtures / "article.html").read_bytes()
    return (
        warc_builder()
        .response(BRIDGE, article, date="2021-03-13T10:00:00Z")
        .response("https://ledger.example/removed", b"gone", status="404 Not Found")
        .response("https://ledger.example/report.pdf", b"%PDF-1.7", headers=[("Content-Type", "application/pdf")])
        .response("https://ledger.example/empty", (web_fixtures / "empty.html").read_bytes())
        .write(tmp_path / "crawl.warc.gz")
    )


def test_run_documents_from_an_archive(tmp_path: Path, archive: Path) -> None:
    statements = write_statements(tmp_path / "statements.jsonl.gz", [
        statement("s1", BRIDGE),
        statement("s2", "http://www.ledger.example/news/bridge/?utm_source=wikipedia",
                  fetch_url="https://web.archive.org/web/20210401000000/https://ledger.example/news/bridge"),
        statement("s3", "https://ledger.example/never-crawled"),
        statement("s4", "https://ledger.example/removed"),
        statement("s5", "https://ledger.example/report.pdf"),
        statement("s6", "https://ledger.example/empty"),
        statement("s7", None),
        statement("s8", "http://"),
    ], extra_lines=("{this is not json", "[1, 2]"))  # fmt: skip
    out = tmp_path / "out"
    summary = run_documents([statements], out, warc_paths=[archive], text_config=BLANK, progress=False)

    assert (summary.statements, summary.bad_statements, summary.statements_without_url) == (8, 2, 1)
    assert (summary.urls, summary.citing_statements) == (6, 7)
    assert summary.fetched == {"warc": 1}
    assert summary.missing == {"not_archived": 1, "not_found": 1}
    assert summary.failed == {"not_html": 1, "no_text": 1, "bad_url": 1}
    assert summary.archive is not None and summary.archive.indexed == 4
    text = summary.format()
    assert "fetched        1  (warc 1)" in text and "not_found 1" in text and "bad_url 1" in text

    documents = read_jsonl(out / "documents")
    assert len(documents) == 1
    document = CitedDocument.from_document(documents[0])
    assert document.status == "ok" and document.source == "warc"
    assert document.normalized_url == "https://ledger.example/news/bridge"
    assert document.statement_ids == ["s1", "s2"]  # one record per normalized URL, the Wayback citation included
    assert document.title == "Harbour bridge reopens after two years of repairs"
    assert "The council said the work finished three weeks ahead of schedule." in document.sentences
    assert document.capture_date == "2021-03-13T10:00:00Z" and document.warc_record.startswith(str(archive))
    assert documents[0]["id"] == document.document_id

    failed = {record["metadata"]["normalized_url"]: record["metadata"] for record in read_jsonl(out / "failed")}
    assert failed["https://ledger.example/never-crawled"]["status"] == "not_archived"
    assert failed["https://ledger.example/report.pdf"]["status"] == "not_html"
    assert "application/pdf" in failed["https://ledger.example/report.pdf"]["detail"]
    assert failed["http://"]["status"] == "bad_url" and failed["http://"]["statement_ids"] == ["s8"]

    again = run_documents([statements], out, warc_paths=[archive], text_config=BLANK, progress=False)
    assert again.fetched == summary.fetched and again.failed == summary.failed  # tasks skipped, stats kept
    assert len(read_jsonl(out / "documents")) == 1


def test_run_documents_with_http_fallback_and_tasks(tmp_path: Path, archive: Path, local_server: LocalServer,
                                                    web_fixtures: Path) -> None:
    local_server.routes["/live"] = Route(body=(web_fixtures / "latin1.html").read_bytes(),
                                         headers={"Content-Type": "text/html; charset=iso-8859-1"})
    local_server.routes["/private"] = Route(body=b"<html>secret</html>")
    local_server.routes["/robots.txt"] = Route(body=b"User-agent: *\nDisallow: /private\n",
                                               headers={"Content-Type": "text/plain"})
    statements = write_statements(tmp_path / "s.jsonl.gz", [
        statement("s1", BRIDGE),
        statement("s2", local_server.url("/live")),
        statement("s3", local_server.url("/live/")),
        statement("s4", local_server.url("/private")),
        statement("s5", local_server.url("/missing")),
        statement("s6", "file:///etc/passwd"),
    ])  # fmt: skip
    config = HttpConfig(min_interval_s=0.0, backoff_s=0.0, retries=0, allow_hosts_for_testing={"127.0.0.1"})
    out = tmp_path / "out"
    summary = run_documents([statements], out, warc_paths=[archive], http=True, http_config=config, tasks=3,
                            text_config=BLANK, progress=False)
    assert summary.urls == 5 and summary.fetched == {"warc": 1, "http": 1}
    assert summary.missing == {"not_found": 1}
    assert summary.failed == {"robots_disallowed": 1, "bad_scheme": 1}
    documents = {d["metadata"]["normalized_url"]: d["metadata"] for d in read_jsonl(out / "documents")}
    live = documents[f"http://127.0.0.1:{local_server.port}/live"]
    assert live["source"] == "http" and live["statement_ids"] == ["s2", "s3"] and live["title"] == "Café prices"
    assert local_server.hits("/private") == 0 and local_server.hits("/live") == 1
    assert (out / "http_cache").is_dir()


def test_step_dedups_and_partitions(tmp_path: Path, archive: Path) -> None:
    index_path = tmp_path / "index.sqlite"
    WarcIndex.build([archive], index_path).close()
    documents = [Document(text=f"statement {i}", id=f"s{i}", metadata={"url": url}) for i, url in enumerate([
        BRIDGE, BRIDGE + "/", "https://ledger.example/a", "https://ledger.example/b", "https://other.example/c",
        "https://ledger.example/a#section", "https://third.example/d",
    ])]  # fmt: skip
    step = FetchCitedDocuments(warc_index=index_path, text_config=BLANK)
    everything = [CitedDocument.from_document(d) for d in step.run(iter(documents))]
    assert [d.normalized_url for d in everything] == sorted(d.normalized_url for d in everything)
    assert len(everything) == 5
    assert {tuple(d.statement_ids) for d in everything} >= {("s0", "s1"), ("s2", "s5")}

    urls_per_rank = []
    for rank in range(3):
        shard = FetchCitedDocuments(warc_index=index_path, text_config=BLANK, partition=True)
        urls_per_rank.append({CitedDocument.from_document(d).normalized_url for d in shard.run(iter(documents), rank, 3)})
    assert sum(len(urls) for urls in urls_per_rank) == 5
    assert set().union(*urls_per_rank) == {d.normalized_url for d in everything}

    by_host = [{CitedDocument.from_document(d).normalized_url for d in FetchCitedDocuments(
        warc_index=index_path, text_config=BLANK, partition=True, partition_by="host").run(iter(documents), r, 2)}
        for r in range(2)]  # fmt: skip
    hosts = [{url.split("/")[2] for url in urls} for urls in by_host]
    assert not hosts[0] & hosts[1]  # a host's URLs stay in one task


def test_statement_reader_and_errors(tmp_path: Path) -> None:
    plain = tmp_path / "folder" / "part.jsonl"
    plain.parent.mkdir()
    plain.write_text(json.dumps(statement("a", "https://x.example/")) + "\n\n" + '{"text": "t", "metadata": 5}\n')
    reader = StatementReader([tmp_path / "folder"])
    assert [d.id for d in reader.run()] == ["a"] and reader.stats["bad_records"].total == 1
    truncated = tmp_path / "cut.jsonl.gz"
    truncated.write_bytes(gzip.compress(((json.dumps(statement("b", "https://y.example/")) + "\n") * 50).encode())[:-20])
    cut_reader = StatementReader([truncated])
    assert len(list(cut_reader.run())) >= 1 and cut_reader.stats["bad_files"].total == 1
    with pytest.raises(FileNotFoundError, match="nope"):
        StatementReader([tmp_path / "nope"])
    with pytest.raises(ValueError, match="WARC index, an HTTP configuration"):
        FetchCitedDocuments()
    with pytest.raises(ValueError, match="nothing to fetch from"):
        run_documents([plain], tmp_path / "out", progress=False)
    with pytest.raises(FileNotFoundError, match="no such WARC index"):
        run_documents([plain], tmp_path / "out", warc_index=tmp_path / "missing.sqlite", progress=False)


def test_cited_document_round_trip_and_summary() -> None:
    document = CitedDocument(url="u", fetch_url="f", normalized_url="http://n.example/", source="http", status="ok",
                             title="T", text="A. B.", sentences=["A.", "B."], statement_ids=["s1"])
    assert CitedDocument.from_document(document.to_document()) == document
    summary = DocumentsSummary()
    for status, source in (("ok", "warc"), ("ok", "http"), ("not_archived", ""), ("timeout", ""), ("timeout", "")):
        summary.add_status(status, source)
    assert (summary.n_fetched, summary.n_missing, summary.n_failed) == (2, 1, 2)
    assert "failed         2  (timeout 2)" in summary.format()


def test_rerun_with_other_inputs_is_refused(tmp_path: Path, archive: Path, warc_builder) -> None:
    statements = write_statements(tmp_path / "s.jsonl.gz", [statement("s1", BRIDGE)])
    out = tmp_path / "out"
    run_documents([statements], out, warc_paths=[archive], text_config=BLANK, progress=False)
    other = warc_builder().response("https://other.example/", b"<html><p>x</p></html>").write(tmp_path / "o.warc.gz")
    with pytest.raises(ValueError, match="warc_files changed"):
        run_documents([statements], out, warc_paths=[archive, other], text_config=BLANK, progress=False)
    with pytest.raises(ValueError, match="tasks changed"):
        run_documents([statements], out, warc_index=out / "warc_index.sqlite", tasks=2, text_config=BLANK,
                      progress=False)


def test_find_files_enters_linked_folders(tmp_path):
    """WARC folders are often linked into place: files under a linked folder are found (a loop is entered once)."""
    from wikiref_dataset.web.documents import find_files

    real = tmp_path / "real" / "crawl"
    real.mkdir(parents=True)
    (real / "a.warc.gz").write_bytes(b"")
    (real / "notes.txt").write_text("x")
    top = tmp_path / "top"
    top.mkdir()
    (top / "crawl").symlink_to(real, target_is_directory=True)
    (top / "crawl-again").symlink_to(real, target_is_directory=True)
    (real / "up").symlink_to(top, target_is_directory=True)
    assert find_files([top], (".warc.gz",), "WARC file") == [top / "crawl" / "a.warc.gz"]


def test_http_documents_do_not_depend_on_scheduling(tmp_path: Path, web_fixtures: Path) -> None:
    """Pages of three hosts (127.0.0.2-4), cited in reverse URL order: with several hosts downloading at once and
    later batches started ahead, the documents are those of one download at a time, batch after batch (same records,
    same order: the crawl order of the sorted URLs), while the hosts were served at the same time."""
    article = (web_fixtures / "article.html").read_bytes()
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(serve(host=f"127.0.0.{number}")) for number in (2, 3, 4)]
        urls = []
        for server in servers:
            for page in range(4):
                title = f"Page {page} of {server.host}".encode()
                server.routes[f"/p{page}"] = Route(body=article.replace(b"Harbour bridge reopens", title), delay=0.05)
                urls.append(server.url(f"/p{page}"))
        servers[1].routes["/p3"] = Route(404, b"gone")
        statements = [Document(text=f"s{i}", id=f"s{i}", metadata={"url": url}) for i, url in enumerate(reversed(urls))]

        def run(**settings) -> list[tuple]:
            config = HttpConfig(min_interval_s=0.1, backoff_s=0.0, retries=0,
                                allow_hosts_for_testing={server.host for server in servers}, **settings)
            step = FetchCitedDocuments(http_config=config, text_config=BLANK, batch_size=2)
            records = []
            for document in step.run(iter(statements)):
                metadata = dict(document.metadata)
                assert metadata.pop("capture_date")  # the download time: the one field that may differ
                records.append((document.id, document.text, metadata))
            return records

        one_at_a_time = run(concurrency=1, lookahead=1)
        for server in servers:
            server.log.clear()
        scheduled = run(concurrency=4)

    assert scheduled == one_at_a_time
    in_crawl_order = [sorted(urls)[i] for i in crawl_order(sorted(urls))]
    assert [metadata["normalized_url"] for _, _, metadata in scheduled] == in_crawl_order
    assert in_crawl_order != sorted(urls) and in_crawl_order[0].rsplit("/", 1)[1] == "p0"
    assert Counter(metadata["status"] for _, _, metadata in scheduled) == {"ok": 11, "not_found": 1}
    first_host = in_crawl_order[0].split("/")[2].split(":")[0]
    assert scheduled[0][2]["title"].startswith(f"Page 0 of {first_host}")
    first_page_of_last_host = min(when for path, when in servers[-1].log if path.startswith("/p"))
    last_page_of_first_host = max(when for path, when in servers[0].log if path.startswith("/p"))
    assert first_page_of_last_host < last_page_of_first_host  # not one host after the other


def test_a_host_with_more_urls_in_a_row_than_lookahead_does_not_hold_back_the_others(web_fixtures: Path) -> None:
    """One host (127.0.0.2, first in URL order) cited 40 times, three others (127.0.0.3-5) 4 times each, lookahead 8.
    In URL order the other hosts would come within reach only after the big host's 32nd page; the stage takes the
    URLs in crawl order, so every host is fetched from the start, and the documents come out in that order."""
    article = (web_fixtures / "article.html").read_bytes()
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(serve(host=f"127.0.0.{number}")) for number in (2, 3, 4, 5)]
        urls = []
        for server, pages in zip(servers, (40, 4, 4, 4)):
            for page in range(pages):
                server.routes[f"/p{page:02d}"] = Route(body=article)
                urls.append(server.url(f"/p{page:02d}"))
        statements = [Document(text=f"s{i}", id=f"s{i}", metadata={"url": url}) for i, url in enumerate(urls)]
        config = HttpConfig(min_interval_s=0.03, backoff_s=0.0, retries=0, concurrency=4, lookahead=8,
                            allow_hosts_for_testing={server.host for server in servers})
        step = FetchCitedDocuments(http_config=config, text_config=BLANK, batch_size=2)
        documents = [document.metadata for document in step.run(iter(statements))]

    assert [metadata["normalized_url"] for metadata in documents] == [urls[i] for i in crawl_order(urls)]
    assert all(metadata["status"] == "ok" for metadata in documents)
    big_host_pages = sorted(when for path, when in servers[0].log if path.startswith("/p"))
    assert len(big_host_pages) == 40
    for server in servers[1:]:
        first_page = min(when for path, when in server.log if path.startswith("/p"))
        assert first_page < big_host_pages[19], server.host  # in URL order: after the 32nd
