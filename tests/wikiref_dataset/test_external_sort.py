"""The bounded-memory building blocks (``wikiref_dataset/utils/external_sort.py``): the external sort spills and merges to the
same output as an in-memory sort, the checked merge names an unsorted shard, and the counted statistics equal the
list-based ones."""

from __future__ import annotations

import random
import statistics
from collections import Counter

import pytest

from wikiref_dataset.utils import external_sort as sorting
from wikiref_dataset.utils.external_sort import external_sort, merge_sorted, sort_buffer_bytes
from wikiref_dataset.utils.running_stats import ExactMean, ValueCounts
from wikiref_dataset.wikiref.curation import percentile


def records(n: int = 600, seed: int = 3) -> list[dict]:
    rng = random.Random(seed)  # many equal keys: the order among them shows whether the sort is stable
    return [{"id": f"{rng.randint(0, 40):03d}", "arrival": i, "text": "w" * rng.randint(0, 200)} for i in range(n)]


@pytest.mark.parametrize("buffer_bytes", [1, 2_000, 30_000, None])
def test_external_sort_is_stable_and_the_same_whatever_the_buffer(tmp_path, buffer_bytes):
    data = records()
    stats: Counter[str] = Counter()
    ordered = list(external_sort(iter(data), key=lambda r: r["id"], folder=tmp_path, buffer_bytes=buffer_bytes,
                                 stats=stats))
    assert ordered == sorted(data, key=lambda r: r["id"])  # Python's sort is stable: equal ids keep arrival order
    assert stats["sort_records"] == len(data)
    assert (stats["sort_runs_spilled"] > 0) == (buffer_bytes is not None)  # ~120 KB of records: all but None spill
    assert list(tmp_path.iterdir()) == []  # runs and their folder are gone once the iteration ended


def test_many_runs_are_merged_in_rounds(tmp_path, monkeypatch):
    monkeypatch.setattr(sorting, "MAX_MERGE_FILES", 3)
    data = records(200)
    stats: Counter[str] = Counter()
    ordered = list(external_sort(data, key=lambda r: (r["id"], -r["arrival"] % 7), folder=tmp_path, buffer_bytes=1,
                                 stats=stats))
    assert stats["sort_runs_spilled"] == 200
    assert ordered == sorted(data, key=lambda r: (r["id"], -r["arrival"] % 7))
    assert list(tmp_path.iterdir()) == []


def test_sort_buffer_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(sorting.SORT_BUFFER_ENV, "0.5")
    assert sort_buffer_bytes() == 2**19
    monkeypatch.setenv(sorting.SORT_BUFFER_ENV, "lots")
    with pytest.raises(ValueError, match="WIKIREF_SORT_BUFFER_MB='lots'"):
        sort_buffer_bytes()
    monkeypatch.delenv(sorting.SORT_BUFFER_ENV)
    assert sort_buffer_bytes() == 64 * 2**20


def test_external_sort_reads_its_buffer_setting(monkeypatch, tmp_path):
    monkeypatch.setenv(sorting.SORT_BUFFER_ENV, "0.001")  # about 1 KB: this input spills
    stats: Counter[str] = Counter()
    assert len(list(external_sort(records(), key=lambda r: r["id"], folder=tmp_path, stats=stats))) == 600
    assert stats["sort_runs_spilled"] > 10


def test_merge_sorted_merges_and_names_an_unsorted_shard():
    shards = [("a", [1, 4, 9]), ("b", [2, 3, 10]), ("c", [])]
    assert list(merge_sorted(shards, key=lambda x: x)) == [1, 2, 3, 4, 9, 10]
    with pytest.raises(ValueError, match=r"b: record 2 comes after 3: the shard is not sorted"):
        list(merge_sorted([("a", [1, 4]), ("b", [3, 2])], key=lambda x: x))


def test_value_counts_give_the_list_percentiles_and_means():
    rng = random.Random(7)
    for _ in range(50):
        values = [rng.randint(0, 30) for _ in range(rng.randint(1, 200))]
        counted = ValueCounts(values)
        assert list(counted) == sorted(values) and len(counted) == len(values) and counted[-1] == max(values)
        assert statistics.fmean(counted) == statistics.fmean(values)
        for q in (5, 20, 50, 95):
            assert percentile(counted, q) == percentile(sorted(values), q)
    merged = ValueCounts([1, 2])
    merged.merge(ValueCounts([2, 5]))
    assert list(merged) == [1, 2, 2, 5]


def test_exact_mean_is_fmean_bit_for_bit():
    rng = random.Random(11)
    for _ in range(100):
        values = [rng.uniform(-1, 1) * 10 ** rng.randint(-12, 12) for _ in range(rng.randint(1, 300))]
        running, first, second = ExactMean(), ExactMean(), ExactMean()
        for position, value in enumerate(values):
            running.add(value)
            (first if position % 2 else second).add(value)
        first.merge(second)
        assert running.mean() == first.mean() == statistics.fmean(values)
    with pytest.raises(ValueError):
        ExactMean().mean()
