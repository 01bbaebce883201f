"""Render the Q-BERT model card from a training run's ``results.json`` with the template
``trainer_scripts/model_card.md`` (``model_card.md`` at the project root links to it).

The card says what the model does and how to use it, how it was trained, and the run's results in the shape of paper
001's Table IV (WikiRef, ROUGE-1/2/L F1) and Table VI (DUC 2005-2007, ROUGE-1/2/SU4 recall with 95% intervals), with
the same numbers as ``model-index`` metadata (``huggingface_hub.ModelCardData`` / ``EvalResult``). A part the run did
not do is rendered as "not evaluated" / "not part of this run", and a demo run (``results["run"]["kind"] == "demo"``)
is flagged at the top of the card and in its limitations.

``results`` is the dict the training scripts write (all scores on a 0-1 scale; the card prints them ×100)::

    {"script": "finetune_duc" | "pretrain_wikiref", "run": {"kind": "demo" | "full", "date", "command"},
     "base_model": str, "objective": "classification" | "regression",
     "pretraining": {"dataset", "examples": {split: n}, "hyperparameters": {...}, "steps", "train_loss",
                     "validation": {"examples", "threshold", "rouge_1_f", "rouge_2_f", "rouge_l_f"}} | None,
     "finetuning": {"train_years", "test_year", "hyperparameters", "subnetwork": {"fraction", "method",
                    "changed_fraction", "trainable_fraction"}, "steps", "train_loss"} | None,
     "evaluation": trainer_scripts.evaluate_duc.Evaluation.to_dict() | None}

Usage::

    python trainer_scripts/model_card.py --results out/model/results.json --model_repo org/qbert-wikiref \
        --output out/model/README.md
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_scripts.evaluate_duc import MEASURE_NAMES, MEASURES, format_cell
from wikiref_dataset.builder import WIKIREF_CITATION

TEMPLATE_PATH = Path(__file__).resolve().with_name("model_card.md")  # package data; ./model_card.md links to it
MODEL_SYSTEM = "Q-BERT"
"""The name of this model's row in ``results["evaluation"]["systems"]``."""

CITATION = WIKIREF_CITATION  # paper 001, as the WikiRef dataset card cites it


# Published numbers of paper 001 (BERT-base, full WikiRef), printed beside this run's for scale.
PAPER_TABLE_IV = {  # Q-BERT, Dev: ROUGE-1/2/L F1 x100
    "classification": (35.85, 18.91, 30.59),
    "regression": (34.83, 18.18, 29.51),
}
PAPER_TABLE_VI = {  # Q-BERT + DA + ST: year -> ROUGE-1, ROUGE-2 recall x100 (the paper gives no SU4)
    2005: (39.21, 8.62),
    2006: (41.96, 10.29),
    2007: (45.06, 12.55),
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
    check_results(results, where=str(path))
    return results


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
        return "Q-BERT DA pre-trained" if results.get("pretraining") else "Q-BERT"
    name = "Q-BERT + DA" if results.get("pretraining") or results.get("script") == "finetune_duc" else "Q-BERT"
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
    objective = results.get("objective", "classification")
    header = ["System", *(f"{split} {name} F1" for split in ("Validation", "Test") for _, name in WIKIREF_MEASURES)]
    rows = [[f"**Q-BERT, {objective} supervision (this run)**",
             *(f"**{_percent(validation.get(key))}**" for key, _ in WIKIREF_MEASURES),
             *((f"**{_percent(test.get(key))}**" if test else "not evaluated") for key, _ in WIKIREF_MEASURES)]]
    if objective in PAPER_TABLE_IV:
        rows.append([f"Q-BERT, {objective} supervision (paper 001, BERT-base, full WikiRef dev)",
                     *(f"{value:.2f}" for value in PAPER_TABLE_IV[objective]), *["(see paper)"] * 3])
    return _markdown_table(header, rows)


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
        return None
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
    published = [year for year in years if year.isdigit() and int(year) in PAPER_TABLE_VI]
    if published:
        cells = []
        for year in years:
            values = PAPER_TABLE_VI.get(int(year)) if year.isdigit() else None
            cells += [f"{values[0]:.2f}", f"{values[1]:.2f}", "n/a"] if values else ["-", "-", "-"]
        rows.append(["Q-BERT + DA + ST (paper 001, BERT-base, published)", *cells])
    table = _markdown_table(header, rows)
    if trained_on & set(years):
        table += ("\n\n† a year this model was fine-tuned on (DUC " + ", ".join(sorted(trained_on)) +
                  "): a training score, not a test score.")
    return table


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
    return entries


def model_card_data(results: Mapping[str, Any], *, model_repo: str, dataset_repo: str | None = None) -> Any:
    """The card's YAML metadata (``huggingface_hub.ModelCardData``), ``model-index`` included when there are
    results."""
    from huggingface_hub import ModelCardData

    tags = ["query-focused-summarization", "extractive-summarization", "q-bert", "wikiref", "custom_code"]
    if run_kind(results) == "demo":
        tags.append("demo")
    entries = eval_results(results, dataset_repo)
    return ModelCardData(
        language="en", license="apache-2.0", library_name="transformers", pipeline_tag="summarization",
        tags=tags, base_model=hub_base_model(results.get("base_model")),
        datasets=[dataset_repo] if dataset_repo else None, metrics=["rouge"],
        model_name=model_repo.split("/")[-1], eval_results=entries or None,
    )


# ---- the card -----------------------------------------------------------------------------------------------------


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


def _subnetwork_text(finetuning: Mapping[str, Any]) -> str:
    subnetwork = finetuning.get("subnetwork") or {}
    fraction = subnetwork.get("fraction")
    if not isinstance(fraction, (int, float)) or fraction <= 0 or fraction >= 1:
        return "All weights were fine-tuned (no subnetwork)."
    method = {"one_step": "one-step identification: in each encoder matrix the top entries by magnitude of the "
                          "WikiRef pre-trained model",
              "iterative": "gradual magnitude pruning (Zhu & Gupta 2017) during WikiRef training"}.get(
        subnetwork.get("method"), f"method {subnetwork.get('method')!r}")
    text = (f"Only a sparse subnetwork was trained (paper 001 §III-F): {100 * fraction:g}% of each encoder matrix, "
            f"chosen by {method}; embeddings and the scoring head stay fully trainable and the other entries are "
            "bit-identical to the pre-trained ones.")
    if isinstance(subnetwork.get("trainable_fraction"), (int, float)):
        text += f" Trainable share of all parameters: {100 * subnetwork['trainable_fraction']:.2f}%"
        if isinstance(subnetwork.get("changed_fraction"), (int, float)):
            text += f"; share that changed: {100 * subnetwork['changed_fraction']:.2f}%"
        text += "."
    return text


def template_context(results: Mapping[str, Any], *, model_repo: str, dataset_repo: str | None = None,
                     metric_repo: str | None = None) -> dict[str, Any]:
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
        "objective_text": {
            "classification": "sentence classification — linear + sigmoid, binary cross-entropy against the oracle "
                              "label (scores are probabilities that a sentence belongs to the oracle summary).",
            "regression": "sentence regression — linear, mean squared error against the oracle score (scores "
                          "estimate a sentence's ROUGE-2 against the reference summary).",
        }.get(objective, f"{objective} (not recorded as classification or regression)."),
        "pretraining": pretraining,
        "pretraining_dataset": f"`{pretraining.get('dataset')}`" if pretraining and pretraining.get("dataset")
        else "not recorded",
        "pretraining_examples": _examples_text((pretraining or {}).get("examples")),
        "pretraining_loss": _loss((pretraining or {}).get("train_loss")),
        "pretraining_hyperparameters": _hyperparameter_table((pretraining or {}).get("hyperparameters")),
        "finetuning": finetuning,
        "train_years": " and ".join(map(str, (finetuning or {}).get("train_years") or [])) or "(not recorded)",
        "test_year": (finetuning or {}).get("test_year", "(not recorded)"),
        "subnetwork_text": _subnetwork_text(finetuning or {}),
        "finetuning_loss": _loss((finetuning or {}).get("train_loss")),
        "finetuning_hyperparameters": _hyperparameter_table((finetuning or {}).get("hyperparameters")),
        "wikiref_table": wikiref_table(results),
        "wikiref_threshold": (f" (threshold {validation['threshold']:g} tuned for ROUGE-2 F1, "
                              f"{validation.get('examples', '?')} validation examples)"
                              if isinstance(validation.get("threshold"), (int, float)) else ""),
        "duc_table": duc_table(results),
        "duc_settings": evaluation.get("settings", "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250"),
        "citation": CITATION,
    }


