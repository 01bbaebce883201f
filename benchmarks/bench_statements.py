"""Throughput of WikiRef statement extraction against plain-text extractors on the same pages, on one core.

Ours: ``StatementExtractor.extract`` on every page (comments and extension tags taken out, refs replaced by
placeholders, non-prose sections skipped, cited paragraphs parsed with mwparserfromhell and rendered with the inline
template table, citations resolved, typed and parsed). Baselines, run in this script on the same in-memory pages:
``mwparserfromhell.parse(text).strip_code()`` over the whole page (the plain-text extractor of the library we use),
and WikiExtractor's ``Extractor.extract`` (regex-based, the usual dump-to-text tool) when ``wikiextractor`` imports.
Reading and decompressing the dump is timed once, separately (it is the same for every method).

Workload: the 106 articles of ``../shared/realdata/wikipedia_dump/enwiki-pages-articles-sample.xml.bz2`` (or, when
that folder is absent, the project's fixture article repeated, with a note). Throughput is pages/s and MB/s of
wikitext (UTF-8 bytes); the best of ``--repeats`` runs is reported. The target is at least the speed of the
``strip_code`` baseline; the script exits 0 whether or not it is met.

    .venv/bin/python benchmarks/bench_statements.py            # about a minute on 2 cores
    .venv/bin/python benchmarks/bench_statements.py --quick    # smoke run, a few seconds
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

import _common

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "wikipedia_dump" / (
    "enwiki-pages-articles-sample.xml.bz2")
FIXTURE_ARTICLE = ROOT / "tests" / "fixtures" / "wiki" / "article.wiki"


def load_pages(path: Path, limit: int | None):
    """The pages of the sample dump (and how long reading them took), or the fixture article repeated."""
    from wikiref_dataset.wiki.dump import WikiPage, iter_pages

    if path.is_file():
        start = time.perf_counter()
        pages = list(iter_pages(path))
        elapsed = time.perf_counter() - start
        source = f"{path.name}: {len(pages)} articles"
    else:
        text = FIXTURE_ARTICLE.read_text(encoding="utf-8")
        pages = [WikiPage(page_id=index, title=f"Testville {index}", namespace=0, revision_id=index,
                          timestamp="2020-01-01T00:00:00Z", text=text) for index in range(1, 301)]
        elapsed = None
        source = f"{path} is absent: the fixture article repeated {len(pages)} times (numbers are not comparable)"
    if limit is not None:
        pages = pages[:limit]
    return pages, elapsed, source


def run_ours(pages, config):
    from wikiref_dataset.wiki.statements import StatementExtractor

    extractor = StatementExtractor(config)
    count = 0
    for page in pages:
        count += len(extractor.extract(page))
    return count, extractor.stats


def run_strip_code(pages):
    import mwparserfromhell

    return sum(len(mwparserfromhell.parse(page.text).strip_code()) for page in pages)


def load_wikiextractor():
    try:
        from wikiextractor.extract import Extractor
    except Exception as err:  # not installed, or an incompatible version
        return None, f"{type(err).__name__}: {err}"
    return Extractor, None


def run_wikiextractor(pages, extractor_class):
    total = 0
    for page in pages:
        out = io.StringIO()
        extractor_class(page.page_id, page.revision_id, "https://en.wikipedia.org/wiki?curid=", page.title,
                        page.text.splitlines(True)).extract(out)
        total += len(out.getvalue())
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, default=SAMPLE, help="pages-articles dump to read the pages from")
    parser.add_argument("--pages", type=int, default=None, help="use only the first N pages")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each method (best is reported)")
    parser.add_argument("--target", type=float, default=1.0, help="target speed ratio ours / strip_code")
    parser.add_argument("--no-pin", action="store_true", help="do not pin the process to one CPU")
    parser.add_argument("--quick", action="store_true", help="smoke run: 20 pages, one repeat")
    args = parser.parse_args(argv)
    if args.quick:
        args.pages, args.repeats = min(args.pages or 20, 20), 1

    where = _common.pin_to_one_core(not args.no_pin)
    import mwparserfromhell
    import numpy  # noqa: F401  (imported after pinning, like every benchmark: spaCy and datatrove pull it in)

    from wikiref_dataset.wiki.statements import StatementConfig

    print(f"bench_statements: {_common.machine_line()}, {where}; mwparserfromhell {mwparserfromhell.__version__} "
          f"(C tokenizer: {mwparserfromhell.parser.use_c})")
    pages, read_seconds, source = load_pages(args.dump, args.pages)
    megabytes = sum(len(page.text.encode("utf-8")) for page in pages) / 1e6
    print(f"workload: {source}; {len(pages)} pages, {megabytes:.2f} MB of wikitext")
    if read_seconds is not None:
        print(f"reading the dump (bz2 + mwxml, all pages): {read_seconds:.2f} s, not included below")

    config = StatementConfig()
    rows = []
    times, (statements, stats) = _common.timed(lambda: run_ours(pages, config), args.repeats)
    rows.append(("ours: StatementExtractor", _common.best(times), f"{statements} statements"))
    times, chars = _common.timed(lambda: run_strip_code(pages), args.repeats)
    rows.append(("baseline: mwparserfromhell strip_code", _common.best(times), f"{chars:,} chars"))
    extractor_class, why = load_wikiextractor()
    if extractor_class is not None:
        times, chars = _common.timed(lambda: run_wikiextractor(pages, extractor_class), args.repeats)
        rows.append(("reference: wikiextractor Extractor", _common.best(times), f"{chars:,} chars"))
    else:
        print(f"wikiextractor does not import ({why}); its row is left out")

    header = ("method", "best s", "pages/s", "MB/s", "output")
    body = [(name, f"{seconds:.3f}", f"{len(pages) / seconds:.1f}", f"{megabytes / seconds:.2f}", output)
            for name, seconds, output in rows]
    widths = [max(len(row[i]) for row in (header, *body)) for i in range(len(header))]
    print()
    print("  ".join(cell.ljust(width) for cell, width in zip(header, widths)))
    print("  ".join("-" * width for width in widths))
    for row in body:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
    kept = {key[5:]: value for key, value in stats.items() if key.startswith("kept/")}
    print(f"\nours per kept type: {kept}; pages failed: {stats['pages_failed']}")

    ours, baseline = rows[0][1], rows[1][1]
    ratio = baseline / ours
    verdict = "met" if ratio >= args.target else "MISSED"
    extra = ""
    if extractor_class is not None:
        extra = f"; vs wikiextractor {rows[2][1] / ours:.2f}x"
    print(f"ratio (speed ours / mwparserfromhell strip_code, {len(pages)} pages, best of {args.repeats}): "
          f"{ratio:.2f}x (target >= {args.target:.2f}x: {verdict}){extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
