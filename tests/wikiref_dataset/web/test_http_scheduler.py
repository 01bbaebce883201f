"""Tests for the crawl scheduler of wikiref_dataset.web.http (CrawlScheduler, HttpFetcher.fetch_many) against servers
started on the loopback addresses 127.0.0.2, 127.0.0.3, ... (one host each; nothing else is contacted)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterator

import pytest
from web_testing import LocalServer, Route, serve

from wikiref_dataset.web.http import CrawlScheduler, FetchResult, HttpConfig, HttpFetcher, crawl_order

HTML = b"<html><head><title>T</title></head><body><p>Hello.</p></body></html>"
ROBOTS = Route(body=b"User-agent: *\nDisallow: /private\n", headers={"Content-Type": "text/plain"})


@contextlib.contextmanager
def loopback_servers(count: int, first: int = 2) -> Iterator[list[LocalServer]]:
    """`count` servers on 127.0.0.<first>, 127.0.0.<first + 1>, ..., each with the robots.txt above."""
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(serve(host=f"127.0.0.{first + i}")) for i in range(count)]
        for server in servers:
            server.routes["/robots.txt"] = ROBOTS
        yield servers


def config(servers: list[LocalServer], **overrides) -> HttpConfig:
    values = dict(min_interval_s=0.0, backoff_s=0.0, retries=0, connect_timeout_s=2.0, read_timeout_s=2.0,
                  total_timeout_s=5.0, allow_hosts_for_testing=frozenset(server.host for server in servers))
    values.update(overrides)
    return HttpConfig(**values)


class Watched(HttpFetcher):
    """An HttpFetcher that counts the fetches under way, in all and per host, and keeps the largest counts."""

    def __init__(self, config: HttpConfig) -> None:
        super().__init__(config)
        self.watch_lock = threading.Lock()
        self.now: Counter[str] = Counter()
        self.most: Counter[str] = Counter()

    def fetch(self, url: str) -> FetchResult:
        host = url.split("/")[2].split(":")[0]
        with self.watch_lock:
            self.now[host] += 1
            self.now["*"] += 1
            for key in (host, "*"):
                self.most[key] = max(self.most[key], self.now[key])
        try:
            return super().fetch(url)
        finally:
            with self.watch_lock:
                self.now[host] -= 1
                self.now["*"] -= 1


def request_times(server: LocalServer, path_prefix: str = "/") -> list[float]:
    return sorted(when for path, when in server.log if path.startswith(path_prefix))


def comparable(result: FetchResult) -> tuple:
    return (result.url, result.final_url, result.status, result.http_status, result.content_type, result.body,
            result.redirects, result.detail, result.from_cache)


def test_hosts_are_fetched_at_once_each_at_its_own_pace() -> None:
    """Sorted URLs of four hosts (one host's URLs after the other's): every host's requests stay 0.2 s apart, the
    hosts are served at the same time, and never more than `concurrency` requests are under way."""
    with loopback_servers(4) as servers:
        for server in servers:
            for page in range(4):
                server.routes[f"/p{page}"] = Route(body=HTML, delay=0.1)
        urls = sorted(server.url(f"/p{page}") for server in servers for page in range(4))
        fetcher = Watched(config(servers, min_interval_s=0.2, concurrency=3, respect_robots=True))
        started = time.monotonic()
        results = list(fetcher.fetch_many(urls))
        elapsed = time.monotonic() - started

        assert [index for index, _ in results] == list(range(len(urls)))  # input order
        assert [result.url for _, result in results] == urls and all(result.ok for _, result in results)
        for server in servers:
            times = request_times(server)
            assert len(times) == 5  # robots.txt once, then the 4 pages
            assert min(later - earlier for earlier, later in zip(times, times[1:])) >= 0.17, (server.host, times)
        assert fetcher.most["*"] <= 3  # the global limit
        assert fetcher.most["*"] >= 2  # several hosts at once
        assert all(fetcher.most[server.host] == 1 for server in servers)  # per_host_connections=1
        # One host after the other would take 4 hosts x 5 requests x 0.2 s = 4 s; at once, about 1 s.
        assert elapsed < 2.5, elapsed
        first_of_last_host = request_times(servers[-1], "/p")[0]
        last_of_first_host = request_times(servers[0], "/p")[-1]
        assert first_of_last_host < last_of_first_host  # the last host did not wait for the first one


def test_same_results_as_one_url_at_a_time() -> None:
    """Statuses, bodies, redirects and details are those of fetch() one URL after the other, in input order, and
    the guards still hold: robots.txt per host, a redirect to another host, a host not allowed, a bad scheme."""
    with loopback_servers(3) as servers, serve(host="127.0.0.9") as not_allowed:
        first, second, third = servers
        for server in servers:
            server.routes["/page"] = Route(body=HTML + server.host.encode())
            server.routes["/private"] = Route(body=HTML)
        first.routes["/gone"] = Route(404, b"no")
        first.routes["/to-second"] = Route(302, headers={"Location": second.url("/page")})
        second.routes["/pdf"] = Route(body=b"%PDF-1.4", headers={"Content-Type": "application/pdf"})
        third.routes["/error"] = Route(503, b"busy")
        not_allowed.routes["/page"] = Route(body=HTML)
        urls = sorted([
            first.url("/page"), first.url("/gone"), first.url("/to-second"), first.url("/private"),
            second.url("/page"), second.url("/pdf"), second.url("/page"), third.url("/error"), third.url("/page"),
            not_allowed.url("/page"), "ftp://127.0.0.2/file", "http:///no-host",
        ])  # fmt: skip
        settings = dict(respect_robots=True, concurrency=4)
        one_by_one = [HttpFetcher(config(servers, **settings)).fetch(url) for url in urls]
        for server in (*servers, not_allowed):
            server.log.clear()
        scheduled = [result for _, result in HttpFetcher(config(servers, **settings)).fetch_many(urls)]
        unordered = dict(HttpFetcher(config(servers, **settings)).fetch_many(urls, ordered=False))

        assert [comparable(r) for r in scheduled] == [comparable(r) for r in one_by_one]
        assert [comparable(unordered[i]) for i in range(len(urls))] == [comparable(r) for r in one_by_one]
        statuses = Counter(result.status for result in scheduled)
        assert statuses == {"ok": 5, "not_found": 1, "robots_disallowed": 1, "not_html": 1, "http_error_503": 1,
                            "blocked_address": 1, "bad_scheme": 1, "bad_url": 1}
        redirected = scheduled[urls.index(first.url("/to-second"))]
        assert redirected.final_url == second.url("/page") and redirected.redirects == (first.url("/to-second"),)
        assert not_allowed.log == [] and first.hits("/private") == 0


@pytest.mark.parametrize("per_host", [1, 2])
def test_connections_per_host(per_host: int) -> None:
    with loopback_servers(1) as servers:
        for page in range(4):
            servers[0].routes[f"/p{page}"] = Route(body=HTML, delay=0.2)
        fetcher = Watched(config(servers, concurrency=4, per_host_connections=per_host, respect_robots=False))
        results = list(fetcher.fetch_many([servers[0].url(f"/p{page}") for page in range(4)]))
        assert all(result.ok for _, result in results)
        assert fetcher.most[servers[0].host] == per_host


def test_closing_early_cancels_what_has_not_started() -> None:
    with loopback_servers(1) as servers:
        server = servers[0]
        server.routes.update({f"/p{page}": Route(body=HTML) for page in range(20)})
        fetcher = HttpFetcher(config(servers, min_interval_s=0.1, respect_robots=False))
        results = fetcher.fetch_many([server.url(f"/p{page}") for page in range(20)])
        assert next(results)[1].ok
        results.close()  # waits for the request under way, cancels the rest
        hits = len(server.log)
        time.sleep(0.25)
        assert len(server.log) == hits and hits <= 3

        scheduler = CrawlScheduler(fetcher)
        queued = [scheduler.submit(server.url(f"/p{page}")) for page in range(5)]
        scheduler.close()
        assert any(future.cancelled() for future in queued)
        assert all(future.cancelled() or future.result().ok for future in queued)
        with pytest.raises(RuntimeError, match="closed"):
            scheduler.submit(server.url("/p0"))


@pytest.mark.parametrize("per_host", [1, 2])
def test_draining_close_and_crawl_delay(per_host: int) -> None:
    """close(cancel_pending=False) fetches everything queued; a robots.txt Crawl-delay longer than the interval
    spaces the host's requests, with one connection per host or several."""
    with loopback_servers(2) as servers:
        slow, fast = servers
        slow.routes["/robots.txt"] = Route(body=b"User-agent: *\nCrawl-delay: 0.3\n", headers={"Content-Type": "text/plain"})
        for server in servers:
            server.routes.update({f"/p{page}": Route(body=HTML) for page in range(3)})
        scheduler = CrawlScheduler(HttpFetcher(config(servers, min_interval_s=0.05, respect_robots=True,
                                                      per_host_connections=per_host)))
        futures = [scheduler.submit(server.url(f"/p{page}")) for server in servers for page in range(3)]
        scheduler.close(cancel_pending=False)
        assert all(future.done() and future.result().ok for future in futures)
        slow_times, fast_times = request_times(slow, "/p"), request_times(fast, "/p")
        assert min(b - a for a, b in zip(slow_times, slow_times[1:])) >= 0.27, slow_times
        assert fast_times[-1] < slow_times[-1]  # the fast host did not wait for the slow one


