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

``results`` is the dict the training scripts write (all scores on a 0-1 scale; the card prints them ×100)::

    {"script": "finetune_duc" | "pretrain_wikiref", "run": {"kind": "demo" | "full", "date", "command"},
     "base_model": str, "objective": "classification" | "regression",
     "pretraining": {"dataset", "examples": {split: n}, "hyperparameters": {...}, "steps", "train_loss",
                     "validation": {"examples", "threshold", "rouge_1_f", "rouge_2_f", "rouge_l_f"}} | None,
     "finetuning": {"train_years", "test_year", "objective", "pretraining_objective", "targets", "hyperparameters",
                    "subnetwork": {"fraction", "method", "changed_fraction", "trainable_fraction",
                                   "share": modeling_qbert.sparse.trainable_share(...)}, "steps", "train_loss"} | None,
     "evaluation": trainer_scripts.evaluate_duc.Evaluation.to_dict() | None}

The ``results.json`` of an experiments folder (``wikiref experiments``, ``run_experiments.py``) is read as the
results of its best row's run (``results["best"]["card_results"]``), with that row's scores over the seeds under
``results["experiments"]`` (:func:`experiments_results`): the card then states them under its DUC table.

Usage::

    python trainer_scripts/model_card.py --results out/model/results.json --model_repo org/qbert-wikiref \
        --output out/model/README.md
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_scripts.evaluate_duc import MEASURE_NAMES, MEASURES, format_cell
from trainer_scripts.experiments.tables import PAPER_WIKIREF_TRAIN, published_values
from wikiref_dataset.wikiref.dataset import WIKIREF_CITATION

TEMPLATE_PATH = Path(__file__).resolve().with_name("model_card.md")  # package data; ./model_card.md links to it
MODEL_SYSTEM = "Q-BERT"
"""The name of this model's row in ``results["evaluation"]["systems"]``."""

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


def load_results(path: str | Path) -> dict[str, Any]:
    """The results dict of a ``results.json``; a clear error for a missing or malformed file."""
    path = Path(path)
    if not path.is_file():
        raise ModelCardError(f"{path}: no such results file (the training scripts write results.json into the model "
                             "folder)")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ModelCardError(f"{path}: not valid JSON ({error})") from None
    if isinstance(results, Mapping) and results.get("script") == "run_experiments":
        return experiments_results(results, path.parent)
    check_results(results, where=str(path))
    return results


def experiments_results(experiments: Mapping[str, Any], folder: str | Path) -> dict[str, Any]:
    """The results of the best row's run in an experiments folder (``folder/results.json`` written by
    ``run_experiments.py``: its ``best`` names the row and the run's ``results.json``), with the row's scores over the
    seeds added as ``results["experiments"]``: ``{"row", "published_row", "seeds", "duc": {year: {measure: {"mean",
    "std", ...}}}, "folder", "models"}``.

    Raises:
        ModelCardError: the experiments have no finished DUC row, or its run's results are missing.
    """
    best = experiments.get("best")
    if not isinstance(best, Mapping) or not best.get("card_results"):
        raise ModelCardError(f"{folder}: the experiments have no finished DUC row to describe (results.json has no "
                             "'best')")
    results = load_results(Path(folder) / best["card_results"])
    row = (experiments.get("rows") or {}).get(best.get("variant")) or {}
    rows = experiments.get("rows") or {}
    benchmarks = {}
    for name, setting in ((experiments.get("settings") or {}).get("benchmarks") or {}).items():
        zero_shot = ((row.get("benchmarks") or {}).get(name) or {}).get("zero_shot")
        if zero_shot:
            benchmarks[name] = {"split": setting.get("split"), "queries": setting.get("queries"),
                                "zero_shot": zero_shot,
                                "baselines": {(rows.get(key) or {}).get("published_row") or key:
                                              ((rows.get(key) or {}).get("benchmarks") or {}).get(name, {}).get("baseline")
                                              for key in ("lead", "query_sim", "oracle")}}
    results["experiments"] = {"row": best.get("variant"), "published_row": best.get("published_row"),
                              "seeds": (experiments.get("settings") or {}).get("seeds"), "duc": row.get("duc") or {},
                              "benchmarks": benchmarks, "folder": str(folder), "models": best.get("models") or []}
    return results


def experiments_benchmarks_table(results: Mapping[str, Any]) -> str | None:
    """The other benchmarks the experiments scored this row on zero-shot (``wikiref experiments --qfs_dirs``): its
    models as trained on DUC, mean ± std over the seeds of ROUGE-1/2/L F1 ×100, beside the baselines; ``None`` when
    there were none."""
    from wikiref_dataset.qfs import benchmark_title

    benchmarks = (results.get("experiments") or {}).get("benchmarks") or {}
    if not benchmarks:
        return None
    header = ["System", *(f"{benchmark_title(name)} {label} F1" for name in benchmarks
                          for _, label in WIKIREF_MEASURES)]

    def cells(summary: Mapping[str, Any] | None) -> list[str]:
        found = []
        for measure, _ in WIKIREF_MEASURES:
            entry = (summary or {}).get(measure)
            found.append("-" if not entry else _percent(entry["mean"]) + (
                f" ± {_percent(entry['std'])}" if (summary or {}).get("runs", 1) > 1 else ""))
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


