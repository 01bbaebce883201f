"""The ``wikiref documents`` subcommand: stage 2 of the WikiRef build from the command line.

``wikiref documents STATEMENTS... --warc FILES... [--warc-index PATH] [--http] --out DIR`` indexes the WARC
files, fetches every cited page once (archive first, live web only with ``--http``), writes the documents and
prints a closing summary (pages fetched / missing / failed by reason). :func:`add_documents_parser` registers it
on the ``wikiref`` command's subparsers.
"""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..command import DATATROVE_VERBOSE_HELP, add_subcommand, check_run_folder
from ..process.executors import positive_int

if TYPE_CHECKING:
    from .documents import DocumentSources

__all__ = ["add_documents_parser", "add_source_arguments", "document_sources", "run_documents_command", "warc_files"]

WARC_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")

SOURCE_DEFAULTS: dict[str, dict[str, tuple[Any, str]]] = {
    "common_crawl": {
        "cc_data": ("https://data.commoncrawl.org",
                    "where the WARC files named by the index are: URL prefix (Range requests) or local folder"),
        "lookup_workers": (8, "CDX lookups and record reads at once, per task"),
        "cdx_min_interval_s": (None, "least seconds between requests to one CDX server (default: none for a server on "
                               "the loopback interface, else cdx_toolkit's: 1 s for Common Crawl's index, 3 s for "
                               "others)"),
        "timeout_s": (30.0, "seconds to connect, and a response may stall, for CDX lookups and record reads"),
        "retries": (5, "retries of a CDX lookup or record read after a 429/5xx, reset, timeout or cut body"),
        "backoff_s": (1.0, "seconds before the first retry, doubled for each next one (or the server's Retry-After, "
                           "when longer)"),
    },
    "http": {
        "min_interval_s": (1.0, "least seconds between requests to one host"),
        "concurrency": (8, "requests in flight at once, all hosts together"),
        "per_host_connections": (1, "requests in flight at once to one host"),
        "read_timeout_s": (20.0, "seconds a read may wait for data"),
        "max_bytes": (5_000_000, "largest body received (before decoding)"),
    },
}
"""Defaults and help of the source options, as :class:`~.commoncrawl.CommonCrawlConfig` and :class:`~.http.HttpConfig`
declare them (:func:`field_defaults`): copied, because importing those modules loads spaCy, and ``--help`` must stay
fast."""


def warc_files(paths: list[str]) -> list[Path]:
    """The WARC/ARC files named by `paths`: files as given, folders searched recursively (`*.warc[.gz]`,
    `*.arc[.gz]`).

    Raises:
        FileNotFoundError: a path does not exist, or a folder holds no WARC file.
    """
    from ..utils.walk import find_files

    return find_files(paths, WARC_SUFFIXES, "WARC files (*.warc, *.warc.gz, *.arc, *.arc.gz)")


