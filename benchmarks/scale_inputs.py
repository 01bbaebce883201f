"""Inputs N times the size of the shipped samples, made from them, for ``bench_memory.py`` and ``bench_scale.py``.

Replica 0 of every page, capture and question is the sample itself; replica k (1 <= k < N) is a copy under new
identities, so the builds treat it as new data and find its documents:

* WikiRef: the project's embedded sample dump (4 articles, 29 cited statements, ``wikiref_dataset/data/sample``) and
  the real English dump piece of ``../shared/realdata/wikipedia_dump`` (106 articles, ~2,000 web/news citations; their
  pages are not in any WARC here, so they end as "document not archived", as most citations of a real dump do), their
  pages copied with page id + k·10⁷, revision ids + k·10⁸ and " (replica k)" after the title, and every URL's host
  prefixed ``rk.``; written as one multistream dump with its index (100 pages per bz2 stream, as Wikimedia's), so
  stage 1 cuts it into one byte range per task. WARC files: the embedded sample's captures (which the sample's
  statements cite) and three real Common Crawl / wget WARCs (``warc/resiliparse/warcfile.warc.gz``,
  ``warc/dolma/*.warc.gz``), one file per replica, every ``WARC-Target-URI`` rewritten the same way (new record ids).
* PSG2SUM: the real revision histories of ``../shared/realdata/revision_history`` (the two "Anarchism" windows,
  "Pear", "Pyrus"), one ``.xml.bz2`` file per source and replica (the full history also comes as hundreds of files),
  page ids + k·10⁷, revision and parent ids + k·10⁹, titles + " (replica k)". The copies' pairs repeat the
  originals' passages and summaries, so the dataset stage keeps one of each: mining and dedup grow N times, the
  pairs kept do not.
* AQuaMuSe: questions: the real AQuaMuSe dev examples the project's paraphrase pages answer plus 12 others (as
  ``tests/wikiref_dataset/aquamuse/test_aquamuse_build.py``), the real Natural Questions lines of
  ``natural_questions/farm`` and the project's NQ fixture, with new ids and " (replica k)" after the question.
  Corpus: the real C4 / CCNet (Dolma) / WET samples of ``../shared/realdata`` and the project's paraphrase pages
  (``tests/fixtures/aquamuse``, a JSON-lines file and a WARC), one file per source and replica, hosts prefixed ``rk.``.
  The replicas' answer sentences are the same text: a corpus sentence is matched to at most ``neighbours`` (10) of
  them, so examples grow less than N times beyond N = 5.

Files are written once per (build, N) under ``--out`` (``<build>-x<N>/``, with ``inputs.json`` listing them) and
reused. Run on its own to see sizes:

    .venv/bin/python benchmarks/scale_inputs.py --scale 10 --out /tmp/wikiref-scale-inputs
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import hashlib
import io
import json
import re
import shutil
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REALDATA = ROOT.parent / "shared" / "realdata"
SAMPLE = ROOT / "wikiref_dataset" / "data" / "sample" / "wikiref"
FIXTURES = ROOT / "tests" / "fixtures" / "aquamuse"
BUILDS = ("wikiref", "psg2sum", "aquamuse")
DEFAULT_OUT = Path("/tmp/wikiref-scale-inputs")

PAGE_ID_STEP, REVISION_ID_STEP, HISTORY_REVISION_STEP = 10**7, 10**8, 10**9
PAGES_PER_STREAM = 100
AQUAMUSE_QUERIES = {  # real dev examples that the project's paraphrase pages answer
    "where does the secretary bird get its name", "how did the city of pittsburgh get its name",
    "who starred in the second a star is born", "what are the seven gifts of the holy ghost",
}
_PAGE = re.compile(r"[ \t]*<page>.*?</page>\s*\n", re.DOTALL)
_HOST = re.compile(r"(https?://)([A-Za-z0-9][A-Za-z0-9.-]*)")
_PAGE_ID, _TITLE = re.compile(r"<id>(\d+)</id>"), re.compile(r"<title>(.*?)</title>")


class MissingData(RuntimeError):
    """The shared real data this build's inputs are made from is absent."""


