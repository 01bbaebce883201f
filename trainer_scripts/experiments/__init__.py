"""Run the paper's DUC and WikiRef experiments as cached units and write their tables beside the published numbers.

    python trainer_scripts/run_experiments.py --duc_dirs duc/2005 duc/2006 duc/2007 --wikiref outputs/wikiref \\
        --rows table6 --out experiments --bf16 true --per_device_train_batch_size 32
    wikiref experiments --duc_dirs duc/2005 duc/2006 duc/2007 --wikiref outputs/wikiref --rows table6 table9

The experiments of Zhu, Dong, Wei, Qin and Liu (2022), "Transforming Wikipedia into Augmented Data for Query-Focused
Summarization": Table VI (DUC 2005-2007 with and without WikiRef pre-training), Table IV (WikiRef, poolings and "w/o
Query"), Table VIII (poolings on DUC), Table IX (how the subnetwork is identified), Fig. 4 (share of the DUC training
data) and Fig. 6 (WikiRef training halves of increasing quality). Each row is a recipe of the real scripts
(:data:`ROWS`): ``pretrain_wikiref.py`` on ``--wikiref`` (a pre-trained model is a unit of its own, shared by every row
that needs the same one), ``finetune_duc.py`` on the DUC years, ``evaluate_duc.py --model`` for the rows that apply
the pre-trained model without fine-tuning, ``evaluate_duc.py --baseline all`` once per year for LEAD, QUERY-SIM and
ORACLE.

Folds: with two or more years, every year is tested once, trained on the others (``--test_year``); with one year, its
clusters are split into ``--folds`` folds (``finetune_duc.py --folds K --fold I``) and the folds' summaries are pooled
and scored as one year. The analyses the paper ran on DUC 2007 alone (Tables VIII and IX, Figs. 4 and 6) run on the
fold that tests the latest year given.

Units: every (row, fold, seed) runs in a fresh Python process (``--subprocess``) in its own folder
``OUT/units/<kind>-<what>-<key>``, whose key hashes exactly what feeds the unit: the script, its options (row, stage
and pass-through options; the folders of the units it starts from) and the identity of its input folders (path, and
size and modification time of every file). A unit is finished when its ``results.json`` exists (the scripts write it
last): a rerun skips finished units, an interrupted run resumes, and a changed option redoes only the units it feeds.
The code's version is not part of the key: each unit records a fingerprint of the code it ran with, and a rerun names,
in one line, the finished units another code produced (their results are reused; delete a unit's folder to redo it).

Scores: ROUGE-1, ROUGE-2 and ROUGE-SU4 recall with the official DUC settings; per row and year the mean and the
sample standard deviation over the seeds, and the 95% bootstrap interval of the median seed's run (per measure: the
run whose score is the median, the lower one of the middle two for an even count; its interval is the metric's own,
not a pooled one). Runs that do not depend on the seed (baselines, a pre-trained model shared by every seed) count
once.

Writes into ``--out``: ``results.md`` (the tables in the paper's shape with the published numbers beside and what
differs), ``results.json`` (every number behind them, the settings, the best row and its model folders, which
``model_card.py --results OUT/results.json`` renders a card from), ``figures/*.png`` and the ``units/`` folders.
Options this runner does not know (``--max_steps 100``, ``--bf16 true``, ``--per_device_train_batch_size 16``, ...)
are passed to every training unit whose script knows them, and are part of its key.

The package, one concept per module: :mod:`.tables` (the published numbers, the rows and groups), :mod:`.options`
(the command line and the routing of the scripts' options), :mod:`.plan` (inputs, folds, units), :mod:`.executors`
(running the units), :mod:`.scores`, :mod:`.report` and :mod:`.run` (the whole run and the entry point);
:mod:`.common` holds what they share. ``trainer_scripts/run_experiments.py`` is the script's thin entry point.
"""

from trainer_scripts.experiments.common import ExperimentError, UnitsFailed
from trainer_scripts.experiments.options import ExperimentArguments, add_arguments, keep_unknown_options, to_arguments
from trainer_scripts.experiments.run import build_parser, main, run_experiments
from trainer_scripts.experiments.tables import GROUPS, PUBLISHED, ROW_BY_NAME, ROWS

__all__ = ["GROUPS", "PUBLISHED", "ROWS", "ROW_BY_NAME", "ExperimentArguments", "ExperimentError", "UnitsFailed",
           "add_arguments", "build_parser", "keep_unknown_options", "main", "run_experiments", "to_arguments"]