def add_source_arguments(parser: argparse.ArgumentParser, group: argparse._ArgumentGroup) -> None:
    """The document sources beside the WARC files, shared by ``wikiref documents`` and ``wikiref build``: a previous
    documents folder, Common Crawl (a CDX server or the columnar URL index) and the live web, each with its options
    (help texts from :class:`~.commoncrawl.CommonCrawlConfig` and :class:`~.http.HttpConfig`).
    :func:`document_sources` turns the parsed arguments into :class:`~.documents.DocumentSources`."""
    crawl, http = SOURCE_DEFAULTS["common_crawl"], SOURCE_DEFAULTS["http"]
    group.add_argument("--documents", metavar="DIR",
                       help="reuse a `wikiref documents` output folder (or a build's OUT.work/documents): its documents "
                            "are taken as they are, the pages it lacks go to the other sources")
    group.add_argument("--crawl", metavar="CRAWL[,CRAWL...]",
                       help="look the pages up in these Common Crawl crawls, newest first (e.g. "
                            "CC-MAIN-2024-10,CC-MAIN-2023-50); with --cdx-api or --cc-index for where the index is")
    group.add_argument("--cdx-api", metavar="URL",
                       help="CDX index server, queried per URL (small builds); {crawl} in it is replaced by each "
                            "crawl, else /<crawl>-index is appended (default with --crawl: https://index.commoncrawl.org)")
    group.add_argument("--cc-index", metavar="PATH",
                       help="Common Crawl's columnar URL index (Parquet: folder, file, glob, .paths[.gz] listing or "
                            "URLs), joined with all cited URLs at once in DuckDB (full builds)")
    group.add_argument("--http", action="store_true",
                       help="last, download the pages still missing from the live web (needs network; robots.txt, "
                            "per-host rate limit, size caps, private addresses refused)")
    common = parser.add_argument_group("Common Crawl options (with --crawl, --cdx-api or --cc-index)")
    common.add_argument("--cc-data", default=crawl["cc_data"][0], metavar="URL|DIR",
                        help=f"{crawl['cc_data'][1]} (default {crawl['cc_data'][0]})")
    common.add_argument("--lookup-workers", type=positive_int, default=crawl["lookup_workers"][0], metavar="N",
                        help=f"{crawl['lookup_workers'][1]} (default {crawl['lookup_workers'][0]})")
    common.add_argument("--cdx-min-interval", type=float, metavar="S", help=crawl["cdx_min_interval_s"][1])
    common.add_argument("--cc-timeout", type=float, default=crawl["timeout_s"][0], metavar="S",
                        help=f"{crawl['timeout_s'][1]} (default {crawl['timeout_s'][0]:g})")
    common.add_argument("--cc-retries", type=int, default=crawl["retries"][0], metavar="N",
                        help=f"{crawl['retries'][1]} (default {crawl['retries'][0]})")
    common.add_argument("--cc-backoff", type=float, default=crawl["backoff_s"][0], metavar="S",
                        help=f"{crawl['backoff_s'][1]} (default {crawl['backoff_s'][0]:g})")
    live = parser.add_argument_group("live web options (with --http)")
    live.add_argument("--http-cache", metavar="DIR",
                      help="on-disk cache folder (default: http_cache in the output or work folder)")
    live.add_argument("--min-interval", type=float, default=http["min_interval_s"][0], metavar="S",
                      help=f"least seconds between requests to one host (default {http['min_interval_s'][0]:g})")
    live.add_argument("--concurrency", type=positive_int, default=http["concurrency"][0], metavar="N",
                      help=f"{http['concurrency'][1]} (default {http['concurrency'][0]})")
    live.add_argument("--per-host-connections", type=positive_int, default=http["per_host_connections"][0],
                      metavar="N", help=f"{http['per_host_connections'][1]} (default {http['per_host_connections'][0]})")
    live.add_argument("--timeout", type=float, default=http["read_timeout_s"][0], metavar="S",
                      help=f"read timeout in seconds (default {http['read_timeout_s'][0]:g})")
    live.add_argument("--max-bytes", type=int, default=http["max_bytes"][0], metavar="N",
                      help=f"largest page downloaded, in bytes (default {http['max_bytes'][0]:,})")
    live.add_argument("--user-agent", help="User-Agent header (its first word is the robots.txt token)")


def field_defaults(config: type) -> dict[str, tuple[Any, str]]:
    """``{field: (default, help)}`` of a config dataclass, the help as a command-line phrase (lower case first
    letter, no final period): what :data:`SOURCE_DEFAULTS` copies (a test keeps the two equal)."""
    def phrase(text: str) -> str:
        text = text.strip().rstrip(".")
        return text if text[1:2].isupper() else text[:1].lower() + text[1:]  # "CDX ..." stays

    return {item.name: (item.default, phrase(item.metadata.get("help", ""))) for item in fields(config)}


