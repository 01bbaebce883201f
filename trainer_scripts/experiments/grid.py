"""``make grid``: the default recipe's DUC grid (seeds 42, 43 and 44 × 5 cluster folds, 15 fine-tuning units) with the
CPU setting, in one command that resumes and ends with one line:

    grid: ROUGE-1 m ± sd, ROUGE-2 m ± sd, 15 units, T s

It is ``wikiref experiments --duc_dirs DUC --folds 5 --rows qbert --seeds 42 43 44 --baselines false --keep_models
false --frozen_prefix_layers K`` (and any other option given, for the units), so the folder is an experiments folder
like any other (``results.md``, ``units/``, ``wikiref rescore`` reads it) and a second run into the same folder runs
only the units that did not finish. The means and standard deviations are over the seeds, each seed's folds pooled
(ROUGE recall ×100, the official DUC settings); T is this command's wall time.

Why every layer (``all``, only the pooling and the head train) by default: ``benchmarks/README.md`` ("Experiments in
minutes on a CPU") measured the grid on the 2-core machine with the prefix at every layer and at all but the last,
against full fine-tuning. Every layer frozen takes about 7 minutes (about 27 with the last layer trained, hours for
full fine-tuning) at about half a ROUGE-2 point below full fine-tuning (0.29 with the last layer trained): a screen
for the levers, whose winners are confirmed by fine-tuning more of the encoder (``--frozen_prefix_layers 5``, or 0
for full fine-tuning).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CPU_PREFIX_LAYERS = "all"
"""The frozen prefix of the CPU grid: every encoder layer (only the pooling and the scoring head train), the setting
whose grid takes minutes here (see the module docstring)."""
GRID_ROW = "qbert"
GRID_SEEDS = (42, 43, 44)
GRID_FOLDS = 5


def build_parser() -> argparse.ArgumentParser:
    from wikiref_dataset.command import ArgumentParser  # one line for a bad command line, both option spellings

    parser = ArgumentParser(
        prog="wikiref grid", description=(__doc__ or "").split("\n\n")[0],
        epilog="Options not listed here go to every fine-tuning unit (finetune_duc.py's options, e.g. "
               "--sentence_position_buckets 16): a lever measured against the same grid.")
    parser.add_argument("--duc", required=True, metavar="DIR", help="A DUC year converted by `wikiref duc convert`.")
    parser.add_argument("--out", required=True, metavar="DIR", help="The experiments folder (resumed when it exists).")
    parser.add_argument("--frozen_prefix_layers", default=CPU_PREFIX_LAYERS, metavar="K",
                        help="The frozen, cached encoder prefix of every unit: a number of layers, or all (the "
                             "default: the encoder's every layer, only the pooling and head train); 0: full "
                             "fine-tuning.")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(GRID_SEEDS), metavar="SEED")
    parser.add_argument("--folds", type=int, default=GRID_FOLDS, metavar="K")
    parser.add_argument("--jobs", type=int, default=0, metavar="N", help="Units at once (0: the runner's choice).")
    parser.add_argument("--wait", action="store_true",
                        help="When another run holds --out, wait for it to end instead of stopping.")
    parser.add_argument("--recipe", default=None, metavar="NAME",
                        help="The units' recipe (default: the encoder's, sentence-encoder for the shipped MiniLM).")
    parser.add_argument("--encoder", default=None, metavar="DIR",
                        help="The encoder the units start from (default: the shipped all-MiniLM-L6-v2).")
    return parser


def prefix_layers(value: str, encoder: str | None) -> int:
    """``--frozen_prefix_layers``: a number of layers (0 or more), or ``all``: the encoder's ``num_hidden_layers``
    (its ``config.json``; the shipped MiniLM's when no encoder is given).

    Raises:
        ValueError: neither a number of 0 or more nor ``all``, or an encoder folder without a readable config.
    """
    if value != "all":
        if not value.lstrip("-").isdigit() or int(value) < 0:
            raise ValueError(f"--frozen_prefix_layers must be 0 or more, or all, got {value}")
        return int(value)
    if encoder is None:
        from trainer_scripts.common import default_encoder

        encoder = default_encoder()
    try:
        return int(json.loads((Path(encoder) / "config.json").read_text(encoding="utf-8"))["num_hidden_layers"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"--frozen_prefix_layers all: cannot read the layers of {encoder} ({error})") from None


def grid_line(results: dict[str, Any], units: int, seconds: float) -> str:
    """``grid: ROUGE-1 m ± sd, ROUGE-2 m ± sd, N units, T s`` from an experiments ``results.json``.

    Raises:
        ValueError: the file has no DUC scores of the grid's row.
    """
    record = (results.get("rows") or {}).get(GRID_ROW) or {}
    duc = record.get("duc") or {}
    if len(duc) != 1:
        raise ValueError(f"results.json: the {GRID_ROW} row has DUC scores for {sorted(duc) or 'no year'}; a grid "
                         "scores one year")
    scores = next(iter(duc.values()))
    cells = []
    for measure, name in (("rouge_1", "ROUGE-1"), ("rouge_2", "ROUGE-2")):
        entry = scores.get(measure)
        if not entry:
            raise ValueError(f"results.json: no {name} for the {GRID_ROW} row")
        cells.append(f"{name} {100 * entry['mean']:.2f} ± {100 * entry['std']:.2f}")
    return f"grid: {', '.join(cells)}, {units} units, {seconds:.0f} s"


def main(argv: Sequence[str] | None = None) -> int:
    from trainer_scripts.experiments.options import ExperimentArguments
    from trainer_scripts.experiments.run import run_reporting_errors

    arguments, extra = build_parser().parse_known_args(argv)
    try:
        layers = prefix_layers(arguments.frozen_prefix_layers, arguments.encoder)
    except ValueError as error:
        print(f"grid: error: {error}", file=sys.stderr)
        return 2
    experiments = ExperimentArguments(
        duc_dirs=[arguments.duc], folds=arguments.folds, rows=[GRID_ROW], seeds=list(arguments.seeds),
        out=arguments.out, baselines=False, keep_models=False, jobs=arguments.jobs, encoder=arguments.encoder,
        recipe=arguments.recipe, wait=arguments.wait)
    units = ["--frozen_prefix_layers", str(layers)] if layers else []
    started = time.perf_counter()
    status = run_reporting_errors("grid", experiments, [*units, *extra])
    if status:
        return status
    seconds = time.perf_counter() - started
    results = json.loads((Path(arguments.out) / "results.json").read_text(encoding="utf-8"))
    done = sum(unit["kind"] == "finetune" and unit["status"] in ("ran", "cached")
               for unit in results.get("units", {}).values())
    try:
        print(grid_line(results, done, seconds))
    except ValueError as error:
        print(f"grid: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
