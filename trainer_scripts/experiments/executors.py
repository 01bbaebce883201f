"""Running the plan's units: the local executor (:class:`Runner`, one unit after another or ``--jobs`` at once, each
in a fresh Python process or in this one), and the data units (a share of a DUC year, a slice of WikiRef)."""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_scripts.experiments.common import QBERT_SYSTEM, RESULTS_NAME, ExperimentError, code_fingerprint
from trainer_scripts.experiments.options import SCRIPTS, ExperimentArguments
from trainer_scripts.experiments.plan import Plan, Unit
from wikiref_dataset.utils.formatting import format_seconds

# ---- running the units --------------------------------------------------------------------------------------------


class Runner:
    """Runs the plan's unfinished units in order, one line per unit with the ETA of the rest."""

    def __init__(self, plan: Plan, out: Path, arguments: ExperimentArguments,
                 loaded: Sequence[Any] | None = None) -> None:
        self.plan, self.out, self.arguments = plan, out, arguments
        self.loaded = loaded  # the DUC years as loaded: what the estimates of the units' time read
        self.status: dict[str, str] = {}  # key -> cached, ran, failed, skipped
        self.at_once = 1  # units running at once (run() sets it from --jobs)
        self.threads: int | None = None  # torch threads of each unit's process when units run side by side
        self.processes: set[subprocess.Popen] = set()  # the units' processes running now
        self.seconds: dict[str, list[float]] = {}
        self.messages: dict[str, str] = {}
        self.estimates: dict[str, float | None] = {}  # unit key -> the dry run's estimate of its seconds
        self._estimator: Any = None

    def folder(self, key: str) -> Path:
        return self.out / "units" / self.plan.units[key].folder_name

    def argv(self, key: str) -> list[str]:
        unit = self.plan.units[key]
        rendered = []
        for token in unit.template:
            token = token.replace("{out}", str(self.folder(key)))
            for need in unit.needs:
                token = token.replace(f"{{unit:{need}}}", str(self.folder(need)))
            rendered.append(token)
        return rendered

    def finished(self, key: str) -> bool:
        return (self.folder(key) / RESULTS_NAME).is_file()

    @functools.cached_property
    def code(self) -> str:
        """This checkout's code fingerprint (:func:`~trainer_scripts.experiments.common.code_fingerprint`)."""
        return code_fingerprint()

    def unit_record(self, key: str) -> dict[str, Any]:
        """Unit ``key``'s ``unit.json`` (empty when missing or unreadable)."""
        try:
            record = json.loads((self.folder(key) / "unit.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return {}
        return record if isinstance(record, dict) else {}

    def mark_cached(self, keys: Sequence[str]) -> None:
        """The finished units ``keys`` are reused: their status, their recorded times (for the ETA), and one line
        naming those another code produced (their results are reused as they are). Each ``unit.json`` read once."""
        other = []
        for key in keys:
            record = self.unit_record(key)
            self.status[key] = "cached"
            self._record_seconds(key, record)
            if record.get("code") != self.code:
                other.append(self.plan.units[key].folder_name)
        if other:
            shown = ", ".join(other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3 else "")
            self.say(f"experiments: {len(other)} finished unit(s) were produced by other code than this checkout's "
                     f"(code {self.code}), and their results are reused as they are: {shown}; delete a unit's folder "
                     "under units/ to run it again")

    def _record_seconds(self, key: str, record: Mapping[str, Any] | None = None) -> None:
        seconds = (record if record is not None else self.unit_record(key)).get("seconds")
        if isinstance(seconds, (int, float)):
            self.seconds.setdefault(self.plan.units[key].kind, []).append(float(seconds))

    def eta(self, remaining: Sequence[str], jobs: int = 1) -> str:
        """The time the ``remaining`` units should take, ``jobs`` at once: a unit of a kind already timed here takes
        that kind's mean; one of a kind not timed yet (a fine-tuning after the baselines) its estimate as ``--dry_run``
        makes it (`trainer_scripts.estimate`, training units only), never another kind's time."""
        total, unknown = 0.0, 0
        for key in remaining:
            kind = self.plan.units[key].kind
            seconds = (statistics.fmean(self.seconds[kind]) if self.seconds.get(kind)
                       else self.estimate_seconds(key))
            if seconds is None:
                unknown += 1
            else:
                total += seconds
        if unknown == len(remaining):
            return "ETA unknown"
        eta = f"ETA {format_seconds(total / max(1, min(jobs, len(remaining))))}"
        return eta + (f" + {unknown} unit(s) not estimated" if unknown else "")

    def estimate_seconds(self, key: str) -> float | None:
        """The dry run's estimate of a training unit's seconds (measured once per setting, then kept), or ``None``:
        not a training unit, ``--estimate false``, or not estimable (its data made by another unit)."""
        unit = self.plan.units[key]
        if unit.kind not in ("finetune", "pretrain") or not self.arguments.estimate or self.loaded is None:
            return None
        if key not in self.estimates:
            if self._estimator is None:
                self.say(f"experiments: estimating the {unit.kind} units' time from a few training steps, as "
                         "--dry_run does (--estimate false skips it)")
            try:
                self.estimates[key] = self.estimator(self.threads).estimate(unit.kind, self.argv(key)).seconds
            except Exception as error:  # noqa: BLE001 (an estimate is a courtesy: the units still run)
                logging.getLogger(__name__).debug("no estimate for %s: %s", unit.folder_name, error)
                self.estimates[key] = None
        return self.estimates[key]

    def estimator(self, threads: int | None) -> Any:
        """The plan's `trainer_scripts.estimate.Estimator` (built on first use, with ``threads`` torch threads as a
        unit would have): the dry run's estimates and the ETA of a kind not timed yet."""
        if self._estimator is None:
            from trainer_scripts.estimate import Estimator

            self._estimator = Estimator(self.loaded, self.plan.inputs.encoder, self.plan.inputs.wikiref,
                                        threads=threads)
        return self._estimator

    def jobs(self) -> int:
        """How many units run at once (``--jobs``; 0 chooses, see its help); 1 when units run in this process."""
        if not self.arguments.subprocess:
            return 1
        if self.arguments.jobs < 0:
            raise ExperimentError(f"--jobs must be 0 (choose) or more, got {self.arguments.jobs}")
        if self.arguments.jobs:
            return self.arguments.jobs
        from trainer_scripts.common import accelerator_available

        return 1 if accelerator_available() else max(1, min(2, os.cpu_count() or 1))

    @staticmethod
    def threads_per_unit(jobs: int) -> int | None:
        """Torch threads of each unit's process with ``jobs`` units at once (the cores shared); ``None`` for one unit
        at a time (the process's own default)."""
        return max(1, (os.cpu_count() or 1) // jobs) if jobs > 1 else None

    def failed_need(self, key: str) -> str | None:
        """A unit ``key`` needs that failed or was skipped (its folder name), or ``None``."""
        failed = [need for need in self.plan.units[key].needs if self.status.get(need) in ("failed", "skipped")]
        return self.plan.units[failed[0]].folder_name if failed else None

    def run(self) -> None:
        order = self.plan.order
        unfinished = {key for key in order if not self.finished(key)}
        # a finished fine-tuning whose weights --keep_models false deleted, needed by a unit still to run (a benchmark
        # added since): trained again
        unfinished |= {need for key in unfinished for need in self.plan.units[key].needs
                       if self.plan.units[need].kind == "finetune" and not any(self.folder(need).glob("*.safetensors"))}
        pending = [key for key in order if key in unfinished]
        self.mark_cached([key for key in order if key not in pending])
        kinds = ", ".join(f"{count} {kind}" for kind, count in _kinds(self.plan.units, pending))
        if pending:
            self.say(f"experiments: {len(order)} units, {len(order) - len(pending)} finished earlier, {len(pending)} "
                     f"to run ({kinds})")
        else:
            self.say(f"experiments: all {len(order)} units finished earlier; nothing to run")
        self.at_once = min(self.jobs(), max(1, len(pending)))
        if self.at_once > 1:
            self.threads = self.threads_per_unit(self.at_once)
            self.say(f"experiments: {self.at_once} units at a time, {self.threads} thread(s) each")
            self._run_parallel(pending, self.at_once)
            return
        for index, key in enumerate(pending, 1):
            prefix = f"[{index}/{len(pending)}] {describe(self.plan.units[key])}"
            failed = self.failed_need(key)
            if failed:
                self.status[key] = "skipped"
                self.say(f"{prefix}: skipped, {failed} failed")
                continue
            started = time.perf_counter()
            status, message = self.run_unit(key)
            self._finished(key, status, message, time.perf_counter() - started, prefix, pending[index:])

    def _finished(self, key: str, status: str, message: str, seconds: float, prefix: str,
                  rest: Sequence[str]) -> None:
        unit = self.plan.units[key]
        self.status[key] = status
        if status == "ran":
            self.seconds.setdefault(unit.kind, []).append(seconds)
            self.release_models(key)
            if not self.arguments.quiet:  # the ETA may measure a few training steps: only when it is shown
                self.say(f"{prefix}: done in {format_seconds(seconds)}"
                         + (f"; {self.eta(rest, self.at_once)} for {len(rest)} more" if rest else ""))
        else:
            self.messages[key] = message
            self.say(f"{prefix}: FAILED after {format_seconds(seconds)}: {message}")

    def _run_parallel(self, pending: Sequence[str], jobs: int) -> None:
        """Run ``pending`` with up to ``jobs`` units at once, each unit once the units it needs have finished (in
        plan order otherwise); a unit whose need failed is skipped. An interrupt ends the running units."""
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        waiting = list(pending)
        running: dict[Any, tuple[str, float, str]] = {}
        count = 0
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            try:
                while waiting or running:
                    for key in list(waiting):
                        if len(running) >= jobs:
                            break
                        failed = self.failed_need(key)
                        if failed:
                            waiting.remove(key)
                            count += 1
                            self.status[key] = "skipped"
                            self.say(f"[{count}/{len(pending)}] {describe(self.plan.units[key])}: skipped, {failed} "
                                     "failed")
                            continue
                        if all(self.status.get(need) in ("ran", "cached") for need in self.plan.units[key].needs):
                            waiting.remove(key)
                            count += 1
                            prefix = f"[{count}/{len(pending)}] {describe(self.plan.units[key])}"
                            running[pool.submit(self.run_unit, key)] = (key, time.perf_counter(), prefix)
                    if not running:
                        continue  # everything left waits on a unit that was skipped: the loop above skips it next
                    done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                    for future in done:
                        key, started, prefix = running.pop(future)
                        status, message = future.result()
                        rest = [*waiting, *(item[0] for item in running.values())]
                        self._finished(key, status, message, time.perf_counter() - started, prefix, rest)
            except BaseException:
                for process in list(self.processes):
                    process.terminate()
                raise

    def job_resources(self, key: str) -> str | None:
        """What unit ``key``'s job asks a cluster for (``--dry_run`` shows it); ``None``: units run here."""
        return None

    def closing_lines(self) -> list[str]:
        """Lines the closing summary adds about the units' execution (none for the local executor)."""
        return []

    def say(self, line: str) -> None:
        if not self.arguments.quiet:
            print(line, file=sys.stderr, flush=True)

    def unit_spec(self, key: str) -> UnitSpec:
        """What running unit ``key`` takes, as :func:`execute_unit` (here or in a Slurm job) reads it."""
        unit = self.plan.units[key]
        argv = self.argv(key)
        record = {"kind": unit.kind, "key": key, "script": unit.script, "argv": argv,
                  "params": unit.params, "rows": sorted(unit.rows), "inputs": {path: unit.identity[path]
                                                                              for path in unit.inputs},
                  "code": self.code}
        return UnitSpec(kind=unit.kind, folder=self.folder(key), argv=argv, record=record, params=unit.params,
                        subprocess=self.arguments.subprocess, threads=self.threads,
                        keep_models=self.arguments.keep_models or bool(self.dependents(key)),
                        script=unit.script or "")

    def dependents(self, key: str) -> list[str]:
        """The units that start from unit ``key`` (a benchmark's zero-shot evaluation of a DUC fine-tuning)."""
        return [other for other, unit in self.plan.units.items() if key in unit.needs]

    def release_models(self, key: str) -> None:
        """``--keep_models false``: delete the weights of the fine-tunings unit ``key`` started from once every unit
        that needs them has finished (their own deletion waited for those units)."""
        if self.arguments.keep_models:
            return
        for need in self.plan.units[key].needs:
            if self.plan.units[need].kind == "finetune" and all(self.finished(other) for other in self.dependents(need)):
                for weights in self.folder(need).glob("*.safetensors"):
                    weights.unlink()

    def run_unit(self, key: str) -> tuple[str, str]:
        """Run one unit in a clean folder; ``("ran", "")`` or ``("failed", why)``."""
        return execute_unit(self.unit_spec(key), processes=self.processes)


@dataclass(frozen=True)
class UnitSpec:
    """One unit as it runs: where (``folder``, emptied first), what (``kind``, the script's ``argv``, a data unit's
    ``params``), how (in a fresh process or this one, its torch threads, a ``launcher`` such as ``accelerate launch``
    before ``-m trainer_scripts.<script>``) and the ``record`` written to its ``unit.json``. Plain data: a Slurm job
    receives it pickled."""

    kind: str
    folder: Path
    argv: list[str]
    record: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)
    subprocess: bool = True
    threads: int | None = None
    keep_models: bool = True
    launcher: tuple[str, ...] | None = None
    script: str = ""
    """The script run (default: its kind's, :data:`SCRIPTS`)."""


def execute_unit(spec: UnitSpec, processes: set[subprocess.Popen] | None = None) -> tuple[str, str]:
    """Run one unit in a clean folder (the local executor, or a Slurm job on its node); ``("ran", "")`` or
    ``("failed", why)``. The unit is finished only when its script succeeded and wrote ``results.json``, and its
    ``unit.json`` then says how many seconds it took."""
    folder = spec.folder
    if folder.exists():  # an interrupted or failed earlier attempt: start again
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    record = {**spec.record, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    write_json(folder / "unit.json", record)
    log = folder / "log.txt"
    script = spec.script or SCRIPTS.get(spec.kind, "")
    started = time.perf_counter()
    try:
        if spec.kind == "data":
            import contextlib

            with open(log, "a", encoding="utf-8") as handle, contextlib.redirect_stderr(handle):
                make_data(spec.params, folder)
            status = 0
        elif spec.subprocess:
            status = run_script_process(script, spec.argv, log, threads=spec.threads, processes=processes,
                                        launcher=spec.launcher)
        else:
            status = run_script_inline(script, spec.argv, log)
        if status == 0 and spec.kind in ("evaluate", "baselines"):
            finish_evaluation(spec.kind, folder, spec.argv, script)
    except Exception as error:  # noqa: BLE001 (a data unit's or a metrics file's problem is this unit's failure)
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"\n{type(error).__name__}: {error}\n")
        status = 1
    seconds = time.perf_counter() - started
    results = folder / RESULTS_NAME
    if status != 0 or not results.is_file():
        if results.is_file():
            results.unlink()  # a unit is finished only when its script succeeded
        return "failed", f"exit {status}; {_last_line(log)} (log: {log})"
    if spec.kind == "finetune" and not spec.keep_models:
        for weights in folder.glob("*.safetensors"):
            weights.unlink()
    write_json(folder / "unit.json", {**record, "seconds": round(seconds, 2)})
    return "ran", ""


def _kinds(units: Mapping[str, Unit], keys: Iterable[str]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for key in keys:
        counts[units[key].kind] = counts.get(units[key].kind, 0) + 1
    return list(counts.items())


def describe(unit: Unit) -> str:
    rows = ", ".join(sorted(unit.rows)) if unit.rows else "all rows"
    return f"{unit.kind} {unit.what} ({rows})"


def _last_line(log: Path) -> str:
    try:
        lines = [line.strip() for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
                 if line.strip()]
    except OSError:
        return "no log"
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["no output"])[-1][:300]


def write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, default=str) + "\n", encoding="utf-8")


