"""Tests for wikiref_dataset.web.http against servers started on 127.0.0.1 (no other traffic is ever sent: the
connection function is replaced wherever a test names another address)."""

from __future__ import annotations

import gzip
import shutil
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

import pytest
from web_testing import LocalServer, Route, serve

from wikiref_dataset.web import http as web_http
from wikiref_dataset.web.http import HttpConfig, HttpFetcher, RobotsRules, is_public_address

HTML = b"<html><head><title>T</title></head><body><p>Hello.</p></body></html>"
LOCAL = frozenset({"127.0.0.1"})


def config(**overrides) -> HttpConfig:
    """Fast settings for tests: no spacing, no backoff, short timeouts, robots off unless asked."""
    values = dict(min_interval_s=0.0, backoff_s=0.0, retries=0, connect_timeout_s=2.0, read_timeout_s=2.0,
                  total_timeout_s=5.0, respect_robots=False, allow_hosts_for_testing=LOCAL)
    values.update(overrides)
    return HttpConfig(**values)


@pytest.fixture
def no_connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Replaces the connection function: records the address asked for and refuses, so nothing leaves the host."""
    attempts: list[tuple[str, int]] = []

    def refuse(address: str, port: int, timeout: float) -> socket.socket:
        attempts.append((address, port))
        raise ConnectionRefusedError("test: no connection made")

    monkeypatch.setattr(web_http, "open_connection", refuse)
    return attempts


# ---- the address guard --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/file", "javascript:alert(1)",
                                 "data:text/html,<p>x</p>", "gopher://example.com/"])
def test_non_http_schemes_are_refused(url: str, no_connections: list) -> None:
    result = HttpFetcher(config()).fetch(url)
    assert result.status == "bad_scheme" and url in result.detail
    assert no_connections == []


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "224.0.0.1", "192.168.1.5",
                                     "172.16.0.1", "0.0.0.0", "100.64.0.1", "fc00::1", "fe80::1", "::ffff:127.0.0.1",
                                     "64:ff9b::a00:1", "2002:7f00:1::1", "240.0.0.1", "255.255.255.255"])
def test_hosts_resolving_to_non_public_addresses_are_refused(address: str, no_connections: list) -> None:
    fetcher = HttpFetcher(config(allow_hosts_for_testing=frozenset()), resolver=lambda host, port: [address])
    result = fetcher.fetch("http://innocent-looking.example/page")
    assert result.status == "blocked_address" and address in result.detail
    assert no_connections == []


@pytest.mark.parametrize("url", ["http://127.0.0.1/", "http://[::1]:8080/", "http://169.254.169.254/latest/meta-data",
                                 "http://10.0.0.1/", "http://0x7f.1/"])
def test_literal_private_addresses_are_refused(url: str, no_connections: list) -> None:
    result = HttpFetcher(config(allow_hosts_for_testing=frozenset()), resolver=lambda h, p: ["127.0.0.1"]).fetch(url)
    assert result.status == "blocked_address"
    assert no_connections == []


def test_one_private_address_among_public_ones_is_refused(no_connections: list) -> None:
    fetcher = HttpFetcher(config(), resolver=lambda host, port: ["93.184.216.34", "10.0.0.7"])
    assert fetcher.fetch("http://mixed.example/").status == "blocked_address"
    assert no_connections == []


def test_connects_to_the_checked_address_only(no_connections: list) -> None:
    """The resolver is asked once per request and the connection goes to the address it returned (a second,
    rebinding answer is never used)."""
    answers = iter([["93.184.216.34"], ["127.0.0.1"], ["127.0.0.1"]])
    fetcher = HttpFetcher(config(), resolver=lambda host, port: next(answers))
    result = fetcher.fetch("http://rebinding.example:8080/")
    assert result.status == "connection_error"
    assert no_connections == [("93.184.216.34", 8080)]


def test_is_public_address() -> None:
    for public in ("93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"):
        assert is_public_address(public)
    for private in ("127.0.0.2", "10.0.0.1", "::1", "::ffff:10.0.0.1", "::", "2001:db8::1"):
        assert not is_public_address(private)


def test_allowance_lets_the_local_server_through_and_nothing_else(local_server: LocalServer) -> None:
    local_server.routes["/page"] = Route(body=HTML)
    allowed = HttpFetcher(config()).fetch(local_server.url("/page"))
    assert allowed.status == "ok" and allowed.body == HTML and allowed.http_status == 200
    assert allowed.content_type == "text/html; charset=utf-8" and not allowed.from_cache
    assert local_server.hits("/page") == 1

    refused = HttpFetcher(config(allow_hosts_for_testing=frozenset())).fetch(local_server.url("/page"))
    assert refused.status == "blocked_address" and "127.0.0.1" in refused.detail
    assert local_server.hits("/page") == 1  # the guard refused before connecting


def test_redirects_to_private_addresses_are_refused(local_server: LocalServer, monkeypatch) -> None:
    port = local_server.port
    local_server.routes["/to-private"] = Route(302, headers={"Location": "http://10.0.0.1/admin"})
    local_server.routes["/to-name"] = Route(302, headers={"Location": "http://internal.example/secret"})
    local_server.routes["/to-localhost"] = Route(301, headers={"Location": f"http://localhost:{port}/page"})
    local_server.routes["/to-file"] = Route(302, headers={"Location": "file:///etc/passwd"})
    local_server.routes["/page"] = Route(body=HTML)
    real_connect = web_http.open_connection
    connected: list[str] = []

    def only_local(address: str, port: int, timeout: float) -> socket.socket:
        connected.append(address)
        assert address == "127.0.0.1", f"test would connect to {address}"
        return real_connect(address, port, timeout)

    monkeypatch.setattr(web_http, "open_connection", only_local)
    resolver = {"internal.example": ["192.168.0.5"], "localhost": ["127.0.0.1"], "127.0.0.1": ["127.0.0.1"]}
    fetcher = HttpFetcher(config(), resolver=lambda host, port: resolver[host])
    for path, status in (("/to-private", "blocked_address"), ("/to-name", "blocked_address"),
                         ("/to-localhost", "blocked_address"), ("/to-file", "bad_scheme")):
        result = fetcher.fetch(local_server.url(path))
        assert result.status == status, path
        assert result.redirects == (local_server.url(path),)
    assert local_server.hits("/page") == 0
    assert set(connected) == {"127.0.0.1"}


# ---- robots.txt ---------------------------------------------------------------------------------------------------


def test_robots_txt_is_respected(local_server: LocalServer) -> None:
    local_server.routes["/robots.txt"] = Route(body=b"User-agent: *\nDisallow: /private\nAllow: /private/open$\n",
                                               headers={"Content-Type": "text/plain"})
    for path in ("/private/page", "/private/open", "/public"):
        local_server.routes[path] = Route(body=HTML)
    fetcher = HttpFetcher(config(respect_robots=True))
    assert fetcher.fetch(local_server.url("/private/page")).status == "robots_disallowed"
    assert fetcher.fetch(local_server.url("/private/open")).status == "ok"
    assert fetcher.fetch(local_server.url("/public")).status == "ok"
    assert local_server.hits("/private/page") == 0 and local_server.hits("/robots.txt") == 1


def test_missing_robots_txt_allows_and_server_error_disallows(local_server: LocalServer) -> None:
    local_server.routes["/page"] = Route(body=HTML)
    assert HttpFetcher(config(respect_robots=True)).fetch(local_server.url("/page")).status == "ok"  # 404 robots
    local_server.routes["/robots.txt"] = Route(500, b"oops")
    result = HttpFetcher(config(respect_robots=True)).fetch(local_server.url("/page"))
    assert result.status == "robots_disallowed" and local_server.hits("/page") == 1


def test_robots_rules_rfc9309() -> None:
    text = """
    # comment
    User-agent: OtherBot
    Disallow: /

    User-agent: wikiref-documents
    User-agent: another
    Disallow: /search
    Allow: /search/about
    Disallow: /*.pdf$
    Disallow: /tmp/*/cache
    Crawl-delay: 2.5

    User-agent: *
    Disallow: /
    """
    rules = RobotsRules.parse(text, "wikiref-documents")
    assert rules.crawl_delay == 2.5
    assert not rules.allowed("/search?q=x") and rules.allowed("/search/about/team")
    assert not rules.allowed("/files/report.pdf") and rules.allowed("/files/report.pdf?page=2")
    assert not rules.allowed("/tmp/a/b/cache/x") and rules.allowed("/tmp/cache")
    assert rules.allowed("/") and rules.allowed("/robots.txt")
    everyone = RobotsRules.parse(text, "unknownbot")
    assert not everyone.allowed("/anything") and everyone.allowed("/robots.txt")
    tie = RobotsRules.parse("User-agent: *\nDisallow: /page\nAllow: /page\n", "x")
    assert tie.allowed("/page")
    assert RobotsRules.parse("User-agent: *\nDisallow:\n", "x").allowed("/anything")


def test_robots_percent_encoding_is_normalised_as_rfc_9309_says() -> None:
    """RFC 9309 §2.2.2: octets are compared after percent-encoding is normalised (%3c = %3C; %7E = ~). The matcher
    is protego's; the hand-written one it replaced treated these as different paths."""
    rules = RobotsRules.parse("User-agent: *\nDisallow: /a%3cd\nDisallow: /~joe/\n", "x")
    assert not rules.allowed("/a%3Cd")
    assert not rules.allowed("/%7Ejoe/index.html") and not rules.allowed("/~joe/index.html")
    assert rules.allowed("/b")


