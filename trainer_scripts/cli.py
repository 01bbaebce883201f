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
    qfs evaluate  the same on a converted QMSum, SQuALITY or Debatepedia split, with its own scoring
                  (``evaluate_qfs.py``);
    experiments   the paper's tables as cached runs of the training scripts, beside the published numbers
                  (``run_experiments.py``);
    rescore       summaries chosen again from the sentence scores fine-tuning units saved (another selection rule,
                  the seeds' scores averaged, a signal mixed in) and scored, in seconds
                  (``experiments/rescore.py``);
    summarize     an extractive query-focused summary of text files with a Q-BERT model (``summarize_cli.py``).

Every subcommand follows one convention (``wikiref_dataset.command``): one-paragraph ``--help`` with an example,
``--out`` for what it writes, ``--quiet``/``-v``/``--debug``, one-line errors ``wikiref <command>: error: ...`` with
exit status 2 (bad command line or input), 1 (a failed run) or 130 (interrupted).

Building the parser imports only the standard library and each part's parser module: ``wikiref --help`` stays fast;
every subcommand imports what it needs when it runs. ``python -m wikiref_dataset.cli`` runs the data side alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from wikiref_dataset.cli import add_data_commands
from wikiref_dataset.command import ArgumentParser, CliError, add_subcommand, dispatch

from .app.cli import add_app_parser
from .dataclass_options import add_arguments as add_evaluate_arguments
from .experiments import add_arguments as add_experiments_arguments
from .experiments import keep_unknown_options
from .summarize_cli import add_summarize_parser

__all__ = ["add_demo_parser", "add_duc_evaluate_parser", "add_experiments_parser", "add_qfs_evaluate_parser",
           "add_rescore_parser", "build_parser", "main"]


def run_demo(args: argparse.Namespace) -> int:
    """``wikiref demo``: the whole chain on the embedded sample (``demo.py``)."""
    from pathlib import Path

    from .demo import run_demo as run_chain

    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise CliError(f"{args.out}: exists and is not a folder; choose another output folder")
    try:
        run_chain(args.out, progress=not args.quiet)
    except RuntimeError as error:
        raise CliError(str(error)) from None
    return 0


def run_duc_evaluate(args: argparse.Namespace) -> int:
    """``wikiref duc evaluate``: see ``evaluate_duc.py`` (its errors are the command's: one line, exit 2)."""
    from .duc_evaluation import evaluate, to_arguments

    return evaluate(to_arguments(args))


def run_experiments(args: argparse.Namespace) -> int:
    """``wikiref experiments``: see ``run_experiments.py``. Bad input is a one-line error (exit 2); units that failed
    are one line too (exit 1), after the results of the others are written."""
    from wikiref_dataset.command import RunFailed

    from .experiments import UnitsFailed, to_arguments
    from .experiments import run_experiments as run_units

    try:
        return run_units(*to_arguments(args))
    except UnitsFailed as error:
        raise RunFailed(str(error)) from None


def add_demo_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``demo`` on the ``wikiref`` subcommands."""
    demo = add_subcommand(
        commands, "demo", help="the whole chain on the embedded sample: build, train, evaluate, card",
        description="Run the whole chain on the embedded sample, about a minute on 2 CPU cores: build WikiRef from the "
                    "shipped dump and WARC, pre-train Q-BERT for a few steps, fine-tune a 10% subnetwork on three "
                    "small DUC-style clusters, summarize one, score the model and the baselines with the official "
                    "DUC metric and render the model card. The numbers measure the plumbing, not the method.",
        example="wikiref demo --out outputs", func=run_demo, resumable=True, writes=("out",),
        quiet_help="no progress bars on stderr (transformers' \"Loading weights\" and \"Writing model shards\", "
                   "datasets' processing); the steps' output and errors are still printed")
    demo.add_argument("--out", default="outputs", metavar="DIR",
                      help="folder for everything the demo writes (default outputs)")
    return demo


def add_duc_evaluate_parser(duc_commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``evaluate`` on the ``duc`` subcommands (those :func:`wikiref_dataset.duc.cli.add_duc_parser` returns),
    with the options of ``evaluate_duc.py``."""
    evaluate = add_subcommand(
        duc_commands, "evaluate", help="score baselines or system summaries with the official settings",
        description="Score systems on converted DUC years (folders written by `wikiref duc convert`) with ROUGE-1, "
                    "ROUGE-2 and ROUGE-SU4 recall under the official DUC settings, through the project's `evaluate` "
                    "module, and print a table shaped like Table VI of Zhu et al. (2022) with 95% intervals. The "
                    "systems: the LEAD, QUERY-SIM and ORACLE baselines, your summaries (JSON lines {topic_id, "
                    "summary} or a DUC peer folder), or a Q-BERT model folder (alone or beside the baselines). Each "
                    "row names the rule its sentences were chosen with: --selection gives the rules (duc, the "
                    "paper's greedy one and the baselines' own; mmr; ilp), by default the baselines' own and a "
                    "model's, so that the baselines also stand under the model's rule (QUERY-SIM (ILP)). --out "
                    "writes every score (0-1) and each row's rule as JSON.",
        example=["wikiref duc evaluate --dataset duc/2005 --dataset duc/2006 --dataset duc/2007 --baseline all "
                 "--out table6.json",
                 "wikiref duc evaluate --dataset duc/2006 --baseline all --model runs/qbert",
                 "wikiref duc evaluate --dataset duc/2006 --summaries my_system.jsonl"],
        func=run_duc_evaluate, quiet=False)
    add_evaluate_arguments(evaluate)
    return evaluate


def run_qfs_evaluate(args: argparse.Namespace) -> int:
    """``wikiref qfs evaluate``: see ``evaluate_qfs.py`` (its errors are the command's: one line, exit 2)."""
    from .qfs_evaluation import evaluate, to_arguments

    return evaluate(to_arguments(args))


def add_qfs_evaluate_parser(qfs_commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``evaluate`` on the ``qfs`` subcommands (those :func:`wikiref_dataset.qfs.cli.add_qfs_parser`
    returns), with the options of ``evaluate_qfs.py``."""
    from .dataclass_options import add_arguments
    from .qfs_evaluation import QfsEvaluateArguments

    evaluate = add_subcommand(
        qfs_commands, "evaluate", help="score baselines, summaries or a model as the benchmark's papers do",
        description="Score systems on one split of a converted benchmark (a folder written by `wikiref qfs "
                    "convert`) with the benchmark's own scoring: ROUGE-1, ROUGE-2 and ROUGE-L F1 (or recall), its "
                    "multi-reference rule, on the project's ROUGE-1.5.5 engine, with 95% intervals. The systems: "
                    "the LEAD, QUERY-SIM and ORACLE baselines within the benchmark's word budget, your summaries "
                    "(JSON lines {topic_id, summary}), or a Q-BERT model folder (alone or beside the baselines), "
                    "under the rules of --selection as `wikiref duc evaluate` takes them. --out writes every score "
                    "(0-1) and each row's rule as JSON under the keys `wikiref duc evaluate` uses.",
        example=["wikiref qfs evaluate --dataset qfs/qmsum --baseline all --out qmsum.json",
                 "wikiref qfs evaluate --dataset qfs/squality --split validation --summaries mine.jsonl"],
        func=run_qfs_evaluate, quiet=False)
    add_arguments(evaluate, QfsEvaluateArguments)
    return evaluate


def add_experiments_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``experiments`` on the ``wikiref`` subcommands, with the options of ``run_experiments.py``; options it
    does not know are the training scripts' and go to every training unit."""
    experiments = add_subcommand(
        commands, "experiments", help="run the paper's tables as cached units and compare with the published numbers",
        description="Run the experiments of Zhu et al. (2022) on converted DUC years (and a WikiRef folder for the "
                    "rows that pre-train): the rows of Tables VI, IV, VIII and IX and the curves of Figs. 4 and 6, "
                    "each a recipe of pretrain_wikiref.py, finetune_duc.py and evaluate_duc.py, run for every fold "
                    "(each year tested once, or cluster folds of a single year) and seed. Every (row, fold, seed) is "
                    "a cached unit under --out keyed by its options and inputs: a rerun skips finished units and "
                    "resumes an interrupted run. Writes results.md (the tables with the published numbers beside and "
                    "what differs), results.json and figures. Options it does not know (--max_steps, --bf16, ...) go "
                    "to every training unit.",
        example=["wikiref experiments --duc_dirs duc/2005 duc/2006 duc/2007 --wikiref outputs/wikiref --rows table6 "
                 "table9 --out experiments --bf16 true",
                 "wikiref experiments --duc_dirs duc/2006 --rows bert qbert --folds 5 --max_steps 200 --out kfold"],
        func=run_experiments, resumable=True, quiet=False)
    add_experiments_arguments(experiments)
    keep_unknown_options(experiments)
    return experiments


def run_rescore(args: argparse.Namespace) -> int:
    """``wikiref rescore``: see ``experiments/rescore.py`` (bad input is one line, exit 2)."""
    from wikiref_dataset.selection import check_settings, rule_settings

    from .experiments.rescore import Mix, Rule, rescore, to_markdown, write_outputs

    settings = {"redundancy": args.redundancy, "tradeoff": args.tradeoff, "candidates": args.candidates,
                "unigram_weight": args.unigram_weight, "document_weight": args.document_weight,
                "sentence_weight": args.sentence_weight}
    try:
        check_settings(**settings)
    except ValueError as error:
        raise CliError(f"--{error}") from None
    rules = [Rule(name, rule_settings(name, **settings)) for name in dict.fromkeys(args.selection)]
    mixes = list(dict.fromkeys(Mix.parse(text) for text in args.mix))
    from wikiref_dataset.baselines import baseline_key

    baselines = [] if args.baselines == ["none"] else list(dict.fromkeys(map(baseline_key, args.baselines)))
    unknown = [name for name in baselines if name not in ("query-sim", "lead")]
    if unknown:
        raise CliError(f"--baselines: unknown {', '.join(map(repr, unknown))}: choose from query-sim, lead, or none")
    result = rescore(args.runs, args.duc_dirs, rules, mixes, average_seeds=args.average_seeds,
                     progress=not args.quiet, baselines=baselines)
    table = to_markdown(result)
    print(table, end="")
    if args.out:
        write_outputs(args.out, result, table)
    return 0


def add_rescore_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``rescore`` on the ``wikiref`` subcommands."""
    rescore = add_subcommand(
        commands, "rescore", help="choose summaries again from saved sentence scores and score them, in seconds",
        description="Choose every test cluster's summary again from the sentence scores that fine-tuning units saved "
                    "(wikiref experiments' units, finetune_duc.py's --output_dir: sentence_scores.jsonl), with other "
                    "selection rules, the seeds' scores averaged or another signal mixed in, and score the summaries "
                    "with the official DUC settings: the levers that change no weight, measured without retraining. "
                    "Units that differ only in fold and seed are one group; each seed's folds are pooled and scored "
                    "per year. Under each rule, QUERY-SIM and LEAD chosen by the same rule stand beside the model "
                    "(QUERY-SIM (ILP)). "
                    "Prints a table (mean ± std over the seeds [95% interval of the median seed's run]); --out writes "
                    "rescore.md and rescore.json.",
        example=["wikiref rescore runs --duc_dirs duc/2006 --selection duc mmr ilp --average_seeds",
                 "wikiref rescore runs/units --duc_dirs duc/2006 --selection ilp --mix none query_sim:0.2 "
                 "position:0.1 --out rescored"],
        func=run_rescore, writes=("out",),
        quiet_help="no 'rescoring' lines or progress bar on stderr; the table and errors are still printed")
    rescore.add_argument("runs", nargs="+", metavar="RUN",
                         help="a wikiref experiments --out folder, its units/ folder, unit folders, or finetune_duc.py "
                              "--output_dir folders (or a folder holding them)")
    rescore.add_argument("--duc_dirs", nargs="+", metavar="DIR",
                         help="the converted DUC years the units tested on (default: the folders their command names)")
    rules = ("duc", "mmr", "ilp")  # selection.CLUSTER_RULES, written here for a parser without the ROUGE engine's import
    rescore.add_argument("--selection", nargs="+", choices=rules, default=list(rules),
                         metavar="RULE", help="rules to compare: duc (the paper's greedy rule), mmr, ilp (default: all)")
    rescore.add_argument("--redundancy", type=float, help="duc rule: the largest share of a sentence's bigrams already "
                                                          "in the summary (0.5)")
    rescore.add_argument("--tradeoff", type=float, help="mmr rule: weight of the score against redundancy (0.7)")
    rescore.add_argument("--candidates", type=int, help="ilp rule: the best-scored sentences it chooses from (300)")
    rescore.add_argument("--unigram_weight", type=float,
                         help="ilp rule: unigram concepts beside the bigrams, weighted this much (0: bigrams only)")
    rescore.add_argument("--document_weight", type=float,
                         help="ilp rule: adds this times the documents holding a concept to its weight (0)")
    rescore.add_argument("--sentence_weight", type=float,
                         help="ilp rule: a chosen sentence's own scaled score, this much, beside its concepts (0)")
    rescore.add_argument("--mix", nargs="+", default=["none"], metavar="MIX",
                         help="none, or SIGNAL:WEIGHT added to the scores (each min-max scaled in its cluster); "
                              "signals: position (1/(1+index in the document)), query_sim (TF-IDF cosine to the "
                              "query). Default: none")
    rescore.add_argument("--average_seeds", action="store_true",
                         help="also choose summaries from the seeds' scores averaged sentence by sentence")
    rescore.add_argument("--baselines", nargs="+", default=["query-sim", "lead"], metavar="NAME",
                         help="baselines shown under each rule, chosen by that rule with the same settings: "
                              "query-sim, lead, or none (default: query-sim lead)")
    rescore.add_argument("--out", metavar="DIR", help="folder for rescore.md and rescore.json")
    return rescore


def build_parser() -> argparse.ArgumentParser:
    """The ``wikiref`` parser: the data side's subcommands plus the model side's."""
    parser = ArgumentParser(prog="wikiref", description="Query-focused summarization toolkit: build the datasets, "
                                                        "train and run Q-BERT, evaluate on DUC.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_demo_parser(commands)
    nested = add_data_commands(commands)
    add_duc_evaluate_parser(nested["duc"])
    add_qfs_evaluate_parser(nested["qfs"])
    add_experiments_parser(commands)
    add_rescore_parser(commands)
    add_summarize_parser(commands)
    add_app_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return dispatch(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
