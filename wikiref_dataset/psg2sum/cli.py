"""``wikiref psg2sum HISTORY_DUMP... --out DIR``: mine PSG2SUM pairs, split, write the dataset folder + card, score
the LEAD1 and TextRank baselines on the test split, and print a closing summary."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

# The miner (spaCy, mwparserfromhell) is imported inside the command: `wikiref` builds this parser on every call.

__all__ = ["add_psg2sum_parser", "run_psg2sum_command"]


def add_psg2sum_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``psg2sum`` on the ``wikiref`` command's subparsers (unset options take MiningConfig's defaults)."""
    parser = commands.add_parser(
        "psg2sum", help="mine PSG2SUM passage-summary pairs from pages-meta-history dumps -> Parquet dataset + card")
    parser.add_argument("dumps", nargs="+", metavar="HISTORY_DUMP", type=Path,
                        help="pages-meta-history dump(s): .xml, .xml.bz2 or .xml.gz (decompress .7z with 7z e -so)")
    parser.add_argument("--out", required=True, type=Path, help="output dataset folder")
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
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run_psg2sum_command)
    return parser


def run_psg2sum_command(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from ..wiki.dump import DumpError
    from .baselines import evaluate_baselines, format_table
    from .dataset import deduplicate, split_pairs, write_psg2sum_folder
    from .history import iter_histories
    from .mining import STAT_KEYS, MiningConfig, PairMiner

    options = {name: getattr(args, name) for name in ("min_score", "min_summary_words", "revert_window",
                                                      "max_rewrite_churn", "min_rewrite_passages")}
    try:
        config = MiningConfig(**{name: value for name, value in options.items() if value is not None})
    except ValueError as err:
        print(f"wikiref psg2sum: error: {err}", file=sys.stderr)
        return 2
    for path in args.dumps:
        if not path.is_file():
            print(f"wikiref psg2sum: error: {path}: no such dump file", file=sys.stderr)
            return 2
    miner = PairMiner(config)
    started = time.perf_counter()
    pairs = []
    bar = tqdm(desc="psg2sum", unit=" revisions", disable=args.no_progress, file=sys.stderr)
    try:
        for path in args.dumps:
            for pair in miner.mine(iter_histories(path, namespaces=config.namespaces), on_revision=bar.update):
                pairs.append(pair)
                bar.set_postfix(pages=miner.stats["pages"], pairs=len(pairs), refresh=False)
    except DumpError as err:
        print(f"wikiref psg2sum: error: {err}", file=sys.stderr)
        return 2
    finally:
        bar.close()
    pairs, duplicates = deduplicate(pairs)
    splits = split_pairs(pairs, seed=args.seed, dev_size=args.dev_size, test_size=args.test_size)
    counts = Counter({key: miner.stats[key] for key in STAT_KEYS})
    counts["duplicates"] += duplicates
    counts["pairs"] = len(pairs)
    table, scored_on = "", ""
    if not args.no_baselines and pairs:
        # the test split, as Table 4; a build too small to have one is scored on all its pairs (and says so)
        scored_on = "the test split" if splits["test"] else "all pairs (this build has no test split)"
        rows = [asdict(pair) for pair in (splits["test"] or pairs)]
        table = format_table(evaluate_baselines(rows, miner.pipeline))
    build = {"dumps": [path.name for path in args.dumps], "config": config.to_dict(), "counts": dict(counts),
             "pipeline": miner.pipeline.description,
             "baselines": f"Scored on {scored_on}.\n\n{table}" if table else "",
             "candidates_per_lambda": {f"{k:g}": v for k, v in miner.candidate_counts().items()}}
    sizes = write_psg2sum_folder(splits, args.out, build)
    (args.out / "build.json").write_text(json.dumps(build, indent=1, default=str), encoding="utf-8")
    elapsed = time.perf_counter() - started
    print(f"PSG2SUM: {miner.stats['pages']:,} pages, {miner.stats['revisions']:,} revisions, "
          f"{miner.stats['revision_pairs']:,} revision pairs in {elapsed:.1f}s")
    print(f"  skipped: {miner.stats['revisions_deleted']:,} deleted, {miner.stats['revisions_without_text']:,} "
          f"without text, {miner.stats['reverts']:,} reverts ({miner.stats['reverted_revisions']:,} revisions "
          f"undone), {miner.stats['rewrites']:,} rewrites, {miner.stats['pages_failed']:,} pages failed")
    print(f"  additions: {miner.stats['added_sentences']:,} lead sentences, {miner.stats['added_passages']:,} "
          f"passages ({miner.stats['readded_sentences'] + miner.stats['readded_passages']:,} re-added dropped)")
    per_lambda = ", ".join(f"λ≥{k:g}: {v:,}" for k, v in miner.candidate_counts().items())
    print(f"  candidate pairs: {miner.stats['candidate_pairs']:,} ({per_lambda})")
    print(f"  kept at λ={config.min_score:g}: {len(pairs):,} after {counts['duplicates']:,} duplicates -> "
          + ", ".join(f"{name} {size:,}" for name, size in sizes.items()))
    if table:
        print(f"Baselines on {scored_on} (ROUGE, %, ±95% CI half-width):")
        print(table)
    if pairs:
        print(f"Dataset folder: {args.out} (load with datasets.load_dataset({str(args.out)!r}))")
    else:
        print(f"Dataset folder: {args.out} holds no pair (an empty, typed train file that datasets.load_dataset "
              "cannot read: datasets does not load empty Parquet files); try a lower --min-score or more history")
    return 0