# ---- politeness and bounds ----------------------------------------------------------------------------------------


def test_requests_to_one_host_are_spaced(local_server: LocalServer) -> None:
    for path in ("/a", "/b", "/c"):
        local_server.routes[path] = Route(body=HTML)
    fetcher = HttpFetcher(config(min_interval_s=0.2))
    for path in ("/a", "/b", "/c"):
        assert fetcher.fetch(local_server.url(path)).ok
    times = [when for _, when in local_server.log]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert len(gaps) == 2 and min(gaps) >= 0.15, gaps  # 0.2 s asked; ~1 ms without spacing


def test_requests_from_threads_are_spaced_too(local_server: LocalServer) -> None:
    for index in range(4):
        local_server.routes[f"/t{index}"] = Route(body=HTML)
    fetcher = HttpFetcher(config(min_interval_s=0.1))
    threads = [threading.Thread(target=fetcher.fetch, args=(local_server.url(f"/t{i}"),)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    times = sorted(when for _, when in local_server.log)
    assert len(times) == 4 and min(b - a for a, b in zip(times, times[1:])) >= 0.07


def test_slow_server_times_out(local_server: LocalServer) -> None:
    local_server.routes["/slow"] = Route(body=HTML, delay=1.0)
    started = time.monotonic()
    result = HttpFetcher(config(read_timeout_s=0.2)).fetch(local_server.url("/slow"))
    assert result.status == "timeout" and time.monotonic() - started < 0.9


def test_slow_drip_hits_the_total_deadline(local_server: LocalServer) -> None:
    def drip(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.end_headers()
        for _ in range(20):  # bounded: at most 2 s
            handler.wfile.write(b"<p>x</p>")
            handler.wfile.flush()
            time.sleep(0.1)

    local_server.routes["/drip"] = drip
    started = time.monotonic()
    result = HttpFetcher(config(read_timeout_s=0.5, total_timeout_s=0.4)).fetch(local_server.url("/drip"))
    assert result.status == "timeout" and time.monotonic() - started < 1.5


def test_size_cap(local_server: LocalServer) -> None:
    big = b"<html><body>" + b"x" * 200_000 + b"</body></html>"
    local_server.routes["/declared"] = Route(body=big)

    def undeclared(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(big)

    local_server.routes["/undeclared"] = undeclared
    fetcher = HttpFetcher(config(max_bytes=100_000))
    declared = fetcher.fetch(local_server.url("/declared"))
    assert declared.status == "too_large" and "Content-Length" in declared.detail
    assert fetcher.fetch(local_server.url("/undeclared")).status == "too_large"
    assert HttpFetcher(config(max_bytes=300_000)).fetch(local_server.url("/undeclared")).body == big


def test_gzip_bomb_stops_at_the_decoded_cap(local_server: LocalServer) -> None:
    bomb = gzip.compress(b"\0" * 30_000_000, compresslevel=9)  # ~30 KB on the wire
    assert len(bomb) < 100_000
    local_server.routes["/bomb"] = Route(body=bomb, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})
    local_server.routes["/gzipped"] = Route(body=gzip.compress(HTML),
                                            headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})
    fetcher = HttpFetcher(config(max_bytes=1_000_000, max_decoded_bytes=1_000_000))
    result = fetcher.fetch(local_server.url("/bomb"))
    assert result.status == "too_large" and "after decoding" in result.detail
    assert fetcher.fetch(local_server.url("/gzipped")).body == HTML


def test_content_type_check(local_server: LocalServer) -> None:
    local_server.routes["/doc.pdf"] = Route(body=b"%PDF-1.7" + b"\0" * 50_000, headers={"Content-Type": "application/pdf"})
    local_server.routes["/untyped-html"] = Route(body=HTML, headers={})
    local_server.routes["/untyped-binary"] = Route(body=b"\x89PNG\r\n", headers={})
    fetcher = HttpFetcher(config())
    pdf = fetcher.fetch(local_server.url("/doc.pdf"))
    assert pdf.status == "not_html" and "application/pdf" in pdf.detail and pdf.body is None
    assert fetcher.fetch(local_server.url("/untyped-html")).status == "ok"
    assert fetcher.fetch(local_server.url("/untyped-binary")).status == "not_html"
    assert HttpFetcher(config(html_only=False)).fetch(local_server.url("/doc.pdf")).status == "ok"


def test_redirects_are_followed_and_bounded(local_server: LocalServer) -> None:
    local_server.routes["/old"] = Route(301, headers={"Location": "/new"})
    local_server.routes["/new"] = Route(body=HTML)
    local_server.routes["/loop"] = Route(302, headers={"Location": "/loop"})
    for index in range(10):
        local_server.routes[f"/r{index}"] = Route(302, headers={"Location": f"/r{index + 1}"})
    fetcher = HttpFetcher(config(max_redirects=3))
    moved = fetcher.fetch(local_server.url("/old"))
    assert moved.ok and moved.final_url == local_server.url("/new") and moved.redirects == (local_server.url("/old"),)
    loop = fetcher.fetch(local_server.url("/loop"))
    assert loop.status == "too_many_redirects" and local_server.hits("/loop") <= 4
    chain = fetcher.fetch(local_server.url("/r0"))
    assert chain.status == "too_many_redirects" and chain.http_status == 302
    assert sum(local_server.hits(f"/r{i}") for i in range(10)) == 4  # the first request + 3 redirects


def test_503_then_200_is_retried_with_backoff(local_server: LocalServer) -> None:
    answers = iter([Route(503, b"busy"), Route(body=HTML)])
    local_server.routes["/flaky"] = lambda handler: handler._send(next(answers))
    started = time.monotonic()
    result = HttpFetcher(config(retries=2, backoff_s=0.2)).fetch(local_server.url("/flaky"))
    assert result.ok and result.body == HTML and local_server.hits("/flaky") == 2
    assert time.monotonic() - started >= 0.2
    local_server.routes["/down"] = Route(503, b"busy", headers={"Content-Type": "text/html", "Retry-After": "0"})
    down = HttpFetcher(config(retries=1, backoff_s=0.05)).fetch(local_server.url("/down"))
    assert down.status == "http_error_503" and down.http_status == 503 and local_server.hits("/down") == 2


def test_http_errors_and_connection_failures(local_server: LocalServer) -> None:
    local_server.routes["/gone"] = Route(410, b"gone")
    local_server.routes["/error"] = Route(500, b"oops")
    fetcher = HttpFetcher(config())
    assert fetcher.fetch(local_server.url("/nothing-here")).status == "not_found"
    assert fetcher.fetch(local_server.url("/gone")).status == "not_found"
    assert fetcher.fetch(local_server.url("/error")).status == "http_error_500"
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    refused = fetcher.fetch(f"http://127.0.0.1:{closed_port}/")
    assert refused.status == "connection_error" and str(closed_port) in refused.detail

    def no_such_host(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    assert HttpFetcher(config(), resolver=no_such_host).fetch("http://no-such-host.example/").status == "dns_error"
    assert fetcher.fetch("http://exa mple.com:abc/").status == "bad_url"


def test_on_disk_cache_serves_the_second_fetch(local_server: LocalServer, tmp_path: Path) -> None:
    local_server.routes["/cached"] = Route(body=HTML)
    local_server.routes["/busy"] = Route(503, b"busy")
    settings = config(cache_dir=str(tmp_path / "cache"))
    first = HttpFetcher(settings).fetch(local_server.url("/cached"))
    second = HttpFetcher(settings).fetch(local_server.url("/cached"))  # a new fetcher: only the disk is shared
    assert first.ok and not first.from_cache and second.ok and second.from_cache
    assert second.body == HTML and second.content_type == first.content_type and second.fetched_at == first.fetched_at
    assert local_server.hits("/cached") == 1
    for _ in range(2):
        assert HttpFetcher(settings).fetch(local_server.url("/nothing")).status == "not_found"
        assert HttpFetcher(settings).fetch(local_server.url("/busy")).status == "http_error_503"
    assert local_server.hits("/nothing") == 1 and local_server.hits("/busy") == 2  # 5xx is not cached
    expiring = config(cache_dir=str(tmp_path / "cache"), cache_ttl_s=0.05)
    time.sleep(0.1)
    assert not HttpFetcher(expiring).fetch(local_server.url("/cached")).from_cache


def test_config_validation() -> None:
    for bad in ({"read_timeout_s": 0}, {"max_bytes": 0}, {"retries": -1}, {"min_interval_s": -1},
                {"allow_hosts_for_testing": "127.0.0.1"}, {"user_agent": " "}, {"cache_ttl_s": 0}):
        with pytest.raises(ValueError):
            HttpConfig(**bad)
    assert HttpConfig(allow_hosts_for_testing={"LocalHost "}).allow_hosts_for_testing == frozenset({"localhost"})
    assert HttpConfig().robots_token == "wikiref-documents"


@pytest.fixture
def tls_server(tmp_path: Path):
    """An HTTPS server on 127.0.0.1 with a self-signed certificate for IP 127.0.0.1 (needs the openssl tool)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        capture_output=True, timeout=60,
    )  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"openssl cannot make a certificate: {made.stderr.decode(errors='replace')[:200]}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    with serve(lambda sock: context.wrap_socket(sock, server_side=True)) as state:
        yield state, cert


def test_https_verifies_certificates(tls_server) -> None:
    state, cert = tls_server
    state.routes["/secure"] = Route(body=HTML)
    url = f"https://127.0.0.1:{state.port}/secure"
    trusted = HttpFetcher(config(ca_file=str(cert))).fetch(url)
    assert trusted.ok and trusted.body == HTML
    untrusted = HttpFetcher(config()).fetch(url)
    assert untrusted.status == "tls_error"
