"""Archive servers for the Common Crawl tests, all on 127.0.0.1 with a free port:

* :func:`pywb_server`: pywb's ``wayback`` server (a subprocess: importing pywb's web app monkey-patches the whole
  process with gevent) over collections built with pywb's own ``CollectionsManager`` (it indexes the WARC files
  with pywb's CDX indexer); each collection's CDX API answers at ``/<collection>/cdx``;
* :func:`range_server`: a folder served by werkzeug's ``send_from_directory`` (it answers ``Range`` requests with
  206), for the WARC files and the Parquet index;
* :func:`write_columnar_index`: Common Crawl's columnar URL index (Parquet, ``crawl=``/``subset=`` partitions)
  built from WARC files with warcio's offsets and the ``surt`` canonicalizer;
* :func:`write_warc`: response records (real pages, chosen dates, redirects) written with warcio.
"""

from __future__ import annotations

import contextlib
import io
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import requests
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


@dataclass
class Capture:
    """One response record to write: `location` makes it a redirect."""

    url: str
    date: str  # WARC-Date, ISO 8601 UTC
    body: bytes = b""
    status: str = "200 OK"
    content_type: str = "text/html; charset=utf-8"
    location: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


def write_warc(path: Path, captures: Sequence[Capture]) -> Path:
    """A gzipped WARC (one member per record) holding `captures` as response records."""
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    writer.write_record(writer.create_warcinfo_record(path.name, {"software": "wikiref tests"}))
    for capture in captures:
        headers = [("Content-Type", capture.content_type), ("Content-Length", str(len(capture.body)))]
        if capture.location:
            headers.append(("Location", capture.location))
        http_headers = StatusAndHeaders(capture.status, headers, protocol="HTTP/1.1")
        record = writer.create_warc_record(capture.url, "response", payload=io.BytesIO(capture.body),
                                           http_headers=http_headers, warc_headers_dict={"WARC-Date": capture.date})
        writer.write_record(record)
    path.write_bytes(buffer.getvalue())
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def pywb_server(root: Path, collections: dict[str, Sequence[Path]], timeout: float = 90.0) -> Iterator[str]:
    """Build pywb collections under `root` (name -> WARC files, copied and indexed by pywb) and run ``wayback`` on
    127.0.0.1; yields its base URL. The server is stopped on exit."""
    from pywb.manager.manager import CollectionsManager

    for name, warcs in collections.items():
        manager = CollectionsManager(name, colls_dir=str(root / "collections"), must_exist=False)
        manager.add_collection()
        manager.add_archives([str(path) for path in warcs])
    port = free_port()
    log = open(root / "wayback.log", "wb")  # noqa: SIM115 - closed below, after the process
    process = subprocess.Popen(
        [sys.executable, "-c", "from pywb.apps.cli import wayback; wayback()", "-p", str(port), "-b", "127.0.0.1",
         "-t", "8", "-d", str(root)], stdout=log, stderr=subprocess.STDOUT, cwd=root)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    probe = f"{base}/{next(iter(collections))}/cdx"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"wayback exited with {process.returncode}: "
                                   f"{(root / 'wayback.log').read_text(errors='replace')[-2000:]}")
            try:
                if requests.get(probe, params={"url": "example.com"}, timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"wayback did not answer on {base} within {timeout:.0f} s")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@contextlib.contextmanager
def range_server(folder: Path) -> Iterator[str]:
    """Serve `folder` over HTTP on 127.0.0.1 with Range support (werkzeug); yields the base URL."""
    from werkzeug.serving import WSGIRequestHandler, make_server
    from werkzeug.utils import send_from_directory
    from werkzeug.wrappers import Request

    class Quiet(WSGIRequestHandler):
        def log_request(self, *args: object) -> None:
            pass

    @Request.application
    def app(request: Request):
        return send_from_directory(folder, request.path.lstrip("/"), request.environ)

    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=5)


