"""Render the Q-BERT model card from a training run's ``results.json`` with the template
``trainer_scripts/model_card.md`` (``model_card.md`` at the project root links to it).

The card says what the model does and how to use it, how it was trained (the objectives that ran, the subnetwork's
true share of the parameters, counted on the model and its mask), and the run's results in the shape of Table IV
(WikiRef, ROUGE-1/2/L F1) and Table VI (DUC 2005-2007, ROUGE-1/2/SU4 recall with 95% intervals) of Zhu et al. (2022),
*Transforming Wikipedia into Augmented Data for Query-Focused Summarization*, with the same numbers as ``model-index``
metadata (``huggingface_hub.ModelCardData`` / ``EvalResult``) and a plot of ROUGE-2 recall per DUC year. A published
row is printed beside this run's only with what differs between the two (encoder, data size, objectives, subnetwork).
A part the run did not do is rendered as "not evaluated" / "not part of this run", and a demo run
(``results["run"]["kind"] == "demo"``) is flagged at the top of the card and in its limitations.

``results`` is what the training scripts write, read as `trainer_scripts.results.TrainingResults` (all scores on a
0-1 scale; the card prints them ×100): its ``pretraining``, ``finetuning``, DUC ``evaluation`` (Table VI's shape),
``benchmark_evaluation`` (another benchmark's) and ``subnetwork``. A results file written by an older version of the
scripts is read as it is: what it does not record is "not recorded" on the card.

The ``results.json`` of an experiments folder (``wikiref experiments``, ``run_experiments.py``) is read as the
results of its best row's run (``results["best"]["card_results"]``), with that row's scores over the seeds under
``results.experiments`` (:func:`experiments_results`): the card then states them under its DUC table.
:func:`write_model_card` is how the training scripts write the card beside the model.

This module is the card's entry point: it renders the template with the sections and writes the card (and its plot)
beside the model, as the training scripts and the command below do. The sections are the package
:mod:`trainer_scripts.card`, one family per module: ``reading`` (the results file), ``names`` (how the card names
models, datasets and folders), ``metadata`` (the YAML front matter, ``model-index``), ``training`` (the training
paragraphs and recipes), ``architecture``, ``subnetwork`` (the sparse subnetwork and its pruning), ``tables`` (the
results tables and the headline), ``published`` (the paper's rows and what differs), ``experiments``, ``figures``,
``markdown`` (the table markup) and ``context`` (the values the template renders). Their public names are importable
from here (``from trainer_scripts.model_card import render_model_card, model_variant``).

Usage::

    python trainer_scripts/model_card.py --results out/model/results.json --model_repo org/qbert-wikiref \
        --output out/model/README.md
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_scripts.card.architecture import CLUSTER_RULE_TEXT, architecture_text, cluster_rule_text
from trainer_scripts.card.context import CITATION, PAPER, template_context
from trainer_scripts.card.experiments import experiments_benchmarks_table, experiments_note
from trainer_scripts.card.figures import DUC_FIGURE, duc_figure
from trainer_scripts.card.markdown import WIKIREF_MEASURES
from trainer_scripts.card.metadata import eval_results, model_card_data, training_datasets
from trainer_scripts.card.names import (
    HUB_BASE_MODELS,
    card_dataset_id,
    card_model_name,
    hub_base_model,
    is_hub_id,
    local_name,
    model_variant,
    public_text,
)
from trainer_scripts.card.published import (
    PAPER_TABLE_IV,
    PAPER_TABLE_VI,
    PublishedSetup,
    closest_published_row,
    published_note,
)
from trainer_scripts.card.reading import (
    ExperimentsFolderResults,
    ModelCardError,
    check_results,
    experiments_results,
    load_results,
)
from trainer_scripts.card.subnetwork import _subnetwork_text
from trainer_scripts.card.tables import (
    benchmark_table,
    benchmark_values,
    duc_table,
    duc_years,
    headline,
    model_rule,
    rules_note,
    wikiref_table,
)
from trainer_scripts.card.training import HYPERPARAMETER_NAMES, PRETRAINING_OBJECTIVES, recipe_text, training_data_text
from trainer_scripts.results import TrainingResults

__all__ = [
    # rendering and writing the card, the command line (this module)
    "TEMPLATE_PATH", "CardArguments", "build_model_card", "main", "render_model_card", "write_card",
    "write_model_card",
    # the sections (trainer_scripts.card)
    "CITATION", "CLUSTER_RULE_TEXT", "DUC_FIGURE", "HUB_BASE_MODELS", "HYPERPARAMETER_NAMES", "PAPER",
    "PAPER_TABLE_IV", "PAPER_TABLE_VI", "PRETRAINING_OBJECTIVES", "WIKIREF_MEASURES", "ExperimentsFolderResults",
    "ModelCardError", "PublishedSetup", "architecture_text", "benchmark_table", "benchmark_values", "card_dataset_id",
    "card_model_name", "check_results", "closest_published_row", "cluster_rule_text", "duc_figure", "duc_table",
    "duc_years", "eval_results", "experiments_benchmarks_table", "experiments_note", "experiments_results",
    "headline", "hub_base_model", "is_hub_id", "load_results", "local_name", "model_card_data", "model_rule",
    "model_variant", "public_text", "published_note", "recipe_text", "rules_note", "template_context",
    "training_data_text", "training_datasets", "wikiref_table",
    "_subnetwork_text",  # tests/trainer_scripts/test_model_card.py reads it from here
]  # fmt: skip

logger = logging.getLogger(__name__)

TEMPLATE_PATH = Path(__file__).resolve().with_name("model_card.md")  # package data; ./model_card.md links to it


def build_model_card(results: TrainingResults | Mapping[str, Any], *, model_repo: str, dataset_repo: str | None = None,
                     metric_repo: str | None = None, template_path: str | Path | None = None,
                     duc_figure_name: str | None = None) -> Any:
    """The rendered card as a ``huggingface_hub.ModelCard`` (``card.data`` holds the metadata, ``model-index``
    included)."""
    from huggingface_hub import ModelCard

    results = check_results(results)
    template_path = Path(template_path) if template_path is not None else TEMPLATE_PATH
    if not template_path.is_file():
        raise ModelCardError(f"{template_path}: the model card template is missing")
    data = model_card_data(results, model_repo=model_repo, dataset_repo=dataset_repo)
    context = template_context(results, model_repo=model_repo, dataset_repo=dataset_repo, metric_repo=metric_repo,
                               duc_figure_name=duc_figure_name)
    return ModelCard.from_template(data, template_path=str(template_path), **context)


def render_model_card(results: TrainingResults | Mapping[str, Any], *, model_repo: str, dataset_repo: str | None = None,
                      metric_repo: str | None = None, duc_figure_name: str | None = None) -> str:
    """The model card (README.md text) of a run, from its results (``duc_figure_name``: the plot's path relative to
    the card, when it was written)."""
    text = str(build_model_card(results, model_repo=model_repo, dataset_repo=dataset_repo, metric_repo=metric_repo,
                                duc_figure_name=duc_figure_name))
    return text if text.endswith("\n") else text + "\n"


def write_card(folder: str | Path, results: TrainingResults | Mapping[str, Any], *, model_repo: str,
               dataset_repo: str | None = None, metric_repo: str | None = None) -> Path:
    """Write ``folder/README.md`` and, when the run has a DUC evaluation, its plot ``folder/figures/duc_rouge2.png``."""
    results = check_results(results)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    figure = duc_figure(results, folder / DUC_FIGURE)
    path = folder / "README.md"
    path.write_text(render_model_card(results, model_repo=model_repo, dataset_repo=dataset_repo,
                                      metric_repo=metric_repo, duc_figure_name=DUC_FIGURE if figure else None),
                    encoding="utf-8")
    return path


def write_model_card(folder: str | os.PathLike, results: TrainingResults | Mapping[str, Any],
                     model_repo: str | None = None, dataset_repo: str | None = None) -> Path | None:
    """The training scripts' card: ``folder/README.md`` rendered from the run's ``results`` (:func:`write_card`).
    When a library the renderer needs is missing (huggingface_hub, jinja2, matplotlib), the model is still worth
    keeping: a warning and ``None``; a missing module of the project itself is a bug and raised."""
    try:
        return write_card(folder, results, model_repo=model_repo or Path(folder).name, dataset_repo=dataset_repo)
    except ImportError as error:
        missing = (error.name or "").split(".")[0]
        if not missing or missing in ("trainer_scripts", "wikiref_dataset", "modeling_qbert"):
            raise  # the project's own code is broken: say so, never hide it as "not available"
        logger.warning("no model card written: the card's renderer needs %s, which is not installed (%s)", missing,
                       error)
        return None


# ---- command line -------------------------------------------------------------------------------------------------


@dataclass
class CardArguments:
    """Render a model card from a results.json."""

    results: str = field(metadata={"help": "The run's results.json (written by pretrain_wikiref.py or "
                                           "finetune_duc.py into the model folder), or an experiments folder's "
                                           "(run_experiments.py): the card describes its best row's run."})
    model_repo: str = field(metadata={"help": "The model's Hub id, used in the usage snippets (org/name)."})
    output: str = field(default="README.md", metadata={
        "help": "Where to write the card. A run with a DUC evaluation also gets its ROUGE-2 plot, which the card "
                f"shows, at {DUC_FIGURE} beside it."})
    dataset_repo: str | None = field(default=None, metadata={"help": "The WikiRef dataset's Hub id, if published."})
    metric_repo: str | None = field(default=None, metadata={"help": "The DUC ROUGE metric's Hub id, if published."})


def main(argv: Sequence[str] | None = None) -> int:
    from transformers import HfArgumentParser

    (args,) = HfArgumentParser(CardArguments).parse_args_into_dataclasses(args=argv)
    try:
        results = load_results(args.results)
        text = render_model_card(results, model_repo=args.model_repo, dataset_repo=args.dataset_repo,
                                 metric_repo=args.metric_repo)
    except ModelCardError as error:
        print(f"model_card: error: {error}", file=sys.stderr)
        return 2
    output = Path(args.output)
    figure = duc_figure(results, output.parent / DUC_FIGURE)
    if figure:  # the card names the plot: render again with it
        text = render_model_card(results, model_repo=args.model_repo, dataset_repo=args.dataset_repo,
                                 metric_repo=args.metric_repo, duc_figure_name=DUC_FIGURE)
    output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}" + (f" and the plot it shows, {figure}" if figure else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