def document_sources(args: argparse.Namespace) -> DocumentSources:
    """:class:`~.documents.DocumentSources` from the arguments of :func:`add_source_arguments`.

    Raises:
        ValueError: contradictory or malformed settings (e.g. both --cdx-api and --cc-index, a bad crawl name).
        FileNotFoundError: --documents names no documents folder.
    """
    from .commoncrawl import CommonCrawlConfig
    from .documents import DocumentSources
    from .http import HttpConfig

    common_crawl = None
    if args.crawl or args.cdx_api or args.cc_index:
        common_crawl = CommonCrawlConfig(crawls=args.crawl or (), cdx_api=args.cdx_api, cc_index=args.cc_index,
                                         cc_data=args.cc_data, lookup_workers=args.lookup_workers,
                                         cdx_min_interval_s=args.cdx_min_interval, timeout_s=args.cc_timeout,
                                         retries=args.cc_retries, backoff_s=args.cc_backoff)
    http_config = None
    if args.http:
        options = {"min_interval_s": args.min_interval, "read_timeout_s": args.timeout, "max_bytes": args.max_bytes,
                   "cache_dir": args.http_cache, "concurrency": args.concurrency,
                   "per_host_connections": args.per_host_connections}
        if args.user_agent:
            options["user_agent"] = args.user_agent
        http_config = HttpConfig(**options)
    return DocumentSources(common_crawl=common_crawl, http=args.http, http_config=http_config,
                           documents=args.documents)


def add_documents_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register `documents` on `subparsers` (the `wikiref` command's); returns the new parser."""
    parser = add_subcommand(
        subparsers, "documents",
        help="fetch the pages cited by statements (WARC archives, Common Crawl, the live web) as documents",
        description="WikiRef stage 2 alone: fetch every page cited by the statements once (deduplicated by "
                    "normalized URL), from a previous documents folder (--documents), the WARC archives, Common Crawl "
                    "(--crawl with --cdx-api or --cc-index; the capture nearest the citation's access-date), then, with "
                    "--http, the live web (robots.txt, per-host rate limit, size caps, private addresses refused), and "
                    "extract title and main text. Writes DIR/documents/*.jsonl.gz (title, text, sentences, citing "
                    "statement ids, which source served it) and DIR/failed/*.jsonl.gz (status per URL); a rerun "
                    "resumes. `wikiref build` runs this stage itself.",
        example="wikiref documents build/statements --warc crawl/*.warc.gz --out build/documents",
        func=run_documents_command, resumable=True, writes=("out",),
        verbose_help=DATATROVE_VERBOSE_HELP)
    parser.add_argument("statements", nargs="+", help="statement JSONL files (.jsonl/.jsonl.gz) or folders of them")
    parser.add_argument("--warc", nargs="*", action="extend", default=[], metavar="FILE",
                        help="WARC/ARC files or folders to index (Common Crawl or your own crawl); zero or more, "
                             "repeatable")
    parser.add_argument("--warc-index", metavar="PATH",
                        help="index database to create or reuse (default DIR/warc_index.sqlite)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (a rerun into it resumes)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into an output folder that holds other files (nothing of yours is deleted)")
    parser.add_argument("--workers", type=positive_int, default=1, metavar="N",
                        help="processes running at once (default 1)")
    parser.add_argument("--tasks", type=positive_int, metavar="N", help="number of tasks (default: --workers)")
    add_source_arguments(parser, parser.add_argument_group(
        "other document sources", "tried in this order for the pages the WARC files lack: --documents (before the "
        "WARC files), Common Crawl, the live web"))
    return parser


def run_documents_command(args: argparse.Namespace) -> int:
    """Run the subcommand; returns 0. Bad input raises (``FileNotFoundError``, ``ValueError``): the command's
    dispatch prints it as one line, exit status 2."""
    warcs = warc_files(args.warc)  # bad input is told before the pipeline's imports (spaCy, torch: seconds)
    check_run_folder(args.out, ("documents", "failed", "logs", "inputs.json", "warc_index.sqlite*", "http_cache"),
                     args.overwrite)
    from .documents import run_documents

    summary = run_documents(
        args.statements, args.out, warc_paths=warcs, sources=document_sources(args), workers=args.workers,
        tasks=args.tasks, warc_index=args.warc_index, progress=not args.quiet,
    )  # fmt: skip
    print(summary.format())
    return 0
