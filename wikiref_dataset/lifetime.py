"""Nothing outlives a run: the processes a command forks end when it ends, however it ends.

A build's helper processes are not its children in the way a shell job is: datatrove's local executor starts a
``multiprocess.Manager`` server (a fork of the command's process, with everything it imported) and, with
``--workers`` above 1, a pool whose workers are forked from the command's process, or come from a fork server where
forking is unsafe (``executors.worker_start_method``). When the command is killed from outside (a job scheduler's
``kill``, SIGTERM, SIGHUP when its terminal closes, SIGKILL) nothing tells them: the manager then serves nobody for
ever, and a worker finishes its task and waits for the next.

Linux has the signal for this: ``prctl(PR_SET_PDEATHSIG, SIGTERM)`` makes the kernel send SIGTERM to a process
when the thread that forked it ends. :func:`end_children_with_this_process` registers an at-fork hook, so that every
process forked from then on (and every process they fork) asks for it; the fork server, which is started by
``exec`` (no at-fork hook runs there), asks for it when it imports :mod:`wikiref_dataset._end_with_parent`, one of
the modules it preloads (``executors.WORKER_PRELOAD``). The chain main → manager / workers (or fork server →
workers) then ends from the top. Elsewhere than Linux the hook does nothing.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["die_with_parent", "end_children_with_this_process"]

_state: dict[str, int | bool] = {"installed": False, "parent": 0}
PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGTERM, parent: int | None = None) -> bool:
    """Ask the kernel for ``sig`` when this process's parent (the thread that forked it) ends; if the parent
    (``parent``, the pid it had) is already gone, send it now. Returns whether the platform supports it (Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig)) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if parent is not None and os.getppid() != parent:  # the parent died between the fork and the prctl
        os.kill(os.getpid(), sig)
    return True


def _before_fork() -> None:
    _state["parent"] = os.getpid()


def _after_fork_in_child() -> None:
    die_with_parent(parent=int(_state["parent"]) or None)


def end_children_with_this_process() -> None:
    """From now on, every process this one forks (and each of theirs) receives SIGTERM when its parent ends
    (idempotent; see the module docstring). Call it once, early, in a command's main process."""
    if _state["installed"] or not sys.platform.startswith("linux"):
        return
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
    _state["installed"] = True
