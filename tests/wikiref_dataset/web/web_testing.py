"""Helpers of the web tests: WARC files written with warcio's writer, and a local HTTP server (stdlib
ThreadingHTTPServer on a loopback address, 127.0.0.1 by default, port 0, in a thread) whose routes a test sets and
whose request log it reads."""

from __future__ import annotations

import contextlib
import io
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


class WarcBuilder:
    """Collects records, then writes them as a WARC file with warcio's writer (gzip per record or plain)."""

    def __init__(self) -> None:
        self.records: list[tuple[str, str, bytes, StatusAndHeaders | None, dict[str, str]]] = []

    def response(
        self,
        url: str,
        body: bytes,
        status: str = "200 OK",
        headers: list[tuple[str, str]] | None = None,
        date: str = "2020-01-01T00:00:00Z",
        record_id: str | None = None,
    ) -> WarcBuilder:
        headers = [("Content-Type", "text/html; charset=utf-8")] if headers is None else headers
        http_headers = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
        warc_headers = {"WARC-Date": date}
        if record_id:
            warc_headers["WARC-Record-ID"] = record_id
        self.records.append(("response", url, body, http_headers, warc_headers))
        return self

    def resource(self, url: str, body: bytes, content_type: str = "text/html") -> WarcBuilder:
        self.records.append(("resource", url, body, None, {"WARC-Date": "2020-01-01T00:00:00Z",
                                                            "Content-Type": content_type}))
        return self

    def request(self, url: str, method: str = "GET", concurrent_to: str | None = None) -> WarcBuilder:
        http_headers = StatusAndHeaders(f"{method} / HTTP/1.1", [("Host", "example.com")], protocol=method,
                                        is_http_request=True)
        warc_headers = {"WARC-Concurrent-To": concurrent_to} if concurrent_to else {}
        self.records.append(("request", url, b"", http_headers, warc_headers))
        return self

    def revisit(self, url: str) -> WarcBuilder:
        self.records.append(("revisit", url, b"", None, {"WARC-Date": "2021-01-01T00:00:00Z"}))
        return self

    def write_bytes(self, compress: bool = True) -> bytes:
        out = io.BytesIO()
        writer = WARCWriter(out, gzip=compress)
        writer.write_record(writer.create_warcinfo_record("test.warc", {"software": "wikiref tests"}))
        for rec_type, url, body, http_headers, warc_headers in self.records:
            record = writer.create_warc_record(
                url, rec_type, payload=io.BytesIO(body), http_headers=http_headers,
                warc_headers_dict=dict(warc_headers),
            )  # fmt: skip
            if rec_type == "resource" and "Content-Type" in warc_headers:
                record.rec_headers.replace_header("Content-Type", warc_headers["Content-Type"])
            writer.write_record(record)
        return out.getvalue()

    def write(self, path: Path, compress: bool = True) -> Path:
        path.write_bytes(self.write_bytes(compress))
        return path


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})
    delay: float = 0.0


@dataclass
class LocalServer:
    """What a test configures (`routes`: path -> Route or a function of the handler) and observes (`log`)."""

    host: str
    port: int
    routes: dict[str, Route | Callable[[BaseHTTPRequestHandler], None]] = field(default_factory=dict)
    log: list[tuple[str, float]] = field(default_factory=list)  # (path, time.monotonic()) of each request

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def hits(self, path: str) -> int:
        return sum(1 for logged, _ in self.log if logged == path)


class Handler(BaseHTTPRequestHandler):

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (BaseHTTPRequestHandler's name)
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        state = self.server.state  # type: ignore[attr-defined]
        state.log.append((self.path, time.monotonic()))
        route = state.routes.get(self.path) or state.routes.get(self.path.split("?", 1)[0])
        try:
            if route is None:
                self._send(Route(404, b"not here"))
            elif callable(route):
                route(self)
            else:
                self._send(route)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeouts, size caps): nothing to do

    def _send(self, route: Route) -> None:
        if route.delay:
            time.sleep(route.delay)
        self.send_response(route.status)
        for name, value in route.headers.items():
            self.send_header(name, value)
        if "Content-Length" not in route.headers:
            self.send_header("Content-Length", str(len(route.body)))
        self.end_headers()
        self.wfile.write(route.body)


@contextlib.contextmanager
def serve(
    wrap_socket: Callable[[socket.socket], socket.socket] | None = None, host: str = "127.0.0.1"
) -> Iterator[LocalServer]:
    """A ThreadingHTTPServer bound to `host` (a loopback address: 127.0.0.1, 127.0.0.2, ...) port 0, serving in a
    thread; shut down on exit."""
    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    state = LocalServer(host, server.server_address[1])
    server.state = state  # type: ignore[attr-defined]
    if wrap_socket is not None:
        server.socket = wrap_socket(server.socket)
    with serving(server):
        yield state


@contextlib.contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[None]:
    """Run `server` (a socketserver) in a daemon thread; shut down and closed on exit."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
