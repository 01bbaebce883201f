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
``exec`` (no at-fork hook runs there), asks for it when it imports :mod:`wikiref_dataset.process.end_with_parent`, one of
the modules it preloads (``executors.WORKER_PRELOAD``). The chain main → manager / workers (or fork server →
workers) then ends from the top. Elsewhere than Linux the hook does nothing.

An interrupt must also reach the command. Python turns SIGINT into ``KeyboardInterrupt`` at whatever line the main
thread runs, and where that line belongs to code Python calls on its own (an at-fork hook such as ``logging``'s, a
weakref callback, a ``__del__``), it can only print "Exception ignored" and go on: the interrupt is lost, the build
carries on and may even publish its output and exit 0 (seen 2 times in 20 trials of SIGINT to a build forking its
workers). :func:`stop_on_interrupt` raises it again, every second, until the command is handling it, and ends the
process if it has not stopped within a grace period.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["Interrupts", "die_with_parent", "end_children_with_this_process", "end_helpers", "stop_on_interrupt"]

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


def end_helpers(timeout: float = 5.0) -> None:
    """End the child processes this process started through ``multiprocess`` or ``multiprocessing`` and that are
    still alive (an executor's manager, a pool's workers): SIGTERM, then SIGKILL to those still alive ``timeout``
    seconds later. For a command that stops (interrupted): both libraries join their children at
    exit, so a helper left serving would keep the command from ever exiting."""
    children = []
    for module in ("multiprocess", "multiprocessing"):
        library = sys.modules.get(module)
        if library is not None:
            children += library.active_children()  # the live ones (those that ended are joined by the call)
    for child in children:
        child.terminate()
    deadline = time.monotonic() + timeout
    for child in children:
        child.join(max(0.0, deadline - time.monotonic()))
        if child.is_alive():
            child.kill()
            child.join(1.0)


@dataclass
class Interrupts:
    """What :func:`stop_on_interrupt` saw: ``received`` is the time (``time.monotonic``) of the first SIGINT, or None.
    The command sets ``handled`` once it is stopping because of it (no need to raise it again)."""

    received: float | None = None
    handled: bool = False


@contextmanager
def stop_on_interrupt(name: str, *, every: float = 1.0, grace: float = 30.0) -> Iterator[Interrupts]:
    """Within this block, SIGINT raises ``KeyboardInterrupt`` in the main thread, as Python's own handler does, and a
    lost one is raised again: every ``every`` seconds after the first SIGINT, unless a ``KeyboardInterrupt`` is being
    handled at that moment (in an ``except`` or ``finally`` clause, a context manager's exit: the command is stopping),
    it is raised once more. If the process is still in the block ``grace`` seconds after the first SIGINT (its clean-up
    is stuck), it prints ``<name>: interrupted`` and ends at once with status 130 (the processes it forked end with it,
    :func:`end_children_with_this_process`; its folder locks are released by the kernel).

    Does nothing outside the main thread, or where SIGINT does not run Python's default handler (ignored, as under
    ``nohup``, or handled by the caller). Leaving the block restores both handlers and stops the timer. The yielded
    :class:`Interrupts` says whether a SIGINT came; the command sets its ``handled`` when it stops because of it.
    A command that finishes its work before a lost interrupt is raised again ends as finished: its output is whole."""
    seen = Interrupts()
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield seen
        return
    owner = os.getpid()

    def on_interrupt(signum: int, frame: object) -> None:
        if seen.received is None:
            seen.received = time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, every, every)
        raise KeyboardInterrupt

    def on_timer(signum: int, frame: object) -> None:
        if seen.received is None or os.getpid() != owner:  # not our timer (a forked child inherits the handler only)
            if callable(previous_timer):  # someone else's alarm (a test runner's timeout): theirs to handle
                previous_timer(signum, frame)
            return
        if time.monotonic() - seen.received >= grace:
            try:
                sys.stderr.write(f"{name}: interrupted (still stopping {grace:.0f} s after the interrupt: stopped "
                                 "at once)\n")
                sys.stderr.flush()
            finally:
                os._exit(130)
        if not seen.handled and not isinstance(sys.exc_info()[1], KeyboardInterrupt):  # lost: raise it again
            raise KeyboardInterrupt

    previous_timer = signal.signal(signal.SIGALRM, on_timer)
    signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield seen
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGALRM, previous_timer)
