"""The card's Training data and procedure section: the objectives that ran, the data (WikiRef, DUC years, a
benchmark's split), steps, losses, hyperparameters and the training recipe of each stage."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from trainer_scripts.card.markdown import _markdown_table
from trainer_scripts.card.names import card_dataset_id, local_name, public_text
from trainer_scripts.recipes import format_setting
from trainer_scripts.results import FinetuningResults, TrainingResults

PRETRAINING_OBJECTIVES = {
    "classification": "sentence classification: linear + sigmoid, binary cross-entropy against each sentence's oracle "
                      "label (the greedy ROUGE-2 F1 oracle)",
    "regression": "sentence regression: linear, mean squared error against each sentence's oracle score (its own "
                  "ROUGE-2 F1 against the summary)",
}
HYPERPARAMETER_NAMES = {
    "learning_rate": "learning rate", "adam_beta1": "Adam β1", "adam_beta2": "Adam β2",
    "weight_decay": "weight decay (decoupled)", "lr_scheduler_type": "learning-rate schedule",
    "num_train_epochs": "epochs", "per_device_train_batch_size": "batch size per device",
    "gradient_accumulation_steps": "gradient accumulation steps", "max_steps": "max steps (-1: epochs decide)",
    "max_length": "tokens per window", "seed": "seed",
}


def _loss(value: Any) -> str:
    return f"{float(value):.4f}" if isinstance(value, (int, float)) else "not recorded"


def _objective_text(results: TrainingResults) -> str:
    """The objectives that ran: WikiRef pre-training's and DUC fine-tuning's (with the targets it trained on)."""
    parts = []
    if results.pretraining:
        objective = results.pretraining_objective
        parts.append("WikiRef pre-training: " + PRETRAINING_OBJECTIVES.get(objective, objective))
    finetuning = results.finetuning
    if finetuning:
        objective = finetuning.objective or results.recorded_or("objective", "not recorded")
        targets = finetuning.targets or "each sentence's ROUGE-2 recall against the references"
        switched = finetuning.pretraining_objective
        note = (f" (switched from {switched} pre-training, as the paper fine-tunes on DUC after either)"
                if switched and switched != objective else "")
        data = (finetuning.benchmark.title if finetuning.benchmark else None) or "DUC"
        parts.append(f"{data} fine-tuning: {objective}, {targets}{note}")
    final = results.recorded_or("objective", "classification")
    meaning = {"classification": "scores are probabilities that a sentence belongs in the summary",
               "regression": "scores estimate a sentence's ROUGE-2 against the references"}.get(final)
    if not parts:
        return f"{final} head, not trained by this run."
    return "; ".join(parts) + (f" ({meaning})." if meaning else ".")


def _finetuning_objective_text(finetuning: FinetuningResults | None, final_objective: Any) -> str:
    """``"regression: <what it trained against>"``: fine-tuning's objective (the final one when it records none)."""
    objective = (finetuning.objective if finetuning else None) or final_objective
    return f"{objective}: " + ((finetuning.targets if finetuning else None) or "per-sentence ROUGE-2 recall")


def _pretraining_dataset_text(pretraining: Any) -> str:
    """The WikiRef data of pre-training as the card names it: its Hub id, or a local folder by its own name."""
    if not pretraining or not pretraining.dataset:
        return "not recorded"
    hub_id = card_dataset_id(pretraining)
    return f"`{hub_id}`" if hub_id else f"a local WikiRef folder (`{local_name(pretraining.dataset)}`)"


def _examples_text(examples: Any) -> str:
    if isinstance(examples, Mapping) and examples:
        return ", ".join(f"{count:,} {split}" if isinstance(count, int) else f"{count} {split}"
                         for split, count in examples.items()) + " examples"
    return "example counts not recorded"


def training_data_text(results: TrainingResults) -> str:
    """What the model was trained on, in words: WikiRef pre-training (this run's, or the starting model's as its
    results record it), DUC years, a benchmark's split."""
    from wikiref_dataset.qfs import benchmark_content

    parts = []
    if results.pretraining:
        parts.append("WikiRef (Wikipedia statements and the web pages they cite; queries: an article title and a "
                     "section path)")
    finetuning = results.finetuning
    benchmark = finetuning.benchmark if finetuning else None
    if benchmark:
        what = benchmark_content(str(benchmark.benchmark))
        title = benchmark.recorded_or("title", benchmark.benchmark)
        parts.append(f"{title}'s `{benchmark.train_split}` split ({what})")
    elif finetuning and finetuning.train_years:
        years = ", ".join(map(str, finetuning.train_years))
        parts.append(f"DUC {years} (news clusters; queries: a topic's title and narrative)")
    extra = list(finetuning.extra_train_dirs or []) if finetuning else []
    if extra:
        count = finetuning.extra_train_queries
        queries = f"{count:,} queries" if isinstance(count, int) else "the queries"
        parts.append(f"{queries} of other converted benchmarks beside them "
                     f"({', '.join(f'`{local_name(d)}`' for d in extra)}, "
                     "labelled with each sentence's ROUGE-2 recall)")
    if not parts:
        return "no data (this run did not train)" if not finetuning else "data the results file does not record"
    return " and ".join(parts)


