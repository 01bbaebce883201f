"""One executor configuration for the three builds (WikiRef, PSG2SUM, AQuaMuSe) and the one place that turns it into
datatrove executors (local, Slurm or Ray), and into command-line options.

:class:`ExecutorConfig` holds where a build writes (``output_dir``, ``work_dir``, ``overwrite``), how many tasks it is
cut into (``tasks``), how many run at once (``workers``) and on what (``executor``, ``executor_options``). The build
configs extend it (``BuildConfig``, ``Psg2SumBuildConfig``, ``AQuaMuSeBuildConfig``), each with its own meaning and
default for ``tasks``. :func:`make_executor` builds one stage's executor from it, :func:`submit_slurm_chain` submits a
whole build to Slurm in one go, and :func:`add_executor_arguments` declares the fields as the options every build
command shares (``--out``, ``--work``, ``--overwrite``, ``--tasks``, ``--workers``, ``--executor``,
``--executor-options``; help text from the fields' metadata), which :func:`executor_settings` reads back.

:func:`datatrove_console` switches datatrove's console logs off (errors only) for the executors built inside it (the
commands, unless ``-v`` is given); each task's log file keeps everything. This module imports only the standard library at import
time: the ``wikiref`` command builds its parsers on every call.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import subprocess
import sys
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .folders import work_folder
from .slurm import SLURM_JOBS, chain_jobs, default_slurm_partition, live_jobs

logger = logging.getLogger(__name__)

__all__ = ["EXECUTORS", "ExecutorConfig", "add_executor_arguments", "connect_ray", "executor_settings",
           "local_executor", "make_executor", "submit_slurm_chain", "worker_start_method"]

EXECUTORS = ("local", "slurm", "ray")


@dataclass(kw_only=True)
class ExecutorConfig:
    """Where a build writes and how its datatrove tasks run (shared by the WikiRef, PSG2SUM and AQuaMuSe builds).

    Args:
        output_dir (`str`): the output folder, published whole at the end of the build (never a half-written one).
        work_dir (`str`, *optional*): intermediate, resumable state (default: ``<output_dir>.work`` beside it).
        overwrite (`bool`): write into an output folder that holds something other than a previous build of the same
            kind (files this project did not write are kept).
        tasks (`int`, *optional*): datatrove tasks the build is cut into; each build says what they share out and
            what ``None`` means.
        workers (`int`): tasks run at once (Slurm: array tasks running at once).
        executor (`str`): ``local`` (this machine), ``slurm`` (one array job per stage, chained with afterok) or
            ``ray`` (a Ray cluster).
        executor_options (`dict`): the cluster executor's extra keywords (datatrove's ``SlurmPipelineExecutor`` or
            ``RayPipelineExecutor``), e.g. ``{"partition": "cpu", "time": "12:00:00"}``; ``address`` for Ray.
    """

    output_dir: str = field(metadata={
        "flag": "--out", "metavar": "DIR",
        "help": "output folder; the build is published there whole at its end (the folder holds the previous "
                "complete build or nothing until then)"})
    work_dir: str | None = field(default=None, metadata={
        "flag": "--work", "metavar": "DIR",
        "help": "intermediate, resumable state (default: OUT.work beside the output folder)"})
    overwrite: bool = field(default=False, metadata={
        "flag": "--overwrite",
        "help": "write into an output folder that holds something other than a previous build of this kind (files "
                "this project did not write are kept)"})
    tasks: int | None = field(default=None, metadata={
        "flag": "--tasks", "metavar": "N", "help": "datatrove tasks the build is cut into (default: the build's own)"})
    workers: int = field(default=1, metadata={
        "flag": "--workers", "metavar": "N",
        "help": "tasks run at once (default 1; with --executor slurm, array tasks running at once)"})
    executor: str = field(default="local", metadata={
        "flag": "--executor", "choices": EXECUTORS,
        "help": "where the tasks run: local (this machine; default), slurm (one array job per stage, each started "
                "once the previous one succeeded) or ray (a Ray cluster)"})
    executor_options: dict[str, Any] = field(default_factory=dict, metadata={
        "flag": "--executor-options", "metavar": "JSON",
        "help": "the cluster executor's extra keywords as a JSON object, e.g. '{\"partition\": \"cpu\", \"time\": "
                "\"12:00:00\"}' for Slurm or '{\"address\": \"ray://head:10001\"}' for Ray"})

    def __post_init__(self) -> None:
        self.output_dir = str(self.output_dir)
        self.work_dir = str(self.work_dir) if self.work_dir else None
        if not self.output_dir:
            raise ValueError("no output folder given")
        if self.workers < 1 or (self.tasks is not None and self.tasks < 1):
            raise ValueError(f"workers and tasks must be >= 1 (got {self.workers}, {self.tasks})")
        if self.executor not in EXECUTORS:
            raise ValueError(f"executor must be {', '.join(EXECUTORS[:-1])} or {EXECUTORS[-1]}, got {self.executor!r}")
        if not isinstance(self.executor_options, dict):
            raise ValueError(f"executor_options must be a dict, got {type(self.executor_options).__name__}")

    @property
    def work(self) -> Path:
        """The work folder: ``work_dir``, or ``<output_dir>.work`` beside the output folder."""
        return work_folder(self.output_dir, self.work_dir)


# ----------------------------------------------------------------------------------------------------------------
# Command-line options
# ----------------------------------------------------------------------------------------------------------------

OUTPUT_FIELDS = ("output_dir", "work_dir", "overwrite")
EXECUTION_FIELDS = ("tasks", "workers", "executor", "executor_options")


def positive_int(value: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def json_object(value: str) -> dict[str, Any]:
    """An argparse type: a JSON object."""
    try:
        parsed = json.loads(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON ({err}): {value!r}") from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object {{...}}, got {value!r}")
    return parsed


def _dest(flag: str) -> str:
    """The namespace attribute of an option: ``--out`` -> ``out``, ``--executor-options`` -> ``executor_options``."""
    return flag.lstrip("-").replace("-", "_")


def add_executor_arguments(parser: argparse.ArgumentParser, tasks_help: str | None = None) -> dict[str, Any]:
    """Declare the fields of :class:`ExecutorConfig` as options of a build command: an "output" group (``--out``
    required, ``--work``, ``--overwrite``) and an "execution" group (``--tasks``, ``--workers``, ``--executor``,
    ``--executor-options``), with the fields' help texts. ``tasks_help`` says what the build's tasks share out and
    their default (the build config's: an unset ``--tasks`` leaves it). Returns the two argument groups,
    ``{"output": …, "execution": …}``, for the command's own additions; :func:`executor_settings` reads the values
    back. (The build configs themselves import datatrove: the ``wikiref`` command cannot load them to build its
    parser, hence the text.)"""
    items = {item.name: item for item in fields(ExecutorConfig)}
    hints = typing.get_type_hints(ExecutorConfig)
    groups = {"output": parser.add_argument_group("output"),
              "execution": parser.add_argument_group("execution (the same options for every build command)")}
    for group, names in (("output", OUTPUT_FIELDS), ("execution", EXECUTION_FIELDS)):
        for name in names:
            item = items[name]
            metadata = dict(item.metadata)
            options: dict[str, Any] = {"dest": _dest(metadata["flag"]), "help": metadata["help"]}
            if "metavar" in metadata:
                options["metavar"] = metadata["metavar"]
            if "choices" in metadata:
                options["choices"] = metadata["choices"]
            if hints[name] is bool:
                options["action"] = "store_true"
            elif name == "executor_options":
                options.update(type=json_object, default={})
            elif name == "tasks":
                options.update(type=positive_int, default=None, help=tasks_help or metadata["help"])
            elif name == "workers":
                options.update(type=positive_int, default=item.default)
            elif name == "output_dir":
                options["required"] = True
            else:
                options["default"] = item.default
            groups[group].add_argument(metadata["flag"], **options)
    return groups


def executor_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`ExecutorConfig` keywords from options declared by :func:`add_executor_arguments` (an unset
    ``--tasks`` is left out: the build config's default applies)."""
    flags = {item.name: item.metadata["flag"] for item in fields(ExecutorConfig)}
    settings = {name: getattr(args, _dest(flags[name])) for name in (*OUTPUT_FIELDS, *EXECUTION_FIELDS)}
    settings["output_dir"] = str(settings["output_dir"])
    settings["work_dir"] = str(settings["work_dir"]) if settings["work_dir"] else None
    if settings["tasks"] is None:
        del settings["tasks"]
    return settings


# ----------------------------------------------------------------------------------------------------------------
# Console logs
# ----------------------------------------------------------------------------------------------------------------

WORKER_PRELOAD = ("wikiref_dataset.process.end_with_parent", "spacy", "datatrove.pipeline.writers", "wikiref_dataset.text",
                  "wikiref_dataset.wikiref.curation", "wikiref_dataset.web.documents", "wikiref_dataset.wiki.steps",
                  "wikiref_dataset.psg2sum.steps")
"""Modules the local executor's fork server imports once per run, where the workers cannot be forked from the
command's process (:func:`worker_start_method`), so that each worker process of each stage starts with them loaded
instead of importing them again (about a second per worker per stage). The first ties the fork server and its
workers to the command's process (:mod:`wikiref_dataset.process.lifetime`)."""

FORK_SAFE_THREADS = frozenset({"fsspecIO"})
"""Threads that may be running when the workers are forked: fsspec's event-loop thread (datatrove reads and writes
through fsspec), whose lock and loop fsspec resets in a forked child (``fsspec.asyn.reset_after_fork``, registered
with ``os.register_at_fork``)."""


def worker_start_method() -> str:
    """How the local executor starts its workers, decided when a stage starts: ``"fork"`` where forking this
    process is safe, else ``"forkserver"`` (datatrove's default).

    A forked worker starts at once with everything the command imported and built (its spaCy pipelines, the
    language tables): on the shipped sample with ``--workers 16`` the build takes about half as long as through the
    fork server, whose workers import the libraries again (:data:`WORKER_PRELOAD`, about 2.5 s on a 2-core machine,
    then each worker's first task builds its pipelines). Forking is unsafe where another thread may hold a lock at
    the moment of the fork (the child inherits the lock, not the thread that would release it). So: Linux only
    (elsewhere the platform's libraries are not fork-safe, e.g. macOS's), from the main thread, no thread running
    but the main one and those of :data:`FORK_SAFE_THREADS`, and torch not imported (its intra-op thread pool; the
    AQuaMuSe build loads its encoder in the command's process). Everything else gets the fork server."""
    import threading

    if not sys.platform.startswith("linux") or "torch" in sys.modules:
        return "forkserver"
    if threading.current_thread() is not threading.main_thread():
        return "forkserver"
    others = [thread for thread in threading.enumerate() if thread is not threading.main_thread()]
    return "fork" if all(thread.name in FORK_SAFE_THREADS for thread in others) else "forkserver"


def local_executor(pipeline: Sequence[Any], **options: Any) -> Any:
    """datatrove's ``LocalPipelineExecutor`` (same keywords) that follows :func:`datatrove_console`. With more than
    one worker, and no ``start_method`` given, its workers are forked from this process where that is safe (after
    building here the spaCy pipelines of the steps: :func:`wikiref_dataset.text.warm_pipelines`), else they come
    from a fork server that has imported :data:`WORKER_PRELOAD` (:func:`worker_start_method`)."""
    from .datatrove_executors import LocalExecutor

    if options.get("workers", 1) != 1:
        options.setdefault("start_method", worker_start_method())
        if options["start_method"] == "fork":  # the workers inherit the stage's spaCy pipelines, built once here
            from ..text import warm_pipelines

            warm_pipelines(pipeline)
        elif options["start_method"] == "forkserver":
            import multiprocess

            multiprocess.get_context("forkserver").set_forkserver_preload(list(WORKER_PRELOAD))
    return LocalExecutor(pipeline, **options)


# ----------------------------------------------------------------------------------------------------------------
# Executors
# ----------------------------------------------------------------------------------------------------------------


def connect_ray(address: str | None = None) -> None:
    """Join a Ray cluster unless this process already has: ``address`` (``host:port`` of its head), else
    ``RAY_ADDRESS``, else the cluster ``ray start`` started on this machine, else a new one local to this process
    (Ray's own order of :func:`ray.init`)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address)


def make_executor(config: ExecutorConfig, stage: str, steps: list[Any], tasks: int, depends: Any = None) -> Any:
    """The datatrove executor of one stage of a build (``config.executor``: local, slurm or ray), logging under
    ``config.work/logs/<stage>``. A Ray executor joins the cluster named by the option ``address`` (see
    :func:`connect_ray`); its ``run()`` waits for the stage's tasks. A Slurm executor's ``run()`` submits one array
    job (``tasks`` tasks, at most ``workers`` at once) after those of ``depends``, and returns: see
    :func:`submit_slurm_chain`."""
    logging_dir = str(config.work / "logs" / stage)
    if config.executor == "slurm":
        from datatrove.executor import SlurmPipelineExecutor

        options = dict(config.executor_options)
        options["job_name"] = f"{options.get('job_name', 'wikiref')}-{stage}"  # a prefix: one job name per stage
        options.setdefault("time", "24:00:00")
        if "partition" not in options:
            options["partition"] = default_slurm_partition()
        if not {"env_command", "condaenv", "venv_path"} & options.keys():
            # the job script calls datatrove's console scripts by name: those of this Python, activated or not
            options["env_command"] = f"export PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH"
        return SlurmPipelineExecutor(steps, tasks=tasks, workers=config.workers, logging_dir=logging_dir,
                                     depends=depends, **options)
    if config.executor == "ray":
        from .datatrove_executors import RayExecutor

        options = dict(config.executor_options)
        connect_ray(options.pop("address", None))
        return RayExecutor(steps, tasks=tasks, workers=config.workers, logging_dir=logging_dir, depends=depends,
                           **options)
    return local_executor(steps, tasks=tasks, workers=min(config.workers, tasks), logging_dir=logging_dir,
                          depends=depends)


# ----------------------------------------------------------------------------------------------------------------
# Slurm: a whole build in one submission
# ----------------------------------------------------------------------------------------------------------------

def live_slurm_chain(work: str | Path, unreachable_ok: bool = False) -> list[str]:
    """The jobs of the Slurm chain last submitted from `work` (``slurm_jobs.json``), and the jobs waiting on them,
    that are still queued or running and can still start; [] without a record (no Slurm asked).

    Raises:
        ValueError: ``squeue`` cannot be run; with `unreachable_ok` (a run that does not use Slurm, on a machine
            without it), [] and a warning instead.
    """
    record = Path(work) / SLURM_JOBS
    if not record.is_file():
        return []
    previous = set(json.loads(record.read_text(encoding="utf-8")).values())
    if not previous:
        return []
    try:
        return live_jobs(chain_jobs(previous))
    except ValueError as error:
        if not unreachable_ok:
            raise
        logger.warning("%s: cannot tell whether the Slurm jobs %s still run (%s): going on", work,
                       ",".join(sorted(previous)), error)
        return []


def submit_slurm_chain(config: ExecutorConfig, stages: Sequence[tuple[str, list[Any], int]], build: str,
                       afterwards: str = "it prints the summary", progress: bool = True) -> dict[str, str]:
    """Submit a build's stages to Slurm in one go; returns {stage: job id} of the jobs queued for it.

    Each stage is one array job (:func:`make_executor`) whose tasks start once the previous stage's job has succeeded
    (``--dependency=afterok``), so the chain runs to its end unattended; a stage whose tasks all finished is not
    submitted. datatrove also submits a small ``merge_stats`` job after each stage. The ids are recorded in
    ``config.work/slurm_jobs.json``, and the folders the submitting command locked are leased to the jobs
(:func:`~wikiref_dataset.process.locks.lease_to_slurm_jobs`: other runs are refused until they end). While jobs of the
previous submission (or jobs waiting on them) are queued or
    running, nothing is submitted: the same tasks would run twice. Jobs waiting on a failed one (Slurm's reason
    ``DependencyNeverSatisfied``) can never start: they are cancelled and the unfinished tasks submitted again.
    """
    work = Path(config.work)
    record = work / SLURM_JOBS
    previous = set(json.loads(record.read_text(encoding="utf-8")).values()) if record.is_file() else set()
    ours = chain_jobs(previous)
    if live_jobs(ours):
        if progress:
            print(f"the {build}'s Slurm jobs are still queued or running (squeue -j {','.join(sorted(ours, key=int))}): "
                  f"nothing submitted; run the same command again once they finished", flush=True)
        return json.loads(record.read_text(encoding="utf-8"))
    if ours:  # what is left of a chain that broke: a task failed (its logs say why)
        subprocess.run(["scancel", *sorted(ours, key=int)], check=True)
    chain, depends = [], None
    for stage, steps, tasks in stages:
        depends = make_executor(config, stage, steps, tasks, depends)
        chain.append((stage, tasks, depends))
    try:
        depends.run()  # submits the stages it depends on first, each with afterok on the one before
    except subprocess.CalledProcessError as err:
        raise RuntimeError(f"sbatch failed ({err}); see its message above") from err
    jobs = {stage: str(executor.job_id) for stage, _, executor in chain if executor.job_id not in (None, -1)}
    record.write_text(json.dumps(jobs, indent=1), encoding="utf-8")
    if jobs:  # the folders this command locked stay the chain's until its jobs end
        from .locks import lease_to_slurm_jobs

        lease_to_slurm_jobs(list(jobs.values()))
    if progress and not jobs:
        print(f"the {build}'s stages have all finished: nothing to submit", flush=True)
    elif progress:
        lines = [f"submitted the {build} to Slurm, one array job per stage, each started once the one before it "
                 "succeeded (afterok):"]
        after = ""
        for stage, tasks, _ in chain:
            if stage in jobs:
                lines.append(f"  {stage:<11} job {jobs[stage]:>8}  {tasks} task(s){after}")
                after = f", after job {jobs[stage]}"
        lines += [f"  logs: {work / 'logs'}/<stage>/slurm_logs/ (Slurm's, one file per task) and .../logs/ "
                  "(datatrove's)",
                  f"  run the same command again once they finished (squeue -j {','.join(jobs.values())}): "
                  f"{afterwards}"]
        print("\n".join(lines), flush=True)
    return jobs
