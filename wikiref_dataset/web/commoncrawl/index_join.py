"""The one join of every cited URL with Common Crawl's columnar index, split among tasks by index file, so that each
index file is read once whatever the number of tasks (the build's ``index_keys`` and ``index_join`` stages).

Fetch task k's URLs are written with their keys (:meth:`CaptureTable.write_keys`); join task r joins every task's keys
with its share of the index files (:func:`index_shares`, :func:`join_index_share`) and files each capture under the
fetch task that asks for it; fetch task k reads its captures back (:meth:`CaptureTable.read`) and looks the URLs the
join did not cover (targets of captured redirects) up only in the files whose key range holds them
(:func:`file_key_ranges`, :func:`files_for_keys`).
"""

from __future__ import annotations

import bisect
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import astuple
from pathlib import Path
from typing import Any

from ..http import _atomic_write
from .columnar import ColumnarIndex, index_files, url_keys_table
from .config import CommonCrawlConfig, is_remote
from .indexed_capture import IndexedCapture, capture_order

logger = logging.getLogger(__name__)

__all__ = ["CaptureTable", "file_key_ranges", "files_for_keys", "index_shares", "join_index_share"]


def index_shares(files: Sequence[str], tasks: int, sizes: Sequence[int | None] | None = None) -> list[list[str]]:
    """`files` dealt among `tasks` tasks, each file to exactly one task: the largest first, each to the task with the
    fewest bytes so far (by count where sizes are unknown), ties to the lowest rank; each share sorted. The same
    inputs always give the same shares, whichever task computes them."""
    if tasks < 1:
        raise ValueError(f"tasks must be >= 1, got {tasks}")
    weights = [size if size is not None else 1 for size in (sizes if sizes is not None else [None] * len(files))]
    shares: list[list[str]] = [[] for _ in range(tasks)]
    loads = [0] * tasks
    for weight, file in sorted(zip(weights, files, strict=True), key=lambda item: (-item[0], item[1])):
        task = min(range(tasks), key=lambda t: (loads[t], len(shares[t]), t))
        shares[task].append(file)
        loads[task] += weight
    return [sorted(share) for share in shares]


def file_key_ranges(files: Sequence[str]) -> list[tuple[str, str | None, str | None]]:
    """(file, smallest url_surtkey, largest url_surtkey) of each index file, from its Parquet footer (a few KB read
    per file, no row). Common Crawl's index files each hold one sorted range of SURT keys, so a later lookup of a few
    URLs reads only the files whose range holds one of their keys. (None, None) when the footer has no statistics."""
    import pyarrow.parquet as pq

    ranges: list[tuple[str, str | None, str | None]] = []
    for file in files:
        low = high = None
        try:
            if is_remote(file):
                import fsspec

                with fsspec.open(file, "rb") as handle:
                    metadata = pq.ParquetFile(handle).metadata
            else:
                metadata = pq.read_metadata(file)
            names = [metadata.schema.column(i).name for i in range(metadata.num_columns)]
            column = names.index("url_surtkey")
            lows, highs = [], []
            for group in range(metadata.num_row_groups):
                stats = metadata.row_group(group).column(column).statistics
                if stats is None or not stats.has_min_max:
                    lows = highs = []
                    break
                lows.append(_text(stats.min))
                highs.append(_text(stats.max))
            if lows:
                low, high = min(lows), max(highs)
        except (OSError, ValueError) as error:  # unreadable footer: the file is read by every lookup
            logger.warning("%s: no key range (%s); every later lookup reads this file", file, error)
        ranges.append((file, low, high))
    return ranges


