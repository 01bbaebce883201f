"""The Slurm executor (``--executor slurm``): every unfinished unit of the plan as its own Slurm job.

The jobs are submitted with `submitit <https://github.com/facebookincubator/submitit>`_, the library Hydra's Slurm
launcher uses: it writes the sbatch script, pickles the call to :func:`~trainer_scripts.experiments.executors.
execute_unit` and runs it on the node with this Python, so the runner writes no sbatch file by hand. The node must see
the results folder and this Python environment (a shared file system, as on every cluster where several nodes run one
user's jobs).

What runs is decided as locally: a unit is finished when its folder holds ``results.json``. A unit without one is
submitted unless its **lease** says a job for it is queued or running: ``<out>/slurm/leases/<unit>.json`` holds the job
id of the unit's last submission, and Slurm says whether that job lives (``squeue``, then ``scontrol`` and ``sacct``
for a job that ended). A lease whose job ended without results (time limit, node failure, ``scancel``, a crash) is
replaced by the next submission, and the reason is in the closing lines. Each job depends (``afterok``) on the jobs of
the units it starts from that are queued or running, so a fine-tuning waits for its pre-training and, where the
cluster cancels jobs whose dependency can never be met (``DependencyParameters=kill_invalid_depend``), a failed
pre-training cancels what needs it; elsewhere such a job is found pending with ``DependencyNeverSatisfied`` and
cancelled here.

Resources are chosen per unit kind (:data:`DEFAULT_RESOURCES`: one GPU for each training and evaluation unit, none for
the baselines and data units) and overridden with ``--slurm_resources KIND=gpus:N,cpus:N,mem:SIZE,time:LIMIT``. A
training unit given several GPUs runs under ``accelerate launch --multi_gpu --num_processes N`` inside its job.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from trainer_scripts.experiments.common import ExperimentError
from trainer_scripts.experiments.executors import Runner, UnitSpec, _last_line, describe, execute_unit, write_json
from wikiref_dataset.utils.formatting import format_seconds

KINDS = ("data", "baselines", "pretrain", "finetune", "evaluate")
TRAINING_KINDS = ("pretrain", "finetune")

LIVE_STATES = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD",
                         "RESIZING", "SUSPENDED", "STAGE_OUT", "SIGNALING", "RESV_DEL_HOLD", "STOPPED"})
"""Slurm job states of a job that has not ended (a unit with such a job is never submitted again)."""


@dataclass(frozen=True)
class Resources:
    """What one unit's job asks Slurm for."""

    gpus: int = 0
    cpus: int = 1
    mem_gb: float = 4.0
    minutes: int = 60

    def describe(self) -> str:
        return (f"{self.gpus} GPU(s), {self.cpus} CPU(s), {self.mem_gb:g} GB, "
                f"{format_seconds(self.minutes * 60)} limit")


DEFAULT_RESOURCES: dict[str, Resources] = {
    "pretrain": Resources(gpus=1, cpus=8, mem_gb=64, minutes=24 * 60),
    "finetune": Resources(gpus=1, cpus=8, mem_gb=32, minutes=6 * 60),
    "evaluate": Resources(gpus=1, cpus=4, mem_gb=16, minutes=60),
    "baselines": Resources(gpus=0, cpus=2, mem_gb=8, minutes=60),
    "data": Resources(gpus=0, cpus=1, mem_gb=8, minutes=30),
}
"""Per unit kind: one GPU for what trains or scores with a model, none for the baselines and data units; time limits
that fit the ``paper`` recipe's units on one current GPU (pre-training on all of WikiRef is the long one)."""


