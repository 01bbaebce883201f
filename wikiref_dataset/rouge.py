"""ROUGE exactly as ROUGE-1.5.5 computes it: the one ROUGE engine of the project.

Everything that scores text with ROUGE calls this module: the DUC metric (``metrics/duc_rouge``), the extractive
oracle (``oracle.py``), curation, baselines and the training scripts.

Why it is written by hand: ``rouge_score`` and ``evaluate``'s rouge have no ROUGE-SU4, use another stemmer (about
0.3 ROUGE-1 points low on DUC data) and another multi-reference rule; the only exact implementation is the Perl
script itself. This module reimplements its documented behaviour (``docs/rouge.md``, rules 1-10)
and is checked against the outputs the Perl script printed for 621 items, to the fifth decimal:

* reading: a text is split into lines at ``"\\n"`` only, zero-length lines are skipped, ``\\r`` stays in a line;
* ``-l N``: words counted with Perl's ``split(/\\s+/)`` (ASCII whitespace, a leading empty field counts), lines taken
  whole while the count stays below N, the first line that reaches N cut to its first fields; applied to the system
  and to every reference;
* tokens: every character other than ``[A-Za-z0-9]`` is a separator, ASCII-only lowercasing; ``-m`` stems tokens
  longer than 3 characters (WordNet 2.0 exceptions, then ROUGE's Porter variant, see ``_rouge_stemmer.py``);
* ROUGE-N over the joined token list, ROUGE-SU(d) (skip bigrams with at most d words between, plus unigrams with
  ROUGE's quirk of not counting the last one), ROUGE-L as the summary-level union LCS over lines;
* ``-f A`` (hits and counts summed over references, clipping per reference) and ``-f B`` (best reference);
* per-item R/P rounded to 5 decimals, F from the rounded R and P; averages as the mean of ``-r`` bootstrap
  resamples drawn with Perl's ``srand(s)``/``rand()`` (drand48), and the ``-c`` confidence interval.

How it runs (about 40x the Perl script on DUC-sized items, ``benchmarks/bench_duc_rouge.py``): items are scored a few
dozen at a time. Their texts are tokenized together with numpy (``-l`` cut and token boundaries from byte classes,
each token identified by its base-37 number, stems numbered through one dictionary lookup per distinct token), and
the grams of every measure are matched in one sort per measure (integer keys made of item, gram and text; grams with a
token absent from the other side of their item are left out first). A few short texts go through the plain
definitions instead (:func:`ngram_counts`, :func:`skip_bigram_counts`, :func:`clipped_hits`). The bootstrap draws the
same drand48 indices and adds the drawn scores in the same order as Perl, so every printed digit is the same.

Public API: :class:`RougeConfig` (the ROUGE command-line options as a dataclass, ``from_args``/``to_args``),
:class:`RougeScorer` (per item and whole-corpus scoring), :func:`rouge` (a plain function), :func:`rouge_tokenize`,
:func:`truncate_lines`, :func:`bootstrap_average`, :func:`drand48_sequence`.
"""

from __future__ import annotations

import os
import re
import shlex
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from itertools import accumulate, chain

import numpy as np

from ._rouge_stemmer import RougeStemmer

__all__ = [
    "RougeConfig",
    "RougeScore",
    "RougeAverage",
    "RougeResult",
    "AnalyzedSummary",
    "RougeScorer",
    "rouge",
    "rouge_tokenize",
    "read_lines",
    "truncate_lines",
    "count_words",
    "ngram_counts",
    "skip_bigram_counts",
    "clipped_hits",
    "bootstrap_average",
    "drand48_sequence",
    "load_stopwords",
]

# Perl's \s on a byte string: space, \t, \n, \r, \f and \v (since Perl 5.18). NBSP, U+0085, U+2028 are not.
_PERL_WHITESPACE = re.compile(r"[ \t\n\r\f\v]+")
# ROUGE replaces "-" by " - " and every other character outside [A-Za-z0-9-] by a space, then keeps only tokens that
# start with [a-z0-9]: which is the same as treating every character outside [A-Za-z0-9] as a separator. On UTF-8
# bytes one translate() does it and lowercases ASCII-only: every byte of a non-ASCII character (as in Perl, which
# reads bytes) becomes a space, so KELVIN SIGN or U+0130 never turn into ASCII letters.
_TOKEN_TABLE = bytes(c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256))
_LINE_WITH_LEADING_WHITESPACE = re.compile(rb"\n[ \t\r\f\v]")
_TOKEN_ONLY = re.compile(r"[a-z0-9]+")


# ----------------------------------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------------------------------

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


# ----------------------------------------------------------------------------------------------------------------
# Reading, truncation, tokenization
# ----------------------------------------------------------------------------------------------------------------


def read_lines(text: str | Sequence[str]) -> list[str]:
    """The lines ROUGE reads from a summary: split at ``"\\n"`` only, zero-length lines dropped.

    A list of strings is one sentence per line (each may itself hold ``"\\n"``). Whitespace-only lines are kept:
    they add no word and form an empty ROUGE-L unit, as in ROUGE-1.5.5.
    """
    if isinstance(text, str):
        raw = text.split("\n")
    elif isinstance(text, Sequence):
        raw = []
        for position, sentence in enumerate(text):
            if not isinstance(sentence, str):
                raise TypeError(f"summary sentence {position} is {type(sentence).__name__}, expected str")
            raw.extend(sentence.split("\n"))
    else:
        raise TypeError(f"a summary must be a string or a list of sentence strings, got {type(text).__name__}")
    return [line for line in raw if line]


def _perl_split_words(line: str) -> list[str]:
    """``split(/\\s+/, $line)``: a leading empty field is kept, trailing empty fields are removed."""
    words = _PERL_WHITESPACE.split(line)
    while words and not words[-1]:
        words.pop()
    return words


