"""What the app allows when it is served to others: ``--host`` beyond loopback, and always in a Hub Space.

On a user's own machine (127.0.0.1) the Model and Dataset boxes load any folder or Hub id, as ``wikiref app`` always
did. Served to others, that freedom lets a visitor load any folder of the server that holds Parquet files (a
converted DUC year that was never meant to be shown), make the server walk its whole file system (``/``, ``../..``)
or download any Hub repository. A public app therefore:

* loads only what it was started with plus the ``--allow`` list (:class:`AllowedSources`). The backend's load
  functions check the box's value before anything else, so the refusal comes before anything is read, listed or
  downloaded: a folder is compared by its absolute path with ``..`` removed (no file system access), a Hub id
  exactly, and what loads is the entry recorded at start (its symlinks resolved then), never the visitor's path;
* reads uploaded files only from Gradio's upload folder, at most :data:`MAX_UPLOADS` of them and
  :data:`MAX_UPLOAD_BYTES` each (:func:`check_uploads`);
* stops a request after :data:`REQUEST_SECONDS` of work (:func:`time_limit`; the model checks it before each batch
  it scores);
* answers 413 to an HTTP request over :data:`MAX_REQUEST_BYTES` or an upload of more than :data:`MAX_UPLOADS` files
  before Gradio reads it (:class:`RequestLimits`), and keeps at most :data:`QUEUE_SIZE` requests waiting (Gradio's
  queue answers the next ones "Queue is full").

:class:`PublicSettings` gathers them for :func:`.ui.serve`. Nothing here imports Gradio.
"""

from __future__ import annotations

import ipaddress
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import AppError

REQUEST_SECONDS = 120.0
"""The most work one request may do: twice what the largest input the app scores takes (300,000 characters, under a
minute on two CPU cores), so no honest request meets it and a stuck one frees its worker."""
QUEUE_SIZE = 16
"""The most requests that wait in Gradio's queue (each event runs one at a time); the next are answered "Queue is
full" at once. A few-document summary takes seconds, so the last in line waits about a minute, not the hour a crowd
of the largest inputs would hold the server."""
MAX_UPLOADS = 100
"""The most files one upload or one summary takes: as many as the documents the app scores at once
(``backend.MAX_DOCUMENTS``)."""
MAX_UPLOAD_BYTES = 1_200_000
"""The largest file Gradio accepts: the most UTF-8 bytes (4 a character) of the text the app scores at once
(``backend.MAX_CHARACTERS``, 300,000 characters). It is also what all the files of one summary may hold together."""
MAX_REQUEST_BYTES = 4_000_000
"""The largest HTTP request body: the largest paste the app scores even when every character is escaped in JSON
(``\\ud83d\\ude00``, 12 bytes), or an upload at :data:`MAX_UPLOAD_BYTES` with room for its multipart framing."""
CACHE_SECONDS = 3600
"""Uploads and the files the app hands out are deleted from Gradio's cache after an hour (checked hourly)."""
HUB_ID = re.compile(r"[\w.-]+(/[\w.-]+)?")
"""A Hub id as the backend recognises one (``org/name``, or a bare model name)."""
LOOPBACK_NAMES = ("localhost",)


def is_public_host(host: str) -> bool:
    """Whether serving on ``host`` serves other machines: anything but ``localhost`` and the loopback addresses
    (``127.0.0.1``, ``::1``); ``0.0.0.0`` and a machine's own address or name are public."""
    host = host.strip().strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost: it may resolve to an outside interface
        return True


def _shown(value: str, size: int = 120) -> str:
    """``value`` as one short line for a message (a visitor's input may hold newlines or be very long)."""
    text = " ".join(str(value).split()) or "(empty)"
    return text if len(text) <= size else text[: size - 1] + "…"


# ---- the sources the boxes accept -----------------------------------------------------------------------------------