def _package_root() -> str:
    return str(Path(__file__).resolve().parents[1])


def run_script_process(script: str, argv: Sequence[str], log: Path, threads: int | None = None,
                       processes: set[subprocess.Popen] | None = None,
                       launcher: Sequence[str] | None = None) -> int:
    """``python -m trainer_scripts.<script> argv`` in a fresh process (this Python, this code), or ``launcher`` (which
    ends with ``-m``: ``accelerate launch ... -m``) before the module, output into ``log``, with ``threads`` torch
    threads (``OMP_NUM_THREADS``) when given; listed in ``processes`` while it runs. The process
    ends with the runner: killed with it (`wikiref_dataset.process.lifetime.die_with_parent`), and terminated when the runner
    stops on an exception (Ctrl-C included)."""
    from wikiref_dataset.process.lifetime import die_with_parent

    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [_package_root(), environment.get("PYTHONPATH")]))
    if threads is not None:
        environment["OMP_NUM_THREADS"] = str(threads)
    with open(log, "ab") as handle:
        command = [*(launcher or (sys.executable, "-m")), f"trainer_scripts.{script}", *argv]
        unit = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=environment,
                                preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)
        if processes is not None:
            processes.add(unit)
        try:
            return unit.wait()
        except BaseException:
            unit.terminate()
            unit.wait()
            raise
        finally:
            if processes is not None:
                processes.discard(unit)


