"""The PSG2SUM dataset folder: deduplicated pairs, a page-disjoint random split, Parquet shards and a card.

Same shape as WikiRef's (:func:`wikiref_dataset.builder.write_dataset_folder`): ``data/{train,validation,test}-
00000-of-00001.parquet`` written by the same deterministic writer, ``statistics.json`` and a ``README.md`` whose
``configs:`` block makes ``datasets.load_dataset(folder)`` load the three splits. The split is WikiRef's hashing
split (:func:`wikiref_dataset.curation.assign_group_splits`) grouped by page: no page is in two splits. Dev and test
hold 4,000 pairs each at the paper's full scale (100,118 pairs); smaller builds get proportionally fewer (at least
one each when there are three pages or more) unless sizes are given. An empty split gets no file and is left
out of the card's ``configs:`` (``datasets`` cannot read an empty Parquet file), so small builds load too.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import datasets

from ..builder import SPLITS, card_front_matter, write_split_files
from ..curation import assign_group_splits
from .mining import PassageSummaryPair

__all__ = ["FEATURES", "FULL_SCALE_PAIRS", "deduplicate", "split_pairs", "split_sizes", "write_psg2sum_folder"]

FEATURES = datasets.Features({
    "id": datasets.Value("string"),
    "page_id": datasets.Value("int64"),
    "title": datasets.Value("string"),
    "revision_id": datasets.Value("int64"),
    "parent_revision_id": datasets.Value("int64"),
    "timestamp": datasets.Value("string"),
    "passage": datasets.Value("string"),
    "passage_sentences": datasets.List(datasets.Value("string")),
    "summary": datasets.Value("string"),
    "score": datasets.Value("float32"),
})  # fmt: skip

FULL_SCALE_PAIRS = 100_118
"""Pairs of the paper's dataset (003 §2.2), whose dev and test hold 4,000 each."""
FULL_SCALE_SPLIT = 4_000

_DESCRIPTION = """PSG2SUM: passage-to-summary pairs mined from Wikipedia revision histories (§2 of Zhou, Wei and Zhou, 2020). In one
revision, a passage was added to the article body and a sentence to its lead; the sentence (`summary`) is paired with
the added passage that holds the largest share of its non-stop words (`score`, kept when >= λ)."""

_CITATION = """@article{zhou2019psg2sum,
  title   = {Learning to Summarize Passages: Mining Passage-Summary Pairs from Wikipedia Revision Histories},
  author  = {Zhou, Qingyu and Wei, Furu and Zhou, Ming},
  journal = {arXiv preprint},
}"""


def deduplicate(pairs: Iterable[PassageSummaryPair]) -> tuple[list[PassageSummaryPair], int]:
    """The pairs without repeated (passage, summary), keeping the earliest revision's; and how many were dropped."""
    kept: dict[bytes, PassageSummaryPair] = {}
    dropped = 0
    for pair in sorted(pairs, key=lambda p: (p.revision_id, p.id)):
        key = hashlib.sha1(f"{pair.passage}\x00{pair.summary}".encode()).digest()
        if key in kept:
            dropped += 1
        else:
            kept[key] = pair
    return list(kept.values()), dropped


def split_sizes(n_pairs: int, n_pages: int, dev_size: int | None = None,
                test_size: int | None = None) -> tuple[int, int]:
    """Target (dev, test) sizes: the given ones, or 4,000 each scaled by ``n_pairs / 100,118``."""
    def scaled(size: int | None) -> int:
        if size is not None:
            return size
        target = min(FULL_SCALE_SPLIT, round(FULL_SCALE_SPLIT * n_pairs / FULL_SCALE_PAIRS))
        return max(target, 1) if n_pages >= 3 else 0

    return scaled(dev_size), scaled(test_size)


def split_pairs(pairs: Sequence[PassageSummaryPair], seed: int = 42, dev_size: int | None = None,
                test_size: int | None = None) -> dict[str, list[PassageSummaryPair]]:
    """Random page-disjoint train/validation/test split (WikiRef's hashing split, grouped by ``page_id``)."""
    dev, test = split_sizes(len(pairs), len({p.page_id for p in pairs}), dev_size, test_size)
    return assign_group_splits(pairs, lambda p: str(p.page_id), lambda p: p.id, dev, test, seed)


def _statistics(pairs: Sequence[PassageSummaryPair]) -> dict[str, Any]:
    def mean(values: list[float]) -> float:
        return round(statistics.fmean(values), 2) if values else 0.0

    return {
        "pairs": len(pairs),
        "pages": len({p.page_id for p in pairs}),
        "passage_sentences": mean([len(p.passage_sentences) for p in pairs]),
        "passage_words": mean([len(p.passage.split()) for p in pairs]),
        "summary_words": mean([len(p.summary.split()) for p in pairs]),
        "score": mean([p.score for p in pairs]),
    }


def _card(splits: dict[str, list[PassageSummaryPair]], build: dict[str, Any], files: dict[str, str]) -> str:
    stats = {split: _statistics(splits[split]) for split in SPLITS}
    front = card_front_matter("PSG2SUM", files)
    lines = ["# PSG2SUM", "", _DESCRIPTION, "", "## How it was built", "",
             f"- History dump(s): {', '.join(build.get('dumps', [])) or 'n/a'}",
             f"- Sentence splitter / tokenizer: {build.get('pipeline', 'n/a')}",
             "- Mining config: `" + json.dumps(build.get("config", {}), sort_keys=True, default=str) + "`", "",
             "| step | count |", "|---|---:|"]
    lines += [f"| {name} | {value:,} |" for name, value in build.get("counts", {}).items()]
    lines += ["", "## Splits (page-disjoint)", "", "| | " + " | ".join(SPLITS) + " |", "|---|" + "---:|" * len(SPLITS)]
    for row in ("pairs", "pages", "passage_sentences", "passage_words", "summary_words", "score"):
        lines.append(f"| {row} | " + " | ".join(f"{stats[s][row]:,}" for s in SPLITS) + " |")
    if build.get("baselines"):
        lines += ["", "## Baselines: LEAD1 and TextRank (ROUGE %, ±95% CI half-width)", "", build["baselines"]]
    lines += ["", "## Licence", "",
              "Passages and summaries are Wikipedia text (CC BY-SA 4.0; attribution: the article `title` and "
              "`revision_id`).", "", "## Citation", "", "```bibtex", _CITATION, "```", ""]
    return "\n".join(front + lines)


def write_psg2sum_folder(splits: dict[str, list[PassageSummaryPair]], output_dir: str | Path,
                         build: dict[str, Any] | None = None) -> dict[str, int]:
    """Write the Parquet shards, ``statistics.json`` and the card; returns the split sizes."""
    output = Path(output_dir)
    complete = {split: sorted(splits.get(split, []), key=lambda p: p.id) for split in SPLITS}
    files = write_split_files({split: [asdict(pair) for pair in pairs] for split, pairs in complete.items()}, output,
                              FEATURES)
    (output / "statistics.json").write_text(json.dumps(
        {split: _statistics(complete[split]) for split in SPLITS}, indent=1), encoding="utf-8")
    (output / "README.md").write_text(_card(complete, build or {}, files), encoding="utf-8")
    return {split: len(complete[split]) for split in SPLITS}
