"""The console switch for datatrove's logs: within :func:`datatrove_console` the executors built print datatrove's logs
on the console, or only its errors (what the ``wikiref`` commands ask unless ``-v`` is given: their own summary says
what a run did); :func:`console_logs` is what they read. Standard library only: the command line sets it, the
executors read it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

_console = {"logs": True}


@contextmanager
def datatrove_console(logs: bool = False) -> Iterator[None]:
    """Within this block, the executors :func:`make_executor` and :func:`local_executor` build print datatrove's
    logs on the console (``logs``), or only its errors; each task's log file (``<logging dir>/logs/task_*.log``)
    keeps everything either way. The setting travels with the executor to its tasks (other processes, Ray workers)."""
    previous = _console["logs"]
    _console["logs"] = logs
    try:
        yield
    finally:
        _console["logs"] = previous


def console_logs() -> bool:
    """Whether executors built now print datatrove's logs on the console (see :func:`datatrove_console`)."""
    return _console["logs"]
