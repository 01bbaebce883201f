"""``wikiref build``: the whole WikiRef build (statements -> documents -> statistics -> curation -> Parquet).

    wikiref build DUMP... [--warc FILE...] --out DIR [--tasks N] [--workers N] [--executor local|slurm|ray]

Registered by :func:`add_build_parser`; also runnable as ``python -m wikiref_dataset.wikiref.cli``. The options come in
groups: inputs, document sources (where the cited pages come from), statements (shared with ``wikiref statements``),
curation, output and execution (shared with ``wikiref psg2sum`` and ``wikiref aquamuse``: :mod:`.executors`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..command import (
    DATATROVE_VERBOSE_HELP,
    ArgumentParser,
    CliError,
    RunFailed,
    add_split_arguments,
    add_subcommand,
    check_input_files,
    cleaned_up_on_input_error,
    deprecated_alias,
    dispatch,
)
from ..process.executors import add_executor_arguments, executor_settings, positive_int
from ..wiki.cli import add_statement_arguments, dumps_language, statement_config

__all__ = ["add_build_parser", "add_document_source_arguments", "main", "run_build_command", "sample_command"]

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample" / "wikiref"
TASKS_HELP = ("tasks of every stage but the last: each writes (stage 1) or reads (stages 2-4) one bucket of the cited "
              "URLs; fixes the output, not the speed (that is --workers); default 4")


def sample_command(out: str = "wikiref-sample") -> str:
    """The build of the shipped sample (a small wikitext dump and a WARC of the pages it cites), as a command line;
    paths relative to the working folder when the sample lies under it."""
    def shown(path: Path) -> str:
        relative = os.path.relpath(path)
        return relative if not relative.startswith("..") else str(path)

    return (f"wikiref build {shown(SAMPLE / 'samplewiki-20240601-pages-articles.xml')} "
            f"--warc {shown(SAMPLE / 'sample.warc.gz')} --out {out} --tasks 2")


def add_document_source_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The "document sources" group of ``wikiref build``: where stage 2 finds the cited pages, tried in order: a
    previous documents folder (``--documents``), local WARC files (``--warc``), Common Crawl (``--crawl`` with
    ``--cdx-api`` or ``--cc-index``), the live web (``--http``); the same options as ``wikiref documents``
    (:func:`.web.cli.add_source_arguments`), read into ``BuildConfig.sources``."""
    from ..web.cli import add_source_arguments

    sources = parser.add_argument_group(
        "document sources", "where the cited pages come from, tried in this order: --documents, --warc, Common Crawl, "
        "--http (a page found in none is counted as missing)")
    sources.add_argument("--warc", nargs="*", action="extend", default=[], metavar="FILE",
                         help="WARC/ARC files or folders holding the cited pages (zero or more; repeatable)")
    add_source_arguments(parser, sources)
    return sources


def _add_curation_arguments(parser: argparse.ArgumentParser) -> None:
    curation = parser.add_argument_group("curation (Zhu et al., 2022: filters, oracle labels, split)")
    curation.add_argument("--min-unigram-recall", type=float, default=0.5, metavar="R",
                          help="rule 1: keep an example when the summary's non-stop-word lemmas are covered by the "
                               "document at least this much (default 0.5)")
    curation.add_argument("--percentiles", type=float, nargs=2, default=(5.0, 95.0), metavar=("LOW", "HIGH"),
                          help="rule 2: keep examples whose token and sentence counts lie between these percentiles "
                               "of the build (default 5 95)")
    curation.add_argument("--bounded", nargs="*", metavar="QUANTITY",
                          help="quantities bounded by rule 2 (default: all four: document and summary tokens and "
                               "sentences)")
    curation.add_argument("--oracle-max-sentences", type=positive_int, default=5, metavar="N",
                          help="rule 3: sentences the greedy ROUGE-2 oracle may pick (default 5)")
    curation.add_argument("--min-oracle-score", type=float, default=0.2, metavar="R",
                          help="rule 3: keep an example when the oracle's ROUGE-2 recall is above this (default 0.2)")
    add_split_arguments(curation, "examples", "12,000 scaled to the build's size")


