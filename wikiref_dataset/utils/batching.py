"""``batched``: consecutive lists of a stream, for the steps that feed spaCy or the sentence encoder in batches.

``itertools.batched`` does this from Python 3.12 on (and yields tuples); the project supports 3.10.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TypeVar

__all__ = ["batched"]

T = TypeVar("T")


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items of ``items`` (the last one shorter), pulled lazily: an item is read
    only when its batch is requested."""
    if size < 1:
        raise ValueError(f"batch size must be >= 1, got {size}")
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch
