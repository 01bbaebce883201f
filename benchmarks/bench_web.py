"""Speed of WARC indexing (``WarcIndex.add``) against a bare warcio pass over the same file, on one core.

Ours: ``WarcIndex(path).add(warc)`` — warcio parsing, record classification, truncation/recovery checks, URL
normalization and the SQLite inserts of an on-disk index — then ``lookup`` + ``read`` of random captured URLs.
Baseline, written here: the least any offset index must do with warcio: iterate the records, read each one's
headers and ``get_record_offset()``/``get_record_length()`` (which reads the record to its end), keep nothing.

Workload: a gzip-per-record WARC written with warcio's writer (``random.Random(seed)``): responses of 2-20 KB of
HTML-like text, each with its request record, as a crawler writes them.

    .venv/bin/python benchmarks/bench_web.py            # 20,000 responses, about a minute on 2 cores
    .venv/bin/python benchmarks/bench_web.py --quick    # smoke run, a few seconds
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
import time
from pathlib import Path

import _common

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def write_warc(path: Path, n_responses: int, seed: int) -> int:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    rng = random.Random(seed)
    words = ["harbour", "bridge", "council", "reopened", "cables", "traffic", "mayor", "euros", "repairs", "the"]
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for number in range(n_responses):
            url = f"https://site{number % 500}.example/news/{number}/story-{rng.randint(0, 10**6)}"
            paragraphs = "".join(
                "<p>" + " ".join(rng.choice(words) for _ in range(rng.randint(20, 60))) + ".</p>"
                for _ in range(rng.randint(5, 40))
            )
            body = f"<html><head><title>Story {number}</title></head><body>{paragraphs}</body></html>".encode()
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body),
                                                          http_headers=headers))
            request = StatusAndHeaders("GET / HTTP/1.1", [("Host", "x")], protocol="GET", is_http_request=True)
            writer.write_record(writer.create_warc_record(url, "request", payload=io.BytesIO(b""),
                                                          http_headers=request))
    return path.stat().st_size


def baseline_pass(path: Path) -> int:
    from warcio.archiveiterator import ArchiveIterator

    count = 0
    with open(path, "rb") as handle:
        iterator = ArchiveIterator(handle)
        for record in iterator:
            record.rec_headers.get_header("WARC-Target-URI")
            iterator.get_record_offset()
            iterator.get_record_length()
            count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--responses", type=int, default=20_000)
    parser.add_argument("--lookups", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--baseline-repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", type=float, default=2.0, help="largest acceptable time ratio ours/baseline")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.responses, args.lookups, args.repeats, args.baseline_repeats = 1_000, 200, 1, 1
    print(_common.pin_to_one_core(not args.no_pin), "|", _common.machine_line())

    from wikiref_dataset.web.warc import WarcIndex

    with tempfile.TemporaryDirectory() as folder:
        warc = Path(folder) / "bench.warc.gz"
        size = write_warc(warc, args.responses, args.seed)
        print(f"workload: {args.responses:,} responses + requests, {size / 1e6:.1f} MB gzip-per-record")
        base_times, records = _common.timed(lambda: baseline_pass(warc), args.baseline_repeats)

        def index_once() -> WarcIndex:
            database = Path(folder) / f"index-{time.perf_counter_ns()}.sqlite"
            index = WarcIndex(database)
            index.add(warc)
            return index

        our_times, index = _common.timed(index_once, args.repeats)
        assert len(index) == args.responses and records == 2 * args.responses
        captures = list(index.iter_captures())
        rng = random.Random(args.seed)
        chosen = [rng.choice(captures).url for _ in range(args.lookups)]
        start = time.perf_counter()
        for url in chosen:
            index.read(index.lookup(url))
        lookup_time = time.perf_counter() - start
        index.close()

    base, ours = _common.best(base_times), _common.best(our_times)
    ratio = ours / base
    print(f"{'':28}{'seconds':>10}{'records/s':>12}{'MB/s':>8}")
    print(f"{'baseline (warcio pass)':28}{base:10.2f}{records / base:12,.0f}{size / 1e6 / base:8.1f}")
    print(f"{'WarcIndex.add':28}{ours:10.2f}{records / ours:12,.0f}{size / 1e6 / ours:8.1f}")
    print(f"lookup + read of {args.lookups:,} random captured URLs: {args.lookups / lookup_time:,.0f} per second")
    met = "met" if ratio <= args.target else "NOT met"
    print(f"RESULT bench_web: indexing takes {ratio:.2f}x the bare warcio pass (target <= {args.target:g}x: {met}); "
          f"{records / ours:,.0f} records/s; {args.lookups / lookup_time:,.0f} lookups+reads/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