def experiments_note(results: Mapping[str, Any]) -> str | None:
    """One paragraph on the experiments this run belongs to: its row's mean ± std ROUGE recall over the seeds."""
    experiments = results.get("experiments")
    if not experiments or not experiments.get("duc"):
        return None
    parts = []
    for year, summary in sorted(experiments["duc"].items()):
        cells = [f"{MEASURE_NAMES[measure]} {_percent(summary[measure]['mean'])} ± {_percent(summary[measure]['std'])}"
                 for measure in MEASURES if (summary or {}).get(measure)]
        if cells:
            parts.append(f"DUC {year}: " + ", ".join(cells))
    seeds = experiments.get("seeds") or []
    return (f"This model is one run of the row `{experiments.get('row')}` of `wikiref experiments` "
            f"({experiments.get('published_row') or 'no published row'}); over its {len(seeds)} seed(s) and folds, "
            "ROUGE recall ×100, mean ± std: " + "; ".join(parts) + ".")


def check_results(results: Any, where: str = "results") -> None:
    """Raise :class:`ModelCardError` when ``results`` is not shaped like a training script's results."""
    if not isinstance(results, Mapping):
        raise ModelCardError(f"{where}: expected a JSON object, got {type(results).__name__}")
    for key in ("pretraining", "finetuning", "evaluation", "run"):
        if results.get(key) is not None and not isinstance(results[key], Mapping):
            raise ModelCardError(f"{where}: {key!r} must be an object or null")
    evaluation = results.get("evaluation")
    if evaluation is not None and not isinstance(evaluation.get("systems"), Mapping):
        raise ModelCardError(f"{where}: 'evaluation' has no 'systems' (expected evaluate_duc.py's JSON output)")


def _percent(value: Any) -> str:
    return f"{100 * float(value):.2f}" if isinstance(value, (int, float)) else "-"


def _loss(value: Any) -> str:
    return f"{float(value):.4f}" if isinstance(value, (int, float)) else "not recorded"


def run_kind(results: Mapping[str, Any]) -> str:
    """``"demo"``, ``"full"`` or ``"unspecified"``."""
    kind = (results.get("run") or {}).get("kind")
    return kind if kind in ("demo", "full") else "unspecified"


def model_variant(results: Mapping[str, Any]) -> str:
    """This model's row name in Table VI's words: Q-BERT + DA (pre-trained on WikiRef) + ST (subnetwork)."""
    finetuning = results.get("finetuning")
    if not finetuning:
        return "Q-BERT DA pre-trained" if results.get("pretraining") else "Q-BERT (untrained)"
    base = "BERT" if finetuning.get("pooling") == "cls" else "Q-BERT"
    # A run from a pre-trained Q-BERT folder records the objective it was pre-trained with; one from a plain encoder
    # (a new head: the rows without data augmentation) records none.
    pretrained = bool(results.get("pretraining")) or finetuning.get("pretraining_objective", "unknown") is not None
    name = f"{base} + DA" if pretrained else base
    fraction = (finetuning.get("subnetwork") or {}).get("fraction")
    return name + " + ST" if isinstance(fraction, (int, float)) and 0 < fraction < 1 else name


def is_hub_id(name: str) -> bool:
    """Whether ``name`` reads as a Hub repo id (``org/name``) rather than a local folder."""
    return bool(re.fullmatch(r"[\w.-]+/[\w.-]+", name)) and not Path(name).exists()


def hub_base_model(base_model: str | None) -> str | None:
    """A Hub id for the ``base_model`` metadata, or ``None`` when the run's encoder has none we know."""
    if not base_model:
        return None
    if is_hub_id(base_model):
        return base_model
    lowered = base_model.lower()
    return next((hub_id for name, hub_id in HUB_BASE_MODELS.items() if name in lowered), None)


