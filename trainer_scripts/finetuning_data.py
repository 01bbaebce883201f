"""What a fine-tuning run (``finetune_duc.py``) trains and tests on, behind one interface: DUC years
(`DucData`: train on the other years or folds, test on the held-out ones, scored with the official ROUGE settings as
Table VI is) or a converted benchmark (`BenchmarkData`, ``--qfs_dir``: QMSum, SQuALITY, Debatepedia, trained on one
split, tested on another within the benchmark's word budget and scored as its papers score it).

Both give the labelled training rows (:meth:`training_rows`), the test rows, how the log names them, the evaluation of
the model beside the baselines (:meth:`evaluate`, which also logs the table) and what ``results.json`` records about
them (:meth:`record`, :meth:`evaluation_fields`). :func:`load_finetuning_data` picks the one the options ask for.
The folders are read by the data layer (:mod:`wikiref_dataset.duc.years`, :func:`wikiref_dataset.qfs.load_split`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from trainer_scripts.common import ScriptError
from trainer_scripts.duc_evaluation import SystemSummaries
from trainer_scripts.finetuning import (
    QFS_LABELS,
    DucArguments,
    check_folds,
    extra_training_rows,
    format_queries,
    label_clusters,
    span_labels,
)
from trainer_scripts.results import MODEL_SYSTEM, BenchmarkRecord, EvaluationResults, FoldsRecord
from wikiref_dataset.duc.years import DucYear
from wikiref_dataset.qfs.common import QfsSplit

logger = logging.getLogger("finetune_duc")

Rows = list[dict[str, Any]]


def _load_years(duc_dirs: Sequence[str]) -> list[DucYear]:
    from wikiref_dataset.duc.reader import DucError
    from wikiref_dataset.duc.years import load_years

    try:
        return load_years(duc_dirs)
    except DucError as error:
        raise ScriptError(str(error)) from None


def fold_clusters(years: Sequence[DucYear], folds: int, fold: int) -> set[tuple[int, str]]:
    """The ``(year, topic_id)`` of the clusters fold ``fold`` tests: every cluster of the years (with references or
    not), sorted by year and topic, dealt round-robin into ``folds`` folds."""
    clusters = sorted((year.year, row["topic_id"]) for year in years for row in year.rows)
    return {key for position, key in enumerate(clusters) if position % folds == fold}


def split_folds(duc_dirs: Sequence[str], folds: int, fold: int | None) -> tuple[list[DucYear], list[DucYear]]:
    """``(train years, test years)`` for cluster-level k-fold: the clusters of every given year, sorted by year and
    topic, are dealt round-robin into ``folds`` folds; fold ``fold`` is tested, the rest train. Each "year" is a
    `DucYear` holding only that fold's clusters of that year (ROUGE is reported per year)."""
    if not duc_dirs:
        raise ScriptError("--duc_dirs needs at least one converted DUC year")
    check_folds(folds, fold)
    years = _load_years(duc_dirs)
    clusters = sum(len(year.rows) for year in years)
    if clusters < folds:
        raise ScriptError(f"--folds {folds}: only {clusters} clusters in {', '.join(map(str, duc_dirs))}")
    tested = fold_clusters(years, folds, fold)

    def part(year: DucYear, test: bool) -> DucYear:
        return DucYear(path=year.path, year=year.year,
                       rows=[row for row in year.rows if ((year.year, row["topic_id"]) in tested) == test])

    train = [part(year, False) for year in years]
    test = [part(year, True) for year in years]
    return [year for year in train if year.rows], [year for year in test if year.rows]


def split_years(duc_dirs: Sequence[str], test_year: int | None) -> tuple[list[DucYear], list[DucYear]]:
    """``(train years, [test year])`` as `DucYear` objects: train on every year but ``test_year``."""
    if len(duc_dirs) < 2:
        raise ScriptError("--duc_dirs needs at least two converted DUC years (train on the others, test on one), "
                          "or --folds to test on held-out clusters of one year")
    years = _load_years(duc_dirs)
    by_year = {year.year: year for year in years}
    if len(by_year) != len(years):
        raise ScriptError(f"--duc_dirs holds the same year twice: {[year.year for year in years]}")
    if test_year is None:
        raise ScriptError(f"--test_year is required (one of {sorted(by_year)})")
    if test_year not in by_year:
        raise ScriptError(f"--test_year {test_year} is not among the given years {sorted(by_year)}")
    return [by_year[year] for year in sorted(by_year) if year != test_year], [by_year[test_year]]



