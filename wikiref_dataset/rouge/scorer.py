"""The ROUGE scorer: summaries read, cut, tokenized, stemmed and numbered, their grams counted, and scored per item and
for a corpus (:class:`RougeScorer`, :func:`rouge`); ``-f A`` (hits and counts summed over references, clipping per
reference) or ``-f B`` (best reference).

How it runs (about 40x the Perl script on DUC-sized items, ``benchmarks/bench_duc_rouge.py``): items are scored a few
dozen at a time. Their texts are tokenized together with numpy (``-l`` cut and token boundaries from byte classes,
each token identified by its base-37 number, stems numbered through one dictionary lookup per distinct token), and
the grams of every measure counted together (``counts.py``). A few short texts are tokenized in plain Python instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from .bootstrap import bootstrap_average
from .config import RougeConfig
from .counts import _MAX_IDS, _gram_table, _lcs_hits
from .results import RougeAverage, RougeResult, RougeScore, _round5
from .stemmer import RougeStemmer
from .tokens import (
    _CODED_LENGTH,
    _TOKEN_DIGIT,
    _TOKEN_ONLY,
    _TOKEN_TABLE,
    _WHITESPACE_BYTE,
    _decode_token,
    _powers_of_37,
    _summary_bytes,
    _token_code,
    read_lines,
    rouge_tokenize,
    truncate_lines,
)

__all__ = ["AnalyzedSummary", "RougeScorer", "rouge"]


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


# Stems are numbered in generations: the scorer's tables are cleared between batches once they hold this many.
_VOCABULARY_RESET = 1 << 20
# Items counted together by RougeScorer.score_many: enough to make numpy's per-call cost small, few enough that the
# arrays of a batch stay in the CPU cache; and items tokenized together.
_BATCH_ITEMS = 16
_TOKENIZE_ITEMS = 32
# Below this size (all texts of a call together, in bytes) numpy's per-call cost outweighs its speed: small items are
# tokenized in plain Python (and counted so below counts._SMALL_TOKENS).
_SMALL_BYTES = 1024


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