# Characters Python's str.split() treats as whitespace and Perl's \s does not (on bytes): where none occurs, the fast
# C split gives Perl's fields, but for the leading empty field Perl keeps.
_PYTHON_ONLY_WHITESPACE = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def _line_word_count(line: str) -> int:
    r"""``scalar(split(/\s+/, $line))`` without building Perl's field list where Python's split agrees."""
    if _PYTHON_ONLY_WHITESPACE.search(line):
        return len(_perl_split_words(line))
    words = line.split()
    return len(words) + 1 if words and line[0] in " \t\n\r\f\v" else len(words)


def count_words(text: str | Sequence[str]) -> int:
    """The number of words ROUGE's ``-l`` counts in a summary (a leading-whitespace line counts one extra)."""
    return sum(_line_word_count(line) for line in read_lines(text))


def truncate_lines(lines: Sequence[str], limit: int | None) -> list[str]:
    """ROUGE's ``-l limit``: lines are kept whole while the running word count stays below ``limit``; the first line
    that would reach it is replaced by its first ``limit - count`` fields joined by single spaces, and reading stops.
    """
    if limit is None:
        return list(lines)
    kept: list[str] = []
    count = 0
    for line in lines:
        n_words = _line_word_count(line)
        if count + n_words < limit:
            kept.append(line)
            count += n_words
        else:
            kept.append(" ".join(_perl_split_words(line)[: limit - count]))
            break
    return kept


def rouge_tokenize(text: str) -> list[str]:
    """ROUGE-1.5.5's tokens of one line (unstemmed): ASCII letters and digits, lowercased ASCII-only.

    ``U.S.-led`` → ``u s led``; ``don't`` → ``don t``; ``Zürich`` → ``z rich``; ``-LRB-`` → ``lrb``.
    """
    return text.encode("utf-8", "surrogatepass").translate(_TOKEN_TABLE).decode("ascii").split()


def _summary_bytes(text: str | Sequence[str], limit: int | None) -> tuple[bytes, bool]:
    """The UTF-8 bytes ROUGE tokenizes for a summary, and whether the ``-l`` cut is still to be made on them.

    ROUGE joins the truncated lines of a summary (:func:`truncate_lines`) and no token spans two lines, so a string
    summary can be tokenized whole, empty lines and all. With a word limit, where no line starts with whitespace
    (which would add Perl's empty leading field), every whitespace-separated field is one ``-l`` word, and the kept
    text (whole lines, then the first words of the line that reaches the limit) ends right before the summary's field
    ``limit + 1``: :meth:`RougeScorer._number_texts` finds that field for many summaries at once (on UTF-8 bytes, the
    whitespace bytes are exactly Perl's ``\\s``). Other summaries are truncated line by line here.
    """
    if isinstance(text, str):
        data = text.encode("utf-8", "surrogatepass")
        if limit is None:
            return data, False
        if not data[:1].isspace() and not _LINE_WITH_LEADING_WHITESPACE.search(data):
            return data, True
    return "\n".join(truncate_lines(read_lines(text), limit)).encode("utf-8", "surrogatepass"), False


# The batch tokenizer (RougeScorer._number_texts) classifies the bytes of many summaries at once with these tables:
# Perl's \s, and the base-37 digit of a token character (1-36 for [0-9a-z], A-Z folded; 0 for every other byte, the
# bytes of non-ASCII characters included). A token of at most 11 characters is identified by its base-37 number,
# which is below 2**63; longer tokens, which are rare, are looked up as bytes.
_WHITESPACE_BYTE = np.zeros(256, dtype=bool)
_WHITESPACE_BYTE[list(b" \t\n\r\f\v")] = True
_TOKEN_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
_TOKEN_DIGIT = np.zeros(256, dtype=np.uint64)
_TOKEN_DIGIT[np.frombuffer(_TOKEN_ALPHABET.encode(), dtype=np.uint8)] = np.arange(1, 37)
_TOKEN_DIGIT[np.frombuffer(_TOKEN_ALPHABET.upper().encode(), dtype=np.uint8)] = np.arange(1, 37)
_CODED_LENGTH = 11
_INVERSE_37 = pow(37, -1, 1 << 64)  # 37 is odd, so invertible modulo 2**64


def _decode_token(code: int) -> str:
    """The token whose base-37 number is ``code``."""
    characters = []
    while code:
        code, digit = divmod(code, 37)
        characters.append(_TOKEN_ALPHABET[digit - 1])
    return "".join(reversed(characters))


def _token_code(token: str) -> int:
    """The base-37 number of a token of [0-9a-z]."""
    code = 0
    for character in token:
        code = code * 37 + _TOKEN_ALPHABET.index(character) + 1
    return code


# ----------------------------------------------------------------------------------------------------------------
# Counting
# ----------------------------------------------------------------------------------------------------------------


def ngram_counts(tokens: Sequence[str], n: int) -> Counter:
    """Counts of the n-grams of a token list (unigrams are strings, longer n-grams tuples)."""
    if n == 1:
        return Counter(tokens)
    return Counter(zip(*(tokens[i:] for i in range(n))))


def skip_bigram_counts(tokens: Sequence[str], max_gap: int, with_unigrams: bool) -> Counter:
    """ROUGE-S/SU grams: pairs ``(t_i, t_j)`` with ``i < j <= i + max_gap + 1`` (no limit when ``max_gap < 0``),
    plus, with ``with_unigrams``, the unigrams of every token but the last (ROUGE-1.5.5's loop stops one early, so a
    one-token text has no SU gram at all)."""
    n_tokens = len(tokens)
    if n_tokens < 2:
        return Counter()
    span = n_tokens - 1 if max_gap < 0 else min(max_gap + 1, n_tokens - 1)
    grams: Iterable = chain.from_iterable(zip(tokens, tokens[offset:]) for offset in range(1, span + 1))
    if with_unigrams:
        grams = chain(tokens[:-1], grams)
    return Counter(grams)


def clipped_hits(system: Counter, reference: Counter) -> int:
    """Σ over grams of min(system count, reference count): the matches ROUGE counts against one reference."""
    if len(system) > len(reference):
        system, reference = reference, system
    return sum(min(count, reference[gram]) for gram, count in system.items() if gram in reference)