def _systems(summarize: Callable[..., Any], rows: Sequence[Any], baselines: Sequence[str], rule: str,
             scores: dict[str, list[list[float]]], budget: Callable[..., int] | None = None) -> SystemSummaries:
    """The rows of the test table, within ``budget`` (another benchmark's) when given: the fine-tuned model
    (:data:`MODEL_SYSTEM`) chosen by its rule ``rule`` (``scores`` receives its sentence scores) and, when that is not
    the paper's greedy rule, ``Q-BERT (greedy)`` chosen from the same scores (an ablation: what the rule adds); then
    the baselines under their own greedy rule and under ``rule`` (``QUERY-SIM (ILP)``): the same rule for every
    system."""
    from trainer_scripts.duc_evaluation import baseline_rows, compared_rules, model_rows

    rules = compared_rules(model_rule=rule)
    found = model_rows(summarize, MODEL_SYSTEM, rows, rules, scores=scores, budget=budget, own_rule=rule)
    return found.extend(baseline_rows(baselines, rows, rules, budget=budget))


@dataclass
class DucData:
    """DUC years: the training years (or every year's training folds) and the test year (or folds), their topics'
    queries given as ``query_format`` says, plus the extra training rows of other benchmarks (``--extra_train_dirs``,
    labelled as DUC's are)."""

    train_years: list[DucYear]
    test_years: list[DucYear]
    query_format: str = "levels"
    target_scaling: str = "cluster_max"
    extra_rows: Rows = field(default_factory=list)
    folds: int | None = None
    fold: int | None = None

    @classmethod
    def load(cls, duc_args: DucArguments) -> DucData:
        """The years of ``--duc_dirs``, split by ``--test_year`` or ``--folds``/``--fold``.

        Raises:
            ScriptError: a folder that is not a converted year, or years that cannot be split so.
        """
        extra_rows = extra_training_rows(duc_args.extra_train_dirs)
        if duc_args.folds is not None:
            train, test = split_folds(duc_args.duc_dirs, duc_args.folds, duc_args.fold)
        else:
            train, test = split_years(duc_args.duc_dirs, duc_args.test_year)
        return cls(train_years=train, test_years=test, query_format=duc_args.query_format,
                   target_scaling=duc_args.target_scaling, extra_rows=extra_rows, folds=duc_args.folds,
                   fold=duc_args.fold)

    @property
    def extra_train_queries(self) -> int:
        return len(self.extra_rows)

    def training_rows(self, label_field: str) -> Rows:
        """The training clusters (and the extra rows), each sentence labelled with its ROUGE-2 recall."""
        rows = format_queries([row for year in self.train_years for row in year.rows], self.query_format)
        return label_clusters(rows + self.extra_rows, label_field, scaling=self.target_scaling)

    def test_rows(self) -> Rows:
        """The test clusters that have reference summaries.

        Raises:
            ScriptError: none has.
        """
        rows = format_queries([row for year in self.test_years for row in year.scorable], self.query_format)
        if not rows:
            raise ScriptError(f"DUC {'+'.join(str(year.year) for year in self.test_years)}: no test cluster has "
                              "reference summaries, nothing to test on")
        return rows

    def trained(self) -> str:
        return "DUC " + "+".join(str(year.year) for year in self.train_years)

    def tested(self, test_rows: Sequence[Any]) -> str:
        return "DUC " + "+".join(f"{year.year} ({len(year.scorable)} clusters)" for year in self.test_years)

    def evaluate(self, summarize: Callable[..., Any], test_rows: Sequence[Any], baselines: Sequence[str], rule: str,
                 scores: dict[str, list[list[float]]]) -> tuple[dict[str, dict], EvaluationResults]:
        """The model's and the baselines' summaries of the test clusters and their ROUGE recall with the official
        settings, per test year (the table is logged)."""
        from trainer_scripts.duc_evaluation import evaluate_systems, format_table

        found = _systems(summarize, test_rows, baselines, rule, scores)
        evaluation = evaluate_systems(self.test_years, found.summaries, rules=found.rules)
        logger.info("%s, ROUGE recall x100 (%s):\n%s", self.tested(test_rows), evaluation.settings,
                    format_table(evaluation))
        return found.summaries, evaluation.to_results()

    def record(self, test_rows: Sequence[Any]) -> dict[str, Any]:
        """What ``results["finetuning"]`` says about the data: the years, the test year or the fold."""
        return {"train_years": [year.year for year in self.train_years],
                "test_year": self.test_years[0].year if self.folds is None else None, "benchmark": None,
                "folds": None if self.folds is None else FoldsRecord(
                    folds=self.folds, fold=self.fold, test_clusters=[row["topic_id"] for row in test_rows])}

    @staticmethod
    def evaluation_fields(evaluation: EvaluationResults) -> dict[str, EvaluationResults | None]:
        """Where the scores go in ``results.json``: ``evaluation`` (the model card's DUC table)."""
        return {"evaluation": evaluation, "benchmark_evaluation": None}


