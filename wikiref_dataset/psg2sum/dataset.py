"""The PSG2SUM dataset folder: deduplicated pairs, a page-disjoint random split, Parquet shards and a card.

Same shape as WikiRef's (:func:`wikiref_dataset.wikiref.dataset.write_dataset_folder`): ``data/{train,validation,test}-
00000-of-00001.parquet`` written by the same deterministic writer, ``statistics.json`` and a ``README.md`` whose
``configs:`` block makes ``datasets.load_dataset(folder)`` load the three splits. The split is WikiRef's hashing
split (:func:`wikiref_dataset.mining.splits.assign_group_splits`) grouped by page: no page is in two splits. Dev and test
hold 4,000 pairs each at the paper's full scale (100,118 pairs); smaller builds get proportionally fewer (at least
one each when there are three pages or more) unless sizes are given. An empty split gets no file and is left
out of the card's ``configs:`` (``datasets`` cannot read an empty Parquet file), so small builds load too.

The build streams: :class:`DedupPlan` finds the pairs to keep and the pages' sizes from keys alone (a digest, the
revision and id, the page of each distinct pair) in a first pass, and :class:`Psg2SumFolderWriter` takes the kept
pairs one at a time in id order, keeping only running sums for the card (:class:`PairStatistics`).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import datasets

from ..mining.dataset_folder import SPLITS, SplitFilesWriter, card_front_matter
from ..mining.splits import assign_group_splits
from ..utils.running_stats import ExactMean
from .mining import PassageSummaryPair

__all__ = ["FEATURES", "FULL_SCALE_PAIRS", "DedupPlan", "PairStatistics", "Psg2SumFolderWriter", "deduplicate",
           "split_pairs", "split_sizes", "write_psg2sum_folder"]

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
"""Pairs of the paper's dataset (Zhou, Wei and Zhou, "Learning to Summarize Passages", §2.2), whose dev and test hold
4,000 each."""
FULL_SCALE_SPLIT = 4_000

_DESCRIPTION = """PSG2SUM: passage-to-summary pairs mined from Wikipedia revision histories (§2 of Zhou, Wei and Zhou, 2020). In one
revision, a passage was added to the article body and a sentence to its lead; the sentence (`summary`) is paired with
the added passage that holds the largest share of its non-stop words (`score`, kept when >= λ)."""

_CITATION = """@article{zhou2019psg2sum,
  title   = {Learning to Summarize Passages: Mining Passage-Summary Pairs from Wikipedia Revision Histories},
  author  = {Zhou, Qingyu and Wei, Furu and Zhou, Ming},
  journal = {arXiv preprint},
}"""


class DedupPlan:
    """Cross-page deduplication from keys only. A first pass adds every pair (:meth:`add`): for each distinct
    (passage, summary) (a SHA-1 digest) it keeps the earliest ``(revision_id, id)`` and that pair's page; a second
    pass asks :meth:`claim` whether a pair is the one kept (true once per distinct pair, whatever the order)."""

    def __init__(self) -> None:
        self.first: dict[bytes, tuple[int, str | None, int]] = {}
        self.pairs = 0

    @staticmethod
    def key(pair: PassageSummaryPair) -> bytes:
        return hashlib.sha1(f"{pair.passage}\x00{pair.summary}".encode()).digest()

    def add(self, pair: PassageSummaryPair) -> None:
        self.pairs += 1
        key = self.key(pair)
        best = self.first.get(key)
        if best is None or (pair.revision_id, pair.id) < best[:2]:
            self.first[key] = (pair.revision_id, pair.id, pair.page_id)

    @property
    def kept(self) -> int:
        """Distinct pairs (the pairs kept)."""
        return len(self.first)

    @property
    def duplicates(self) -> int:
        return self.pairs - len(self.first)

    def page_sizes(self) -> Counter[str]:
        """Kept pairs per page (``str(page_id)``: the split's groups)."""
        return Counter(str(page) for _, _, page in self.first.values())

    def claim(self, pair: PassageSummaryPair) -> bool:
        key = self.key(pair)
        revision, kept_id, page = self.first.get(key, (0, None, 0))
        if kept_id is None or (revision, kept_id) != (pair.revision_id, pair.id):
            return False
        self.first[key] = (revision, None, page)  # claimed: a second copy of the same pair is a duplicate
        return True


def deduplicate(pairs: Iterable[PassageSummaryPair]) -> tuple[list[PassageSummaryPair], int]:
    """The pairs without repeated (passage, summary), keeping the earliest revision's, in (revision, id) order; and
    how many were dropped."""
    ordered = sorted(pairs, key=lambda p: (p.revision_id, p.id))
    plan = DedupPlan()
    for pair in ordered:
        plan.add(pair)
    return [pair for pair in ordered if plan.claim(pair)], plan.duplicates


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


class PairStatistics:
    """The card's per-split row of pairs added one at a time: counts, pages and exact running means."""

    _MEANS = {"passage_sentences": lambda p: len(p.passage_sentences), "passage_words": lambda p: len(p.passage.split()),
              "summary_words": lambda p: len(p.summary.split()), "score": lambda p: p.score}

    def __init__(self) -> None:
        self.pairs = 0
        self.pages: set[int] = set()
        self.means = {name: ExactMean() for name in self._MEANS}

    def add(self, pair: PassageSummaryPair) -> None:
        self.pairs += 1
        self.pages.add(pair.page_id)
        for name, read in self._MEANS.items():
            self.means[name].add(read(pair))

    def result(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "pages": len(self.pages),
                **{name: round(mean.mean(), 2) if mean.count else 0.0 for name, mean in self.means.items()}}


def _card(stats: dict[str, dict[str, Any]], build: dict[str, Any], files: dict[str, str]) -> str:
    language = build.get("config", {}).get("language", "en")
    front = card_front_matter("PSG2SUM", files, language=language)
    lines = ["# PSG2SUM", "", _DESCRIPTION, "", "## How it was built", "",
             f"- History dump(s): {', '.join(build.get('dumps', [])) or 'n/a'}",
             f"- Language: `{language}`" + ("" if language == "en" else
                                             "; the baselines are scored with the Unicode ROUGE of its words"),
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


class Psg2SumFolderWriter:
    """The PSG2SUM folder written as pairs stream in: :meth:`add` each pair (in id order within its split), then
    :meth:`close` writes ``statistics.json`` and the card and returns the split sizes."""

    def __init__(self, output_dir: str | Path) -> None:
        self.output = Path(output_dir)
        self.files = SplitFilesWriter(self.output, FEATURES, ordered_by="id")
        self.statistics = {split: PairStatistics() for split in SPLITS}

    def add(self, split: str, pair: PassageSummaryPair) -> None:
        self.files.add(split, asdict(pair))
        self.statistics[split].add(pair)

    def close(self, build: dict[str, Any] | None = None) -> dict[str, int]:
        files = self.files.close()
        stats = {split: self.statistics[split].result() for split in SPLITS}
        (self.output / "statistics.json").write_text(json.dumps(stats, indent=1), encoding="utf-8")
        (self.output / "README.md").write_text(_card(stats, build or {}, files), encoding="utf-8")
        return {split: self.statistics[split].pairs for split in SPLITS}


def write_psg2sum_folder(splits: dict[str, list[PassageSummaryPair]], output_dir: str | Path,
                         build: dict[str, Any] | None = None) -> dict[str, int]:
    """Write the Parquet shards, ``statistics.json`` and the card from lists of pairs (:class:`Psg2SumFolderWriter`);
    returns the split sizes."""
    writer = Psg2SumFolderWriter(output_dir)
    for split in SPLITS:
        for pair in sorted(splits.get(split, []), key=lambda p: p.id):
            writer.add(split, pair)
    return writer.close(build)
