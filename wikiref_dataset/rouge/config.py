"""The ROUGE-1.5.5 options as a dataclass: :class:`RougeConfig`, read from and written back to ROUGE's own command-line
syntax (``-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250``); the names ROUGE prints for its measures and
the ``-s`` stop-word list.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["RougeConfig", "display_name", "load_stopwords"]


# ROUGE-1.5.5 options read by RougeConfig.from_args: flags, options with a value, and the input-handling ones that
# do not change scores (accepted and ignored; -t is accepted only as -t 0).
_ROUGE_FLAGS = {"-x": ("rouge_l", False), "-m": ("stem", True), "-u": ("skip_unigrams", True)}
_ROUGE_VALUE_OPTIONS = {"-n": ("max_n", int), "-2": ("skip_distance", int), "-c": ("confidence", float),
                        "-r": ("resamples", int), "-f": ("scoring", str), "-p": ("alpha", float),
                        "-l": ("word_limit", int)}
_ROUGE_IGNORED_VALUE_OPTIONS = {"-e", "-z", "-t"}
_ROUGE_IGNORED_FLAGS = {"-a", "-d", "-v"}


@dataclass(frozen=True)
class RougeConfig:
    """The ROUGE-1.5.5 options this engine implements. The defaults are the official DUC 2005-2007 settings
    ``-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250``.

    Args:
        max_n (`int`): ``-n``: compute ROUGE-1 … ROUGE-max_n.
        rouge_l (`bool`): ROUGE-L (summary-level union LCS); ``-x`` turns it off.
        stem (`bool`): ``-m``: ROUGE's Porter stemmer with WordNet 2.0 exceptions.
        skip_distance (`int`, *optional*): ``-2``: ROUGE-S with at most this many words between the two words of a
            skip bigram; a negative value means no limit; ``None`` disables skip bigrams.
        skip_unigrams (`bool`): ``-u``: add unigrams to the skip bigrams (ROUGE-SU).
        confidence (`float`): ``-c``: confidence level of the bootstrap interval, in percent.
        resamples (`int`): ``-r``: number of bootstrap resamples.
        scoring (`str`): ``-f``: ``"A"`` sums hits and counts over references, ``"B"`` keeps the best reference.
        alpha (`float`): ``-p``: F = P·R / ((1-alpha)·P + alpha·R); 0.5 is F1.
        word_limit (`int`, *optional*): ``-l``: keep only the first N words of every summary and reference.
        stopwords (`frozenset[str]`, *optional*): ``-s``: drop these tokens (lowercase, unstemmed) before counting.
            ROUGE-1.5.5 reads its ``data/smart_common_words.txt``; that file is not shipped here, pass it with
            :func:`load_stopwords`.
    """

    max_n: int = field(default=2, metadata={"help": "-n: compute ROUGE-1 ... ROUGE-N."})
    rouge_l: bool = field(default=False, metadata={"help": "ROUGE-L; ROUGE's -x switches it off."})
    stem: bool = field(default=True, metadata={"help": "-m: Porter stemming with WordNet 2.0 exceptions."})
    skip_distance: int | None = field(default=4, metadata={"help": "-2: max words between skip-bigram words."})
    skip_unigrams: bool = field(default=True, metadata={"help": "-u: count unigrams with the skip bigrams."})
    confidence: float = field(default=95.0, metadata={"help": "-c: confidence interval level in percent."})
    resamples: int = field(default=1000, metadata={"help": "-r: bootstrap resamples."})
    scoring: str = field(default="A", metadata={"help": "-f: A = sum over references, B = best reference."})
    alpha: float = field(default=0.5, metadata={"help": "-p: weight of precision in the F-measure."})
    word_limit: int | None = field(default=250, metadata={"help": "-l: truncate texts to N words."})
    stopwords: frozenset[str] | None = field(default=None, metadata={"help": "-s: tokens removed before counting."})

    def __post_init__(self) -> None:
        if self.max_n < 0:
            raise ValueError(f"RougeConfig.max_n must be >= 0, got {self.max_n}")
        if self.scoring not in ("A", "B"):
            raise ValueError(f"RougeConfig.scoring must be 'A' or 'B' (ROUGE's -f), got {self.scoring!r}")
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"RougeConfig.alpha must be in [0, 1] (ROUGE's -p), got {self.alpha}")
        if not 0.0 < self.confidence < 100.0:
            raise ValueError(f"RougeConfig.confidence must be in (0, 100) (ROUGE's -c), got {self.confidence}")
        if self.resamples < 1:
            raise ValueError(f"RougeConfig.resamples must be >= 1 (ROUGE's -r), got {self.resamples}")
        if self.word_limit is not None and self.word_limit < 1:
            raise ValueError(f"RougeConfig.word_limit must be >= 1 or None (ROUGE's -l), got {self.word_limit}")
        if self.stopwords is not None and not isinstance(self.stopwords, frozenset):
            object.__setattr__(self, "stopwords", frozenset(self.stopwords))
        if self.max_n == 0 and not self.rouge_l and self.skip_distance is None:
            raise ValueError("RougeConfig selects no ROUGE measure: set max_n >= 1, rouge_l or skip_distance")

    @classmethod
    def duc(cls) -> RougeConfig:
        """The official DUC 2005-2007 settings (the defaults)."""
        return cls()

    @classmethod
    def from_args(cls, args: str | Sequence[str]) -> RougeConfig:
        """Parse ROUGE-1.5.5 command-line options, e.g. ``"-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0"``.

        Options that only concern ROUGE's input handling (``-a``, ``-d``, ``-e``, ``-z``, ``-t 0``) are accepted and
        ignored; options this engine does not implement (``-b``, ``-w``, ``-3``, ``-t 1/2``, …) raise ``ValueError``.
        Unlike the DUC defaults of :class:`RougeConfig`, anything absent takes ROUGE's own default: no stemming,
        no skip bigrams, ROUGE-L on, no length limit.
        """
        tokens = shlex.split(args) if isinstance(args, str) else list(args)
        values: dict = {"max_n": 0, "rouge_l": True, "stem": False, "skip_distance": None, "skip_unigrams": False,
                        "confidence": 95.0, "resamples": 1000, "scoring": "A", "alpha": 0.5, "word_limit": None}
        i = 0
        while i < len(tokens):
            opt = tokens[i]
            if opt in _ROUGE_FLAGS:
                name, value = _ROUGE_FLAGS[opt]
                values[name] = value
            elif opt in _ROUGE_VALUE_OPTIONS or opt in _ROUGE_IGNORED_VALUE_OPTIONS:
                if i + 1 >= len(tokens):
                    raise ValueError(f"ROUGE option {opt} needs a value")
                i += 1
                text = tokens[i]
                if opt == "-t" and text != "0":
                    raise ValueError("only -t 0 (sentence counting unit) is implemented")
                if opt in _ROUGE_VALUE_OPTIONS:
                    name, kind = _ROUGE_VALUE_OPTIONS[opt]
                    try:
                        values[name] = kind(text)
                    except ValueError as err:
                        raise ValueError(f"bad value {text!r} for ROUGE option {opt}: {err}") from None
            elif opt == "-s":
                raise ValueError("-s needs a stop-word list: use RougeConfig(stopwords=load_stopwords(path))")
            elif opt not in _ROUGE_IGNORED_FLAGS:
                raise ValueError(f"ROUGE option {opt} is not implemented by this engine")
            i += 1
        if values["skip_unigrams"] and values["skip_distance"] is None:
            raise ValueError("ROUGE option -u needs -2 (skip-bigram distance)")
        return cls(**values)

    def to_args(self) -> list[str]:
        """The ROUGE-1.5.5 command-line options equivalent to this config (without ``-s``/``-a``/``-d``)."""
        args = ["-n", str(self.max_n)]
        if not self.rouge_l:
            args.append("-x")
        if self.stem:
            args.append("-m")
        if self.skip_distance is not None:
            args += ["-2", str(self.skip_distance)]
            if self.skip_unigrams:
                args.append("-u")
        args += ["-c", _format_number(self.confidence), "-r", str(self.resamples), "-f", self.scoring,
                 "-p", _format_number(self.alpha), "-t", "0"]
        if self.word_limit is not None:
            args += ["-l", str(self.word_limit)]
        return args

    @property
    def metric_names(self) -> list[str]:
        """Result keys in ROUGE's print order: ``rouge_1`` … ``rouge_{n}``, ``rouge_l``, ``rouge_su4``/``rouge_s4``."""
        names = [f"rouge_{n}" for n in range(1, self.max_n + 1)]
        if self.rouge_l:
            names.append("rouge_l")
        if self.skip_distance is not None:
            distance = "*" if self.skip_distance < 0 else str(self.skip_distance)
            names.append(f"rouge_{'su' if self.skip_unigrams else 's'}{distance}")
        return names


def _format_number(value: float) -> str:
    """Shortest text that reads back as the same float: ``95``, ``0.5``, ``0.3333333333333333``."""
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))


def display_name(metric: str) -> str:
    """ROUGE's printed name of a result key: ``rouge_su4`` → ``ROUGE-SU4``."""
    return "ROUGE-" + metric[len("rouge_"):].upper()


def load_stopwords(path: str | os.PathLike) -> frozenset[str]:
    """Read a stop-word list (one word per line, ``#`` comments allowed) such as ROUGE's ``smart_common_words.txt``."""
    words = set()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            word = line.split("#", 1)[0].strip().lower()
            if word:
                words.add(word)
    if not words:
        raise ValueError(f"stop-word file {os.fspath(path)!r} holds no words")
    return frozenset(words)
