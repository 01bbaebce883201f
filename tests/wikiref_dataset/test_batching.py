"""`batched`: consecutive lists, the last shorter, pulled lazily."""

import pytest

from wikiref_dataset.utils.batching import batched


def test_batches_in_order_last_one_shorter():
    assert list(batched(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batched([], 3)) == []
    assert list(batched("ab", 5)) == [["a", "b"]]


def test_items_are_read_only_when_their_batch_is_requested():
    read = []

    def items():
        for item in range(10):
            read.append(item)
            yield item

    batches = batched(items(), 4)
    assert next(batches) == [0, 1, 2, 3] and read == [0, 1, 2, 3]


def test_bad_size():
    with pytest.raises(ValueError, match="batch size must be >= 1"):
        list(batched([1], 0))
