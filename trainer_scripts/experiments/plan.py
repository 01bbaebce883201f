"""The plan: the input folders and their identity, the folds, and the units (one cached run of a script each, keyed
by what feeds it) that the chosen rows need, in an order where a unit comes after those it starts from."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trainer_scripts.experiments.common import ExperimentError
from trainer_scripts.experiments.options import SCRIPTS, ExperimentArguments, StageOptions, option_name, split_options
from trainer_scripts.experiments.tables import QUALITY_SLICES, ROW_BY_NAME, Pretraining, Row

# ---- inputs -------------------------------------------------------------------------------------------------------


def folder_identity(path: str | Path) -> str:
    """A digest of a folder's (or a file's) resolved path and the relative path, size and modification time of every
    file in it: a changed, added or removed file changes it."""
    path = Path(path).resolve()
    entries: list[Any] = [str(path)]
    files = [path] if path.is_file() else sorted(item for item in path.rglob("*") if item.is_file())
    for item in files:
        stat = item.stat()
        entries.append([str(item.relative_to(path)) if item != path else item.name, stat.st_size, stat.st_mtime_ns])
    return digest(entries)


def digest(value: Any, length: int = 16) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:length]


@dataclass
class Inputs:
    """The checked inputs: ``years`` (year -> converted folder), ``clusters`` (year -> clusters with references), the
    encoder folder and how results name it, the WikiRef folder; each folder's identity (:func:`folder_identity`)."""

    years: dict[int, str]
    clusters: dict[int, int]
    encoder: str
    encoder_name: str
    wikiref: str | None
    identity: dict[str, str]
    recipe: Any = None
    """The `trainer_scripts.recipes.Recipe` every training unit gets (``--recipe``), ``recipe_chosen`` says why."""
    recipe_chosen: str = ""
    benchmarks: list[Benchmark] = field(default_factory=list)
    """The other benchmarks of ``--qfs_dirs`` (:func:`load_qfs_dirs`)."""

    @property
    def recipe_argument(self) -> str:
        """How the units name the recipe: a shipped one by name, a file of one's own by its path."""
        from trainer_scripts.recipes import RECIPES_DIR

        return self.recipe.name if self.recipe.path.parent == RECIPES_DIR else str(self.recipe.path.resolve())


def load_duc_dirs(arguments: ExperimentArguments) -> list[Any]:
    """The DUC years of ``--duc_dirs`` (their year, and that they are converted folders). It imports nothing of the
    model side, so :func:`run_experiments` checks them first and a wrong folder is said at once.

    Raises:
        ExperimentError: naming the folder and the problem.
    """
    if not arguments.duc_dirs:
        raise ExperimentError("--duc_dirs is required: the DUC years converted by `wikiref duc convert`")
    for path in arguments.duc_dirs:
        if not Path(path).is_dir():
            raise ExperimentError(f"{path}: no such DUC folder (convert NIST's with `wikiref duc convert`)")
    from wikiref_dataset.duc.reader import DucError
    from wikiref_dataset.duc.years import load_years

    try:
        return list(load_years(arguments.duc_dirs))
    except DucError as error:
        raise ExperimentError(str(error)) from None


@dataclass(frozen=True)
class Benchmark:
    """A converted benchmark of ``--qfs_dirs``: its name (``qmsum``), folder, the split scored and whether it has a
    ``train`` split to fine-tune on."""

    name: str
    title: str
    path: str
    split: str
    queries: int
    trainable: bool

    @property
    def key(self) -> str:
        """How `evaluate_qfs` names the split in its results (``qmsum/validation``)."""
        return f"{self.name}/{self.split}"


