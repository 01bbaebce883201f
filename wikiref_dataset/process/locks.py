"""One writer per folder: an exclusive lock that every command writing a folder holds for its whole run.

Two runs into one output folder at once (two terminals, a resubmitted job, a script run twice) would interleave
their staging and work files and could publish one run's data under the other's ``build.json``. Every writer takes
:class:`FolderLock` on its output folder (and its work folder) before it reads or writes anything there, and keeps it
until it ends; a second run is refused with one line naming the holder (command, pid, host, since when), or waits
with ``wait=True`` (``--wait``).

The lock is ``fcntl.flock`` on a file beside the folder, ``.<name>.lock`` in its parent (never inside: a build
replaces the whole folder when it publishes), deleted when the run lets go. The kernel drops a ``flock`` when its
process dies, however it dies, so a lock left by a killed run never blocks the next one; the holder's details, left
in the lock file, are then reported as taken over. ``flock`` is per open file description: two locks on one folder
in one process exclude each other too. A run that locked a file another run has just deleted sees that the path no
longer names it, and locks the new file instead. A process forked while a lock is held lets go of its copy at once
(a ``flock`` is shared by every descriptor of the open file, inherited ones included), so that the lock ends with the
run that took it, not with its last child.

A Slurm chain outlives the command that submits it: that command leaves a *lease* beside each folder it holds,
``.<name>.slurm.json``, naming the chain's jobs (:func:`lease_to_slurm_jobs`). While any of them, or a job waiting
on them, is queued or running (``squeue``), every other run is refused as if the submitter still held the lock
(``--wait`` waits for the jobs); only the same build submitted to Slurm again passes (it then submits nothing while
the chain runs). A lease whose jobs have all ended is deleted by the next run.

Hand-written on ``fcntl`` rather than ``filelock``: the holder's details must be readable by the run that is
refused, and taking a lock over from a dead process must be told apart from taking a free one; ``filelock`` exposes
neither.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import json
import logging
import os
import socket
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["FolderLock", "FolderLocked", "SlurmChainRunning", "folder_locks", "lease_path", "lease_to_slurm_jobs",
           "lock_path"]


class FolderLocked(RuntimeError):
    """Another run holds the lock of a folder; the message names the folder and the holder."""

    def __init__(self, folder: Path, holder: dict[str, Any] | None, message: str | None = None) -> None:
        self.folder, self.holder = folder, holder or {}
        super().__init__(message or f"{folder} is being written by another run ({describe_holder(self.holder)}); "
                                    "wait for it to end, or pass --wait to wait for it")


def lock_path(folder: str | os.PathLike) -> Path:
    """The lock file of ``folder``: ``.<name>.lock`` beside it (its parent is created when missing)."""
    folder = Path(os.path.abspath(folder))
    return folder.parent / f".{folder.name}.lock"


class SlurmChainRunning(FolderLocked):
    """A Slurm chain submitted by an earlier run is still writing a folder; the message names its jobs."""

    def __init__(self, folder: Path, holder: dict[str, Any] | None, jobs: Sequence[str]) -> None:
        self.jobs = list(jobs)
        super().__init__(folder, holder, f"{folder} is being written by Slurm jobs {', '.join(self.jobs)} "
                                         f"({describe_holder(holder or {})}); run again once they ended (squeue -j "
                                         f"{','.join(self.jobs)}), cancel them (scancel {' '.join(self.jobs)}), or "
                                         "pass --wait to wait for them")


def lease_path(folder: str | os.PathLike) -> Path:
    """The Slurm lease of ``folder``: ``.<name>.slurm.json`` beside it."""
    folder = Path(os.path.abspath(folder))
    return folder.parent / f".{folder.name}.slurm.json"


def lease_to_slurm_jobs(jobs: Sequence[str]) -> list[Path]:
    """Hand the folders this process holds locks on over to the Slurm jobs `jobs` (a chain just submitted): a
    lease beside each names them and this run, so that other runs stay out until the jobs end. Returns the leases."""
    written = []
    for lock in sorted(_held, key=lambda lock: str(lock.folder)):
        path = lease_path(lock.folder)
        path.write_text(json.dumps({"jobs": [str(job) for job in jobs], "holder": {
            "command": lock.command, "pid": os.getpid(), "host": socket.gethostname(),
            "since": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}}) + "\n", encoding="utf-8")
        written.append(path)
    return written


def _live_jobs(jobs: Sequence[str]) -> list[str]:
    """Those of `jobs`, and the jobs waiting on them, that Slurm still has queued or running (jobs that can never
    start, ``DependencyNeverSatisfied``, do not count). Without a reachable Slurm, none (with a warning)."""
    from .slurm import chain_jobs, live_jobs

    try:
        return live_jobs(chain_jobs(jobs))
    except ValueError as error:
        logger.warning("cannot tell whether the Slurm jobs %s still run (%s): going on", ",".join(jobs), error)
        return []


def describe_holder(holder: dict[str, Any]) -> str:
    """``command, pid N on HOST since TIME`` from a lock file's details (what is known of them)."""
    if not holder:
        return "holder unknown"
    parts = []
    if holder.get("command"):
        parts.append(repr(holder["command"]))
    where = f"pid {holder.get('pid', '?')}" + (f" on {holder['host']}" if holder.get("host") else "")
    parts.append(where)
    if holder.get("since"):
        parts.append(f"since {holder['since']}")
    return ", ".join(parts)


def _read_holder(handle: Any) -> dict[str, Any]:
    try:
        handle.seek(0)
        text = handle.read()
        return json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return {}


_HOLDER_WRITE_S = 1.0
"""How long a run refused by a lock waits for the holder's details: a holder writes them right after taking the
lock, so a run started at the same moment can find the lock taken and its file still empty (or half written)."""


