"""What every miner's dataset folder shares: the split names, Parquet files written a row group at a time under content-addressed names (:class:`SplitFilesWriter`), and the card's YAML front matter. WikiRef, PSG2SUM, AQuaMuSe, DUC and the QFS benchmarks write their folders through it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets

SPLITS = ("train", "validation", "test")
ROW_GROUP_SIZE = 1_000


def written_splits(splits: Mapping[str, Sequence[Any] | int]) -> list[str]:
    """The splits that get a Parquet file and a ``configs:`` entry: the non-empty ones, since ``datasets`` cannot
    load an empty split ("corresponds to no data"), or ``train`` alone (typed, empty) when there is no row at all;
    such a folder documents the build but ``load_dataset`` refuses it."""
    return [split for split in SPLITS if splits.get(split)] or [SPLITS[0]]


class SplitFilesWriter:
    """Writes ``output_dir/data/{split}-00000-of-00001-<sha256>.parquet`` for each of the :func:`written_splits`,
    row group by row group as the rows arrive (at most :data:`ROW_GROUP_SIZE` rows held per split), with
    ``features``' schema, zstd, fixed row groups and no timestamps: the same rows give the same bytes, however they
    were fed. Names are content-addressed (see :mod:`wikiref_dataset.process.folders`: the ``datasets`` cache key must change
    with the content); any other Parquet file of the splits is removed when the writer opens.

    Args:
        output_dir (`str` or `Path`): the dataset folder. features (`datasets.Features`): the columns.
        ordered_by (`str`, *optional*): a column whose values must not decrease within each split (the datasets'
            ``id``): a row out of order raises ``ValueError`` naming it.
    """

    def __init__(self, output_dir: str | Path, features: datasets.Features,
                 ordered_by: str | None = None) -> None:
        self.output = Path(output_dir)
        self.data = self.output / "data"
        self.data.mkdir(parents=True, exist_ok=True)
        for split in SPLITS:
            for stale in self.data.glob(f"{split}-*.parquet"):
                stale.unlink()
        self.schema = features.arrow_schema
        self.ordered_by = ordered_by
        self.sizes = {split: 0 for split in SPLITS}
        self._pending: dict[str, list[dict[str, Any]]] = {split: [] for split in SPLITS}
        self._writers: dict[str, Any] = {}
        self._last: dict[str, Any] = {}

    def add(self, split: str, row: dict[str, Any]) -> None:
        """Append ``row`` to ``split``."""
        if split not in self._pending:
            raise ValueError(f"unknown split {split!r}; splits: {SPLITS}")
        if self.ordered_by is not None:
            value, last = row[self.ordered_by], self._last.get(split)
            if last is not None and value < last:
                raise ValueError(f"{split}: row {self.ordered_by}={value!r} comes after {last!r}; rows must come in "
                                 f"{self.ordered_by} order within a split")
            self._last[split] = value
        pending = self._pending[split]
        pending.append(row)
        self.sizes[split] += 1
        if len(pending) >= ROW_GROUP_SIZE:
            self._flush(split)

    def _path(self, split: str) -> Path:
        return self.data / f"{split}-00000-of-00001.parquet"

    def _temporary(self, split: str) -> Path:
        return self.data / f"{split}-00000-of-00001.parquet.tmp"

    def _flush(self, split: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = self._pending[split]
        writer = self._writers.get(split)
        if writer is None:
            writer = self._writers[split] = pq.ParquetWriter(self._temporary(split), self.schema,
                                                             compression="zstd", write_statistics=True)
        writer.write_table(pa.Table.from_pylist(rows, schema=self.schema) if rows else self.schema.empty_table(),
                           row_group_size=ROW_GROUP_SIZE)
        self._pending[split] = []

    def close(self) -> dict[str, str]:
        """Finish the files; returns ``{split: relative path}`` for the card (a typed, empty ``train`` file when no
        row came at all)."""
        from ..process.folders import content_addressed

        files: dict[str, str] = {}
        for split in written_splits(self.sizes):
            if self._pending[split] or split not in self._writers:
                self._flush(split)
            self._writers.pop(split).close()
            path = self._path(split)
            self._temporary(split).replace(path)
            files[split] = content_addressed(path, path.name[: -len(".parquet")]).relative_to(self.output).as_posix()
        return files


def write_split_files(rows_by_split: Mapping[str, Sequence[dict[str, Any]]], output_dir: str | Path,
                      features: datasets.Features) -> dict[str, str]:
    """:class:`SplitFilesWriter` fed from lists (rows written in the given order); returns ``{split: relative
    path}``."""
    writer = SplitFilesWriter(output_dir, features)
    for split, rows in rows_by_split.items():
        for row in rows:
            writer.add(split, row)
    return writer.close()


def card_front_matter(pretty_name: str, files: Mapping[str, str], licence: str = "cc-by-sa-4.0",
                      language: str = "en") -> list[str]:
    """The YAML header of a dataset card: metadata (``language``: the Wikipedia's language code) and the ``configs:``
    block that ``load_dataset(folder)`` and the Hub read, naming each split's file exactly (``files``, as
    :func:`write_split_files` returns them: a pattern such as ``data/train-*.parquet`` would let the ``datasets``
    cache serve an earlier folder of the same name)."""
    front = ["---", f"license: {licence}", "language:", f"- {language}", "task_categories:", "- summarization",
             f"pretty_name: {pretty_name}", "configs:", "- config_name: default", "  data_files:"]
    for split, name in files.items():
        front += [f"  - split: {split}", f"    path: {name}"]
    return front + ["---", ""]
