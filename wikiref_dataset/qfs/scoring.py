"""Each benchmark scored as its literature scores it, with the project's ROUGE engine (:mod:`wikiref_dataset.rouge`).

One :class:`BenchmarkScoring` per benchmark: the ROUGE-1.5.5 options, which value is reported (F1 or recall), how
several references are combined, and the word budget of an extractive summary. Sources:

* **QMSum** — Zhong et al. (2021) score with pyrouge 0.1.3 over ROUGE-1.5.5, the options of the MatchSum
  evaluation they point to: ``-c 95 -r 1000 -n 2 -m -a``, and report ``Average_F`` of ROUGE-1, ROUGE-2 and ROUGE-L
  (the QMSum authors' answer in the QMSum repository's issue 5; MatchSum's ``metrics.py``). Porter stemming, no
  stop-word removal, no length limit; each summary and reference one sentence per line, so ROUGE-L is ROUGE-1.5.5's
  summary-level union LCS. Vig et al. (2022, "Exploring Neural Models for Query-Focused Summarization") score QMSum
  through SummEval's pyrouge wrapper, whose options also stem and report the same F1 of ROUGE-1/2/L: the same
  numbers up to sentence splitting (they split with Stanza).
* **SQuALITY** — Wang et al. (2022) score with Google's ``rouge_score`` (through `datasets`), stemming on, outputs
  and references split into sentences with NLTK for ROUGE-Lsum; each reference is scored alone and, per measure, the
  reference with the highest F1 is kept (the repository's ``multi_rouge.py``); the corpus value is the F1 of the
  bootstrap aggregate. Here: the same rule on the project's engine (``best-f``), ROUGE-L summary-level over the
  sentences (= ``rougeLsum``). Differences from ``rouge_score`` that remain, both small: the engine stems with
  ROUGE-1.5.5's Porter variant and WordNet exceptions where ``rouge_score`` uses NLTK's Porter stemmer, and the
  corpus value is ROUGE-1.5.5's bootstrap mean where ``rouge_score``'s aggregator reports the median of its resamples.
  ``benchmarks/bench_qfs_scoring.py`` measures the gap on the real SQuALITY answers.
* **Debatepedia** — the papers that report it (Nema et al., 2017; the later work on it) give ROUGE-1, ROUGE-2 and
  ROUGE-L; the common setting is F1 with stemming and one reference, which is the default here. ``recall`` is the
  option for tables that report recall.

Budgets: an extractive summary of a benchmark scored without a length limit still needs a length, or the longest
summary wins on recall and loses on precision. The budget is the mean length of the benchmark's training
references, in ROUGE words (:func:`wikiref_dataset.rouge.count_words`), rounded to 5: QMSum 65 words for a specific
query and 110 for a general one (train answers: 64.6 over 1,095 and 111.1 over 162), SQuALITY 225 (train answers:
223.4 over 1,000), Debatepedia 10 (train summaries: 9.9 over 12,000). Extractive systems fill the budget and are cut to it, the way ROUGE's ``-l`` cuts a summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..rouge import RougeConfig, RougeResult, RougeScore, RougeScorer

__all__ = ["MEASURES", "SCORINGS", "BenchmarkScoring", "scoring_for"]

MEASURES = ("rouge_1", "rouge_2", "rouge_l")


@dataclass(frozen=True)
class BenchmarkScoring:
    """How one benchmark is scored.

    Args:
        benchmark (`str`): ``qmsum``, ``squality`` or ``debatepedia``.
        rouge_args (`str`): the ROUGE-1.5.5 options (:meth:`RougeConfig.from_args`).
        value (`str`): the reported value, ``"f"`` (F1) or ``"recall"``.
        multi_reference (`str`): ``"pool"``, ROUGE-1.5.5's ``-f A`` (counts summed over references), or ``"best-f"``,
            each reference scored alone and per measure the one with the highest F1 kept (``rouge_score``'s max).
        budgets (`Mapping[str, int]`): the word budget of an extractive summary per ``query_type`` (``""``: any).
        source (`str`): where the setting comes from, for tables and cards.
    """

    benchmark: str
    rouge_args: str
    value: Literal["f", "recall"] = "f"
    multi_reference: Literal["pool", "best-f"] = "pool"
    budgets: Mapping[str, int] = field(default_factory=dict)
    source: str = ""

    def __post_init__(self) -> None:
        if self.value not in ("f", "recall"):
            raise ValueError(f"value must be 'f' or 'recall', got {self.value!r}")
        if self.multi_reference not in ("pool", "best-f"):
            raise ValueError(f"multi_reference must be 'pool' or 'best-f', got {self.multi_reference!r}")
        if "" not in self.budgets:
            raise ValueError(f"{self.benchmark}: budgets needs a default entry ''")

    @property
    def config(self) -> RougeConfig:
        return RougeConfig.from_args(self.rouge_args)

    def describe(self) -> str:
        """One line for tables: ``ROUGE-1.5.5 -c 95 -r 1000 -n 2 -m -a, F1, references pooled (-f A)``."""
        value = "F1" if self.value == "f" else "recall"
        rule = "references pooled (-f A)" if self.multi_reference == "pool" else "best reference per measure by F1"
        return f"ROUGE-1.5.5 {self.rouge_args}, {value}, {rule}"

    def budget(self, row: Mapping[str, Any]) -> int:
        """The word budget of an extractive summary of ``row`` (by its ``query_type`` when it has one)."""
        return self.budgets.get(str(row.get("query_type") or ""), self.budgets[""])

    def with_value(self, value: Literal["f", "recall"]) -> BenchmarkScoring:
        return BenchmarkScoring(self.benchmark, self.rouge_args, value, self.multi_reference, self.budgets,
                                self.source)

    def score(self, predictions: Sequence[str], references: Sequence[Sequence[str]]) -> RougeResult:
        """Per-item scores and ROUGE's bootstrap averages (with the ``-c`` interval) of aligned predictions and
        reference lists, the references combined by :attr:`multi_reference`."""
        scorer = RougeScorer(self.config)
        if self.multi_reference == "pool":
            return scorer.evaluate(list(predictions), [list(refs) for refs in references])
        flat_predictions = [prediction for prediction, refs in zip(predictions, references) for _ in refs]
        flat_references = [[reference] for refs in references for reference in refs]
        alone = iter(scorer.score_many(flat_predictions, flat_references))
        per_item: list[dict[str, RougeScore]] = []
        for refs in references:
            scores = [next(alone) for _ in refs]
            per_item.append({metric: max((score[metric] for score in scores), key=lambda s: s.f)
                             for metric in scorer.config.metric_names})
        return scorer.average(per_item)

    def values(self, result: RougeResult) -> dict[str, float]:
        """``{measure: value, measure_ci_low: …, measure_ci_high: …}`` of the reported value, on the 0-1 scale."""
        flat = result.to_dict()
        out = {}
        for measure in MEASURES:
            key = f"{measure}_{self.value}"
            out[key] = flat[key]
            out[f"{key}_ci_low"] = flat[f"{key}_ci_low"]
            out[f"{key}_ci_high"] = flat[f"{key}_ci_high"]
        return out


SCORINGS: dict[str, BenchmarkScoring] = {
    "qmsum": BenchmarkScoring(
        "qmsum", "-c 95 -r 1000 -n 2 -m -a", "f", "pool", {"": 65, "specific": 65, "general": 110},
        "Zhong et al. (2021): pyrouge 0.1.3 over ROUGE-1.5.5 -c 95 -r 1000 -n 2 -m -a, Average_F of R-1/2/L"),
    "squality": BenchmarkScoring(
        "squality", "-c 95 -r 1000 -n 2 -m -a", "f", "best-f", {"": 225},
        "Wang et al. (2022): rouge_score with stemming, F1, per measure the best of the four references; "
        "ROUGE-L over sentences (rougeLsum)"),
    "debatepedia": BenchmarkScoring(
        "debatepedia", "-c 95 -r 1000 -n 2 -m -a", "f", "pool", {"": 10},
        "ROUGE-1/2/L F1 with stemming, one reference (the common setting of the papers on Debatepedia)"),
}
"""The default scoring of each benchmark."""


def scoring_for(benchmark: str, value: str | None = None) -> BenchmarkScoring:
    """The default scoring of ``benchmark``, with another reported ``value`` (``f``/``recall``) when given.

    Raises:
        ValueError: unknown benchmark or value.
    """
    if benchmark not in SCORINGS:
        raise ValueError(f"no scoring for benchmark {benchmark!r}; known: {', '.join(SCORINGS)}")
    scoring = SCORINGS[benchmark]
    return scoring.with_value(value) if value and value != scoring.value else scoring  # type: ignore[arg-type]