@dataclass
class BenchmarkData:
    """A converted benchmark (``--qfs_dir``): the training split's rows, the test split and the benchmark's scoring
    (`wikiref_dataset.qfs.scoring.BenchmarkScoring`: measures, multi-reference rule, word budgets)."""

    train_rows: Rows
    test: QfsSplit
    scoring: Any  # wikiref_dataset.qfs.scoring.BenchmarkScoring
    train_split: str = "train"
    labels: str = "oracle"
    target_scaling: str = "cluster_max"
    extra_rows: Rows = field(default_factory=list)

    @classmethod
    def load(cls, duc_args: DucArguments) -> BenchmarkData:
        """The training and test splits of ``--qfs_dir``.

        Raises:
            ScriptError: a folder that is not a converted benchmark with those splits.
        """
        from wikiref_dataset.qfs import QfsError, load_split
        from wikiref_dataset.qfs.scoring import scoring_for

        try:
            train = load_split(duc_args.qfs_dir, duc_args.qfs_train_split)
            test = load_split(duc_args.qfs_dir, duc_args.qfs_test_split)
        except QfsError as error:
            raise ScriptError(str(error)) from None
        extra_rows = extra_training_rows(duc_args.extra_train_dirs)
        return cls(train_rows=train.rows, test=test, scoring=scoring_for(test.benchmark), train_split=train.split,
                   labels=duc_args.qfs_labels, target_scaling=duc_args.target_scaling, extra_rows=extra_rows)

    @property
    def extra_train_queries(self) -> int:
        return len(self.extra_rows)

    def training_rows(self, label_field: str) -> Rows:
        """The training queries (and ``--extra_train_dirs``' rows), labelled with ROUGE-2 recall (``oracle``) or the
        answer spans (``spans``, never with extra rows)."""
        if self.labels == "spans":
            return span_labels(self.train_rows, label_field)
        return label_clusters(self.train_rows + self.extra_rows, label_field, scaling=self.target_scaling)

    def test_rows(self) -> Rows:
        return self.test.rows

    def trained(self) -> str:
        return f"{self.test.benchmark}/{self.train_split} ({self.labels} labels)"

    def tested(self, test_rows: Sequence[Any]) -> str:
        return f"{self.test.key} ({len(test_rows)} queries)"

    def evaluate(self, summarize: Callable[..., Any], test_rows: Sequence[Any], baselines: Sequence[str], rule: str,
                 scores: dict[str, list[list[float]]]) -> tuple[dict[str, dict], EvaluationResults]:
        """The model's and the baselines' summaries within the benchmark's word budget, scored as its papers score
        them (the table is logged)."""
        from trainer_scripts import qfs_evaluation

        found = _systems(summarize, test_rows, baselines, rule, scores, budget=self.scoring.budget)
        scored = {system: qfs_evaluation.score_system(self.test, self.scoring, summaries, system)
                  for system, summaries in found.summaries.items()}
        logger.info("%s, ROUGE x100 (%s):\n%s", self.tested(test_rows), self.scoring.describe(),
                    qfs_evaluation.format_table(scored, self.test, self.scoring.value, found.rules))
        return found.summaries, qfs_evaluation.evaluation_record(self.test, self.scoring, scored, found.rules)

    def record(self, test_rows: Sequence[Any]) -> dict[str, Any]:
        """What ``results["finetuning"]`` says about the data: the benchmark, its splits, labels and budgets."""
        from wikiref_dataset.qfs import benchmark_title

        benchmark = BenchmarkRecord(
            dataset=str(self.test.path), benchmark=self.test.benchmark, title=benchmark_title(self.test.benchmark),
            train_split=self.train_split, train_queries=len(self.train_rows), test_split=self.test.split,
            test_queries=len(self.test.rows), labels=self.labels, label_meaning=QFS_LABELS[self.labels],
            scoring=self.scoring.describe(), budgets=dict(self.scoring.budgets))
        return {"train_years": [], "test_year": None, "benchmark": benchmark, "folds": None}

    @staticmethod
    def evaluation_fields(evaluation: EvaluationResults) -> dict[str, EvaluationResults | None]:
        """Where the scores go in ``results.json``: ``benchmark_evaluation`` (a benchmark's scores are not DUC's:
        the model card's DUC table reads ``evaluation`` alone)."""
        return {"evaluation": None, "benchmark_evaluation": evaluation}


FinetuningData = DucData | BenchmarkData
"""What a fine-tuning run trains and tests on."""


def load_finetuning_data(duc_args: DucArguments) -> FinetuningData:
    """`BenchmarkData` for ``--qfs_dir``, else `DucData` (the options were checked when parsed:
    `DucArguments.__post_init__`)."""
    return BenchmarkData.load(duc_args) if duc_args.qfs_dir else DucData.load(duc_args)