def run_script_inline(script: str, argv: Sequence[str], log: Path) -> int:
    """``trainer_scripts/<script>.py``'s ``main(argv)`` in this process (the file run as a program,
    :func:`trainer_scripts.common.script_main`), its output and log lines into ``log``."""
    import contextlib
    import traceback

    from trainer_scripts.common import script_main

    main = script_main(script)
    root = logging.getLogger()
    others = [item for item in logging.root.manager.loggerDict.values() if isinstance(item, logging.Logger)]
    with open(log, "a", encoding="utf-8") as handle:
        # while the unit runs, its log lines go to its log: the console handlers (plain StreamHandlers) are taken off
        # the root logger (ours takes their place, so the script's logging.basicConfig adds none) or, on libraries'
        # own loggers (transformers'), pointed at the log
        consoles = [handler for handler in root.handlers if type(handler) is logging.StreamHandler]
        for console in consoles:
            root.removeHandler(console)
        handler = logging.StreamHandler(handle)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        moved = [(console, console.setStream(handle)) for item in others for console in item.handlers
                 if type(console) is logging.StreamHandler]
        try:
            with contextlib.redirect_stdout(handle), contextlib.redirect_stderr(handle):
                return int(main(list(argv)) or 0)
        except SystemExit as error:  # a bad command line: argparse exits
            return error.code if isinstance(error.code, int) else 1
        except Exception:  # noqa: BLE001 (a unit's crash is its own: recorded in its log, the others go on)
            traceback.print_exc(file=handle)
            return 1
        finally:
            root.removeHandler(handler)
            for console in consoles:
                root.addHandler(console)
            for console, stream in moved:
                console.setStream(stream)
            for item in [root, *logging.root.manager.loggerDict.values()]:  # handlers made during the unit
                for console in getattr(item, "handlers", []):
                    if isinstance(console, logging.StreamHandler) and console.stream is handle:
                        console.setStream(sys.stderr)