def write_columnar_index(warcs: dict[str, Sequence[Path]], folder: Path, parts: int = 1) -> list[Path]:
    """Common Crawl's columnar URL index of the response records of `warcs` (crawl -> files): per crawl and subset
    (``warc`` for 200s, ``crawldiagnostics`` for the rest, as Common Crawl splits them) up to `parts` Parquet files
    under ``folder/crawl=<crawl>/subset=<subset>/``, each one contiguous range of the sorted SURT keys (as Common
    Crawl's 300 files per crawl are), with Common Crawl's column names and types."""
    from datetime import datetime, timezone

    import pyarrow as pa
    import pyarrow.parquet as pq
    import surt
    from warcio.archiveiterator import ArchiveIterator

    schema = pa.schema([
        ("url_surtkey", pa.string()), ("url", pa.string()), ("url_host_name", pa.string()),
        ("fetch_time", pa.timestamp("us", tz="UTC")), ("fetch_status", pa.int16()), ("fetch_redirect", pa.string()),
        ("content_digest", pa.string()), ("content_mime_type", pa.string()), ("content_mime_detected", pa.string()),
        ("warc_filename", pa.string()), ("warc_record_offset", pa.int32()), ("warc_record_length", pa.int32()),
        ("warc_segment", pa.string()),
    ])  # fmt: skip
    written = []
    for crawl, files in warcs.items():
        rows: dict[str, list[dict]] = {"warc": [], "crawldiagnostics": []}
        for path in files:
            with open(path, "rb") as handle:
                iterator = ArchiveIterator(handle)
                for record in iterator:
                    if record.rec_type != "response" or record.http_headers is None:
                        continue
                    uri = record.rec_headers.get_header("WARC-Target-URI").strip("<>")
                    status = int(record.http_headers.get_statuscode())
                    date = record.rec_headers.get_header("WARC-Date")
                    mime = (record.http_headers.get_header("Content-Type") or "").split(";")[0].strip() or None
                    location = record.http_headers.get_header("Location")
                    iterator.read_to_end(record)
                    rows["warc" if status == 200 else "crawldiagnostics"].append({
                        "url_surtkey": surt.surt(uri), "url": uri, "url_host_name": uri.split("/")[2],
                        "fetch_time": datetime.fromisoformat(date.replace("Z", "+00:00")).astimezone(timezone.utc),
                        "fetch_status": status, "fetch_redirect": location,
                        "content_digest": record.rec_headers.get_header("WARC-Payload-Digest"),
                        "content_mime_type": mime, "content_mime_detected": mime, "warc_filename": path.name,
                        "warc_record_offset": iterator.get_record_offset(),
                        "warc_record_length": iterator.get_record_length(), "warc_segment": None,
                    })  # fmt: skip
        for subset, subset_rows in rows.items():
            if not subset_rows:
                continue
            subset_rows.sort(key=lambda row: (row["url_surtkey"], row["fetch_time"]))  # Common Crawl sorts by key
            size = -(-len(subset_rows) // parts)
            for part, start in enumerate(range(0, len(subset_rows), size)):
                target = folder / f"crawl={crawl}" / f"subset={subset}" / f"part-{part:05d}.parquet"
                target.parent.mkdir(parents=True, exist_ok=True)
                pq.write_table(pa.Table.from_pylist(subset_rows[start : start + size], schema=schema), target)
                written.append(target)
    return written


class FaultyProxy:
    """An HTTP proxy on 127.0.0.1 in front of `upstream` that fails every Nth request (counted over all requests).

    `every` maps a fault to N, checked in order (the first that divides the request number wins):

    * ``503``: answers ``503 Service Unavailable`` with ``Retry-After: <retry_after>`` (Common Crawl's throttling);
    * ``reset``: resets the connection (RST) before any byte of the answer;
    * ``reset_body``: sends the upstream answer's headers and half its body, then resets (where the answer has no
      body a client reads, a 404 say, the fault goes to the next answer that has one: `injected` counts it there);
    * ``stall``: sends nothing for `stall_s` seconds, then closes.

    `down` (a fault name) fails every request that way until set back to None. `injected` counts the faults sent,
    `requests` every request received, `targets` lists their targets (path and query) in order."""

    def __init__(self, upstream: str, every: dict[str, int] | None = None, retry_after: str | None = "0",
                 stall_s: float = 3.0) -> None:
        from collections import Counter

        self.upstream = upstream.rstrip("/")
        self.every = dict(every or {})
        self.retry_after = retry_after
        self.stall_s = stall_s
        self.down: str | None = None
        self.injected: Counter[str] = Counter()
        self.requests = 0
        self.targets: list[str] = []
        self._lock = threading.Lock()
        self._body_reset_due = False

    def _fault(self, target: str) -> str | None:
        with self._lock:
            self.requests += 1
            self.targets.append(target)
            fault = self.down or next((name for name, n in self.every.items() if self.requests % n == 0), None)
            if fault is not None:
                self.injected[fault] += 1
            return fault

    def handle(self, connection: socket.socket) -> None:
        import http.client
        import struct
        from urllib.parse import urlsplit

        stream = connection.makefile("rb")
        request_line = stream.readline().decode("latin-1").strip()
        if not request_line:
            return
        method, target, _ = request_line.split(" ", 2)
        headers = {}
        while (line := stream.readline().decode("latin-1").strip()):
            name, _, value = line.partition(":")
            headers[name.strip()] = value.strip()

        def reset() -> None:
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.close()

        fault = self._fault(target)
        if fault == "503":
            extra = f"Retry-After: {self.retry_after}\r\n" if self.retry_after is not None else ""
            connection.sendall(f"HTTP/1.1 503 Service Unavailable\r\n{extra}Content-Length: 0\r\n"
                               "Connection: close\r\n\r\n".encode())
            return
        if fault == "reset":
            reset()
            return
        if fault == "stall":
            time.sleep(self.stall_s)
            return
        parts = urlsplit(self.upstream)
        upstream = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        try:
            keep = {name: value for name, value in headers.items()
                    if name.lower() not in ("host", "connection", "accept-encoding")}
            upstream.request(method, parts.path + target, headers=keep)
            response = upstream.getresponse()
            body = response.read()
            head = [f"HTTP/1.1 {response.status} {response.reason}"]
            head += [f"{name}: {value}" for name, value in response.getheaders()
                     if name.lower() not in ("transfer-encoding", "connection", "content-length")]
            head += [f"Content-Length: {len(body)}", "Connection: close"]
        finally:
            upstream.close()
        with self._lock:  # a body to cut: a 200 or 206 with two bytes or more (a client reads no 404's body)
            has_body = response.status in (200, 206) and len(body) >= 2
            if fault == "reset_body" and not has_body:  # put off to the next answer with a body
                self.injected["reset_body"] -= 1
                self._body_reset_due, fault = True, None
            elif fault is None and has_body and self._body_reset_due:
                self.injected["reset_body"] += 1
                self._body_reset_due, fault = False, "reset_body"
        connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        if fault == "reset_body":
            connection.sendall(body[: len(body) // 2])
            time.sleep(0.05)
            reset()
            return
        connection.sendall(body)


@contextlib.contextmanager
def faulty_proxy(upstream: str, every: dict[str, int] | None = None, **options) -> Iterator[FaultyProxy]:
    """Run a :class:`FaultyProxy` in front of `upstream` on 127.0.0.1 (its base URL: ``proxy.url``)."""
    import socketserver

    proxy = FaultyProxy(upstream, every, **options)

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            try:
                proxy.handle(self.request)
            except OSError:
                pass

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    from web_testing import serving

    server = Server(("127.0.0.1", 0), Handler)
    proxy.url = f"http://127.0.0.1:{server.server_address[1]}"
    with serving(server):
        yield proxy