def load_qfs_dirs(arguments: ExperimentArguments) -> list[Benchmark]:
    """The benchmarks of ``--qfs_dirs``: converted folders holding ``--qfs_split``, one folder per benchmark. Reads
    only their cards and ``conversion.json`` (no rows, no `datasets`).

    Raises:
        ExperimentError: naming the folder and the problem.
    """
    from trainer_scripts.common import ScriptError
    from trainer_scripts.finetuning import check_qfs_labels
    from wikiref_dataset.qfs import QfsError, benchmark_title
    from wikiref_dataset.qfs.common import converted_splits

    if arguments.qfs_dirs:
        try:
            check_qfs_labels(arguments.qfs_labels)
        except ScriptError as error:
            raise ExperimentError(str(error)) from None
    benchmarks: dict[str, Benchmark] = {}
    for path in arguments.qfs_dirs:
        if not Path(path).is_dir():
            raise ExperimentError(f"{path}: no such benchmark folder (convert a release with `wikiref qfs convert`)")
        try:
            splits = converted_splits(path)
            conversion = json.loads((Path(path) / "conversion.json").read_text(encoding="utf-8"))
        except (QfsError, OSError, json.JSONDecodeError) as error:
            raise ExperimentError(f"--qfs_dirs {path}: {error}") from None
        name = conversion.get("benchmark") if isinstance(conversion, dict) else None
        if not isinstance(name, str) or not name:
            raise ExperimentError(f"--qfs_dirs {path}: its conversion.json names no benchmark")
        if arguments.qfs_split not in splits:
            raise ExperimentError(f"--qfs_dirs {path}: no split {arguments.qfs_split!r} to score on (--qfs_split); it "
                                  f"has {', '.join(splits)}")
        if name in benchmarks:
            raise ExperimentError(f"--qfs_dirs: {benchmarks[name].path} and {path} are both {name}; give one folder "
                                  "per benchmark")
        queries = (conversion.get("rows") or {}).get(arguments.qfs_split, 0)
        benchmarks[name] = Benchmark(name=name, title=benchmark_title(name), path=str(Path(path).resolve()),
                                     split=arguments.qfs_split, queries=queries,
                                     trainable="train" in splits and arguments.qfs_split != "train")
    return list(benchmarks.values())


def check_inputs(arguments: ExperimentArguments, loaded: Sequence[Any] | None = None) -> Inputs:
    """Load the DUC years (:func:`load_duc_dirs`, unless ``loaded`` holds what it gave), find the encoder and WikiRef
    folders.

    Raises:
        ExperimentError: naming the folder and the problem.
    """
    if loaded is None:
        loaded = load_duc_dirs(arguments)
    years = {year.year: str(Path(year.path).resolve()) for year in loaded}
    clusters = {year.year: len(year.scorable) for year in loaded}
    if arguments.encoder is None:
        from trainer_scripts.common import DEFAULT_ENCODER_NAME, ScriptError, default_encoder

        try:
            encoder, encoder_name = default_encoder(), DEFAULT_ENCODER_NAME
        except ScriptError as error:
            raise ExperimentError(f"no --encoder given: {str(error).split(': ', 1)[-1]}") from None
    else:
        encoder = encoder_name = arguments.encoder
    if not Path(encoder).is_dir() or not (Path(encoder) / "config.json").is_file():
        raise ExperimentError(f"{encoder}: not a model folder (no config.json); --encoder takes a local BERT-family "
                              "encoder folder")
    encoder = str(Path(encoder).resolve())
    wikiref = None
    if arguments.wikiref:
        if not Path(arguments.wikiref).is_dir():
            raise ExperimentError(f"{arguments.wikiref}: no such WikiRef folder (build one with `wikiref build`)")
        wikiref = str(Path(arguments.wikiref).resolve())
    benchmarks = load_qfs_dirs(arguments)
    identity = {path: folder_identity(path) for path in [*years.values(), encoder, *([wikiref] if wikiref else []),
                                                         *(benchmark.path for benchmark in benchmarks)]}
    from trainer_scripts.recipes import RecipeError, choose_recipe

    try:
        recipe, chosen = choose_recipe(arguments.recipe, encoder, encoder_name)
    except RecipeError as error:
        raise ExperimentError(str(error)) from None
    return Inputs(years=years, clusters=clusters, encoder=encoder, encoder_name=encoder_name, wikiref=wikiref,
                  identity=identity, recipe=recipe, recipe_chosen=chosen, benchmarks=benchmarks)


