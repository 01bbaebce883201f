"""Common Crawl as a source of cited pages, on archive servers on 127.0.0.1: CDX lookups, Range reads, the columnar
index join and the documents stage, with a projection per million cited URLs.

The servers are the Common Crawl tests' (``tests/wikiref_dataset/web/archive_servers.py``, imported, not copied):
pywb's ``wayback`` CDX server over collections named after crawls, a werkzeug server answering ``Range`` requests for
the WARC files, and Common Crawl's columnar URL index written from the WARC files.

Data, built deterministically from ``--seed``:

* **Captures** (crawl ``CC-MAIN-2024-10``): ``--urls`` cited URLs on ``--urls / 5`` hosts, written with warcio as
  gzipped WARC files of 200 records each. Each URL gets one role (shares set here, not measured: Common Crawl's
  real coverage of Wikipedia's citations is not known offline): 70% a 200 HTML capture (30% of them with a second
  capture 5 days earlier), 8% a 301 to another URL that has a 200 capture, 5% a 404 capture, 5% a PDF capture,
  12% no capture. Bodies are the 25 real news pages of ``../shared/realdata/html_news/trafilatura`` (270 KB on
  average) in turn, or generated 30 KB pages when that folder is absent. pywb indexes them (its own CDX
  indexer: no ``redirect`` field, so a 301's Location is read from its record; Common Crawl's CDX and columnar
  index both record it); ``write_columnar_index`` writes their columnar index (it records it).
* **Synthetic columnar index** (crawl ``CC-MAIN-SYNTH``): ``--index-rows`` rows with Common Crawl's column names
  and types (``url_surtkey, url, url_host_name, fetch_time, fetch_status, fetch_redirect, content_digest,
  content_mime_type, content_mime_detected, warc_filename, warc_record_offset, warc_record_length, warc_segment``),
  12 URLs per host over 5 TLDs, 3% 301s (``subset=crawldiagnostics``), 2% 404s, 3% PDFs, Common Crawl-style WARC
  paths; Parquet files sorted by ``url_surtkey`` (8 + 2 files, DuckDB's default Parquet settings: snappy). The
  same rows, as a sorted CDXJ file, form a second pywb collection, so that per-URL CDX lookups and the join answer
  from the same index. Cited sets: 80% URLs of the index, 20% absent.

Measured (best of ``--repeats``; the client pinned to one CPU, the servers not):

(a) CDX lookups (``CdxServer.captures``, through cdx_toolkit's request layer, no politeness interval): 1 worker,
    one URL after the other (baseline), vs ``--workers`` threads.
(b) ``CommonCrawl.resolve`` on the cited URLs (lookup, choice of the capture nearest the access-date, redirects
    followed, Range read, warcio parse): CDX lookups with 1 and ``--workers`` workers, and the columnar index
    (joined first, then the reads alone).
(c) ``ColumnarIndex.captures_many`` (one DuckDB join) on the synthetic index for each ``--cited`` size vs per-URL
    CDX lookups of the same URLs on the same rows (``--cdx-sample`` of them measured, the rest at that rate). The
    two must return the same captures.
(e) On as many cited URLs per index row as a full build has (``--index-rows`` / 2,000: ~1.5M cited URLs against
    ~3 billion rows of one crawl), the join split among ``--join-tasks`` tasks by index file, as the build's ``index_keys`` + ``index_join``
    stages do (each URL's keys computed once by its task; each join task joins all keys with its share of the
    files; each fetch task reads its captures back), vs split by URL bucket (baseline: each task joins its bucket
    with the whole index); total time of the tasks run one after the other, and index files read.
(d) The documents stage end to end (``run_documents``, 1 task: lookup, read, trafilatura extraction, sentence
    splitting, JSONL) on the first ``--stage-urls`` cited URLs from Common Crawl via CDX and via the columnar index,
    vs the same WARC files as a local WARC index (baseline; indexed before timing).

Projection per million cited URLs (printed with its assumptions): CDX lookups on index.commoncrawl.org at
cdx_toolkit's interval of 1 s per request, shared by every thread of a process; the columnar join scaled to a whole
crawl's index (``--crawl-rows``, ~3 billion captures: an assumption); Range reads from data.commoncrawl.org at an
assumed latency (``--range-latency``) with ``--workers`` in flight, and at cdx_toolkit's 0.55 s spacing; extraction
at the rate of (d).

    .venv/bin/python benchmarks/bench_commoncrawl.py            # 1,000 URLs, 3M-row index, about 2 minutes
    .venv/bin/python benchmarks/bench_commoncrawl.py --quick    # smoke run, under a minute
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import multiprocessing
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from multiprocessing.connection import Connection
from pathlib import Path

import _common

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "wikiref_dataset" / "web"))  # the tests' archive servers

NEWS = ROOT.parent / "shared" / "realdata" / "html_news" / "trafilatura"
CRAWL, SYNTH = "CC-MAIN-2024-10", "CC-MAIN-SYNTH"
RECORDS_PER_WARC = 200
SHARES = (("found", 0.70), ("redirect", 0.08), ("gone", 0.05), ("pdf", 0.05), ("uncaptured", 0.12))
TLDS = (("com", "com"), ("org", "org"), ("net", "net"), ("co.uk", "uk,co"), ("de", "de"))
URLS_PER_HOST = 12  # synthetic index


# ----------------------------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------------------------


def bodies() -> tuple[list[bytes], str]:
    pages = sorted(NEWS.glob("*.html")) if NEWS.is_dir() else []
    if pages:
        return [page.read_bytes() for page in pages], f"{len(pages)} real news pages"
    rng = random.Random(0)
    words = "council harbour bridge reopened mayor budget works engineers ferry port city said residents".split()
    generated = []
    for number in range(25):
        paragraphs = "".join("<p>" + " ".join(rng.choice(words) for _ in range(60)).capitalize() + ".</p>"
                             for _ in range(60))
        generated.append(f"<html><head><title>Page {number}</title></head><body><article>{paragraphs}</article>"
                         "</body></html>".encode())
    return generated, "25 generated pages (the real news pages are absent)"


def make_captures(n: int, seed: int, pages: list[bytes], data: Path) -> tuple[list[dict], list[Path]]:
    """The cited URLs (role, URL, access date) and the WARC files holding their captures."""
    from archive_servers import Capture, write_warc

    rng = random.Random(seed)
    cited, captures = [], []
    hosts = max(1, n // 5)
    for i in range(n):
        tld = TLDS[i % len(TLDS)][0]
        url = f"http://www.bench{i % hosts}.{tld}/news/{2012 + i % 12}/story-{i}.html"
        draw, role = rng.random(), SHARES[-1][0]
        for name, share in SHARES:
            if draw < share:
                role = name
                break
            draw -= share
        access = datetime(2012, 1, 1, tzinfo=timezone.utc) + timedelta(days=rng.randrange(4000))
        at = datetime(2024, 2, 20, tzinfo=timezone.utc) + timedelta(seconds=rng.randrange(12 * 86400))
        when = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        body = pages[i % len(pages)]
        if role == "found":
            if rng.random() < 0.3:
                captures.append(Capture(url, (at - timedelta(days=5)).strftime("%Y-%m-%dT%H:%M:%SZ"), body))
            captures.append(Capture(url, when, body))
        elif role == "redirect":
            target = url.replace("http://", "https://").removesuffix(".html")
            captures.append(Capture(url, when, b"", "301 Moved Permanently", location=target))
            captures.append(Capture(target, (at + timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ"), body))
        elif role == "gone":
            captures.append(Capture(url, when, b"<html><body>Not found</body></html>", "404 Not Found"))
        elif role == "pdf":
            captures.append(Capture(url, when, b"%PDF-1.4\n" + bytes(20_000), content_type="application/pdf"))
        cited.append({"url": url, "role": role, "access_date": access.strftime("%Y-%m-%d")})
    warcs = []
    for start in range(0, len(captures), RECORDS_PER_WARC):
        path = data / f"CC-MAIN-20240220-bench-{start // RECORDS_PER_WARC:05d}.warc.gz"
        warcs.append(write_warc(path, captures[start : start + RECORDS_PER_WARC]))
    return cited, warcs


def synthetic_url(i: int) -> str:
    host = i // URLS_PER_HOST
    return f"http://www.site{host}.{TLDS[host % len(TLDS)][0]}/news/{2010 + (i * 7) % 14}/story-{i}.html"


def write_synthetic_index(rows: int, seed: int, folder: Path, cdxj: Path, scratch: Path) -> dict:
    """The synthetic columnar index (Parquet, crawl=/subset= partitions) and the same rows as a sorted CDXJ file."""
    import duckdb

    con = duckdb.connect(str(scratch))
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET preserve_insertion_order = false")
    tld = "[" + ", ".join(f"'{name}'" for name, _ in TLDS) + "]"
    reversed_tld = "[" + ", ".join(f"'{surt}'" for _, surt in TLDS) + "]"
    con.execute(f"""
        CREATE TABLE synth AS
        WITH r AS (
            SELECT range AS i, range // {URLS_PER_HOST} AS h, hash(range, {seed}) AS x FROM range({rows})
        ), s AS (
            SELECT i, h, x, {tld}[h % 5 + 1] AS tld, {reversed_tld}[h % 5 + 1] AS rtld, 2010 + (i * 7) % 14 AS y,
                   x % 100 AS kind FROM r
        )
        SELECT
            rtld || ',site' || h || ')/news/' || y || '/story-' || i || '.html' AS url_surtkey,
            'http://www.site' || h || '.' || tld || '/news/' || y || '/story-' || i || '.html' AS url,
            'www.site' || h || '.' || tld AS url_host_name,
            TIMESTAMPTZ '2024-02-20 00:00:00+00' + to_seconds(CAST(x % 1209600 AS BIGINT)) AS fetch_time,
            CAST(CASE WHEN kind < 3 THEN 301 WHEN kind < 5 THEN 404 ELSE 200 END AS SMALLINT) AS fetch_status,
            CASE WHEN kind < 3 THEN 'https://www.site' || h || '.' || tld || '/news/' || y || '/story-' || i END
                AS fetch_redirect,
            upper(substr(md5(CAST(i AS VARCHAR)), 1, 32)) AS content_digest,
            CASE WHEN kind BETWEEN 5 AND 7 THEN 'application/pdf' ELSE 'text/html' END AS content_mime_type,
            CASE WHEN kind BETWEEN 5 AND 7 THEN 'application/pdf' ELSE 'text/html' END AS content_mime_detected,
            'crawl-data/CC-MAIN-2024-10/segments/1707947' || lpad(CAST((x >> 8) % 100 AS VARCHAR), 6, '0')
                || '.0/' || CASE WHEN kind < 5 THEN 'crawldiagnostics' ELSE 'warc' END
                || '/CC-MAIN-20240220-' || lpad(CAST((x >> 16) % 90000 AS VARCHAR), 5, '0') || '.warc.gz'
                AS warc_filename,
            CAST((x >> 20) % 1000000000 AS INTEGER) AS warc_record_offset,
            CAST(500 + (x >> 40) % 60000 AS INTEGER) AS warc_record_length,
            '1707947' || lpad(CAST((x >> 8) % 100 AS VARCHAR), 6, '0') || '.0' AS warc_segment,
            CASE WHEN kind < 5 THEN 'crawldiagnostics' ELSE 'warc' END AS subset
        FROM s
    """)
    files = 0
    for subset, parts in (("warc", 8), ("crawldiagnostics", 2)):
        target = folder / f"crawl={SYNTH}" / f"subset={subset}"
        target.mkdir(parents=True)
        con.execute(f"CREATE OR REPLACE TEMP TABLE part AS SELECT url_surtkey, ntile({parts}) OVER "
                    f"(ORDER BY url_surtkey) AS part FROM synth WHERE subset = '{subset}'")
        for part in range(1, parts + 1):
            con.execute(f"COPY (SELECT s.* EXCLUDE (subset) FROM synth s JOIN part p USING (url_surtkey) "
                        f"WHERE p.part = {part} ORDER BY s.url_surtkey) "
                        f"TO '{target / f'part-{part - 1:05d}.parquet'}' (FORMAT parquet)")
            files += 1
    line = ("""url_surtkey || ' ' || strftime(fetch_time, '%Y%m%d%H%M%S') || ' {"url": "' || url || """
            """'", "mime": "' || content_mime_type || '", "mime-detected": "' || content_mime_detected || """
            """'", "status": "' || fetch_status || '", "digest": "' || content_digest || '", "length": "' || """
            """warc_record_length || '", "offset": "' || warc_record_offset || '", "filename": "' || """
            """warc_filename || '"' || COALESCE(', "redirect": "' || fetch_redirect || '"', '') || '}'""")
    previous = ""
    with open(cdxj, "w", encoding="utf-8") as handle:
        for batch in con.sql(f"SELECT {line} AS line FROM synth ORDER BY line").to_arrow_reader(200_000):
            lines = batch.column(0).to_pylist()
            if lines[0] < previous or lines != sorted(lines):
                raise RuntimeError("the CDXJ lines are not sorted: pywb's binary search would miss captures")
            previous = lines[-1]
            handle.write("\n".join(lines) + "\n")
    sample = [row[0] for row in con.execute("SELECT url FROM synth USING SAMPLE 200 ROWS").fetchall()]
    con.close()
    scratch.unlink()
    parquet_bytes = sum(path.stat().st_size for path in folder.rglob("*.parquet"))
    return {"files": files, "parquet_bytes": parquet_bytes, "cdxj_bytes": cdxj.stat().st_size, "sample": sample}


def serve_range(connection: Connection, folder: str) -> None:
    """Child process: the tests' Range server on `folder`; sends its URL, stops on any message."""
    from archive_servers import range_server

    with range_server(Path(folder)) as url:
        connection.send(url)
        connection.recv()


