"""``wikiref qfs convert``: convert the QMSum, SQuALITY or Debatepedia release into a `datasets` folder.

``wikiref qfs convert qmsum QMSum/ --out qmsum`` reads every split of the release folder as published and writes
one `datasets` folder (:mod:`wikiref_dataset.qfs`). :func:`add_qfs_parser` registers ``qfs`` with its ``convert``
subcommand and returns the ``qfs`` subcommands, where the model side adds ``evaluate``. Bad input raises
(``QfsError``, ``OSError``), which the command's dispatch prints as one line, exit status 2.
"""

from __future__ import annotations

import argparse

from ..command import add_subcommand

# The readers (datasets, spaCy) are imported inside the command: the `wikiref` command builds this parser every call.
BENCHMARKS = ("qmsum", "squality", "debatepedia")
SPLITS = ("train", "validation", "test")

__all__ = ["add_qfs_parser", "run_convert"]


def run_convert(args: argparse.Namespace) -> int:
    """``wikiref qfs convert``: one release → ``--out`` (Parquet per split + dataset card); prints the counts."""
    from . import convert_benchmark
    from .common import QfsError

    options = {}
    if args.keep_markup:
        if args.benchmark != "qmsum":
            raise QfsError("--keep-markup applies to qmsum only (its transcribers' tags)")
        options["keep_markup"] = True
    if args.version:
        if args.benchmark != "squality":
            raise QfsError("--version applies to squality only (its data/v<version> folders)")
        options["version"] = args.version
    stats = convert_benchmark(args.benchmark, args.release, args.out, splits=args.split, progress=not args.quiet,
                              overwrite=args.overwrite, **options)
    print(stats.summary())
    first = next(split for split in SPLITS if split in stats.rows)
    print(f"wrote {args.out} (load with datasets.load_dataset({str(args.out)!r}, split={first!r}))")
    return 0


def add_qfs_parser(commands: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Register ``qfs`` with its ``convert`` subcommand; returns the ``qfs`` subcommands (the model side adds
    ``evaluate``)."""
    qfs = commands.add_parser("qfs", help="QMSum, SQuALITY, Debatepedia: convert the releases, evaluate systems",
                              description="Query-focused summarization benchmarks beyond DUC: convert the releases "
                                          "as published, evaluate systems with each benchmark's scoring.")
    actions = qfs.add_subparsers(dest="qfs_command", required=True)
    convert = add_subcommand(
        actions, "convert", help="convert a benchmark release to a datasets folder",
        description="Read a QMSum, SQuALITY or Debatepedia release folder as its authors publish it (the folder "
                    "holding its data/) and write a `datasets` folder with one split per released split (train, "
                    "validation, test), loadable with datasets.load_dataset(DIR). Rows have the shape of a "
                    "converted DUC year (query, documents split into sentences, references) plus the benchmark's own "
                    "fields; malformed records are counted and named. No benchmark data ships with the project.",
        example=["wikiref qfs convert qmsum QMSum/ --out qfs/qmsum",
                 "wikiref qfs convert squality SQuALITY/ --out qfs/squality --split validation"],
        func=run_convert, writes=("out",))
    convert.add_argument("benchmark", choices=BENCHMARKS, help="which benchmark the release is")
    convert.add_argument("release", help="the release folder (the one holding data/)")
    convert.add_argument("--out", required=True, metavar="DIR", help="output folder (Parquet per split + README.md)")
    convert.add_argument("--split", action="append", choices=SPLITS,
                         help="convert only this split (repeat for several; default: every split in the release)")
    convert.add_argument("--keep-markup", action="store_true",
                         help="qmsum: keep the transcribers' tags ({disfmarker}, {vocalsound}, ...) and underscored "
                              "acronyms (T_V_) as released")
    convert.add_argument("--version", metavar="VERSION",
                         help="squality: the data/<version> folder to read, e.g. v1-3 (default: the newest)")
    convert.add_argument("--overwrite", action="store_true",
                         help="write into a folder holding something other than a converted benchmark (files this "
                              "project did not write are kept)")
    return actions
