"""``wikiref psg2sum HISTORY_DUMP... --out DIR [--tasks N --workers N --executor local|slurm|ray]``: mine PSG2SUM
pairs (datatrove stages, :mod:`.pipeline`), split, write the dataset folder + card, score the LEAD1 and TextRank
baselines on the test split, and print a closing summary.

A damaged dump (truncated, corrupt) does not stop the build: the pairs of the pages mined before the damage are kept
and the summary names the file; exit status 1 when nothing at all could be read.

Exit status: 0 with a loadable dataset folder; 1 when no pair reached λ (nothing is published; the counts are in
``OUT.work/build.json`` and the message names the highest λ of the grid that has candidates, e.g. 0.4 for the real
"Anarchism" windows); 2 on bad input (including dumps of which nothing could be read); 130 when interrupted.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..command import (
    DATATROVE_VERBOSE_HELP,
    RunFailed,
    add_split_arguments,
    add_subcommand,
    check_input_files,
    cleaned_up_on_input_error,
    deprecated_alias,
)
from ..process.executors import add_executor_arguments, executor_settings

if TYPE_CHECKING:
    from .pipeline import Psg2SumBuildConfig, Psg2SumSummary

# The miner (spaCy, mwparserfromhell) is imported inside the command: `wikiref` builds this parser on every call.

__all__ = ["add_psg2sum_parser", "run_psg2sum_command"]


def add_psg2sum_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``psg2sum`` on the ``wikiref`` command's subparsers (unset options take MiningConfig's defaults)."""
    parser = add_subcommand(
        commands, "psg2sum",
        help="mine PSG2SUM passage-summary pairs from pages-meta-history dumps -> Parquet dataset + card",
        description="Mine PSG2SUM passage-summary pairs (Zhou, Wei and Zhou) from Wikipedia revision histories: diff "
                    "adjacent revisions, pair each sentence added to the lead with the passage added to the body that "
                    "best covers its non-stop words (score >= λ, --min-score), skip reverts and rewrites, deduplicate, "
                    "split by page, write a Parquet folder with its card (published whole at the end) and score the "
                    "LEAD1 and TextRank baselines. The closing summary counts candidates at λ = 0.3-0.7; when no pair "
                    "reaches λ nothing is published, exit status 1, and the message names the λ to retry with.",
        example="wikiref psg2sum enwiki-pages-meta-history1.xml.bz2 --min-score 0.3 --out psg2sum",
        func=run_psg2sum_command, resumable=True, writes=("out", "work"),
        verbose_help=DATATROVE_VERBOSE_HELP)
    parser.add_argument("dumps", nargs="+", metavar="HISTORY_DUMP", type=Path,
                        help="pages-meta-history dump(s): .xml, .xml.bz2, .xml.gz or .7z (7z command or py7zr)")
    parser.add_argument("--min-score", type=float, default=None,
                        help="λ: lowest overlap score kept (default 0.6, the paper's)")
    parser.add_argument("--min-summary-words", type=int, default=None,
                        help="fewest distinct non-stop words in a summary sentence")
    parser.add_argument("--revert-window", type=int, default=None,
                        help="revisions looked back for reverts and re-added text")
    parser.add_argument("--max-rewrite-churn", type=float, default=None,
                        help="a revision changing more than this share of passages is a rewrite (skipped)")
    parser.add_argument("--min-rewrite-passages", type=int, default=None,
                        help="the rewrite rule applies to pages with at least this many passages")
    add_split_arguments(parser, "pairs", "4,000 scaled to the build")
    parser.add_argument("--language", default=None, metavar="CODE",
                        help="Wikipedia language of the histories (de, fr, ja ...): its templates, sections and text "
                             "pipeline (default: the <dbname> of the dump's <siteinfo>, else English)")
    parser.add_argument("--no-baselines", action="store_true", help="do not score LEAD1 / TextRank")
    parser.add_argument("--lead-splitter", choices=("moses", "spacy"), default=None,
                        help="lead sentence splitter (default moses, as the paper)")
    add_executor_arguments(parser, tasks_help="mining tasks; pages are dealt round-robin to them (the output is the "
                                              "same for any number); default 1")
    parser.add_argument("--no-progress", dest="quiet", action=deprecated_alias("--quiet"), nargs=0,
                        help=argparse.SUPPRESS)
    return parser


