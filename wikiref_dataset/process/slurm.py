"""Slurm queries: the default partition (``sinfo``) and which jobs of a chain the queue still holds (``squeue``), read by the executors' Slurm chain and by the folder locks. Standard library only."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence

SLURM_JOBS = "slurm_jobs.json"  # in the work folder: {stage: job id} of the last submission


def default_slurm_partition() -> str:
    """The partition ``sbatch`` picks when none is named (``sinfo`` marks it with ``*``)."""
    try:
        listing = subprocess.run(["sinfo", "-h", "-o", "%P"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise ValueError(f"cannot reach the Slurm cluster (sinfo: {getattr(err, 'stderr', None) or err})") from err
    for name in listing.split():
        if name.endswith("*"):
            return name[:-1]
    raise ValueError("the Slurm cluster has no default partition: name one, e.g. --executor-options "
                     "'{\"partition\": \"cpu\"}'")


def _slurm_queue() -> list[tuple[str, str, str]]:
    """(job id, Slurm's reason, its dependencies) of every queued or running job (array tasks share the id)."""
    try:
        listing = subprocess.run(["squeue", "-h", "-o", "%F|%r|%E"], capture_output=True, text=True,
                                 check=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise ValueError(f"cannot reach the Slurm cluster (squeue: {getattr(err, 'stderr', None) or err})") from err
    return [tuple(line.split("|", 2)) for line in listing.splitlines() if line.count("|") >= 2]  # type: ignore[misc]


def chain_jobs(jobs: set[str] | Sequence[str], queue: Sequence[tuple[str, str, str]] | None = None) -> dict[str, str]:
    """{job id: Slurm's reason} of those of `jobs`, and of the jobs waiting on them, that Slurm's queue
    (:func:`_slurm_queue`, read when not given) still holds; a reason ``DependencyNeverSatisfied`` means the job
    can never start.

    Raises:
        ValueError: ``squeue`` cannot be run.
    """
    wanted = set(jobs)
    if not wanted:
        return {}
    return {job: reason for job, reason, depends in (_slurm_queue() if queue is None else queue)
            if job in wanted or wanted & set(re.findall(r"\d+", depends))}


def live_jobs(ours: dict[str, str]) -> list[str]:
    """The jobs of :func:`chain_jobs` that can still start, in id order."""
    return sorted((job for job, reason in ours.items() if reason != "DependencyNeverSatisfied"), key=int)
