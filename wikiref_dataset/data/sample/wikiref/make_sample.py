"""Regenerate ``sample.warc.gz`` from ``html/*.html`` and ``html/urls.json`` (file name -> URL), deterministically.

The pages and the dump next to this script were written for this project; every URL is on example.org /
example.com. Fixed record ids and dates make the WARC byte-identical on every run:

    python wikiref_dataset/data/sample/wikiref/make_sample.py
"""

from __future__ import annotations

import hashlib
import json
from io import BytesIO
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

HERE = Path(__file__).resolve().parent
WARC_DATE = "2024-06-15T00:00:00Z"


def write_warc(output: Path = HERE / "sample.warc.gz") -> int:
    """Write one gzipped ``response`` record per page; returns the number of records."""
    urls = json.loads((HERE / "html" / "urls.json").read_text(encoding="utf-8"))
    buffer = BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    for name in sorted(urls):
        url = urls[name]
        body = (HERE / "html" / name).read_bytes()
        http_headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                                   ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
        record_id = "<urn:uuid:" + hashlib.sha1(url.encode("utf-8")).hexdigest()[:32] + ">"
        record = writer.create_warc_record(url, "response", payload=BytesIO(body), http_headers=http_headers,
                                           warc_headers_dict={"WARC-Date": WARC_DATE, "WARC-Record-ID": record_id})
        writer.write_record(record)
    output.write_bytes(buffer.getvalue())  # warcio's gzip members carry mtime 0: reproducible bytes
    return len(urls)


if __name__ == "__main__":
    print(f"{write_warc()} records -> {HERE / 'sample.warc.gz'}")
