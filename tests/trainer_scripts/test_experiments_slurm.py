"""`wikiref experiments --executor slurm` without a cluster: the resource options and their errors, and the runner's
decisions, with Slurm's two answers (a job id for a submission, a state for a job) given by the test: every unfinished
unit submitted once with afterok on the jobs of the units it needs, nothing submitted for a unit whose job is queued or
running, a unit whose job ended without results submitted again with the reason, --collect submitting nothing. The
real cluster (sbatch, squeue, scancel, submitit's jobs) is `cluster_tests/test_slurm_experiments.py`'s."""

import json
from pathlib import Path

import pytest

from trainer_scripts.experiments import options, plan, slurm
from trainer_scripts.experiments.common import ExperimentError
from trainer_scripts.experiments.slurm import DEFAULT_RESOURCES, JobState, Resources


def test_resource_options_override_a_kind_and_keep_the_defaults():
    resources = slurm.parse_resources(["pretrain=gpus:4,cpus:32,mem:256G,time:2-00:00:00",
                                       "training=mem:500M", "baselines=time:90"])
    assert resources["pretrain"] == Resources(gpus=4, cpus=32, mem_gb=500 / 1024, minutes=2 * 24 * 60)
    assert resources["finetune"] == Resources(gpus=1, cpus=8, mem_gb=500 / 1024, minutes=6 * 60)
    assert resources["baselines"].minutes == 90 and resources["evaluate"] == DEFAULT_RESOURCES["evaluate"]
    assert slurm.parse_time("1:30:01") == 91 and slurm.parse_time("45:00") == 45 and slurm.parse_time("0-2") == 120
    assert slurm.parse_sbatch_options(["account=myproject", "qos=high"]) == {"account": "myproject", "qos": "high"}


@pytest.mark.parametrize(("option", "message"), [
    ("train=gpus:1", "KIND one of"),
    ("pretrain", "KIND one of"),
    ("finetune=gpu:2", "unknown key 'gpu'"),
    ("finetune=gpus:-1", "gpus must be 0 or more"),
    ("finetune=cpus:0", "cpus must be 1 or more"),
    ("finetune=mem:lots", "not a size"),
    ("finetune=time:1h", "not a Slurm time limit"),
])
def test_a_bad_resource_option_is_named(option, message):
    with pytest.raises(ExperimentError, match=message) as caught:
        slurm.parse_resources([option])
    assert repr(option) in str(caught.value)


def test_a_bad_sbatch_option_is_named():
    with pytest.raises(ExperimentError, match="--slurm_options '--qos=high': expected KEY=VALUE"):
        slurm.parse_sbatch_options(["--qos=high"])


class FakeSlurm:
    """Slurm's answers: a new job id per submission (recorded), each job's state as the test sets it."""

    def __init__(self):
        self.submitted: list[dict] = []
        self.state: dict[str, JobState] = {}

    def submit(self, spec, name, resources, dependencies):
        job_id = str(1000 + len(self.submitted))
        self.submitted.append({"job": job_id, "unit": spec.folder.name, "kind": spec.kind, "name": name,
                               "resources": resources, "after": list(dependencies), "spec": spec})
        self.state[job_id] = JobState("PENDING", "Dependency" if dependencies else "None")
        return job_id

    def states(self, jobs):
        return {job: self.state.get(job, JobState("UNKNOWN", "no longer known to Slurm")) for job in jobs}


def _runner(arguments, fake, loaded=None):
    known = options.script_options()
    rows = arguments.rows
    routed = options.route_options(arguments, [], rows, known)
    planned = plan.make_plan(arguments, plan.check_inputs(arguments), rows, routed)
    return slurm.SlurmRunner(planned, Path(arguments.out).resolve(), arguments, submit=fake.submit,
                             states=fake.states, poll_seconds=0)


def test_units_are_submitted_once_after_the_units_they_need(tmp_path, tiny_bert_dir, duc_years, tiny_wikiref):
    fake = FakeSlurm()
    arguments = options.ExperimentArguments(
        duc_dirs=[duc_years[2006]], folds=2, encoder=str(tiny_bert_dir), wikiref=str(tiny_wikiref),
        rows=["qbert_da"], seeds=[1, 2], out=str(tmp_path / "x"), executor="slurm",
        slurm_resources=["finetune=gpus:2,cpus:4"], slurm_partition="gpu")
    runner = _runner(arguments, fake)
    runner.run()
    kinds = [job["kind"] for job in fake.submitted]
    assert kinds == ["baselines", "pretrain", "finetune", "finetune", "finetune", "finetune"]
    pretrain = fake.submitted[1]["job"]
    assert all(job["after"] == [pretrain] for job in fake.submitted[2:])  # afterok on the pre-training's job
    assert fake.submitted[0]["after"] == [] and fake.submitted[1]["after"] == []
    finetune = fake.submitted[2]["spec"]
    assert finetune.launcher[1:4] == ("-m", "accelerate.commands.launch", "--multi_gpu")
    assert finetune.launcher[-1] == "-m" and "2" in finetune.launcher and finetune.threads == 4
    assert fake.submitted[1]["spec"].launcher is None and fake.submitted[1]["spec"].threads == 8  # one GPU
    assert fake.submitted[1]["name"].startswith("wikiref-pretrain-")
    leases = sorted((tmp_path / "x" / "slurm" / "leases").glob("*.json"))
    assert len(leases) == 6 and json.loads(leases[0].read_text())["job_id"] in {job["job"] for job in fake.submitted}
    assert set(runner.status.values()) == {"queued"}

    # a second run while they are queued or running submits nothing
    fake.state[pretrain] = JobState("RUNNING", "None")
    again = _runner(arguments, fake)
    again.run()
    assert len(fake.submitted) == 6 and not again.submitted

    # the pre-training's job dies (scancel, a node failure): the next run submits it again, and the fine-tunings
    # whose jobs Slurm cancelled with it, each after the new pre-training job, saying why
    fake.state[pretrain] = JobState("CANCELLED", "None")
    for job in fake.submitted[2:]:
        fake.state[job["job"]] = JobState("CANCELLED", "DependencyNeverSatisfied")
    third = _runner(arguments, fake)
    third.run()
    resubmitted = fake.submitted[6:]
    assert [job["kind"] for job in resubmitted] == ["pretrain", "finetune", "finetune", "finetune", "finetune"]
    assert all(job["after"] == [resubmitted[0]["job"]] for job in resubmitted[1:])
    assert third.resubmitted[third.plan.order[1]].startswith(f"job {pretrain} ended CANCELLED")
    assert any("resubmitted pretrain" in line and "ended CANCELLED" in line for line in third.closing_lines())


