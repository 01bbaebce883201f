"""The PSG2SUM build as datatrove stages, run by the local, Slurm or Ray executor like the WikiRef build.

Stage ``pairs`` (``tasks`` tasks): :class:`~wikiref_dataset.psg2sum.steps.Psg2SumPairs` mines the pages at positions
``rank`` modulo ``tasks`` of every dump and a ``JsonlWriter`` writes ``work/pairs/<rank>.jsonl.gz``; the miner's
counters land in datatrove's ``work/logs/pairs/stats``. Stage ``dataset`` (one task): :class:`WritePsg2SumDataset`
reads every shard, deduplicates across pages (earliest revision kept), splits by page, scores the baselines and writes
the Parquet folder, card and ``build.json``, in two streaming passes (keys, then the kept pairs in id order through
an external sort, :mod:`wikiref_dataset.utils.external_sort`), so its memory does not grow with the pairs' text.

Determinism: a page's pairs depend on that page alone (the miner's dedup is per page), and the dataset stage sorts
before deduplicating and splitting, so the folder is the same bytes for any ``tasks`` and ``workers``. Resumability:
datatrove skips tasks with a completion marker; :func:`run_psg2sum_build` refuses an output folder built from other
inputs (the skipped tasks' shards would be stale).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import KW_ONLY, asdict, dataclass, field
from pathlib import Path
from typing import Any

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from ..mining.stages import file_identities, read_jsonl, read_stage_stats, restart_changed_stages, stage_done
from ..process.executors import ExecutorConfig, make_executor, submit_slurm_chain
from ..process.folders import check_output_folder, empty_build_reason, finish_build, staging_folder
from ..wiki.dump import DAMAGED_DUMP_STAT, damaged_dumps
from .mining import STAT_KEYS, MiningConfig
from .steps import Psg2SumPairs, pair_from_document

__all__ = ["Psg2SumBuildConfig", "Psg2SumSummary", "WritePsg2SumDataset", "psg2sum_stages", "run_psg2sum_build"]

STAGES = ("pairs", "dataset")


@dataclass
class Psg2SumBuildConfig(ExecutorConfig):
    """What to mine and how (the output and executor fields are :class:`~wikiref_dataset.process.executors.ExecutorConfig`'s).

    Args:
        dumps (`list[str]`): ``pages-meta-history`` dumps (``.xml``, ``.bz2``, ``.gz``, ``.7z``).
        mining (:class:`MiningConfig`): λ, churn rules, lead splitter.
        seed (`int`), dev_size (`int`, *optional*), test_size (`int`, *optional*): the page-disjoint split
            (``dev_size`` pairs go to the split named ``validation``).
        baselines (`bool`): score LEAD1 and TextRank on the test split for the card.
        progress (`bool`): a progress bar per mining task.
        tasks (`int`): mining tasks; pages are dealt round-robin to them (the output is the same for any number);
            default 1.
        output_dir, work_dir, overwrite, workers, executor, executor_options: see
            :class:`~wikiref_dataset.process.executors.ExecutorConfig`.
    """

    dumps: list[str]
    _: KW_ONLY
    mining: MiningConfig = field(default_factory=MiningConfig)
    seed: int = 42
    dev_size: int | None = None
    test_size: int | None = None
    baselines: bool = True
    progress: bool = False
    tasks: int = field(default=1, kw_only=True, metadata={
        "flag": "--tasks", "metavar": "N",
        "help": "mining tasks; pages are dealt round-robin to them (the output is the same for any number); "
                "default 1"})

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.dumps:
            raise ValueError("no history dump given")
        self.dumps = [str(path) for path in self.dumps]


@dataclass
class Psg2SumSummary:
    """What a build produced (read back from ``build.json``)."""

    output_dir: str
    counts: dict[str, int]
    splits: dict[str, int]
    candidates_per_lambda: dict[str, int]
    min_score: float
    baselines: str
    pipeline: str
    seconds: float = 0.0
    empty_reason: str | None = None

    @property
    def pairs(self) -> int:
        return sum(self.splits.values())

    def suggested_min_score(self) -> str | None:
        """The highest λ of the grid that has candidates (a value to retry with), if any is below λ."""
        found = [value for value, count in self.candidates_per_lambda.items()
                 if count and float(value) < self.min_score]
        return max(found, key=float) if found else None


class WritePsg2SumDataset(PipelineStep):
    """Stage ``dataset`` (one task): read the pair shards, dedup, split, score baselines, write folder + card."""

    name = "💾 PSG2SUM dedup + split + Parquet"
    type = "💽 - WRITER"

    def __init__(self, config: Psg2SumBuildConfig) -> None:
        super().__init__()
        self.config = config

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from ..mining.splits import plan_group_splits
        from ..utils.external_sort import external_sort
        from .dataset import DedupPlan, Psg2SumFolderWriter, split_sizes

        config = self.config
        shards = sorted((config.work / "pairs").glob("*.jsonl.gz"))
        plan = DedupPlan()  # pass 1, keys only: which pairs are kept, and each page's size
        for path in shards:
            self.stat_update("input_bytes", value=path.stat().st_size)
            for record in read_jsonl(path):
                plan.add(pair_from_document(record))
        pages = plan.page_sizes()
        split_of = plan_group_splits(pages, *split_sizes(plan.kept, len(pages), config.dev_size, config.test_size),
                                     config.seed)
        has_test = "test" in split_of.values()
        staging = staging_folder(config.output_dir)
        writer = Psg2SumFolderWriter(staging)
        scored: list[dict[str, Any]] = []  # what the baselines score: the test split, or every pair without one
        sorting: Counter[str] = Counter()
        records = (record for path in shards for record in read_jsonl(path))
        for record in external_sort(records, key=lambda r: r["id"], folder=config.work / "spill", stats=sorting):
            pair = pair_from_document(record)  # pass 2: the kept pairs in id order, to the split files
            if plan.claim(pair):
                split = split_of[str(pair.page_id)]
                writer.add(split, pair)
                if config.baselines and (split == "test" or not has_test):
                    scored.append(asdict(pair))
        if sorting["sort_runs_spilled"]:
            self.stat_update("sort_runs_spilled", value=sorting["sort_runs_spilled"])
        mined = read_stage_stats(config.work / "logs" / "pairs").totals()
        counts = {key: mined.get(key, 0) for key in STAT_KEYS}
        counts["duplicates"] += plan.duplicates
        counts["pairs"] = plan.kept
        counts |= {f"{DAMAGED_DUMP_STAT}{name}": pages for name, pages in damaged_dumps(mined).items()}
        grid = {f"{value:g}": mined.get(f"candidates_at_{value:g}", 0) for value in config.mining.score_grid}
        baselines, description = "", _describe(config.mining)
        if config.baselines and plan.kept:
            from .baselines import evaluate_baselines, format_table
            from .mining import PairMiner

            # the test split, as Table 4; a build too small to have one is scored on all its pairs (and says so), in
            # (revision, id) order
            scored_on = "the test split" if has_test else "all pairs (this build has no test split)"
            if not has_test:
                scored.sort(key=lambda row: (row["revision_id"], row["id"]))
            miner = PairMiner(config.mining)
            table = format_table(evaluate_baselines(scored, miner.pipeline))
            baselines = f"Scored on {scored_on}.\n\n{table}"
        build = {"dumps": [Path(path).name for path in config.dumps], "config": config.mining.to_dict(),
                 "counts": counts, "candidates_per_lambda": grid, "pipeline": description, "baselines": baselines,
                 "tasks": config.tasks, "seed": config.seed}
        sizes = writer.close(build)
        build["splits"] = sizes
        empty = None
        if not plan.kept:
            candidates, duplicates = counts.get("candidate_pairs", 0), counts.get("duplicates", 0)
            drops = {f"score below λ={config.mining.min_score:g}": candidates - duplicates, "duplicates": duplicates}
            empty = empty_build_reason(("candidate pairs", candidates), drops)
        finish_build(staging, config.output_dir, "psg2sum", config.work, build, empty, config.overwrite)
        self.stat_update("pairs", value=plan.kept)
        return
        yield


def _describe(mining: MiningConfig) -> str:
    from .mining import PairMiner

    return PairMiner(mining).description


def psg2sum_stages(config: Psg2SumBuildConfig) -> list[tuple[str, list[PipelineStep], int]]:
    """The two stages as (name, datatrove steps, tasks)."""
    from datatrove.pipeline.writers import JsonlWriter

    return [
        ("pairs", [Psg2SumPairs(config.dumps, config.mining, progress=config.progress),
                   JsonlWriter(str(config.work / "pairs"), output_filename="${rank}.jsonl.gz", compression="gzip")],
         config.tasks),
        ("dataset", [WritePsg2SumDataset(config)], 1),
    ]


def _check_inputs(config: Psg2SumBuildConfig) -> list[str]:
    """Redo the stages whose inputs changed since the previous run in the work folder (another λ, other dumps or
    ``--tasks``): :func:`wikiref_dataset.mining.stages.restart_changed_stages`."""
    return restart_changed_stages(config.work, [
        ("pairs", {"dumps": file_identities(config.dumps), "tasks": config.tasks, "mining": config.mining.to_dict()},
         ["pairs"]),
        ("dataset", {}, ["build.json"]),
    ])


def _dataset_stage_stale(config: Psg2SumBuildConfig) -> None:
    """The dataset stage is cheap and its options (seed, sizes, baselines) are not part of the inputs: redo it."""
    completions = config.work / "logs" / "dataset" / "completions"
    for marker in completions.glob("*"):
        marker.unlink()


def read_summary(config: Psg2SumBuildConfig, seconds: float = 0.0) -> Psg2SumSummary:
    build = json.loads((config.work / "build.json").read_text(encoding="utf-8"))
    return Psg2SumSummary(config.output_dir, build["counts"], build["splits"], build["candidates_per_lambda"],
                          config.mining.min_score, build.get("baselines", ""), build.get("pipeline", ""), seconds,
                          build.get("empty_reason"))


def run_psg2sum_build(config: Psg2SumBuildConfig) -> Psg2SumSummary | None:
    """Run both stages (finished mining tasks are skipped on rerun) and return the summary.

    With ``executor="ray"`` the tasks run on the Ray cluster and this call waits for them, as with the local executor.
    With ``executor="slurm"`` both stages are submitted at once, the dataset job waiting on the mining job
    (:func:`~wikiref_dataset.process.executors.submit_slurm_chain`), and ``None`` is returned; run the same command again once
    they finished to get the summary.

    Raises:
        OutputFolderError: ``output_dir`` holds something other than a previous PSG2SUM build (see ``overwrite``).
    """
    check_output_folder(config.output_dir, "psg2sum", config.overwrite)
    config.work.mkdir(parents=True, exist_ok=True)
    restarted = _check_inputs(config)
    if restarted and config.progress:
        print(f"inputs changed since the last run in {config.work}: redoing {', '.join(restarted)}", flush=True)
    if config.executor == "slurm":
        if stage_done(config.work, "dataset", 1) and (config.work / "build.json").is_file():
            return read_summary(config)
        submit_slurm_chain(config, psg2sum_stages(config), "PSG2SUM build")  # prints the job ids: this call's result
        return None
    _dataset_stage_stale(config)
    started = time.perf_counter()
    for stage, steps, tasks in psg2sum_stages(config):
        make_executor(config, stage, steps, tasks).run()
        if not stage_done(config.work, stage, tasks):
            raise RuntimeError(f"PSG2SUM stage {stage!r} did not finish: see {config.work / 'logs' / stage}")
    return read_summary(config, time.perf_counter() - started)
