"""datatrove's local and Ray executors with a switch for their console logs (:func:`.console.datatrove_console`).

datatrove sends a task's logs to its log file (everything) and to the console (INFO and up for local rank 0, errors
only for the others), and the executor's own messages (skipped tasks, the closing statistics) to a default console
sink. With ``console_logs`` false (set from :func:`.console.console_logs` when the executor is built, and pickled
with it to the tasks' processes), every task runs as a non-zero local rank, which datatrove documents as affecting
logging only, and the default console sink shows errors only; the log files are unchanged.

The Ray executor also places each task's workers in the task's placement group through Ray's scheduling strategy
(`ray.util.scheduling_strategies.PlacementGroupSchedulingStrategy`), not through the ``placement_group`` and
``placement_group_bundle_index`` options datatrove passes, which Ray deprecated (a DeprecationWarning for each task).
"""

from __future__ import annotations

import sys
from concurrent.futures import Future
from typing import Any

from datatrove.executor import LocalPipelineExecutor, RayPipelineExecutor
from datatrove.executor import ray as datatrove_ray
from datatrove.utils.logging import DATATROVE_COLORIZE_LOG_FILES, DATATROVE_COLORIZE_LOGS, logger, setup_default_logger

from .console import console_logs
from .disk import disk_full

__all__ = ["LocalExecutor", "RayExecutor"]


def _errors_only_console() -> None:
    """datatrove's console sink, quiet: its errors only, one line each (the traceback stays in the task's log file;
    a format function, unlike a format string, does not make loguru append the exception)."""
    logger.remove()
    logger.add(sys.stderr, colorize=DATATROVE_COLORIZE_LOGS, level="ERROR", backtrace=False, diagnose=False,
               format=lambda record: "datatrove: {message} (traceback in the task's log file)\n",
               filter=_not_disk_full)


def _not_disk_full(record: Any) -> bool:
    """A full disk is reported once, in one line, by the command (``command.dispatch``), not per task."""
    exception = record["exception"]
    return exception is None or exception.value is None or disk_full(exception.value) is None


def _quiet_task_logger(logging_dir: Any, rank: int, local_rank: int = 0, node_rank: int = -1) -> Any:
    """datatrove's ``add_task_logger`` (the task's log file gets everything, in datatrove's format) with the quiet
    console of :func:`_errors_only_console`: a task that fails prints one line, its traceback goes to the file."""
    logfile = logging_dir.open(f"logs/task_{rank:05d}.log", "w")
    prefix = f"[NODE {node_rank}] " if node_rank != -1 else ""
    _errors_only_console()
    # catch=False: a log file that cannot be written (a full disk) fails the task with that error, instead of loguru
    # printing a "Logging error" traceback on stderr for every line and the task going on.
    logger.add(logfile, colorize=DATATROVE_COLORIZE_LOG_FILES, level="DEBUG", catch=False,
               format=f"{prefix}{{time:YYYY-MM-DD HH:mm:ss.SSS}} | <level>{{level: <8}}</level> | "
                      "{name}:{function}:{line} - <level>{message}</level>")
    logger.info(f"Launching pipeline for {rank=}")
    return logfile


class _ConsoleSwitch:
    """Mixin over a datatrove executor: ``console_logs`` false shows only datatrove's errors on the console."""

    console_logs: bool = True

    def run(self) -> Any:
        if self.console_logs:
            return super().run()  # type: ignore[misc]
        _errors_only_console()
        try:
            return super().run()  # type: ignore[misc]
        finally:
            setup_default_logger()

    def _run_for_rank(self, rank: int, local_rank: int = 0, node_rank: int = -1) -> Any:
        if self.console_logs:
            return super()._run_for_rank(rank, local_rank, node_rank)  # type: ignore[misc]
        # Each datatrove executor module calls the add_task_logger it imported itself (the Ray executor's own copy,
        # not base's): patch the name in every module whose _run_for_rank this task runs.
        modules = {sys.modules[cls.__module__] for cls in type(self).__mro__
                   if "_run_for_rank" in vars(cls) and hasattr(sys.modules.get(cls.__module__), "add_task_logger")}
        originals = {module: module.add_task_logger for module in modules}
        for module in modules:
            module.add_task_logger = _quiet_task_logger
        try:
            return super()._run_for_rank(rank, local_rank, node_rank)  # type: ignore[misc]
        finally:
            for module, original in originals.items():
                module.add_task_logger = original
            _errors_only_console()  # the task's end put datatrove's default console sink back


class LocalExecutor(_ConsoleSwitch, LocalPipelineExecutor):
    """``LocalPipelineExecutor`` following :func:`.console.datatrove_console`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.console_logs = console_logs()


def submit_in_placement_group(manager: Any, executor_ref: Any, ranks: list[int], remote_options: dict) -> Future:
    """What datatrove's ``RayTaskManager.submit_task`` does, its workers placed with a
    `PlacementGroupSchedulingStrategy`: in a thread of ``manager``, a placement group of ``manager.nodes_per_task``
    bundles sized by ``remote_options``, one `RankWorker` actor in each bundle, and their tasks on ``ranks``, recorded
    as one task group. Returns the future of the tasks' object references; a submission that fails sets the future's
    exception (datatrove logs it and counts the task as not completed) rather than leaving it pending for ever."""
    import ray
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    tasks_future: Future = Future()

    def submit() -> None:
        try:
            bundle = datatrove_ray.convert_remote_options_to_bundle(remote_options)
            group = ray.util.placement_group([bundle] * manager.nodes_per_task)
            ray.get(group.ready())
            workers = [ray.remote(datatrove_ray.RankWorker).options(**{
                **remote_options,
                "scheduling_strategy": PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=index),
            }).remote() for index in range(manager.nodes_per_task)]
            node_ips = ray.get([worker.get_node_ip.remote() for worker in workers])
            tasks = [worker.run_for_rank.remote(executor_ref, ranks, node_ips, index)
                     for index, worker in enumerate(workers)]
            task_group = datatrove_ray.TaskGroup(tasks=tasks, workers=workers, placement_group=group, ranks=ranks)
            for task in tasks:
                manager.task_to_group[task] = task_group
                manager.timeout_manager.add_task(task)
        except Exception as error:  # handed to the waiting driver, which reports it
            tasks_future.set_exception(error)
            return
        tasks_future.set_result(tasks)

    manager.pg_futures.append(manager.executor.submit(submit))
    return tasks_future


_RayTaskManager = getattr(datatrove_ray, "RayTaskManager", None)
"""datatrove's task manager (datatrove 0.6 and later; earlier versions place no task in a placement group)."""

if _RayTaskManager is not None:
    class _StrategyTaskManager(_RayTaskManager):  # type: ignore[misc, valid-type]
        """datatrove's ``RayTaskManager`` placing workers with a scheduling strategy
        (:func:`submit_in_placement_group`)."""

        def submit_task(self, executor_ref: Any, ranks_to_submit: list[int], remote_options: dict) -> Future:
            return submit_in_placement_group(self, executor_ref, ranks_to_submit, remote_options)
else:
    _StrategyTaskManager = None


class RayExecutor(_ConsoleSwitch, RayPipelineExecutor):
    """``RayPipelineExecutor`` following :func:`.console.datatrove_console`, whose tasks' workers are placed in their
    placement groups by Ray's scheduling strategy (:func:`submit_in_placement_group`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.console_logs = console_logs()

    def run(self) -> Any:
        # datatrove's run() builds its task manager by the module's name for it: ours while this run lasts (a
        # dependency's run, nested inside, puts back what it found, which is ours too).
        if _StrategyTaskManager is None:
            return super().run()
        found = datatrove_ray.RayTaskManager
        datatrove_ray.RayTaskManager = _StrategyTaskManager
        try:
            return super().run()
        finally:
            datatrove_ray.RayTaskManager = found
