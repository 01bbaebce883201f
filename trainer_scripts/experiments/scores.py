"""Scores: the finished units' results turned into per-row statistics (mean and standard deviation over seeds, the
95% interval of the median seed's run: :func:`.cells.summarize_runs`), the seeds' averaged scores and the pooled
folds."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainer_scripts.experiments.cells import summarize_runs
from trainer_scripts.experiments.common import (
    BASELINE_KEYS,
    MEASURES,
    QBERT_SYSTEM,
    QFS_MEASURES,
    RESULTS_NAME,
)
from trainer_scripts.experiments.executors import Runner, write_json
from trainer_scripts.experiments.plan import Variant, digest

if TYPE_CHECKING:  # read when a report is made, not when the `wikiref` parser is built
    from trainer_scripts.results import EvaluationResults, EvaluationUnitResults, TrainingResults

# ---- scores -------------------------------------------------------------------------------------------------------


def baseline_system(variant: Variant) -> str:
    """The row name the baseline units give a baseline variant's scores (``wikiref_dataset.baselines``): ``QUERY-SIM``
    under its own greedy rule, ``QUERY-SIM (ILP)`` for ``query_sim@ilp``."""
    from wikiref_dataset.baselines import baseline_system as named

    return named(BASELINE_KEYS[variant.row.baseline], variant.point or "duc")


def variant_rule(variant: Variant, row_rules: Mapping[str, str]) -> dict[str, str]:
    """What a DUC row's record says of its rule: ``rule`` (``duc``, ``ilp``, ``mmr``; ``oracle`` for ORACLE), and for
    a baseline its ``system`` name (``QUERY-SIM (ILP)``); a fine-tuned row's rule is its units' ``--selection``
    (``row_rules``), a pre-trained model's the greedy rule it is saved with."""
    row = variant.row
    if row.duc == "baseline":
        from wikiref_dataset.baselines import baseline_rule

        return {"rule": baseline_rule(BASELINE_KEYS[row.baseline], variant.point or "duc"),
                "system": baseline_system(variant)}
    return {"rule": row_rules.get(row.name, "duc")}


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