def finish_evaluation(kind: str, folder: Path, argv: Sequence[str], script: str = "evaluate_duc") -> None:
    """``results.json`` of an ``evaluate_duc.py`` or ``evaluate_qfs.py`` unit (`EvaluationUnitResults`), from its
    ``--out``: the model's rows renamed to the fine-tuning units' system name (:data:`QBERT_SYSTEM`, and
    ``Q-BERT (greedy)`` for its row under another rule), their rules with them; written last.

    Raises:
        ResultsError: ``--out`` is not an evaluation record (the unit fails).
    """
    from trainer_scripts.results import EvaluationResults, EvaluationUnitResults, read_results_file

    metrics = folder / "metrics.json"
    evaluation = EvaluationResults.from_dict(read_results_file(metrics), str(metrics))
    if kind == "evaluate":
        model = Path(argv[argv.index("--model") + 1]).name
        renamed = {name: QBERT_SYSTEM + name[len(model):] for name in evaluation.systems
                   if name == model or name.startswith(model + " (")}
        evaluation.systems = {renamed[name]: values for name, values in evaluation.systems.items() if name in renamed}
        evaluation.rules = {renamed[name]: rule for name, rule in (evaluation.rules or {}).items()
                            if name in renamed} or None
    unit = EvaluationUnitResults(script=script, command=list(argv), evaluation=evaluation)
    write_json(folder / RESULTS_NAME, unit.to_dict())


