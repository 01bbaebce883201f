"""``wikiref build``: the whole WikiRef build (statements -> documents -> statistics -> curation -> Parquet).

    wikiref build --dump DUMP... --warc FILE... --out DIR [--workers N] [--executor local|slurm|ray]

Registered by :func:`add_build_parser`; also runnable as ``python -m wikiref_dataset.build_cli``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

__all__ = ["add_build_parser", "main", "run_build_command"]


def run_build_command(args: argparse.Namespace) -> int:
    from .curation import BOUNDED_QUANTITIES, CurationConfig
    from .pipeline import BuildConfig, run_build

    try:
        curation = CurationConfig(
            min_unigram_recall=args.min_unigram_recall, low_percentile=args.percentiles[0],
            high_percentile=args.percentiles[1], bounded=tuple(args.bounded or BOUNDED_QUANTITIES),
            oracle_max_sentences=args.oracle_max_sentences, min_oracle_score=args.min_oracle_score, seed=args.seed,
            dev_size=args.dev_size, test_size=args.test_size)
        config = BuildConfig(dumps=args.dump, warcs=args.warc or [], output_dir=args.out, workers=args.workers,
                             shards=args.shards, executor=args.executor,
                             executor_options=json.loads(args.executor_options) if args.executor_options else {},
                             curation=curation, work_dir=args.work, overwrite=args.overwrite)
        summary = run_build(config, progress=not args.quiet)
    except (ValueError, FileNotFoundError) as err:
        print(f"wikiref build: error: {err}", file=sys.stderr)
        return 2
    except RuntimeError as err:  # a stage whose tasks did not all finish (a cluster task failed)
        print(f"wikiref build: error: {err}; rerun the same command to redo the unfinished tasks", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"wikiref build: interrupted; {args.out} is unchanged, run the same command to resume",
              file=sys.stderr)
        return 130
    if summary is None:  # cluster jobs were submitted (see run_build)
        return 0
    print(summary.format())
    if summary.empty_reason:
        print(f"wikiref build: error: {summary.empty_reason}; nothing was published to {args.out}", file=sys.stderr)
        return 1
    return 0


def add_build_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``build`` on the ``wikiref`` subcommands."""
    parser = commands.add_parser("build", help="build WikiRef: dump + WARC files -> Parquet dataset with card")
    parser.add_argument("--dump", nargs="+", required=True, help="pages-articles dump file(s)")
    parser.add_argument("--warc", nargs="*", help="WARC file(s) holding the cited pages")
    parser.add_argument("--out", required=True, help="output folder: published whole at the end of the build")
    parser.add_argument("--work", help="intermediate, resumable state (default: OUT.work beside the output folder)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into an output folder that holds something other than a previous WikiRef build "
                             "(files this project did not write are kept)")
    parser.add_argument("--workers", type=int, default=1, help="tasks run at once (default 1)")
    parser.add_argument("--shards", type=int, default=4, help="tasks of stages 2-4; fixes the output (default 4)")
    parser.add_argument("--executor", choices=("local", "slurm", "ray"), default="local")
    parser.add_argument("--executor-options", help='JSON for the cluster executor, e.g. \'{"partition": "cpu"}\'')
    parser.add_argument("--min-unigram-recall", type=float, default=0.5)
    parser.add_argument("--percentiles", type=float, nargs=2, default=(5.0, 95.0), metavar=("LOW", "HIGH"))
    parser.add_argument("--bounded", nargs="*", help="quantities bounded by rule 2 (default: all four)")
    parser.add_argument("--oracle-max-sentences", type=int, default=5)
    parser.add_argument("--min-oracle-score", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--dev-size", type=int, help="default: 12,000 scaled to the build's size")
    parser.add_argument("--test-size", type=int, help="default: 12,000 scaled to the build's size")
    parser.add_argument("--quiet", action="store_true", help="no stage headers")
    parser.set_defaults(func=run_build_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wikiref")
    add_build_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["build", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
