"""The run: the results folder, planning, running, scoring and reporting in order; ``--dry_run``; the script's
parser and entry point (``run_experiments.py`` and ``wikiref experiments`` call :func:`run_experiments`)."""

from __future__ import annotations

import logging
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainer_scripts.experiments.common import OWNED, RESULTS_NAME, ExperimentError, UnitsFailed
from trainer_scripts.experiments.executors import Runner, describe, write_json
from trainer_scripts.experiments.options import (
    ExperimentArguments,
    check_runner_options,
    list_rows,
    route_options,
    script_options,
    select_rows,
    unavailable_rows,
)
from trainer_scripts.experiments.plan import Plan, check_inputs, load_duc_dirs, make_plan
from trainer_scripts.experiments.report import Report
from trainer_scripts.experiments.tables import ROW_BY_NAME, ROWS
from wikiref_dataset.utils.formatting import format_seconds

# ---- the run ------------------------------------------------------------------------------------------------------


def check_out_folder(out: str) -> Path:
    """The results folder: refused when it is a file or holds what this runner did not write."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ExperimentError(f"{out}: exists and is not a folder; choose another --out")
    if folder.is_dir():
        foreign = sorted(entry.name for entry in folder.iterdir() if entry.name not in OWNED)
        if foreign:
            raise ExperimentError(f"{out} holds files this command did not write ({', '.join(foreign[:3])}); choose "
                                  "another --out")
    return folder


def run_experiments(arguments: ExperimentArguments, extra: Sequence[str] = ()) -> int:
    """Plan, run the unfinished units, write the results folder; returns 0.

    Raises:
        ExperimentError: bad input (in one line, before anything is written).
        UnitsFailed: some units failed (the others' results are written).
    """
    if arguments.list_rows:
        print(list_rows())
        return 0
    out = check_out_folder(arguments.out)
    rows, left_out = select_rows(arguments.rows, arguments.wikiref)
    if arguments.baselines and any(ROW_BY_NAME[name].duc is not None for name in rows):
        rows = [row.name for row in ROWS if row.name in rows or row.duc == "baseline"]
    # the DUC folders before the scripts' options (which import transformers), unless there are pass-through options,
    # whose errors come first
    loaded = None if extra else load_duc_dirs(arguments)
    check_runner_options(arguments, extra)  # before the scripts' options, which import transformers
    known = script_options()
    options = route_options(arguments, list(extra), rows, known)
    unavailable = unavailable_rows(rows, known)
    if unavailable and all(name in unavailable for name in rows if ROW_BY_NAME[name].duc != "baseline"):
        raise ExperimentError(next(iter(unavailable.values())))
    for message in unavailable.values():
        print(f"experiments: warning: {message}", file=sys.stderr)
    rows = [name for name in rows if name not in unavailable]
    if loaded is None:
        loaded = load_duc_dirs(arguments)
    inputs = check_inputs(arguments, loaded)
    plan = make_plan(arguments, inputs, rows, options)
    if left_out and not arguments.quiet:  # once the input has passed its checks: an error comes alone
        print(f"experiments: note: without --wikiref, not running {', '.join(left_out)}", file=sys.stderr)
    runner = make_runner(plan, out.resolve(), arguments, loaded)
    if arguments.dry_run:
        dry_run(plan, runner, arguments)
        if unavailable:
            raise UnitsFailed("; ".join(unavailable.values()))
        return 0
    from wikiref_dataset.process.locks import FolderLock

    with FolderLock(out, command=f"experiments --out {arguments.out}", wait=arguments.wait):  # one run per folder
        out.mkdir(parents=True, exist_ok=True)
        try:
            runner.run()
        finally:  # an interrupt or a failure still leaves the tables of what finished
            report = Report(plan, runner, arguments, list(extra), unavailable=unavailable)
            figures = report.figures(out)
            write_json(out / RESULTS_NAME, report.to_json(figures))
            (out / "results.md").write_text(report.to_markdown(figures), encoding="utf-8")
    print(report.closing_table())
    ran = sum(status == "ran" for status in runner.status.values())
    cached = sum(status == "cached" for status in runner.status.values())
    failed = [key for key, status in runner.status.items() if status in ("failed", "skipped")]
    queued = sum(status in ("queued", "running") for status in runner.status.values())
    for line in runner.closing_lines():
        print(line, file=sys.stderr)
    print(f"\n{ran} unit(s) run, {cached} finished earlier, " + (f"{queued} queued or running, " if queued else "")
          + f"{len(failed)} failed or skipped; wrote {out}/results.md, {out}/results.json"
          + (f" and {len(figures)} figure(s)" if figures else ""), file=sys.stderr)
    if failed:
        first = runner.messages.get(failed[0]) or "a unit it needs failed"
        raise UnitsFailed(f"{len(failed)} unit(s) did not finish, e.g. {plan.units[failed[0]].folder_name}: {first}; "
                          "rerun the same command to retry them")
    if unavailable:
        raise UnitsFailed("; ".join(unavailable.values()))
    return 0


def make_runner(plan: Plan, out: Path, arguments: ExperimentArguments, loaded: Sequence[Any]) -> Runner:
    """The executor ``--executor`` names: :class:`Runner` (local) or the Slurm one
    (`trainer_scripts.experiments.slurm`), which checks its options and that a cluster answers."""
    if arguments.executor == "local":
        if arguments.collect:
            raise ExperimentError("--collect reads the jobs of --executor slurm; a local run has nothing to collect")
        return Runner(plan, out, arguments, loaded=loaded)
    if arguments.executor != "slurm":
        raise ExperimentError(f"--executor {arguments.executor!r}: expected local or slurm")
    from trainer_scripts.experiments.slurm import SlurmRunner, require_slurm

    runner = SlurmRunner(plan, out, arguments, loaded=loaded)  # the resource options' errors first
    if not arguments.dry_run:
        require_slurm()
    return runner


def dry_run(plan: Plan, runner: Runner, arguments: ExperimentArguments) -> None:
    """Print every unit, finished or to run (with its command and, with ``--estimate``, its estimated time on this
    machine: `trainer_scripts.estimate`), and the totals; nothing is run or written."""
    print(f"recipe {plan.inputs.recipe.name} ({plan.inputs.recipe_chosen})", file=sys.stderr)
    jobs = runner.jobs()
    estimator = runner.estimator(runner.threads_per_unit(jobs)) if arguments.estimate else None
    total, unknown, speeds = 0.0, 0, {}
    for key in plan.order:
        unit = plan.units[key]
        finished = runner.finished(key)
        line = f"{'finished' if finished else 'to run':<9} {unit.folder_name}  {describe(unit)}"
        if not finished and estimator is not None and unit.kind in ("finetune", "pretrain"):
            estimate = estimator.estimate(unit.kind, runner.argv(key))
            if estimate.seconds is None:
                line += f"  (not estimated: {estimate.note})"
                unknown += 1
            else:
                total += estimate.seconds
                speeds[estimate.speed.describe] = estimate.speed
                line += (f"  ~{format_seconds(estimate.seconds)} ({estimate.train_windows:,} training windows, "
                         f"{estimate.test_windows:,} test windows)")
        resources = None if finished else runner.job_resources(key)  # --executor slurm: what each job asks for
        print(line + (f"  [{resources}]" if resources else ""))
        if not finished and unit.kind != "data":
            print(f"          {unit.script}.py {shlex.join(runner.argv(key))}")
    pending = sum(not runner.finished(key) for key in plan.order)
    print(f"{len(plan.order)} units, {pending} to run (dry run: nothing run or written)", file=sys.stderr)
    for describe_speed, speed in speeds.items():
        print(f"measured here: {speed.train:.2f} training windows/s, {speed.score:.2f} scoring windows/s "
              f"({describe_speed})", file=sys.stderr)
    if total:
        print(f"estimated training and testing time: {format_seconds(total)} of unit time"
              + (f", about {format_seconds(total / jobs)} with {jobs} units at a time" if jobs > 1 else "")
              + (f"; {unknown} unit(s) not estimated" if unknown else "")
              + " (loading and the baselines not counted)", file=sys.stderr)


def build_parser() -> Any:
    """The script's `HfArgumentParser` over :class:`ExperimentArguments` (unknown options kept for the units)."""
    from transformers import HfArgumentParser

    from wikiref_dataset.command import one_line_errors

    return one_line_errors(HfArgumentParser(ExperimentArguments, prog="run_experiments.py", allow_abbrev=False,
                                            description=_package_description()))


def _package_description() -> str:
    import trainer_scripts.experiments as package

    return (package.__doc__ or "").split("\n\n")[0]


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    arguments, extra = parser.parse_args_into_dataclasses(args=argv, return_remaining_strings=True)
    return run_reporting_errors("run_experiments.py", arguments, extra)


def run_reporting_errors(prog: str, arguments: ExperimentArguments, extra: Sequence[str] = ()) -> int:
    """:func:`run_experiments` with its errors as one line on stderr (``PROG: error: ...``): exit 2 for bad input or
    a folder another run holds, 1 when units failed, else 0."""
    from wikiref_dataset.process.locks import FolderLocked

    try:
        return run_experiments(arguments, extra)
    except (ExperimentError, FolderLocked) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    except UnitsFailed as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
