"""Nothing outlives a run (``wikiref_dataset/process/lifetime.py``): a build killed from outside, by SIGTERM, SIGINT, SIGHUP or
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

from wikiref_dataset.wikiref.build import sample_inputs

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


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (its own signal handlers and exit), from the project's root."""
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def thing_command(run: str, resumable: bool = False) -> str:
    """A script that runs ``run`` (the source of ``def run(args): ...``) as ``wikiref thing`` through ``dispatch``."""
    return f"""
import argparse, os, signal, time
import multiprocess
from wikiref_dataset.command import add_subcommand, dispatch
{run}
parser = argparse.ArgumentParser(prog="wikiref")
add_subcommand(parser.add_subparsers(dest="command"), "thing", help="h", description="d", example="wikiref thing",
               func=run, resumable={resumable})
raise SystemExit(dispatch(parser, ["thing"]))
"""


LOST_INTERRUPT = """
import os, signal, time
from wikiref_dataset.process.lifetime import stop_on_interrupt

class Swallows:  # an interrupt that lands in a __del__ can only be printed ("Exception ignored") by Python
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)

def work():
    Swallows()  # collected at once: its __del__ runs here
    start = time.monotonic()
    try:
        while time.monotonic() - start < 5:  # the run goes on
            time.sleep(0.01)
    except KeyboardInterrupt:
        print(f"stopped {time.monotonic() - start:.2f} s after the lost interrupt")
        return
    print("ran to the end")

GUARD
"""


def test_an_interrupt_lost_in_a_del_is_raised_again():
    guarded = run_python(LOST_INTERRUPT.replace("GUARD", 'with stop_on_interrupt("wikiref t", every=0.2):\n    work()'))
    assert "Exception ignored" in guarded.stderr and "KeyboardInterrupt" in guarded.stderr  # it was lost ...
    assert guarded.stdout.startswith("stopped "), guarded.stdout + guarded.stderr  # ... and raised again
    assert float(guarded.stdout.split()[1]) < 2.0
    plain = run_python(LOST_INTERRUPT.replace("GUARD", "work()"))  # what Python alone does: the run goes on
    assert plain.stdout.strip() == "ran to the end", plain.stdout + plain.stderr


def test_an_interrupt_being_handled_is_not_raised_again_and_a_stuck_clean_up_is_ended():
    code = """
import os, signal, sys, time
from wikiref_dataset.process.lifetime import stop_on_interrupt

with stop_on_interrupt("wikiref t", every=0.1, grace=CLEANUP_LIMIT):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:
        time.sleep(0.5)  # a clean-up under ten timer ticks, not interrupted again
        print("cleaned up", flush=True)
        time.sleep(CLEANUP)
print("left the block", flush=True)
"""
    quick = run_python(code.replace("CLEANUP_LIMIT", "10").replace("CLEANUP", "0"))
    assert (quick.returncode, quick.stdout.split("\n")[:2]) == (0, ["cleaned up", "left the block"]), quick.stderr
    start = time.monotonic()
    stuck = run_python(code.replace("CLEANUP_LIMIT", "2").replace("CLEANUP", "60"))
    assert time.monotonic() - start < 30
    assert stuck.returncode == 130 and stuck.stdout == "cleaned up\n"
    assert stuck.stderr == "wikiref t: interrupted (still stopping 2 s after the interrupt: stopped at once)\n"


def test_an_interrupt_that_a_library_swallowed_whole_still_stops_the_command():
    """Through ``dispatch``: a subcommand whose library catches the interrupt (``except BaseException: pass``)."""
    code = thing_command("""
def run(args):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
    except BaseException:
        pass
    time.sleep(20)  # the rest of the run
    print("finished")
    return 0
""", resumable=True)
    start = time.monotonic()
    result = run_python(code)
    assert time.monotonic() - start < 15
    assert result.returncode == 130 and result.stdout == ""
    assert result.stderr == "wikiref thing: interrupted; rerun the same command to resume\n"


def test_an_interrupted_command_ends_the_helper_it_was_starting():
    """The hang seen in CI: the interrupt came while datatrove started its ``multiprocess`` manager, before the
    manager's shut-down was registered; at exit ``multiprocess`` joined that manager, which served for ever."""
    code = thing_command("""
def run(args):
    helper = multiprocess.Process(target=time.sleep, args=(600,))  # like a manager: serves until told to stop
    helper.start()
    print(helper.pid, flush=True)
    os.kill(os.getpid(), signal.SIGINT)  # before anything registered its end
    time.sleep(5)
    return 0
""")
    result = run_python(code, timeout=60)
    assert result.returncode == 130 and result.stderr == "wikiref thing: interrupted\n"
    helper = int(result.stdout.split()[0])
    assert not Path(f"/proc/{helper}").exists() or "Z" in Path(f"/proc/{helper}/stat").read_text().split()[2]


def test_someone_elses_alarm_still_reaches_their_handler():
    code = """
import signal, time
from wikiref_dataset.process.lifetime import stop_on_interrupt

rang = []
signal.signal(signal.SIGALRM, lambda signum, frame: rang.append(signum))  # e.g. a test runner's timeout
with stop_on_interrupt("wikiref t"):
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    time.sleep(0.3)
print(rang == [signal.SIGALRM], signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""
    result = run_python(code)
    assert result.stdout.split() == ["True", "True"], result.stdout + result.stderr
