"""Q-BERT: the model side (configuration, model, processor, pipeline, inference, sparse subnetworks, trainers).

The selection rules the pipeline applies live in ``wikiref_dataset.selection`` and the DUC baselines in
``wikiref_dataset.baselines``: they need no model.

Importing the package registers Q-BERT with transformers (:func:`register`), so that

* ``AutoConfig`` / ``AutoModel`` / ``AutoProcessor`` resolve ``model_type="qbert"`` in this process,
* ``save_pretrained`` copies the module files and writes ``auto_map`` (``register_for_auto_class``), so that
  ``AutoModel.from_pretrained(repo, trust_remote_code=True)`` works where this package is not installed,
* ``transformers.pipeline("query-focused-summarization", model=...)`` is available; where this package is not
  installed, a folder or Hub repo with the pipeline's code and ``custom_pipelines`` (``remote_code.py``; every model
  ``trainer_scripts/push_to_hub.py`` publishes) loads with ``trust_remote_code=True``.

This imports transformers and torch (seconds). The ``wikiref`` command therefore does not import this package
until a subcommand needs a model (``trainer_scripts/summarize_cli.py`` imports it inside the command).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "QBertConfig": "configuration_qbert",
    "QBertForSentenceScoring": "modeling_qbert",
    "QBertPreTrainedModel": "modeling_qbert",
    "QBertSentencePooling": "modeling_qbert",
    "SentenceScoringOutput": "modeling_qbert",
    "QBertProcessor": "processing_qbert",
    "QBertDataCollator": "processing_qbert",
    "QBertExample": "processing_qbert",
    "QBertWindow": "processing_qbert",
    "WindowPlan": "processing_qbert",
    "plan_windows": "processing_qbert",
    "plan_sentence_windows": "processing_qbert",
    "QueryFocusedSummarizationPipeline": "pipeline_qfs",
    "TASK": "pipeline_qfs",
}

_registered = False


def register() -> None:
    """Register Q-BERT with the transformers Auto classes and the pipeline registry (idempotent)."""
    global _registered
    if _registered:
        return
    from transformers import AutoConfig, AutoModel, AutoProcessor
    from transformers.pipelines import PIPELINE_REGISTRY

    from .configuration_qbert import QBertConfig
    from .modeling_qbert import QBertForSentenceScoring
    from .processing_qbert import QBertProcessor

    AutoConfig.register(QBertConfig.model_type, QBertConfig, exist_ok=True)
    AutoModel.register(QBertConfig, QBertForSentenceScoring, exist_ok=True)
    AutoProcessor.register(QBertConfig, QBertProcessor, exist_ok=True)
    QBertConfig.register_for_auto_class()
    QBertForSentenceScoring.register_for_auto_class("AutoModel")
    QBertProcessor.register_for_auto_class("AutoProcessor")

    from .pipeline_qfs import TASK, QueryFocusedSummarizationPipeline  # selection.py needs wikiref_dataset.rouge

    if PIPELINE_REGISTRY.supported_tasks.get(TASK, {}).get("impl") is not QueryFocusedSummarizationPipeline:
        PIPELINE_REGISTRY.register_pipeline(
            TASK, pipeline_class=QueryFocusedSummarizationPipeline, pt_model=AutoModel, type="text"
        )
    _registered = True


_bars_lock = threading.Lock()
_bars_held = 0
_bars_found = (True, False)  # (transformers' bars on, huggingface_hub's bars off) when the first block began


@contextmanager
def no_progress_bars(active: bool = True) -> Iterator[None]:
    """Within this block (when ``active``), transformers' progress bars ("Loading weights") and huggingface_hub's
    (downloads) are off: a command's ``--quiet`` keeps a model load silent. Both switches are process-wide, so blocks
    in several threads share them: the first to enter turns them off, the last to leave puts back what the first
    found (a caller that had turned them off keeps them off)."""
    global _bars_held, _bars_found
    if not active:
        yield
        return
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars
    from transformers.utils import logging as hf_logging

    with _bars_lock:
        if _bars_held == 0:
            _bars_found = (hf_logging.is_progress_bar_enabled(), are_progress_bars_disabled())
            hf_logging.disable_progress_bar()  # turns huggingface_hub's off too
        _bars_held += 1
    try:
        yield
    finally:
        with _bars_lock:
            _bars_held -= 1
            if _bars_held == 0:
                transformers_on, hub_off = _bars_found
                if transformers_on:
                    hf_logging.enable_progress_bar()  # turns huggingface_hub's on too
                    if hub_off:
                        disable_progress_bars()


def load_pipeline(model: str | os.PathLike, *, progress: bool = True, **kwargs: Any) -> Any:
    """The ``query-focused-summarization`` pipeline of a saved Q-BERT folder or Hub repo with this package's classes
    (not the code files a Hub copy carries), Q-BERT registered first. ``progress=False`` loads it without
    transformers' "Loading weights" bar or a download's bars (:func:`no_progress_bars`: a command's ``--quiet``).
    ``kwargs`` go to ``transformers.pipeline``.

    Raises:
        OSError, ValueError: what ``transformers.pipeline`` raises for a folder or repo it cannot load.
    """
    from transformers import pipeline

    from .pipeline_qfs import TASK, QueryFocusedSummarizationPipeline

    register()
    with no_progress_bars(not progress):
        return pipeline(TASK, model=str(model), pipeline_class=QueryFocusedSummarizationPipeline, **kwargs)


HUB_ID = r"[\w.-]+(/[\w.-]+)?"
"""What a Hub model id looks like (``name`` or ``org/name``)."""


def check_model_source(source: str | os.PathLike, qbert: bool = True, hub: bool = True) -> str:
    """``source`` (stripped) when it can name a model: an existing folder with a ``config.json`` (a Q-BERT one, with
    ``qbert``), or, with ``hub``, a Hub id. The one check, and the one wording, of every command that takes a model
    (``wikiref summarize``, the app, ``wikiref duc evaluate --model``, the training scripts), made before anything
    loads. Reads only the folder's ``config.json``; a Hub id is not looked up.

    Raises:
        ValueError: in one line: no source, a missing folder (that is no Hub id either), a folder without
            ``config.json`` (a dataset folder, say), or, with ``qbert``, a model that is not Q-BERT.
    """
    import json
    import re
    from pathlib import Path

    text = str(source).strip()
    kinds = "a saved Q-BERT folder" if qbert else "a saved Q-BERT folder or a BERT-family encoder folder"
    if not text:
        raise ValueError(f"no model given: pass {kinds}{' or a Hub id' if hub else ''}")
    folder = Path(text)
    if not folder.exists():
        if hub and re.fullmatch(HUB_ID, text):
            return text
        raise ValueError(f"{text}: no such folder, and not a Hub id (org/name)" if hub else
                         f"{text}: no such folder (no model hub is used here: pass a local folder)")
    config = folder / "config.json"
    if not folder.is_dir() or not config.is_file():
        raise ValueError(f"{text}: not a model folder (no config.json); pass {kinds}")
    if qbert:
        try:
            model_type = json.loads(config.read_text(encoding="utf-8")).get("model_type")
        except (OSError, ValueError, AttributeError) as error:
            raise ValueError(f"{config}: not a readable model configuration ({error})") from None
        if model_type != "qbert":
            raise ValueError(f"{text}: not a Q-BERT model folder (model_type {model_type!r}, not 'qbert')")
    return text


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    register()
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


register()

if TYPE_CHECKING:
    from .configuration_qbert import QBertConfig
    from .modeling_qbert import (
        QBertForSentenceScoring,
        QBertPreTrainedModel,
        QBertSentencePooling,
        SentenceScoringOutput,
    )
    from .pipeline_qfs import TASK, QueryFocusedSummarizationPipeline
    from .processing_qbert import (
        QBertDataCollator,
        QBertExample,
        QBertProcessor,
        QBertWindow,
        WindowPlan,
        plan_sentence_windows,
        plan_windows,
    )

__all__ = [
    "register",
    "check_model_source",
    "load_pipeline",
    "no_progress_bars",
    "QBertConfig",
    "QBertForSentenceScoring",
    "QBertPreTrainedModel",
    "QBertSentencePooling",
    "SentenceScoringOutput",
    "QBertProcessor",
    "QBertDataCollator",
    "QBertExample",
    "QBertWindow",
    "WindowPlan",
    "plan_windows",
    "plan_sentence_windows",
    "QueryFocusedSummarizationPipeline",
    "TASK",
]
