"""PSG2SUM mining as a datatrove reader step: history dumps → one ``Document`` per passage–summary pair.

Task ``rank`` of ``world_size`` mines its share of the dumps (:func:`~wikiref_dataset.wiki.dump.plan_dump_parts`):
whole files (the full history comes as hundreds of files), or byte ranges of a multistream file with its index, so
each task reads only its share of the bytes (``input_bytes``). The miner's counters go to datatrove's stats. Put a
``JsonlWriter`` after it; :func:`pair_from_document` reads a document back. :mod:`.pipeline` runs it on an
executor.

A dump that breaks while being read (truncated, corrupt) keeps the pairs of the pages mined before the damage (the
page cut by it yields none), is counted under :func:`~wikiref_dataset.wiki.dump.damaged_dump_stat` (file, error,
pages mined before the damage) and the task goes on with the next dump.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from ..wiki.dump import DamagedDumpError, damaged_dump_stat, plan_dump_parts
from .history import iter_histories
from .mining import MiningConfig, PairMiner, PassageSummaryPair

__all__ = ["Psg2SumPairs", "pair_from_document", "pair_to_document"]

logger = logging.getLogger(__name__)


def pair_to_document(pair: PassageSummaryPair) -> Document:
    """The pair as a datatrove document: ``text`` = passage, everything else in ``metadata``."""
    metadata = {key: value for key, value in asdict(pair).items() if key not in ("id", "passage")}
    return Document(text=pair.passage, id=pair.id, metadata=metadata)


def pair_from_document(document: Document | dict[str, Any]) -> PassageSummaryPair:
    """Inverse of :func:`pair_to_document` (also accepts the JSON object a ``JsonlWriter`` wrote)."""
    if isinstance(document, Document):
        values = {"id": document.id, "passage": document.text, **document.metadata}
    else:
        values = {"id": document["id"], "passage": document["text"], **document.get("metadata", {})}
    return PassageSummaryPair(**{f.name: values[f.name] for f in fields(PassageSummaryPair)})


class Psg2SumPairs(PipelineStep):
    """Reads ``pages-meta-history`` dumps and yields one document per mined pair.

    Args:
        dumps (`str`, `Path` or a sequence of them): history dumps (``.xml``, ``.xml.bz2``, ``.xml.gz``, ``.7z``).
        config (:class:`MiningConfig`, *optional*): mining settings.
        progress (`bool`): show a revisions progress bar (one per task) on stderr.
    """

    name = "⛏ PSG2SUM pairs"
    type = "📖 - READER"

    def __init__(self, dumps: str | Path | Sequence[str | Path], config: MiningConfig | None = None,
                 progress: bool = False) -> None:
        super().__init__()
        self.dumps = [str(dumps)] if isinstance(dumps, (str, Path)) else [str(path) for path in dumps]
        if not self.dumps:
            raise ValueError("Psg2SumPairs needs at least one history dump")
        self.config = config if config is not None else MiningConfig()
        self.progress = progress

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        if data:
            yield from data
        from tqdm.auto import tqdm

        miner = PairMiner(self.config)
        reported = miner.stats.copy()
        label = "psg2sum" if world_size == 1 else f"psg2sum task {rank}"
        with tqdm(desc=label, unit=" revisions", disable=not self.progress, position=rank, file=sys.stderr) as bar:
            for part in plan_dump_parts(self.dumps, world_size)[rank]:  # whole files, or multistream ranges
                pages = 0
                self.stat_update("input_bytes", value=part.num_bytes)
                try:
                    histories = iter_histories(part, namespaces=self.config.namespaces)
                    for history in histories:
                        with self.track_time("page"):
                            pairs = list(miner.mine_page(history, on_revision=bar.update))
                        pages += 1
                        for key, value in (miner.stats - reported).items():
                            self.stat_update(key, value=value)
                        reported = miner.stats.copy()
                        bar.set_postfix(pages=miner.stats["pages"], pairs=miner.stats["pairs"], refresh=False)
                        for pair in pairs:
                            yield pair_to_document(pair)
                except DamagedDumpError as err:  # keep the pages mined before the damage, go on with the next dump
                    logger.warning("%s; the pairs of the %d pages mined before the damage are kept", err, pages)
                    self.stat_update(damaged_dump_stat(err), value=pages)
                    miner.stats = reported.copy()  # the page cut by the damage is not counted
