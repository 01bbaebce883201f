"""The ``statements`` subcommand: stage 1 of WikiRef from dump files to statement shards, with a closing summary.

``wikiref statements DUMP... --out DIR`` runs :func:`~wikiref_dataset.wiki.steps.run_statements` (a datatrove
``LocalPipelineExecutor``): one task per dump file by default, ``--workers`` of them at once. With one worker the
tasks run in this process and a progress bar counts pages; with more, datatrove's own logging reports progress. A
rerun skips finished tasks. :func:`add_statements_parser` registers the subcommand on the ``wikiref`` parser;
:func:`add_statement_arguments` declares the extraction settings (:class:`StatementConfig`) that ``wikiref build``
shares, and :func:`statement_config` reads them back.
"""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..command import (
    DATATROVE_VERBOSE_HELP,
    RunFailed,
    add_subcommand,
    check_input_files,
    check_run_folder,
    cleaned_up_on_input_error,
)
from ..process.executors import positive_int
from .defaults import DEFAULT_KEEP_TYPES, DEFAULT_SKIP_SECTIONS

if TYPE_CHECKING:  # the parser imports only the standard library; the extraction (mwparserfromhell) when it runs
    from .statements import StatementConfig

logger = logging.getLogger(__name__)

__all__ = ["add_statement_arguments", "add_statements_parser", "dumps_language", "language_line", "run_statements_command",
           "stated_language", "statement_config"]


def add_statement_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The extraction settings of stage 1 (:class:`StatementConfig`) as the options ``wikiref statements`` and
    ``wikiref build`` share; :func:`statement_config` reads them back. Returns their argument group."""
    group = parser.add_argument_group("statements (stage 1: which cited statements are extracted)")
    group.add_argument("--language", default=None, metavar="CODE",
                       help="Wikipedia language of the dumps (de, fr, ja ...): its citation templates and section "
                            "names (default: the <dbname> of the dump's <siteinfo>, else English)")
    group.add_argument("--keep-types", nargs="+", metavar="TYPE", default=None,
                       help=f"citation types kept (default: {', '.join(DEFAULT_KEEP_TYPES)})")
    group.add_argument("--bare-urls", action=argparse.BooleanOptionalAction, default=None,
                       help="keep (or not) the refs that hold only a link (default: the language's choice: kept for "
                            "German, Dutch and Finnish, which cite that way, not for the others)")
    group.add_argument("--skip-sections", nargs="+", metavar="HEADING", default=None,
                       help="headings of non-prose sections to skip (replaces the default list: "
                            f"{', '.join(DEFAULT_SKIP_SECTIONS[:7])}, ...)")
    group.add_argument("--min-chars", type=int, default=None, metavar="N",
                       help="shortest statement kept, in characters (default 10)")
    group.add_argument("--no-list-items", action="store_true", help="ignore statements in list items")
    group.add_argument("--no-archive-without-status", action="store_true",
                       help="fetch the original url, not archive-url, when a citation gives no url-status (by "
                            "default the archive, as Citation Style 1 then assumes the url is dead)")
    group.add_argument("--keep-unrendered-templates", action="store_true",
                       help="keep a statement in which a template that is not rendered stands inside a sentence (it "
                            "vanishes from the text, leaving a hole); by default such statements are dropped and "
                            "counted")
    group.add_argument("--fragments", action="store_true",
                       help="a statement is the text since the previous ref even where a ref stands inside a "
                            "sentence (the paper's definition); by default a sentence that holds several refs goes "
                            "whole to its last ref, and the earlier refs keep only their whole sentences")
    group.add_argument("--no-relative-dates", action="store_true",
                       help="do not render {{age}}, {{CURRENTYEAR}} and the like at the page revision's date: their "
                            "statements are then dropped as unrendered")
    return group


def stated_language(dumps: list[str]) -> str | None:
    """The Wikipedia language the headers of ``dumps`` state (:func:`~wikiref_dataset.wiki.languages.dump_language`);
    ``None`` when none states one (an unreadable dump states nothing: the stage reports the damage itself).

    Raises:
        ValueError: the dumps state different languages, named with their files.
    """
    from .dump import DumpError
    from .languages import dump_language

    stated: dict[str, list[str]] = {}
    for dump in dumps:
        try:
            code = dump_language(dump)
        except (DumpError, OSError, EOFError, ValueError):
            code = None
        if code:
            stated.setdefault(code, []).append(str(dump))
    if len(stated) > 1:
        listing = "; ".join(f"{code}: {', '.join(files)}" for code, files in sorted(stated.items()))
        raise ValueError(f"the dumps are of different Wikipedias ({listing}); build each language apart, or pass "
                         "--language to read them all as one")
    return next(iter(stated), None)


def dumps_language(dumps: list[str], language: str | None) -> tuple[str, str]:
    """The Wikipedia language of ``dumps`` and why: ``language`` when given, else the one their headers state
    (:func:`stated_language`), else English. The dumps' headers are read only when ``language`` is not given."""
    if language:
        return language, "given with --language"
    stated = stated_language(dumps)
    code, why = (stated, "stated by the dump header") if stated else ("en", "the default, as the dump header states none")
    from .languages import supported_languages

    known = set(supported_languages())
    named = {dump: _file_language(dump, known) for dump in dumps}
    others = {other for other in named.values() if other and other != code}
    if others:  # a hand-made excerpt keeps the header it was cut from (the dbpedia minidumps say enwiki)
        files = ", ".join(sorted(Path(dump).name for dump, other in named.items() if other in others))
        hint = " or ".join(f"--language {other}" for other in sorted(others))
        logger.warning("%s: the file name names another Wikipedia than the header (%s); read as %s. Pass %s if the "
                       "header is wrong", files, code, code, hint)
        why += f" (the file name says otherwise: {hint} if the header is wrong)"
    return code, why


