"""Converted DUC years as the evaluation and fine-tuning read them: each folder written by ``wikiref duc convert`` as a
`DucYear` (its folder, its year and its clusters), read with pyarrow (:func:`wikiref_dataset.duc.reader.read_converted`:
no `datasets` import, no cache written), several folders sorted by year (:func:`load_years`).

Importing this module imports nothing beyond the standard library: the `wikiref` parser and the evaluation import it
to name `DucYear`; the reader is imported when a folder is read.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DucYear", "load_years"]

logger = logging.getLogger(__name__)


@dataclass
class DucYear:
    """One converted year: its folder, year and clusters (rows in ``wikiref_dataset.duc.reader.DUC_FEATURES`` layout)."""

    path: Path
    year: int
    rows: list[dict[str, Any]]

    @property
    def scorable(self) -> list[dict[str, Any]]:
        """The clusters that have reference summaries."""
        return [row for row in self.rows if row["references"]]


def load_years(paths: Sequence[str | os.PathLike]) -> list[DucYear]:
    """Read converted years (``wikiref_dataset.duc.reader.read_converted``: their Parquet files, without `datasets`),
    sorted by year; two folders of one year are refused. Clusters without reference summaries are kept (a warning
    names them: they cannot be scored).

    Raises:
        DucError: a folder that is not a converted year, one holding the clusters of several years, or a year given
            twice.
    """
    from .reader import DucError, read_converted

    years: dict[int, DucYear] = {}
    for path in map(Path, paths):
        rows = read_converted(path)
        found = sorted({row["year"] for row in rows})
        if len(found) != 1:
            raise DucError(f"{path}: expected the clusters of one DUC year, found years {found}")
        year = found[0]
        if year in years:
            raise DucError(f"{path}: DUC {year} is already given by {years[year].path}")
        years[year] = DucYear(path=path, year=year, rows=rows)
        without = [row["topic_id"] for row in rows if not row["references"]]
        if without:
            logger.warning("%s: %d cluster(s) without reference summaries are not scored: %s",
                           path, len(without), ", ".join(without))
    return [years[year] for year in sorted(years)]
