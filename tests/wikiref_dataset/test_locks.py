"""One writer per folder (``wikiref_dataset/process/locks.py``), as users meet it: two runs into one folder at once, in fresh
processes. The second is refused in one line naming the first (exit 2), or waits with ``--wait``; runs into other
folders go on side by side; a lock left by a killed run is taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wikiref_dataset.process.folders import card_data_files
from wikiref_dataset.process.locks import FolderLock, FolderLocked, lock_path
from wikiref_dataset.wikiref.build import sample_inputs

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
DUMPS, WARCS = sample_inputs()
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}

HOLD = """
import sys, time
from wikiref_dataset.process.locks import FolderLock
with FolderLock(sys.argv[1], command="holder for the test"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def hold(folder: Path, seconds: float = 120) -> subprocess.Popen:
    """A fresh process that holds ``folder``'s lock for ``seconds`` (returns once it holds it)."""
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(folder), str(seconds)], cwd=ROOT, env=ENV,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


def wikiref(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainer_scripts.cli", *argv], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


def build_argv(out: Path, *extra: str) -> list[str]:
    return ["build", *DUMPS, "--warc", *WARCS, "--out", str(out), "--tasks", "2", "--quiet", *extra]


def rows(folder: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(path).num_rows for files in card_data_files(folder).values() for path in files)


# ---- the lock itself ----------------------------------------------------------------------------------------------


def test_a_second_lock_on_the_folder_is_refused_naming_the_holder(tmp_path):
    folder = tmp_path / "out"
    holder = hold(folder)
    try:
        with pytest.raises(FolderLocked) as refused:
            FolderLock(folder).acquire()
        message = str(refused.value)
        assert str(folder) in message and "'holder for the test'" in message
        assert f"pid {holder.pid} on " in message and "since " in message and "--wait" in message
        with FolderLock(tmp_path / "other"):  # another folder: no conflict
            pass
    finally:
        holder.kill()
        holder.wait()
    assert not folder.exists()  # the lock lives beside the folder, never inside it
    assert lock_path(folder) == tmp_path / ".out.lock"
    with FolderLock(folder):
        assert lock_path(folder).is_file()
    assert not lock_path(folder).exists()  # a clean end leaves nothing beside the folder


def test_two_locks_in_one_process_exclude_each_other(tmp_path):
    with FolderLock(tmp_path / "out"), pytest.raises(FolderLocked):
        FolderLock(tmp_path / "out").acquire()
    with FolderLock(tmp_path / "out"):  # released: free again
        pass


def test_a_lock_left_by_a_killed_run_is_taken_over_with_a_note(tmp_path, caplog):
    folder = tmp_path / "out"
    holder = hold(folder)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert json.loads(lock_path(folder).read_text())["pid"] == holder.pid  # its details are still in the file
    with caplog.at_level("WARNING", logger="wikiref_dataset.process.locks"), FolderLock(folder):
        pass
    assert f"took over the lock left by a run that died ('holder for the test', pid {holder.pid}" in caplog.text


HOLD_AND_FORK = """
import os, sys, time
from wikiref_dataset.process.locks import FolderLock
lock = FolderLock(sys.argv[1], command="parent").acquire()
ready, started = os.pipe()
child = os.fork()
if child == 0:  # a child that outlives its parent (as the executor's manager can, for a moment)
    os.write(started, b"x")  # it runs (the at-fork handlers ran): on a busy machine it may start late
    time.sleep(60)
    os._exit(0)
os.read(ready, 1)
print("held", child, flush=True)
time.sleep(120)
"""


def test_the_lock_ends_with_its_run_not_with_a_forked_child(tmp_path):
    """A flock is shared with the descriptors a fork inherits: a child still alive after the run was killed must not
    keep the folder locked (the next run would be refused, naming a dead process)."""
    folder = tmp_path / "out"
    parent = subprocess.Popen([sys.executable, "-c", HOLD_AND_FORK, str(folder)], cwd=ROOT, env=ENV,
                              stdout=subprocess.PIPE, text=True)
    word, child = parent.stdout.readline().split()
    assert word == "held"
    try:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        os.kill(int(child), 0)  # the child is alive ...
        with FolderLock(folder):  # ... and the folder is free
            pass
    finally:
        try:
            os.kill(int(child), signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_wait_takes_the_lock_once_the_holder_ends(tmp_path):
    folder = tmp_path / "out"
    holder = hold(folder, seconds=1.5)
    started = time.monotonic()
    with FolderLock(folder, wait=True):
        assert time.monotonic() - started >= 1.0  # held until the holder let go
        assert json.loads(lock_path(folder).read_text())["pid"] == os.getpid()
    holder.wait()


# ---- commands, as users run them -------------------------------------------------------------------------------


def test_a_command_into_a_folder_being_written_stops_in_one_line(tmp_path):
    """`wikiref duc convert` and `wikiref build` into a folder another run holds: exit 2, one line naming it, and
    nothing written; the build's work folder (OUT.work) is locked too."""
    out = tmp_path / "duc"
    holder = hold(out)
    try:
        done = wikiref("duc", "convert", str(FIXTURES / "duc" / "duc2006"), "--year", "2006", "--out", str(out))
        assert done.returncode == 2, done.stderr
        line = done.stderr.strip()
        assert line.count("\n") == 0 and line.startswith("wikiref duc convert: error: ")
        assert f"pid {holder.pid}" in line and "'holder for the test'" in line
        assert not out.exists()
    finally:
        holder.kill()
        holder.wait()
    work_holder = hold(tmp_path / "wikiref.work")
    try:
        done = wikiref(*build_argv(tmp_path / "wikiref"))
        assert done.returncode == 2 and f"pid {work_holder.pid}" in done.stderr, done.stderr
    finally:
        work_holder.kill()
        work_holder.wait()


def test_two_builds_into_one_folder_at_once(tmp_path):
    """The issue's case: the sample build with two settings into one folder at the same time. Without --wait one is
    refused (exit 2) and the other publishes a folder whose build.json matches its rows; with --wait both finish one
    after the other, and the folder holds the later build, consistent."""
    out = tmp_path / "wikiref"
    settings = {"default": [], "strict": ["--min-unigram-recall", "0.95"]}
    expected = {}
    for name, extra in settings.items():  # what each setting gives alone
        alone = tmp_path / f"alone-{name}" / "wikiref"
        assert wikiref(*build_argv(alone, *extra)).returncode == 0
        expected[name] = rows(alone)
    assert expected["default"] != expected["strict"]

    def start(extra: list[str], *flags: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "trainer_scripts.cli", *build_argv(out, *extra), *flags],
                                cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    runs = {name: start(extra) for name, extra in settings.items()}
    status = {name: (process.wait(timeout=600), process.stderr.read()) for name, process in runs.items()}
    codes = sorted(code for code, _ in status.values())
    assert codes == [0, 2], status
    refused = next(error for code, error in status.values() if code == 2)
    assert "is being written by another run" in refused and "wikiref build" in refused
    winner = next(name for name, (code, _) in status.items() if code == 0)
    recorded = json.loads((out / "build.json").read_text())
    assert rows(out) == expected[winner]
    assert (recorded["config"]["min_unigram_recall"] == 0.95) == (winner == "strict")  # build.json matches the rows

    runs = {name: start(extra, "--wait") for name, extra in settings.items()}
    status = {name: (process.wait(timeout=600), process.stderr.read()) for name, process in runs.items()}
    assert [code for code, _ in status.values()] == [0, 0], status
    recorded = json.loads((out / "build.json").read_text())
    last = "strict" if recorded["config"]["min_unigram_recall"] == 0.95 else "default"
    assert rows(out) == expected[last]


def test_a_training_script_into_an_output_dir_being_written_stops(tmp_path, tiny_bert_dir, duc_years):
    out = tmp_path / "finetuned"
    holder = hold(out)
    try:
        done = subprocess.run([sys.executable, str(ROOT / "trainer_scripts" / "finetune_duc.py"), "--model_name_or_path",
                               str(tiny_bert_dir), "--duc_dirs", duc_years[2006], "--folds", "2", "--fold", "0",
                               "--output_dir", str(out), "--use_cpu", "--max_steps", "1"],
                              cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"pid {holder.pid}" in done.stderr and "is being written by another run" in done.stderr
    assert not out.exists()


# ---- a Slurm chain keeps the folders it was submitted for -------------------------------------------------------


def test_a_slurm_chain_keeps_its_folders_until_its_jobs_end(tmp_path):
    """``wikiref build --executor slurm`` returns once its chain is queued; the folders stay the chain's: a lease
    beside each names its jobs, and while ``squeue`` lists them (or a job waiting on them) another run into the
    folder is refused in one line naming the jobs; the same build submitted again passes (it submits nothing while
    the chain runs); once the jobs ended the lease is dropped and the run goes on. ``squeue`` is a script here that
    prints the queue a test file holds, in the format the project asks for (``%F|%r|%E``)."""
    from wikiref_dataset.process.locks import folder_locks, lease_path, lease_to_slurm_jobs

    out, work = tmp_path / "wikiref", tmp_path / "wikiref.work"
    with folder_locks([out, work], command="wikiref build (submitted to Slurm)"):
        leases = lease_to_slurm_jobs(["100", "101"])
    assert leases == [lease_path(out), lease_path(work)] and not lock_path(out).exists()
    assert json.loads(leases[0].read_text())["jobs"] == ["100", "101"]
    queue, bin_dir = tmp_path / "queue.txt", tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text(f"#!/bin/sh\ncat {queue}\n")
    (bin_dir / "squeue").chmod(0o755)
    env = {**ENV, "PATH": f"{bin_dir}:{os.environ['PATH']}"}

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "trainer_scripts.cli", *argv], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)

    queue.write_text("100|None|(null)\n102|Dependency|afterok:101_*(unfulfilled)\n999|None|(null)\n")
    refused = run(*build_argv(out))
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    assert "is being written by Slurm jobs 100, 102 ('wikiref build (submitted to Slurm)', pid" in refused.stderr
    assert "squeue -j 100,102" in refused.stderr and "scancel 100 102" in refused.stderr
    assert not out.exists() and leases[1].is_file()
    other = run("duc", "convert", str(FIXTURES / "duc" / "duc2006"), "--year", "2006", "--out", str(tmp_path / "duc"))
    assert other.returncode == 0, other.stderr[-2000:]  # other folders are not the chain's

    queue.write_text("103|DependencyNeverSatisfied|afterok:100_*(failed)\n")  # the chain broke: nothing will run
    done = run(*build_argv(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert rows(out) > 0 and not lease_path(out).exists() and not lease_path(work).exists()


def test_a_run_refused_at_the_moment_the_holder_locks_still_names_it(tmp_path):
    """Two runs started together: the second can find the lock taken before the first has written who it is. It
    waits for those details (they follow at once) instead of saying "holder unknown"."""
    import fcntl
    import threading

    folder = tmp_path / "out"
    path = lock_path(folder)
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # locked, nothing written yet

        def write_details() -> None:
            time.sleep(0.3)
            handle.write(json.dumps({"command": "wikiref build", "pid": 4242, "host": "node7",
                                     "since": "2026-11-27T05:00:00+00:00"}) + "\n")
            handle.flush()

        writer = threading.Thread(target=write_details)
        writer.start()
        try:
            with pytest.raises(FolderLocked) as refused:
                FolderLock(folder).acquire()
        finally:
            writer.join()
    message = str(refused.value)
    assert "'wikiref build', pid 4242 on node7, since 2026-11-27T05:00:00+00:00" in message
    assert "holder unknown" not in message