def build_model_card(results: Mapping[str, Any], *, model_repo: str, dataset_repo: str | None = None,
                     metric_repo: str | None = None, template_path: str | Path | None = None) -> Any:
    """The rendered card as a ``huggingface_hub.ModelCard`` (``card.data`` holds the metadata, ``model-index``
    included)."""
    from huggingface_hub import ModelCard

    check_results(results)
    template_path = Path(template_path) if template_path is not None else TEMPLATE_PATH
    if not template_path.is_file():
        raise ModelCardError(f"{template_path}: the model card template is missing")
    data = model_card_data(results, model_repo=model_repo, dataset_repo=dataset_repo)
    context = template_context(results, model_repo=model_repo, dataset_repo=dataset_repo, metric_repo=metric_repo)
    return ModelCard.from_template(data, template_path=str(template_path), **context)


def render_model_card(results: dict, *, model_repo: str, dataset_repo: str | None = None,
                      metric_repo: str | None = None) -> str:
    """The model card (README.md text) of a run, from its results dict."""
    text = str(build_model_card(results, model_repo=model_repo, dataset_repo=dataset_repo, metric_repo=metric_repo))
    return text if text.endswith("\n") else text + "\n"


# ---- command line -------------------------------------------------------------------------------------------------


@dataclass
class CardArguments:
    """Render a model card from a results.json."""

    results: str = field(metadata={"help": "The run's results.json (written by pretrain_wikiref.py or "
                                           "finetune_duc.py into the model folder)."})
    model_repo: str = field(metadata={"help": "The model's Hub id, used in the usage snippets (org/name)."})
    output: str = field(default="README.md", metadata={"help": "Where to write the card."})
    dataset_repo: str | None = field(default=None, metadata={"help": "The WikiRef dataset's Hub id, if published."})
    metric_repo: str | None = field(default=None, metadata={"help": "The DUC ROUGE metric's Hub id, if published."})


def main(argv: Sequence[str] | None = None) -> int:
    from transformers import HfArgumentParser

    (args,) = HfArgumentParser(CardArguments).parse_args_into_dataclasses(args=argv)
    try:
        text = render_model_card(load_results(args.results), model_repo=args.model_repo,
                                 dataset_repo=args.dataset_repo, metric_repo=args.metric_repo)
    except ModelCardError as error:
        print(f"model_card: error: {error}", file=sys.stderr)
        return 2
    Path(args.output).write_text(text, encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
