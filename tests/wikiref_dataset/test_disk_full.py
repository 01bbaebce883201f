"""A full disk is one clear line (``command.describe_disk_full``): the sample build into a small tmpfs that fills up
exits 1 with one line naming the folder, the free space when it started and now, no traceback, and the previous
build left intact. Needs to mount a tmpfs (root on Linux); skipped where that is not allowed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wikiref_dataset.process.disk import describe_disk_full, disk_full
from wikiref_dataset.process.folders import card_data_files
from wikiref_dataset.wikiref.build import sample_inputs

ROOT = Path(__file__).resolve().parents[2]
DUMPS, WARCS = sample_inputs()
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs mounted under ``tmp_path``."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if not sys.platform.startswith("linux") or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs Linux")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def build(out: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = ["build", *DUMPS, "--warc", *WARCS, "--out", str(out), "--tasks", "2", "--quiet", *extra]
    return subprocess.run([sys.executable, "-m", "trainer_scripts.cli", *argv], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)


def digest(folder: Path) -> str:
    files = sorted(path for paths in card_data_files(folder).values() for path in paths)
    return hashlib.sha256(b"".join(path.read_bytes() for path in files)).hexdigest()


def test_a_build_that_fills_the_disk_says_so_in_one_line(small_disk):
    out = small_disk / "wikiref"
    first = build(out)
    assert first.returncode == 0, first.stderr
    before, record = digest(out), (out / "build.json").read_text()
    # Leave about 40 KB: the rebuild with another filter needs more than that for its new curated data.
    free = shutil.disk_usage(small_disk).free
    (small_disk / "filler").write_bytes(b"\0" * max(0, free - 40 * 1024))

    rebuilt = build(out, "--min-unigram-recall", "0.95", "--seed", "3")
    assert rebuilt.returncode == 1
    lines = rebuilt.stderr.strip().splitlines()
    assert len(lines) == 1, rebuilt.stderr
    assert "Traceback" not in rebuilt.stderr and "datatrove:" not in rebuilt.stderr
    line = lines[0]
    assert line.startswith("wikiref build: error: no space left on the disk of ")
    assert str(out) in line and "free when the run started" in line and "KB now" in line
    assert digest(out) == before and (out / "build.json").read_text() == record  # the previous build, intact

    (small_disk / "filler").unlink()  # room again: the same command finishes
    again = build(out, "--min-unigram-recall", "0.95", "--seed", "3")
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "build.json").read_text())["config"]["min_unigram_recall"] == 0.95


def test_the_line_names_the_file_and_its_folder():
    error = OSError(28, "No space left on device", "/data/out/data/train.parquet")
    wrapped = RuntimeError("a task failed")
    wrapped.__cause__ = error
    assert disk_full(wrapped) is error and disk_full(RuntimeError("other")) is None
    line = describe_disk_full(error, {"/data/out": 1024 * 1024, "/data/out.work": 1024 * 1024})
    assert line.startswith("no space left on the disk of /data/out (1.0 MB free when the run started, ")
    assert "while writing /data/out/data/train.parquet" in line
