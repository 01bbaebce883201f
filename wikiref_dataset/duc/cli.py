"""``wikiref duc convert``: convert the DUC 2005-2007 folders NIST distributes into `datasets` folders.

``wikiref duc convert NIST_DIR --year 2006 --out duc2006`` writes one year as a `datasets` folder
(``wikiref_dataset.duc.reader``). :func:`add_duc_parser` registers ``duc`` with its ``convert`` subcommand and returns the set
of ``duc`` subcommands, where the model side adds ``evaluate`` (``trainer_scripts/cli.py``: this package imports
neither the model nor the training scripts). ``func`` returns the exit status 0; bad input raises (``DucError``,
``OSError``), which the command's dispatch prints as one line naming the file, exit status 2.
"""

from __future__ import annotations

import argparse

from ..command import add_subcommand, warn

# The reader (datasets, spaCy) is imported inside the commands: the `wikiref` command builds this parser on every call.
DUC_YEARS = (2005, 2006, 2007)

__all__ = ["add_duc_parser", "run_convert"]


def run_convert(args: argparse.Namespace) -> int:
    """``wikiref duc convert``: one year → ``--out`` (Parquet + dataset card); prints the counts."""
    from .reader import convert_duc

    stats = convert_duc(args.nist_dir, args.year, args.out, topics=args.topics, docs=args.docs, models=args.models,
                        progress=not args.quiet, overwrite=args.overwrite)
    print(stats.summary())
    if not stats.references:  # converted, but no system can be scored on it: never a quiet success
        searched = ", ".join(args.models) if args.models else "every ROUGE/models folder under the NIST folder"
        warn(args, f"DUC {args.year}: no reference summary found (searched {searched}); the card says references: 0")
    print(f"wrote {args.out} (load with datasets.load_dataset({str(args.out)!r}, split='test'))")
    return 0


def add_duc_parser(commands: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Register ``duc`` with its ``convert`` subcommand on a subparsers object; returns the ``duc`` subcommands, which
    the top-level ``wikiref`` command extends with ``evaluate``."""
    duc = commands.add_parser("duc", help="DUC 2005-2007: convert NIST's folders, evaluate systems (Table VI)",
                              description="DUC 2005-2007: convert the folders NIST distributes, evaluate systems.")
    actions = duc.add_subparsers(dest="duc_command", required=True)

    convert = add_subcommand(
        actions, "convert", help="convert one DUC year to a datasets folder",
        description="Read one DUC year (2005, 2006 or 2007) from the folders NIST distributes (the topics SGML file, "
                    "the per-topic document folders, ROUGE/models) and write it as a `datasets` folder: Parquet with "
                    "a dataset card, published whole at the end, loadable with datasets.load_dataset(DIR, "
                    "split='test'). A year without reference summaries still converts, with a warning. No NIST data "
                    "ships with the project.",
        example="wikiref duc convert /data/DUC2006 --year 2006 --out duc/2006", func=run_convert, writes=("out",))
    convert.add_argument("nist_dir", nargs="?", help="folder holding NIST's unpacked DUC archives (searched)")
    convert.add_argument("--year", type=int, required=True, choices=DUC_YEARS, help="the DUC year to convert")
    convert.add_argument("--out", required=True, metavar="DIR", help="output folder (Parquet + README.md)")
    convert.add_argument("--topics", metavar="FILE", help="the topics file, if not under NIST_DIR")
    convert.add_argument("--docs", metavar="DIR", help="the folder of per-topic document folders, if not found")
    convert.add_argument("--models", nargs="+", metavar="DIR",
                         help="reference summary folders (default: every ROUGE/models under NIST_DIR)")
    convert.add_argument("--overwrite", action="store_true",
                         help="write into a folder holding something other than a converted DUC year (files this "
                              "project did not write are kept)")
    return actions