class Scores:
    """Reads the finished units' results and turns them into per-row statistics."""

    def __init__(self, runner: Runner) -> None:
        self.runner, self.plan = runner, runner.plan
        self._results: dict[str, TrainingResults | EvaluationUnitResults | None] = {}

    def unit_results(self, key: str | None) -> TrainingResults | EvaluationUnitResults | None:
        """The typed ``results.json`` of a finished unit (:func:`trainer_scripts.results.results_from_dict`), read
        once per report (a finished unit does not change, and a baseline unit serves every row and year);
        ``None`` while it is unfinished or when its file cannot be read.

        Raises:
            ResultsError: the file is not shaped like a training run's or an evaluation unit's results, named.
        """
        if key is None or not self.runner.finished(key):
            return None
        if key not in self._results:
            from trainer_scripts.results import results_from_dict

            path = self.runner.folder(key) / RESULTS_NAME
            data = _read(path)
            self._results[key] = None if data is None else results_from_dict(data, str(path))
        return self._results[key]

    def training_results(self, key: str) -> TrainingResults | None:
        """A training unit's results (``None`` for an evaluation unit's or an unfinished one)."""
        from trainer_scripts.results import TrainingResults

        results = self.unit_results(key)
        return results if isinstance(results, TrainingResults) else None

    def unit_evaluation(self, key: str, benchmark: bool = False) -> EvaluationResults | None:
        """A unit's DUC evaluation, or with ``benchmark`` its benchmark evaluation (a fine-tuning run's
        ``benchmark_evaluation``, else an evaluation unit's own ``evaluation``)."""
        results = self.unit_results(key)
        if results is None:
            return None
        training = self.training_results(key)
        if benchmark and training is not None and training.benchmark_evaluation:
            return training.benchmark_evaluation
        return results.evaluation

    def system_scores(self, key: str, system: str, year: int) -> dict[str, Any] | None:
        evaluation = self.unit_evaluation(key)
        values = evaluation.scores(system, year) if evaluation else None
        return {**values.to_dict(), "unit": self.plan.units[key].folder_name} if values else None

    def duc_runs(self, variant: Variant) -> dict[int, list[dict[str, Any]]]:
        """``{year: [metric dict of each distinct run]}`` of a row variant (each seed's unit, shared units once)."""
        row = variant.row
        years = list(self.plan.tested_years)
        runs: dict[int, list[dict[str, Any]]] = {year: [] for year in years}
        if row.duc == "baseline":
            for year in years:
                key = self.plan.baseline_units.get(year)
                found = self.system_scores(key, baseline_system(variant), year) if key else None
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
        path = self.runner.out / "pooled" / f"{digest(sorted(keys))}.json"
        cached = _read(path)
        if cached is not None:
            return cached
        from trainer_scripts.duc_evaluation import evaluate_systems, load_years, read_summaries_jsonl

        merged: dict[str, str] = {}
        for key in keys:
            merged.update(read_summaries_jsonl(self.runner.folder(key) / "summaries.jsonl").get(QBERT_SYSTEM, {}))
        evaluation = evaluate_systems(load_years(list(self.plan.inputs.years.values())), {QBERT_SYSTEM: merged})
        systems = evaluation.to_dict()["systems"]
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, systems)
        return systems

    def seed_average(self, variant: Variant) -> dict[str, Any] | None:
        """``{year: metric dict}`` of the seeds' averaged scores: each test sentence's
        score is the mean of the seeds' models' scores (their ``sentence_scores.jsonl``), the units' own selection
        rule (``finetune_duc.py --selection``, recorded in their results) chooses the summary, and the folds' summaries
        are scored together per year (cached in ``pooled/``): ``wikiref rescore --average_seeds``'s computation
        (:mod:`.rescore`). ``None`` for fewer than two seeds or while a unit is missing."""
        if variant.row.duc != "finetune":
            return None
        seeds = sorted({seed for _, seed in variant.finetune})
        folds = sorted({fold for fold, _ in variant.finetune})
        keys = [variant.finetune[(fold, seed)] for fold in folds for seed in seeds if (fold, seed) in variant.finetune]
        if len(seeds) < 2 or not all(self.runner.finished(key) for key in keys):
            return None
        path = self.runner.out / "pooled" / f"average-{digest(sorted(keys))}.json"
        cached = _read(path)
        if cached is not None:
            return cached
        from trainer_scripts.experiments.rescore import Clusters, Mix, Rule, averaged_scores, read_scores

        clusters = Clusters.load(list(self.plan.inputs.years.values()))
        by_seed: dict[int, dict[str, list[float]]] = {}
        for (_, seed), key in variant.finetune.items():
            scores_file = self.runner.folder(key) / "sentence_scores.jsonl"
            if not scores_file.is_file():
                return None  # a unit from before sentence scores were written
            by_seed.setdefault(seed, {}).update(clusters.flatten(read_scores(scores_file), scores_file.parent.name))
        first = self.training_results(keys[0])
        finetuning = first.finetuning if first is not None else None
        rule = Rule((finetuning.selection if finetuning else None) or "duc")
        result = {}
        for year in clusters.years:
            averaged = averaged_scores(by_seed, year)
            values = clusters.score(clusters.summaries(averaged, rule, Mix())).get(year.year) if averaged else None
            if values:
                result[str(year.year)] = {**values, "seeds": seeds}
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, result)
        return result

    def benchmark_runs(self, variant: Variant) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """``{benchmark: {how: [metric dict of each distinct run]}}`` on the benchmarks of ``--qfs_dirs``, ``how``
        one of :data:`QFS_HOW`: a baseline's one run, the DUC-trained models' (zero-shot) and the fine-tunings on the
        benchmark (each seed's unit)."""
        found: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for benchmark in self.plan.inputs.benchmarks:
            units: dict[str, tuple[list[str], str]] = {
                "zero_shot": ([key for (name, _), key in sorted(variant.qfs_zero_shot.items()) if name == benchmark.name],
                              QBERT_SYSTEM),
                "fine_tuned": ([key for (name, _), key in sorted(variant.qfs_finetune.items())
                                if name == benchmark.name], QBERT_SYSTEM)}
            if variant.row.duc == "baseline" and benchmark.name in self.plan.qfs_baseline_units:
                units = {"baseline": ([self.plan.qfs_baseline_units[benchmark.name]], baseline_system(variant))}
            for how, (keys, system) in units.items():
                runs = []
                for key in dict.fromkeys(keys):
                    evaluation = self.unit_evaluation(key, benchmark=True)
                    values = evaluation.scores(system, benchmark.key) if evaluation else None
                    if values:
                        runs.append({**values.to_dict(), "unit": self.plan.units[key].folder_name})
                if runs:
                    found.setdefault(benchmark.name, {})[how] = runs
        return found

    def wikiref_runs(self, variant: Variant) -> dict[str, list[dict[str, Any]]]:
        """``{"validation": [...], "test": [...]}``: the pre-training units' WikiRef ROUGE F1 (distinct units)."""
        found: dict[str, list[dict[str, Any]]] = {"validation": [], "test": []}
        for key in dict.fromkeys(variant.pretrain.values()):
            pretraining = self.pretraining(key)
            for split in found:
                scores = getattr(pretraining, split) if pretraining else None
                if scores:
                    found[split].append({**scores.to_dict(), "unit": self.plan.units[key].folder_name})
        return found

    def pretraining(self, key: str) -> Any:
        """A pre-training unit's :class:`~trainer_scripts.results.PretrainingResults` (``None`` if unfinished)."""
        results = self.training_results(key)
        return results.pretraining if results is not None else None

    def variant_record(self, variant: Variant) -> dict[str, Any]:
        """What results.json says about one row variant."""
        row = variant.row
        keys = [*variant.pretrain.values(), *variant.finetune.values(), *variant.evaluate.values(),
                *variant.qfs_zero_shot.values(), *variant.qfs_finetune.values()]
        if row.duc == "baseline":
            keys = [*self.plan.baseline_units.values(), *self.plan.qfs_baseline_units.values()]
        statuses = [self.runner.status.get(key, "cached" if self.runner.finished(key) else "missing")
                    for key in dict.fromkeys(keys)]
        same_rule = row.sweep == "rule" and variant.point is not None  # a baseline under the model's rule
        record: dict[str, Any] = {
            "row": row.name, "variant": variant.name, "table": row.table,
            "published_row": None if same_rule else row.published, "point": variant.point, "what": row.help,
            "status": "failed" if any(s in ("failed", "skipped") for s in statuses) else
                      "done" if all(s in ("ran", "cached") for s in statuses) else "incomplete",
            "units": {"pretrain": sorted({self.plan.units[k].folder_name for k in variant.pretrain.values()}),
                      "finetune": sorted({self.plan.units[k].folder_name for k in variant.finetune.values()}),
                      "evaluate": sorted({self.plan.units[k].folder_name for k in variant.evaluate.values()}),
                      "benchmarks": sorted({self.plan.units[k].folder_name for k in [
                          *variant.qfs_zero_shot.values(), *variant.qfs_finetune.values()]})},
        }
        if row.duc is not None:
            record.update(variant_rule(variant, self.plan.row_rules))
            record["duc"] = {str(year): summarize_runs(runs, MEASURES)
                             for year, runs in self.duc_runs(variant).items() if runs}
        benchmarks = self.benchmark_runs(variant)
        if benchmarks:
            record["benchmarks"] = {name: {how: summarize_runs(runs, QFS_MEASURES) for how, runs in found.items()}
                                    for name, found in benchmarks.items()}
        if self.runner.arguments.seed_average:
            average = self.seed_average(variant)
            if average:
                record["duc_seed_average"] = average
        if variant.pretrain:
            wikiref = self.wikiref_runs(variant)
            record["wikiref"] = {split: summarize_runs(runs, ("rouge_1_f", "rouge_2_f", "rouge_l_f"), interval=False)
                                 for split, runs in wikiref.items() if runs}
            examples = {((pretraining.examples or {}) if (pretraining := self.pretraining(key)) else {}).get("train")
                        for key in variant.pretrain.values()}
            record["wikiref_train_examples"] = sorted(value for value in examples if isinstance(value, int))
        return record
