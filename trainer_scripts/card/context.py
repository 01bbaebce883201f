"""The values the template ``trainer_scripts/model_card.md`` renders, gathered from every section of the card."""

from __future__ import annotations

from typing import Any

from trainer_scripts.card.architecture import architecture_text, cluster_rule_text
from trainer_scripts.card.experiments import experiments_benchmarks_table
from trainer_scripts.card.names import card_model_name
from trainer_scripts.card.subnetwork import _pruning_text, _subnetwork_text
from trainer_scripts.card.tables import (
    _budgets_text,
    benchmark_table,
    duc_table,
    headline,
    rules_note,
    wikiref_table,
)
from trainer_scripts.card.training import (
    _demo_summary,
    _examples_text,
    _finetuning_objective_text,
    _hyperparameter_table,
    _loss,
    _objective_text,
    _pretraining_dataset_text,
    _steps_text,
    recipe_text,
    training_data_text,
)
from trainer_scripts.duc_evaluation import official_settings
from trainer_scripts.results import EvaluationResults, FinetuningResults, TrainingResults
from wikiref_dataset.wikiref.dataset import WIKIREF_CITATION

CITATION = WIKIREF_CITATION  # the paper, as the WikiRef dataset card cites it
PAPER = ("Zhu, Dong, Wei, Qin and Liu (2022), *Transforming Wikipedia into Augmented Data for Query-Focused "
         "Summarization*, IEEE/ACM Transactions on Audio, Speech, and Language Processing")


def template_context(results: TrainingResults, *, model_repo: str, dataset_repo: str | None = None,
                     metric_repo: str | None = None, duc_figure_name: str | None = None) -> dict[str, Any]:
    """The values ``model_card.md`` renders (the template reads the stages' records as their JSON objects)."""
    pretraining = results.pretraining or None
    finetuning = results.finetuning or None
    validation = pretraining.validation if pretraining else None
    benchmark = finetuning.benchmark if finetuning else None
    max_length = results.max_length
    return {
        "model_name": model_repo.split("/")[-1],
        "model_repo": model_repo,
        "metric_repo": metric_repo,
        "demo": results.run_kind == "demo",
        "run_kind": results.run_kind,
        "run_date": results.run.recorded_or("date", "date not recorded") if results.run else "date not recorded",
        "demo_summary": _demo_summary(results),
        "base_model": card_model_name(results.base_model),
        "max_length": max_length,
        "objective_text": _objective_text(results),
        "finetuning_objective": _finetuning_objective_text(finetuning,
                                                           results.recorded_or("objective", "classification")),
        "paper": PAPER,
        "duc_figure": duc_figure_name if duc_figure_name and results.evaluation else None,
        "pretraining": pretraining.to_dict() if pretraining else None,
        "pretraining_dataset": _pretraining_dataset_text(pretraining),
        "pretraining_examples": _examples_text(pretraining.examples if pretraining else None),
        "pretraining_loss": _loss(pretraining.train_loss if pretraining else None),
        "pretraining_hyperparameters": _hyperparameter_table(pretraining.hyperparameters if pretraining else None),
        "pretraining_recipe": recipe_text(pretraining.recipe if pretraining else None, results),
        "finetuning_recipe": recipe_text(finetuning.recipe if finetuning else None, results),
        "finetuning": finetuning.to_dict() if finetuning else None,
        "train_years": " and ".join(map(str, (finetuning.train_years if finetuning else None) or []))
        or "(not recorded)",
        "test_year": finetuning.recorded_or("test_year", "(not recorded)") if finetuning else "(not recorded)",
        "subnetwork_text": _subnetwork_text(finetuning or FinetuningResults(), wikiref=bool(pretraining)),
        "pruning_text": _pruning_text(results),
        "finetuning_loss": _loss(finetuning.train_loss if finetuning else None),
        "finetuning_steps": _steps_text(finetuning or FinetuningResults()),
        "training_data_text": training_data_text(results),
        "uses_duc": bool(finetuning and finetuning.train_years) or bool(results.evaluation),
        "finetuning_hyperparameters": _hyperparameter_table(finetuning.hyperparameters if finetuning else None),
        "wikiref_table": wikiref_table(results),
        "wikiref_threshold": (f" (threshold {validation.threshold:g} tuned for ROUGE-2 F1, "
                              f"{validation.recorded_or('examples', '?')} validation examples)"
                              if validation and isinstance(validation.threshold, (int, float)) else ""),
        "duc_table": duc_table(results),
        "headline": headline(results),
        "duc_rules_note": rules_note(results, results.evaluation),
        "benchmark_rules_note": rules_note(results, results.benchmark_evaluation),
        "cluster_rule": cluster_rule_text(finetuning),
        "architecture_text": architecture_text(results, max_length),
        "cluster_rule_name": (finetuning.selection if finetuning else None) or "duc",
        "experiments_benchmarks_table": experiments_benchmarks_table(results),
        "benchmark": benchmark.to_dict() if benchmark is not None else None,
        "benchmark_table": benchmark_table(results),
        "benchmark_settings": _evaluation_value(results.benchmark_evaluation, "settings"),
        "benchmark_source": _evaluation_value(results.benchmark_evaluation, "source"),
        "benchmark_budgets": _budgets_text(benchmark.budgets if benchmark else None),
        "duc_settings": (results.evaluation.recorded_or("settings", official_settings()) if results.evaluation
                         else official_settings()),
        "citation": CITATION,
    }


def _evaluation_value(evaluation: EvaluationResults | None, name: str) -> Any:
    return getattr(evaluation, name) if evaluation else None