def recipe_overrides(options: Sequence[str], settings: Mapping[str, Any]) -> list[str]:
    """The options of ``options`` that set one of the recipe's ``settings`` to another value (``--pooling cls`` over a
    recipe without pooling is not one: the recipe leaves it to the row), as ``--name value`` strings."""
    found: dict[str, str] = {}
    for group in split_options(options, "options"):
        name = option_name(group)
        if name.startswith("no_") and name[3:] in settings and settings[name[3:]] is True:
            found[name[3:]] = "--" + name
            continue
        if name not in settings:
            continue
        value = group[1] if len(group) > 1 else "true"
        wanted = settings[name]
        same = (str(wanted).lower() == value.lower() if isinstance(wanted, bool) else
                _same_number(wanted, value) if isinstance(wanted, (int, float)) else str(wanted) == value)
        found.pop(name, None)
        if not same:
            found[name] = f"--{name} {value}"
    return list(found.values())


def _same_number(wanted: float, value: str) -> bool:
    try:
        return float(value) == float(wanted)
    except ValueError:
        return False


# ---- folds and units ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fold:
    """A held-out year (``test_year``) or cluster fold ``fold`` of ``folds``."""

    test_year: int | None = None
    folds: int | None = None
    fold: int | None = None

    @property
    def name(self) -> str:
        return f"test{self.test_year}" if self.test_year is not None else f"fold{self.fold}of{self.folds}"

    def options(self) -> list[str]:
        if self.test_year is not None:
            return ["--test_year", str(self.test_year)]
        return ["--folds", str(self.folds), "--fold", str(self.fold)]


def plan_folds(arguments: ExperimentArguments, clusters: Mapping[int, int]) -> list[Fold]:
    """The folds: each year held out (cross-year), or ``--folds`` folds of the clusters of every year (``clusters``:
    year -> scored clusters)."""
    years = sorted(clusters)
    protocol = arguments.protocol
    if protocol not in ("auto", "cross_year", "kfold"):
        raise ExperimentError(f"--protocol must be auto, cross_year or kfold, got {protocol!r}")
    if protocol == "auto":
        protocol = "cross_year" if len(years) > 1 else "kfold"
    if protocol == "cross_year":
        if len(years) < 2:
            raise ExperimentError("--protocol cross_year needs two or more DUC years (train on the others, test on "
                                  "one); with one year, use cluster folds (--protocol kfold)")
        tested = sorted(set(arguments.test_years)) or years
        unknown = [year for year in tested if year not in years]
        if unknown:
            raise ExperimentError(f"--test_years {' '.join(map(str, unknown))}: not among the given DUC years "
                                  f"({', '.join(map(str, years))})")
        return [Fold(test_year=year) for year in tested]
    if arguments.test_years:
        raise ExperimentError("--test_years chooses the held-out years of the cross-year protocol; with cluster folds "
                              "every cluster is tested once")
    from trainer_scripts.common import ScriptError
    from trainer_scripts.finetuning import check_fold_count

    try:
        check_fold_count(arguments.folds)
    except ScriptError as error:
        raise ExperimentError(str(error)) from None
    if sum(clusters.values()) < arguments.folds:
        raise ExperimentError(f"--folds {arguments.folds}: DUC {', '.join(map(str, years))} has only "
                              f"{sum(clusters.values())} clusters with reference summaries")
    return [Fold(folds=arguments.folds, fold=index) for index in range(arguments.folds)]


@dataclass
class Unit:
    """One cached run. ``template``: the script's argv, where ``{unit:KEY}`` stands for another unit's folder and
    ``{out}`` for this one's; ``params``: what a data unit makes; ``needs``: the units it starts from; ``script``: the
    script it runs when not its kind's (:data:`SCRIPTS`; a benchmark's baselines and evaluations run
    ``evaluate_qfs``)."""

    kind: str
    what: str
    template: list[str]
    inputs: list[str]
    identity: Mapping[str, str]
    needs: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    rows: set[str] = field(default_factory=set)
    script: str | None = None
    key: str = ""

    def __post_init__(self) -> None:
        self.script = self.script or SCRIPTS.get(self.kind)
        self.key = digest({"kind": self.kind, "script": self.script, "template": self.template,
                            "params": self.params, "inputs": {path: self.identity[path] for path in self.inputs}})

    @property
    def folder_name(self) -> str:
        return f"{self.kind}-{self.what}-{self.key}"


