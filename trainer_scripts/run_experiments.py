"""Run the paper's DUC and WikiRef experiments as cached units and write their tables beside the published numbers.

    python trainer_scripts/run_experiments.py --duc_dirs duc/2005 duc/2006 duc/2007 --wikiref outputs/wikiref \\
        --rows table6 --out experiments --bf16 true --per_device_train_batch_size 32
    wikiref experiments --duc_dirs duc/2005 duc/2006 duc/2007 --wikiref outputs/wikiref --rows table6 table9

The script's entry point; the runner is the package :mod:`trainer_scripts.experiments` (its docstring says what the
experiments are, how units are cached and what is written), one concept per module.
"""

from __future__ import annotations

import sys

from trainer_scripts.experiments import (
    ExperimentArguments,
    ExperimentError,
    UnitsFailed,
    add_arguments,
    build_parser,
    keep_unknown_options,
    main,
    run_experiments,
    to_arguments,
)

__all__ = ["ExperimentArguments", "ExperimentError", "UnitsFailed", "add_arguments", "build_parser",
           "keep_unknown_options", "main", "run_experiments", "to_arguments"]

if __name__ == "__main__":
    sys.exit(main())
