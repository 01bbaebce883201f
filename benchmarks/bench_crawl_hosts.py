"""Crawl throughput over several hosts: the crawl scheduler (``HttpFetcher.fetch_many``, ``CrawlScheduler``)
against the strategy it replaced, on local servers with added latency, under the same per-host politeness.

Servers: one stdlib ``ThreadingHTTPServer`` per loopback address (127.0.0.2, 127.0.0.3, ...: all loopback on Linux),
in a child process of their own (so that the crawler's threads and extraction do not slow their answers), each
answering every request (``robots.txt`` included) after ``--latency`` seconds with a deterministic HTML page of
about 3 KB. Workload: ``--urls-per-host`` URLs per host (with ``--skew N``, the first ``--skewed-hosts`` hosts in URL
order have N times as many, like the news sites of real citations), given sorted (as stage 1 hands them to the documents stage, so one host's URLs follow each other). Every run uses an
``HttpFetcher`` with the same ``HttpConfig``: robots.txt obeyed, ``min_interval_s = --interval`` between two requests
to one host.

* scheduler, sorted input: ``list(fetcher.fetch_many(urls))`` — results in input order, ``concurrency`` workers,
  ``per_host_connections = 1``, ``lookahead`` 512 (the documents stage's defaults); reaches only the hosts among the
  next 512 URLs, so it falls behind once a host has more than 512 / hosts URLs.
* scheduler, crawl order: the same, with the URLs in ``crawl_order(urls)`` (each host's URLs spread evenly).
* old strategy (baseline, written here as the documents stage ran it before): batches of 32 URLs in sorted order,
  each batch through ``ThreadPoolExecutor(8).map(fetcher.fetch, batch)``, one batch after the other.
* documents stage (ours, end to end): ``FetchCitedDocuments(http_config=...)`` over statements citing the same URLs
  in sorted order (HTTP only, trafilatura extraction and the blank sentence splitter included); it takes them in
  crawl order itself.

The target is the most a polite crawler can get: URLs / (the largest host's URLs x ``--interval``) pages/s, which is
hosts x per-host rate (``--hosts / --interval``) when the hosts are even. The script prints pages/s, its ratio to
that target (>= 0.8 wanted), the speedup over the old strategy, the smallest gap between two requests to one host
that the servers saw (politeness), and checks that every run returns the same statuses and bodies.

    .venv/bin/python benchmarks/bench_crawl_hosts.py            # 8 hosts x 20 URLs, 0.1 s latency, 0.25 s interval
    .venv/bin/python benchmarks/bench_crawl_hosts.py --quick    # smoke run, about 10 s
    # host-heavy (100 URLs in a row per host) and skewed (one or two hosts with 10x the others' URLs), without the
    # old strategy (slow there):
    .venv/bin/python benchmarks/bench_crawl_hosts.py --urls-per-host 100 --latency 0.05 --interval 0.1 --no-old
    .venv/bin/python benchmarks/bench_crawl_hosts.py --urls-per-host 60 --skew 10 --latency 0.05 --interval 0.1 --no-old
    .venv/bin/python benchmarks/bench_crawl_hosts.py --urls-per-host 60 --skew 10 --skewed-hosts 2 --latency 0.05 \
        --interval 0.05 --no-old
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import random
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from pathlib import Path

import _common

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = ("harbour bridge council reopened cables traffic mayor euros repairs the of and to in a was for on after "
         "two years engineers said residents ferry service port city budget works closed steel").split()


class Farm:
    """What the servers share: the latency, and a log of request arrivals (host, path, time) and of concurrency."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.lock = threading.Lock()
        self.log: list[tuple[str, str, float]] = []
        self.now = 0
        self.most = 0

    def reset(self) -> None:
        with self.lock:
            self.log, self.now, self.most = [], 0, 0

    def page(self, host: str, path: str) -> bytes:
        rng = random.Random(f"{host}{path}")
        paragraphs = "".join("<p>" + " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 80))).capitalize()
                             + ".</p>" for _ in range(8))
        return (f"<html><head><title>{host}{path}</title></head><body><article><h1>{host}{path}</h1>{paragraphs}"
                "</article></body></html>").encode()

    def gaps(self) -> dict[str, float]:
        """The smallest gap between two request arrivals at each host."""
        times: dict[str, list[float]] = {}
        for host, _, when in self.log:
            times.setdefault(host, []).append(when)
        return {host: min((b - a for a, b in zip(sorted(t), sorted(t)[1:])), default=float("inf"))
                for host, t in times.items()}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (BaseHTTPRequestHandler's name)
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        farm: Farm = self.server.farm  # type: ignore[attr-defined]
        host = self.server.server_address[0]
        with farm.lock:
            farm.log.append((host, self.path, time.monotonic()))
            farm.now += 1
            farm.most = max(farm.most, farm.now)
        try:
            time.sleep(farm.latency)
            if self.path == "/robots.txt":
                body, content_type = b"User-agent: *\nAllow: /\n", "text/plain"
            else:
                body, content_type = farm.page(host, self.path), "text/html; charset=utf-8"
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        finally:
            with farm.lock:
                farm.now -= 1


@contextlib.contextmanager
def servers(hosts: int, farm: Farm) -> Iterator[list[str]]:
    """One server per address 127.0.0.2, 127.0.0.3, ...; yields their base URLs."""
    running = []
    try:
        for number in range(hosts):
            server = ThreadingHTTPServer((f"127.0.0.{2 + number}", 0), Handler)
            server.daemon_threads = True
            server.farm = farm  # type: ignore[attr-defined]
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            thread.start()
            running.append((server, thread))
        yield [f"http://{server.server_address[0]}:{server.server_address[1]}" for server, _ in running]
    finally:
        for server, thread in running:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


def serve_farm(connection: Connection, hosts: int, latency: float) -> None:
    """The server process: starts the servers, sends their base URLs, then answers `reset` and `stats` until
    `stop`."""
    farm = Farm(latency)
    with servers(hosts, farm) as bases:
        connection.send(bases)
        while (command := connection.recv()) != "stop":
            if command == "reset":
                farm.reset()
                connection.send(None)
            else:
                with farm.lock:
                    connection.send((farm.gaps(), farm.most, len(farm.log)))


def old_strategy(fetcher, urls: list[str], batch_size: int, threads: int) -> list:
    """The documents stage before the scheduler: sorted batches, each mapped over a thread pool, in turn."""
    results = []
    with ThreadPoolExecutor(threads) as pool:
        for start in range(0, len(urls), batch_size):
            results.extend(pool.map(fetcher.fetch, urls[start : start + batch_size]))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=8, help="servers, on 127.0.0.2 onwards (at most 250)")
    parser.add_argument("--urls-per-host", type=int, default=20)
    parser.add_argument("--skew", type=int, default=1, help="the skewed hosts have this many times the URLs")
    parser.add_argument("--skewed-hosts", type=int, default=1, help="hosts (first in URL order) given --skew")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds each response waits")
    parser.add_argument("--interval", type=float, default=0.25, help="per-host politeness interval (s)")
    parser.add_argument("--concurrency", type=int, default=8, help="the scheduler's requests in flight")
    parser.add_argument("--old-batch-size", type=int, default=32)
    parser.add_argument("--old-threads", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each (the best is reported)")
    parser.add_argument("--target", type=float, default=0.8, help="least throughput / (hosts x per-host rate)")
    parser.add_argument("--no-stage", action="store_true", help="skip the documents-stage run")
    parser.add_argument("--no-old", action="store_true", help="skip the old strategy (slow with many URLs per host)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.hosts, args.urls_per_host = 4, 8
    if not 1 <= args.hosts <= 250:
        parser.error("--hosts must be between 1 and 250")
    if args.skew < 1 or not 1 <= args.skewed_hosts <= args.hosts:
        parser.error("--skew must be >= 1 and --skewed-hosts between 1 and --hosts")
    context = multiprocessing.get_context("spawn")
    connection, child_end = context.Pipe()
    farm_process = context.Process(target=serve_farm, args=(child_end, args.hosts, args.latency), daemon=True)
    farm_process.start()  # before pinning: the servers keep every CPU
    if not connection.poll(60):
        raise SystemExit("bench_crawl_hosts: the server process did not start within 60 s")
    bases = connection.recv()
    print(_common.pin_to_one_core(not args.no_pin), "(the crawler; the servers are not pinned) |",
          _common.machine_line())

    from datatrove.data import Document

    from wikiref_dataset.text import BLANK_MODEL, TextConfig
    from wikiref_dataset.web.documents import CitedDocument, FetchCitedDocuments
    from wikiref_dataset.web.extract import extract_pages
    from wikiref_dataset.web.http import HttpConfig, HttpFetcher, crawl_order

    skewed = args.skewed_hosts if args.skew > 1 else 0
    counts = [args.urls_per_host * args.skew] * skewed + [args.urls_per_host] * (args.hosts - skewed)
    ideal = sum(counts) / (max(counts) * args.interval)
    rows = []
    try:
        urls = sorted(f"{base}/article/{page:04d}" for base, count in zip(sorted(bases), counts)
                      for page in range(count))
        config = HttpConfig(min_interval_s=args.interval, concurrency=args.concurrency, retries=0,
                            allow_hosts_for_testing=frozenset(base.split("//")[1].split(":")[0] for base in bases))
        hosts = f"{args.hosts} hosts x {args.urls_per_host} URLs" if not skewed else (
            f"{skewed} host(s) x {counts[0]} URLs (first in URL order) + {args.hosts - skewed} x {args.urls_per_host}")
        print(f"workload: {hosts}, sorted; latency {args.latency:g} s; interval {args.interval:g} s per host "
              f"(robots.txt obeyed: one more request per host); target rate {len(urls)} URLs / ({max(counts)} x "
              f"{args.interval:g} s) = {ideal:.1f} pages/s")

        def measure(name: str, run) -> list:
            best_time, outcome, gaps, most = float("inf"), None, {}, 0
            for _ in range(args.repeats):
                connection.send("reset")
                connection.recv()
                start = time.perf_counter()
                result = run()
                elapsed = time.perf_counter() - start
                connection.send("stats")
                run_gaps, run_most, _ = connection.recv()
                if elapsed < best_time:
                    best_time, outcome, gaps, most = elapsed, result, run_gaps, run_most
            rows.append((name, best_time, len(urls) / best_time, min(gaps.values()), most))
            return outcome

        def crawled(order: list[int]) -> list:  # fetch_many over urls in `order`, results back in urls' order
            results = [None] * len(urls)
            for index, result in HttpFetcher(config).fetch_many([urls[i] for i in order]):
                results[order[index]] = result
            return results

        sorted_input = measure("scheduler, sorted input", lambda: crawled(list(range(len(urls)))))
        ours = measure("scheduler, crawl order", lambda: crawled(crawl_order(urls)))
        assert all(r.ok for r in ours), [r.detail for r in ours if not r.ok][:3]
        same = [(r.url, r.status, r.body) for r in ours] == [(r.url, r.status, r.body) for r in sorted_input]
        if not args.no_old:
            old = measure(f"old: batches of {args.old_batch_size}",
                          lambda: old_strategy(HttpFetcher(config), urls, args.old_batch_size, args.old_threads))
            same = same and [(r.url, r.status, r.body) for r in ours] == [(r.url, r.status, r.body) for r in old]
        if not args.no_stage:
            statements = [Document(text=f"s{i}", id=f"s{i}", metadata={"url": url}) for i, url in enumerate(urls)]
            step = FetchCitedDocuments(http_config=config, text_config=TextConfig(model=BLANK_MODEL))
            list(extract_pages([(ours[0].body, urls[0], ours[0].content_type)], step.extraction, step.text_pipeline))

            def stage() -> list:  # trafilatura and the splitter are loaded (warm-up above): the crawl is timed
                return [CitedDocument.from_document(d) for d in step.run(iter(statements))]

            documents = measure("documents stage (HTTP)", stage)
            assert [d.normalized_url for d in documents] == [urls[i] for i in crawl_order(urls)]
            assert all(d.status == "ok" for d in documents)
    finally:
        connection.send("stop")
        farm_process.join(timeout=10)

    print(f"{'':26}{'seconds':>9}{'pages/s':>9}{'/ target':>10}{'min gap/host s':>16}{'max at once':>13}")
    for name, seconds, rate, gap, most in rows:
        print(f"{name:26}{seconds:9.2f}{rate:9.1f}{rate / ideal:10.2f}{gap:16.3f}{most:13d}")
    rates = {name: rate for name, _, rate, _, _ in rows}
    print(f"same statuses and bodies in every run: {same}")
    ratio = rates["scheduler, crawl order"] / ideal
    met = "met" if ratio >= args.target else "NOT met"
    parts = [f"sorted input {rates['scheduler, sorted input'] / ideal:.2f}"]
    if "documents stage (HTTP)" in rates:
        stage_ratio = rates["documents stage (HTTP)"] / ideal
        parts.append(f"documents stage {stage_ratio:.2f} ({'met' if stage_ratio >= args.target else 'NOT met'})")
    if not args.no_old:
        parts.append(f"{rates['scheduler, crawl order'] / rows[2][2]:.1f}x the old sorted-batch strategy")
    print(f"RESULT bench_crawl_hosts: crawl order {rates['scheduler, crawl order']:.1f} pages/s = {ratio:.2f} of target "
          f"(>= {args.target:g}: {met}); {'; '.join(parts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