@dataclass
class Variant:
    """A row at one point of its sweep (the row itself when it has none): its units by (fold name, seed); on the other
    benchmarks, by (benchmark, seed): its models as trained on DUC (``qfs_zero_shot``) and fine-tuned on the
    benchmark (``qfs_finetune``)."""

    row: Row
    name: str
    point: Any = None
    finetune: dict[tuple[str, int], str] = field(default_factory=dict)
    evaluate: dict[tuple[int, int], str] = field(default_factory=dict)
    pretrain: dict[int, str] = field(default_factory=dict)
    qfs_zero_shot: dict[tuple[str, int], str] = field(default_factory=dict)
    qfs_finetune: dict[tuple[str, int], str] = field(default_factory=dict)


@dataclass
class Plan:
    units: dict[str, Unit]
    order: list[str]
    variants: list[Variant]
    folds: list[Fold]
    baseline_units: dict[int, str]
    inputs: Inputs
    rows: list[str]
    options: StageOptions
    qfs_baseline_units: dict[str, str] = field(default_factory=dict)
    """Benchmark name -> the unit scoring LEAD, QUERY-SIM and ORACLE on it."""
    rules: list[str] = field(default_factory=lambda: ["duc"])
    """The rules the baselines are scored under: their own greedy ``duc`` and every rule a fine-tuned row chooses
    with (:func:`plan_rules`)."""
    row_rules: dict[str, str] = field(default_factory=dict)
    """Row name -> the rule its models choose with (:func:`row_rule`), for the rows that fine-tune."""

    @property
    def tested_years(self) -> list[int]:
        """The DUC years a model is tested on (:func:`tested_years`)."""
        return tested_years(self.folds, self.inputs.years)


def tested_years(folds: Sequence[Fold], years: Iterable[int]) -> list[int]:
    """The DUC years a model is tested on: every given year, or the cross-year protocol's (``--test_years``)."""
    if folds and folds[0].test_year is not None:
        return sorted(fold.test_year for fold in folds)
    return sorted(years)


def row_rule(row: Row, options: StageOptions, recipe_settings: Mapping[str, Any]) -> str:
    """The cluster rule a fine-tuned row's models choose their summaries with (``finetune_duc.py --selection``): the
    last ``--selection`` of its units' options (the row's, every row's, ``--row_options``: the order the units get
    them), else the recipe's, else the paper's greedy rule."""
    rule = str(recipe_settings.get("selection") or "duc")
    given = [*row.finetune_options, *options.shared["finetune"], *options.per_row.get((row.name, "finetune"), [])]
    for group in split_options(given, f"row {row.name}"):
        if option_name(group) == "selection" and len(group) > 1:
            rule = group[1]
    return rule


def plan_rules(rows: Sequence[str], options: StageOptions, recipe_settings: Mapping[str, Any]) -> dict[str, str]:
    """Row name -> :func:`row_rule` of each chosen row that fine-tunes on DUC.

    Raises:
        ExperimentError: a row whose rule no selection knows (named with the rule).
    """
    from wikiref_dataset.selection import check_rule

    rules = {}
    for name in rows:
        row = ROW_BY_NAME[name]
        if row.duc == "finetune":
            try:
                rules[name] = check_rule(row_rule(row, options, recipe_settings))
            except ValueError as error:
                raise ExperimentError(f"row {name}: --selection: {error}") from None
    return rules


