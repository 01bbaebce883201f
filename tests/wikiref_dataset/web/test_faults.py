"""The retry rule of the network sources (wikiref_dataset.web.faults), against real servers on 127.0.0.1: a local
HTTP server, and a proxy in front of it that answers 503, resets connections (before or in the middle of the body)
and stalls, every Nth request."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest
import requests
from archive_servers import faulty_proxy, free_port
from web_testing import Route

from wikiref_dataset.web.commoncrawl import CdxServer, IndexedCapture, IndexLookupError, WarcRecordReader
from wikiref_dataset.web.faults import (
    NetworkFault,
    NetworkFaults,
    describe_faults,
    fault_counts,
    get_with_retries,
    parse_retry_after,
    retry_delay,
)
from wikiref_dataset.web.http import HttpConfig, HttpFetcher
from wikiref_dataset.web.warc import WarcReadError

BODY = b"x" * 4000


def _text(response: requests.Response) -> bytes:
    return response.raw.read(decode_content=False) if response.status_code == 200 else b""


def test_retry_after_and_backoff() -> None:
    assert parse_retry_after("7") == 7.0 and parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert 4.0 < parse_retry_after(formatdate(time.time() + 5, usegmt=True)) <= 5.0
    assert parse_retry_after(formatdate(time.time() - 60, usegmt=True)) == 0.0
    assert [retry_delay(attempt, 0.5) for attempt in range(4)] == [0.5, 1.0, 2.0, 4.0]
    assert retry_delay(0, 0.5, retry_after=3.0) == 3.0  # the server's wait wins when longer
    assert retry_delay(3, 0.5, retry_after=1.0) == 4.0  # the backoff wins when longer
    assert retry_delay(0, 0.5, retry_after=600.0, max_retry_after_s=20.0) == 20.0  # capped


@pytest.mark.parametrize("fault, kind", [("503", "http_503"), ("reset", "reset"), ("stall", "timeout"),
                                         ("reset_body", None)])
def test_each_fault_is_retried_and_counted_by_kind(local_server, fault: str, kind: str | None) -> None:
    local_server.routes["/file"] = Route(200, BODY, {"Content-Type": "application/octet-stream"})
    with faulty_proxy(local_server.base_url, {fault: 2}, stall_s=2.0) as proxy:  # every 2nd request fails
        faults = NetworkFaults()
        with requests.Session() as session:
            for _ in range(3):
                body = get_with_retries(session, proxy.url + "/file", _text, source="warc", faults=faults,
                                        timeout=0.5, retries=2, backoff_s=0.01)
                assert body == BODY
    counts = faults.counts()
    assert proxy.injected[fault] >= 1
    assert sum(counts.values()) == proxy.injected[fault], counts  # one count per fault injected, none given up
    if kind is not None:
        assert counts == {f"warc/{kind}": proxy.injected[fault]}
    else:  # a body cut by a reset: urllib3 says reset or incomplete, depending on where the reset lands
        assert set(counts) <= {"warc/reset", "warc/incomplete", "warc/connection"}, counts


def test_retry_after_is_honoured(local_server) -> None:
    calls = []

    def throttled(handler) -> None:
        calls.append(time.monotonic())
        if len(calls) == 1:
            handler.send_response(503)
            handler.send_header("Retry-After", "1")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(BODY)))
        handler.end_headers()
        handler.wfile.write(BODY)

    local_server.routes["/throttled"] = throttled
    faults = NetworkFaults()
    with requests.Session() as session:
        assert get_with_retries(session, local_server.url("/throttled"), _text, source="cdx", faults=faults,
                                retries=3, backoff_s=0.01) == BODY
    assert calls[1] - calls[0] >= 0.95  # Retry-After: 1, not the 0.01 s backoff
    assert faults.counts() == {"cdx/http_503": 1}


def test_a_request_still_failing_is_given_up_with_a_clear_error(local_server) -> None:
    local_server.routes["/down"] = Route(503, b"busy")
    faults = NetworkFaults()
    with requests.Session() as session:
        with pytest.raises(NetworkFault, match=r"/down: failed after 3 attempts \(last: HTTP 503\)") as raised:
            get_with_retries(session, local_server.url("/down"), _text, source="cdx", faults=faults, retries=2,
                             backoff_s=0.01)
        assert raised.value.kind == "http_503" and raised.value.attempts == 3
        dead = f"http://127.0.0.1:{free_port()}/x"
        with pytest.raises(NetworkFault, match="failed after 2 attempts"):
            get_with_retries(session, dead, _text, source="warc", faults=faults, retries=1, backoff_s=0.01)
    assert faults.counts() == {"cdx/http_503": 3, "cdx/gave_up": 1, "warc/refused": 2, "warc/gave_up": 1}
    assert describe_faults(faults.counts()) == ("CDX index: HTTP 503 x3; WARC range reads: refused x2 "
                                                "(2 request(s) given up after their retries)")
    assert fault_counts(faults.counts()) == {
        "network faults, CDX index: HTTP 503": 3, "network faults, WARC range reads: refused": 2,
        "requests given up after their retries, CDX index": 1,
        "requests given up after their retries, WARC range reads": 1}
    assert describe_faults({}) == "" and fault_counts({}) == {}


def test_a_client_error_is_not_retried(local_server) -> None:
    local_server.routes["/gone"] = Route(404, b"gone")
    faults = NetworkFaults()
    with requests.Session() as session:
        response_codes = []
        get_with_retries(session, local_server.url("/gone"), lambda r: response_codes.append(r.status_code),
                         source="warc", faults=faults, retries=3, backoff_s=0.01)
    assert response_codes == [404] and local_server.hits("/gone") == 1 and faults.counts() == {}


def _record(url: str) -> bytes:
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(b"<html>hi</html>"),
                                                  http_headers=headers))
    return out.getvalue()


def test_record_reads_retry_faults_and_fail_as_network_errors(local_server, tmp_path) -> None:
    from archive_servers import range_server

    record = _record("http://example.com/page")
    (tmp_path / "file.warc.gz").write_bytes(b"\0" * 100 + record)
    capture = IndexedCapture(url="http://example.com/page", timestamp="2024-01-01T00:00:00Z", status=200,
                             mime="text/html", filename="file.warc.gz", offset=100, length=len(record))
    with range_server(tmp_path) as served:
        with faulty_proxy(served, {"reset_body": 3, "503": 4, "stall": 7}, stall_s=1.5) as proxy:
            reader = WarcRecordReader(proxy.url, timeout_s=0.5, retries=6, backoff_s=0.01)
            for _ in range(6):
                assert reader.read(capture).body == b"<html>hi</html>"
            assert sum(reader.faults.counts().values()) == sum(proxy.injected.values()) >= 3
            proxy.down = "503"
            with pytest.raises(WarcReadError, match=r"bytes 100-.*file\.warc\.gz: failed after 7 attempts") as raised:
                reader.read(capture)
            assert raised.value.reason == "network"
    assert reader.faults.counts()["warc/gave_up"] == 1


def test_a_body_reset_meant_for_a_404_goes_to_the_next_record(tmp_path) -> None:
    """The test proxy's own rule (a flaky count in a full run): a client reads no 404's body, so a reset in the middle
    of the body is only a fault where there is a body; the proxy moves it to the next answer that has one."""
    from archive_servers import range_server

    record = _record("http://example.com/page")
    (tmp_path / "file.warc.gz").write_bytes(record)
    found = IndexedCapture(url="http://example.com/page", timestamp="2024-01-01T00:00:00Z", status=200,
                           mime="text/html", filename="file.warc.gz", offset=0, length=len(record))
    missing = IndexedCapture(**{**found.__dict__, "filename": "missing.warc.gz"})
    with range_server(tmp_path) as served, faulty_proxy(served, {"reset_body": 1}) as proxy:
        reader = WarcRecordReader(proxy.url, timeout_s=2.0, retries=3, backoff_s=0.01)
        with pytest.raises(WarcReadError, match="HTTP 404"):
            reader.read(missing)
        assert proxy.injected["reset_body"] == 0
        proxy.every = {}
        assert reader.read(found).body == b"<html>hi</html>"  # reset once in its body, then read again
    assert proxy.injected["reset_body"] == 1
    counts = reader.faults.counts()
    assert counts.get("warc/reset", 0) + counts.get("warc/incomplete", 0) == 1 and len(counts) == 1


def test_cdx_lookups_retry_faults_and_fail_as_transient(local_server) -> None:
    row = (b'{"urlkey": "com,example)/a", "timestamp": "20240101000000", "url": "http://example.com/a", '
           b'"mime": "text/html", "status": "200", "filename": "f.warc.gz", "offset": "10", "length": "100"}\n')
    local_server.routes["/coll/cdx"] = Route(200, row, {"Content-Type": "text/x-ndjson"})
    with faulty_proxy(local_server.base_url, {"503": 2, "reset": 3}) as proxy:
        server = CdxServer([(proxy.url + "/coll/cdx", "C")], min_interval_s=0, retries=4, backoff_s=0.01)
        for _ in range(5):
            (capture,) = server.captures("http://example.com/a")
            assert capture.offset == 10 and capture.crawl == "C"
        assert server.faults.counts() == {"cdx/http_503": proxy.injected["503"], "cdx/reset": proxy.injected["reset"]}
        proxy.down = "reset"
        with pytest.raises(IndexLookupError, match="lookup of http://example.com/a failed") as raised:
            server.captures("http://example.com/a")
        assert not raised.value.answered  # a network failure, not a refusal: the page is retried by the next run


def test_the_live_web_counts_its_faults(local_server) -> None:
    local_server.routes["/page"] = Route(200, b"<html><body><p>Hello.</p></body></html>")
    with faulty_proxy(local_server.base_url, {"503": 2, "reset": 3}) as proxy:
        config = HttpConfig(min_interval_s=0.0, backoff_s=0.01, retries=3, respect_robots=False,
                            allow_hosts_for_testing=frozenset({"127.0.0.1"}))
        fetcher = HttpFetcher(config)
        for _ in range(4):
            assert fetcher.fetch(proxy.url + "/page").status == "ok"
        assert fetcher.faults.counts() == {"http/http_503": proxy.injected["503"], "http/reset": proxy.injected["reset"]}