def _union_lcs_marks(reference_unit: Sequence[str], system_units: Sequence[Sequence[str]]) -> list[bool]:
    """Positions of a reference unit covered by an LCS with any system unit (the union LCS of ROUGE-L).

    The DP and backtrack follow ROUGE-1.5.5's tie rule: a match moves diagonally, otherwise "up" (drop a reference
    token) when ``c[i-1][j] >= c[i][j-1]``, else "left"; backtracking starts at the bottom-right corner.

    Two exact shortcuts keep this fast: a reference token absent from the system unit gives a row equal to the row
    above whose every step is "up", so such rows are left out of the table (the path crosses them vertically, marking
    nothing); and a row is the running maximum of the row above with ``c[i-1][j-1] + 1`` put in at the matches
    (``c[i][j-1] <= c[i-1][j-1] + 1`` always holds), which ``itertools.accumulate`` computes without a Python loop.
    """
    marks = [False] * len(reference_unit)
    for unit in system_units:
        positions: dict[str, list[int]] = {}
        for j, token in enumerate(unit, start=1):
            positions.setdefault(token, []).append(j)
        rows = [i for i, token in enumerate(reference_unit) if token in positions]
        if not rows:
            continue
        table = [[0] * (len(unit) + 1)]
        for i in rows:
            previous = table[-1]
            values = previous[:]
            for j in positions[reference_unit[i]]:
                values[j] = previous[j - 1] + 1
            table.append(list(accumulate(values, max)))
        t, j = len(rows), len(unit)
        while t > 0 and j > 0:
            if unit[j - 1] == reference_unit[rows[t - 1]]:
                marks[rows[t - 1]] = True
                t -= 1
                j -= 1
            elif table[t - 1][j] >= table[t][j - 1]:
                t -= 1
            else:
                j -= 1
    return marks


# ----------------------------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------------------------
# Bootstrap
# ----------------------------------------------------------------------------------------------------------------

_DRAND48_A = np.uint64(0x5DEECE66D)
_DRAND48_C = np.uint64(0xB)
_DRAND48_MASK = np.uint64((1 << 48) - 1)


def drand48_sequence(seeds: Sequence[int] | np.ndarray, length: int) -> np.ndarray:
    """Perl's ``srand(seed); rand() x length`` for many seeds at once: an array of shape ``(len(seeds), length)``.

    Perl >= 5.20 implements ``rand`` with its own drand48: ``srand(s)`` sets ``x = (s << 16) + 0x330E`` and each
    call does ``x = (0x5DEECE66D * x + 0xB) mod 2**48`` and returns ``x / 2**48``. uint64 arithmetic wraps modulo
    2**64, of which 2**48 is a divisor, so masking after the multiplication is exact.
    """
    state = (np.asarray(seeds, dtype=np.uint64) << np.uint64(16)) + np.uint64(0x330E)
    out = np.empty((state.shape[0], length), dtype=np.float64)
    with np.errstate(over="ignore"):
        for step in range(length):
            state = (state * _DRAND48_A + _DRAND48_C) & _DRAND48_MASK
            out[:, step] = state
    return out * (2.0**-48)


