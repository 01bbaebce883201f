"""``wikiref psg2sum HISTORY_DUMP... --out DIR [--tasks N --workers N --executor local|slurm|ray]``: mine PSG2SUM
pairs (datatrove stages, :mod:`.pipeline`), split, write the dataset folder + card, score the LEAD1 and TextRank
baselines on the test split, and print a closing summary.

A damaged dump (truncated, corrupt) does not stop the build: the pairs of the pages mined before the damage are kept
and the summary names the file; exit status 1 when nothing at all could be read.

Exit status: 0 with a loadable dataset folder; 1 when no pair reached λ (the folder then holds the card and
``build.json`` with every count and an empty typed train file, which ``datasets`` refuses to load — the message
names the highest λ of the grid that has candidates, e.g. 0.4 for the real "Anarchism" windows); 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .pipeline import Psg2SumBuildConfig, Psg2SumSummary

# The miner (spaCy, mwparserfromhell) is imported inside the command: `wikiref` builds this parser on every call.

__all__ = ["add_psg2sum_parser", "run_psg2sum_command"]


def add_psg2sum_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``psg2sum`` on the ``wikiref`` command's subparsers (unset options take MiningConfig's defaults)."""
    parser = commands.add_parser(
        "psg2sum", help="mine PSG2SUM passage-summary pairs from pages-meta-history dumps -> Parquet dataset + card")
    parser.add_argument("dumps", nargs="+", metavar="HISTORY_DUMP", type=Path,
                        help="pages-meta-history dump(s): .xml, .xml.bz2, .xml.gz or .7z (7z command or py7zr)")
    parser.add_argument("--out", required=True, type=Path, help="output dataset folder, published whole at the end")
    parser.add_argument("--work", type=Path, help="intermediate, resumable state (default: OUT.work beside --out)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into an output folder holding something other than a previous PSG2SUM build "
                             "(files this project did not write are kept)")
    parser.add_argument("--min-score", type=float, default=None, help="λ: lowest overlap score kept")
    parser.add_argument("--min-summary-words", type=int, default=None,
                        help="fewest distinct non-stop words in a summary sentence")
    parser.add_argument("--revert-window", type=int, default=None,
                        help="revisions looked back for reverts and re-added text")
    parser.add_argument("--max-rewrite-churn", type=float, default=None,
                        help="a revision changing more than this share of passages is a rewrite (skipped)")
    parser.add_argument("--min-rewrite-passages", type=int, default=None,
                        help="the rewrite rule applies to pages with at least this many passages")
    parser.add_argument("--dev-size", type=int, default=None, help="dev pairs (default: 4,000 scaled to the build)")
    parser.add_argument("--test-size", type=int, default=None, help="test pairs (default: 4,000 scaled)")
    parser.add_argument("--seed", type=int, default=42, help="split seed")
    parser.add_argument("--no-baselines", action="store_true", help="do not score LEAD1 / TextRank")
    parser.add_argument("--lead-splitter", choices=("moses", "spacy"), default=None,
                        help="lead sentence splitter (default moses, as the paper)")
    parser.add_argument("--tasks", type=int, default=1, help="mining tasks; pages are dealt round-robin (default 1)")
    parser.add_argument("--workers", type=int, default=1, help="tasks run at once (default 1)")
    parser.add_argument("--executor", choices=("local", "slurm", "ray"), default="local")
    parser.add_argument("--executor-options", help='JSON for the cluster executor, e.g. \'{"partition": "cpu"}\'')
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run_psg2sum_command)
    return parser


def run_psg2sum_command(args: argparse.Namespace) -> int:
    from ..wiki.dump import DumpError, damaged_dumps
    from .mining import MiningConfig
    from .pipeline import Psg2SumBuildConfig, run_psg2sum_build

    options = {name: getattr(args, name) for name in ("min_score", "min_summary_words", "revert_window",
                                                      "max_rewrite_churn", "min_rewrite_passages", "lead_splitter")}
    try:
        mining = MiningConfig(**{name: value for name, value in options.items() if value is not None})
        config = Psg2SumBuildConfig(
            dumps=[str(path) for path in args.dumps], output_dir=str(args.out), tasks=args.tasks,
            workers=args.workers, executor=args.executor,
            executor_options=json.loads(args.executor_options) if args.executor_options else {}, mining=mining,
            seed=args.seed, dev_size=args.dev_size, test_size=args.test_size, baselines=not args.no_baselines,
            progress=not args.no_progress, work_dir=str(args.work) if args.work else None,
            overwrite=args.overwrite)
    except (ValueError, json.JSONDecodeError) as err:
        print(f"wikiref psg2sum: error: {err}", file=sys.stderr)
        return 2
    for path in args.dumps:
        if not path.is_file():
            print(f"wikiref psg2sum: error: {path}: no such dump file", file=sys.stderr)
            return 2
    try:
        summary = run_psg2sum_build(config)
    except (DumpError, ValueError, RuntimeError) as err:
        print(f"wikiref psg2sum: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"wikiref psg2sum: interrupted; {args.out} is unchanged, run the same command to resume", file=sys.stderr)
        return 130
    if summary is None:  # submitted to Slurm: run_psg2sum_build printed the job ids
        return 0
    print(format_summary(summary, config))
    damaged = damaged_dumps(summary.counts)
    if damaged and not summary.counts.get("pages"):
        print(f"wikiref psg2sum: error: nothing could be read: {len(damaged)} damaged dump(s), no page read before "
              "the damage", file=sys.stderr)
        return 1
    if summary.pairs:
        return 0
    retry = summary.suggested_min_score()
    hint = (f"rerun with --min-score {retry} (the highest λ of the grid with candidates)" if retry
            else "no candidate reached the lowest λ counted either: mine more history")
    print(f"wikiref psg2sum: error: {summary.empty_reason}; nothing was published to {args.out} (counts in "
          f"{config.work / 'build.json'}); {hint}", file=sys.stderr)
    return 1


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
