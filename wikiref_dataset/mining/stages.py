"""What every miner's datatrove build shares: reading a stage's JSON-lines outputs, whether a stage finished, the identity of input files, restarting the stages whose inputs or settings changed, and the counters datatrove wrote for a stage."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
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


def stage_stats(work: Path, stage: str) -> dict[str, Counter]:
    """Per step name, the summed counters of a stage's finished tasks."""
    steps: dict[str, Counter] = {}
    for path in sorted((work / "logs" / stage / "stats").glob("*.json")):
        for step in json.loads(path.read_text(encoding="utf-8")):
            counter = steps.setdefault(step["name"], Counter())
            for key, value in step.get("stats", {}).items():
                counter[key] += int(value["total"] if isinstance(value, dict) else value)
    return steps


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