def test_config_limits_are_checked() -> None:
    for bad in ({"concurrency": 0}, {"per_host_connections": 0}, {"lookahead": 0}, {"concurrency": 1.5}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            HttpConfig(**bad)


def test_a_fetch_that_raises_reaches_the_caller() -> None:
    class Broken(HttpFetcher):
        def fetch(self, url: str) -> FetchResult:
            if url.endswith("/boom"):
                raise RuntimeError("bug in fetch")
            return super().fetch(url)

    with loopback_servers(1) as servers:
        servers[0].routes["/ok"] = Route(body=HTML)
        with CrawlScheduler(Broken(config(servers, respect_robots=False))) as scheduler:
            boom, fine = scheduler.submit(servers[0].url("/boom")), scheduler.submit(servers[0].url("/ok"))
            with pytest.raises(RuntimeError, match="bug in fetch"):
                boom.result(timeout=5)
            assert fine.result(timeout=5).ok


def test_crawl_order_spreads_every_host_over_the_whole_order() -> None:
    """Sorted URLs, one host with 10x the others' and a few one-URL hosts: the order is a permutation that keeps each
    host's URLs in their order, every prefix holds each host in its share of the whole (give or take the number of
    hosts), and it depends on the URLs only."""
    counts = {"big.example": 300, "a.example": 30, "b.example": 30, "c.example": 30, "one.example": 1, "two.example": 1}
    urls = sorted(f"https://{host}/page/{page:04d}" for host, count in counts.items() for page in range(count))
    urls += ["mailto:someone@example.org", "http:///no-host"]  # no host: spread as one host, not dropped
    order = crawl_order(urls)

    assert sorted(order) == list(range(len(urls)))
    assert crawl_order(list(urls)) == order
    hosts = [url.split("/")[2] if "://" in url else "" for url in urls]
    for host in set(hosts):
        positions = [index for index in order if hosts[index] == host]
        assert positions == sorted(positions)  # the host's own order is kept
        share = hosts.count(host) / len(urls)
        for length in range(1, len(urls) + 1):
            in_prefix = sum(1 for index in order[:length] if hosts[index] == host)
            assert abs(in_prefix - share * length) <= len(counts) + 1, (host, length)
    assert crawl_order([]) == []