def _steps_text(finetuning: FinetuningResults) -> str:
    """``"450 of 16 windows: 0.26 of an epoch over the 27,462 training windows"``: how much of its data the
    fine-tuning saw, so that a short run (``--max_steps``) reads as one."""
    steps = finetuning.steps
    if not isinstance(steps, int):
        return "not recorded"
    hyperparameters = finetuning.hyperparameters or {}
    batch = hyperparameters.get("per_device_train_batch_size")
    windows = finetuning.windows
    if not all(isinstance(value, int) and value > 0 for value in (batch, windows)):
        return f"{steps:,}"
    batch *= int(hyperparameters.get("gradient_accumulation_steps") or 1) * int(hyperparameters.get("world_size") or 1)
    per_epoch = math.ceil(windows / batch)  # an epoch smaller than a batch is one step
    if steps % per_epoch == 0:  # whole epochs, the usual run: "one epoch", "2 epochs"
        share = "one epoch" if steps == per_epoch else f"{steps // per_epoch} epochs"
    else:
        epochs = steps / per_epoch
        share = f"{epochs:.2f} of an epoch" if epochs < 1 else f"{epochs:.2f} epochs"
    return f"{steps:,} of {batch} windows: {share} over the {windows:,} training windows"


def _hyperparameter_table(values: Mapping[str, Any] | None) -> str:
    if not values:
        return "Hyperparameters: not recorded."
    rows = [[HYPERPARAMETER_NAMES.get(name, name), f"`{value}`"] for name, value in values.items()]
    return _markdown_table(["hyperparameter", "value"], rows, numeric_from=2)


def recipe_text(recipe: Any, results: TrainingResults | None = None) -> str | None:
    """One line on the training recipe a stage ran (`trainer_scripts.recipes`): its name and why, the value each of
    its settings had in the run, those the command line set, those the run used another value for than asked (with
    why: a saved model's own architecture, a CPU without native bf16), what the machine changed, and then the
    recipe's own description, named as the recipe's so that it is not read as what ran. ``None`` for results written
    before recipes; results written before the record held the settings used (`RecipeRecord.settings_used`) give the
    overrides only. Why the recipe was chosen names the encoder's folder: as the card names it (:func:`public_text`)
    when ``results`` are given."""
    if not recipe or not recipe.name:
        return None
    chosen = recipe.chosen or "chosen"
    text = f"`{recipe.name}` ({public_text(chosen, results) if results is not None else chosen})"
    used = recipe.settings_used
    if used and recipe.settings:
        text += ". Settings this run used: " + ", ".join(f"`--{name} {format_setting(value)}`"
                                                         for name, value in recipe.settings.items())
    if recipe.overrides:
        text += ("; set on the command line: " if used else "; overridden: ") + ", ".join(
            f"`--{name} {format_setting(value)}`" for name, value in recipe.overrides.items())
    if used and recipe.departures:
        text += "; not as asked: " + ", ".join(
            f"`--{name} {format_setting(recipe.settings.get(name))}` instead of "
            f"`{format_setting(departure.get('asked'))}` ({departure.get('why')})"
            for name, departure in recipe.departures.items())
    if recipe.notes:
        text += "; " + "; ".join(recipe.notes)
    if not recipe.description:
        return text
    return text + (f". The recipe describes itself: {recipe.description}" if used else f". {recipe.description}")


def _demo_summary(results: TrainingResults) -> str:
    parts = []
    pretraining, finetuning = results.pretraining, results.finetuning
    if pretraining:
        parts.append(f"pre-trained for {pretraining.recorded_or('steps', '?')} steps on "
                     f"{_examples_text(pretraining.examples)} of the WikiRef built from the embedded sample")
    if finetuning:
        parts.append(f"fine-tuned for {finetuning.recorded_or('steps', '?')} steps on the DUC data at hand "
                     f"(DUC {', '.join(map(str, finetuning.train_years or [])) or '?'})")
    return "; ".join(parts) or "trained for a few steps on a tiny sample"
