"""Nothing outlives a run (``wikiref_dataset/lifetime.py``): a build killed from outside, by SIGTERM, SIGINT, SIGHUP or
SIGKILL to its main process only (as a job scheduler or ``kill PID`` does), leaves no process behind: not the
executor's manager, not the fork server, not a worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wikiref_dataset.pipeline import sample_inputs

ROOT = Path(__file__).resolve().parents[2]
DUMPS, WARCS = sample_inputs()

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; PR_SET_PDEATHSIG is Linux")


def session_processes(session: int) -> list[tuple[int, str]]:
    """``(pid, command)`` of the live processes of session ``session`` (zombies excluded)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        state, sid = fields[0], int(fields[3])
        if sid == session and state != "Z":
            found.append((int(entry), command.strip()[:120]))
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL, signal.SIGINT])
def test_a_killed_build_leaves_no_process(tmp_path, sig):
    out = tmp_path / "wikiref"
    argv = ["build", *DUMPS, "--warc", *WARCS, "--out", str(out), "--tasks", "2", "--workers", "2", "--quiet"]
    process = subprocess.Popen([sys.executable, "-m", "trainer_scripts.cli", *argv], cwd=ROOT,
                               env={**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        helpers: list[tuple[int, str]] = []
        while time.monotonic() < deadline and process.poll() is None:  # until the build has helper processes
            helpers = [item for item in session_processes(process.pid) if item[0] != process.pid]
            if len(helpers) >= 2:
                break
            time.sleep(0.05)
        assert process.poll() is None and len(helpers) >= 2, "the build ended before it had forked its helpers"
        time.sleep(0.5)
        os.kill(process.pid, sig)  # the main process only, not its group
        process.wait(timeout=60)
        deadline = time.monotonic() + 20
        left = session_processes(process.pid)
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = session_processes(process.pid)
        assert left == [], f"after {signal.Signals(sig).name} to the build: {left}"
    finally:
        for pid, _ in session_processes(process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if process.poll() is None:
            process.kill()
