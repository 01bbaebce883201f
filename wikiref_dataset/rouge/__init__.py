"""ROUGE exactly as ROUGE-1.5.5 computes it: the one ROUGE engine of the project.

Everything that scores text with ROUGE calls this package: the DUC metric (``metrics/duc_rouge``), the extractive
oracle (``oracle.py``), curation, baselines and the training scripts.

Why it is written by hand: ``rouge_score`` and ``evaluate``'s rouge have no ROUGE-SU4, use another stemmer (about
0.3 ROUGE-1 points low on DUC data) and another multi-reference rule; the only exact implementation is the Perl
script itself. This package reimplements its documented behaviour (``docs/rouge.md``, rules 1-10)
and is checked against the outputs the Perl script printed for 621 items, to the fifth decimal. One concept per
module, in the order ROUGE applies them:

* ``config.py``: the ROUGE command-line options as a dataclass (:class:`RougeConfig`, ``from_args``/``to_args``);
* ``tokens.py``: reading (lines at ``"\\n"`` only), the ``-l`` word cut (Perl's ``split(/\\s+/)``), and the tokens
  (every character other than ``[A-Za-z0-9]`` a separator, ASCII-only lowercasing);
* ``stemmer.py``: ``-m``, tokens longer than 3 characters stemmed (WordNet 2.0 exceptions, then ROUGE's Porter
  variant);
* ``counts.py``: what each measure counts: ROUGE-N, ROUGE-S/SU (skip bigrams, with ROUGE's unigram quirk), ROUGE-L
  (the summary-level union LCS over lines), hits clipped per reference; also for many items at once, in numpy;
* ``results.py``: per-item R/P rounded to 5 decimals, F from the rounded R and P; averages as ROUGE prints them;
* ``bootstrap.py``: the averages as the mean of ``-r`` bootstrap resamples drawn with Perl's ``srand(s)``/``rand()``
  (drand48), and the ``-c`` confidence interval;
* ``scorer.py``: :class:`RougeScorer`, which puts them together (``-f A``: hits and counts summed over references,
  ``-f B``: the best reference), per item and for a corpus, a few dozen items at a time; :func:`rouge`.

A published model folder or metric Space carries these modules as flat code files (``rouge.py`` for this one,
``_rouge_<module>.py`` for the others: ``metrics/standalone.py``), so they import only each other, relatively.

Public API: :class:`RougeConfig`, :class:`RougeScorer` (per item and whole-corpus scoring), :func:`rouge` (a plain
function), :func:`rouge_tokenize`, :func:`truncate_lines`, :func:`bootstrap_average`, :func:`drand48_sequence`.
"""

from .bootstrap import bootstrap_average, drand48_sequence
from .config import RougeConfig, load_stopwords
from .counts import clipped_hits, ngram_counts, skip_bigram_counts
from .results import RougeAverage, RougeResult, RougeScore
from .scorer import AnalyzedSummary, RougeScorer, rouge
from .tokens import count_words, read_lines, rouge_tokenize, truncate_lines

# isort: split
# Importable from here too, as before the engine was a package, though not in __all__: the measures' printed names
# (cli.py) and two internals the tests check directly.
from .config import display_name  # noqa: F401
from .counts import _union_lcs_marks  # noqa: F401
from .tokens import _summary_bytes  # noqa: F401

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