def _read_live_holder(handle: Any) -> dict[str, Any]:
    """The details of the run that holds the lock of ``handle``, once it has written them (at most
    :data:`_HOLDER_WRITE_S`; ``{}`` after that)."""
    deadline = time.monotonic() + _HOLDER_WRITE_S
    while not (holder := _read_holder(handle)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return holder


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def current_command() -> str:
    """This process's command line, shortened for a message."""
    command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv and sys.argv[0] else "python"
    return command if len(command) <= 200 else command[:197] + "..."


_held: set[FolderLock] = set()
"""The locks this process holds: a forked child lets go of its copies (:func:`_drop_inherited_locks`)."""


def _drop_inherited_locks() -> None:
    """In a forked child: point the inherited lock descriptors at /dev/null (``dup2`` drops the child's reference to
    the lock file without unlocking it for the parent) and forget the locks. Otherwise a child that outlives its
    parent by a moment (the executor's manager, a worker on its way out) would keep the folder locked after the run
    that took the lock has ended."""
    for lock in list(_held):
        handle, lock._handle = lock._handle, None
        if handle is None:
            continue
        try:
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, handle.fileno())
            os.close(devnull)
        except OSError:
            pass
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_inherited_locks)


class FolderLock:
    """An exclusive lock on one folder for the life of a run (a context manager; see the module docstring).

    Args:
        folder: the folder to be written (it need not exist yet).
        command: what the holder is doing, for the message a refused run prints (default: this command line).
        wait: wait for the holder to end instead of raising :class:`FolderLocked`.
    """

    def __init__(self, folder: str | os.PathLike, command: str | None = None, wait: bool = False,
                 slurm_chain: bool = False) -> None:
        self.folder = Path(os.path.abspath(folder))
        self.path = lock_path(self.folder)
        self.command = command or current_command()
        self.wait = wait
        self.slurm_chain = slurm_chain
        self._handle: Any = None

    def acquire(self) -> FolderLock:
        if self._handle is not None:
            raise RuntimeError(f"{self.folder}: lock already held by this object")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            handle = self._lock_file()
            try:  # the file a run deletes when it lets go may be the one just locked: then lock the new one
                if os.fstat(handle.fileno()).st_ino == os.stat(self.path).st_ino:
                    break
            except FileNotFoundError:
                pass
            handle.close()
        try:
            previous = _read_holder(handle)
            if previous.get("pid") and previous.get("host") == socket.gethostname() and previous["pid"] != os.getpid():
                if not _alive(int(previous["pid"])):
                    logger.warning("%s: took over the lock left by a run that died (%s)", self.folder,
                                   describe_holder(previous))
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps({
                "command": self.command, "pid": os.getpid(), "host": socket.gethostname(),
                "since": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                "folder": str(self.folder)}) + "\n")
            handle.flush()
        except BaseException:
            handle.close()
            raise
        self._handle = handle
        _held.add(self)
        try:
            self._check_lease()
        except BaseException:
            self.release()
            raise
        return self

    def _check_lease(self) -> None:
        """Refuse (or with `wait`, wait) while the Slurm jobs of the folder's lease run; delete a lease whose jobs
        ended. A run that submits the same build to Slurm (`slurm_chain`) passes: it submits nothing meanwhile."""
        path = lease_path(self.folder)
        while path.is_file():
            try:
                lease = json.loads(path.read_text(encoding="utf-8"))
                jobs = [str(job) for job in lease.get("jobs", [])]
            except (OSError, ValueError, AttributeError):
                lease, jobs = {}, []
            live = _live_jobs(jobs) if jobs else []
            if not live:
                path.unlink(missing_ok=True)
                return
            if self.slurm_chain:
                return
            if not self.wait:
                raise SlurmChainRunning(self.folder, lease.get("holder"), live)
            logger.warning("%s is being written by Slurm jobs %s; waiting for them to end", self.folder,
                           ",".join(live))
            time.sleep(30)

    def _lock_file(self) -> Any:
        """The lock file, open and locked (waiting for the holder with ``wait``, else raising
        :class:`FolderLocked`)."""
        import fcntl

        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held open for the life of the lock
        try:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                if error.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                holder = _read_live_holder(handle)
                if not self.wait:
                    raise FolderLocked(self.folder, holder) from None
                logger.warning("%s is being written by another run (%s); waiting for it to end", self.folder,
                               describe_holder(holder))
                started = time.monotonic()
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                logger.info("%s: the other run ended after %.0f s; going on", self.folder, time.monotonic() - started)
        except BaseException:
            handle.close()
            raise
        return handle

    def release(self) -> None:
        """Delete the lock file (a clean end leaves nothing beside the folder) and let go of the lock."""
        if self._handle is None:
            return
        import fcntl

        handle, self._handle = self._handle, None
        _held.discard(self)
        try:
            self.path.unlink(missing_ok=True)  # still locked: a run waiting on this file then locks a new one
        except OSError:
            pass
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            handle.close()

    @property
    def held(self) -> bool:
        return self._handle is not None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def folder_locks(folders: Sequence[str | os.PathLike | None], command: str | None = None,
                 wait: bool = False, slurm_chain: bool = False) -> Iterator[list[FolderLock]]:
    """Locks on several folders (``None`` entries skipped, one folder once), taken in a fixed order (sorted paths) so
    that two runs locking the same folders cannot deadlock; all released at the end."""
    unique = sorted({os.path.abspath(folder) for folder in folders if folder})
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(FolderLock(folder, command=command, wait=wait, slurm_chain=slurm_chain))
               for folder in unique]