def files_for_keys(ranges: Sequence[tuple[str, str | None, str | None]], keys: Iterable[str]) -> list[str]:
    """The files of `ranges` that may hold one of `keys` (those without a range always may)."""
    keys = sorted(set(keys))
    chosen = []
    for file, low, high in ranges:
        if low is None or high is None:
            chosen.append(file)
            continue
        at = bisect.bisect_left(keys, low)
        if at < len(keys) and keys[at] <= high:
            chosen.append(file)
    return chosen


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class CaptureTable:
    """What one join of every cited URL with the whole columnar index found, for one fetch task's URLs.

    Three steps, each split among tasks, write it into one folder:

    * ``keys/<k>.parquet`` (:meth:`write_keys`): the URLs fetch task k will ask Common Crawl for, with their SURT keys
      (:func:`url_keys_table`); computed once per URL, by the task that owns it.
    * ``<k>/<r>.parquet`` and ``ranges/<r>.json`` (:func:`join_index_share`): join task r reads only its share of
      the index files (:func:`index_shares`), joins it with every task's keys in DuckDB and files each capture under
      the fetch task whose URL it answers; it also records its files' key ranges (:func:`file_key_ranges`). Every
      index file is read once, whatever the number of tasks.
    * Fetch task k then reads bucket k (:meth:`read`) instead of the index.

    Args:
        captures (`dict[str, list[IndexedCapture]]`): the captures of each URL the join covered (empty: none).
        ranges (`list[tuple[str, str | None, str | None]]`): every index file with its key range, for the URLs the
            join did not cover (the targets of captured redirects).
    """

    def __init__(self, captures: dict[str, list[IndexedCapture]],
                 ranges: list[tuple[str, str | None, str | None]]) -> None:
        self.captures = captures
        self.ranges = ranges

    @staticmethod
    def write_keys(folder: str | Path, bucket: int, urls: Iterable[str]) -> int:
        """Write fetch task `bucket`'s URLs with their keys; returns the URLs written."""

        table = url_keys_table(urls, bucket)
        _write_parquet(table, Path(folder) / "keys" / f"{bucket:05d}.parquet")
        return len(set(table.column("wanted").to_pylist()))

    @staticmethod
    def write(folder: str | Path, rank: int, found: Sequence[tuple[int | None, str, IndexedCapture]],
              ranges: list[tuple[str, str | None, str | None]]) -> int:
        """Write join task `rank`'s captures (`found`: bucket, cited URL, capture) under each bucket, and its files'
        key ranges; returns the captures written."""
        import pyarrow as pa

        rows: dict[int, list[tuple]] = {}
        for bucket, wanted, capture in sorted(found, key=lambda item: (item[1], capture_order(item[2]))):
            rows.setdefault(int(bucket or 0), []).append((wanted, *astuple(capture)))
        root = Path(folder)
        schema = _capture_schema()
        for bucket, bucket_rows in sorted(rows.items()):
            table = pa.Table.from_pylist([dict(zip(schema.names, row, strict=True)) for row in bucket_rows],
                                         schema=schema)
            _write_parquet(table, root / f"{bucket:05d}" / f"{rank:05d}.parquet")
        (root / "ranges").mkdir(parents=True, exist_ok=True)
        _atomic_write(root / "ranges" / f"{rank:05d}.json", json.dumps(ranges).encode("utf-8"))
        return len(found)

    @classmethod
    def read(cls, folder: str | Path, bucket: int) -> CaptureTable:
        """Fetch task `bucket`'s captures, from every join task's file of it.

        Raises:
            FileNotFoundError: the join left no key ranges in `folder` (it did not run, or not to its end).
        """
        import pyarrow.parquet as pq

        root = Path(folder)
        range_files = sorted((root / "ranges").glob("*.json"))
        if not range_files:
            raise FileNotFoundError(f"{root}: no join of the columnar index here (no ranges/*.json)")
        ranges = [tuple(item) for path in range_files for item in json.loads(path.read_text(encoding="utf-8"))]
        captures: dict[str, list[IndexedCapture]] = {}
        keys = root / "keys" / f"{bucket:05d}.parquet"
        if keys.is_file():
            captures = {url: [] for url in pq.read_table(keys, columns=["wanted"]).column("wanted").to_pylist()}
        for path in sorted((root / f"{bucket:05d}").glob("*.parquet")):
            for row in pq.read_table(path).to_pylist():
                captures.setdefault(row.pop("wanted"), []).append(IndexedCapture(**row))
        for found in captures.values():
            found.sort(key=capture_order)
        return cls(captures, ranges)  # type: ignore[arg-type]


def _capture_schema() -> Any:
    """The capture files' columns: the cited URL, then :class:`IndexedCapture`'s fields in their order."""
    import pyarrow as pa

    return pa.schema([("wanted", pa.string()), ("url", pa.string()), ("timestamp", pa.string()),
                      ("status", pa.int32()), ("mime", pa.string()), ("filename", pa.string()),
                      ("offset", pa.int64()), ("length", pa.int64()), ("redirect", pa.string()),
                      ("crawl", pa.string())])


def _write_parquet(table: Any, target: Path) -> None:
    """Write `table` to `target` all at once (:func:`~wikiref_dataset.web.http._atomic_write`): a task that is run
    again leaves no half file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    target.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(target, buffer.getvalue().to_pybytes())


def join_index_share(config: CommonCrawlConfig, rank: int, tasks: int, folder: str | Path) -> dict[str, int]:
    """Join task `rank` of `tasks`: join every fetch task's keys (``folder/keys/*.parquet``) with this task's
    share of the index files and write what it found (see :class:`CaptureTable`). Returns counts:
    ``index_files``, ``index_bytes`` (local files), ``captures``."""
    listed = index_files(config.cc_index or "", config.crawls, config.cc_data)
    sizes = [None if listed.remote else Path(file).stat().st_size for file in listed.files]
    share = index_shares(listed.files, tasks, sizes)[rank]
    keys = sorted(str(path) for path in (Path(folder) / "keys").glob("*.parquet"))
    index = ColumnarIndex(config.cc_index or "", config.crawls, config.cc_data, files=share)
    try:
        found = index.join(keys)
    finally:
        index.close()
    written = CaptureTable.write(folder, rank, found, file_key_ranges(share))
    by_file = dict(zip(listed.files, sizes, strict=True))
    return {"index_files": len(share), "captures": written,
            "index_bytes": sum(by_file[file] or 0 for file in share)}
