"""A server in a network namespace that holds only loopback, for tests of what is served beyond 127.0.0.1.

A server started here (:class:`LoopbackServer`) may listen on every interface (``--host 0.0.0.0``, as a Space serves)
and still reach, and be reached from, nothing outside: its namespace's one interface is ``lo``. Clients run in the
same namespace (:meth:`LoopbackServer.run`, through ``nsenter``). ``scripts/slurm_local.sh`` keeps the Slurm daemons
in such a namespace the same way (a named one, there: the daemons outlive a command); here the namespace lives as long
as the server process (``unshare -n``). Making one needs root: :func:`unavailable` says why it
cannot, so that a test skips with that reason.

Loaded by its path by the tests that use it (tests/ on sys.path would shadow the packages with the test folders).
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

LOOPBACK_UP = 'ip link set lo up && exec "$@"'


def unavailable() -> str | None:
    """Why a loopback-only network namespace cannot be made here (``None``: it can)."""
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (util-linux, iproute2)"
    try:
        done = subprocess.run(["unshare", "-n", "sh", "-c", LOOPBACK_UP, "sh", "true"], capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"`unshare -n` could not run ({error})"
    if done.returncode != 0:
        return (f"network namespaces cannot be made here (`unshare -n` exit {done.returncode}: "
                f"{' '.join(done.stderr.split()) or 'no message'}); this needs root")
    return None


class LoopbackServer:
    """``command`` run in a fresh network namespace holding only ``lo`` (brought up first), its output (stdout and
    stderr together) read line by line as it comes.

    Args:
        command (`Sequence[str]`): the server's command line.
        env (`Mapping[str, str]`, *optional*): its environment.
        cwd (`str | Path`, *optional*): its working folder.
    """

    def __init__(self, command: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | Path | None = None):
        # without --fork, unshare execs sh, which execs the command: the process started here is the server itself
        self.process = subprocess.Popen(["unshare", "-n", "sh", "-c", LOOPBACK_UP, "sh", *command],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                                        env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True)
        self.output: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.rstrip("\n"))
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def wait_for(self, prefix: str, timeout: float) -> str:
        """The first line the server prints that starts with ``prefix``, waiting at most ``timeout`` seconds.

        Raises:
            TimeoutError: no such line in time.
            RuntimeError: the server stopped first (its last output in the message).
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no line starting {prefix!r} within {timeout:g} s:\n{self.tail()}") from None
            if line is None:
                raise RuntimeError(f"the server stopped (exit {self.process.wait()}) before printing {prefix!r}:\n"
                                   f"{self.tail()}")
            if line.startswith(prefix):
                return line

    def tail(self, lines: int = 40) -> str:
        """The server's last output lines."""
        return "\n".join(self.output[-lines:])

    def run(self, command: Sequence[str], timeout: float, env: Mapping[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
        """``command`` run to its end in the server's namespace (so it reaches the server on 127.0.0.1 and nothing
        else), its output captured; killed after ``timeout`` seconds (``subprocess.TimeoutExpired``)."""
        return subprocess.run(["nsenter", f"--net=/proc/{self.process.pid}/ns/net", *command], capture_output=True,
                              text=True, timeout=timeout, env=dict(env) if env is not None else None)

    def stop(self) -> None:
        """Stop the server (SIGTERM to its process group; SIGKILL after 30 s); the namespace goes with it."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
