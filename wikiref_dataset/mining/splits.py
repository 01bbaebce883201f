"""Group-disjoint splits every miner uses: whole groups (a cited page, a revised passage, a question's documents) go to one split, drawn with a seed, so no document is shared between train, validation and test."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def plan_group_splits(group_sizes: Mapping[str, int], dev_size: int, test_size: int, seed: int) -> dict[str, str]:
    """The deterministic group-disjoint split behind :func:`assign_group_splits`, from the groups' sizes only
    (``{group: records}``; keys, not records, so a build can count them in a first pass and stream the records
    afterwards): groups in the order of ``sha256(seed:group)`` fill test, then validation, then train gets the
    rest. Returns ``{group: split}``."""
    order = sorted(group_sizes, key=lambda key: hashlib.sha256(f"{seed}:{key}".encode()).hexdigest())
    filled = {"train": 0, "validation": 0, "test": 0}
    plan: dict[str, str] = {}
    for key in order:
        if filled["test"] < test_size:
            name = "test"
        elif filled["validation"] < dev_size:
            name = "validation"
        else:
            name = "train"
        plan[key] = name
        filled[name] += group_sizes[key]
    return plan


def assign_group_splits(items: Sequence[Any], group_of: Callable[[Any], str], id_of: Callable[[Any], str],
                        dev_size: int, test_size: int, seed: int) -> dict[str, list[Any]]:
    """:func:`plan_group_splits` applied to a list of records (PSG2SUM groups by page): a group never straddles two
    splits; records inside a split are sorted by ``id_of``."""
    plan = plan_group_splits(Counter(group_of(item) for item in items), dev_size, test_size, seed)
    splits: dict[str, list[Any]] = {"train": [], "validation": [], "test": []}
    for item in sorted(items, key=id_of):
        splits[plan[group_of(item)]].append(item)
    return splits
