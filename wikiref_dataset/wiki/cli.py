"""The ``statements`` subcommand: stage 1 of WikiRef from dump files to statement shards, with a closing summary.

``wikiref statements DUMP... --out DIR`` runs :func:`~wikiref_dataset.wiki.steps.run_statements` (a datatrove
``LocalPipelineExecutor``): one task per dump file by default, ``--workers`` of them at once. With one worker the
tasks run in this process and a progress bar counts pages; with more, datatrove's own logging reports progress. A
rerun skips finished tasks. :func:`add_statements_parser` registers the subcommand on the ``wikiref`` parser.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .dump import DumpError
from .statements import DEFAULT_KEEP_TYPES, DEFAULT_SKIP_SECTIONS, StatementConfig

__all__ = ["add_statements_parser", "run_statements_command"]


def add_statements_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``statements`` on ``subparsers`` (the object ``parser.add_subparsers()`` returns)."""
    parser = subparsers.add_parser(
        "statements",
        help="extract cited statements from Wikipedia dump files (WikiRef stage 1)",
        description="Extract cited statements (text, section path, citation) from pages-articles dumps "
                    "(.xml, .xml.bz2, multistream .xml.bz2) into JSONL shards <out>/<rank>.jsonl.gz.",
    )
    parser.add_argument("dumps", nargs="+", metavar="DUMP", help="pages-articles dump files")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder for the statement shards")
    parser.add_argument("--tasks", type=int, default=None, help="datatrove tasks (default: one per dump file)")
    parser.add_argument("--workers", type=int, default=1, help="tasks run at once (default 1, in this process)")
    parser.add_argument("--keep-types", nargs="+", metavar="TYPE", default=None,
                        help=f"citation types kept (default: {', '.join(DEFAULT_KEEP_TYPES)})")
    parser.add_argument("--bare-urls", action="store_true", help="also keep refs that hold only a link")
    parser.add_argument("--skip-sections", nargs="+", metavar="HEADING", default=None,
                        help="headings of non-prose sections to skip (replaces the default list: "
                             f"{', '.join(DEFAULT_SKIP_SECTIONS[:7])}, ...)")
    parser.add_argument("--min-chars", type=int, default=None, help="shortest statement kept (default 10)")
    parser.add_argument("--no-list-items", action="store_true", help="ignore statements in list items")
    parser.add_argument("--limit", type=int, default=-1, help="pages per task, for smoke runs (default: all)")
    parser.add_argument("--logging-dir", default=None, help="datatrove logs and stats (default: <out>/logs)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run_statements_command)
    return parser


def _config(args: argparse.Namespace) -> StatementConfig:
    options = {}
    if args.keep_types is not None:
        options["keep_types"] = tuple(args.keep_types)
    if args.skip_sections is not None:
        options["skip_sections"] = tuple(args.skip_sections)
    if args.min_chars is not None:
        options["min_statement_chars"] = args.min_chars
    return StatementConfig(include_bare_urls=args.bare_urls, include_list_items=not args.no_list_items, **options)


def run_statements_command(args: argparse.Namespace) -> int:
    """Run the subcommand; 0 on success (damaged dumps are named in the summary and their pages read before the
    damage kept), 2 on bad input (a message on stderr), 1 when a task failed or every dump was damaged before its
    first page."""
    from .steps import run_statements

    missing = [path for path in args.dumps if not Path(path).is_file()]
    if missing:
        print(f"wikiref statements: error: no such dump file: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        config = _config(args)
        summary = run_statements(args.dumps, args.out, config=config, tasks=args.tasks, workers=args.workers,
                                 logging_dir=args.logging_dir, limit=args.limit,
                                 progress=args.workers == 1 and not args.quiet)
    except (ValueError, DumpError) as err:
        print(f"wikiref statements: error: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # a task failed (datatrove has logged its traceback)
        print(f"wikiref statements: error: a task failed: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    print(summary.format())
    if summary.damaged_dumps and not summary.pages:
        print(f"wikiref statements: error: nothing could be read: {len(summary.damaged_dumps)} damaged dump(s), "
              "no page read before the damage", file=sys.stderr)
        return 1
    return 0
