"""The library half of ``pretrain_wikiref.py``: its options (`WikiRefArguments`), loading WikiRef
(:func:`load_wikiref`), the WikiRef evaluation (:func:`evaluate_wikiref`: the selection threshold tuned for ROUGE-2 F1,
then ROUGE-1/2/L F1 of the selected sentences against the statement) and the iterative pruning the options ask for
(:func:`subnetwork_config`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trainer_scripts.common import ScriptError
from trainer_scripts.results import WikiRefScores


@dataclass
class WikiRefArguments:
    """Which WikiRef to train on and how much of it."""

    dataset: str = field(default=None, metadata={"help": "A built WikiRef folder or a Hub dataset id (required)."})
    train_split: str = field(default="train")
    validation_split: str = field(default="validation")
    test_split: str = field(default="test", metadata={"help": "Also scored when present ('' to skip)."})
    max_train_examples: int | None = field(default=None, metadata={"help": "Use only the first N train examples."})
    max_eval_examples: int | None = field(default=None, metadata={"help": "Use only the first N eval examples."})
    preprocessing_num_workers: int | None = field(default=None)
    subnetwork_method: str = field(default="none", metadata={
        "help": "'none', or 'iterative': gradual magnitude pruning of the encoder matrices during training (Table "
                "IX); the final mask is saved with the model and finetune_duc.py fine-tunes that subnetwork."})
    subnetwork_fraction: float = field(default=0.1, metadata={
        "help": "iterative: the trainable share of each encoder matrix the schedule ends at (s_f = 1 - fraction)."})
    subnetwork_initial_fraction: float = field(default=1.0, metadata={
        "help": "iterative: the trainable share at --subnetwork_begin_step (s_i = 1 - this)."})
    subnetwork_begin_step: int = field(default=0, metadata={
        "help": "iterative: t0, the optimizer step (counted from 0) of the first pruning update."})
    subnetwork_end_step: int | None = field(default=None, metadata={
        "help": "iterative: t0 + nΔt, the optimizer step at which the share reaches --subnetwork_fraction. Default: "
                "three quarters of the run's optimizer steps, rounded down to a whole number of updates. A run that ends "
                "before it warns and keeps a denser mask."})
    subnetwork_update_frequency: int | None = field(default=None, metadata={
        "help": "iterative: Δt, optimizer steps between pruning updates (end - begin must be a multiple of it). "
                "Default: max(1, the run's optimizer steps // 100)."})
    subnetwork_include_vectors: bool = field(default=False, metadata={
        "help": "iterative: also mask the encoder's biases and LayerNorm vectors; by default only its matrices are "
                "masked (the paper's choice) and the vectors stay fully trainable, like embeddings and head."})



def evaluate_wikiref(model: Any, processor: Any, rows: Sequence[Mapping[str, Any]], threshold: float | None = None,
                     batch_size: int = 32) -> WikiRefScores:
    """Score ``rows`` (WikiRef examples), select sentences with the WikiRef rule and average ROUGE F1.

    With ``threshold=None`` the threshold is tuned on these rows for ROUGE-2 F1 (`selection.tune_threshold`).
    Returns the examples, the threshold and ROUGE-1/2/L F (`WikiRefScores`, 0-1 scale; ROUGE-1.5.5 per-item F
    with stemming, no length limit, averaged over examples).
    """
    from modeling_qbert.inference import score_rows
    from wikiref_dataset.rouge import RougeConfig, RougeScorer
    from wikiref_dataset.selection import select_wikiref, summary_text, tune_threshold

    if not rows:
        raise ScriptError("no example to evaluate")
    scores = [documents[0] for documents in score_rows(model, processor, rows, batch_size=batch_size)]
    if threshold is None:
        threshold = tune_threshold((row["document"], values, row["summary"]) for row, values in zip(rows, scores))
        threshold = threshold.best_threshold
    scorer = RougeScorer(RougeConfig(max_n=2, rouge_l=True, stem=True, skip_distance=None, word_limit=None,
                                     resamples=1))
    totals = {"rouge_1": 0.0, "rouge_2": 0.0, "rouge_l": 0.0}
    for row, values in zip(rows, scores):
        chosen = select_wikiref(row["document"], values, threshold)
        result = scorer.score(summary_text(row["document"], chosen), [row["summary"]])
        for name in totals:
            totals[name] += result[name].f
    return WikiRefScores(examples=len(rows), threshold=float(threshold),
                         **{f"{name}_f": total / len(rows) for name, total in totals.items()})


def load_wikiref(arguments: WikiRefArguments) -> Any:
    """The dataset as a `DatasetDict` (folder or Hub id), with the train and validation splits checked."""
    import datasets

    from wikiref_dataset.process.folders import load_dataset_folder

    if not arguments.dataset:
        raise ScriptError("--dataset is required: a WikiRef folder (wikiref build --out DIR) or a Hub id")
    try:
        loaded = load_dataset_folder(arguments.dataset)
    except (FileNotFoundError, ValueError, datasets.exceptions.DatasetNotFoundError) as error:
        raise ScriptError(f"{arguments.dataset}: cannot load the dataset ({error})") from None
    for split in (arguments.train_split, arguments.validation_split):
        if split not in loaded:
            raise ScriptError(f"{arguments.dataset}: no {split!r} split (has {', '.join(loaded)})")
    missing = {"query", "document", "summary", "oracle_label", "oracle_score"} - set(loaded[arguments.train_split]
                                                                                      .column_names)
    if missing:
        raise ScriptError(f"{arguments.dataset}: not a WikiRef dataset (missing columns {sorted(missing)})")
    return loaded


def first_examples(dataset: Any, limit: int | None) -> Any:
    """The first ``limit`` examples of ``dataset`` (all of them for ``None``)."""
    return dataset if limit is None else dataset.select(range(min(limit, len(dataset))))


def subnetwork_config(data_args: WikiRefArguments) -> Any:
    """The iterative-pruning `SubnetworkConfig` the options ask for, or ``None`` (``--subnetwork_method none``).

    Raises:
        ScriptError: an unknown method or an inconsistent schedule, in one line.
    """
    from modeling_qbert.sparse import SubnetworkConfig

    if data_args.subnetwork_method not in ("none", "iterative"):
        raise ScriptError(f"--subnetwork_method must be 'none' or 'iterative', got {data_args.subnetwork_method!r}")
    if data_args.subnetwork_method == "none":
        return None
    try:
        return SubnetworkConfig(fraction=data_args.subnetwork_fraction, method="iterative",
                                initial_fraction=data_args.subnetwork_initial_fraction,
                                begin_step=data_args.subnetwork_begin_step, end_step=data_args.subnetwork_end_step,
                                update_frequency=data_args.subnetwork_update_frequency,
                                include_vectors=data_args.subnetwork_include_vectors)
    except ValueError as error:
        raise ScriptError(f"--subnetwork_* options: {error}") from None
