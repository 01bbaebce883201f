"""What ROUGE-1.5.5 counts: n-grams (ROUGE-N), skip bigrams (ROUGE-S/SU), their clipped hits against a reference,
and the union LCS of ROUGE-L; and the n-gram and skip-bigram counts of a batch of items at once, in numpy.

* ROUGE-N over the joined token list; ROUGE-SU(d): skip bigrams with at most d words between, plus unigrams with
  ROUGE's quirk of not counting the last one; ROUGE-L: the summary-level union LCS over lines;
* the plain definitions (:func:`ngram_counts`, :func:`skip_bigram_counts`, :func:`clipped_hits`) count a few short
  texts, and say what the batch counts (:func:`_gram_table`) must equal: there the grams of every measure are matched
  in one sort per measure, on integer keys made of item, gram and text (grams with a token absent from the other side
  of their item are left out first).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import accumulate, chain

import numpy as np

from .config import RougeConfig

__all__ = ["ngram_counts", "skip_bigram_counts", "clipped_hits"]


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


# Token ids take 21 bits, so a pair of ids takes 42 bits, and a flag bit above them marks the unigrams of ROUGE-SU:
# every gram code fits in 43 bits (n-grams with n > 2 are renumbered densely). A gram is sorted and matched as the key
# ``item << (43 + slot_bits) | code << slot_bits | slot`` (slot 0: the item's system, r: its reference r).
_ID_BITS = 21
_MAX_IDS = 1 << _ID_BITS
_CODE_BITS = 2 * _ID_BITS + 1
# Below this size (all texts of a batch together) numpy's per-call cost outweighs its speed: small batches are
# counted in plain Python (the scorer tokenizes small texts in plain Python too, below its _SMALL_BYTES).
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
