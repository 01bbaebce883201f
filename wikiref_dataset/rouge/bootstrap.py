"""ROUGE-1.5.5's corpus averages: the mean of ``-r`` bootstrap resamples drawn with Perl's ``srand(s)``/``rand()``
(drand48), and the ``-c`` confidence interval. The same drand48 indices are drawn and the drawn scores added in the
same order as Perl adds them, so every printed digit is the same.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .results import _round5

__all__ = ["bootstrap_average", "drand48_sequence"]


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