def replica_urls(text: str, replica: int) -> str:
    """Every ``http(s)://host`` of ``text`` with the host prefixed ``r<replica>.`` (unchanged for replica 0)."""
    return text if replica == 0 else _HOST.sub(lambda m: f"{m[1]}r{replica}.{m[2]}", text)


def replica_page(page: str, replica: int, revision_step: int) -> str:
    """A ``<page>`` element as replica ``replica``: new page id, revision / parent ids, title and URLs."""
    if replica == 0:
        return page
    page = re.sub(r"<title>(.*?)</title>", lambda m: f"<title>{m[1]} (replica {replica})</title>", page, count=1)
    page = re.sub(r"<id>(\d+)</id>", lambda m: f"<id>{int(m[1]) + replica * PAGE_ID_STEP}</id>", page, count=1)
    page = re.sub(r"(<revision>\s*<id>)(\d+)", lambda m: f"{m[1]}{int(m[2]) + replica * revision_step}", page)
    page = re.sub(r"<parentid>(\d+)</parentid>",
                  lambda m: f"<parentid>{int(m[1]) + replica * revision_step}</parentid>", page)
    return replica_urls(page, replica)


def _read_text(path: Path) -> str:
    opener: Callable = bz2.open if path.suffix == ".bz2" else (gzip.open if path.suffix == ".gz" else open)
    with opener(path, "rt", encoding="utf-8") as handle:
        return handle.read()


def _split_dump(xml: str) -> tuple[str, list[str], str]:
    pages = list(_PAGE.finditer(xml))
    return xml[:pages[0].start()], [page.group() for page in pages], xml[pages[-1].end():]


def write_multistream(header: str, pages: Iterable[str], footer: str, folder: Path, name: str) -> tuple[Path, Path]:
    """A Wikimedia-style ``<name>-multistream.xml.bz2`` and its ``-multistream-index.txt.bz2`` (``offset:id:title``)."""
    dump, index = folder / f"{name}-multistream.xml.bz2", folder / f"{name}-multistream-index.txt.bz2"
    lines, group = [], []
    with open(dump, "wb") as handle:
        handle.write(bz2.compress(header.encode("utf-8")))

        def flush() -> None:
            offset = handle.tell()
            for page in group:
                page_id, title = _PAGE_ID.search(page)[1], _TITLE.search(page)[1]
                lines.append(f"{offset}:{page_id}:{title}\n")
            handle.write(bz2.compress("".join(group).encode("utf-8")))
            group.clear()

        for page in pages:
            group.append(page)
            if len(group) == PAGES_PER_STREAM:
                flush()
        if group:
            flush()
        handle.write(bz2.compress(footer.encode("utf-8")))
    index.write_bytes(bz2.compress("".join(lines).encode("utf-8")))
    return dump, index


