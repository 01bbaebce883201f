"""Reading JSON-lines files (plain or gzipped), the format every stage of the builds writes and reads.

One loop serves every reader of datatrove shards and user files; what to do with a bad line is the caller's policy
(raise, skip and count, collect), passed as ``on_error``. datatrove's ``JsonlReader`` is not used for this because
the stages read their own shards back outside a pipeline (joins, merges, the final dataset step) and need the line
number of a bad record in the error.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["JsonLinesError", "iter_json_objects", "open_text"]

GZIP_MAGIC = b"\x1f\x8b"


class JsonLinesError(ValueError):
    """A line of a JSON-lines file that is not a JSON object; the message starts with ``path:line:``."""


def open_text(path: str | Path, errors: str = "strict") -> IO[str]:
    """Open ``path`` for reading text (UTF-8), decompressing it when it is gzip (by its magic bytes, whatever its
    name)."""
    with open(path, "rb") as handle:
        compressed = handle.read(2) == GZIP_MAGIC
    opener: Any = gzip.open if compressed else open
    return opener(path, "rt", encoding="utf-8", errors=errors)


def iter_json_objects(
    path: str | Path, on_error: Callable[[str, str], None] | None = None, errors: str = "strict"
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-empty line of a JSON-lines file.

    A line that is not valid JSON, or not a JSON object, is passed to ``on_error(location, reason)`` (location
    ``"path:line"``) and skipped; without ``on_error`` it raises :class:`JsonLinesError`. ``errors`` is the UTF-8
    decoding policy (``"replace"`` for files written by others). I/O errors (a truncated gzip) propagate.
    """
    with open_text(path, errors=errors) as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                reason = f"not valid JSON ({error})"
            else:
                if isinstance(record, dict):
                    yield line_number, record
                    continue
                reason = f"expected a JSON object, got {type(record).__name__}"
            if on_error is None:
                raise JsonLinesError(f"{path}:{line_number}: {reason}")
            on_error(f"{path}:{line_number}", reason)