# ---- tables -------------------------------------------------------------------------------------------------------


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> str:
    align = ["---" if column < numeric_from else "---:" for column in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def wikiref_table(results: Mapping[str, Any]) -> str | None:
    """Table IV's shape (validation columns, then test columns with the validation threshold when the run scored the
    test split), or ``None`` when not evaluated."""
    pretraining = results.get("pretraining") or {}
    validation = pretraining.get("validation")
    if not validation:
        return None
    test = pretraining.get("test") or {}
    objective = pretraining_objective(results)
    header = ["System", *(f"{split} {name} F1" for split in ("Validation", "Test") for _, name in WIKIREF_MEASURES)]
    rows = [[f"**Q-BERT, {objective} supervision (this run)**",
             *(f"**{_percent(validation.get(key))}**" for key, _ in WIKIREF_MEASURES),
             *((f"**{_percent(test.get(key))}**" if test else "not evaluated") for key, _ in WIKIREF_MEASURES)]]
    if objective not in PAPER_TABLE_IV:
        return _markdown_table(header, rows)
    rows.append([f"Q-BERT, {objective} supervision (published ‡)", *(f"{v:.2f}" for v in PAPER_TABLE_IV[objective])])
    setup = PublishedSetup(pretraining_objective=objective)
    return (_markdown_table(header, rows) + "\n\n‡ " + published_note(results, setup, wikiref=True))


def pretraining_objective(results: Mapping[str, Any]) -> str:
    """The objective WikiRef pre-training ran (older results name only the final objective, at the top level)."""
    return str((results.get("pretraining") or {}).get("objective") or results.get("objective") or "classification")


def _encoder_name(results: Mapping[str, Any]) -> str:
    base = str(results.get("base_model") or "not recorded")
    return hub_base_model(base) or base


def published_note(results: Mapping[str, Any], setup: PublishedSetup, wikiref: bool = False) -> str:
    """What a published row's training has that this run's has not (or the other way round), as one sentence."""
    differences = []
    encoder = _encoder_name(results)
    if setup.encoder.lower().replace("-", "") not in encoder.lower().replace("-", ""):
        differences.append(f"encoder {setup.encoder} (this run: {encoder})")
    pretraining = results.get("pretraining") or {}
    train = (pretraining.get("examples") or {}).get("train")
    if setup.wikiref_train and train != setup.wikiref_train:
        differences.append(f"WikiRef pre-training on {setup.wikiref_train:,} examples (this run: "
                           + (f"{train:,}" if isinstance(train, int) else "none recorded") + ")")
    if setup.wikiref_train is None and pretraining:
        differences.append(f"no WikiRef pre-training (this run: {pretraining_objective(results)} pre-training)")
    if setup.pretraining_objective and pretraining and pretraining_objective(results) != setup.pretraining_objective:
        differences.append(f"{setup.pretraining_objective} pre-training (this run: {pretraining_objective(results)})")
    if not wikiref:
        finetuning = results.get("finetuning") or {}
        tuned = finetuning.get("objective") or (results.get("objective") if finetuning else None)
        if setup.finetuning_objective and tuned != setup.finetuning_objective:
            differences.append(f"{setup.finetuning_objective} fine-tuning on DUC (this run: "
                               f"{tuned or 'no fine-tuning'})")
        if not setup.finetuning_objective and finetuning:
            differences.append(f"no DUC fine-tuning (this run: {tuned} fine-tuning)")
        fraction = (finetuning.get("subnetwork") or {}).get("fraction") if finetuning else None
        ours = fraction if isinstance(fraction, (int, float)) and 0 < fraction < 1 else None
        if setup.finetuning_objective and ours != setup.subnetwork_fraction:
            published = f"{100 * setup.subnetwork_fraction:g}% subnetwork" if setup.subnetwork_fraction else "all weights"
            differences.append(f"fine-tuning {published} (this run: "
                               + (f"{100 * ours:g}% subnetwork" if ours else "all weights") + ")")
        beyond = [text for key, value, text in (
            ("attention_scope", "sentence", "each sentence encoded alone"),
            ("query_similarity", True, "a query-similarity term in the scoring head")) if finetuning.get(key) == value]
        if finetuning.get("sentence_position_buckets"):
            beyond.append("a learned position bias")
        if beyond:
            differences.append(f"window attention and a linear scoring head (this run: {' and '.join(beyond)}, "
                               "options beyond the paper)")
        if finetuning.get("selection") not in (None, "duc"):
            differences.append(f"the paper's greedy selection rule (this run: {finetuning['selection']})")
        if run_kind(results) == "demo":
            differences.append("full training (this run: a demo of a few steps)")
    what = "The paper's published row" + ("" if wikiref else " closest to this run")
    if not differences:
        return f"{what}, trained as this run was (encoder, data, objectives)."
    return f"{what}; it differs from this run in: " + "; ".join(differences) + "."


def closest_published_row(results: Mapping[str, Any]) -> str:
    """The Table VI row of the paper trained most like this run (its variant; DA pre-trained by objective)."""
    variant = model_variant(results)
    if variant in PAPER_TABLE_VI:
        return variant
    return f"DA PRE-TRAINED ({pretraining_objective(results)})"


def duc_years(results: Mapping[str, Any]) -> list[str]:
    """The DUC years of the evaluation, sorted (as strings, the JSON keys)."""
    evaluation = results.get("evaluation") or {}
    years = set(evaluation.get("datasets") or {})
    for by_year in (evaluation.get("systems") or {}).values():
        years.update(by_year or {})
    return sorted(years)


def duc_table(results: Mapping[str, Any]) -> str | None:
    """Table VI's shape: one row per system, ROUGE-1/2/SU4 recall ×100 [95% CI] per DUC year; ``None`` when the run
    has no DUC evaluation. A year the model was fine-tuned on is marked: its score is not a test score."""
    evaluation = results.get("evaluation")
    if not evaluation or not evaluation.get("systems"):
        return experiments_note(results)  # a pre-trained model the experiments scored on DUC without fine-tuning
    years = duc_years(results)
    trained_on = {str(year) for year in ((results.get("finetuning") or {}).get("train_years") or [])}
    header = ["System", *(f"DUC {year} {MEASURE_NAMES[measure]}" for year in years for measure in MEASURES)]
    rows = []
    systems = evaluation["systems"]
    ordered = [name for name in systems if name != MODEL_SYSTEM] + ([MODEL_SYSTEM] if MODEL_SYSTEM in systems else [])
    for name in ordered:
        by_year = systems[name] or {}
        cells = []
        for year in years:
            for measure in MEASURES:
                cell = format_cell(by_year.get(year), measure)
                if name == MODEL_SYSTEM and cell != "-":
                    cell = f"**{cell}**" + (" †" if year in trained_on else "")
                cells.append(cell)
        label = f"**{model_variant(results)} (this model)**" if name == MODEL_SYSTEM else name
        rows.append([label, *cells])
    row = closest_published_row(results)
    setup, published = PAPER_TABLE_VI[row]
    note = None
    if any(year.isdigit() and int(year) in published for year in years):
        cells = []
        for year in years:
            values = published.get(int(year)) if year.isdigit() else None
            cells += [f"{values[0]:.2f}", f"{values[1]:.2f}", "n/a"] if values else ["-", "-", "-"]
        rows.append([f"{row} (published ‡)", *cells])
        note = published_note(results, setup)
    table = _markdown_table(header, rows)
    if note:
        table += "\n\n‡ " + note
    if trained_on & set(years):
        table += ("\n\n† a year this model was fine-tuned on (DUC " + ", ".join(sorted(trained_on)) +
                  "): a training score, not a test score.")
    note = experiments_note(results)
    return table + ("\n\n" + note if note else "")


def benchmark_values(results: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(split key, value)`` of a run fine-tuned and tested on another benchmark (``finetune_duc.py --qfs_dir``):
    the key its scores are under (``qmsum/validation``) and the value they report (``f`` or ``recall``); ``None`` for
    a DUC run."""
    evaluation = results.get("benchmark_evaluation") or {}
    for by_split in (evaluation.get("systems") or {}).values():
        for key, values in (by_split or {}).items():
            return key, "f" if "rouge_1_f" in (values or {}) else "recall"
    return None


def benchmark_table(results: Mapping[str, Any]) -> str | None:
    """One row per system on the benchmark a run was fine-tuned and tested on: ROUGE-1/2/L ×100 [95% CI] as that
    benchmark's papers score it; ``None`` for a DUC run."""
    found = benchmark_values(results)
    if found is None:
        return None
    key, value = found
    systems = results["benchmark_evaluation"]["systems"]
    header = ["System", *(f"{name} {'F1' if value == 'f' else 'recall'}" for _, name in WIKIREF_MEASURES)]
    rows = []
    ordered = [name for name in systems if name != MODEL_SYSTEM] + ([MODEL_SYSTEM] if MODEL_SYSTEM in systems else [])
    for name in ordered:
        values = (systems[name] or {}).get(key)
        cells = []
        for measure, _ in WIKIREF_MEASURES:
            measure = measure[:-2]  # rouge_1_f -> rouge_1; a measure the results lack is "-", as a system they lack
            cell = format_cell(values if values and f"{measure}_{value}" in values else None, measure, value)
            cells.append(f"**{cell}**" if name == MODEL_SYSTEM and cell != "-" else cell)
        rows.append([f"**{model_variant(results)} (this model)**" if name == MODEL_SYSTEM else name, *cells])
    return _markdown_table(header, rows)


# ---- metadata -----------------------------------------------------------------------------------------------------


def eval_results(results: Mapping[str, Any], dataset_repo: str | None = None) -> list[Any]:
    """The ``model-index`` entries: this model's WikiRef validation and DUC test-year scores, ×100."""
    from huggingface_hub import EvalResult

    demo = " (demo sample)" if run_kind(results) == "demo" else ""
    task = {"task_type": "summarization", "task_name": "Query-focused extractive summarization"}
    entries = []
    pretraining = results.get("pretraining") or {}
    validation = pretraining.get("validation")
    if validation:
        dataset = str(pretraining.get("dataset") or "")
        dataset_type = dataset_repo or (dataset if is_hub_id(dataset) else "wikiref")
        for key, name in WIKIREF_MEASURES:
            if isinstance(validation.get(key), (int, float)):
                entries.append(EvalResult(**task, dataset_type=dataset_type, dataset_name=f"WikiRef{demo}",
                                          dataset_split="validation", metric_type="rouge",
                                          metric_name=f"{name} F1 (x100)",
                                          metric_value=round(100 * float(validation[key]), 2)))
    evaluation = results.get("evaluation") or {}
    trained_on = {str(year) for year in ((results.get("finetuning") or {}).get("train_years") or [])}
    for year, values in ((evaluation.get("systems") or {}).get(MODEL_SYSTEM) or {}).items():
        if not values or str(year) in trained_on:
            continue
        for measure in MEASURES:
            key = f"{measure}_recall"
            if isinstance(values.get(key), (int, float)):
                entries.append(EvalResult(**task, dataset_type="duc", dataset_name=f"DUC {year}{demo}",
                                          dataset_config=str(year), dataset_split="test", metric_type="rouge",
                                          metric_name=f"{MEASURE_NAMES[measure]} recall (x100)",
                                          metric_value=round(100 * float(values[key]), 2),
                                          metric_args={"rouge_args": evaluation.get("settings")}))
    found = benchmark_values(results)
    if found is not None:  # the benchmark the run was fine-tuned and tested on
        key, value = found
        benchmark = (results.get("finetuning") or {}).get("benchmark") or {}
        values = (results["benchmark_evaluation"]["systems"].get(MODEL_SYSTEM) or {}).get(key) or {}
        for measure, name in WIKIREF_MEASURES:
            measure = measure[:-2] + "_" + value
            if isinstance(values.get(measure), (int, float)):
                entries.append(EvalResult(**task, dataset_type=key.split("/")[0],
                                          dataset_name=f"{benchmark.get('title') or key.split('/')[0]}{demo}",
                                          dataset_split=key.split("/", 1)[-1], metric_type="rouge",
                                          metric_name=f"{name} {'F1' if value == 'f' else 'recall'} (x100)",
                                          metric_value=round(100 * float(values[measure]), 2),
                                          metric_args={"rouge_args": results["benchmark_evaluation"].get("settings")}))
    return entries


def model_card_data(results: Mapping[str, Any], *, model_repo: str, dataset_repo: str | None = None) -> Any:
    """The card's YAML metadata (``huggingface_hub.ModelCardData``), ``model-index`` included when there are
    results."""
    from huggingface_hub import ModelCardData

    tags = ["query-focused-summarization", "extractive-summarization", "q-bert", "wikiref", "custom_code"]
    if run_kind(results) == "demo":
        tags.append("demo")
    entries = eval_results(results, dataset_repo)
    # no pipeline_tag: the Hub's task list has no query-focused summarization, and "summarization" would invite the
    # Hub's text2text widget, which this model does not serve; the card names the pipeline it registers instead
    return ModelCardData(
        language="en", license="apache-2.0", library_name="transformers", pipeline_tag=None,
        tags=tags, base_model=hub_base_model(results.get("base_model")),
        datasets=training_datasets(results, dataset_repo) or None, metrics=["rouge"],
        model_name=model_repo.split("/")[-1], eval_results=entries or None,
    )


def training_datasets(results: Mapping[str, Any], dataset_repo: str | None = None) -> list[str]:
    """Hub ids of the training data for the ``datasets:`` metadata: the WikiRef repo (given, or the Hub id the run
    loaded). DUC is NIST's and has no Hub id; the card's text names it."""
    found = [dataset_repo] if dataset_repo else []
    dataset = str((results.get("pretraining") or {}).get("dataset") or "")
    if not found and dataset and is_hub_id(dataset):
        found.append(dataset)
    return found


def duc_figure(results: Mapping[str, Any], path: str | Path) -> Path | None:
    """ROUGE-2 recall ×100 per DUC year, this model beside the baselines, with the 95% interval as error bars
    (a PNG at ``path``); ``None`` when the run has no DUC evaluation."""
    evaluation = results.get("evaluation") or {}
    systems = evaluation.get("systems") or {}
    years = duc_years(results)
    if not systems or not years:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [name for name in systems if name != MODEL_SYSTEM] + ([MODEL_SYSTEM] if MODEL_SYSTEM in systems else [])
    trained_on = {str(year) for year in ((results.get("finetuning") or {}).get("train_years") or [])}
    width = 0.8 / len(names)
    figure, axis = plt.subplots(figsize=(max(5.5, 1.5 + 0.55 * len(names) * len(years)), 4.0))
    for index, name in enumerate(names):
        positions, means, errors = [], [], [[], []]
        for position, year in enumerate(years):
            values = (systems[name] or {}).get(year)
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
    axis.set_title("ROUGE-2 recall with 95% bootstrap intervals" + (" (demo run)" if run_kind(results) == "demo"
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


def _demo_summary(results: Mapping[str, Any]) -> str:
    parts = []
    pretraining, finetuning = results.get("pretraining"), results.get("finetuning")
    if pretraining:
        parts.append(f"pre-trained for {pretraining.get('steps', '?')} steps on "
                     f"{_examples_text(pretraining.get('examples'))} of the WikiRef built from the embedded sample")
    if finetuning:
        parts.append(f"fine-tuned for {finetuning.get('steps', '?')} steps on the DUC data at hand "
                     f"(DUC {', '.join(map(str, finetuning.get('train_years') or [])) or '?'})")
    return "; ".join(parts) or "trained for a few steps on a tiny sample"


def _steps_text(finetuning: Mapping[str, Any]) -> str:
    """``"450 of 16 windows: 0.26 of an epoch over the 27,462 training windows"``: how much of its data the
    fine-tuning saw, so that a short run (``--max_steps``) reads as one."""
    steps = finetuning.get("steps")
    if not isinstance(steps, int):
        return "not recorded"
    hyperparameters = finetuning.get("hyperparameters") or {}
    batch = hyperparameters.get("per_device_train_batch_size")
    windows = finetuning.get("windows")
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


def training_data_text(results: Mapping[str, Any]) -> str:
    """What the model was trained on, in words: WikiRef pre-training (this run's, or the starting model's as its
    results record it), DUC years, a benchmark's split."""
    from wikiref_dataset.qfs import benchmark_content

    parts = []
    if results.get("pretraining"):
        parts.append("WikiRef (Wikipedia statements and the web pages they cite; queries: an article title and a "
                     "section path)")
    finetuning = results.get("finetuning") or {}
    benchmark = finetuning.get("benchmark") or {}
    if benchmark:
        what = benchmark_content(str(benchmark.get("benchmark")))
        parts.append(f"{benchmark.get('title', benchmark.get('benchmark'))}'s `{benchmark.get('train_split')}` split "
                     f"({what})")
    elif finetuning.get("train_years"):
        years = ", ".join(map(str, finetuning["train_years"]))
        parts.append(f"DUC {years} (news clusters; queries: a topic's title and narrative)")
    if not parts:
        return "no data (this run did not train)" if not finetuning else "data the results file does not record"
    return " and ".join(parts)


def _subnetwork_text(finetuning: Mapping[str, Any], wikiref: bool = True) -> str:
    """What fine-tuning could change, in numbers counted on the trained model and its mask: "p% of each encoder
    matrix + embeddings + head = N% of all parameters" (``wikiref``: the model fine-tuning started from was
    pre-trained on WikiRef; else it is named by its path)."""
    subnetwork = finetuning.get("subnetwork") or {}
    share = subnetwork.get("share") or {}
    fraction = subnetwork.get("fraction")
    if not isinstance(fraction, (int, float)) or fraction <= 0 or fraction >= 1:
        total = share.get("total_parameters")
        return (f"All {total:,} parameters were fine-tuned (no subnetwork)." if isinstance(total, int)
                else "All weights were fine-tuned (no subnetwork).")
    start = ("the WikiRef pre-trained model" if wikiref
             else f"the model fine-tuning started from (`{finetuning.get('init_checkpoint', 'not recorded')}`)")
    method = {"one_step": "one-step identification: in each encoder matrix the top entries by magnitude of "
                          + start,
              "iterative": "gradual magnitude pruning (Zhu & Gupta 2017) during WikiRef pre-training, the mask "
                           "saved with the pre-trained model"}.get(
        subnetwork.get("method"), f"method {subnetwork.get('method')!r}")
    text = f"Only a sparse subnetwork was trained (§III-F of the paper), chosen by {method}"
    if not share:  # results written before the share was recorded: say only what is known
        return text + f": {100 * fraction:g}% of each encoder matrix; embeddings and the scoring head fully trainable."
    groups = share.get("fully_trainable") or {}
    names = {"embeddings": "embeddings", "encoder": "encoder biases and LayerNorm", "head": "pooling and scoring head"}
    rest = " + ".join(f"{names.get(group, group)} ({count:,})" for group, count in groups.items())
    tensors = f"{share.get('masked_matrices', share['masked_tensors'])} encoder matrices"
    if share.get("masked_vectors"):
        tensors += f" and {share['masked_vectors']} bias/LayerNorm vectors"
    text += (f": {100 * share['mask_density']:.2f}% of each of the {tensors} "
             f"({share['masked_trainable']:,} of {share['masked_entries']:,} entries)" + (f" + {rest}" if rest else "")
             + f" = {share['trainable_parameters']:,} of {share['total_parameters']:,} parameters, "
             f"**{100 * share['trainable_share']:.2f}% of all parameters**. The other entries are bit-identical to "
             "the pre-trained ones")
    if isinstance(subnetwork.get("changed_fraction"), (int, float)):
        text += f"; {100 * subnetwork['changed_fraction']:.2f}% of the masked matrices' entries changed"
    return text + "."


def _pruning_text(results: Mapping[str, Any]) -> str:
    """The gradual pruning of an iterative subnetwork (``results["subnetwork"]``): its schedule, the final density
    of the mask and whether the run reached the schedule's target; ``""`` for other subnetworks."""
    record = results.get("subnetwork") or {}
    schedule = record.get("schedule") or {}
    if record.get("method") != "iterative":
        return ""
    text = "Gradual magnitude pruning (Zhu & Gupta, 2017) during WikiRef pre-training"
    if schedule:
        text += (f": from {100 * schedule.get('initial_fraction', 1.0):g}% to {100 * record.get('fraction', 0):g}% of "
                 f"each encoder matrix between steps {schedule.get('begin_step', '?')} and "
                 f"{schedule.get('end_step', '?')}, pruning every {schedule.get('update_frequency', '?')} steps")
    density = record.get("final_density")
    if isinstance(density, (int, float)):
        text += f"; the final mask keeps **{100 * density:.2f}%** of their entries"
    if schedule.get("reached_target") is False:
        text += (f" — the run ended (step {schedule.get('steps', '?')}) before the schedule reached its target, so "
                 "the subnetwork is larger than asked")
    return text + "."


def _objective_text(results: Mapping[str, Any]) -> str:
    """The objectives that ran: WikiRef pre-training's and DUC fine-tuning's (with the targets it trained on)."""
    parts = []
    if results.get("pretraining"):
        objective = pretraining_objective(results)
        parts.append("WikiRef pre-training: " + PRETRAINING_OBJECTIVES.get(objective, objective))
    finetuning = results.get("finetuning")
    if finetuning:
        objective = finetuning.get("objective") or results.get("objective", "not recorded")
        targets = finetuning.get("targets") or "each sentence's ROUGE-2 recall against the references"
        switched = finetuning.get("pretraining_objective")
        note = (f" (switched from {switched} pre-training on purpose)" if switched and switched != objective else "")
        data = ((finetuning.get("benchmark") or {}).get("title") or "DUC")
        parts.append(f"{data} fine-tuning: {objective}, {targets}{note}")
    final = results.get("objective", "classification")
    meaning = {"classification": "scores are probabilities that a sentence belongs in the summary",
               "regression": "scores estimate a sentence's ROUGE-2 against the references"}.get(final)
    if not parts:
        return f"{final} head, not trained by this run."
    return "; ".join(parts) + (f" ({meaning})." if meaning else ".")


def recipe_text(recipe: Mapping[str, Any] | None) -> str | None:
    """One line on the training recipe a stage ran (`trainer_scripts.recipes`): its name, why, the settings the
    command line overrode and what the machine changed; ``None`` for results written before recipes."""
    if not recipe or not recipe.get("name"):
        return None
    text = f"`{recipe['name']}` ({recipe.get('chosen') or 'chosen'})"
    overrides = recipe.get("overrides") or {}
    if overrides:
        text += "; overridden: " + ", ".join(f"`--{name} {value}`" for name, value in overrides.items())
    notes = recipe.get("notes") or []
    if notes:
        text += "; " + "; ".join(notes)
    description = recipe.get("description")
    return text + (f". {description}" if description else "")


CLUSTER_RULE_TEXT = {
    "duc": "the paper's DUC rule (by score, skipping a sentence with more than half of its bigrams in the summary)",
    "mmr": "maximal marginal relevance (score against the largest unigram cosine to the summary)",
    "ilp": "bigram concept coverage (the bigrams of the 300 best-scored sentences, weighted by their scores, covered "
           "under the word budget by integer linear programming; Gillick and Favre, 2009)",
}
"""What each cluster selection rule (``finetune_duc.py --selection``, ``config.cluster_selection``) is, for the card."""


def model_settings(results: Mapping[str, Any]) -> dict[str, Any]:
    """How the checkpoint reads and scores, as its run recorded it: the pre-training recipe's settings and
    architecture, then what fine-tuning recorded (the later stage wins)."""
    pretraining = results.get("pretraining") or {}
    finetuning = results.get("finetuning") or {}
    settings = {**((pretraining.get("recipe") or {}).get("settings") or {}), **(pretraining.get("architecture") or {})}
    for key in ("packing", "pooling", "attention_scope", "query_similarity", "sentence_position_buckets"):
        if finetuning.get(key) is not None:
            settings[key] = finetuning[key]
    return settings


def architecture_text(results: Mapping[str, Any], max_length: int) -> str:
    """The card's Architecture paragraph for what this checkpoint does: the paper's joint windows, or (the
    `sentence-encoder` recipe) each sentence encoded alone; its pooling; the query-similarity term and the position
    bias where it has them."""
    settings = model_settings(results)
    base = results.get("base_model") or "base encoder not recorded"
    if settings.get("attention_scope") == "sentence":
        reading = (f"a BERT encoder ({base}) reads the query (`[CLS] [L1] level 1 [L2] level 2 … [SEP]`) and whole "
                   f"document sentences packed side by side in {max_length}-token windows, but the query and each "
                   "sentence attend only to themselves (a block-diagonal attention mask, positions restarting at each "
                   "part): each is encoded alone, as a sentence-embedding encoder was trained")
    elif settings.get("packing") == "sentences":
        reading = (f"a BERT encoder ({base}) reads `[CLS] [L1] level 1 [L2] level 2 … [SEP] document [SEP]` (query "
                   f"segment 0, document segment 1), whole sentences packed side by side in {max_length}-token "
                   "windows, every token attending to every other")
    else:
        reading = (f"a BERT encoder ({base}) reads `[CLS] [L1] level 1 [L2] level 2 … [SEP] document [SEP]` (query "
                   f"segment 0, document segment 1; long documents in {max_length}-token windows with a stride, each "
                   "sentence scored once, in the window where its context is largest)")
    pooling = settings.get("pooling", "query_focused")
    pooled = {"query_focused": "**Query-focused pooling** turns each sentence's token encodings H_j into a vector "
                               "v_j = softmax(h_Q W_q H_jᵀ) H_j, with h_Q the mean encoding of the query tokens",
              "attention": "**Attention pooling** (a learned query vector) turns each sentence's token encodings into "
                           "one vector",
              "mean": "Each sentence's token encodings are **averaged**",
              "max": "Each sentence's token encodings are **max-pooled**",
              "cls": "A [CLS] token before each sentence gives its vector"}.get(pooling, f"{pooling} pooling")
    extras = []
    if settings.get("query_similarity"):
        extras.append("a learned multiple of the cosine between the query and the sentence")
    buckets = settings.get("sentence_position_buckets") or 0
    if buckets:
        extras.append(f"a learned bias for the sentence's place in its document ({buckets} positions)")
    head = "a linear **scoring head** gives one score per sentence"
    if extras:
        head += ", to which each score adds " + " and ".join(extras)
    return f"{reading}. {pooled}, and {head}."


def cluster_rule_text(finetuning: Mapping[str, Any] | None) -> str:
    """The rule the model's cluster summaries were chosen with (the paper's for a run that recorded none)."""
    rule = (finetuning or {}).get("selection") or "duc"
    return CLUSTER_RULE_TEXT.get(rule, f"the {rule!r} rule")


def template_context(results: Mapping[str, Any], *, model_repo: str, dataset_repo: str | None = None,
                     metric_repo: str | None = None, duc_figure_name: str | None = None) -> dict[str, Any]:
    """The values ``model_card.md`` renders."""
    pretraining = results.get("pretraining") or None
    finetuning = results.get("finetuning") or None
    evaluation = results.get("evaluation") or {}
    kind = run_kind(results)
    objective = results.get("objective", "classification")
    hyperparameters = (pretraining or {}).get("hyperparameters") or (finetuning or {}).get("hyperparameters") or {}
    validation = (pretraining or {}).get("validation") or {}
    return {
        "model_name": model_repo.split("/")[-1],
        "model_repo": model_repo,
        "metric_repo": metric_repo,
        "demo": kind == "demo",
        "run_kind": kind,
        "run_date": (results.get("run") or {}).get("date", "date not recorded"),
        "demo_summary": _demo_summary(results),
        "base_model": results.get("base_model") or "base encoder not recorded",
        "max_length": hyperparameters.get("max_length", 512),
        "objective_text": _objective_text(results),
        "finetuning_objective": (f"{(finetuning or {}).get('objective') or objective}: "
                                 + ((finetuning or {}).get("targets") or "per-sentence ROUGE-2 recall")),
        "paper": PAPER,
        "duc_figure": duc_figure_name if duc_figure_name and results.get("evaluation") else None,
        "pretraining": pretraining,
        "pretraining_dataset": f"`{pretraining.get('dataset')}`" if pretraining and pretraining.get("dataset")
        else "not recorded",
        "pretraining_examples": _examples_text((pretraining or {}).get("examples")),
        "pretraining_loss": _loss((pretraining or {}).get("train_loss")),
        "pretraining_hyperparameters": _hyperparameter_table((pretraining or {}).get("hyperparameters")),
        "pretraining_recipe": recipe_text((pretraining or {}).get("recipe")),
        "finetuning_recipe": recipe_text((finetuning or {}).get("recipe")),
        "finetuning": finetuning,
        "train_years": " and ".join(map(str, (finetuning or {}).get("train_years") or [])) or "(not recorded)",
        "test_year": (finetuning or {}).get("test_year", "(not recorded)"),
        "subnetwork_text": _subnetwork_text(finetuning or {}, wikiref=bool(pretraining)),
        "pruning_text": _pruning_text(results),
        "finetuning_loss": _loss((finetuning or {}).get("train_loss")),
        "finetuning_steps": _steps_text(finetuning or {}),
        "training_data_text": training_data_text(results),
        "uses_duc": bool((finetuning or {}).get("train_years")) or bool(results.get("evaluation")),
        "finetuning_hyperparameters": _hyperparameter_table((finetuning or {}).get("hyperparameters")),
        "wikiref_table": wikiref_table(results),
        "wikiref_threshold": (f" (threshold {validation['threshold']:g} tuned for ROUGE-2 F1, "
                              f"{validation.get('examples', '?')} validation examples)"
                              if isinstance(validation.get("threshold"), (int, float)) else ""),
        "duc_table": duc_table(results),
        "cluster_rule": cluster_rule_text(finetuning),
        "architecture_text": architecture_text(results, hyperparameters.get("max_length", 512)),
        "cluster_rule_name": (finetuning or {}).get("selection") or "duc",
        "experiments_benchmarks_table": experiments_benchmarks_table(results),
        "benchmark": (finetuning or {}).get("benchmark"),
        "benchmark_table": benchmark_table(results),
        "benchmark_settings": (results.get("benchmark_evaluation") or {}).get("settings"),
        "benchmark_source": (results.get("benchmark_evaluation") or {}).get("source"),
        "benchmark_budgets": _budgets_text(((finetuning or {}).get("benchmark") or {}).get("budgets")),
        "duc_settings": evaluation.get("settings", "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250"),
        "citation": CITATION,
    }


def build_model_card(results: Mapping[str, Any], *, model_repo: str, dataset_repo: str | None = None,
                     metric_repo: str | None = None, template_path: str | Path | None = None,
                     duc_figure_name: str | None = None) -> Any:
    """The rendered card as a ``huggingface_hub.ModelCard`` (``card.data`` holds the metadata, ``model-index``
    included)."""
    from huggingface_hub import ModelCard

    check_results(results)
    template_path = Path(template_path) if template_path is not None else TEMPLATE_PATH
    if not template_path.is_file():
        raise ModelCardError(f"{template_path}: the model card template is missing")
    data = model_card_data(results, model_repo=model_repo, dataset_repo=dataset_repo)
    context = template_context(results, model_repo=model_repo, dataset_repo=dataset_repo, metric_repo=metric_repo,
                               duc_figure_name=duc_figure_name)
    return ModelCard.from_template(data, template_path=str(template_path), **context)


DUC_FIGURE = "figures/duc_rouge2.png"
"""Where :func:`write_card` puts the DUC plot, relative to the card."""


def render_model_card(results: dict, *, model_repo: str, dataset_repo: str | None = None,
                      metric_repo: str | None = None, duc_figure_name: str | None = None) -> str:
    """The model card (README.md text) of a run, from its results dict (``duc_figure_name``: the plot's path
    relative to the card, when it was written)."""
    text = str(build_model_card(results, model_repo=model_repo, dataset_repo=dataset_repo, metric_repo=metric_repo,
                                duc_figure_name=duc_figure_name))
    return text if text.endswith("\n") else text + "\n"


def write_card(folder: str | Path, results: dict, *, model_repo: str, dataset_repo: str | None = None,
               metric_repo: str | None = None) -> Path:
    """Write ``folder/README.md`` and, when the run has a DUC evaluation, its plot ``folder/figures/duc_rouge2.png``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    figure = duc_figure(results, folder / DUC_FIGURE)
    path = folder / "README.md"
    path.write_text(render_model_card(results, model_repo=model_repo, dataset_repo=dataset_repo,
                                      metric_repo=metric_repo, duc_figure_name=DUC_FIGURE if figure else None),
                    encoding="utf-8")
    return path


# ---- command line -------------------------------------------------------------------------------------------------


@dataclass
class CardArguments:
    """Render a model card from a results.json."""

    results: str = field(metadata={"help": "The run's results.json (written by pretrain_wikiref.py or "
                                           "finetune_duc.py into the model folder), or an experiments folder's "
                                           "(run_experiments.py): the card describes its best row's run."})
    model_repo: str = field(metadata={"help": "The model's Hub id, used in the usage snippets (org/name)."})
    output: str = field(default="README.md", metadata={"help": "Where to write the card."})
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
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
