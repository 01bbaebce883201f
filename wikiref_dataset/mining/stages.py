"""What every miner's datatrove build shares: reading a stage's JSON-lines outputs, whether a stage finished, the
identity of input files, restarting the stages whose inputs or settings changed, and the counters datatrove wrote for
a stage (:func:`read_stage_stats`, the one reader of its ``logs/<stage>/stats/*.json``)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..process.executors import live_slurm_chain
from ..utils.jsonl import iter_json_objects


def read_jsonl(path: Path, bad: list[str] | None = None) -> Iterator[dict]:
    """The JSON objects of a (gzipped) JSON-lines file, one at a time; unreadable lines are skipped and described in
    ``bad``."""
    def note(location: str, reason: str) -> None:
        if bad is not None:
            bad.append(f"{location}: {reason}")

    for _, record in iter_json_objects(path, on_error=note):
        yield record


@dataclass
class StageStats:
    """The counters datatrove wrote for one stage's tasks (``<logs>/stats/<rank>.json``, written when a task
    finishes), summed over the tasks.

    Args:
        steps (`dict[str, Counter[str]]`): per step name (datatrove's ``"<type>: <name>"``, e.g.
            ``"📖 - READER: 📜 WikiRef statements"``), each counter's total summed over the tasks (every counter the
            project's steps keep is a whole number); steps and counters in the order they first appear, files read
            in rank order.
        tasks (`Counter[str]`): per step name, how many stats files report it (the tasks that finished it).
        missing (`list[int]`): the ranks asked for (``tasks`` of :func:`read_stage_stats`) that left no stats file:
            the task failed or has not run.
        unreadable (`list[tuple[Path, str]]`): stats files left out (``skip_unreadable``), each with the reason.
    """

    steps: dict[str, Counter[str]] = field(default_factory=dict)
    tasks: Counter[str] = field(default_factory=Counter)
    missing: list[int] = field(default_factory=list)
    unreadable: list[tuple[Path, str]] = field(default_factory=list)

    def step(self, name: str) -> Counter[str]:
        """One step's counters (empty when no task reported that step)."""
        return self.steps.get(name, Counter())

    def totals(self) -> Counter[str]:
        """All steps' counters added together, for stages whose counter names do not clash across steps."""
        totals: Counter[str] = Counter()
        for counter in self.steps.values():
            totals.update(counter)
        return totals


def read_stage_stats(logs: str | Path, tasks: int | None = None, *, skip_unreadable: bool = False) -> StageStats:
    """The counters of a datatrove logging folder (a stage's ``logging_dir``), summed per step over its tasks.

    With ``tasks``, the stats files of ranks ``0 .. tasks-1`` are read and the ranks without one are listed in
    :attr:`StageStats.missing`; without, every ``stats/*.json`` there. A file that does not parse as datatrove's
    stats raises ``ValueError`` naming it, or with ``skip_unreadable`` is left out and listed in
    :attr:`StageStats.unreadable`. The reader logs nothing: the caller says what a missing task means.

    Each file is parsed by datatrove (``PipelineStats.from_json``) and the tasks' steps merged with ``Stats.__add__``,
    datatrove's own merge (its ``merge_stats`` tool). It is a thin wrapper rather than ``sum(PipelineStats)``
    because: ``PipelineStats.__add__`` pairs steps by position, while the callers look steps up by name (and a
    file that lacks a step must not shift the others); ``Stats.from_dict`` leaves each counter as written (a number,
    or ``{"total": ...}`` when datatrove had more to say), so the totals are read with ``MetricStats.from_dict``; and
    the callers need the ranks that left no file (failed tasks), which datatrove's classes do not track."""
    from datatrove.utils.stats import PipelineStats

    folder = Path(logs) / "stats"
    if tasks is None:
        paths = sorted(folder.glob("*.json"))
    else:
        paths = [folder / f"{rank:05d}.json" for rank in range(tasks)]
    result = StageStats()
    merged: dict = {}  # step name -> datatrove Stats, summed over the files read so far
    for rank, path in enumerate(paths):
        if tasks is not None and not path.is_file():
            result.missing.append(rank)
            continue
        try:
            pipeline = PipelineStats.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as err:
            if not skip_unreadable:
                raise ValueError(f"{path}: not a datatrove stats file ({err!r})") from err
            result.unreadable.append((path, str(err)))
            continue
        for stats in pipeline.stats:
            merged[stats.name] = merged[stats.name] + stats if stats.name in merged else stats
        for name in dict.fromkeys(stats.name for stats in pipeline.stats):
            result.tasks[name] += 1
    for name, stats in merged.items():
        result.steps[name] = Counter({key: _total(value) for key, value in stats.stats.items()})
    return result


def _total(value: Any) -> int:
    """A counter's total, as datatrove wrote it (a number, or ``{"total": ...}``) or merged it (``MetricStats``)."""
    from datatrove.utils.stats import MetricStats

    if not isinstance(value, MetricStats):
        value = MetricStats.from_dict(value)
    return int(value.total or 0)


def file_identities(paths: Sequence[str | Path]) -> list[list[Any]]:
    """``[resolved path, size, mtime_ns]`` of each input file, sorted: a file replaced in place is another input."""
    identities = []
    for path in paths:
        resolved = Path(path).resolve()
        try:
            info = resolved.stat()
            identities.append([str(resolved), info.st_size, info.st_mtime_ns])
        except OSError:
            identities.append([str(resolved), None, None])
    return sorted(identities, key=lambda item: item[0])


def restart_changed_stages(work: Path, stages: Sequence[tuple[str, dict[str, Any], Sequence[str]]]) -> list[str]:
    """Make a rerun with other inputs start over where they matter, instead of reusing stale outputs.

    ``stages`` lists, in order, each stage's name, its inputs (its options and the files it reads) and its outputs
    (paths relative to ``work``). From the first stage whose inputs differ from those ``work/inputs.json`` recorded on
    the previous run, every stage's outputs, logs and completion markers are deleted, so those stages run again;
    earlier stages are reused. Returns the stages restarted (empty for a new work folder)."""
    record = work / "inputs.json"
    try:
        previous = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else None
    except ValueError:
        previous = {}
    current = {name: json.loads(json.dumps(inputs, default=str)) for name, inputs, _ in stages}
    restarted: list[str] = []
    changed = False
    for name, _, outputs in stages:
        changed = changed or not isinstance(previous, dict) or previous.get(name) != current[name]
        if changed and previous is not None:
            if not restarted and (live := live_slurm_chain(work, unreachable_ok=True)):
                raise RuntimeError(f"{work}: the Slurm jobs of the last submission still run (squeue -j "
                                   f"{','.join(live)}) with other inputs; wait for them to end or cancel them "
                                   f"(scancel {' '.join(live)}), then run again")
            clear_stage(work, name, outputs)
            restarted.append(name)
    work.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(current, indent=1, sort_keys=True), encoding="utf-8")
    return restarted


def clear_stage(work: Path, name: str, outputs: Sequence[str]) -> None:
    """Delete a stage's outputs (paths relative to `work`), its logs and completion markers: it runs again."""
    for relative in [*outputs, f"logs/{name}"]:
        target = work / relative
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)


def stage_done(work: str | Path, stage: str, tasks: int) -> bool:
    """Whether all ``tasks`` tasks of ``stage`` left their completion marker under the ``work`` folder."""
    completions = Path(work) / "logs" / stage / "completions"
    return all((completions / f"{rank:05d}").is_file() for rank in range(tasks))
