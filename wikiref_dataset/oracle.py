"""Greedy extractive oracle: which document sentences best reproduce a reference summary under ROUGE-N.

Used by WikiRef curation (oracle ROUGE-2 recall over at most 5 sentences as a filter), by the training labels
(``oracle_label`` from a greedy ROUGE-2 F1 search, ``oracle_score`` = each sentence's own ROUGE-2 F1) and by the
DUC ORACLE baseline (several references, a word budget).

Tokens and stems come from the ROUGE engine (``rouge/``: ROUGE-1.5.5 tokenization and ``-m`` stemming), so the
oracle optimises the quantity the metric measures. ROUGE-1.5.5 keeps only ``[A-Za-z0-9]`` (accented letters split
words, Japanese and Chinese have no token at all), so for a language other than English (:attr:`OracleConfig.language`)
the oracle counts a *Unicode ROUGE*: the same n-gram counting, clipping and scores, over the words of the language's
spaCy tokenizer (:meth:`~wikiref_dataset.text.TextPipeline.rouge_tokens_many`: tokens holding a letter or digit,
lowercased; lemmas in place of ``-m`` stems; SudachiPy for Japanese, jieba for Chinese), and a sentence's word count
is its number of such words. Two deliberate differences from scoring a finished summary:
n-grams are counted inside each sentence (the order of a candidate set is undefined while searching, so no n-gram
spans two sentences), and scores are not rounded (rounding would create ties). Several references are combined as
ROUGE's ``-f A`` does: hits and reference counts summed, clipping per reference.

The search runs once per example over hundreds of thousands of examples, so it counts n-grams once per sentence,
keeps for each sentence only the n-grams that occur in a reference, and updates the candidate's clipped hit count
incrementally instead of rescoring every candidate set from scratch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from .rouge import RougeConfig, RougeScorer, count_words, ngram_counts

__all__ = ["OracleConfig", "OracleProblem", "OracleResult", "ExtractiveOracle", "greedy_oracle"]

_OBJECTIVES = ("recall", "f1", "precision")


@dataclass(frozen=True)
class OracleConfig:
    """How the greedy oracle searches.

    Args:
        n (`int`): the ROUGE-N order (2 = ROUGE-2).
        objective (`str`): ``"recall"``, ``"f1"`` or ``"precision"`` of ROUGE-N against the reference(s).
        max_sentences (`int`, *optional*): stop after this many sentences (``None``: no limit).
        max_words (`int`, *optional*): never select a sentence that would take the summary past this many words
            (ROUGE's ``-l`` word count; ``None``: no limit).
        stem (`bool`): ROUGE's ``-m`` stemming of tokens (lemmas for a language other than English).
        language (`str`): the spaCy language code of the texts: ``en`` counts ROUGE-1.5.5's tokens, any other the
            Unicode ROUGE's (see the module docstring).
    """

    n: int = field(default=2, metadata={"help": "ROUGE-N order."})
    objective: str = field(default="recall", metadata={"help": "recall, f1 or precision of ROUGE-N."})
    max_sentences: int | None = field(default=5, metadata={"help": "At most this many sentences (None: no limit)."})
    max_words: int | None = field(default=None, metadata={"help": "At most this many words (None: no limit)."})
    stem: bool = field(default=True, metadata={"help": "ROUGE-1.5.5 -m stemming."})
    language: str = field(default="en", metadata={"help": "Language of the texts (en: ROUGE-1.5.5 tokens)."})

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"OracleConfig.n must be >= 1, got {self.n}")
        if self.objective not in _OBJECTIVES:
            raise ValueError(f"OracleConfig.objective must be one of {_OBJECTIVES}, got {self.objective!r}")
        if self.max_sentences is not None and self.max_sentences < 1:
            raise ValueError(f"OracleConfig.max_sentences must be >= 1 or None, got {self.max_sentences}")
        if self.max_words is not None and self.max_words < 1:
            raise ValueError(f"OracleConfig.max_words must be >= 1 or None, got {self.max_words}")


@dataclass(frozen=True)
class OracleResult:
    """The sentences the greedy search picked, in the order it picked them, and their unrounded score."""

    indices: tuple[int, ...]
    score: float

    @property
    def sorted_indices(self) -> list[int]:
        """The selection in document order."""
        return sorted(self.indices)

    def labels(self, n_sentences: int) -> list[int]:
        """0/1 per document sentence: 1 for the selected ones."""
        chosen = set(self.indices)
        return [1 if position in chosen else 0 for position in range(n_sentences)]


@dataclass
class OracleProblem:
    """Document sentences and references tokenized and counted once, ready for any number of searches.

    ``overlaps[i][r]`` holds sentence i's n-grams that occur in reference r with their counts; the other n-grams
    can never add a hit and only count in ``sentence_totals`` (the precision denominator).
    """

    n: int
    reference_counts: list[Counter]
    reference_total: int
    sentence_totals: list[int]
    overlaps: list[list[dict]]
    sentences: Sequence[str]
    _sentence_words: list[int] | None = field(default=None, repr=False)

    @property
    def sentence_words(self) -> list[int]:
        """ROUGE's ``-l`` word count of each sentence, computed on first use (only word budgets need it)."""
        if self._sentence_words is None:
            self._sentence_words = [count_words(sentence) for sentence in self.sentences]
        return self._sentence_words

    @property
    def n_sentences(self) -> int:
        return len(self.sentence_totals)

    @property
    def n_references(self) -> int:
        return len(self.reference_counts)

    def value(self, hit: int, candidate_total: int, objective: str) -> float:
        """ROUGE-N recall, precision or F1 (alpha 0.5) for a candidate with ``hit`` clipped hits (summed over
        references) and ``candidate_total`` n-grams; 0 when a denominator is 0."""
        if objective == "recall":
            return hit / self.reference_total if self.reference_total else 0.0
        peer_total = candidate_total * self.n_references
        if objective == "precision":
            return hit / peer_total if peer_total else 0.0
        # F1 = 2PR / (P + R) = 2·hit / (peer_total + reference_total)
        denominator = peer_total + self.reference_total
        return 2.0 * hit / denominator if denominator and hit else 0.0


class ExtractiveOracle:
    """Greedy ROUGE-N oracle over document sentences.

    Example:
        >>> oracle = ExtractiveOracle(OracleConfig(objective="recall", max_sentences=5))
        >>> problem = oracle.prepare(document_sentences, summary)
        >>> oracle.search(problem).indices                       # the curation filter's search
        >>> oracle.search(problem, objective="f1", max_sentences=None).labels(problem.n_sentences)
        >>> oracle.sentence_scores(problem, objective="f1")        # each sentence's own ROUGE-2 F1
    """

    def __init__(self, config: OracleConfig | None = None) -> None:
        self.config = config or OracleConfig()
        self._scorer = RougeScorer(RougeConfig(max_n=self.config.n, stem=self.config.stem, skip_distance=None,
                                               word_limit=None, resamples=1))
        self._text = None
        if self.config.language != "en":
            from .text import TextConfig, TextPipeline

            self._text = TextPipeline(TextConfig(lang=self.config.language, model="blank"))

    def _tokenized(self, sentences: Sequence[str], references: Sequence[str]) -> tuple[list[list[str]], list[list[str]]]:
        """The tokens of each sentence and of each reference: ROUGE-1.5.5's in English, the Unicode ROUGE's else."""
        if self._text is None:
            return ([[token for line in sentence.split("\n") for token in self._scorer.tokens(line)]
                     for sentence in sentences],
                    [self._scorer.summary_tokens(reference) for reference in references])
        tokens = list(self._text.rouge_tokens_many([*sentences, *references], lemmas=self.config.stem))
        return tokens[:len(sentences)], tokens[len(sentences):]

    def prepare(self, sentences: Sequence[str], references: str | Sequence[str]) -> OracleProblem:
        """Tokenize and count the document sentences and the reference(s) once.

        ``references`` is one summary (a string, ``"\\n"`` between its sentences) or a list of summaries.
        """
        if isinstance(sentences, str) or not isinstance(sentences, Sequence):
            raise TypeError("the oracle needs the document as a list of sentence strings, "
                            f"got {type(sentences).__name__}")
        if isinstance(references, str):
            references = [references]
        if not references:
            raise ValueError("the oracle needs at least one reference summary")
        n = self.config.n
        for position, reference in enumerate(references):
            if not isinstance(reference, str):
                raise TypeError(f"reference {position} is {type(reference).__name__}, expected str")
        for position, sentence in enumerate(sentences):
            if not isinstance(sentence, str):
                raise TypeError(f"document sentence {position} is {type(sentence).__name__}, expected str")
        sentence_tokens, reference_tokens = self._tokenized(sentences, references)
        reference_counts = [ngram_counts(tokens, n) for tokens in reference_tokens]
        totals, overlaps = [], []
        for tokens in sentence_tokens:
            counts = ngram_counts(tokens, n)
            totals.append(max(len(tokens) - n + 1, 0))
            overlaps.append([{gram: counts[gram] for gram in counts.keys() & reference.keys()}
                             for reference in reference_counts])
        words = None if self._text is None else [len(tokens) for tokens in sentence_tokens]
        return OracleProblem(n=n, reference_counts=reference_counts,
                             reference_total=sum(sum(counts.values()) for counts in reference_counts),
                             sentence_totals=totals, overlaps=overlaps, sentences=sentences, _sentence_words=words)

    def search(
        self, problem: OracleProblem, objective: str | None = None, max_sentences: int | None = -1,
        max_words: int | None = -1,
    ) -> OracleResult:
        """Greedy search: add the sentence that raises the score most, stop when none raises it.

        ``objective``, ``max_sentences`` and ``max_words`` override the config for this search (``-1`` = keep the
        config's value, ``None`` = no limit). Ties go to the earlier sentence.
        """
        objective = objective or self.config.objective
        if objective not in _OBJECTIVES:
            raise ValueError(f"oracle objective must be one of {_OBJECTIVES}, got {objective!r}")
        max_sentences = self.config.max_sentences if max_sentences == -1 else max_sentences
        max_words = self.config.max_words if max_words == -1 else max_words
        limit = problem.n_sentences if max_sentences is None else min(max_sentences, problem.n_sentences)

        candidate = [dict() for _ in problem.reference_counts]  # clipped-hit bookkeeping per reference
        hit = candidate_total = words = 0
        score = 0.0
        chosen: list[int] = []
        remaining = [i for i in range(problem.n_sentences) if any(problem.overlaps[i])]
        sentence_words = problem.sentence_words if max_words is not None else None
        while len(chosen) < limit:
            best_index, best_score, best_hit = -1, score, hit
            for i in remaining:
                if sentence_words is not None and words + sentence_words[i] > max_words:
                    continue
                new_hit = hit
                for reference, overlap, current in zip(problem.reference_counts, problem.overlaps[i], candidate):
                    for gram, count in overlap.items():
                        have = current.get(gram, 0)
                        cap = reference[gram]
                        if have < cap:
                            new_hit += min(have + count, cap) - have
                value = problem.value(new_hit, candidate_total + problem.sentence_totals[i], objective)
                if value > best_score:
                    best_index, best_score, best_hit = i, value, new_hit
            if best_index < 0:
                break
            chosen.append(best_index)
            remaining.remove(best_index)
            for overlap, current in zip(problem.overlaps[best_index], candidate):
                for gram, count in overlap.items():
                    current[gram] = current.get(gram, 0) + count
            hit, score = best_hit, best_score
            candidate_total += problem.sentence_totals[best_index]
            if sentence_words is not None:
                words += sentence_words[best_index]
        return OracleResult(indices=tuple(chosen), score=score)

    def sentence_scores(self, problem: OracleProblem, objective: str = "f1") -> list[float]:
        """Each sentence's own ROUGE-N (``objective``) against the reference(s): the regression target."""
        if objective not in _OBJECTIVES:
            raise ValueError(f"oracle objective must be one of {_OBJECTIVES}, got {objective!r}")
        scores = []
        for overlaps, total in zip(problem.overlaps, problem.sentence_totals):
            hit = sum(min(count, reference[gram]) for reference, overlap in zip(problem.reference_counts, overlaps)
                      for gram, count in overlap.items())
            scores.append(problem.value(hit, total, objective))
        return scores

    def select(self, sentences: Sequence[str], references: str | Sequence[str]) -> OracleResult:
        """Prepare and search with the config's settings."""
        return self.search(self.prepare(sentences, references))


def greedy_oracle(
    sentences: Sequence[str], references: str | Sequence[str], **config: object
) -> OracleResult:
    """One-call greedy oracle, e.g. ``greedy_oracle(doc_sentences, summary, objective="f1", max_sentences=None)``."""
    return ExtractiveOracle(OracleConfig(**config)).select(sentences, references)
