"""Score extractive summaries on converted DUC years with the official ROUGE settings and print Table VI.

Usage (also available as ``wikiref duc evaluate``, with the same options: :class:`EvaluateArguments`, parsed by
`HfArgumentParser` like the training scripts' options)::

    python trainer_scripts/evaluate_duc.py --dataset duc2006 --baseline lead query-sim oracle --out results.json
    python trainer_scripts/evaluate_duc.py --dataset duc2005 --dataset duc2006 --dataset duc2007 --baseline all
    python trainer_scripts/evaluate_duc.py --dataset duc2006 --summaries runs/qbert.jsonl
    python trainer_scripts/evaluate_duc.py --dataset duc2006 --summaries NISTeval/ROUGE/peers
    python trainer_scripts/evaluate_duc.py --dataset duc2006 --baseline query-sim lead --selection duc ilp
    python trainer_scripts/evaluate_duc.py --dataset duc2006 --baseline all --model runs/qbert

Inputs: one or more folders written by ``wikiref duc convert`` (one per year), and the systems to score — the
baselines of Zhu et al. (2022) (``wikiref_dataset.baselines``), system summaries (JSON lines
``{"topic_id": …, "summary": str or [sentences], "system"?: name}``, or a folder in DUC peer-file layout
``D0601.M.250.A.<system id>``, one row per system id), or a saved Q-BERT model folder (run through the
``"query-focused-summarization"`` pipeline with its own cluster rule), alone or beside the baselines.

Rules: LEAD's, QUERY-SIM's and the model's sentences are chosen by each rule of ``--selection`` (``duc``, the paper's
greedy rule and the baselines' own; ``mmr``; ``ilp``), each rule its own rows, named by
``wikiref_dataset.baselines.system_name``: ``QUERY-SIM`` under the greedy rule, ``QUERY-SIM (ILP)`` under ILP, the
model's folder name under its own rule and ``NAME (greedy)`` under the paper's. By default the baselines keep their
own rule and a model adds its own, for itself and the baselines: the same rule for every system. ORACLE has no rule.
The table's Rule column and the JSON's ``rules`` name each row's rule.

Scores: ROUGE-1, ROUGE-2 and ROUGE-SU4 recall with ``-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250``,
computed by the project's ROUGE engine exactly as its `evaluate` module (``evaluate.load(DUC_ROUGE_PATH)``) computes
them (:class:`DucRouge`). Scoring baselines or summaries imports neither torch nor transformers (nor `evaluate` or
`datasets`, which would import them): about a second; only ``--model`` loads the model side. The table prints them ×100 with
two decimals, as Zhu et al.'s (2022) Table VI does, with the 95 % bootstrap interval in brackets; the JSON output keeps
the metric's own 0-1 values (recall, precision, F and their intervals). Clusters without reference summaries cannot be
scored and are left out (with a warning). A system with no summary for any topic of a year gets ``-`` for that year (as
Table VI prints for systems not run on a year); one that covers only some topics is an error.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import Any

from trainer_scripts.duc_evaluation import EvaluateArguments, EvaluationError, evaluate, to_arguments


def run(args: argparse.Namespace | EvaluateArguments) -> int:
    """Run an evaluation from parsed arguments (the script's entry); returns the exit status (2 on bad input, with a
    one-line error ``evaluate_duc.py: error: ...``). ``wikiref duc evaluate`` calls :func:`evaluate`."""
    try:
        return evaluate(to_arguments(args))
    except (EvaluationError, OSError) as error:
        print(f"evaluate_duc.py: error: {error}", file=sys.stderr)
        return 2


def build_parser() -> Any:
    """The script's `HfArgumentParser` over :class:`EvaluateArguments` (a bad command line: one line, exit 2)."""
    from transformers import HfArgumentParser

    from wikiref_dataset.command import one_line_errors

    return one_line_errors(HfArgumentParser(EvaluateArguments, prog="evaluate_duc.py",
                                            description=__doc__.split("\n", 1)[0]))


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = build_parser()
    try:
        (arguments,) = parser.parse_args_into_dataclasses(args=argv)
    except ValueError as error:  # options HfArgumentParser did not use
        parser.error(str(error))
    return run(arguments)


if __name__ == "__main__":
    sys.exit(main())