def test_a_job_pending_on_a_failed_need_is_cancelled_and_submitted_again(tmp_path, tiny_bert_dir, duc_years,
                                                                         tiny_wikiref, monkeypatch):
    """A cluster without kill_invalid_depend keeps a job whose afterok can never be met: it is cancelled here."""
    fake = FakeSlurm()
    cancelled = []
    monkeypatch.setattr(slurm, "_run", lambda command: cancelled.append(command) or
                        __import__("subprocess").CompletedProcess(command, 0, "", ""))
    arguments = options.ExperimentArguments(
        duc_dirs=[duc_years[2006]], folds=2, encoder=str(tiny_bert_dir), wikiref=str(tiny_wikiref),
        rows=["qbert_da"], seeds=[1], out=str(tmp_path / "x"), executor="slurm", baselines=False)
    _runner(arguments, fake).run()
    pretrain, first, second = (job["job"] for job in fake.submitted)
    fake.state[pretrain] = JobState("FAILED", "NonZeroExitCode")
    fake.state[first] = fake.state[second] = JobState("PENDING", "DependencyNeverSatisfied")
    again = _runner(arguments, fake)
    again.run()
    assert ["scancel", first] in cancelled and ["scancel", second] in cancelled
    assert [job["kind"] for job in fake.submitted[3:]] == ["pretrain", "finetune", "finetune"]
    assert "a unit it needs failed" in again.resubmitted[again.plan.order[1]]


def test_wait_follows_the_jobs_to_the_end_and_collect_submits_nothing(tmp_path, tiny_bert_dir, duc_years, capsys):
    fake = FakeSlurm()
    out = tmp_path / "x"
    arguments = options.ExperimentArguments(duc_dirs=[duc_years[2006]], folds=2, encoder=str(tiny_bert_dir),
                                            rows=["lead"], seeds=[1], out=str(out), executor="slurm", wait=True)
    runner = _runner(arguments, fake)
    looks = []

    def states(jobs):  # the job runs the unit (as submitit would) on the second look
        looks.append(list(jobs))
        if len(looks) == 2:
            for job in fake.submitted:
                slurm.run_unit_job(job["spec"])
                fake.state[job["job"]] = JobState("COMPLETED", "None")
        return fake.states(jobs)

    runner.states = states
    runner.run()
    assert runner.status == {runner.plan.order[0]: "ran"} and len(looks) == 2
    assert "done in" in capsys.readouterr().err

    collect = options.ExperimentArguments(duc_dirs=[duc_years[2006]], folds=2, encoder=str(tiny_bert_dir),
                                          rows=["lead"], seeds=[1], out=str(out), executor="slurm", collect=True)
    collected = _runner(collect, fake)
    collected.run()
    assert len(fake.submitted) == 1 and collected.status == {collected.plan.order[0]: "cached"}


def test_a_failing_unit_fails_its_job(tmp_path):
    """The job's function raises when its unit fails, so Slurm marks the job FAILED and afterok holds its
    dependents."""
    from trainer_scripts.experiments.executors import UnitSpec

    spec = UnitSpec(kind="data", folder=tmp_path / "unit", argv=[], record={}, params={"make": "nothing"})
    with pytest.raises(RuntimeError, match="unit unit failed: exit 1; ValueError: unknown data unit 'nothing'"):
        slurm.run_unit_job(spec)


def test_without_a_cluster_the_command_says_so(tmp_path, duc_years, tiny_bert_dir, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch
    from trainer_scripts import run_experiments

    status = run_experiments.main(["--duc_dirs", duc_years[2006], "--folds", "2", "--encoder", str(tiny_bert_dir),
                                   "--rows", "lead", "--out", str(tmp_path / "x"), "--executor", "slurm"])
    error = capsys.readouterr().err
    assert status == 2 and "--executor slurm: sbatch and squeue are not on PATH" in error
    assert not (tmp_path / "x").exists()
    status = run_experiments.main(["--duc_dirs", duc_years[2006], "--folds", "2", "--encoder", str(tiny_bert_dir),
                                   "--rows", "lead", "--out", str(tmp_path / "x"), "--executor", "slurm",
                                   "--slurm_resources", "gpu=1"])
    assert status == 2 and "--slurm_resources 'gpu=1'" in capsys.readouterr().err
    status = run_experiments.main(["--duc_dirs", duc_years[2006], "--folds", "2", "--encoder", str(tiny_bert_dir),
                                   "--rows", "lead", "--out", str(tmp_path / "x"), "--collect"])
    assert status == 2 and "--collect reads the jobs of --executor slurm" in capsys.readouterr().err
