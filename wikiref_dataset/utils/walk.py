"""Walking the folders users give as input (NIST trees, dump and WARC folders, the AQuaMuSe release tree).

Such folders are often symbolic links into place, and ``Path.rglob`` (before Python 3.13) does not enter linked
folders, so one walk serves every reader: ``os.walk`` with ``followlinks=True``, sorted, entering each real folder
once (a link back up the tree would loop; a folder linked twice would be read twice).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["walk", "walk_files"]


def walk(root: str | os.PathLike) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(root)`` in sorted order, following symbolic links, each real folder entered once."""
    seen = {os.path.realpath(root)}

    def first_visit(path: str) -> bool:
        real = os.path.realpath(path)
        if real in seen:
            return False
        seen.add(real)
        return True

    for current, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = sorted(name for name in dirnames if first_visit(os.path.join(current, name)))
        filenames.sort()
        yield current, dirnames, filenames


def walk_files(root: str | os.PathLike, hidden: bool = True) -> Iterator[Path]:
    """Every file under ``root`` (links followed, see :func:`walk`), folder by folder in sorted order; without
    ``hidden``, names starting with ``.`` (files and folders) are skipped."""
    for current, dirnames, filenames in walk(root):
        if not hidden:
            dirnames[:] = [name for name in dirnames if not name.startswith(".")]
        for name in filenames:
            path = Path(current) / name
            if (hidden or not name.startswith(".")) and path.is_file():
                yield path


def find_files(paths: Iterable[str | os.PathLike], suffixes: tuple[str, ...], kind: str) -> list[Path]:
    """The files named by `paths`: files as given, folders searched recursively for names ending with one of
    `suffixes` (case-insensitive), sorted per folder.

    Raises:
        FileNotFoundError: a path does not exist, or a folder holds no such file (`kind` names them).
    """
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = [p for p in walk_files(path) if p.name.lower().endswith(suffixes)]  # linked folders too
            if not found:
                raise FileNotFoundError(f"{path}: no {kind} in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return files
