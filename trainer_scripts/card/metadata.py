"""The card's YAML front matter (``huggingface_hub.ModelCardData``): tags, base model, training datasets and the
``model-index`` entries (``EvalResult``) of this model's WikiRef validation, DUC test-year and benchmark scores,
×100."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainer_scripts.card.markdown import WIKIREF_MEASURES
from trainer_scripts.card.names import card_dataset_id, hub_base_model
from trainer_scripts.card.tables import benchmark_values
from trainer_scripts.duc_evaluation import MEASURE_NAMES, MEASURES
from trainer_scripts.results import MODEL_SYSTEM, SystemScores, TrainingResults


def eval_results(results: TrainingResults, dataset_repo: str | None = None) -> list[Any]:
    """The ``model-index`` entries: this model's WikiRef validation and DUC test-year scores, ×100."""
    from huggingface_hub import EvalResult

    demo = " (demo sample)" if results.run_kind == "demo" else ""
    task = {"task_type": "summarization", "task_name": "Query-focused extractive summarization"}
    entries = []
    pretraining = results.pretraining
    validation = pretraining.validation if pretraining else None
    if validation:
        dataset_type = card_dataset_id(pretraining, dataset_repo) or "wikiref"
        for key, name in WIKIREF_MEASURES:
            if isinstance(getattr(validation, key), (int, float)):
                entries.append(EvalResult(**task, dataset_type=dataset_type, dataset_name=f"WikiRef{demo}",
                                          dataset_split="validation", metric_type="rouge",
                                          metric_name=f"{name} F1 (x100)",
                                          metric_value=round(100 * float(getattr(validation, key)), 2)))
    entries += _duc_eval_results(results, task, demo)
    entries += _benchmark_eval_results(results, task, demo)
    return entries


def _duc_eval_results(results: TrainingResults, task: Mapping[str, str], demo: str) -> list[Any]:
    """The ``model-index`` entries of this model's DUC test years (a year it was fine-tuned on is left out)."""
    from huggingface_hub import EvalResult

    evaluation = results.evaluation
    if not evaluation:
        return []
    entries = []
    for year, values in (evaluation.systems.get(MODEL_SYSTEM) or {}).items():
        if not values or str(year) in results.trained_years:
            continue
        for measure in MEASURES:
            scored = values.interval(measure)
            if scored is not None:
                entries.append(EvalResult(**task, dataset_type="duc", dataset_name=f"DUC {year}{demo}",
                                          dataset_config=str(year), dataset_split="test", metric_type="rouge",
                                          metric_name=f"{MEASURE_NAMES[measure]} recall (x100)",
                                          metric_value=round(100 * float(scored.value), 2),
                                          metric_args={"rouge_args": evaluation.settings}))
    return entries


def _benchmark_eval_results(results: TrainingResults, task: Mapping[str, str], demo: str) -> list[Any]:
    """The ``model-index`` entries of the benchmark the run was fine-tuned and tested on."""
    from huggingface_hub import EvalResult

    found = benchmark_values(results)
    if found is None:
        return []
    key, value = found
    benchmark = results.finetuning.benchmark if results.finetuning else None
    evaluation = results.benchmark_evaluation
    values = evaluation.scores(MODEL_SYSTEM, key) or SystemScores(values={})
    entries = []
    for measure, name in WIKIREF_MEASURES:
        scored = values.interval(measure[:-2], value)
        if scored is not None:
            entries.append(EvalResult(**task, dataset_type=key.split("/")[0],
                                      dataset_name=f"{(benchmark.title if benchmark else None) or key.split('/')[0]}"
                                                   f"{demo}",
                                      dataset_split=key.split("/", 1)[-1], metric_type="rouge",
                                      metric_name=f"{name} {'F1' if value == 'f' else 'recall'} (x100)",
                                      metric_value=round(100 * float(scored.value), 2),
                                      metric_args={"rouge_args": evaluation.settings}))
    return entries


def model_card_data(results: TrainingResults, *, model_repo: str, dataset_repo: str | None = None) -> Any:
    """The card's YAML metadata (``huggingface_hub.ModelCardData``), ``model-index`` included when there are
    results."""
    from huggingface_hub import ModelCardData

    tags = ["query-focused-summarization", "extractive-summarization", "q-bert", "wikiref", "custom_code"]
    if results.run_kind == "demo":
        tags.append("demo")
    entries = eval_results(results, dataset_repo)
    # no pipeline_tag: the Hub's task list has no query-focused summarization, and "summarization" would invite the
    # Hub's text2text widget, which this model does not serve; the card names the pipeline it registers instead
    return ModelCardData(
        language="en", license="apache-2.0", library_name="transformers", pipeline_tag=None,
        tags=tags, base_model=hub_base_model(results.base_model),
        datasets=training_datasets(results, dataset_repo) or None, metrics=["rouge"],
        model_name=model_repo.split("/")[-1], eval_results=entries or None,
    )


def training_datasets(results: TrainingResults, dataset_repo: str | None = None) -> list[str]:
    """Hub ids of the training data for the ``datasets:`` metadata: the WikiRef repo (given, or the Hub id the run
    loaded; a local folder is no Hub id). DUC is NIST's and has no Hub id; the card's text names it."""
    found = card_dataset_id(results.pretraining, dataset_repo)
    return [found] if found else []