def make_plan(arguments: ExperimentArguments, inputs: Inputs, rows: Sequence[str], options: StageOptions) -> Plan:
    """Every unit the chosen ``rows`` need (:func:`select_rows`) with their ``options`` (:func:`route_options`),
    deduplicated by key, in an order where a unit comes after those it needs.

    Raises:
        ExperimentError: folds, seeds or sweep points that cannot be planned (:func:`plan_folds`,
            :func:`check_plan_arguments`).
    """
    folds = plan_folds(arguments, inputs.clusters)
    check_plan_arguments(arguments, inputs, rows, cross_year=folds[0].test_year is not None)
    row_rules = plan_rules(rows, options, inputs.recipe.settings("finetune"))
    rules = ["duc", *sorted(set(row_rules.values()) - {"duc"})]
    planner = _Planner(arguments, inputs, options, folds, rules)
    baseline_units = planner.baseline_units(rows)
    variants = [variant for name in rows for variant in planner.row_variants(ROW_BY_NAME[name])]
    qfs_baseline_units = planner.qfs_baseline_units() if baseline_units else {}
    return Plan(units=planner.units, order=_dependency_order(planner.units), variants=variants, folds=folds,
                baseline_units=baseline_units, inputs=inputs, rows=list(rows), options=options,
                qfs_baseline_units=qfs_baseline_units, rules=rules, row_rules=row_rules)


def check_plan_arguments(arguments: ExperimentArguments, inputs: Inputs, rows: Sequence[str], cross_year: bool) -> None:
    """Refuse seeds and sweep points no unit could be planned for, before any unit is: the seeds (one at least, none
    twice: a seed is part of a unit's folder name), Fig. 4's shares of the training years (only the cross-year
    protocol has training years to share) and Fig. 6's WikiRef folder (:func:`check_quality_column`).

    Raises:
        ExperimentError: naming the option and the problem.
    """
    if not arguments.seeds:
        raise ExperimentError("--seeds needs at least one seed")
    if len(set(arguments.seeds)) != len(arguments.seeds):
        raise ExperimentError(f"--seeds has a seed twice: {arguments.seeds}")
    for name in rows:
        if ROW_BY_NAME[name].sweep == "data_fraction" and not cross_year:
            raise ExperimentError(f"row {name} takes a share of the training years' clusters: it needs the cross-year "
                                  "protocol (two or more DUC years)")
    for fraction in arguments.data_fractions:
        if not 0 < fraction <= 1:
            raise ExperimentError(f"--data_fractions must lie in (0, 1], got {fraction}")
    if any(ROW_BY_NAME[name].sweep == "quality" for name in rows):
        check_quality_column(inputs.wikiref)