@contextlib.contextmanager
def range_server_process(folder: Path) -> Iterator[str]:
    context = multiprocessing.get_context("spawn")
    connection, child_end = context.Pipe()
    process = context.Process(target=serve_range, args=(child_end, str(folder)), daemon=True)
    process.start()
    try:
        if not connection.poll(60):
            raise RuntimeError("the Range server did not start within 60 s")
        yield connection.recv()
    finally:
        connection.send("stop")
        process.join(timeout=10)


# ----------------------------------------------------------------------------------------------------------------
# Measuring
# ----------------------------------------------------------------------------------------------------------------


def best_of(repeats: int, function: Callable[[], object]) -> tuple[float, object]:
    times, result = _common.timed(function, repeats)
    return min(times), result


def in_parallel(workers: int, function: Callable, items: list) -> list:
    if workers == 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(function, items))


def duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.1f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1000, help="cited URLs with captures on the test servers")
    parser.add_argument("--index-rows", type=int, default=3_000_000, help="rows of the synthetic columnar index")
    parser.add_argument("--cited", default="1000,10000,100000", help="cited-URL counts joined with that index")
    parser.add_argument("--cdx-sample", type=int, default=1000, help="per-URL CDX lookups measured on that index")
    parser.add_argument("--stage-urls", type=int, default=200, help="cited URLs through the documents stage")
    parser.add_argument("--workers", type=int, default=8, help="lookup workers (CommonCrawlConfig.lookup_workers)")
    parser.add_argument("--join-tasks", type=int, default=4, help="(e): tasks of the split join")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each measure (the best is reported)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--crawl-rows", type=float, default=3e9, help="projection: captures in one crawl's index")
    parser.add_argument("--crawls", type=int, default=1, help="projection: crawls asked per URL")
    parser.add_argument("--cdx-interval", type=float, default=1.0,
                        help="projection: seconds between requests to Common Crawl's CDX server (cdx_toolkit's)")
    parser.add_argument("--range-latency", type=float, default=0.25,
                        help="projection: assumed seconds per Range read from data.commoncrawl.org")
    parser.add_argument("--quick", action="store_true", help="smoke run (under a minute)")
    parser.add_argument("--no-pin", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    if args.quick:
        args.urls, args.index_rows, args.cited, args.cdx_sample = 200, 1_000_000, "1000,10000", 300
        args.stage_urls, args.repeats = 40, 1
    cited_sizes = [int(size) for size in args.cited.split(",")]
    if max(cited_sizes) > args.index_rows:
        parser.error("--cited sizes must not exceed --index-rows")

    root = Path(tempfile.mkdtemp(prefix="bench_commoncrawl-"))
    try:
        return run(args, cited_sizes, root)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def run(args: argparse.Namespace, cited_sizes: list[int], root: Path) -> int:
    from archive_servers import pywb_server, write_columnar_index

    data = root / "data"
    data.mkdir()
    started = time.perf_counter()
    pages, pages_note = bodies()
    cited, warcs = make_captures(args.urls, args.seed, pages, data)
    bench_index = root / "cc-index-bench"
    write_columnar_index({CRAWL: warcs}, bench_index)
    synth_index, synth_cdxj = root / "cc-index-synth", root / "synthetic.cdxj"
    synth = write_synthetic_index(args.index_rows, args.seed, synth_index, synth_cdxj, root / "scratch.duckdb")
    setup_s = time.perf_counter() - started
    warc_bytes = sum(path.stat().st_size for path in warcs)
    print(f"inputs: {args.urls:,} cited URLs, {len(warcs)} WARC files ({warc_bytes / 1e6:.1f} MB, bodies: "
          f"{pages_note}); synthetic index {args.index_rows:,} rows in {synth['files']} Parquet files "
          f"({synth['parquet_bytes'] / 1e6:.1f} MB), CDXJ {synth['cdxj_bytes'] / 1e6:.1f} MB; {setup_s:.1f} s")

    rows: list[tuple[str, str, str]] = []  # (measure, value, note) for the table
    with contextlib.ExitStack() as stack:
        pywb = stack.enter_context(pywb_server(root / "pywb", {CRAWL: warcs, SYNTH: []}))
        # pywb lists a collection's index folder on every query: the big index joins the empty collection
        shutil.move(str(synth_cdxj), root / "pywb" / "collections" / SYNTH / "indexes" / "synthetic.cdxj")
        data_url = stack.enter_context(range_server_process(data))
        print(_common.pin_to_one_core(not args.no_pin), "(the client; pywb and the Range server are not pinned) |",
              _common.machine_line())

        from wikiref_dataset.web.commoncrawl import (
            CaptureRequest,
            CdxServer,
            ColumnarIndex,
            CommonCrawl,
            CommonCrawlConfig,
        )

        endpoint = f"{pywb}/{CRAWL}/cdx"
        urls = [item["url"] for item in cited]

        # (a) CDX lookups, 1 worker vs N ------------------------------------------------------------------------
        def lookups(workers: int, where: str, crawl: str, items: list[str]) -> Callable[[], list]:
            def run() -> list:
                server = CdxServer([(where, crawl)], min_interval_s=0.0, retries=0)
                return in_parallel(workers, server.captures, items)
            return run

        lookups(1, endpoint, CRAWL, urls[:20])()  # warm-up: connections, pywb's index loading
        one_s, one = best_of(args.repeats, lookups(1, endpoint, CRAWL, urls))
        many_s, many = best_of(args.repeats, lookups(args.workers, endpoint, CRAWL, urls))
        assert one == many, "the lookups differ between 1 and N workers"
        rate_one, rate_many = len(urls) / one_s, len(urls) / many_s
        rows.append(("(a) CDX lookups, 1 worker (baseline)", f"{rate_one:,.0f} URLs/s", f"{len(urls):,} URLs"))
        rows.append((f"(a) CDX lookups, {args.workers} workers", f"{rate_many:,.0f} URLs/s",
                     f"{rate_many / rate_one:.2f}x 1 worker"))

        # (b) resolve: lookup + choice + Range read + parse ---------------------------------------------------
        requests = [CaptureRequest(item["url"], datetime.fromisoformat(item["access_date"]).replace(
            tzinfo=timezone.utc)) for item in cited]

        def resolve(workers: int, **source: str) -> Callable[[], tuple]:
            def run() -> tuple:
                config = CommonCrawlConfig(crawls=(CRAWL,), cc_data=data_url, lookup_workers=workers,
                                           cdx_min_interval_s=0.0, **source)
                with CommonCrawl(config) as crawl:
                    began = time.perf_counter()
                    crawl.prepare(urls)  # the columnar join (nothing with a CDX server)
                    joined = time.perf_counter() - began
                    results = crawl.resolve(requests)
                    cdx_requests = crawl.cdx.requests if crawl.cdx is not None else 0
                    return results, joined, cdx_requests, crawl.reader.requests
            return run

        per_k = 1000 / len(urls)
        cdx1_s, (cdx1, _, cdx_requests, cdx_reads) = best_of(args.repeats, resolve(1, cdx_api=f"{pywb}/{{crawl}}/cdx"))
        cdxn_s, (cdxn, _, _, _) = best_of(args.repeats, resolve(args.workers, cdx_api=f"{pywb}/{{crawl}}/cdx"))
        col_s, (col, join_s, _, col_reads) = best_of(args.repeats, resolve(args.workers,
                                                                            cc_index=str(bench_index)))
        outcomes = Counter(result.outcome for result in cdxn)

        def key(results: list) -> list:
            return [(r.outcome, r.final_url, r.capture.record if r.capture else None, r.body) for r in results]

        same_b = key(cdx1) == key(cdxn) == key(col)
        body_bytes = sum(len(r.body or b"") for r in cdxn)
        rows.append(("(b) resolve via CDX, 1 worker (baseline)", f"{cdx1_s * per_k:.2f} s / 1k URLs",
                     f"{len(urls) / cdx1_s:,.0f} URLs/s; {cdx_requests / len(urls):.2f} CDX requests and "
                     f"{cdx_reads / len(urls):.2f} Range reads per URL"))
        rows.append((f"(b) resolve via CDX, {args.workers} workers", f"{cdxn_s * per_k:.2f} s / 1k URLs",
                     f"{len(urls) / cdxn_s:,.0f} URLs/s = {cdx1_s / cdxn_s:.2f}x 1 worker"))
        rows.append((f"(b) resolve via columnar index, {args.workers} workers", f"{col_s * per_k:.2f} s / 1k URLs",
                     f"join {join_s:.2f} s + reads {col_s - join_s:.2f} s ({col_reads:,} Range reads, "
                     f"{(col_s - join_s) / max(col_reads, 1) * 1000:.1f} ms each)"))

        # (c) columnar join vs per-URL CDX lookups on the synthetic index -------------------------------------
        rng = random.Random(args.seed + 1)
        largest = max(cited_sizes)
        present = rng.sample(range(args.index_rows), int(largest * 0.8))
        wanted = [synthetic_url(i) for i in present]
        wanted += [synthetic_url(i).replace("/story-", "/missing-") for i in rng.sample(range(args.index_rows),
                                                                                          largest - len(wanted))]
        rng.shuffle(wanted)
        index = ColumnarIndex(str(synth_index), (SYNTH,))
        import duckdb

        threads = duckdb.connect().execute("SELECT current_setting('threads')").fetchone()[0]  # the default
        check = index.captures_many(synth["sample"])  # keyed by the surt package: the generated keys must agree
        assert all(check[url] for url in synth["sample"]), "a generated row is not found by its URL"
        join_times = {}
        found_rows = {}
        for size in cited_sizes:
            seconds, result = best_of(args.repeats, lambda size=size: index.captures_many(wanted[:size]))
            join_times[size] = seconds
            found_rows[size] = sum(bool(captures) for captures in result.values())
        sample = wanted[: args.cdx_sample]
        synth_endpoint = f"{pywb}/{SYNTH}/cdx"
        lookups(1, synth_endpoint, SYNTH, sample[:20])()
        seq_count = min(len(sample), 300)
        seq_s, _ = best_of(args.repeats, lookups(1, synth_endpoint, SYNTH, sample[:seq_count]))
        par_s, per_url = best_of(args.repeats, lookups(args.workers, synth_endpoint, SYNTH, sample))
        joined = index.captures_many(sample)
        same_c = all(sorted(per_url[i], key=repr) == sorted(joined[url], key=repr) for i, url in enumerate(sample))
        index.close()

        # (e) the join split by index file (index_keys + index_join stages) vs each fetch task joining its URLs with it all ---
        from wikiref_dataset.web.commoncrawl import CaptureTable, join_index_share
        from wikiref_dataset.web.documents import url_bucket

        bucket_urls: list[list[str]] = [[] for _ in range(args.join_tasks)]
        # as many cited URLs per index row as a full build has: ~1.5M cited URLs against ~3e9 rows of one crawl
        join_wanted = wanted[: max(100, args.index_rows // 2000)]
        for url in join_wanted:
            bucket_urls[url_bucket(url, args.join_tasks)].append(url)

        def split_by_url() -> tuple[dict, int]:
            found, scanned = {}, 0
            for urls in bucket_urls:
                task_index = ColumnarIndex(str(synth_index), (SYNTH,))
                found.update(task_index.captures_many(urls))
                scanned += task_index.files_scanned
                task_index.close()
            return found, scanned

        def split_by_file() -> tuple[dict, int]:
            folder = root / f"join-{time.perf_counter_ns()}"  # the captures stages' own code and files
            config = CommonCrawlConfig(crawls=(SYNTH,), cc_index=str(synth_index))
            for bucket, urls in enumerate(bucket_urls):
                CaptureTable.write_keys(folder, bucket, urls)
            scanned = sum(join_index_share(config, rank, args.join_tasks, folder)["index_files"]
                          for rank in range(args.join_tasks))
            found: dict[str, list] = {}
            for bucket in range(args.join_tasks):
                found.update(CaptureTable.read(folder, bucket).captures)
            return found, scanned

        by_url_s, (by_url, by_url_files) = best_of(args.repeats, split_by_url)
        by_file_s, (by_file, by_file_files) = best_of(args.repeats, split_by_file)
        same_e = all(sorted(by_url[url], key=repr) == sorted(by_file[url], key=repr) for url in join_wanted)
        rows.append((f"(e) {len(join_wanted):,} URLs, {args.join_tasks} tasks each joining its bucket with the whole index "
                     "(baseline)", f"{by_url_s:.2f} s", f"{by_url_files} index files read"))
        rows.append(("(e) the same split by index file (index_keys + index_join)", f"{by_file_s:.2f} s",
                     f"{by_file_files} index files read; {by_url_s / by_file_s:.2f}x less time, "
                     f"{by_url_files / by_file_files:.1f}x fewer file reads"))
        seq_rate, par_rate = seq_count / seq_s, len(sample) / par_s
        for size in cited_sizes:
            label = "measured" if size <= len(sample) else "at the measured rate"
            rows.append((f"(c) join {size:,} cited URLs, {args.index_rows / 1e6:g}M rows",
                         f"{join_times[size]:.2f} s",
                         f"{found_rows[size]:,} found; per-URL CDX: {size / seq_rate:,.1f} s with 1 worker, "
                         f"{size / par_rate:,.1f} s with {args.workers} ({label}) = "
                         f"{size / par_rate / join_times[size]:.1f}x the join"))

        # (d) the documents stage end to end ------------------------------------------------------------------
        from wikiref_dataset.process.console import datatrove_console
        from wikiref_dataset.web.documents import DocumentSources, run_documents
        from wikiref_dataset.web.warc import WarcIndex

        statements = root / "statements.jsonl.gz"
        with gzip.open(statements, "wt", encoding="utf-8") as handle:
            for number, item in enumerate(cited[: args.stage_urls]):
                handle.write(json.dumps({"text": f"Statement {number}.", "id": f"bench-{number}", "metadata": {
                    "url": item["url"], "fetch_url": item["url"], "access_date": item["access_date"]}}) + "\n")
        warc_index = root / "warc_index.sqlite"
        built = WarcIndex(warc_index)
        built.add_many(warcs)
        built.close()
        variants = {
            "local WARC index (baseline)": {"warc_index": warc_index},
            "Common Crawl via CDX": {"sources": DocumentSources(common_crawl=CommonCrawlConfig(
                crawls=(CRAWL,), cdx_api=f"{pywb}/{{crawl}}/cdx", cc_data=data_url, cdx_min_interval_s=0.0,
                lookup_workers=args.workers))},
            "Common Crawl via columnar index": {"sources": DocumentSources(common_crawl=CommonCrawlConfig(
                crawls=(CRAWL,), cc_index=str(bench_index), cc_data=data_url, lookup_workers=args.workers))},
        }
        stack.enter_context(datatrove_console(logs=False))  # datatrove's errors only on the console
        run_documents([statements], root / "warm-up", warc_index=warc_index, progress=False)  # loads the models
        stage: dict[str, tuple[float, object]] = {}
        for name, options in variants.items():
            def run(name: str = name, options: dict = options) -> object:
                out = root / "stage" / f"{name.split()[-1]}-{time.perf_counter_ns()}"
                return run_documents([statements], out, tasks=1, workers=1, progress=False, **options)
            stage[name] = best_of(args.repeats, run)
        base_s = stage["local WARC index (baseline)"][0]
        for name, (seconds, summary) in stage.items():
            note = (f"fetched {summary.n_fetched}, missing {summary.n_missing}, failed {summary.n_failed}"
                    + ("" if name.endswith("(baseline)") else f"; {seconds / base_s:.2f}x the baseline's time"))
            rows.append((f"(d) documents stage, {name}", f"{args.stage_urls / seconds:.1f} URLs/s", note))
        fetched = {name: (summary.n_fetched, dict(summary.fetched)) for name, (_, summary) in stage.items()}

    width = max(len(name) for name, _, _ in rows)
    print(f"\n{'measure':{width}}  {'value':>18}  note")
    for name, value, note in rows:
        print(f"{name:{width}}  {value:>18}  {note}")
    print(f"same lookups 1 vs {args.workers} workers: True; same resolved captures and bodies CDX 1/N workers and "
          f"columnar: {same_b}; same captures per-URL CDX vs join on the synthetic index ({len(sample):,} URLs): "
          f"{same_c}; same captures split by URL vs by index file: {same_e}; DuckDB threads: {threads}")
    shares = ", ".join(f"{name} {count / len(urls):.0%}" for name, count in outcomes.most_common())
    print(f"outcome shares on the test servers (set by the fixture, not measured): {shares}; "
          f"decoded body {body_bytes / max(outcomes['found'], 1) / 1e3:.0f} KB per found page")

    # Projection per million cited URLs ---------------------------------------------------------------------------
    million = 1_000_000
    found_share = outcomes["found"] / len(urls)
    cdx_per_url = cdx_requests / len(urls)
    per_row = join_times[min(cited_sizes)] / args.index_rows  # the scan dominates the smallest join
    per_key = max(0.0, (join_times[largest] - join_times[min(cited_sizes)]) / (largest - min(cited_sizes)))
    join_full = per_row * args.crawl_rows * args.crawls + per_key * million
    cdx_public = million * cdx_per_url * args.crawls * args.cdx_interval
    reads = million * col_reads / len(urls)  # the columnar index records redirects: one read per record used
    remote_rate = args.workers / args.range_latency
    local_read = (col_s - join_s) / max(col_reads, 1)
    stage_rate = args.stage_urls / stage["Common Crawl via columnar index"][0]
    print(f"\nprojection per {million:,} cited URLs ({args.crawls} crawl(s); shares as above, so "
          f"{found_share * million:,.0f} pages found and {reads:,.0f} Range reads):")
    print(f"  lookups, per-URL CDX on index.commoncrawl.org: {cdx_per_url:.2f} requests per URL per crawl x "
          f"{args.cdx_interval:g} s (cdx_toolkit's interval, shared by all threads of a process) = "
          f"{duration(cdx_public)} (assumption: that rate limit; on the test server {args.workers} workers did "
          f"{rate_many:,.0f} URLs/s)")
    print(f"  lookups, columnar join: {per_row * 1e9:.1f} ns per index row + {per_key * 1e6:.1f} us per cited URL "
          f"(measured on {args.index_rows:,} rows, one CPU) x {args.crawl_rows:.1e} rows per crawl (assumption) = "
          f"{duration(join_full)} of core time for the whole build: the index read once, split among the "
          f"index_join tasks by file (split by URL, each of 16 tasks would read all of it: "
          f"{duration(16 * per_row * args.crawl_rows * args.crawls + per_key * million)}); from a copy of the "
          "crawl's index (about 300 GB per crawl, as Common Crawl states)")
    print(f"  Range reads from data.commoncrawl.org: {args.workers} in flight (one task) at an assumed "
          f"{args.range_latency:g} s "
          f"each = {remote_rate:.0f}/s -> {duration(reads / remote_rate)}; at cdx_toolkit's 0.55 s spacing "
          f"{duration(reads * 0.55)}; as measured on 127.0.0.1 ({local_read * 1e3:.1f} ms per read + parse) "
          f"-> {duration(reads * local_read)}")
    print(f"  documents stage (extraction etc., measured on one core at these shares): {stage_rate:.1f} cited URLs/s "
          f"-> {duration(million / stage_rate)} of core time")
    join_vs_cdx = {size: size / par_rate / join_times[size] for size in cited_sizes}
    print(f"RESULT bench_commoncrawl: CDX lookups {args.workers} workers {rate_many:,.0f}/s = "
          f"{rate_many / rate_one:.2f}x 1 worker; resolve {cdxn_s * per_k:.2f} s per 1k URLs via CDX, "
          f"{col_s * per_k:.2f} s via the columnar index; join of {largest:,} URLs on {args.index_rows / 1e6:g}M rows "
          f"{join_times[largest]:.2f} s = {join_vs_cdx[largest]:.0f}x faster than per-URL CDX with {args.workers} "
          f"workers; join split by index file {by_url_s / by_file_s:.2f}x faster than by URL with "
          f"{args.join_tasks} tasks ({by_file_files} vs {by_url_files} file reads); documents stage {stage_rate:.1f} URLs/s ({stage['Common Crawl via columnar index'][0] / base_s:.2f}x "
          f"the local WARC time); per 1M URLs (projected): CDX on Common Crawl {duration(cdx_public)}, columnar join "
          f"{duration(join_full)} + Range reads {duration(reads / remote_rate)}")
    assert fetched["Common Crawl via CDX"][0] == fetched["Common Crawl via columnar index"][0] == fetched[
        "local WARC index (baseline)"][0], fetched
    return 0


if __name__ == "__main__":
    sys.exit(main())
