"""Exact running statistics that hold counts instead of lists: :class:`ValueCounts` (percentiles and means of integers through a ``Counter`` of values) and :class:`ExactMean` (a float mean equal to :func:`statistics.fmean` over the same values, from a few partial sums), so a card's tables are computed while the records stream by."""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence


class ValueCounts(Sequence[int]):
    """The sorted multiset of integer values seen, held as ``{value: count}``: a read-only sequence (``len``,
    indexing, iteration in sorted order), so :func:`~wikiref_dataset.wikiref.curation.percentile` and
    :func:`statistics.fmean` give exactly what they give on the sorted list, in memory bounded by the distinct
    values."""

    def __init__(self, values: Iterable[int] = ()) -> None:
        self.counts: Counter[int] = Counter()
        self._total = 0
        self._index: tuple[list[int], list[int]] | None = None
        self.update(values)

    def add(self, value: int, count: int = 1) -> None:
        self.counts[value] += count
        self._total += count
        self._index = None

    def update(self, values: Iterable[int]) -> None:
        for value in values:
            self.add(value)

    def merge(self, other: ValueCounts) -> None:
        for value, count in other.counts.items():
            self.add(value, count)

    def __len__(self) -> int:
        return self._total

    def __getitem__(self, index: int) -> int:  # type: ignore[override]
        if index < 0:
            index += self._total
        if not 0 <= index < self._total:
            raise IndexError(index)
        if self._index is None:
            values = sorted(self.counts)
            ends, running = [], 0
            for value in values:
                running += self.counts[value]
                ends.append(running)
            self._index = values, ends
        values, ends = self._index
        return values[bisect.bisect_right(ends, index)]

    def __iter__(self) -> Iterator[int]:
        for value in sorted(self.counts):
            for _ in range(self.counts[value]):
                yield value


class ExactMean:
    """A running mean equal to ``statistics.fmean`` of the same values (whose sum is ``math.fsum``'s correctly rounded
    exact sum): the exact sum is kept as a few non-overlapping float partials (Shewchuk's algorithm, as in
    ``math.fsum``)."""

    def __init__(self) -> None:
        self.partials: list[float] = []
        self.count = 0

    def add(self, value: float) -> None:
        self._grow(float(value))
        self.count += 1

    def merge(self, other: ExactMean) -> None:
        """Add ``other``'s values (exactly: its partials sum to their exact sum)."""
        for partial in other.partials:
            self._grow(partial)
        self.count += other.count

    def _grow(self, x: float) -> None:
        kept = 0
        for y in self.partials:
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low:
                self.partials[kept] = low
                kept += 1
            x = high
        self.partials[kept:] = [x]

    def mean(self) -> float:
        """``statistics.fmean`` of the values added (``ValueError`` when there is none, as fmean)."""
        if not self.count:
            raise ValueError("mean of no values")
        return math.fsum(self.partials) / self.count