def parse_time(value: str) -> int:
    """A Slurm time limit (``MM``, ``HH:MM:SS``, ``D-HH[:MM[:SS]]``) in whole minutes (at least 1)."""
    match = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", value.strip())
    if not match:
        raise ValueError(f"time {value!r} is not a Slurm time limit (MM, HH:MM:SS or D-HH:MM:SS)")
    days, first, second, third = (int(group) if group else 0 for group in match.groups())
    if match.group(1):  # D-HH[:MM[:SS]]
        seconds = days * 86400 + first * 3600 + second * 60 + third
    elif match.group(4):  # HH:MM:SS
        seconds = first * 3600 + second * 60 + third
    elif match.group(3):  # MM:SS
        seconds = first * 60 + second
    else:  # MM
        seconds = first * 60
    return max(1, -(-seconds // 60))


def parse_memory(value: str) -> float:
    """A memory size (``64G``, ``500M``, ``1T``; a bare number is GB) in GB."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([MGT]?)B?", value.strip(), re.I)
    if not match:
        raise ValueError(f"memory {value!r} is not a size such as 32G or 500M")
    number, unit = float(match.group(1)), match.group(2).upper()
    return number * {"M": 1 / 1024, "G": 1, "T": 1024, "": 1}[unit]


def parse_resources(options: Sequence[str],
                    defaults: Mapping[str, Resources] = DEFAULT_RESOURCES) -> dict[str, Resources]:
    """The resources per unit kind: ``defaults`` with ``--slurm_resources`` applied. Each option is
    ``KIND=KEY:VALUE,...`` with KIND one of :data:`KINDS` (or ``training`` for both training kinds) and KEY one of
    ``gpus``, ``cpus``, ``mem`` (``64G``), ``time`` (``HH:MM:SS``).

    Raises:
        ExperimentError: the option that cannot be read, and why.
    """
    resources = dict(defaults)
    for option in options:
        kind, _, settings = option.partition("=")
        kinds = TRAINING_KINDS if kind == "training" else (kind,)
        if not settings or any(name not in KINDS for name in kinds):
            raise ExperimentError(f"--slurm_resources {option!r}: expected KIND=gpus:N,cpus:N,mem:SIZE,time:LIMIT "
                                  f"with KIND one of {', '.join(KINDS)} or training")
        changes: dict[str, Any] = {}
        for setting in settings.split(","):
            key, _, value = setting.partition(":")
            try:
                if key in ("gpus", "cpus"):
                    number = int(value)
                    if number < (0 if key == "gpus" else 1):
                        raise ValueError(f"{key} must be {'0' if key == 'gpus' else '1'} or more")
                    changes[key] = number
                elif key == "mem":
                    changes["mem_gb"] = parse_memory(value)
                elif key == "time":
                    changes["minutes"] = parse_time(value)
                else:
                    raise ValueError(f"unknown key {key!r} (gpus, cpus, mem, time)")
            except ValueError as error:
                raise ExperimentError(f"--slurm_resources {option!r}: {error}") from None
        for name in kinds:
            resources[name] = replace(resources[name], **changes)
    return resources


def parse_sbatch_options(options: Sequence[str]) -> dict[str, str]:
    """``--slurm_options KEY=VALUE ...`` (sbatch's long options without the dashes: ``account=myproject``,
    ``qos=high``, ``constraint=a100``) as a dict."""
    parsed = {}
    for option in options:
        key, separator, value = option.partition("=")
        if not separator or not key or key.startswith("-"):
            raise ExperimentError(f"--slurm_options {option!r}: expected KEY=VALUE, an sbatch option without its "
                                  "dashes (account=myproject)")
        parsed[key] = value
    return parsed


# ---- what Slurm says about the jobs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobState:
    state: str  # PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL, ... or UNKNOWN
    reason: str = ""

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES

    @property
    def never_runs(self) -> bool:
        """Pending on a dependency that failed (a cluster without ``kill_invalid_depend`` keeps such a job)."""
        return self.state == "PENDING" and "DependencyNeverSatisfied" in self.reason


UNKNOWN = JobState("UNKNOWN", "no longer known to Slurm")
"""The state of a job no command knows (it ended long ago on a cluster without accounting)."""


def _run(command: Sequence[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(list(command), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return subprocess.CompletedProcess(list(command), 1, "", str(error))


def job_states(job_ids: Sequence[str]) -> dict[str, JobState]:
    """The state of each job: ``squeue`` (which also lists jobs that ended a few minutes ago), then ``scontrol`` and
    ``sacct`` (a cluster with accounting) for an older one; ``UNKNOWN`` where none knows it."""
    states: dict[str, JobState] = {}
    if not job_ids:
        return states
    answer = _run(["squeue", "-h", "--states=all", "-o", "%i|%T|%r", "--jobs", ",".join(job_ids)])
    for line in answer.stdout.splitlines():
        job, _, rest = line.partition("|")
        state, _, reason = rest.partition("|")
        if job.strip() in job_ids:
            states[job.strip()] = JobState(state.strip(), reason.strip())
    for job in job_ids:
        if job in states:
            continue
        shown = _run(["scontrol", "-o", "show", "job", job])
        fields = dict(item.split("=", 1) for item in shown.stdout.split() if "=" in item)
        if shown.returncode == 0 and fields.get("JobState"):
            states[job] = JobState(fields["JobState"], fields.get("Reason", ""))
            continue
        accounted = _run(["sacct", "-n", "-X", "-P", "-o", "State", "-j", job])
        state = accounted.stdout.strip().splitlines()[0].split()[0] if accounted.stdout.strip() else ""
        states[job] = JobState(state, "") if state else UNKNOWN
    return states


def require_slurm() -> None:
    """Stop with one line where ``sbatch`` cannot be run or no cluster answers."""
    if shutil.which("sbatch") is None or shutil.which("squeue") is None:
        raise ExperimentError("--executor slurm: sbatch and squeue are not on PATH (run this on a Slurm login node)")
    answer = _run(["squeue", "-h", "-j", "0"])
    if answer.returncode and "Invalid job id" not in answer.stderr:
        raise ExperimentError(f"--executor slurm: the Slurm controller does not answer: "
                              f"{(answer.stderr or answer.stdout).strip().splitlines()[-1:]}")
    try:
        import submitit  # noqa: F401
    except ImportError:
        raise ExperimentError("--executor slurm needs submitit: pip install 'wikiref[slurm]'") from None


# ---- the leases ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lease:
    job_id: str
    submitted: str
    resources: str = ""


class Leases:
    """``<out>/slurm/leases/<unit folder>.json``: the job of each unit's last submission."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "leases"

    def read(self, name: str) -> Lease | None:
        try:
            record = json.loads((self.folder / f"{name}.json").read_text(encoding="utf-8"))
            return Lease(str(record["job_id"]), record.get("submitted", ""), record.get("resources", ""))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, name: str, lease: Lease) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self.folder / f".{name}.json.{os.getpid()}"
        write_json(temporary, {"job_id": lease.job_id, "submitted": lease.submitted, "resources": lease.resources})
        os.replace(temporary, self.folder / f"{name}.json")


# ---- the runner ----------------------------------------------------------------------------------------------------


Submit = Callable[[UnitSpec, str, Resources, Sequence[str]], str]
"""``submit(spec, job_name, resources, dependencies) -> job id``: :meth:`SlurmRunner.submit` (submitit), or a test's."""


class SlurmRunner(Runner):
    """Submits the plan's unfinished units as Slurm jobs (:mod:`trainer_scripts.experiments.slurm`); with ``--wait``
    follows them to the end, with ``--collect`` submits nothing and reports what finished."""

    def __init__(self, plan: Any, out: Path, arguments: Any, loaded: Sequence[Any] | None = None,
                 submit: Submit | None = None, states: Callable[[Sequence[str]], Mapping[str, JobState]] = job_states,
                 poll_seconds: float | None = None) -> None:
        super().__init__(plan, out, arguments, loaded=loaded)
        self.resources = parse_resources(arguments.slurm_resources)
        self.sbatch_options = parse_sbatch_options(arguments.slurm_options)
        self.leases = Leases(out / "slurm")
        self.submit = submit or self.submit_with_submitit
        self.states = states
        self.poll_seconds = arguments.slurm_poll if poll_seconds is None else poll_seconds
        self.jobs_of: dict[str, str] = {}  # unit key -> its live job (submitted now or earlier)
        self.submitted: list[str] = []  # keys submitted by this run
        self.resubmitted: dict[str, str] = {}  # key -> why its earlier job did not finish it
        self.after: dict[str, list[str]] = {}  # key -> the jobs it was submitted after (afterok)

    def job_resources(self, key: str) -> str | None:
        return self.resources[self.plan.units[key].kind].describe()

    def estimate_seconds(self, key: str) -> float | None:
        """No estimate from this machine: the units run on the cluster's nodes (the ETA uses the kinds timed there)."""
        return None

    # -- planning what to submit

    def unit_spec(self, key: str) -> UnitSpec:
        unit = self.plan.units[key]
        resources = self.resources[unit.kind]
        launcher = None
        if unit.kind in TRAINING_KINDS and resources.gpus > 1:
            launcher = (sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes",
                        str(resources.gpus), "--num_machines", "1", "-m")
        return replace(super().unit_spec(key), threads=resources.cpus, launcher=launcher)

    def check_leases(self) -> dict[str, str]:
        """For each unfinished unit with a lease: ``jobs_of`` gets its job when queued or running; the others (ended
        without results) map to why, returned. A job pending on a dependency that failed is cancelled here."""
        leases = {key: lease for key in self.plan.order if not self.finished(key)
                  for lease in [self.leases.read(self.plan.units[key].folder_name)] if lease}
        states = self.states([lease.job_id for lease in leases.values()]) if leases else {}
        dead: dict[str, str] = {}
        for key, lease in leases.items():
            state = states.get(lease.job_id, UNKNOWN)
            if state.never_runs:
                _run(["scancel", lease.job_id])
                dead[key] = f"job {lease.job_id} could not start: a unit it needs failed"
            elif state.live:
                self.jobs_of[key] = lease.job_id
            else:
                dead[key] = self.why_ended(key, lease.job_id, state)
        return dead

    def why_ended(self, key: str, job_id: str, state: JobState) -> str:
        if self.finished(key):
            return ""
        text = f"job {job_id} ended {state.state}" + (f" ({state.reason})" if state.reason not in ("", "None") else "")
        log = self.folder(key) / "log.txt"
        if state.state in ("FAILED", "COMPLETED") and log.is_file():
            text += f": {_last_line(log)}"
        elif state.state == "FAILED":
            job_log = sorted((self.out / "slurm" / "jobs" / job_id).glob("*_log.err"))
            if job_log:
                text += f": {_last_line(job_log[0])}"
        return text

    def run(self) -> None:
        order = self.plan.order
        self.mark_cached([key for key in order if self.finished(key)])
        dead = self.check_leases()
        pending = [key for key in order if key not in self.status and key not in self.jobs_of]
        live = [key for key in order if key in self.jobs_of]
        if self.arguments.collect:  # nothing submitted: a unit whose job ended without results failed
            for key in pending:
                if key in dead:
                    self.status[key] = "failed"
                    self.messages[key] = dead[key]
        else:
            for key in pending:
                needs = [need for need in self.plan.units[key].needs if self.status.get(need) != "cached"]
                missing = [need for need in needs if need not in self.jobs_of]
                if missing:  # its need could not be submitted (no job): neither can it run
                    self.status[key] = "skipped"
                    self.messages[key] = f"{self.plan.units[missing[0]].folder_name} was not submitted"
                    continue
                self.after[key] = [self.jobs_of[need] for need in needs]
                job_id = self.submit(self.unit_spec(key), self.job_name(key), self.resources[self.plan.units[key].kind],
                                     self.after[key])
                self.leases.write(self.plan.units[key].folder_name,
                                  Lease(job_id, time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                        self.resources[self.plan.units[key].kind].describe()))
                self.jobs_of[key] = job_id
                self.submitted.append(key)
                if key in dead:
                    self.resubmitted[key] = dead[key]
        self.announce(live, dead)
        for key in self.jobs_of:
            self.status[key] = "queued"
        if self.arguments.wait and self.jobs_of:
            self.follow()
        else:
            self.settle()

    def job_name(self, key: str) -> str:
        return f"wikiref-{self.plan.units[key].kind}-{self.plan.units[key].folder_name}"[:120]

    def announce(self, live: Sequence[str], dead: Mapping[str, str]) -> None:
        order = self.plan.order
        cached = sum(self.status.get(key) == "cached" for key in order)
        self.say(f"experiments: {len(order)} units, {cached} finished earlier, {len(live)} queued or running from an "
                 f"earlier run, {len(self.submitted)} submitted to Slurm now"
                 + (f" ({self.arguments.slurm_partition} partition)" if self.arguments.slurm_partition else ""))
        for key in self.submitted:
            unit = self.plan.units[key]
            again = f"; again: {self.resubmitted[key]}" if key in self.resubmitted else ""
            after = f", after job {', '.join(self.after[key])}" if self.after.get(key) else ""
            self.say(f"  job {self.jobs_of[key]}  {describe(unit)}  [{self.resources[unit.kind].describe()}{after}]"
                     f"{again}")
        if self.arguments.collect:
            for key, why in dead.items():
                self.say(f"  not finished: {self.plan.units[key].folder_name}: {why} (the same command without "
                         "--collect submits it again)")

    # -- following the jobs

    def follow(self) -> None:
        """Poll the jobs every ``--slurm_poll`` seconds until none is queued or running; a line per unit that ends,
        with the ETA of the rest. An interrupt stops the polling, not the jobs."""
        total = len(self.jobs_of)
        done = 0
        waiting = dict(self.jobs_of)
        try:
            while waiting:
                states = self.states(list(waiting.values()))
                for key, job_id in list(waiting.items()):
                    state = states.get(job_id, UNKNOWN)
                    if state.never_runs:
                        _run(["scancel", job_id])
                        state = JobState("CANCELLED", "a unit it needs failed")
                    if state.live:
                        continue
                    del waiting[key]
                    done += 1
                    self.unit_ended(key, job_id, state, f"[{done}/{total}] {describe(self.plan.units[key])}",
                                    [*waiting], running=sum(states.get(job, JobState("")).state == "RUNNING"
                                                            for job in waiting.values()))
                if waiting:
                    time.sleep(self.poll_seconds)
        except KeyboardInterrupt:
            self.say(f"experiments: stopped following; the {len(waiting)} job(s) left go on in Slurm: "
                     f"{self.collect_hint()}")
            self.settle()
            raise

    def unit_ended(self, key: str, job_id: str, state: JobState, prefix: str, rest: Sequence[str],
                   running: int) -> None:
        self.jobs_of.pop(key, None)
        if self.finished(key):
            self.status[key] = "ran"
            self._record_seconds(key)
            seconds = self.seconds.get(self.plan.units[key].kind, [0.0])[-1]
            if not self.arguments.quiet:
                self.say(f"{prefix}: done in {format_seconds(seconds)} (job {job_id})"
                         + (f"; {self.eta(rest, max(1, running))} for {len(rest)} more" if rest else ""))
            return
        failed_need = next((need for need in self.plan.units[key].needs
                            if self.status.get(need) in ("failed", "skipped")), None)
        self.status[key] = "skipped" if failed_need else "failed"
        self.messages[key] = (f"{self.plan.units[failed_need].folder_name} failed" if failed_need
                              else self.why_ended(key, job_id, state))
        self.say(f"{prefix}: {self.status[key].upper()}: {self.messages[key]}")

    def settle(self) -> None:
        """Statuses for the report when not following to the end: a unit whose job is queued or running stays
        ``queued`` or ``running``; one that ended is ``ran`` or ``failed`` (with why)."""
        if not self.jobs_of:
            return
        states = self.states(list(self.jobs_of.values()))
        for key, job_id in list(self.jobs_of.items()):
            state = states.get(job_id, UNKNOWN)
            if state.live:
                self.status[key] = "running" if state.state == "RUNNING" else "queued"
            elif self.finished(key):
                self.status[key] = "ran"
                self._record_seconds(key)
            else:
                self.status[key] = "failed"
                self.messages[key] = self.why_ended(key, job_id, state)

    def collect_hint(self) -> str:
        return ("collect the results with the same command and --collect (or the same command again, which also "
                "submits what did not finish); squeue --me shows the jobs")

    def closing_lines(self) -> list[str]:
        """What the closing summary adds for Slurm: the units resubmitted and why, and those still in Slurm."""
        lines = [f"resubmitted {self.plan.units[key].folder_name} (job {self.jobs_of.get(key, '?')}): {why}"
                 for key, why in self.resubmitted.items()]
        queued = [key for key, status in self.status.items() if status in ("queued", "running")]
        if queued:
            lines.append(f"{len(queued)} unit(s) queued or running in Slurm: {self.collect_hint()}")
        return lines

    # -- submitting with submitit

    def submit_with_submitit(self, spec: UnitSpec, job_name: str, resources: Resources,
                             dependencies: Sequence[str]) -> str:
        import submitit

        executor = submitit.SlurmExecutor(folder=self.out / "slurm" / "jobs" / "%j", max_num_timeout=0)
        parameters: dict[str, Any] = {
            "job_name": job_name, "time": resources.minutes, "cpus_per_task": resources.cpus,
            "mem": f"{max(1, round(resources.mem_gb * 1024))}M", "nodes": 1, "ntasks_per_node": 1,
            "additional_parameters": dict(self.sbatch_options)}
        if resources.gpus:
            parameters["gpus_per_node"] = resources.gpus
        if self.arguments.slurm_partition:
            parameters["partition"] = self.arguments.slurm_partition
        if dependencies:
            parameters["dependency"] = "afterok:" + ":".join(dependencies)
        executor.update_parameters(**parameters)
        try:
            job = executor.submit(run_unit_job, spec)
        except Exception as error:  # noqa: BLE001 (sbatch's refusal, in one line)
            message = str(error).strip().splitlines()
            raise ExperimentError(f"sbatch refused {job_name}: {message[-1] if message else error}") from None
        return str(job.job_id)


def run_unit_job(spec: UnitSpec) -> str:
    """A unit's Slurm job (called by submitit on the node): run it as the local executor does; an exception when it
    fails, so the job ends FAILED and the jobs that need it (``afterok``) never start."""
    status, message = execute_unit(spec)
    if status != "ran":
        raise RuntimeError(f"unit {spec.folder.name} failed: {message}")
    return str(spec.folder)