def add_build_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``build`` on the ``wikiref`` subcommands."""
    parser = add_subcommand(
        commands, "build", help="build WikiRef: dump + cited pages -> Parquet dataset with card",
        description="Build the WikiRef dataset in one command, as datatrove stages: cited statements from "
                    "pages-articles dumps, the cited pages (WARC archives, Common Crawl, the live web), curation "
                    "statistics, the filters and oracle labels of Zhu et al. (2022), a split grouped by cited URL, "
                    "and a Parquet folder with its dataset card, published whole at the end (datasets.load_dataset(DIR)). Intermediate, resumable "
                    "state lives beside it in OUT.work: an interrupted build resumes when rerun, and a rerun with "
                    "other options redoes only the stages they feed. The example builds the sample shipped with the "
                    "package (a dump and a WARC written for this project) in about half a minute.",
        example=sample_command(), func=run_build_command, resumable=True, writes=("out", "work"),
        verbose_help=DATATROVE_VERBOSE_HELP)
    inputs = parser.add_argument_group("inputs")
    inputs.add_argument("dumps", nargs="*", metavar="DUMP",
                        help="pages-articles dump files (.xml, .xml.bz2; a multistream .xml.bz2 with its "
                             "-index.txt.bz2 beside it is cut into byte ranges)")
    inputs.add_argument("--dump", dest="dump_option", nargs="+", metavar="DUMP",
                        action=deprecated_alias("--dump", note="given positionally: wikiref build DUMP..."),
                        help=argparse.SUPPRESS)
    add_document_source_arguments(parser)
    add_statement_arguments(parser)
    _add_curation_arguments(parser)
    groups = add_executor_arguments(parser, tasks_help=TASKS_HELP)
    groups["execution"].add_argument("--shards", dest="tasks", type=positive_int, action=deprecated_alias("--tasks"),
                                     help=argparse.SUPPRESS)
    return parser


def run_build_command(args: argparse.Namespace) -> int:
    """Run ``wikiref build``; returns 0. Bad input raises (one line, exit 2, from the command's dispatch); a build
    that keeps no example raises :class:`RunFailed` (exit 1) after its closing summary."""
    from ..process.folders import check_output_folder
    from ..web.cli import document_sources, warc_files

    # bad input is told before the pipeline's imports (spaCy, and torch through it: seconds)
    dumps = check_input_files([*args.dumps, *(args.dump_option or [])], "dump file")
    if not dumps:
        raise CliError("no dump file given: wikiref build DUMP... --out DIR")
    warcs = [str(path) for path in warc_files(args.warc)] if args.warc else []
    check_output_folder(args.out, "wikiref", args.overwrite)
    from .build import BuildConfig, run_build
    from .curation import BOUNDED_QUANTITIES, CurationConfig

    curation = CurationConfig(
        min_unigram_recall=args.min_unigram_recall, low_percentile=args.percentiles[0],
        high_percentile=args.percentiles[1], bounded=tuple(args.bounded or BOUNDED_QUANTITIES),
        oracle_max_sentences=args.oracle_max_sentences, min_oracle_score=args.min_oracle_score, seed=args.seed,
        dev_size=args.validation_size, test_size=args.test_size)
    language = dumps_language([str(dump) for dump in dumps], args.language)[0]
    config = BuildConfig(dumps, warcs, curation=curation, statements=statement_config(args, language),
                         sources=document_sources(args), **executor_settings(args))
    with cleaned_up_on_input_error(config.work):  # bad input found by the build (no dump could be read, say)
        summary = run_build(config, progress=not args.quiet)
    if summary is None:  # cluster jobs were submitted (see run_build)
        return 0
    print(summary.format())
    if summary.empty_reason:
        raise RunFailed(f"{summary.empty_reason}; nothing was published to {args.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``wikiref build`` alone: ``python -m wikiref_dataset.wikiref.cli DUMP... --out DIR``."""
    parser = ArgumentParser(prog="wikiref")
    add_build_parser(parser.add_subparsers(dest="command", required=True))
    return dispatch(parser, ["build", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