class AllowedSources:
    """The models and the datasets a public app loads: what the server was started with and its ``--allow`` list.

    An entry that is a folder at start is kept as its real path (symlinks resolved once, by the operator's choice); any
    other entry must look like a Hub id and is kept as written. :meth:`admit` compares a visitor's value with them
    without touching the file system: the exact text for a Hub id, the absolute path with ``..`` removed for a folder.

    Args:
        models (`Iterable[str]`): the model folders and Hub ids the Model box accepts.
        datasets (`Iterable[str]`): the dataset folders and Hub ids the Dataset box accepts.

    Raises:
        AppError: an entry is neither an existing folder nor a Hub id.
    """

    def __init__(self, models: Iterable[str] = (), datasets: Iterable[str] = ()):
        self._by_kind = {"model": _index(models), "dataset": _index(datasets)}

    @classmethod
    def for_server(cls, model: str | None, dataset: str | None, allow: Sequence[str] = ()) -> AllowedSources:
        """What ``wikiref app --model MODEL --dataset DATASET --allow ...`` serves: each box takes its own start value
        and every ``--allow`` entry (a model entry in the Dataset box is then refused as not a dataset, after the
        check)."""
        return cls([item for item in (model, *allow) if item], [item for item in (dataset, *allow) if item])

    def entries(self, kind: str) -> list[str]:
        """The ``kind`` (``model`` or ``dataset``) entries, as they load: folders by real path, Hub ids as written."""
        return sorted(set(self._by_kind[kind].values()))

    def folders(self, kind: str) -> list[Path]:
        """The ``kind`` entries that are folders."""
        return [Path(entry) for entry in self.entries(kind) if os.path.isabs(entry)]

    def admit(self, value: str, kind: str) -> str:
        """The entry ``value`` names in the ``kind`` box (``model`` or ``dataset``): the Hub id, or the folder's real
        path recorded at start, which is what the caller loads.

        Raises:
            AppError: ``value`` names none of them (``/``, ``/etc``, ``../..``, another folder, another Hub id); one
                line naming the value and what the box takes.
        """
        index = self._by_kind[kind]
        text = str(value).strip()
        if text and index.get(text) == text and not os.path.isabs(text):  # an allowed Hub id, as written
            return text
        if text and "\0" not in text and os.path.abspath(text) in index:  # lexical: '..' removed, nothing read
            return index[os.path.abspath(text)]
        offered = ", ".join(self.entries(kind)) or "nothing: the server was started without one"
        problem = f"{_shown(text)}: not offered by this app" if text else f"no {kind} given"
        raise AppError(f"{problem} (served to others, its {kind} box loads only {offered}; `wikiref app --allow` "
                       "adds folders or Hub ids)")


def _index(entries: Iterable[str]) -> dict[str, str]:
    """``{what a visitor may type: the entry that loads}`` for ``entries``."""
    index: dict[str, str] = {}
    for entry in entries:
        entry = str(entry).strip()
        if os.path.isdir(entry):
            real = os.path.realpath(entry)
            index.update({os.path.abspath(entry): real, real: real})
        elif HUB_ID.fullmatch(entry) and entry not in (".", ".."):
            index[entry] = entry
        else:
            raise AppError(f"{_shown(entry)}: no such folder, and not a Hub id (org/name)")
    return index


# ---- uploads --------------------------------------------------------------------------------------------------------


def check_uploads(files: Sequence[str | Path], upload_folder: str | Path, max_files: int = MAX_UPLOADS,
                  max_bytes: int = MAX_UPLOAD_BYTES) -> list[Path]:
    """The uploaded ``files`` as real paths, each inside ``upload_folder`` (Gradio's), at most ``max_files`` of them
    holding at most ``max_bytes`` together; checked before any is read, so a path a visitor names (``/etc/passwd``,
    a symlink out of the folder) is never opened.

    Raises:
        AppError: too many files, one outside the upload folder, or too many bytes.
    """
    if len(files) > max_files:
        raise AppError(f"{len(files)} files: this app takes at most {max_files} uploads at once")
    folders = {Path(os.path.abspath(upload_folder)), Path(os.path.realpath(upload_folder))}
    real = []
    for name in files:
        # first by the path as given ('..' removed, nothing read), then by its real path (no symlink out)
        inside = any(Path(os.path.abspath(name)).is_relative_to(folder) for folder in folders)
        path = Path(os.path.realpath(name)) if inside and "\0" not in str(name) else None
        if path is None or not any(path.is_relative_to(folder) for folder in folders):
            raise AppError(f"{_shown(Path(str(name)).name)}: not a file uploaded to this app; upload .txt files with "
                           "the file box")
        real.append(path)
    size = sum(path.stat().st_size for path in real if path.is_file())
    if size > max_bytes:
        raise AppError(f"the uploads hold {size:,} bytes: this app reads at most {max_bytes:,} at once")
    return real


# ---- the time limit of a request ------------------------------------------------------------------------------------


class RequestTooLong(AppError):
    """A request went past its time limit (:func:`time_limit`)."""


