"""spaCy's English stop words without spaCy: the list shipped in ``data/spacy-en-stop-words.txt``.

The same words as ``TextPipeline().stop_words`` (:mod:`.text`, English), for code on the model side of a core install,
which has no spaCy (the build extra): the DUC QUERY-SIM baseline (``wikiref_dataset.baselines``) drops them from its
TF-IDF terms. ``tests/wikiref_dataset/test_baselines.py`` checks the file against the installed spaCy's list.
"""

from __future__ import annotations

import functools
from pathlib import Path

from .rouge import load_stopwords

__all__ = ["ENGLISH_STOP_WORDS_PATH", "english_stop_words"]

ENGLISH_STOP_WORDS_PATH = Path(__file__).resolve().parent / "data" / "spacy-en-stop-words.txt"


@functools.cache
def english_stop_words() -> frozenset[str]:
    """spaCy's English stop words, lowercased (read once from :data:`ENGLISH_STOP_WORDS_PATH`)."""
    return load_stopwords(ENGLISH_STOP_WORDS_PATH)
