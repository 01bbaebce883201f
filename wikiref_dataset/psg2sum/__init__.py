"""PSG2SUM (Zhou, Wei and Zhou, 2020, "Learning to Summarize Passages: Mining Passage-Summary Pairs from
Wikipedia Revision Histories"; see ``docs/psg2sum.md``): passage–summary pairs mined from Wikipedia revision histories.

``history`` streams the revisions of ``pages-meta-history`` dumps; ``mining`` diffs adjacent revisions and scores
(added passage, added lead sentence) pairs; ``steps`` is the datatrove reader step; ``dataset`` deduplicates, splits
by page and writes the Parquet folder + card; ``baselines`` scores LEAD1 and TextRank with the project's ROUGE;
``cli`` is ``wikiref psg2sum``.
"""

import importlib
from typing import Any

# Exports load on first use, so that `wikiref` can register the psg2sum command without importing spaCy.
_EXPORTS = {"PageHistory": "history", "Revision": "history", "iter_histories": "history", "MiningConfig": "mining",
            "PairMiner": "mining", "PassageSummaryPair": "mining", "parse_revision": "mining"}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)


__all__ = ["MiningConfig", "PageHistory", "PairMiner", "PassageSummaryPair", "Revision", "iter_histories",
           "parse_revision"]