def bootstrap_average(
    values: np.ndarray, resamples: int = 1000, confidence: float = 95.0, keys: Sequence[str] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROUGE-1.5.5's bootstrap average of per-item values.

    Args:
        values (`np.ndarray` of shape `(n_items, n_values)`): rounded per-item scores, in input order.
        resamples (`int`): ``-r``.
        confidence (`float`): ``-c`` in percent.
        keys (`Sequence[str]`, *optional*): the instance keys ROUGE sorts as strings before sampling; by default
            ``"1.X" … "n.X"`` (item k of the input is eval ID k, as when ROUGE reads a file list).

    Returns:
        `(mean, low, high)`, each of shape `(n_values,)`, rounded to 5 decimals like ROUGE's output.

    Resample ``s`` (0-based) seeds Perl's generator with ``srand(s)`` and draws ``n`` indices ``int(rand() * n)``
    into the sorted key list; its value is the sum of the drawn items in draw order, divided by ``n``. The average
    is the mean of the sorted resample values (summed in that order). The interval bounds are ROUGE's: with
    ``delta = r·(100-c)/200`` and ``u = r - delta - 1``, ``sorted[i] + (sorted[i+1] - sorted[i])·frac(u)`` for
    ``i = int(delta)`` and ``i = int(u)`` (``[sorted[25], sorted[974]]`` for ``-r 1000 -c 95``).
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    n_items, n_values = values.shape
    if n_items == 0:
        zeros = np.zeros(n_values)
        return zeros, zeros.copy(), zeros.copy()
    if keys is None:
        keys = [f"{k}.X" for k in range(1, n_items + 1)]
    if len(keys) != n_items:
        raise ValueError(f"bootstrap_average got {len(keys)} keys for {n_items} items")
    order = sorted(range(n_items), key=lambda position: keys[position])
    ordered = values[order]
    # draws[step] holds the item drawn at that step by every resample.
    draws = np.ascontiguousarray((drand48_sequence(np.arange(resamples), n_items) * n_items).astype(np.int64).T)
    sums = np.zeros((resamples, n_values), dtype=np.float64)
    drawn = np.empty_like(sums)
    for step in range(n_items):  # sequential sums, in draw order, as Perl adds them
        np.take(ordered, draws[step], axis=0, out=drawn)
        np.add(sums, drawn, out=sums)
    means = np.sort(sums / n_items, axis=0)
    average = np.cumsum(means, axis=0)[-1] / resamples  # cumsum adds in order, like Perl's loop
    # ROUGE-1.5.5's interval: delta = r·(100-c)/200; both bounds interpolate towards the next sorted value with the
    # fraction of the upper index r - delta - 1 (exact indices, no interpolation, for -r 1000 -c 95).
    delta = resamples * ((100.0 - confidence) / 2.0) / 100.0
    upper = resamples - delta - 1
    low_index, high_index = int(delta), int(upper)
    fraction = upper - high_index

    def bound(index: int) -> np.ndarray:
        if fraction == 0.0 or index + 1 >= resamples:
            return means[index]
        return means[index] + (means[index + 1] - means[index]) * fraction

    rounded = np.vectorize(_round5)
    return rounded(average), rounded(bound(low_index)), rounded(bound(high_index))


# ----------------------------------------------------------------------------------------------------------------
# Scoring
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class AnalyzedSummary:
    """A summary as ROUGE sees it: the scorer's ids of its stemmed tokens, after ``-l`` and ``-s``; and, only where
    ROUGE-L needs them, the stemmed tokens themselves, all of them and per (truncated) line (empty lists otherwise).

    Ids come from the scorer's vocabulary (see :meth:`RougeScorer.analyze`); they are comparable only between texts
    analyzed by the same scorer in the same vocabulary generation.
    """

    ids: np.ndarray
    tokens: list[str] = field(default_factory=list)
    units: list[list[str]] = field(default_factory=list)
    generation: int = 0


# Token ids take 21 bits, so a pair of ids takes 42 bits, and a flag bit above them marks the unigrams of ROUGE-SU:
# every gram code fits in 43 bits (n-grams with n > 2 are renumbered densely). A gram is sorted and matched as the key
# ``item << (43 + slot_bits) | code << slot_bits | slot`` (slot 0: the item's system, r: its reference r).
_ID_BITS = 21
_MAX_IDS = 1 << _ID_BITS
_CODE_BITS = 2 * _ID_BITS + 1
_VOCABULARY_RESET = 1 << 20
# Items counted together by RougeScorer.score_many: enough to make numpy's per-call cost small, few enough that the
# arrays of a batch stay in the CPU cache; and items tokenized together.
_BATCH_ITEMS = 16
_TOKENIZE_ITEMS = 32
# Below these sizes (all texts of a call together) numpy's per-call cost outweighs its speed: small items are
# tokenized and counted in plain Python.
_SMALL_BYTES = 1024
_SMALL_TOKENS = 128


def _renumber(codes: np.ndarray) -> np.ndarray:
    """Dense codes (0 … distinct-1) with the same equalities."""
    return np.unique(codes, return_inverse=True)[1].astype(np.int64, copy=False).reshape(-1)


def _clipped_hits(keys: np.ndarray, slot_bits: int, item_shift: int, n_items: int, width: int) -> np.ndarray:
    """Per item and reference slot: Σ over grams of min(count in that reference, count in the item's system), from
    the keys of all grams of a batch (see ``_CODE_BITS``); shape ``(n_items, width)``, column 0 (the system) zero.

    Sorted, equal keys are one gram of one text (a run), and a gram's runs within one item are adjacent, the system's
    first when there is one. A gram that occurs once in its item matches nothing: such keys (most of them) are
    dropped first.
    """
    hits = np.zeros((n_items, width), dtype=np.int64)
    if keys.shape[0] < 2:
        return hits
    keys = np.sort(keys)
    grams = keys >> slot_bits  # (item, gram code)
    repeated = np.zeros(keys.shape[0], dtype=bool)
    np.equal(grams[1:], grams[:-1], out=repeated[1:])
    repeated[:-1] |= repeated[1:]
    keys = keys[repeated]
    size = keys.shape[0]
    if size == 0:
        return hits
    first = np.empty(size, dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    runs = keys[starts]
    counts = np.empty(starts.shape[0], dtype=np.int64)
    np.subtract(starts[1:], starts[:-1], out=counts[:-1])
    counts[-1] = size - starts[-1]
    grams = runs >> slot_bits  # (item, gram code)
    np.not_equal(grams[1:], grams[:-1], out=first[1:runs.shape[0]])
    group_starts = np.flatnonzero(first[:runs.shape[0]])
    group_sizes = np.empty(group_starts.shape[0], dtype=np.int64)
    np.subtract(group_starts[1:], group_starts[:-1], out=group_sizes[:-1])
    group_sizes[-1] = runs.shape[0] - group_starts[-1]
    slots = runs & ((1 << slot_bits) - 1)
    system_counts = counts[group_starts]
    system_counts[slots[group_starts] != 0] = 0
    matched = np.minimum(counts, np.repeat(system_counts, group_sizes))
    cells = (runs >> item_shift) * width + slots
    hits = np.bincount(cells, weights=matched, minlength=n_items * width).astype(np.int64).reshape(n_items, width)
    hits[:, 0] = 0
    return hits


def _gram_table(
    ids: np.ndarray, lengths: np.ndarray, widths: Sequence[int], config: RougeConfig, scratch: np.ndarray | None = None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The counts behind every ROUGE-N and ROUGE-S/SU score of a batch of at most 32 items.

    ``ids`` are the token ids of all texts one after another, ``lengths`` their numbers of tokens, and item k is the
    next ``widths[k]`` texts: its system summary, then its references. Returns ``{metric: (hits, totals)}``, two int
    arrays of shape ``(n_items, max(widths))``: column 0 holds the system's gram count in both, column r the clipped
    hits of the system against reference r and that reference's gram count (zeros past an item's last reference).
    All texts are counted in one numpy pass per measure: gram keys are built over the concatenated ids, and a gram is
    kept where it lies inside one text. ``scratch`` (optional) is a zeroed uint64 array longer than the largest id,
    left zeroed.
    """
    if ids.shape[0] < _SMALL_TOKENS:
        return _small_gram_table(ids, lengths, widths, config)
    n_items = len(widths)
    width = max(widths)
    slot_bits = max((width - 1).bit_length(), 1)
    item_shift = _CODE_BITS + slot_bits
    if n_items > 32 or item_shift + max((n_items - 1).bit_length(), 1) > 63:
        raise ValueError(f"_gram_table takes at most 32 items and 2**{62 - _CODE_BITS} texts per item at a time")
    text_lengths = lengths.tolist()
    text_items = [item for item, texts in enumerate(widths) for _ in range(texts)]
    text_slots = [slot for texts in widths for slot in range(texts)]
    text_cells = np.array([item * width + slot for item, slot in zip(text_items, text_slots)], dtype=np.int64)
    size = ids.shape[0]
    # Tokens left in its text from each position on (itself included): an n-gram starting at i lies inside one text
    # when remaining[i] >= n, a skip bigram (i, i + d) when remaining[i] > d.
    remaining = np.repeat(np.cumsum(lengths), lengths) - np.arange(size)
    base = np.repeat(np.array([(item << item_shift) | slot for item, slot in zip(text_items, text_slots)],
                              dtype=np.int64), lengths)

    # A gram can match only if each of its tokens occurs on the other side of its item (a reference token in the
    # system, a system token in one of the references): only such grams get keys; the totals count all grams.
    # occurs[id] has bit 2·item set when the id is in that item's system, bit 2·item + 1 when in one of its references.
    occurs = scratch if scratch is not None else np.zeros(int(ids.max()) + 1 if size else 1, dtype=np.uint64)
    wanted = np.empty(len(text_lengths), dtype=np.uint64)
    start = text = 0
    for item, texts in enumerate(widths):
        system_end = start + text_lengths[text]
        item_end = system_end + sum(text_lengths[text + 1:text + texts])
        occurs[ids[start:system_end]] |= np.uint64(1 << 2 * item)
        occurs[ids[system_end:item_end]] |= np.uint64(2 << 2 * item)
        wanted[text] = 2 << 2 * item
        wanted[text + 1:text + texts] = 1 << 2 * item
        start, text = item_end, text + texts
    useful = (occurs[ids] & np.repeat(wanted, lengths)) != 0
    occurs[ids] = 0

    def table(keys: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hits = _clipped_hits(keys, slot_bits, item_shift, n_items, width)
        counts = np.zeros(n_items * width, dtype=np.int64)
        counts[text_cells] = totals
        return hits, counts.reshape(n_items, width)

    unigrams = (ids << slot_bits) | base
    firsts = (ids << (_ID_BITS + slot_bits)) | base  # a pair's key is its first token's | its second token's
    seconds = ids << slot_bits
    pairs: dict[int, np.ndarray] = {}  # keys of the skip bigrams (i, i + offset) kept, by offset

    def pair_keys(offset: int) -> np.ndarray:
        if offset not in pairs:
            kept = remaining[:-offset] > offset
            kept &= useful[:-offset]
            kept &= useful[offset:]
            pairs[offset] = (firsts[:-offset] | seconds[offset:])[kept]
        return pairs[offset]

    results: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for n in range(1, config.max_n + 1):
        if n == 1:
            keys = unigrams[useful]
        elif n == 2:
            keys = pair_keys(1)
            codes, all_useful = (ids[:-1] << _ID_BITS) | ids[1:], useful[:-1] & useful[1:]
        else:  # the (n-1)-gram codes (42 bits, or dense) extended by one id, then renumbered densely
            codes = _renumber((codes[:-1] << _ID_BITS) | ids[n - 1:])
            all_useful = all_useful[:-1] & useful[n - 1:]
            keys = ((codes << slot_bits) | base[:codes.shape[0]])[(remaining[:codes.shape[0]] >= n) & all_useful]
        results[f"rouge_{n}"] = table(keys, np.maximum(lengths - n + 1, 0))
    if config.skip_distance is not None:
        longest = int(lengths.max()) if lengths.shape[0] else 0
        span = longest - 1 if config.skip_distance < 0 else min(config.skip_distance + 1, longest - 1)
        parts = [pair_keys(offset) for offset in range(1, span + 1)]
        pairs_per_text = np.clip(np.minimum(lengths - 1, span), 0, None)
        totals = pairs_per_text * lengths - pairs_per_text * (pairs_per_text + 1) // 2
        if config.skip_unigrams:
            # ROUGE-SU's unigrams: every token but the last of its text (ROUGE-1.5.5's loop stops one early).
            parts.append(unigrams[(remaining > 1) & useful] | (1 << (2 * _ID_BITS + slot_bits)))
            totals = totals + np.clip(lengths - 1, 0, None)
        keys = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        results[config.metric_names[-1]] = table(keys, totals)
    return results


def _small_gram_table(
    ids: np.ndarray, lengths: np.ndarray, widths: Sequence[int], config: RougeConfig
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`_gram_table` for a few tokens, where numpy's per-call cost outweighs its speed: the grams of each text
    counted with the plain definitions (:func:`ngram_counts`, :func:`skip_bigram_counts`, :func:`clipped_hits`)."""
    n_items, width = len(widths), max(widths)
    texts = [text.tolist() for text in np.split(ids, np.cumsum(lengths)[:-1])]
    counters = {f"rouge_{n}": (lambda tokens, n=n: ngram_counts(tokens, n)) for n in range(1, config.max_n + 1)}
    if config.skip_distance is not None:
        counters[config.metric_names[-1]] = lambda tokens: skip_bigram_counts(tokens, config.skip_distance,
                                                                             config.skip_unigrams)
    results = {}
    for metric, count in counters.items():
        hits = np.zeros((n_items, width), dtype=np.int64)
        totals = np.zeros((n_items, width), dtype=np.int64)
        first = 0
        for item, texts_in_item in enumerate(widths):
            system, *references = (count(tokens) for tokens in texts[first:first + texts_in_item])
            totals[item, 0] = sum(system.values())
            for slot, reference in enumerate(references, start=1):
                hits[item, slot] = clipped_hits(system, reference)
                totals[item, slot] = sum(reference.values())
            first += texts_in_item
        results[metric] = (hits, totals)
    return results


def _powers_of_37(size: int) -> tuple[np.ndarray, np.ndarray]:
    """37**j and 37**-j modulo 2**64 for j < size (uint64 products wrap modulo 2**64)."""
    forward = np.full(size, 37, dtype=np.uint64)
    inverse = np.full(size, _INVERSE_37, dtype=np.uint64)
    forward[0] = inverse[0] = 1
    np.cumprod(forward, out=forward)
    np.cumprod(inverse, out=inverse)
    return forward, inverse


def _lcs_hits(system: Sequence[Sequence[str]], reference: Sequence[Sequence[str]]) -> tuple[int, int, int]:
    """ROUGE-L (hit, reference count, system count) of a system against one reference, both given as their units
    (stemmed tokens per line)."""
    system_tokens = [token for unit in system for token in unit]
    remaining_reference = Counter(token for unit in reference for token in unit)
    remaining_system = Counter(system_tokens)
    hit = 0
    base = 0
    for unit in reference:
        base += len(unit)
        marks = _union_lcs_marks(unit, system)
        for token, marked in zip(unit, marks):
            if marked and remaining_reference[token] > 0 and remaining_system.get(token, 0) > 0:
                hit += 1
                remaining_reference[token] -= 1
                remaining_system[token] -= 1
    return hit, base, len(system_tokens)


class RougeScorer:
    """Scores system summaries against references with ROUGE-1.5.5 semantics.

    One scorer holds one stemmer cache and one token vocabulary; reuse it across calls (stemming and numbering are
    memoised per token). Items are scored a few at a time: their texts are tokenized together with numpy
    (:meth:`_number_texts`) and their grams counted together (:func:`_gram_table`).

    Example:
        >>> scorer = RougeScorer()  # official DUC settings
        >>> result = scorer.evaluate(["the cat sat on the mat"], [["a cat sat on a mat", "the cat was on the mat"]])
        >>> result.averages["rouge_2"].recall
    """

    def __init__(self, config: RougeConfig | None = None, stemmer: RougeStemmer | None = None) -> None:
        self.config = config or RougeConfig()
        self._stemmer = (stemmer or RougeStemmer()) if self.config.stem else None
        # Stems are numbered so that counting and matching run in numpy. Numbers only need to agree within the items
        # scored together, so the tables are cleared between batches when they grow large (a new generation). Tokens
        # map to the numbers of their stems: by base-37 code (at most 11 characters) or else by bytes; stop words
        # (-s) map to -1.
        self._vocabulary: dict[str, int] = {}
        self._code_ids: dict[int, int] = {}
        self._token_ids: dict[bytes, int] = {}
        self._generation = 0
        self._add_stopwords()
        self._powers = (np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint64))
        self._scratch: np.ndarray | None = None

    # -- text analysis -------------------------------------------------------------------------------------------

    def tokens(self, line: str) -> list[str]:
        """ROUGE tokens of one line after stop-word removal (``-s``) and stemming (``-m``)."""
        tokens = rouge_tokenize(line)
        if self.config.stopwords:
            stopwords = self.config.stopwords
            tokens = [token for token in tokens if token not in stopwords]
        if self._stemmer is not None:
            tokens = self._stemmer.stem_many(tokens)
        return tokens

    def summary_tokens(self, text: str | Sequence[str]) -> list[str]:
        """All ROUGE tokens of a summary, as the measures count them: read, truncated (``-l``), stemmed."""
        return [token for line in truncate_lines(read_lines(text), self.config.word_limit) for token in self.tokens(line)]

    def analyze(self, text: str | Sequence[str]) -> AnalyzedSummary:
        """Read, truncate (``-l``), tokenize, stem and number one summary; for ROUGE-L, also keep its stemmed tokens
        per line."""
        data, cut = _summary_bytes(text, self.config.word_limit)
        ids, _ = self._number_texts([data], [cut])
        units = self._units(text) if self.config.rouge_l else []
        return AnalyzedSummary(ids=ids, tokens=[token for unit in units for token in unit], units=units,
                               generation=self._generation)

    def _units(self, text: str | Sequence[str]) -> list[list[str]]:
        """ROUGE-L's units: the stemmed tokens of each truncated line."""
        return [self.tokens(line) for line in truncate_lines(read_lines(text), self.config.word_limit)]

    def _number_texts(self, datas: Sequence[bytes], cut: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
        """Token ids of summaries given as :func:`_summary_bytes` gives them (``cut[t]``: the ``-l`` cut is still to
        be made), all concatenated, and the number of tokens of each summary.

        The summaries are joined with ``"\\n"`` (whitespace, so no field or token spans two of them) and classified
        byte by byte. A cut summary loses its bytes from its field ``limit + 1`` on. Token boundaries are where
        token characters start and stop; a token's base-37 code is read off prefix sums of ``digit × 37**-position``
        (mod 2**64, exact below 2**63), and codes become stem numbers through a dictionary, once per distinct code.
        A few short summaries cost less in Python: :meth:`_number_small_texts`.
        """
        buffer = b"\n".join(datas)
        size = len(buffer)
        if size < _SMALL_BYTES:
            return self._number_small_texts(datas, cut)
        raw = np.frombuffer(buffer, dtype=np.uint8)
        digits = np.take(_TOKEN_DIGIT, raw)
        bounds = [0]  # summary t is buffer[bounds[t]:bounds[t + 1] - 1]
        for data in datas:
            bounds.append(bounds[-1] + len(data) + 1)
        to_cut = [text for text, flag in enumerate(cut) if flag]
        if to_cut and self.config.word_limit is not None:
            limit = self.config.word_limit
            space = np.take(_WHITESPACE_BYTE, raw)
            field = ~space
            field[1:] &= space[:-1]
            field_starts = np.flatnonzero(field)
            firsts = np.searchsorted(field_starts, [bounds[text] for text in to_cut]).tolist()
            lasts = np.searchsorted(field_starts, [bounds[text + 1] for text in to_cut]).tolist()
            for text, first, last in zip(to_cut, firsts, lasts):
                if last - first > limit:
                    digits[field_starts[first + limit]:bounds[text + 1]] = 0
        inside = np.zeros(size + 2, dtype=bool)
        np.not_equal(digits, 0, out=inside[1:-1])
        edges = np.flatnonzero(inside[1:] != inside[:-1])
        starts, ends = edges[0::2], edges[1::2]
        if self._powers[0].shape[0] <= size:
            self._powers = _powers_of_37(max(size + 1, 2 * self._powers[0].shape[0]))
        forward, inverse = self._powers
        prefix = np.zeros(size + 1, dtype=np.uint64)
        np.cumsum(np.multiply(digits, inverse[:size], out=digits), out=prefix[1:])
        codes = forward[ends - 1] * (prefix[ends] - prefix[starts])

        ids = np.empty(starts.shape[0], dtype=np.int64)
        coded = (ends - starts) <= _CODED_LENGTH
        distinct, where = np.unique(codes[coded], return_inverse=True)
        code_ids = self._code_ids
        numbers = list(map(code_ids.get, distinct.tolist()))
        if None in numbers:
            for position, number in enumerate(numbers):
                if number is None:
                    code = int(distinct[position])
                    numbers[position] = code_ids[code] = self._number(_decode_token(code))
        ids[coded] = np.array(numbers, dtype=np.int64)[where.reshape(-1)]
        long_tokens = np.flatnonzero(~coded).tolist()
        if long_tokens:
            token_ids = self._token_ids
            for index, start, end in zip(long_tokens, starts[long_tokens].tolist(), ends[long_tokens].tolist()):
                token = buffer[start:end].lower()
                number = token_ids.get(token)
                if number is None:
                    number = token_ids[token] = self._number(token.decode("ascii"))
                ids[index] = number
        text_starts = np.searchsorted(starts, bounds)
        if self.config.stopwords:
            kept = ids >= 0
            ids = ids[kept]
            text_starts = np.concatenate(([0], np.cumsum(kept)))[text_starts]
        return ids, np.diff(text_starts)

    def _number(self, token: str) -> int:
        """The number of a token's stem (a new stem gets the next number)."""
        stem = self._stemmer(token) if self._stemmer is not None else token
        vocabulary = self._vocabulary
        number = vocabulary.setdefault(stem, len(vocabulary))
        if number >= _MAX_IDS:
            raise ValueError(f"more than {_MAX_IDS} distinct tokens in the texts of a few items")
        return number

    def _number_small_texts(self, datas: Sequence[bytes], cut: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_number_texts` token by token: ``split()`` finds the ``-l`` cut (UTF-8 bytes split at exactly Perl's
        whitespace), the token table of :func:`rouge_tokenize` the tokens, a dictionary of token bytes their numbers."""
        limit = self.config.word_limit
        token_ids = self._token_ids
        ids: list[int] = []
        counts = []
        for data, flag in zip(datas, cut):
            if flag and limit is not None:
                fields = data.split(None, limit)
                if len(fields) > limit:  # the last one is the rest of the text, from its field limit + 1 on
                    data = data[: len(data) - len(fields[-1])]
            tokens = data.translate(_TOKEN_TABLE).split()
            for token in tokens:
                number = token_ids.get(token)
                if number is None:
                    number = token_ids[token] = self._number(token.decode("ascii"))
                if number >= 0:  # stop words are -1
                    ids.append(number)
            counts.append(len(ids))
        return np.array(ids, dtype=np.int64), np.diff(np.array(counts, dtype=np.int64), prepend=0)

    def _add_stopwords(self) -> None:
        for word in self.config.stopwords or ():
            if _TOKEN_ONLY.fullmatch(word):
                self._token_ids[word.encode()] = -1
                if len(word) <= _CODED_LENGTH:
                    self._code_ids[_token_code(word)] = -1

    def _start_item(self) -> None:
        """Begin a new vocabulary generation when the tables have grown large (between batches of items only)."""
        if len(self._vocabulary) > _VOCABULARY_RESET:
            self._vocabulary.clear()
            self._code_ids.clear()
            self._token_ids.clear()
            self._add_stopwords()
            self._generation += 1

    # -- scoring -------------------------------------------------------------------------------------------------

    def _score_batch(
        self, ids: np.ndarray, lengths: np.ndarray, widths: Sequence[int],
        units: Sequence[Sequence[list[list[str]]]] | None = None,
    ) -> list[dict[str, RougeScore]]:
        """Per-measure scores of items given as for :func:`_gram_table`; ``units`` are the ROUGE-L units of every
        text of every item (only for ROUGE-L)."""
        config = self.config
        if self._scratch is None:
            self._scratch = np.zeros(_MAX_IDS, dtype=np.uint64)  # calloc'd: pages are touched as ids come into use
        tables = _gram_table(ids, lengths, widths, config, self._scratch)
        counts = {metric: (hits.tolist(), totals.tolist()) for metric, (hits, totals) in tables.items()}
        scored = []
        for position, width in enumerate(widths):
            scores: dict[str, RougeScore] = {}
            for metric in config.metric_names:
                if metric == "rouge_l":
                    system, *references = units[position]
                    per_reference = [_lcs_hits(system, reference) for reference in references]
                else:
                    hits, totals = counts[metric][0][position], counts[metric][1][position]
                    per_reference = [(hits[r], totals[r], totals[0]) for r in range(1, width)]
                if config.scoring == "A":
                    hit = sum(item[0] for item in per_reference)
                    model_count = sum(item[1] for item in per_reference)
                    peer_count = sum(item[2] for item in per_reference)
                else:
                    # -f B: the reference with the highest recall, the first one on ties. ROUGE-1.5.5 compares the
                    # recalls of ROUGE-N and ROUGE-S/SU as printed ("%07.5f"), those of ROUGE-L unrounded.
                    recalls = [hit_r / model_r if model_r else 0.0 for hit_r, model_r, _ in per_reference]
                    if metric != "rouge_l":
                        recalls = [_round5(value) for value in recalls]
                    best = max(range(len(per_reference)), key=lambda r: (recalls[r], -r))
                    hit, model_count, peer_count = per_reference[best]
                scores[metric] = RougeScore.from_counts(hit, model_count, peer_count, config.alpha)
            scored.append(scores)
        return scored

    def score_analyzed(
        self, system: AnalyzedSummary, references: Sequence[AnalyzedSummary]
    ) -> dict[str, RougeScore]:
        """Per-measure scores of an analyzed system summary against analyzed references."""
        if not references:
            raise ValueError("ROUGE needs at least one reference summary per item")
        if any(reference.generation != system.generation for reference in references):
            raise ValueError("the system and references were analyzed in different vocabulary generations of the "
                             "scorer; analyze them again together (RougeScorer.score does)")
        texts = [system, *references]
        ids = np.concatenate([text.ids for text in texts])
        lengths = np.array([text.ids.shape[0] for text in texts], dtype=np.int64)
        units = [[text.units for text in texts]] if self.config.rouge_l else None
        return self._score_batch(ids, lengths, [len(texts)], units)[0]

    def score(self, system: str | Sequence[str], references: str | Sequence[str | Sequence[str]]) -> dict[str, RougeScore]:
        """Scores of one system summary against its references (a string is one reference)."""
        return next(self._score_items([system], [references]))

    def score_many(
        self, systems: Sequence[str | Sequence[str]], references: Sequence[str | Sequence[str | Sequence[str]]]
    ) -> Iterator[dict[str, RougeScore]]:
        """Per-item scores, lazily (a few items at a time), for aligned lists of systems and reference lists."""
        if len(systems) != len(references):
            raise ValueError(f"got {len(systems)} system summaries but {len(references)} reference lists")
        return self._score_items(systems, references, label_items=True)

    def _score_items(
        self, systems: Sequence[str | Sequence[str]], references: Sequence[str | Sequence[str | Sequence[str]]],
        label_items: bool = False,
    ) -> Iterator[dict[str, RougeScore]]:
        """Scores of aligned systems and reference lists, :data:`_BATCH_ITEMS` items at a time; ``label_items``
        names the item of an input error."""
        config = self.config
        # Without a distance limit, skip bigrams are enumerated up to the longest text of a batch: one item at a time.
        batch_items = 1 if config.skip_distance is not None and config.skip_distance < 0 else _TOKENIZE_ITEMS
        for start in range(0, len(systems), batch_items):
            self._start_item()
            datas, cut, widths, units = [], [], [], []
            for position in range(start, min(start + batch_items, len(systems))):
                try:
                    item_references = references[position]
                    if isinstance(item_references, str):
                        item_references = [item_references]
                    if not item_references:
                        raise ValueError("ROUGE needs at least one reference summary per item")
                    texts = [systems[position], *item_references]
                    for text in texts:
                        data, flag = _summary_bytes(text, config.word_limit)
                        datas.append(data)
                        cut.append(flag)
                    if config.rouge_l:
                        units.append([self._units(text) for text in texts])
                except (TypeError, ValueError) as err:
                    if not label_items:
                        raise
                    raise type(err)(f"item {position}: {err}") from err
                widths.append(len(texts))
            ids, lengths = self._number_texts(datas, cut)
            # Counted _BATCH_ITEMS items at a time (tokenized _TOKENIZE_ITEMS at a time: the more texts, the fewer
            # distinct tokens per text to look up).
            token_ends = np.cumsum(lengths).tolist()
            first_text = 0
            for first_item in range(0, len(widths), _BATCH_ITEMS):
                batch_widths = widths[first_item:first_item + _BATCH_ITEMS]
                end_text = first_text + sum(batch_widths)
                token_start = token_ends[first_text - 1] if first_text else 0
                yield from self._score_batch(ids[token_start:token_ends[end_text - 1]], lengths[first_text:end_text],
                                             batch_widths, units[first_item:first_item + _BATCH_ITEMS] or None)
                first_text = end_text


    # -- a corpus ------------------------------------------------------------------------------------------------

    def evaluate(
        self,
        systems: Sequence[str | Sequence[str]],
        references: Sequence[str | Sequence[str | Sequence[str]]],
        keys: Sequence[str] | None = None,
    ) -> RougeResult:
        """Per-item scores and ROUGE-1.5.5's bootstrap averages with confidence intervals.

        ``keys`` are ROUGE's instance keys (sorted as strings before resampling); by default item k (1-based) is
        ``"k.X"``, which is what ROUGE uses when it reads the items from a file list in this order.
        """
        per_item = list(self.score_many(systems, references))
        return self.average(per_item, keys=keys)

    def average(self, per_item: list[dict[str, RougeScore]], keys: Sequence[str] | None = None) -> RougeResult:
        """ROUGE's bootstrap averages of already computed per-item scores."""
        config = self.config
        metrics = config.metric_names
        table = np.array([[getattr(item[metric], value) for metric in metrics for value in ("recall", "precision", "f")]
                          for item in per_item], dtype=np.float64).reshape(len(per_item), 3 * len(metrics))
        mean, low, high = bootstrap_average(table, config.resamples, config.confidence, keys)
        averages = {}
        for index, metric in enumerate(metrics):
            r, p, f = 3 * index, 3 * index + 1, 3 * index + 2
            averages[metric] = RougeAverage(float(mean[r]), (float(low[r]), float(high[r])),
                                            float(mean[p]), (float(low[p]), float(high[p])),
                                            float(mean[f]), (float(low[f]), float(high[f])), config.confidence)
        return RougeResult(config=config, per_item=per_item, averages=averages)


def rouge(
    predictions: Sequence[str | Sequence[str]],
    references: Sequence[str | Sequence[str | Sequence[str]]],
    config: RougeConfig | None = None,
    **options,
) -> RougeResult:
    """Score predictions with ROUGE-1.5.5 semantics, official DUC settings unless told otherwise.

    ``options`` override :class:`RougeConfig` fields, e.g. ``rouge(preds, refs, word_limit=None, rouge_l=True)``.
    Each prediction is a string (``"\\n"`` separates sentences) or a list of sentences; each entry of
    ``references`` is one reference or a list of references.
    """
    if options:
        known = {f.name for f in fields(RougeConfig)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"unknown ROUGE option(s) {unknown}; known: {sorted(known)}")
        base = config or RougeConfig()
        config = RougeConfig(**{**{f.name: getattr(base, f.name) for f in fields(RougeConfig)}, **options})
    return RougeScorer(config).evaluate(predictions, references)
