"""`wikiref experiments --executor slurm` on a real Slurm cluster, against `--executor local`.

Run by ``make test-cluster`` inside the one-node cluster's network namespace (see test_slurm_builds.py). A small grid:
a tiny BERT, one training step per unit, DUC 2006's fixture clusters in two folds, two seeds, the ``qbert_da`` row (one
WikiRef pre-training unit that the four fine-tunings start from) and the baselines. Through Slurm it gives the same
numbers as locally; a fine-tuning job cancelled with ``scancel`` while it runs is submitted again by the next run and
the tables then match; a second command while the first one's jobs are queued submits nothing.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

FAST = ["--use_cpu", "--max_steps", "1", "--per_device_train_batch_size", "4", "--max_length", "128",
        "--disable_tqdm", "true"]
# the one node has 2 CPUs: one per unit, two units at a time, as the local executor runs them
RESOURCES = ["--slurm_partition", "debug", "--slurm_resources", "training=gpus:0,cpus:1,mem:3G,time:20",
             "baselines=cpus:1,mem:2G,time:20", "--slurm_poll", "1"]
TIMEOUT = 900


@pytest.fixture(scope="module", autouse=True)
def slurm_cluster() -> None:
    answer = subprocess.run(["sinfo", "-h", "-o", "%P %T"], capture_output=True, text=True, timeout=30)
    if answer.returncode or not answer.stdout.strip():
        pytest.fail(f"no Slurm cluster answers (run `make test-cluster`): {answer.stderr.strip()}")


def experiments(out: Path, grid: list[str], *more: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainer_scripts.cli", "experiments", *grid, "--out", str(out),
                           *more], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def grid(tiny_bert_dir, duc_years, tiny_wikiref) -> list[str]:
    return ["--duc_dirs", duc_years[2006], "--folds", "2", "--seeds", "1", "2", "--rows", "qbert_da", "--wikiref",
            str(tiny_wikiref), "--encoder", str(tiny_bert_dir), *FAST]


@pytest.fixture(scope="module")
def local(grid, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("local") / "experiments"
    done = experiments(out, grid)
    assert done.returncode == 0, done.stderr[-3000:]
    return numbers(out)


def numbers(out: Path) -> dict:
    """Each unit's scores and the rows' table numbers (what must not depend on where the units ran)."""
    results = json.loads((out / "results.json").read_text())
    units = {}
    for path in sorted((out / "units").glob("*/results.json")):
        unit = json.loads(path.read_text())
        units[path.parent.name] = unit.get("evaluation") or unit.get("pretraining") or unit.get("data")
    rows = {name: row.get("duc") for name, row in results["rows"].items()}
    return {"units": units, "rows": rows, "statuses": {name: info["status"] for name, info in results["units"].items()}}


def squeue(*args: str) -> str:
    return subprocess.run(["squeue", "-h", *args], capture_output=True, text=True, check=True).stdout


def leases(out: Path) -> dict[str, str]:
    return {path.stem: json.loads(path.read_text())["job_id"] for path in (out / "slurm" / "leases").glob("*.json")}


def wait_until(predicate, what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} after {timeout}s:\n{squeue('-o', '%i %j %T %r')}")
        time.sleep(0.5)


def test_the_grid_on_slurm_gives_the_local_numbers(grid, local, tmp_path):
    out = tmp_path / "experiments"
    done = experiments(out, grid, "--executor", "slurm", "--wait", *RESOURCES)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert "6 submitted to Slurm now" in done.stderr, done.stderr
    assert done.stderr.count(": done in ") == 6 and "ETA" in done.stderr
    on_slurm = numbers(out)
    assert on_slurm == local and set(local["statuses"].values()) == {"ran"}
    assert local["rows"]["qbert_da"]["2006"]["rouge_2"]["mean"] >= 0
    # every unit was a job of its own, the fine-tunings after the pre-training (afterok), each under the name asked
    jobs = leases(out)
    assert len(set(jobs.values())) == 6
    logs = list((out / "slurm" / "jobs").glob("*/*_log.out"))
    assert len(logs) == 6
    again = experiments(out, grid, "--executor", "slurm", *RESOURCES)
    assert again.returncode == 0 and "6 finished earlier" in again.stderr and "0 submitted" in again.stderr


def test_a_cancelled_unit_is_submitted_again_and_nothing_twice(grid, local, tmp_path):
    out = tmp_path / "experiments"
    first = experiments(out, grid, "--executor", "slurm", *RESOURCES, timeout=300)
    assert first.returncode == 0, first.stderr[-4000:]
    assert "6 submitted to Slurm now" in first.stderr and "--collect" in first.stderr
    jobs = leases(out)
    finetune = sorted(name for name in jobs if name.startswith("finetune"))
    pretrain = next(name for name in jobs if name.startswith("pretrain"))
    # the fine-tunings wait on the pre-training's job
    assert jobs[pretrain] in squeue("-j", jobs[finetune[0]], "-o", "%E")

    # a second command while they are queued or running submits nothing
    second = experiments(out, grid, "--executor", "slurm", *RESOURCES, timeout=300)
    assert second.returncode == 0, second.stderr[-4000:]
    counts = re.search(r"(\d+) finished earlier, (\d+) queued or running from an earlier run, 0 submitted",
                       second.stderr)
    assert counts and int(counts[1]) + int(counts[2]) == 6 and int(counts[2]) >= 4, second.stderr  # the baselines
    # may have finished already; the pre-training and its fine-tunings are still queued or running
    assert leases(out) == jobs

    # one fine-tuning cancelled while it runs
    victim = jobs[finetune[0]]
    wait_until(lambda: squeue("-j", victim, "-o", "%T").strip() == "RUNNING"
               and (out / "units" / finetune[0] / "log.txt").is_file(), "the fine-tuning never ran")
    subprocess.run(["scancel", victim], check=True)
    wait_until(lambda: not set(squeue("-o", "%i").split()) & set(jobs.values()), "the jobs did not end")

    collected = experiments(out, grid, "--executor", "slurm", "--collect", *RESOURCES, timeout=300)
    assert collected.returncode == 1, collected.stderr[-3000:]  # a unit did not finish
    assert f"job {victim} ended CANCELLED" in collected.stderr
    assert not (out / "units" / finetune[0] / "results.json").exists()

    third = experiments(out, grid, "--executor", "slurm", "--wait", *RESOURCES)
    assert third.returncode == 0, third.stderr[-4000:]
    assert "5 finished earlier, 0 queued or running from an earlier run, 1 submitted" in third.stderr
    assert f"resubmitted {finetune[0]}" in third.stderr and f"job {victim} ended CANCELLED" in third.stderr
    assert leases(out)[finetune[0]] != victim
    assert {unit: numbers(out)["units"][unit] for unit in local["units"]} == local["units"]
    assert numbers(out)["rows"] == local["rows"]