_FILE_LANGUAGE = re.compile(r"([a-z]{2,3}(?:_[a-z]+)*)wiki[-_.]")


def _file_language(dump: str, known: set[str]) -> str | None:
    """The language a dump's file name names (``jawiki-latest-pages-articles.xml.bz2`` → ``ja``) when it is one of
    ``known`` (the languages with a table)."""
    match = _FILE_LANGUAGE.match(Path(dump).name)
    code = match.group(1).replace("_", "-") if match else None
    return code if code in known else None


def language_line(code: str, why: str) -> str:
    """The summary line that says which language the dumps were read as, and why (:func:`dumps_language`): a dump
    excerpt whose header names another site is noticed here."""
    from .languages import wiki_language

    return f"  language: {wiki_language(code).name} ({code}): {why}"


def statement_config(args: argparse.Namespace, language: str = "en") -> StatementConfig:
    """The :class:`StatementConfig` of options declared by :func:`add_statement_arguments` (unset: its defaults), for
    dumps of ``language`` (:func:`dumps_language`).

    Raises:
        ValueError: a bad setting (e.g. a negative ``--min-chars``, a language without a table), named.
    """
    from .statements import StatementConfig

    options: dict = {"language": language}
    if args.keep_types is not None:
        options["keep_types"] = tuple(args.keep_types)
    if args.skip_sections is not None:
        options["skip_sections"] = tuple(args.skip_sections)
    if args.min_chars is not None:
        options["min_statement_chars"] = args.min_chars
    return StatementConfig(include_bare_urls=args.bare_urls, include_list_items=not args.no_list_items,
                           archive_when_status_missing=not args.no_archive_without_status,
                           drop_unrendered_templates=not args.keep_unrendered_templates,
                           render_relative_dates=not args.no_relative_dates,
                           whole_sentences=not args.fragments, **options)


def add_statements_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``statements`` on ``subparsers`` (the object ``parser.add_subparsers()`` returns)."""
    parser = add_subcommand(
        subparsers, "statements", help="extract cited statements from Wikipedia dump files (WikiRef stage 1)",
        description="WikiRef stage 1 alone: extract the cited statements (the text between the previous citation "
                    "and a <ref> citing a web page, news article, press release or magazine, with its section path "
                    "and citation fields) from pages-articles dumps (.xml, .xml.bz2, multistream .xml.bz2) into JSON-lines "
                    "shards DIR/<task>.jsonl.gz, and print what was kept and skipped. A damaged dump keeps the pages "
                    "read before the damage; a rerun skips finished tasks. `wikiref build` runs this stage itself.",
        example="wikiref statements enwiki-pages-articles.xml.bz2 --out build/statements --tasks 4 --workers 4",
        func=run_statements_command, resumable=True, writes=("out",),
        verbose_help=DATATROVE_VERBOSE_HELP)
    parser.add_argument("dumps", nargs="+", metavar="DUMP", help="pages-articles dump files")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="output folder for the statement shards (a rerun into it resumes)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into an output folder that holds other files (nothing of yours is deleted)")
    parser.add_argument("--tasks", type=positive_int, default=None, metavar="N",
                        help="datatrove tasks (default: one per dump file)")
    parser.add_argument("--workers", type=positive_int, default=1, metavar="N",
                        help="tasks run at once (default 1, in this process)")
    add_statement_arguments(parser)
    parser.add_argument("--limit", type=int, default=-1, metavar="N",
                        help="pages per task, for smoke runs (default: all)")
    parser.add_argument("--logging-dir", default=None, metavar="DIR",
                        help="datatrove logs and stats (default: <out>/logs)")
    return parser


def run_statements_command(args: argparse.Namespace) -> int:
    """Run the subcommand; 0 on success (damaged dumps are named in the summary and their pages read before the
    damage kept). Raises what the command's dispatch turns into one line: bad input (a missing dump, a bad setting,
    every dump damaged before its first page: exit 2) or a failed task (:class:`RunFailed`, exit 1)."""
    from .dump import DumpError
    from .steps import run_statements

    dumps = check_input_files(args.dumps, "dump file")
    check_run_folder(args.out, ("*.jsonl.gz", "logs"), args.overwrite)
    language, why = dumps_language([str(dump) for dump in dumps], args.language)
    config = statement_config(args, language)
    with cleaned_up_on_input_error(*filter(None, (args.out, args.logging_dir))):
        try:
            summary = run_statements(dumps, args.out, config=config, tasks=args.tasks, workers=args.workers,
                                     logging_dir=args.logging_dir, limit=args.limit,
                                     progress=args.workers == 1 and not args.quiet)
        except (ValueError, DumpError, KeyboardInterrupt):
            raise
        except Exception as err:  # a task failed (datatrove has logged its traceback in the task's log file)
            raise RunFailed(f"a task failed: {type(err).__name__}: {err}") from err
        print(summary.format())
        print(language_line(config.language, why))
        if summary.damaged_dumps and not summary.pages:
            raise DumpError(f"nothing could be read: {len(summary.damaged_dumps)} damaged dump(s), no page read "
                            f"before the damage: {'; '.join(summary.damaged_dumps)}")
    return 0
