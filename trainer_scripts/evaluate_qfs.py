"""Score extractive summaries on a converted QMSum, SQuALITY or Debatepedia split, as the benchmark's papers score it.

Usage (also ``wikiref qfs evaluate``, with the same options: :class:`QfsEvaluateArguments`)::

    python trainer_scripts/evaluate_qfs.py --dataset qfs/qmsum --baseline all --out qmsum.json
    python trainer_scripts/evaluate_qfs.py --dataset qfs/squality --split validation --summaries mine.jsonl
    python trainer_scripts/evaluate_qfs.py --dataset qfs/qmsum --model runs/qbert-qmsum

Inputs: a folder written by ``wikiref qfs convert`` and one split of it (default ``validation``), and the systems:
the LEAD, QUERY-SIM and ORACLE baselines (``wikiref_dataset.baselines``, within the benchmark's word budget; ORACLE's
candidates are the sentences cut to the budget, so that a sentence longer than it can still be chosen), system
summaries (JSON lines ``{"topic_id": …, "summary": str or [sentences], "system"?: name}``), or a saved Q-BERT model
folder (the ``"query-focused-summarization"`` pipeline with its own cluster rule and the benchmark's budget), alone or
beside the baselines. ``--selection`` names the rules the baselines' and the model's sentences are chosen with, each
its own rows (``QUERY-SIM (ILP)``), as ``wikiref duc evaluate`` takes it; by default the baselines keep the paper's
greedy rule and a model adds its own.

Scores: the benchmark's own scoring (:mod:`wikiref_dataset.qfs.scoring`: ROUGE-1, ROUGE-2 and ROUGE-L, F1 unless
``--value recall``, the benchmark's multi-reference rule) on the project's ROUGE engine, with ROUGE-1.5.5's 95%
bootstrap interval. The table prints ×100 with two decimals and the interval in brackets; ``--out`` writes JSON
with, per system, every value and interval under the keys ``wikiref duc evaluate`` uses (``rouge_1_f``,
``rouge_1_f_ci_low``, ..., 0-1 scale). Summaries that the command generates are cut to the budget; summaries given
with ``--summaries`` are scored as they are (the benchmarks' scoring has no length limit). Scoring baselines or
summaries imports neither torch nor transformers.
"""


from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from trainer_scripts.dataclass_options import add_arguments
from trainer_scripts.duc_evaluation import EvaluationError
from trainer_scripts.qfs_evaluation import QfsEvaluateArguments, evaluate, to_arguments


def main(argv: Sequence[str] | None = None) -> int:
    """The script: the same options as ``wikiref qfs evaluate`` (one-line errors, exit 2)."""
    from wikiref_dataset.command import ArgumentParser

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = ArgumentParser(prog="evaluate_qfs.py", description=__doc__.split("\n", 1)[0])
    add_arguments(parser, QfsEvaluateArguments, flags=False)  # parsed as HfArgumentParser parses evaluate_duc.py
    arguments = to_arguments(parser.parse_args(argv))
    try:
        return evaluate(arguments)
    except (EvaluationError, OSError) as error:
        print(f"evaluate_qfs.py: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