def make_data(params: Mapping[str, Any], folder: Path) -> None:
    """A data unit: a share of a DUC year's clusters (Fig. 4) or a slice of WikiRef's training split (Fig. 6), as a
    folder ``folder/dataset`` the scripts load like the original; then ``results.json``."""
    if params["make"] == "duc_share":
        summary = _duc_share(params["source"], params["fraction"], params["data_seed"], folder / "dataset")
    elif params["make"] == "wikiref_slice":
        summary = _wikiref_slice(params["source"], tuple(params["slice"]), folder / "dataset")
    else:
        raise ValueError(f"unknown data unit {params['make']!r}")
    print(json.dumps(summary), file=sys.stderr)
    write_json(folder / RESULTS_NAME, {"script": "run_experiments", "data": dict(params), **summary})


def _duc_share(source: str, fraction: float, data_seed: int, out: Path) -> dict[str, Any]:
    """The clusters of a converted year kept at random (``data_seed``; a smaller share keeps a subset of a larger
    one), written with `wikiref_dataset.duc.reader.write_duc`."""
    import random

    from wikiref_dataset.duc.reader import DucStats, load_duc, write_duc

    rows = sorted(load_duc(source), key=lambda row: row["topic_id"])
    year = rows[0]["year"]
    order = list(range(len(rows)))
    random.Random(f"{data_seed}:{year}").shuffle(order)
    keep = sorted(order[:max(1, math.ceil(fraction * len(rows)))])
    kept = [rows[index] for index in keep]
    stats = DucStats(year=year, clusters=len(kept), documents=sum(len(row["documents"]) for row in kept),
                     sentences=sum(len(document["sentences"]) for row in kept for document in row["documents"]),
                     references=sum(len(row["references"]) for row in kept))
    write_duc(kept, out, stats, f"{len(kept)} of the {len(rows)} clusters of {source}")
    return {"clusters": len(kept), "of": len(rows), "topics": [row["topic_id"] for row in kept]}