class _Planner:
    """The units of one plan as :func:`make_plan` adds them, row by row: ``units`` holds each unit once by key (two
    rows that need the same run share its unit, :meth:`add`), in planning order, which :func:`_dependency_order` keeps
    within a kind (so the order units run in, and their folder names, do not depend on how the rows are written)."""

    def __init__(self, arguments: ExperimentArguments, inputs: Inputs, options: StageOptions,
                 folds: list[Fold], rules: Sequence[str] = ("duc",)) -> None:
        self.arguments, self.inputs, self.options, self.folds = arguments, inputs, options, folds
        self.rules = list(rules)
        # the baselines under every rule of the fine-tuned rows; the paper's greedy rule alone needs no option, so
        # the baseline units of a run whose rows all keep it are the ones planned before the rules were compared
        self.selection = ["--selection", *self.rules] if len(self.rules) > 1 else []
        self.units: dict[str, Unit] = {}
        # the recipe's settings are part of every training unit's key: an edited recipe file redoes the units it feeds
        self.recipe_params = {"recipe": {"name": inputs.recipe.name, **{stage: inputs.recipe.settings(stage)
                                                                         for stage in ("pretrain", "finetune")}}}
        self.duc_dirs = [inputs.years[year] for year in sorted(inputs.years)]
        cross_year = folds[0].test_year is not None
        # the rows run on one fold only (Fig. 6) take the one testing the latest year, or every cluster fold
        self.tested_years = tested_years(folds, inputs.years)
        self.last_fold = [fold for fold in folds if fold.test_year == max(self.tested_years)] if cross_year else folds

    def add(self, unit: Unit, row: str | None) -> str:
        """``unit``, or the planned unit with its key, now also needed by ``row``; returns the key."""
        unit = self.units.setdefault(unit.key, unit)
        if row:
            unit.rows.add(row)
        return unit.key

    def baseline_units(self, rows: Sequence[str]) -> dict[int, str]:
        """Year -> the unit scoring LEAD, QUERY-SIM and ORACLE on it, under every rule of the plan: with
        ``--baselines`` or a baseline row only."""
        if not (self.arguments.baselines or any(ROW_BY_NAME[name].duc == "baseline" for name in rows)):
            return {}
        return {year: self.add(Unit("baselines", str(year), [
                    "--dataset", path, "--baseline", "all", *self.selection, "--out", "{out}/metrics.json",
                    "--quiet", "true"], [path], self.inputs.identity), "baselines")
                for year, path in sorted(self.inputs.years.items()) if year in self.tested_years}

    def qfs_baseline_units(self) -> dict[str, str]:
        """Benchmark name -> the unit scoring the baselines on each benchmark of ``--qfs_dirs``, under every rule of
        the plan."""
        return {benchmark.name: self.add(Unit(
                    "baselines", benchmark.name, [
                        "--dataset", benchmark.path, "--split", benchmark.split, "--baseline", "all",
                        *self.selection, "--out", "{out}/metrics.json", "--quiet", "true"],
                    [benchmark.path], self.inputs.identity, script="evaluate_qfs"), "baselines")
                for benchmark in self.inputs.benchmarks}

    def row_variants(self, row: Row) -> list[Variant]:
        """The row's variants, one per point of its sweep (:func:`sweep_points`), each with its units for every seed
        (:meth:`seed_units`); a baseline row's variant has none (the baseline units score it)."""
        variants = []
        for point in sweep_points(row, self.arguments, self.rules):
            variant = Variant(row=row, name=variant_name(row, point), point=point)
            variants.append(variant)
            if row.duc == "baseline":
                continue
            spec = row.pretraining
            if spec is not None and row.sweep == "quality":  # Fig. 6: pre-trained on one half of WikiRef
                spec = replace(spec, train_slice=(point / 10, point / 10 + 0.5))
            for seed in self.arguments.seeds:
                self.seed_units(variant, spec, seed)
        return variants

    def seed_units(self, variant: Variant, spec: Pretraining | None, seed: int) -> None:
        """A variant's units for one seed: its pre-training (shared by the seeds unless ``--pretrain_per_seed``), the
        pre-trained model scored on every DUC year (a row that does not fine-tune), or a fine-tuning per fold, and
        for a Table VI row its units on the other benchmarks."""
        row, name = variant.row, variant.row.name
        pretrained = None
        if spec is not None:
            pretrained = self.pretrain_unit(spec, seed if self.arguments.pretrain_per_seed else self.arguments.seeds[0],
                                            name)
            variant.pretrain[seed] = pretrained
        if row.duc == "evaluate":
            for year, path in sorted(self.inputs.years.items()):
                if year not in self.tested_years:
                    continue
                variant.evaluate[(year, seed)] = self.add(Unit(
                    "evaluate", str(year), ["--dataset", path, "--model", f"{{unit:{pretrained}}}", "--out",
                                            "{out}/metrics.json", "--save_summaries", "{out}/summaries.jsonl",
                                            "--quiet", "true"],
                    [path], self.inputs.identity, needs=[pretrained]), name)
        if row.duc == "finetune":
            for fold in (self.last_fold if row.last_fold else self.folds):
                variant.finetune[(fold.name, seed)] = self.finetune_unit(variant, fold, seed, pretrained)
        if row.table == "VI":
            self.benchmark_units(variant, seed, pretrained)

    def pretrain_unit(self, spec: Pretraining, seed: int, row: str) -> str:
        """The WikiRef pre-training of ``spec`` (after the one it continues, and on the slice of WikiRef it names, a
        data unit); returns its key."""
        inputs = self.inputs
        start = inputs.encoder
        needs = []
        if spec.start is not None:
            parent = self.pretrain_unit(spec.start, seed, row)
            start, needs = f"{{unit:{parent}}}", [parent]
        dataset, data_inputs = inputs.wikiref, [inputs.wikiref]
        if spec.train_slice is not None:
            data = self.add(Unit("data", "wikiref-slice", [], [inputs.wikiref], inputs.identity,
                                 params={"make": "wikiref_slice", "source": inputs.wikiref,
                                         "slice": list(spec.train_slice)}), row)
            dataset, data_inputs, needs = f"{{unit:{data}}}/dataset", [], [*needs, data]
        template = ["--model_name_or_path", start, "--recipe", inputs.recipe_argument, "--dataset", dataset,
                    *spec.options(inputs.recipe.settings("pretrain")), *self.options.shared["pretrain"],
                    *self.options.per_row.get((row, "pretrain"), []), "--seed", str(seed), "--output_dir", "{out}"]
        inputs_used = ([inputs.encoder] if spec.start is None else []) + data_inputs
        what = f"{spec.objective}-{spec.pooling}" if spec.start is None else "continued"
        what += "-iterative" if spec.iterative else ""
        what += f"-slice{round(100 * spec.train_slice[0])}" if spec.train_slice else ""
        return self.add(Unit("pretrain", f"{what}-seed{seed}", template, inputs_used, inputs.identity, needs=needs,
                             params=self.recipe_params), row)

    def finetune_unit(self, variant: Variant, fold: Fold, seed: int, pretrained: str | None) -> str:
        """The DUC fine-tuning of a variant on one fold, from the encoder or the ``pretrained`` unit's model; returns
        its key."""
        row, name = variant.row, variant.row.name
        dirs, needs = self.training_years(variant.point if row.sweep == "data_fraction" else None, fold, name)
        start = self.inputs.encoder if pretrained is None else f"{{unit:{pretrained}}}"
        template = ["--model_name_or_path", start, "--recipe", self.inputs.recipe_argument,
                    "--duc_dirs", *dirs, *fold.options(), *row.finetune_options,
                    *self.options.shared["finetune"],
                    *self.options.per_row.get((name, "finetune"), []),
                    "--baselines", "none", "--seed", str(seed), "--output_dir", "{out}"]
        inputs_used = [path for path in dirs if not path.startswith("{unit:")]
        inputs_used += [self.inputs.encoder] if pretrained is None else []
        return self.add(Unit("finetune", f"{fold.name}-seed{seed}", template, inputs_used, self.inputs.identity,
                             needs=[*needs, *([pretrained] if pretrained else [])], params=self.recipe_params), name)

    def training_years(self, fraction: float | None, fold: Fold, row: str) -> tuple[list[str], list[str]]:
        """The --duc_dirs of a fold (Fig. 4: the training years replaced by a share of their clusters, data units)
        and the units they need."""
        if fraction is None or fraction >= 1:
            return self.duc_dirs, []
        dirs, needs = [], []
        for year, path in sorted(self.inputs.years.items()):
            if year == fold.test_year:
                dirs.append(path)
                continue
            data = self.add(Unit("data", f"duc{year}-{round(100 * fraction)}pc", [], [path], self.inputs.identity,
                                 params={"make": "duc_share", "source": path, "fraction": fraction,
                                         "data_seed": self.arguments.data_seed}), row)
            dirs.append(f"{{unit:{data}}}/dataset")
            needs.append(data)
        return dirs, needs

    def benchmark_units(self, variant: Variant, seed: int, pretrained: str | None) -> None:
        """A Table VI row on each benchmark: its model as trained on DUC (the fold that tests the latest year, or the
        last cluster fold; the pre-trained model for a row that does not fine-tune), scored as it is, and its
        fine-tuning from the same start on the benchmark's train split instead of DUC."""
        row, name = variant.row, variant.row.name
        model = (variant.finetune.get((self.folds[-1].name, seed)) if row.duc == "finetune" else
                 pretrained if row.duc == "evaluate" else None)
        for benchmark in self.inputs.benchmarks:
            if model is not None:
                variant.qfs_zero_shot[(benchmark.name, seed)] = self.add(Unit(
                    "evaluate", f"{benchmark.name}-seed{seed}", [
                        "--dataset", benchmark.path, "--split", benchmark.split, "--model", f"{{unit:{model}}}",
                        "--out", "{out}/metrics.json", "--save_summaries", "{out}/summaries.jsonl", "--quiet", "true"],
                    [benchmark.path], self.inputs.identity, needs=[model], script="evaluate_qfs"),
                    name)
            if row.duc != "finetune" or not benchmark.trainable:
                continue
            start = self.inputs.encoder if pretrained is None else f"{{unit:{pretrained}}}"
            template = ["--model_name_or_path", start, "--recipe", self.inputs.recipe_argument,
                        "--qfs_dir", benchmark.path, "--qfs_test_split", benchmark.split,
                        "--qfs_labels", self.arguments.qfs_labels, *row.finetune_options,
                        *self.options.shared["finetune"], *self.options.per_row.get((name, "finetune"), []),
                        "--baselines", "none", "--seed", str(seed), "--output_dir", "{out}"]
            variant.qfs_finetune[(benchmark.name, seed)] = self.add(Unit(
                "finetune", f"{benchmark.name}-seed{seed}", template,
                [benchmark.path, *([self.inputs.encoder] if pretrained is None else [])], self.inputs.identity,
                needs=[pretrained] if pretrained else [], params=self.recipe_params), name)


