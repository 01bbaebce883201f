"""A full disk, told in one line: which `OSError` means it (:func:`disk_full`), the free space of a folder, and the message naming the folder's disk, the space when the run started and now, and the file being written. Standard library only: the command line and the executors' tasks both use it."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from ..utils.formatting import human_bytes

DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


def disk_full(error: BaseException) -> OSError | None:
    """The "no space left" / "quota exceeded" `OSError` behind ``error`` (itself, or its cause or context), if any."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in DISK_FULL_ERRNOS:
            return current
        current = current.__cause__ or current.__context__
    return None


def _existing(path: str | os.PathLike) -> Path:
    """``path`` or its nearest existing ancestor."""
    place = Path(os.path.abspath(path))
    while not place.exists() and place != place.parent:
        place = place.parent
    return place


def free_space(path: str | os.PathLike) -> int | None:
    """Free bytes on the file system that holds (or will hold) ``path``; ``None`` when it cannot be read."""
    try:
        return shutil.disk_usage(_existing(path)).free
    except OSError:
        return None


def describe_disk_full(error: OSError, free_at_start: dict[str, int | None]) -> str:
    """One line for a run stopped by a full disk: which of the run's folders is on it (the one holding the file
    being written, else the one with the least space left), the free space when the run started and now, and the
    file being written when the error names it. ``free_at_start``: ``{folder: free bytes}`` taken before the run."""
    filename = os.fsdecode(error.filename) if error.filename else None
    free_now = {folder: free_space(folder) for folder in free_at_start}
    full: list[str] = []
    if filename:
        target = Path(os.path.abspath(filename))
        full = [next((item for item in free_now if target.is_relative_to(os.path.abspath(item))), str(target.parent))]
    elif free_now:  # the folders on the fullest disk (a build's output and work folders often share one)
        least = min(value or 0 for value in free_now.values())
        full = [item for item, value in free_now.items() if (value or 0) == least]
    what = f" while writing {filename}" if filename else ""
    if not full:
        return f"no space left on the device{what} ({error.strerror or error})"
    first = full[0]
    start_text = f"{human_bytes(free_at_start[first])} free when the run started, " if first in free_at_start else ""
    now = free_now[first] if first in free_now else free_space(first)
    device = "quota exceeded" if error.errno == errno.EDQUOT else "no space left"
    return (f"{device} on the disk of {' and '.join(full)} ({start_text}{human_bytes(now)} now){what}; a previous "
            "complete output is left as it was: free some space or pass a folder on another disk, and rerun (the "
            "finished work is reused)")
