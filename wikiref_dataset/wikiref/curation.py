"""WikiRef curation (§II-A of Zhu et al., 2022; see ``docs/wikiref_build.md``): the example record, the three filters, the oracle labels and the split.

An example joins a statement (the summary; query = [page title, section, subsection, ...]) with the page it cites
(``document`` = the page title followed by its sentences). :func:`measure_example` analyses it once with the
project's spaCy pipeline (:mod:`.text`) and stores the lengths and the unigram recall on it; the filters then only
read numbers:

1. :class:`UnigramRecallFilter`: recall of the summary's non-stop-word lemmas in the document's, >= 0.5;
2. :class:`LengthFilter`: 5th-95th percentile bounds of document/summary tokens/sentences, computed over the
   survivors of rule 1. The percentiles are a global statistic: every task writes its exact values
   (:class:`LengthStatistics`, one JSON per task) and :func:`merge_length_bounds` merges them (exact; the merge holds
   a count per distinct length, not the values, so its memory does not grow with the examples);
3. :class:`OracleFilter`: greedy oracle over <= 5 sentences maximising ROUGE-2 recall, keep score > 0.2.

:class:`OracleLabeler` then gives every document sentence ``oracle_label`` (greedy ROUGE-2 F1 oracle, no sentence
limit) and ``oracle_score`` (the sentence's own ROUGE-2 F1). ROUGE and the oracle are :mod:`.oracle`'s.

:func:`assign_splits` splits at random by the document's final URL (:func:`split_group`: the cited URL after
redirects), seeded, so that no document is in two splits
and the assignment does not depend on how the build was sharded. It needs only each URL group's size
(:func:`plan_splits`), so the build's last stage counts them in a first pass and streams the examples afterwards.

The filters are datatrove steps: each drop is counted by reason in the step's stats and, with an
``exclusion_writer``, written to a rejects file.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.filters.base_filter import BaseFilter

from ..mining.splits import assign_group_splits, plan_group_splits
from ..oracle import ExtractiveOracle, OracleConfig
from ..text import TextConfig, TextPipeline

__all__ = ["BOUNDED_QUANTITIES", "CurationConfig", "Example", "LengthBounds", "LengthFilter", "LengthStatistics",
           "OracleFilter", "OracleLabeler", "UnigramRecallFilter", "assign_splits", "label_example",
           "measure_example", "measure_examples", "merge_length_bounds", "percentile", "plan_splits", "split_group",
           "split_sizes", "unigram_recall"]  # fmt: skip

BOUNDED_QUANTITIES = ("document_tokens", "document_sentences", "summary_tokens", "summary_sentences")
"""The lengths rule 2 may bound (the paper bounds all four)."""

FULL_SCALE_EXAMPLES = 280_724
"""Curated examples of the paper's build (Table I: 256,724 + 12,000 + 12,000)."""


