"""Speed of page extraction (title + main text + paragraphs) against trafilatura with its full metadata, on one core.

Ours: ``web.extract._trafilatura_extract`` — trafilatura's main-text extraction without its metadata pass, and the
title from trafilatura's own title functions (meta tags, JSON-LD, ``<h1>``/``<title>``). Baseline, written here:
what the builder did before, ``trafilatura.bare_extraction(..., with_metadata=True)``, whose metadata pass also
searches for the page's date (htmldate), which the builder never used. The two must give the same title, text and
paragraphs on every page; the script checks it and says so.

Pages: the real news pages of ``../shared/realdata/html_news`` and the HTML responses of the real WARC files under
``../shared/realdata/warc`` (skipped when absent). Each side runs once to warm up (imports, lazily built tables),
then ``--repeats`` passes over all pages; the best pass counts.

    .venv/bin/python benchmarks/bench_extract.py            # 5 passes, under a minute
    .venv/bin/python benchmarks/bench_extract.py --quick    # 1 pass
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import _common

ROOT = Path(__file__).resolve().parents[1]
REALDATA = ROOT.parent / "shared" / "realdata"
sys.path.insert(0, str(ROOT))


def real_pages() -> list[tuple[bytes, str, str | None]]:
    """(html, url, content type) of the real pages: the news pages, then the WARC files' HTML responses."""
    from warcio.archiveiterator import ArchiveIterator

    pages = [(path.read_bytes(), f"https://{path.stem}/", None)
             for path in sorted((REALDATA / "html_news").rglob("*.html"))]
    for path in sorted((REALDATA / "warc").rglob("*.warc.gz")):
        try:
            with open(path, "rb") as handle:
                for record in ArchiveIterator(handle):
                    kind = record.http_headers.get_header("Content-Type") if record.http_headers else None
                    if record.rec_type == "response" and kind and "html" in kind:
                        pages.append((record.content_stream().read(), record.rec_headers.get_header(
                            "WARC-Target-URI"), kind))
        except Exception:  # noqa: BLE001  (the test data holds deliberately broken WARC files)
            continue
    return pages


def baseline(html: str | bytes, url: str, config) -> tuple[str, str, list[str]]:
    import trafilatura

    from wikiref_dataset.web.extract import _paragraphs

    document = trafilatura.bare_extraction(
        html, url=url, with_metadata=True, favor_precision=config.favor_precision,
        include_comments=config.include_comments, include_tables=config.include_tables, include_images=False,
        include_links=False, deduplicate=False)
    if document is None:
        return "", "", []
    text = (document.text or "").strip()
    paragraphs = _paragraphs(document.body) if document.body is not None else text.splitlines()
    return (document.title or "").strip(), text, paragraphs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed passes over all pages (best counts)")
    parser.add_argument("--quick", action="store_true", help="one timed pass")
    args = parser.parse_args(argv)
    where = _common.pin_to_one_core()
    if not (REALDATA / "html_news").is_dir():
        print(f"SKIP: {REALDATA / 'html_news'} is absent")
        return 0
    import logging

    logging.disable(logging.WARNING)  # trafilatura logs each page it discards
    from wikiref_dataset.web.extract import ExtractionConfig, _trafilatura_extract, decode_html

    config = ExtractionConfig()
    pages = [(decode_html(html, kind), url) for html, url, kind in real_pages()]
    repeats = 1 if args.quick else args.repeats
    print(f"{_common.machine_line()}; {where}; {len(pages)} real pages, best of {repeats} passes")

    def ours() -> list:
        return [_trafilatura_extract(html, url, config) for html, url in pages]

    def theirs() -> list:
        return [baseline(html, url, config) for html, url in pages]

    expected, got = theirs(), ours()  # warm-up passes
    same = sum(a == b for a, b in zip(expected, got, strict=True))
    our_times, _ = _common.timed(ours, repeats)
    base_times, _ = _common.timed(theirs, repeats)
    ours_s, base_s = _common.best(our_times), _common.best(base_times)
    print(f"  ours (no date search):            {ours_s:6.2f} s  {len(pages) / ours_s:6.1f} pages/s")
    print(f"  trafilatura with its metadata:    {base_s:6.2f} s  {len(pages) / base_s:6.1f} pages/s")
    print(f"  same title, text and paragraphs on {same} of {len(pages)} pages")
    print(f"RESULT bench_extract: {base_s / ours_s:.2f}x the baseline's speed ({len(pages)} real pages; "
          f"{same}/{len(pages)} identical)")
    return 0 if same == len(pages) else 1


if __name__ == "__main__":
    sys.exit(main())
