"""Bounded memory for the builds' assembly steps: an external sort, a checked merge of sorted shards, and exact
running statistics that hold counts instead of lists.

A build's last steps need global orders (every split's Parquet file is written in id order) and global statistics
(split sizes, percentiles, means) over inputs that may not fit in memory. :func:`external_sort` sorts JSON records
keeping at most a buffer of encoded records in memory (``WIKIREF_SORT_BUFFER_MB``, default 64 MiB) and spills sorted
runs to a temporary folder, then merges them (at most :data:`MAX_MERGE_FILES` open at once); the sort is stable
(equal keys keep their arrival order), so its output is the same bytes whatever the buffer size.
:func:`merge_sorted` merges shards that are already sorted (each WikiRef curation task writes its shard in id
order) without spilling, and fails naming the shard when one is not. :class:`ValueCounts` (percentiles and means of
integers through a ``Counter`` of values) and :class:`ExactMean` (a float mean equal to :func:`statistics.fmean`
over the same values, from a few partial sums) let the card's tables be computed while the records stream by.
"""

from __future__ import annotations

import heapq
import json
import math
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_SORT_BUFFER_MB", "MAX_MERGE_FILES", "SORT_BUFFER_ENV", "external_sort", "merge_sorted",
           "sort_buffer_bytes"]

SORT_BUFFER_ENV = "WIKIREF_SORT_BUFFER_MB"
"""Environment variable: MiB of encoded records a sort keeps in memory before it spills a run to disk."""
DEFAULT_SORT_BUFFER_MB = 64.0
MAX_MERGE_FILES = 64
"""Runs merged at once; more are first merged into bigger runs (each open run holds a read buffer)."""
_RECORD_OVERHEAD = 64  # bytes per buffered record beyond its encoded line (the tuple, the key, the str header)


def sort_buffer_bytes() -> int:
    """The sort buffer in bytes, from ``WIKIREF_SORT_BUFFER_MB`` (default 64); set in the environment of every
    task (Slurm and Ray tasks inherit the submitting shell's)."""
    value = os.environ.get(SORT_BUFFER_ENV, "").strip()
    if not value:
        return int(DEFAULT_SORT_BUFFER_MB * 2**20)
    try:
        megabytes = float(value)
    except ValueError:
        megabytes = math.nan
    if not megabytes > 0:
        raise ValueError(f"{SORT_BUFFER_ENV}={value!r}: expected a positive number of MiB (e.g. 64 or 0.5)")
    return max(1, int(megabytes * 2**20))


def external_sort(records: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], Any],
                  folder: str | Path | None = None, buffer_bytes: int | None = None,
                  stats: Counter[str] | None = None) -> Iterator[dict[str, Any]]:
    """``records`` (JSON objects) sorted by ``key``, stably, with at most about ``buffer_bytes`` of them in memory.

    Records are held as their JSON lines; when the buffer is full it is sorted and written as a run under a
    temporary folder in ``folder`` (default: the system's), removed when the iteration ends or is closed. Keys must be
    comparable with each other (strings, numbers, tuples of them). ``stats`` counts ``sort_records``,
    ``sort_runs_spilled`` and ``sort_bytes_spilled``. The input is consumed on the first ``next()``.
    """
    budget = sort_buffer_bytes() if buffer_bytes is None else max(1, int(buffer_bytes))
    stats = stats if stats is not None else Counter()
    if folder is not None:
        Path(folder).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wikiref-sort-", dir=folder) as spill:
        runs: list[Path] = []
        buffer: list[tuple[Any, int, str]] = []
        held = 0
        for sequence, record in enumerate(records):
            line = json.dumps(record, ensure_ascii=False)
            buffer.append((key(record), sequence, line))  # the arrival number breaks ties: a stable sort
            held += len(line) + _RECORD_OVERHEAD
            stats["sort_records"] += 1
            if held >= budget:
                runs.append(_write_run(buffer, Path(spill) / f"run{len(runs):06d}.jsonl", stats))
                buffer, held = [], 0
        buffer.sort(key=lambda item: (item[0], item[1]))
        in_memory = (json.loads(line) for _, _, line in buffer)
        if not runs:
            yield from in_memory
            return
        passes = 0
        while len(runs) + 1 > MAX_MERGE_FILES:  # rounds of merges of consecutive runs: arrival order stays the tie-break
            passes += 1
            merged_runs = []
            for start in range(0, len(runs), MAX_MERGE_FILES):
                group = runs[start:start + MAX_MERGE_FILES]
                merged = Path(spill) / f"pass{passes}-{start // MAX_MERGE_FILES:06d}.jsonl"
                with open(merged, "w", encoding="utf-8") as handle:
                    for record in heapq.merge(*(_read_run(run) for run in group), key=key):
                        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                for run in group:
                    run.unlink()
                merged_runs.append(merged)
            runs = merged_runs
        yield from heapq.merge(*(_read_run(run) for run in runs), in_memory, key=key)


def _write_run(buffer: list[tuple[Any, int, str]], path: Path, stats: Counter[str]) -> Path:
    buffer.sort(key=lambda item: (item[0], item[1]))
    with open(path, "w", encoding="utf-8") as handle:
        for _, _, line in buffer:
            handle.write(line + "\n")
    stats["sort_runs_spilled"] += 1
    stats["sort_bytes_spilled"] += path.stat().st_size
    return path


def _read_run(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


def merge_sorted(shards: Sequence[tuple[str, Iterable[Any]]], key: Callable[[Any], Any]) -> Iterator[Any]:
    """Merge ``(name, records)`` shards that are each sorted by ``key`` (ties: earlier shard first), holding one record
    per shard.

    Raises:
        ValueError: a shard is out of order (the message names the shard and the two keys).
    """
    def checked(name: str, records: Iterable[Any]) -> Iterator[Any]:
        previous: Any = None
        for position, record in enumerate(records):
            current = key(record)
            if position and current < previous:
                raise ValueError(f"{name}: record {current!r} comes after {previous!r}: the shard is not sorted (was it "
                                 "written by another version of the build? delete the work folder's stage and rerun)")
            previous = current
            yield record

    return heapq.merge(*(checked(name, records) for name, records in shards), key=key)