def sweep_points(row: Row, arguments: ExperimentArguments, rules: Sequence[str] = ("duc",)) -> list[Any]:
    """The points of a row's sweep: Fig. 4's shares of the training clusters (``--data_fractions``), Fig. 6's WikiRef
    slices (indices into :data:`QUALITY_SLICES`), a baseline's rules (``None``: its own greedy rule, then each other
    rule of ``rules``, the plan's); ``[None]`` for a row without a sweep."""
    if row.sweep == "data_fraction":
        return sorted(set(arguments.data_fractions))
    if row.sweep == "quality":
        return list(range(len(QUALITY_SLICES)))
    if row.sweep == "rule":
        return [None, *(rule for rule in rules if rule != "duc")]
    return [None]


def variant_name(row: Row, point: Any) -> str:
    if row.sweep == "data_fraction":
        return f"{row.name}@{round(100 * point)}%"
    if row.sweep == "quality":
        return f"{row.name}@{QUALITY_SLICES[point].lower().replace(' ', '_')}"
    if row.sweep == "rule" and point is not None:
        return f"{row.name}@{point}"
    return row.name


def _dependency_order(units: Mapping[str, Unit]) -> list[str]:
    """Data, baselines, pre-training, evaluation, fine-tuning; each unit after those it needs."""
    rank = {"data": 0, "baselines": 1, "pretrain": 2, "evaluate": 3, "finetune": 4}
    order: list[str] = []
    done: set[str] = set()

    def visit(key: str) -> None:
        if key in done:
            return
        for need in units[key].needs:
            visit(need)
        done.add(key)
        order.append(key)

    for key in sorted(units, key=lambda key: rank[units[key].kind]):  # stable: planning order within a kind
        visit(key)
    return order


def check_quality_column(wikiref: str | None) -> None:
    """Fig. 6 sorts WikiRef's training split by the examples' oracle ROUGE-2 recall: refuse a folder without it."""
    if wikiref is None:
        return
    files = sorted((Path(wikiref) / "data").glob("train-*.parquet"))
    if not files:
        return  # another layout: the data unit reads it with `datasets` and says what is missing
    import pyarrow.parquet as pq

    if "oracle_rouge2_recall" not in pq.read_schema(files[0]).names:
        raise ExperimentError(f"{wikiref}: the Fig. 6 rows sort WikiRef's training examples by their oracle ROUGE-2 "
                              "recall, but its train split has no oracle_rouge2_recall column (rebuild it with "
                              "`wikiref build`)")
