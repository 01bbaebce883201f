"""The ``wikiref`` command: one entry point, at the top of the import graph, composed from each package's subcommands.

Data side (``wikiref_dataset.cli.add_data_commands``):
    build       the whole WikiRef build: statements, documents, curation, splits, Parquet + card;
    rouge       score summaries with ROUGE-1.5.5 semantics from a JSON-lines file or a ROUGE file list;
    statements  WikiRef stage 1: statements with their first citation from Wikipedia dumps;
    documents   WikiRef stage 2: the cited pages from WARC archives or HTTP;
    duc convert DUC 2005-2007: convert the NIST folders to `datasets` folders;
    psg2sum     passage-summary pairs mined from revision histories;
    aquamuse    query-based multi-document examples mined from Natural Questions + a web corpus.
Model side (this package):
    demo          the whole chain on the embedded sample: build WikiRef, pre-train and fine-tune Q-BERT, summarize,
                  evaluate with the DUC metric, render the model card (``demo.py``);
    duc evaluate  score baselines, summaries or a Q-BERT model on converted DUC years (``evaluate_duc.py``);
    summarize     an extractive query-focused summary of text files with a Q-BERT model (``summarize_cli.py``).

Building the parser imports only the standard library and each part's parser module: ``wikiref --help`` stays fast;
every subcommand imports what it needs when it runs. ``python -m wikiref_dataset.cli`` runs the data side alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from wikiref_dataset.cli import CliError, add_data_commands, dispatch

from .evaluate_duc import add_arguments as add_evaluate_arguments
from .summarize_cli import add_summarize_parser

__all__ = ["add_duc_evaluate_parser", "add_demo_parser", "build_parser", "main"]


def run_demo(args: argparse.Namespace) -> int:
    """``wikiref demo``: the whole chain on the embedded sample (``demo.py``)."""
    from .demo import run_demo as run_chain

    try:
        run_chain(args.out)
    except RuntimeError as error:
        raise CliError(str(error)) from None
    return 0


def run_duc_evaluate(args: argparse.Namespace) -> int:
    """``wikiref duc evaluate``: see ``evaluate_duc.py``."""
    from wikiref_dataset.duc_cli import log_warnings

    from .evaluate_duc import run

    log_warnings()
    return run(args)


def add_demo_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``demo`` on the ``wikiref`` subcommands."""
    demo = commands.add_parser("demo", help="the whole chain on the embedded sample: build, train, evaluate, card")
    demo.add_argument("--out", default="outputs", help="folder for everything the demo writes (default outputs)")
    demo.set_defaults(func=run_demo)
    return demo


def add_duc_evaluate_parser(duc_commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``evaluate`` on the ``duc`` subcommands (those :func:`wikiref_dataset.duc_cli.add_duc_parser` returns),
    with the options of ``evaluate_duc.py``."""
    evaluate = duc_commands.add_parser("evaluate", help="score baselines or system summaries with the official settings",
                                       description="Score systems on converted DUC years with ROUGE-1/2/SU4 recall "
                                                   "(official DUC settings) and print a table shaped like Table VI.")
    add_evaluate_arguments(evaluate)
    evaluate.set_defaults(func=run_duc_evaluate)
    return evaluate


def build_parser() -> argparse.ArgumentParser:
    """The ``wikiref`` parser: the data side's subcommands plus the model side's."""
    parser = argparse.ArgumentParser(prog="wikiref", description="Query-focused summarization toolkit.")
    commands = parser.add_subparsers(dest="command", required=True)
    add_demo_parser(commands)
    nested = add_data_commands(commands)
    add_duc_evaluate_parser(nested["duc"])
    add_summarize_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return dispatch(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
