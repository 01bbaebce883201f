"""AQuaMuSe (Kulkarni et al., 2020, see ``docs/aquamuse.md``): query-based multi-document summarization examples mined from Natural Questions long answers
and a web corpus by sentence-embedding matches, in an abstractive and an extractive variant; and a reader for the
released AQuaMuSe files.

Modules: ``questions`` (NQ reader and filter), ``corpus`` (C4/CCNet jsonl, WET, WARC readers), ``embedding`` (sentence
encoder, faiss index), ``matching`` (θ thresholds, document scores, top K, recall, the two variants), ``steps``
(the corpus side as datatrove steps), ``dataset`` (splits, Table 1, coverage/density, folders + cards), ``build``
(the whole build), ``released`` (TFRecord / tf.train.Example reader), ``cli`` (``wikiref aquamuse``).
Heavy libraries (faiss, sentence-transformers, spaCy) are imported where used, and the names below on first use, so
that ``wikiref --help`` (which builds the ``aquamuse`` parser) does not import them.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"AQuaMuSeExample": "matching", "MatchingConfig": "matching", "Question": "questions",
            "QuestionConfig": "questions", "QuestionReader": "questions"}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)


__all__ = ["AQuaMuSeExample", "MatchingConfig", "Question", "QuestionConfig", "QuestionReader"]