@dataclass(frozen=True)
class CurationConfig:
    """How examples are filtered, labelled and split.

    Args:
        min_unigram_recall (`float`, defaults to 0.5): rule 1's threshold (kept when recall >= it).
        low_percentile, high_percentile (`float`, defaults to 5 and 95): rule 2's bounds.
        bounded (`tuple[str, ...]`): which of :data:`BOUNDED_QUANTITIES` rule 2 bounds.
        oracle_max_sentences (`int`, defaults to 5): rule 3's sentence limit.
        min_oracle_score (`float`, defaults to 0.2): rule 3's threshold (kept when score > it).
        seed (`int`, defaults to 42): the split's seed.
        dev_size, test_size (`int`, *optional*): split sizes; ``None`` = 12,000 each scaled to the build
            (12,000 / 280,724 of the examples, at least 1 each when there are 3 or more URL groups).
        text (:class:`TextConfig`): the spaCy pipeline used for lemmas and lengths.
    """

    min_unigram_recall: float = field(default=0.5, metadata={"help": "Rule 1: keep unigram recall >= this."})
    low_percentile: float = field(default=5.0, metadata={"help": "Rule 2: lower bound percentile."})
    high_percentile: float = field(default=95.0, metadata={"help": "Rule 2: upper bound percentile."})
    bounded: tuple[str, ...] = field(default=BOUNDED_QUANTITIES, metadata={"help": "Rule 2: bounded lengths."})
    oracle_max_sentences: int = field(default=5, metadata={"help": "Rule 3: oracle sentence limit."})
    min_oracle_score: float = field(default=0.2, metadata={"help": "Rule 3: keep oracle R-2 recall > this."})
    seed: int = field(default=42, metadata={"help": "Split seed."})
    dev_size: int | None = field(default=None, metadata={"help": "Dev examples (None: proportional to 12,000)."})
    test_size: int | None = field(default=None, metadata={"help": "Test examples (None: proportional)."})
    text: TextConfig = field(default_factory=TextConfig, metadata={"help": "spaCy pipeline settings."})

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_unigram_recall <= 1.0:
            raise ValueError(f"min_unigram_recall must be in [0, 1], got {self.min_unigram_recall}")
        if not 0.0 <= self.low_percentile <= self.high_percentile <= 100.0:
            raise ValueError(f"need 0 <= low_percentile <= high_percentile <= 100, got {self.low_percentile}, "
                             f"{self.high_percentile}")
        unknown = set(self.bounded) - set(BOUNDED_QUANTITIES)
        if unknown:
            raise ValueError(f"bounded: unknown quantities {sorted(unknown)}; choose from {BOUNDED_QUANTITIES}")
        if self.oracle_max_sentences < 1:
            raise ValueError(f"oracle_max_sentences must be >= 1, got {self.oracle_max_sentences}")
        for name in ("dev_size", "test_size"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0 or None, got {value}")

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["bounded"] = list(self.bounded)
        return values


# ----------------------------------------------------------------------------------------------------------------
# The example
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class Example:
    """One WikiRef example (the dataset's features, plus the measurements curation reads).

    Args:
        id (`str`): the statement id (``"{page_id}-{position}"``).
        query (`list[str]`): [article title, section, subsection, ...].
        document_title (`str`): the cited page's title.
        document (`list[str]`): the page title, then the page's sentences.
        summary (`str`): the statement.
        summary_sentences (`list[str]`): its sentences.
        oracle_label (`list[int]`), oracle_score (`list[float]`): per document sentence (set by the labeler).
        oracle_rouge2_recall (`float`): rule 3's oracle score.
        url, archive_url, citation_type: the citation. wiki_page_id, wiki_revision_id, wiki_title, section_path:
            where the statement comes from.
        document_source (`str`): which source served the document: `warc` (local WARC files), `cc` (Common Crawl),
            `http` (live web). capture_date (`str`): when the capture was made, or when the page was downloaded
            (ISO 8601 UTC). warc_filename (`str`, *optional*), warc_offset (`int`, *optional*), warc_length (`int`,
            *optional*): the WARC record of an archived page (None for a download). final_url (`str`): the URL that
            answered, after redirects.
        url_key, final_url_key (`str`): lookup keys of the cited and the final URL (not dataset features).
        document_tokens, document_sentences, summary_tokens, summary_sentences, query_tokens (`int`),
            unigram_recall (`float`): measurements (:func:`measure_example`); not dataset features.
    """

    id: str
    query: list[str]
    document_title: str
    document: list[str]
    summary: str
    url: str
    archive_url: str
    citation_type: str
    wiki_page_id: int
    wiki_revision_id: int
    wiki_title: str
    section_path: list[str]
    summary_sentences: list[str] = field(default_factory=list)
    oracle_label: list[int] = field(default_factory=list)
    oracle_score: list[float] = field(default_factory=list)
    oracle_rouge2_recall: float = 0.0
    url_key: str = ""
    wiki_timestamp: str = ""
    document_source: str = ""
    capture_date: str = ""
    warc_filename: str | None = None
    warc_offset: int | None = None
    warc_length: int | None = None
    final_url: str = ""
    final_url_key: str = ""
    document_tokens: int = 0
    document_sentences: int = 0
    summary_tokens: int = 0
    summary_sentences_count: int = 0
    query_tokens: int = 0
    unigram_recall: float = 0.0

    def quantity(self, name: str) -> int:
        """One of :data:`BOUNDED_QUANTITIES`."""
        return self.summary_sentences_count if name == "summary_sentences" else getattr(self, name)

    def to_document(self) -> Document:
        metadata = asdict(self)
        return Document(text=metadata.pop("summary"), id=metadata.pop("id"), metadata=metadata)

    @classmethod
    def from_document(cls, document: Document | dict) -> Example:
        if isinstance(document, dict):
            text, doc_id, metadata = document.get("text", ""), document.get("id"), document.get("metadata", {})
        else:
            text, doc_id, metadata = document.text, document.id, document.metadata
        names = {f.name for f in fields(cls)} - {"id", "summary"}
        return cls(id=str(doc_id), summary=text, **{k: v for k, v in metadata.items() if k in names})


def measure_example(example: Example, pipeline: TextPipeline) -> Example:
    """Lengths, summary sentences and unigram recall of one example (see :func:`measure_examples`)."""
    return next(measure_examples([example], pipeline))


def measure_examples(examples: Iterable[Example], pipeline: TextPipeline, batch: int = 64) -> Iterable[Example]:
    """Analyse examples in batches through the one spaCy pipeline: token and sentence counts of the document
    (its sentences, title included) and the summary, the query's tokens and rule 1's unigram recall."""
    pending: list[Example] = []

    def flush() -> Iterable[Example]:
        texts = []
        for example in pending:
            texts.append(example.summary)
            texts.append("\n\n".join(example.document))
            texts.append("\n\n".join(example.query))
        analyses = list(pipeline.analyze_many(texts))
        for position, example in enumerate(pending):
            summary, document, query = analyses[3 * position: 3 * position + 3]
            example.summary_sentences = summary.sentences
            example.summary_sentences_count = summary.n_sentences
            example.summary_tokens = summary.n_tokens
            example.document_sentences = len(example.document)
            example.document_tokens = document.n_tokens
            example.query_tokens = query.n_tokens
            example.unigram_recall = unigram_recall(summary.content_lemmas, document.content_lemmas)
            yield example
        pending.clear()

    for example in examples:
        pending.append(example)
        if len(pending) >= batch:
            yield from flush()
    if pending:
        yield from flush()


def unigram_recall(summary_lemmas: Sequence[str], document_lemmas: Sequence[str]) -> float:
    """Share of the summary's content lemmas (with multiplicity, clipped by the document's counts) found in the
    document; 0 for a summary without content words."""
    if not summary_lemmas:
        return 0.0
    summary, document = Counter(summary_lemmas), Counter(document_lemmas)
    return sum(min(count, document[lemma]) for lemma, count in summary.items()) / len(summary_lemmas)


# ----------------------------------------------------------------------------------------------------------------
# Rule 2's global statistic
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LengthBounds:
    """Inclusive ``[low, high]`` per bounded quantity, and how many examples they were computed from."""

    bounds: dict[str, tuple[float, float]]
    examples: int = 0

    def violations(self, example: Example) -> list[str]:
        """The quantities of ``example`` outside their bounds (``"document_tokens_low"``, ...)."""
        reasons = []
        for name, (low, high) in self.bounds.items():
            value = example.quantity(name)
            if value < low:
                reasons.append(f"{name}_low")
            elif value > high:
                reasons.append(f"{name}_high")
        return reasons

    def to_json(self) -> str:
        return json.dumps({"examples": self.examples, "bounds": {k: list(v) for k, v in self.bounds.items()}},
                          indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LengthBounds:
        data = json.loads(text)
        return cls({k: (float(v[0]), float(v[1])) for k, v in data["bounds"].items()}, int(data["examples"]))


def percentile(sorted_values: Sequence[int], q: float) -> float:
    """Linear-interpolation percentile (numpy's default) of sorted values."""
    if not sorted_values:
        return math.nan
    position = (len(sorted_values) - 1) * q / 100.0
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    return float(sorted_values[below] + (sorted_values[above] - sorted_values[below]) * (position - below))


def merge_length_bounds(stat_files: Iterable[str | Path], config: CurationConfig) -> LengthBounds:
    """Exact percentiles over the values every task wrote (:class:`LengthStatistics`), merged in file order."""
    from ..utils.running_stats import ValueCounts

    values = {name: ValueCounts() for name in config.bounded}  # {length: count}: memory bounded by distinct lengths
    examples = 0
    for path in sorted(str(p) for p in stat_files):
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        examples += int(data["examples"])
        for name in values:
            values[name].update(int(v) for v in data["values"][name])
    bounds = {}
    for name, series in values.items():
        if series:
            bounds[name] = (percentile(series, config.low_percentile), percentile(series, config.high_percentile))
    return LengthBounds(bounds, examples)


class LengthStatistics(PipelineStep):
    """Pass-through step: records the lengths of every example it sees into ``<output_dir>/<rank>.json``."""

    name = "📏 length statistics"
    type = "📊 - STATS"

    def __init__(self, output_dir: str | Path) -> None:
        super().__init__()
        self.output_dir = str(output_dir)

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        values: dict[str, list[int]] = {name: [] for name in BOUNDED_QUANTITIES}
        examples = 0
        for document in data or ():
            example = Example.from_document(document)
            examples += 1
            for name in BOUNDED_QUANTITIES:
                values[name].append(example.quantity(name))
            yield document
        output = Path(self.output_dir)
        output.mkdir(parents=True, exist_ok=True)
        temporary = output / f".{rank:05d}.json.tmp"
        temporary.write_text(json.dumps({"examples": examples, "values": values}), encoding="utf-8")
        temporary.replace(output / f"{rank:05d}.json")  # a killed task never leaves a half-written file
        self.stat_update("examples", value=examples)


# ----------------------------------------------------------------------------------------------------------------
# Filters
# ----------------------------------------------------------------------------------------------------------------


class UnigramRecallFilter(BaseFilter):
    """Rule 1: keep examples whose summary's content-lemma recall in the document is >= ``min_recall``.

    Reads ``unigram_recall`` set by :func:`measure_examples`."""

    name = "1️⃣ unigram recall"

    def __init__(self, min_recall: float = 0.5, exclusion_writer: Any = None) -> None:
        super().__init__(exclusion_writer)
        self.min_recall = min_recall

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        if float(doc.metadata.get("unigram_recall", 0.0)) >= self.min_recall:
            return True
        return False, "low_unigram_recall"


class LengthFilter(BaseFilter):
    """Rule 2: keep examples whose bounded lengths lie in the merged percentile bounds.

    ``bounds`` is a :class:`LengthBounds` or a folder of :class:`LengthStatistics` files, merged on first use by
    every task (the merge is deterministic and cheap next to the oracle), so the step runs under any executor."""

    name = "2️⃣ length bounds"

    def __init__(self, bounds: LengthBounds | str | Path, config: CurationConfig | None = None,
                 exclusion_writer: Any = None) -> None:
        super().__init__(exclusion_writer)
        self.config = config or CurationConfig()
        self._bounds = bounds if isinstance(bounds, LengthBounds) else None
        self.stats_dir = None if isinstance(bounds, LengthBounds) else str(bounds)

    @property
    def bounds(self) -> LengthBounds:
        if self._bounds is None:
            self._bounds = merge_length_bounds(sorted(Path(self.stats_dir).glob("*.json")), self.config)
        return self._bounds

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        try:
            reasons = self.bounds.violations(Example.from_document(doc))
        except (TypeError, ValueError):
            return False, "bad_record"
        return (False, reasons[0]) if reasons else True


class OracleFilter(BaseFilter):
    """Rule 3: greedy oracle over <= ``max_sentences`` sentences maximising ROUGE-2 recall; keep score > threshold.

    Stores the score as ``oracle_rouge2_recall``."""

    name = "3️⃣ extractive oracle"

    def __init__(self, min_score: float = 0.2, max_sentences: int = 5, exclusion_writer: Any = None,
                 language: str = "en") -> None:
        super().__init__(exclusion_writer)
        self.min_score = min_score
        self.max_sentences = max_sentences
        self.oracle = ExtractiveOracle(OracleConfig(n=2, objective="recall", max_sentences=max_sentences,
                                                    language=language))

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        try:
            problem = self.oracle.prepare(list(doc.metadata["document"]), doc.text)
        except (KeyError, TypeError, ValueError):  # one bad record never stops a build: dropped with a reason
            return False, "bad_record"
        score = self.oracle.search(problem).score
        doc.metadata["oracle_rouge2_recall"] = score
        return True if score > self.min_score else (False, "low_oracle_score")


def label_example(example: Example, oracle: ExtractiveOracle | None = None) -> Example:
    """``oracle_label`` (greedy ROUGE-2 F1 oracle, adding sentences while the score improves) and
    ``oracle_score`` (each sentence's own ROUGE-2 F1) for every document sentence."""
    oracle = oracle or ExtractiveOracle(OracleConfig(n=2, objective="f1", max_sentences=None))
    problem = oracle.prepare(list(example.document), example.summary)
    example.oracle_label = oracle.search(problem, objective="f1", max_sentences=None).labels(problem.n_sentences)
    example.oracle_score = oracle.sentence_scores(problem, objective="f1")
    return example


class OracleLabeler(PipelineStep):
    """Sets ``oracle_label`` and ``oracle_score`` on every example (:func:`label_example`)."""

    name = "🏷️ oracle labels"
    type = "🔢 - LABEL"

    def __init__(self, language: str = "en") -> None:
        super().__init__()
        self.oracle = ExtractiveOracle(OracleConfig(n=2, objective="f1", max_sentences=None, language=language))

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for document in data or ():
            with self.track_time():
                example = label_example(Example.from_document(document), self.oracle)
                document.metadata["oracle_label"] = example.oracle_label
                document.metadata["oracle_score"] = example.oracle_score
            self.stat_update("labelled")
            yield document


# ----------------------------------------------------------------------------------------------------------------
# Split
# ----------------------------------------------------------------------------------------------------------------


def split_sizes(n_examples: int, n_groups: int, config: CurationConfig) -> tuple[int, int]:
    """Target (dev, test) sizes: the configured ones, or 12,000 each scaled by ``n_examples / 280,724``."""
    def scaled(size: int | None) -> int:
        if size is not None:
            return size
        target = min(12_000, round(12_000 * n_examples / FULL_SCALE_EXAMPLES))
        return max(target, 1) if n_groups >= 3 else 0

    return scaled(config.dev_size), scaled(config.test_size)


def split_group(example: Example) -> str:
    """The group an example is split by: the document's final URL after redirects (``final_url_key``), else its
    cited URL (``url_key``, else the URL). Examples citing one URL share one document, hence one final URL, so this
    keeps every cited URL in one split, and also puts two cited URLs that redirect to the same page (one document
    reached by two aliases) in the same split."""
    return example.final_url_key or example.url_key or example.url


def plan_splits(group_sizes: Mapping[str, int], config: CurationConfig) -> dict[str, str]:
    """:func:`assign_splits` from the examples' group sizes alone (``{split_group: examples}``, counted in a first
    streaming pass): ``{group: split}``."""
    dev_size, test_size = split_sizes(sum(group_sizes.values()), len(group_sizes), config)
    return plan_group_splits(group_sizes, dev_size, test_size, config.seed)


def assign_splits(examples: Sequence[Example], config: CurationConfig) -> dict[str, list[Example]]:
    """Random split by document URL (:func:`split_group`): groups in the order of ``sha256(seed:group)`` fill test,
    then validation, then the rest is train; a group never straddles two splits. Examples inside a split are sorted
    by id."""
    n_groups = len({split_group(example) for example in examples})
    dev_size, test_size = split_sizes(len(examples), n_groups, config)
    return assign_group_splits(examples, split_group, lambda e: e.id, dev_size, test_size, config.seed)

