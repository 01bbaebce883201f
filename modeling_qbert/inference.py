"""Batched sentence scoring of whole datasets with a Q-BERT model.

The ``"query-focused-summarization"`` pipeline scores one input (one WikiRef example or one DUC cluster) at a time,
which is what a user summarizing a few clusters wants. Evaluating a model on a validation split (thousands of
examples, a few windows each) is faster when windows of many examples share a forward pass: [`score_rows`] packs
every row of a dataset into windows with the model's [`QBertProcessor`], runs them in batches of ``batch_size``
windows ([`score_windows`], which the pipeline's forward step uses too), and maps the window scores back to ``rows → documents → sentences`` with the processor's own gather
function, so both paths score a sentence in exactly the same window.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from .processing_qbert import QBertProcessor


@torch.no_grad()
def score_rows(
    model: torch.nn.Module,
    processor: QBertProcessor,
    rows: Sequence[Mapping[str, Any]],
    batch_size: int = 16,
    device: torch.device | str | None = None,
) -> list[list[list[float]]]:
    """Score every sentence of every row: ``result[row][document][sentence]``.

    Args:
        model: a [`QBertForSentenceScoring`] (put in eval mode for the call, its mode restored afterwards).
        processor: the processor matching the model (see [`QBertProcessor.check_config`]).
        rows: WikiRef rows (``query``, ``document``: one document) or DUC rows (``query``, ``documents``); labels
            are not needed.
        batch_size: windows per forward pass.
        device: where to run; default the model's device.

    A row whose documents have no sentence gets empty lists; every other sentence gets a finite score.
    """
    processor.check_config(model.config)
    windows: list[dict[str, Any]] = []
    shapes: list[list[int]] = []
    for row_index, row in enumerate(rows):
        try:
            examples = processor.examples_from_row(row, with_labels=False)
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"row {row_index}: {error}") from error
        shapes.append([len(example.sentences) for example in examples])
        for document_index, example in enumerate(examples):
            for window in processor.encode_example(example, row_index):
                features = window.to_features()
                features["document_index"] = document_index
                windows.append(features)

    result = [[[float("nan")] * count for count in counts] for counts in shapes]
    for window, window_scores in zip(windows, score_windows(model, processor, windows, batch_size, device)):
        target = result[window["example_index"]][window["document_index"]]
        for sentence, score in zip(window["sentence_index"], window_scores):
            target[sentence] = score
    for row_index, documents in enumerate(result):
        for document_index, values in enumerate(documents):
            if any(value != value for value in values):  # NaN: the processor left a sentence unscored
                raise RuntimeError(f"row {row_index}, document {document_index}: a sentence got no score")
    return result


@torch.no_grad()
def score_windows(
    model: torch.nn.Module,
    processor: QBertProcessor,
    windows: Sequence[Mapping[str, Any]],
    batch_size: int = 16,
    device: torch.device | str | None = None,
) -> list[list[float]]:
    """The scores of each window's scored sentences (``len(window["sentence_index"])`` each), from forward passes
    over ``batch_size`` windows at a time (the model in eval mode for the call, its mode restored afterwards).
    ``windows`` are feature dicts of :meth:`QBertProcessor.encode_example`."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    device = torch.device(device) if device is not None else next(model.parameters()).device
    collate = processor.collator(keep_mapping=False)
    scores: list[list[float]] = []
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(windows), batch_size):
            chunk = windows[start:start + batch_size]
            batch = {name: tensor.to(device) for name, tensor in collate(chunk).items() if name != "labels"}
            rows = model(**batch).scores.float().cpu().tolist()
            scores.extend([float(value) for value in row[: len(window["sentence_index"])]]
                          for row, window in zip(rows, chunk))
    finally:
        model.train(was_training)
    return scores


__all__ = ["score_rows", "score_windows"]
