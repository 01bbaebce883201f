"""Stream the XML out of a ``.7z`` history dump in constant memory.

Wikimedia publishes ``pages-meta-history`` dumps as ``.7z`` (and ``.bz2``); each archive holds one XML file of up to
tens of GB. Two maintained readers stream it without writing it to disk:

* the ``7z`` command (p7zip / 7-Zip: ``7z``, ``7za`` or ``7zr``), run as ``7z e -so FILE`` and read from its
  standard output — native speed, preferred when installed;
* ``py7zr`` (pure Python, on PyPI): its extraction writes each decompressed block to a *writer* we provide
  (``WriterFactory``); the writer hands blocks through a bounded queue to the reading thread, so memory stays at
  a few blocks whatever the archive's size. py7zr decompresses up to ``min(128 MB, available memory / 4)`` per
  block (``py7zr.properties.get_memory_limit``), so this reader holds at most about three such blocks: bounded,
  but larger than the command's pipe buffer.

:func:`open_7z` returns a binary, read-only, non-seekable stream of the archive's single file. An archive with
several files, a damaged archive or a failing command raise ``OSError`` naming the file, after the data decompressed
before the damage (the dump reader turns it into :class:`~wikiref_dataset.wiki.dump.DamagedDumpError` and keeps the
pages read before it; a truncated ``.7z`` has lost its headers, which sit at the end, so nothing of it is readable);
with neither reader installed :class:`SevenZipUnavailable` says what to install.
"""

from __future__ import annotations

import io
import queue
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

__all__ = ["SevenZipUnavailable", "find_7z_command", "open_7z"]

_COMMANDS = ("7z", "7za", "7zr")
_QUEUE_BLOCKS = 2  # decompressed blocks in flight between py7zr's thread and the reader


class SevenZipUnavailable(OSError):
    """Neither the ``7z`` command nor ``py7zr`` is installed."""


def find_7z_command() -> str | None:
    """Path of the first of ``7z``, ``7za``, ``7zr`` on ``PATH`` (``None`` when none is)."""
    for name in _COMMANDS:
        found = shutil.which(name)
        if found:
            return found
    return None


def open_7z(path: str | Path, mode: str = "rb", backend: str = "auto") -> IO[bytes]:
    """The single file of the ``.7z`` archive ``path`` as a streamed binary file object.

    Args:
        path (`str` or `Path`): the archive.
        mode (`str`): ``"rb"`` (the only mode; the argument lets it stand beside ``bz2.open``).
        backend (`str`): ``"auto"`` (the command when installed, else py7zr), ``"command"`` or ``"py7zr"``.

    Raises:
        SevenZipUnavailable: the backend asked for (or, for ``"auto"``, both) is not installed.
    """
    if mode != "rb":
        raise ValueError(f"open_7z reads only ('rb'), got mode {mode!r}")
    if backend not in ("auto", "command", "py7zr"):
        raise ValueError(f"backend must be auto, command or py7zr, got {backend!r}")
    path = Path(path)
    command = find_7z_command() if backend in ("auto", "command") else None
    if command is not None:
        return _CommandReader(command, path)
    if backend in ("auto", "py7zr"):
        try:
            import py7zr  # noqa: F401
        except ImportError:
            pass
        else:
            return io.BufferedReader(_Py7zrReader(path), buffer_size=1 << 20)
    wanted = {"auto": "the 7z command or the py7zr package", "command": "the 7z command",
              "py7zr": "the py7zr package"}[backend]
    raise SevenZipUnavailable(
        f"{path}: reading .7z needs {wanted}: install p7zip (e.g. `apt-get install p7zip-full`, which gives 7z) "
        "or `pip install py7zr`; or decompress it first (`7z e -so FILE > FILE.xml`) and pass the .xml")