def _wikiref_slice(source: str, bounds: tuple[float, float], out: Path) -> dict[str, Any]:
    """WikiRef with its training split cut to the examples between the ``bounds`` quantiles of oracle ROUGE-2 recall
    (ascending; ties in the split's order); the other splits as they are."""
    from wikiref_dataset.process.folders import load_dataset_folder

    loaded = load_dataset_folder(source)
    if "train" not in loaded or "oracle_rouge2_recall" not in loaded["train"].column_names:
        raise ValueError(f"{source}: no train split with an oracle_rouge2_recall column to sort by quality")
    train = loaded["train"]
    scores = train["oracle_rouge2_recall"]
    ranked = sorted(range(len(scores)), key=lambda index: (scores[index], index))
    low, high = (round(bound * len(ranked)) for bound in bounds)
    selected = sorted(ranked[low:high])
    (out / "data").mkdir(parents=True)
    files = {}
    for split, dataset in loaded.items():
        part = train.select(selected) if split == "train" else dataset
        files[split] = f"data/{split}-00000-of-00001.parquet"
        part.to_parquet(str(out / files[split]))
    front = ["---", "configs:", "- config_name: default", "  data_files:"]
    front += [line for split, name in files.items() for line in (f"  - split: {split}", f"    path: {name}")]
    (out / "README.md").write_text("\n".join([*front, "---", "", f"# WikiRef, training examples {low}-{high} of "
                                              f"{len(ranked)} by oracle ROUGE-2 recall", "",
                                              f"Derived from `{source}` by the experiments runner (Fig. 6).", ""]),
                                   encoding="utf-8")
    return {"train_examples": len(selected), "of": len(ranked),
            "oracle_rouge2_recall": [scores[ranked[low]], scores[ranked[high - 1]]] if selected else None}
