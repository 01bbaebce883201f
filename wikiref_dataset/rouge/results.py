"""ROUGE scores as ROUGE-1.5.5 prints them: one item's R/P/F for one measure (R and P rounded to 5 decimals, F from the
rounded R and P) with the counts behind them, a corpus average with its confidence intervals, and a whole result
(the ``Average_R/P/F`` report, a flat dict for logs).
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import RougeConfig, display_name

__all__ = ["RougeScore", "RougeAverage", "RougeResult"]


def _round5(value: float) -> float:
    """Perl's ``sprintf("%7.5f")`` read back as a number (C's correctly rounded conversion, as Python's)."""
    return float(f"{value:.5f}")


@dataclass(frozen=True)
class RougeScore:
    """One item's score for one ROUGE measure: rounded R/P/F as ROUGE prints them and the raw counts behind them
    (under ``-f A``: hits and reference counts summed over references, the system count added once per reference).
    """

    recall: float
    precision: float
    f: float
    hit: int
    model_count: int
    peer_count: int

    @classmethod
    def from_counts(cls, hit: int, model_count: int, peer_count: int, alpha: float = 0.5) -> RougeScore:
        recall = _round5(hit / model_count) if model_count > 0 else 0.0
        precision = _round5(hit / peer_count) if peer_count > 0 else 0.0
        denominator = (1.0 - alpha) * precision + alpha * recall
        f = _round5(precision * recall / denominator) if denominator > 0 else 0.0
        return cls(recall, precision, f, hit, model_count, peer_count)


@dataclass(frozen=True)
class RougeAverage:
    """A corpus-level ROUGE score as ROUGE-1.5.5 prints it: bootstrap means with their confidence intervals."""

    recall: float
    recall_ci: tuple[float, float]
    precision: float
    precision_ci: tuple[float, float]
    f: float
    f_ci: tuple[float, float]
    confidence: float = 95.0

    def printed(self, metric: str, system_id: str = "X") -> list[str]:
        """The three ``Average_R/P/F`` lines exactly as ROUGE-1.5.5 prints them."""
        name = display_name(metric)
        level = f"{self.confidence:g}%"
        lines = []
        for label, value, (low, high) in (("R", self.recall, self.recall_ci), ("P", self.precision, self.precision_ci),
                                          ("F", self.f, self.f_ci)):
            lines.append(f"{system_id} {name} Average_{label}: {value:7.5f} ({level}-conf.int. {low:7.5f} - {high:7.5f})")
        return lines


@dataclass
class RougeResult:
    """Scores of a set of (system summary, references) items: per item and as ROUGE's bootstrap averages."""

    config: RougeConfig
    per_item: list[dict[str, RougeScore]]
    averages: dict[str, RougeAverage]

    @property
    def metrics(self) -> list[str]:
        return self.config.metric_names

    def mean(self, metric: str, value: str = "recall") -> float:
        """The plain mean of the rounded per-item values (ROUGE itself prints the bootstrap mean instead)."""
        if not self.per_item:
            return 0.0
        return sum(getattr(item[metric], value) for item in self.per_item) / len(self.per_item)

    def report(self, system_id: str = "X") -> str:
        """The averages as ROUGE-1.5.5 prints them, one block per measure."""
        blocks = []
        for metric in self.metrics:
            blocks.append("-" * 45 + "\n" + "\n".join(self.averages[metric].printed(metric, system_id)))
        return "\n".join(blocks) + "\n" + "-" * 45

    def to_dict(self) -> dict[str, float]:
        """Flat ``{"rouge_2_recall": …, "rouge_2_recall_ci_low": …}`` view for logs and ``evaluate``."""
        flat: dict[str, float] = {}
        for metric, average in self.averages.items():
            for value in ("recall", "precision", "f"):
                flat[f"{metric}_{value}"] = getattr(average, value)
                low, high = getattr(average, f"{value}_ci")
                flat[f"{metric}_{value}_ci_low"] = low
                flat[f"{metric}_{value}_ci_high"] = high
        return flat