class _CommandReader(io.RawIOBase):
    """Standard output of ``7z e -so``; at the end, a non-zero exit status raises ``OSError`` with 7z's message."""

    def __init__(self, command: str, path: Path) -> None:
        super().__init__()
        self.path = path
        self._stderr = tempfile.TemporaryFile()  # a file, not a pipe: a chatty 7z cannot block on a full pipe
        self._process = subprocess.Popen([command, "e", "-so", "-bd", "-y", str(path)], stdout=subprocess.PIPE,
                                         stderr=self._stderr, stdin=subprocess.DEVNULL)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        assert self._process.stdout is not None
        count = self._process.stdout.readinto(buffer)
        if not count:
            self._check_exit()
        return count or 0

    def _check_exit(self) -> None:
        status = self._process.wait()
        if status != 0:
            self._stderr.seek(0)
            message = " ".join(self._stderr.read().decode("utf-8", "replace").split())[-500:]
            raise OSError(f"{self.path}: 7z exited with status {status}: {message}")

    def close(self) -> None:
        if not self.closed:
            if self._process.poll() is None:  # abandoned before the end
                self._process.kill()
            self._process.wait()
            if self._process.stdout is not None:
                self._process.stdout.close()
            self._stderr.close()
        super().close()


class _Stop(Exception):
    """Raised inside py7zr's writer when the reader was closed early: ends the extraction thread."""


class _Py7zrReader(io.RawIOBase):
    """py7zr extracts in a thread into a writer that feeds a bounded queue; ``readinto`` drains it."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._blocks: queue.Queue = queue.Queue(maxsize=_QUEUE_BLOCKS)
        self._stopped = threading.Event()
        self._pending = memoryview(b"")
        self._done = False
        self._thread = threading.Thread(target=self._extract, name=f"py7zr {path.name}", daemon=True)
        self._thread.start()

    # -- the extraction thread -------------------------------------------------------------------------------------

    def _extract(self) -> None:
        import py7zr
        from py7zr.io import Py7zIO, WriterFactory

        reader = self

        class QueueWriter(Py7zIO):
            def write(self, data: bytes | bytearray) -> int:
                reader._put(data)  # py7zr hands a fresh buffer per block: no copy needed
                return len(data)

            def read(self, size: int | None = None) -> bytes:
                return b""

            def seek(self, offset: int, whence: int = 0) -> int:
                return 0

            def seekable(self) -> bool:  # py7zr rewinds seekable writers on close; this one is a stream
                return False

            def flush(self) -> None:
                pass

            def size(self) -> int:
                return 0

        class QueueWriterFactory(WriterFactory):
            def create(self, filename: str) -> Py7zIO:
                return QueueWriter()

        try:
            with py7zr.SevenZipFile(self.path, mode="r") as archive:
                members = [info.filename for info in archive.list() if not info.is_directory]
                if len(members) != 1:
                    raise OSError(f"{self.path}: expected one file in the archive, found {len(members)}")
                archive.extract(targets=members, factory=QueueWriterFactory())
            self._put(None)
        except _Stop:
            pass
        except Exception as err:  # handed to the reader, which raises it in its own thread
            try:
                self._put(err)
            except _Stop:
                pass

    def _put(self, item: Any) -> None:
        while True:
            if self._stopped.is_set():
                raise _Stop()
            try:
                self._blocks.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    # -- the reading side ------------------------------------------------------------------------------------------

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending and not self._done:
            item = self._blocks.get()
            if item is None:
                self._done = True
            elif isinstance(item, BaseException):
                self._done = True
                if isinstance(item, OSError) and str(self.path) in str(item):
                    raise item
                raise OSError(f"{self.path}: cannot read the 7z archive ({type(item).__name__}: {item})") from item
            else:
                self._pending = memoryview(item)
        count = min(len(buffer), len(self._pending))
        buffer[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        return count

    def close(self) -> None:
        if not self.closed:
            self._stopped.set()
            self._thread.join(timeout=5)
        super().close()