def replicate_warc(source: Path, target: Path, replica: int) -> int:
    """``source``'s records with every ``WARC-Target-URI`` host prefixed ``r<replica>.`` and new record ids;
    returns the records written."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.warcwriter import WARCWriter

    written = 0
    with open(source, "rb") as reading, open(target, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for record in ArchiveIterator(reading):
            headers = record.rec_headers
            uri = headers.get_header("WARC-Target-URI")
            if uri:
                headers.replace_header("WARC-Target-URI", replica_urls(uri, replica))
            identifier = headers.get_header("WARC-Record-ID") or f"{source.name}:{written}"
            digest = hashlib.sha1(f"{identifier}:{replica}".encode()).hexdigest()[:32]
            headers.replace_header("WARC-Record-ID", f"<urn:uuid:{digest}>")
            writer.write_record(record)
            written += 1
    return written


def _replica_name(path: Path, replica: int, suffix: str | None = None) -> str:
    name = path.name
    for ending in (".warc.wet.gz", ".warc.gz", ".jsonl.gz", ".xml.bz2", ".json", ".jsonl", ".xml"):
        if name.endswith(ending):
            return f"{name[: -len(ending)]}-r{replica:03d}{suffix or ending}"
    raise ValueError(f"{path}: unexpected file type")


def _require(paths: Iterable[Path]) -> None:
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise MissingData(f"absent: {', '.join(missing)} (the benchmarks need ../shared/realdata)")


# ----------------------------------------------------------------------------------------------------------------
# The three builds' inputs
# ----------------------------------------------------------------------------------------------------------------


def wikiref_inputs(scale: int, folder: Path) -> dict[str, list[str]]:
    real_dump = REALDATA / "wikipedia_dump" / "enwiki-pages-articles-sample.xml.bz2"
    sample_dump = SAMPLE / "samplewiki-20240601-pages-articles.xml"
    warcs = [SAMPLE / "sample.warc.gz", REALDATA / "warc" / "resiliparse" / "warcfile.warc.gz",
             *sorted((REALDATA / "warc" / "dolma").glob("sample-*.warc.gz"))]
    _require([real_dump, sample_dump, *warcs])
    header, real_pages, footer = _split_dump(_read_text(real_dump))
    _, sample_pages, _ = _split_dump(_read_text(sample_dump))
    pages = (replica_page(page, k, REVISION_ID_STEP) for k in range(scale) for page in [*sample_pages, *real_pages])
    dump, _ = write_multistream(header, pages, footer, folder, "scalewiki-20240601-pages-articles")
    written = []
    for k in range(scale):
        for warc in warcs:
            target = folder / _replica_name(warc, k)
            replicate_warc(warc, target, k)
            written.append(str(target))
    return {"dumps": [str(dump)], "warcs": written}


def psg2sum_inputs(scale: int, folder: Path) -> dict[str, list[str]]:
    history = REALDATA / "revision_history"
    sources = [history / "derived_Anarchism_history_first400.xml.bz2",
               history / "derived_Anarchism_history_rev6000_6300.xml.bz2",
               history / "pywikibot_xml" / "article-pear.xml", history / "pywikibot_xml" / "article-pyrus.xml.bz2"]
    _require(sources)
    dumps = []
    for source in sources:
        header, pages, footer = _split_dump(_read_text(source))
        for k in range(scale):
            target = folder / _replica_name(source, k, ".xml.bz2")
            text = header + "".join(replica_page(page, k, HISTORY_REVISION_STEP) for page in pages) + footer
            target.write_bytes(bz2.compress(text.encode("utf-8")))
            dumps.append(str(target))
    return {"dumps": dumps}


def _replica_question(line: str, replica: int) -> str:
    record = json.loads(line)
    if replica == 0:
        return json.dumps(record, ensure_ascii=False)
    suffix = f" (replica {replica})"
    if "question_text" in record:  # Natural Questions (simplified or original)
        record["question_text"] += suffix
        record["example_id"] = int(record["example_id"]) + replica * 10**15
    else:  # released AQuaMuSe line: its id is a hash of the query
        query = record["query"]
        record["query"] = [query[0] + suffix, *query[1:]] if isinstance(query, list) else query + suffix
    return json.dumps(record, ensure_ascii=False)


def _films_warc(folder: Path) -> Path:
    """The WARC capture the AQuaMuSe build test makes from the project's ``star_is_born.html`` fixture."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = folder / "films.warc.gz"
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            "https://films.example.com/a-star-is-born", "response", http_headers=headers,
            payload=io.BytesIO((FIXTURES / "star_is_born.html").read_bytes()),
            warc_headers_dict={"WARC-Date": "2024-06-15T00:00:00Z",
                               "WARC-Record-ID": "<urn:uuid:00000000000000000000000000000001>"}))
    return path