_limit = threading.local()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Within the block, :func:`check_time` (which the model calls before each batch it scores) raises
    :class:`RequestTooLong` once ``seconds`` have passed; ``None``: no limit. Per thread: each request Gradio runs
    has its own."""
    previous = getattr(_limit, "deadline", None)
    _limit.deadline = None if seconds is None else (time.monotonic() + seconds, seconds)
    try:
        yield
    finally:
        _limit.deadline = previous


def check_time(*_: Any) -> None:
    """Raise :class:`RequestTooLong` when this thread's request is past its :func:`time_limit`. Takes and ignores
    any arguments, so that it serves as a torch forward pre-hook (``model.register_forward_pre_hook(check_time)``).
    """
    deadline = getattr(_limit, "deadline", None)
    if deadline is not None and time.monotonic() >= deadline[0]:
        raise RequestTooLong(f"this request went past {deadline[1]:g} s, the most one request may work on this app "
                             "(served to others): give less text, or run `wikiref summarize` on your machine")


# ---- HTTP requests --------------------------------------------------------------------------------------------------


class RequestLimits:
    """ASGI middleware of a public app: a request body over ``max_bytes`` (by its ``Content-Length``, or counted as it
    arrives) or a multipart upload of more than ``max_files`` parts is answered 413, in one line, before the app reads
    any of it. A body within the limits (at most ``max_bytes``, held in memory) is handed on unchanged.

    Args:
        app: the ASGI app (Gradio's).
        max_bytes (`int`, *optional*, defaults to :data:`MAX_REQUEST_BYTES`): the largest body.
        max_files (`int`, *optional*, defaults to :data:`MAX_UPLOADS`): the most parts of a ``multipart/form-data``
            body (Gradio's upload form holds only files).
    """

    def __init__(self, app: Callable[..., Awaitable[None]], max_bytes: int = MAX_REQUEST_BYTES,
                 max_files: int = MAX_UPLOADS):
        self.app, self.max_bytes, self.max_files = app, max_bytes, max_files

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
                       send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await _refuse(send, f"the request holds {int(declared):,} bytes; this app takes at most {self.max_bytes:,}")
            return
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                await _refuse(send, f"the request holds over {self.max_bytes:,} bytes; this app takes at most that")
                return
        parts = multipart_parts(headers.get(b"content-type", b""), bytes(body))
        if parts > self.max_files:
            await _refuse(send, f"the upload holds {parts} files; this app takes at most {self.max_files} at once")
            return
        await self.app(scope, _replay(bytes(body), receive), send)


def multipart_parts(content_type: bytes, body: bytes) -> int:
    """How many parts a ``multipart/form-data`` ``body`` holds (0 for any other content type)."""
    found = re.match(rb'\s*multipart/form-data\s*;.*?boundary="?([^";,\s]+)"?', content_type, re.I)
    if not found:
        return 0
    return max(0, body.count(b"--" + found.group(1)) - 1)  # every part opens with the delimiter; the last closes


def _replay(body: bytes, receive: Callable[[], Awaitable[dict[str, Any]]]) -> Callable[[], Awaitable[dict[str, Any]]]:
    """A ``receive`` that gives ``body`` once, then what the client sends next (its disconnect)."""
    given = False

    async def replayed() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _refuse(send: Callable[[dict[str, Any]], Awaitable[None]], message: str) -> None:
    data = (message + "\n").encode("utf-8")
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(data)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": data})


# ---- all together ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicSettings:
    """What an app served to others allows: the sources its boxes load and its limits (the defaults are the
    documented ones, docs/app.md).

    Args:
        sources (`AllowedSources`): what the Model and Dataset boxes load.
        upload_folder (`str`): Gradio's upload folder, the only place uploaded files are read from.
        request_seconds (`float`, *optional*, defaults to :data:`REQUEST_SECONDS`): the time limit of a request.
        queue_size (`int`, *optional*, defaults to :data:`QUEUE_SIZE`): the most requests waiting in the queue.
        max_uploads (`int`, *optional*, defaults to :data:`MAX_UPLOADS`): the most files of an upload or a summary.
        max_upload_bytes (`int`, *optional*, defaults to :data:`MAX_UPLOAD_BYTES`): the largest file, and the most
            the files of one summary hold together.
        max_request_bytes (`int`, *optional*, defaults to :data:`MAX_REQUEST_BYTES`): the largest request body.
        cache_seconds (`int`, *optional*, defaults to :data:`CACHE_SECONDS`): how long uploads and handed-out files
            stay in Gradio's cache.
    """

    sources: AllowedSources
    upload_folder: str
    request_seconds: float = REQUEST_SECONDS
    queue_size: int = QUEUE_SIZE
    max_uploads: int = MAX_UPLOADS
    max_upload_bytes: int = MAX_UPLOAD_BYTES
    max_request_bytes: int = MAX_REQUEST_BYTES
    cache_seconds: int = CACHE_SECONDS

    def __post_init__(self) -> None:
        for name in ("request_seconds", "queue_size", "max_uploads", "max_upload_bytes", "max_request_bytes",
                     "cache_seconds"):
            if not getattr(self, name) > 0:
                raise ValueError(f"PublicSettings.{name} must be positive, got {getattr(self, name)!r}")

    def served_folders(self) -> list[str]:
        """The folders Gradio may serve files from (besides its own cache): each allowed dataset's ``figures``,
        which the Explore tab shows; nothing else of a dataset folder."""
        return [str(folder / "figures") for folder in self.sources.folders("dataset")]


__all__ = ["AllowedSources", "PublicSettings", "RequestLimits", "RequestTooLong", "check_time", "check_uploads",
           "is_public_host", "multipart_parts", "time_limit", "REQUEST_SECONDS", "QUEUE_SIZE", "MAX_UPLOADS",
           "MAX_UPLOAD_BYTES", "MAX_REQUEST_BYTES", "CACHE_SECONDS"]
