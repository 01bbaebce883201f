"""The paper's published rows the card prints beside this run's (Tables IV and VI, read from the experiments
runner's transcription, `trainer_scripts.experiments.tables`) and what differs between a published row's training and
this run's."""

from __future__ import annotations

from dataclasses import dataclass

from trainer_scripts.card.names import card_model_name, model_variant
from trainer_scripts.experiments.tables import PAPER_WIKIREF_TRAIN, published_values
from trainer_scripts.results import TrainingResults


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