def aquamuse_inputs(scale: int, folder: Path) -> dict[str, list[str]]:
    dev = REALDATA / "aquamuse" / "v2_abstractive_dev.jsonl"
    nq = [REALDATA / "natural_questions" / "farm" / "dev_sample.jsonl", FIXTURES / "nq_simplified.jsonl"]
    corpus = [REALDATA / "web_corpus" / "c4" / "c4-en-train.00000-of-01024.first3.json",
              REALDATA / "web_corpus" / "dolma" / "multiple_files_cc_en_head-0091.jsonl.gz",
              REALDATA / "warc" / "whirlwind" / "whirlwind.warc.wet.gz", FIXTURES / "paraphrase_pages.jsonl"]
    _require([dev, *nq, *corpus, FIXTURES / "star_is_born.html"])
    lines = dev.read_text(encoding="utf-8").splitlines()
    chosen = [line for line in lines if json.loads(line)["query"][0] in AQUAMUSE_QUERIES] + lines[:12]
    questions = []
    for name, source_lines in [("aquamuse-dev-chosen.jsonl", chosen),
                               *[(path.name, path.read_text(encoding="utf-8").splitlines()) for path in nq]]:
        target = folder / name
        with open(target, "w", encoding="utf-8") as handle:
            for k in range(scale):
                for line in source_lines:
                    if line.strip():
                        handle.write(_replica_question(line, k) + "\n")
        questions.append(str(target))
    staging = folder / "sources"
    staging.mkdir(exist_ok=True)
    files = []
    for source in [*corpus, _films_warc(staging)]:
        for k in range(scale):
            target = folder / _replica_name(source, k)
            if source.name.endswith((".warc.gz", ".warc.wet.gz")):
                replicate_warc(source, target, k)
            else:
                text = replica_urls(_read_text(source), k)
                if target.suffix == ".gz":
                    target.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
                else:
                    target.write_text(text, encoding="utf-8")
            files.append(str(target))
    shutil.rmtree(staging)
    return {"nq": questions, "corpus": files}


_MAKERS = {"wikiref": wikiref_inputs, "psg2sum": psg2sum_inputs, "aquamuse": aquamuse_inputs}


def make_inputs(build: str, scale: int, out: str | Path = DEFAULT_OUT) -> dict[str, list[str]]:
    """The input files of ``build`` at ``scale`` times the samples (made once under ``out``, then reused).

    Raises:
        MissingData: ``../shared/realdata`` (or one of its files) is absent.
    """
    if build not in _MAKERS:
        raise ValueError(f"unknown build {build!r}; builds: {BUILDS}")
    if scale < 1:
        raise ValueError(f"scale must be >= 1, got {scale}")
    folder = Path(out) / f"{build}-x{scale}"
    record = folder / "inputs.json"
    if record.is_file():
        inputs = json.loads(record.read_text(encoding="utf-8"))
        if all(Path(path).is_file() for paths in inputs.values() for path in paths):
            return inputs
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    inputs = _MAKERS[build](scale, folder)
    record.write_text(json.dumps(inputs, indent=1), encoding="utf-8")
    return inputs


def input_bytes(inputs: dict[str, list[str]]) -> int:
    return sum(Path(path).stat().st_size for paths in inputs.values() for path in paths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=10, help="times the samples (default 10)")
    parser.add_argument("--build", choices=[*BUILDS, "all"], default="all")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help=f"where the inputs go (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    for build in BUILDS if args.build == "all" else [args.build]:
        try:
            inputs = make_inputs(build, args.scale, args.out)
        except MissingData as error:
            print(f"{build}: {error}")
            continue
        files = sum(len(paths) for paths in inputs.values())
        print(f"{build} x{args.scale}: {files} files, {input_bytes(inputs) / 1e6:.1f} MB -> "
              f"{Path(args.out) / f'{build}-x{args.scale}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
