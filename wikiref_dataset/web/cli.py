"""The ``wikiref documents`` subcommand: stage 2 of the WikiRef build from the command line.

``wikiref documents STATEMENTS... --warc FILES... [--warc-index PATH] [--http] --out DIR`` indexes the WARC
files, fetches every cited page once (archive first, live web only with ``--http``), writes the documents and
prints a closing summary (pages fetched / missing / failed by reason). :func:`add_documents_parser` registers it
on the ``wikiref`` command's subparsers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_documents_parser", "run_documents_command", "warc_files"]

WARC_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")


def warc_files(paths: list[str]) -> list[Path]:
    """The WARC/ARC files named by `paths`: files as given, folders searched recursively (`*.warc[.gz]`,
    `*.arc[.gz]`).

    Raises:
        FileNotFoundError: a path does not exist, or a folder holds no WARC file.
    """
    from .documents import find_files

    return find_files(paths, WARC_SUFFIXES, "WARC files (*.warc, *.warc.gz, *.arc, *.arc.gz)")


def add_documents_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register `documents` on `subparsers` (the `wikiref` command's); returns the new parser."""
    parser = subparsers.add_parser(
        "documents",
        help="fetch the pages cited by statements (WARC archives, optionally the live web) as documents",
        description=(
            "Fetch every page cited by the statements once (deduplicated by normalized URL): from the WARC "
            "archives first, then, with --http, from the live web. Writes DIR/documents/*.jsonl.gz (title, text, "
            "sentences, citing statement ids) and DIR/failed/*.jsonl.gz (status per URL)."
        ),
    )
    parser.add_argument("statements", nargs="+", help="statement JSONL files (.jsonl/.jsonl.gz) or folders of them")
    parser.add_argument("--warc", nargs="+", default=[], metavar="FILE",
                        help="WARC/ARC files or folders to index (Common Crawl or your own crawl)")
    parser.add_argument("--warc-index", metavar="PATH",
                        help="index database to create or reuse (default DIR/warc_index.sqlite)")
    parser.add_argument("--http", action="store_true",
                        help="fetch pages missing from the archives from the live web (needs network)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    parser.add_argument("--workers", type=int, default=1, help="processes running at once (default 1)")
    parser.add_argument("--tasks", type=int, help="number of tasks (default: --workers)")
    http = parser.add_argument_group("HTTP options (with --http)")
    http.add_argument("--http-cache", metavar="DIR", help="on-disk cache folder (default DIR/http_cache)")
    http.add_argument("--min-interval", type=float, default=1.0, metavar="S",
                      help="least seconds between requests to one host (default 1)")
    http.add_argument("--timeout", type=float, default=20.0, metavar="S", help="read timeout in seconds (default 20)")
    http.add_argument("--max-bytes", type=int, default=5_000_000, metavar="N",
                      help="largest page downloaded, in bytes (default 5,000,000)")
    http.add_argument("--user-agent", help="User-Agent header (its first word is the robots.txt token)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run_documents_command)
    return parser


def run_documents_command(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit status (2 on bad input)."""
    from .documents import run_documents
    from .http import HttpConfig

    try:
        warcs = warc_files(args.warc)
        http_config = None
        if args.http:
            options = {"min_interval_s": args.min_interval, "read_timeout_s": args.timeout, "max_bytes": args.max_bytes,
                       "cache_dir": args.http_cache}
            if args.user_agent:
                options["user_agent"] = args.user_agent
            http_config = HttpConfig(**options)
        summary = run_documents(
            args.statements, args.out, warc_paths=warcs, http=args.http, http_config=http_config,
            workers=args.workers, tasks=args.tasks, warc_index=args.warc_index, progress=not args.quiet,
        )  # fmt: skip
    except (FileNotFoundError, ValueError) as error:
        print(f"wikiref documents: error: {error}", file=sys.stderr)
        return 2
    print(summary.format())
    return 0