def run_psg2sum_command(args: argparse.Namespace) -> int:
    """Run ``wikiref psg2sum``; returns 0. Bad input raises (one line, exit 2, from the command's dispatch); a
    build that keeps no pair raises :class:`RunFailed` (exit 1) after its closing summary."""
    from ..process.folders import check_output_folder

    dumps = check_input_files(args.dumps, "dump file")  # bad input is told before the pipeline's imports
    check_output_folder(args.out, "psg2sum", args.overwrite)
    from ..wiki.dump import DumpError, damaged_dumps
    from .mining import MiningConfig
    from .pipeline import Psg2SumBuildConfig, run_psg2sum_build

    options = {name: getattr(args, name) for name in ("min_score", "min_summary_words", "revert_window",
                                                      "max_rewrite_churn", "min_rewrite_passages", "lead_splitter")}
    from ..wiki.cli import dumps_language

    options["language"] = dumps_language([str(dump) for dump in dumps], args.language)[0]
    mining = MiningConfig(**{name: value for name, value in options.items() if value is not None})
    config = Psg2SumBuildConfig(
        dumps, mining=mining, seed=args.seed, dev_size=args.validation_size, test_size=args.test_size,
        baselines=not args.no_baselines, progress=not args.quiet, **executor_settings(args))
    with cleaned_up_on_input_error(config.work):
        summary = run_psg2sum_build(config)
        damaged = damaged_dumps(summary.counts) if summary is not None else {}
        if damaged and not summary.counts.get("pages"):
            print(format_summary(summary, config))
            raise DumpError(f"nothing could be read: {len(damaged)} damaged dump(s), no page read before the damage: "
                            + "; ".join(damaged))
    if summary is None:  # submitted to Slurm: run_psg2sum_build printed the job ids
        return 0
    print(format_summary(summary, config))
    if summary.pairs:
        return 0
    retry = summary.suggested_min_score()
    hint = (f"rerun with --min-score {retry} (the highest λ of the grid with candidates)" if retry
            else "no candidate reached the lowest λ counted either: mine more history")
    raise RunFailed(f"{summary.empty_reason}; nothing was published to {args.out} (counts in "
                    f"{config.work / 'build.json'}); {hint}")


def format_summary(summary: Psg2SumSummary, config: Psg2SumBuildConfig) -> str:
    """The closing summary: pages, revision pairs, skips, additions, candidates per λ, kept pairs, damaged dumps,
    baselines."""
    from ..wiki.dump import damaged_dumps

    counts, mining = summary.counts, config.mining
    lines = [f"PSG2SUM: {counts['pages']:,} pages, {counts['revisions']:,} revisions, "
             f"{counts['revision_pairs']:,} revision pairs in {summary.seconds:.1f}s "
             f"({config.tasks} task(s), {config.workers} worker(s))",
             f"  skipped: {counts['revisions_deleted']:,} deleted, {counts['revisions_without_text']:,} without text, "
             f"{counts['reverts']:,} reverts ({counts['reverted_revisions']:,} revisions undone), "
             f"{counts['rewrites']:,} rewrites, {counts['pages_failed']:,} pages failed",
             f"  additions: {counts['added_sentences']:,} lead sentences, {counts['added_passages']:,} passages "
             f"({counts['readded_sentences'] + counts['readded_passages']:,} re-added dropped)"]
    per_lambda = ", ".join(f"λ≥{k}: {v:,}" for k, v in summary.candidates_per_lambda.items())
    lines.append(f"  candidate pairs: {counts['candidate_pairs']:,} ({per_lambda})")
    lines.append(f"  kept at λ={mining.min_score:g}: {summary.pairs:,} after {counts['duplicates']:,} duplicates -> "
                 + ", ".join(f"{name} {size:,}" for name, size in summary.splits.items()))
    for name, pages in damaged_dumps(counts).items():
        lines.append(f"  damaged dump: {name}: {pages:,} pages mined before the damage, their pairs kept")
    if summary.baselines:
        lines.append("Baselines (ROUGE, %, ±95% CI half-width): " + summary.baselines)
    if summary.pairs:
        lines.append(f"Dataset folder: {config.output_dir} (load with datasets.load_dataset({config.output_dir!r}))")
    return "\n".join(lines)
