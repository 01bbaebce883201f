"""``wikiref rescore``: summaries chosen again from the sentence scores fine-tuning saved, and scored, in seconds.

    wikiref rescore runs/ --duc_dirs duc/2006 --selection duc mmr ilp --average_seeds
    wikiref rescore runs/units/finetune-fold*-seed42-* --duc_dirs duc/2006 --mix none query_sim:0.2 --out rescored

Most of what decides a Q-BERT summary does not change the model's weights: the selection rule and its settings,
averaging the scores of several seeds, mixing the scores with another signal. Every fine-tuning unit of
``wikiref experiments`` (every ``finetune_duc.py`` run) saves the score of every test sentence
(``sentence_scores.jsonl``, or ``.jsonl.gz`` as an exported grid keeps it), so those levers need no retraining: this
command reads the units, chooses each test cluster's summary again from the saved scores and scores the summaries
with the official DUC settings, as the runner scores a row.

Units: the folders given, a run's ``units/`` folder, or a run folder (``wikiref experiments --out``); every
fine-tuning unit with saved DUC scores is read (``unit.json`` says its command), the others are passed over with a
note. A ``finetune_duc.py --output_dir`` folder is a unit too (its ``results.json`` says the command: the one it
records, else the DUC folders, folds and seed it records), alone or as a child of a folder given. Units whose commands differ only in ``--fold``, ``--seed`` and ``--output_dir`` form one group (one row of a
run); within a group, each seed's folds are pooled and scored per DUC year, a year only where the seed's folds hold
all of its scorable clusters (a seed with a fold missing is named and left out of that year).

Rows: every rule of ``--selection`` (the paper's greedy ``duc`` rule, ``mmr``, ``ilp``: ``wikiref_dataset.selection``)
with each ``--mix`` (``none``, or ``SIGNAL:WEIGHT``: each cluster's model scores min-max scaled to [0, 1] plus WEIGHT
times the signal scaled the same way; the signals are :data:`SIGNALS`). Each row gives, per year and measure, the mean
± sample standard deviation over the seeds [the 95% bootstrap interval of the median seed's run], as ``wikiref
experiments`` writes its cells; ``--average_seeds`` adds, per row, the summaries chosen from the seeds' scores averaged
sentence by sentence (every seed with all folds of the year). ``--out`` writes ``rescore.md`` and ``rescore.json``
(every number, 0-1).

Baselines: under each rule, the table also gives the rows of ``--baselines`` (QUERY-SIM and LEAD by default) chosen
by that rule with the same settings, on the group's years (``QUERY-SIM (ILP)``: ``wikiref_dataset.baselines`` names
them), so that each rule's model rows stand beside the baselines under the same rule; a baseline gives one run, with
no seeds or mix. The System column names each row: ``Q-BERT`` for the units' scores, whatever the rule (the Rule
column says it).

Only DUC units are read: a unit of ``--qfs_dir`` (another benchmark) is passed over with a note.
"""

from __future__ import annotations

import gzip
import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_scripts.experiments.cells import markdown_table, ours_cell, summarize_runs
from trainer_scripts.experiments.common import MEASURE_NAMES, MEASURES, QBERT_SYSTEM, ExperimentError

MODEL_SYSTEM = QBERT_SYSTEM
"""The System column's name of the units' own rows."""
UNIT_FILE = "unit.json"
RESULTS_FILE = "results.json"
"""What a ``finetune_duc.py --output_dir`` folder holds beside its scores: read as the unit record it has no file for."""
SCORES_FILES = ("sentence_scores.jsonl", "sentence_scores.jsonl.gz")
PER_RUN_OPTIONS = ("--fold", "--seed", "--output_dir")
"""The options in which the units of one group (one row of a run) differ."""


def _position_scores(row: Mapping[str, Any], cluster: Any) -> list[float]:
    return [1.0 / (1.0 + sentence) for _, sentence in cluster.positions]


def _query_sim_scores(row: Mapping[str, Any], cluster: Any) -> list[float]:
    from wikiref_dataset.baselines import query_sim_scores

    return query_sim_scores(row["query"], cluster.sentences)


SIGNALS: dict[str, Callable[[Mapping[str, Any], Any], list[float]]] = {
    "position": _position_scores,
    "query_sim": _query_sim_scores,
}
"""The signals ``--mix`` can add to the model's scores, one value per flat sentence of a cluster (a DUC row and its
``ClusterSentences``): ``position`` is 1 / (1 + the sentence's index in its document), so a document's first sentence
is 1; ``query_sim`` is the QUERY-SIM baseline's TF-IDF cosine to the query."""


@dataclass(frozen=True)
class Mix:
    """A signal added to the model's scores with a weight (``signal`` ``None``: the scores alone)."""

    signal: str | None = None
    weight: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Mix:
        """``none`` or ``SIGNAL:WEIGHT`` (``query_sim:0.2``)."""
        if text == "none":
            return cls()
        name, _, weight = text.partition(":")
        if name not in SIGNALS or not weight:
            raise ExperimentError(f"--mix {text!r}: give 'none' or SIGNAL:WEIGHT with SIGNAL one of "
                                  f"{', '.join(SIGNALS)} (for example query_sim:0.2)")
        try:
            value = float(weight)
        except ValueError:
            raise ExperimentError(f"--mix {text!r}: the weight {weight!r} is not a number") from None
        if not math.isfinite(value):
            raise ExperimentError(f"--mix {text!r}: the weight must be a finite number")
        return cls(name, value)

    @property
    def name(self) -> str:
        return "none" if self.signal is None else f"{self.signal}:{self.weight:g}"

    def apply(self, scores: Sequence[float], signal: Sequence[float] | None) -> list[float]:
        """The mixed scores of one cluster: ``scores`` and the values of :attr:`signal` (``None`` without one), each
        min-max scaled; the scores unchanged without a signal."""
        if self.signal is None:
            return list(scores)
        from wikiref_dataset.selection import min_max_scaled

        return [score + self.weight * value for score, value in zip(min_max_scaled(scores), min_max_scaled(signal))]


@dataclass(frozen=True)
class SavedUnit:
    """One fine-tuning unit's saved scores: ``scores[topic_id]`` holds one list per document, one float per
    sentence, in the converted dataset's sentence order."""

    folder: Path
    seed: int
    fold: int | None
    group: tuple[str, ...]
    duc_dirs: tuple[str, ...]
    scores: Mapping[str, list[list[float]]]


@dataclass
class Found:
    """The units read, and the notes on what was passed over."""

    units: list[SavedUnit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _option(argv: Sequence[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def _values(argv: Sequence[str], name: str) -> list[str]:
    if name not in argv:
        return []
    values = []
    for value in argv[argv.index(name) + 1:]:
        if value.startswith("--"):
            break
        values.append(value)
    return values


def _group(argv: Sequence[str]) -> tuple[str, ...]:
    kept: list[str] = []
    skip = False
    for value in argv:
        if skip:
            skip = False
            continue
        if value in PER_RUN_OPTIONS:
            skip = True
            continue
        kept.append(value)
    return tuple(kept)


def read_scores(path: Path) -> dict[str, list[list[float]]]:
    """A ``sentence_scores.jsonl`` (or ``.jsonl.gz``) file: ``{topic_id: [[score per sentence] per document]}``.

    Raises:
        ExperimentError: a line that is not such a record (the file and line named).
    """
    opener = gzip.open if path.suffix == ".gz" else open
    scores: dict[str, list[list[float]]] = {}
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                scores[str(record["topic_id"])] = [[float(value) for value in document] for document in record["scores"]]
            except (ValueError, KeyError, TypeError) as error:
                raise ExperimentError(f"{path}, line {number}: not a sentence-scores record ({error})") from None
    return scores


def is_unit_folder(folder: Path) -> bool:
    """Whether ``folder`` is a unit: it holds ``unit.json`` (``wikiref experiments``), or it is a fine-tuning run's
    output folder (``finetune_duc.py --output_dir``: ``results.json`` beside the saved sentence scores)."""
    return (folder / UNIT_FILE).is_file() or ((folder / RESULTS_FILE).is_file()
                                              and any((folder / name).is_file() for name in SCORES_FILES))


def unit_folders(paths: Iterable[str | Path]) -> list[Path]:
    """The unit folders under ``paths`` (:func:`is_unit_folder`): a unit folder itself, or a folder whose children
    (or whose ``units/`` folder's children) are units.

    Raises:
        ExperimentError: a path that does not exist, or holds no unit.
    """
    folders: list[Path] = []
    for path in map(Path, paths):
        if not path.is_dir():
            raise ExperimentError(f"{path}: no such folder (give unit folders, a run's units/ folder or a run folder)")
        if is_unit_folder(path):
            folders.append(path)
            continue
        parent = path / "units" if (path / "units").is_dir() else path
        children = sorted(child for child in parent.iterdir() if child.is_dir() and is_unit_folder(child))
        if not children:
            raise ExperimentError(f"{path}: holds no unit (a folder with {UNIT_FILE}, as wikiref experiments writes, "
                                  f"or a finetune_duc.py --output_dir folder: {RESULTS_FILE} and "
                                  f"{SCORES_FILES[0]})")
        folders.extend(children)
    return list(dict.fromkeys(folders))


def read_units(paths: Iterable[str | Path]) -> Found:
    """Every fine-tuning unit with saved DUC sentence scores under ``paths`` (:func:`unit_folders`)."""
    found = Found()
    for folder in unit_folders(paths):
        if (folder / UNIT_FILE).is_file():
            try:
                unit = json.loads((folder / UNIT_FILE).read_text(encoding="utf-8"))
                argv = [str(value) for value in unit["argv"]]
            except (OSError, ValueError, KeyError, TypeError) as error:
                raise ExperimentError(f"{folder / UNIT_FILE}: not a unit record ({error})") from None
        else:
            unit = output_folder_unit(folder)
            argv = unit["argv"]
        if unit.get("kind") != "finetune":
            continue
        if "--qfs_dir" in argv:
            found.notes.append(f"{folder.name}: another benchmark's unit (--qfs_dir), not rescored")
            continue
        scores_file = next((folder / name for name in SCORES_FILES if (folder / name).is_file()), None)
        if scores_file is None:
            found.notes.append(f"{folder.name}: no saved sentence scores (unfinished, or from before they were saved)")
            continue
        seed, fold = _option(argv, "--seed"), _option(argv, "--fold")
        found.units.append(SavedUnit(folder=folder, seed=int(seed) if seed is not None else 42,
                                     fold=int(fold) if fold is not None else None, group=_group(argv),
                                     duc_dirs=tuple(_values(argv, "--duc_dirs")), scores=read_scores(scores_file)))
    if not found.units:
        raise ExperimentError("no fine-tuning unit with saved DUC sentence scores under "
                              + ", ".join(map(str, paths)))
    return found


def output_folder_unit(folder: Path) -> dict[str, Any]:
    """The unit record (``{"kind", "argv"}``, as ``unit.json`` holds it) of a ``finetune_duc.py --output_dir`` folder,
    from its ``results.json``: the command the run records, when it is a ``finetune_duc.py`` command; else (a run
    started from Python, whose record holds the caller's command line) the options that group, seed and fold it, from
    what the results record (``--duc_dirs`` as evaluated, ``--folds``/``--fold``, ``--seed``, ``--qfs_dir``).

    Raises:
        ExperimentError: the results file cannot be read (naming the file and the problem).
    """
    import shlex

    from trainer_scripts.results import ResultsError, TrainingResults, read_results_file

    path = folder / RESULTS_FILE
    try:
        results = TrainingResults.from_dict(read_results_file(path), str(path))
    except ResultsError as error:
        raise ExperimentError(f"{path}: not a training run's results ({error})") from None
    if results.script != "finetune_duc":
        return {"kind": str(results.script or "unknown"), "argv": []}
    try:
        command = shlex.split((results.run.command if results.run else None) or "")
    except ValueError:
        command = []
    if command and Path(command[0]).name == "finetune_duc.py":
        return {"kind": "finetune", "argv": command[1:]}
    finetuning = results.finetuning
    argv: list[str] = []
    if finetuning and finetuning.benchmark:
        argv += ["--qfs_dir", str(finetuning.benchmark.dataset or finetuning.benchmark.benchmark)]
    datasets = results.evaluation.datasets if results.evaluation else {}
    duc_dirs = [str(found.path) for _, found in sorted(datasets.items()) if found and found.path]
    if duc_dirs:
        argv += ["--duc_dirs", *duc_dirs]
    folds = finetuning.folds if finetuning else None
    if folds and folds.folds is not None:
        argv += ["--folds", str(folds.folds), "--fold", str(folds.fold)]
    elif finetuning and finetuning.test_year is not None:
        argv += ["--test_year", str(finetuning.test_year)]
    hyperparameters = (finetuning.hyperparameters if finetuning else None) or {}
    if hyperparameters.get("seed") is not None:
        argv += ["--seed", str(hyperparameters["seed"])]
    return {"kind": "finetune", "argv": [*argv, "--output_dir", str(folder)]}


# ---- selection and scoring ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """A selection rule with its settings (``wikiref_dataset.selection.select_cluster``)."""

    name: str
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.name + "".join(f" {key}={value:g}" for key, value in sorted(self.settings.items()))


@dataclass(frozen=True)
class Clusters:
    """The converted DUC years: the scorable rows by topic and their flat sentences; each cluster's signals are
    computed once (``signals``), whatever the rules, seeds and weights they are mixed with."""

    years: list[Any]
    rows: Mapping[str, Mapping[str, Any]]
    flat: Mapping[str, Any]
    signals: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    baselines: dict[tuple[str, str], dict[int, dict[str, Any]]] = field(default_factory=dict)
    """``(baseline, rule label)`` -> its scores per year, computed once for every group on these years."""

    def baseline_scores(self, name: str, rule: Rule, bar: Any = None) -> dict[int, dict[str, Any]]:
        """``{year: metric dict}`` of baseline ``name`` (``lead``, ``query-sim``) chosen by ``rule`` with its settings
        on every scorable cluster (``wikiref_dataset.baselines.baseline_summary``); ``bar`` (a tqdm bar) counts each
        cluster chosen."""
        key = (name, rule.label)
        if key not in self.baselines:
            from wikiref_dataset.baselines import baseline_summary

            summaries = {}
            for topic, row in self.rows.items():
                summaries[topic] = baseline_summary(name, row, rule=rule.name, **rule.settings)
                if bar is not None:
                    bar.update()
            self.baselines[key] = self.score(summaries)
        return self.baselines[key]

    def signal(self, name: str | None, topic: str) -> list[float] | None:
        """The values of signal ``name`` (:data:`SIGNALS`) for cluster ``topic``; ``None`` for no signal."""
        if name is None:
            return None
        if (name, topic) not in self.signals:
            self.signals[(name, topic)] = SIGNALS[name](self.rows[topic], self.flat[topic])
        return self.signals[(name, topic)]

    @classmethod
    def load(cls, duc_dirs: Sequence[str]) -> Clusters:
        from trainer_scripts.duc_evaluation import load_years
        from wikiref_dataset.selection import ClusterSentences

        years = load_years(list(duc_dirs))
        rows = {row["topic_id"]: row for year in years for row in year.scorable}
        return cls(years, rows, {topic: ClusterSentences.from_row(row) for topic, row in rows.items()})

    def flatten(self, scores: Mapping[str, Sequence[Sequence[float]]], where: str) -> dict[str, list[float]]:
        """A unit's saved scores (:func:`read_scores`) of the clusters of these years, one per flat sentence, checked
        against the sentences (``where`` names the unit in the error)."""
        flat = {}
        for topic, per_document in scores.items():
            if topic not in self.flat:
                continue
            try:
                flat[topic] = self.flat[topic].flatten_scores(per_document)
            except ValueError as error:
                raise ExperimentError(f"{where}: cluster {topic}: {error}; the scores were saved for another "
                                      "conversion of the DUC year") from None
        return flat

    def summaries(self, scores: Mapping[str, Sequence[float]], rule: Rule, mix: Mix,
                  bar: Any = None) -> dict[str, str]:
        """Each cluster's summary chosen by ``rule`` from ``scores`` (``{topic: flat scores}``) with ``mix`` applied;
        ``bar`` (a tqdm bar) counts each cluster chosen (an ILP solve may take seconds)."""
        summaries = {}
        for topic, values in scores.items():
            cluster = self.flat[topic]
            mixed = mix.apply(values, self.signal(mix.signal, topic))
            summaries[topic] = cluster.summary(cluster.select(mixed, rule=rule.name, **rule.settings))
            if bar is not None:
                bar.update()
        return summaries

    def score(self, summaries: Mapping[str, str]) -> dict[int, dict[str, Any]]:
        """``{year: metric dict}`` of the years whose scorable clusters all have a summary."""
        from trainer_scripts.duc_evaluation import evaluate_systems

        complete = [year for year in self.years if all(row["topic_id"] in summaries for row in year.scorable)]
        if not complete:
            return {}
        systems = evaluate_systems(complete, {"rescored": summaries}).to_dict()["systems"]["rescored"]
        return {int(year): values for year, values in systems.items() if values}


def _seed_scores(clusters: Clusters, units: Sequence[SavedUnit]) -> dict[int, dict[str, list[float]]]:
    by_seed: dict[int, dict[str, list[float]]] = {}
    for unit in units:
        by_seed.setdefault(unit.seed, {}).update(clusters.flatten(unit.scores, unit.folder.name))
    return by_seed


def averaged_scores(by_seed: Mapping[int, Mapping[str, Sequence[float]]], year: Any) -> dict[str, list[float]] | None:
    """Each sentence's score averaged over the seeds (``{seed: {topic: flat scores}}``) that cover every cluster of
    ``year``; ``None`` for fewer than two such seeds. The seeds' ensemble, as this command and ``wikiref
    experiments`` (``--seed_average``) report it."""
    topics = [row["topic_id"] for row in year.scorable]
    seeds = [seed for seed, scores in by_seed.items() if all(topic in scores for topic in topics)]
    if len(seeds) < 2:
        return None
    return {topic: [sum(values) / len(seeds) for values in zip(*(by_seed[seed][topic] for seed in seeds))]
            for topic in topics}


def baseline_row(clusters: Clusters, name: str, rule: Rule, years: Sequence[str], bar: Any = None) -> dict[str, Any]:
    """The row of baseline ``name`` under ``rule`` on ``years`` (those the group's model rows give): its ``system``
    name (``QUERY-SIM (ILP)``), one run per year; ``bar`` counts the clusters chosen."""
    from wikiref_dataset.baselines import baseline_system

    scored = clusters.baseline_scores(name, rule, bar)
    return {"system": baseline_system(name, rule.name), "baseline": name, "rule": rule.name,
            "settings": dict(rule.settings), "mix": "-", "average": False,
            "years": {str(year): summarize_runs([{**values, "unit": "baseline"}], MEASURES)
                      for year, values in sorted(scored.items()) if str(year) in years}}


def rescore_group(clusters: Clusters, units: Sequence[SavedUnit], rules: Sequence[Rule], mixes: Sequence[Mix],
                  average_seeds: bool = False, bar: Any = None, baselines: Sequence[str] = ()) -> dict[str, Any]:
    """One group's rows: ``{"seeds": {seed: [folds]}, "rows": [{"system", "rule", "mix", "average", "years": {year:
    summarize_runs(...)}}]}``; under each rule, after the model's rows, the ``baselines`` under the same rule (see
    the module docstring). ``bar`` (a tqdm bar) counts each cluster summary chosen (:func:`selections` says how
    many) and its description says which rule and mix run."""
    by_seed = _seed_scores(clusters, units)
    _check_found(clusters, units, by_seed)
    missing = []
    for seed, scores in sorted(by_seed.items()):
        for year in clusters.years:
            lacking = [row["topic_id"] for row in year.scorable if row["topic_id"] not in scores]
            if lacking and len(lacking) < len(year.scorable):
                missing.append(f"seed {seed}: no scores for {len(lacking)} of the {len(year.scorable)} DUC {year.year} "
                               f"clusters (a fold missing), left out of that year")
    rows = []
    for rule in rules:
        ruled = []
        for mix in mixes:
            if bar is not None:
                bar.set_description(f"{rule.label}, mix {mix.name}")
            ruled += _model_rows(clusters, by_seed, rule, mix, average_seeds, bar)
        years = sorted({year for row in ruled for year in row["years"]})
        for name in baselines:
            if bar is not None:
                bar.set_description(f"{name} under {rule.label}")
            ruled.append(baseline_row(clusters, name, rule, years, bar))
        rows += ruled
    if not any(row["years"] for row in rows if row["system"] == MODEL_SYSTEM):
        raise ExperimentError(f"{_named(units)}: no seed's units cover every scorable cluster of a DUC year given "
                              f"({'; '.join(missing) or 'no year complete'}); give all the folds of a seed")
    return {"seeds": {str(seed): sorted(unit.fold for unit in units if unit.seed == seed and unit.fold is not None)
                      for seed in sorted(by_seed)},
            "missing": missing, "rows": rows}


def selections(groups: Sequence[tuple[Clusters, Sequence[SavedUnit]]], rules: Sequence[Rule], mixes: Sequence[Mix],
               average_seeds: bool, baselines: Sequence[str]) -> int:
    """How many cluster summaries :func:`rescore_group` chooses for ``groups`` (each with its years' clusters), in
    order: each seed's clusters (and, with ``average_seeds``, the clusters of each year the seeds' averaged scores
    cover) under every rule and mix, and each baseline's clusters under every rule, once per years' clusters (their
    scores are kept across groups). Checks each group's units as :func:`rescore_group` does, so that a bad group is
    refused before anything runs."""
    count = 0
    chosen: set[tuple[int, str, str]] = set()
    for clusters, units in groups:
        by_seed = _seed_scores(clusters, units)
        _check_found(clusters, units, by_seed)
        per_mix = sum(len(scores) for scores in by_seed.values())
        if average_seeds:
            per_mix += sum(len(year.scorable) for year in clusters.years if averaged_scores(by_seed, year) is not None)
        keys = {(id(clusters), name, rule.label) for rule in rules for name in baselines
                if (name, rule.label) not in clusters.baselines}
        count += len(rules) * len(mixes) * per_mix + len(keys - chosen) * len(clusters.rows)
        chosen |= keys
    return count


def _named(units: Sequence[SavedUnit]) -> str:
    return units[0].folder.name if len(units) == 1 else f"{len(units)} units ({units[0].folder.name}, ...)"


def _check_found(clusters: Clusters, units: Sequence[SavedUnit], by_seed: Mapping[int, Mapping[str, Any]]) -> None:
    """Refuse units none of whose test clusters is in the DUC years given (the wrong ``--duc_dirs``): their table
    would be empty."""
    if any(by_seed.values()):
        return
    saved = sorted({topic for unit in units for topic in unit.scores})
    years = ", ".join(f"DUC {year.year} ({len(year.scorable)} scorable clusters)" for year in clusters.years)
    raise ExperimentError(f"{_named(units)}: none of the {len(saved)} clusters they scored "
                          f"({', '.join(saved[:3])}{', ...' if len(saved) > 3 else ''}) is in the DUC years given "
                          f"({years or 'none'}); give the --duc_dirs they tested on")


def _model_rows(clusters: Clusters, by_seed: Mapping[int, Mapping[str, Sequence[float]]], rule: Rule, mix: Mix,
                average_seeds: bool, bar: Any = None) -> list[dict[str, Any]]:
    """The model's row under ``rule`` and ``mix`` (each seed's folds pooled and scored per year) and, with
    ``average_seeds``, its row of the seeds' averaged scores; ``bar`` counts the clusters chosen."""
    runs: dict[int, list[dict[str, Any]]] = {}
    for seed, scores in sorted(by_seed.items()):
        for year, values in clusters.score(clusters.summaries(scores, rule, mix, bar)).items():
            runs.setdefault(year, []).append({**values, "unit": f"seed {seed}"})
    record = {"system": MODEL_SYSTEM, "rule": rule.name, "settings": dict(rule.settings), "mix": mix.name,
              "average": False,
              "years": {str(year): summarize_runs(found, MEASURES) for year, found in sorted(runs.items())}}
    if not average_seeds:
        return [record]
    averaged: dict[str, dict[str, Any]] = {}
    for year in clusters.years:
        scores = averaged_scores(by_seed, year)
        if scores is not None:
            values = clusters.score(clusters.summaries(scores, rule, mix, bar)).get(int(year.year))
            if values:
                averaged[str(year.year)] = summarize_runs([{**values, "unit": "seeds averaged"}], MEASURES)
    return [record, {**record, "average": True, "years": averaged}] if averaged else [record]


def rescore(paths: Sequence[str | Path], duc_dirs: Sequence[str] | None, rules: Sequence[Rule],
            mixes: Sequence[Mix], average_seeds: bool = False, progress: bool = False,
            baselines: Sequence[str] = ()) -> dict[str, Any]:
    """Every group's rows (:func:`rescore_group`) for the units under ``paths``, with the official settings, the
    notes on units passed over and each group's command; ``duc_dirs`` default to the units' own ``--duc_dirs``;
    ``baselines`` (``query-sim``, ``lead``) add their rows under each rule. ``progress``: a bar on stderr counts the
    cluster summaries chosen (the ILP rule takes minutes on full DUC years), a line names each group.

    Raises:
        ExperimentError: no unit, a DUC folder that cannot be read, scores that do not fit its sentences.
    """
    from tqdm.auto import tqdm

    from trainer_scripts.duc_evaluation import EvaluationError, official_settings

    found = read_units(paths)
    groups: dict[tuple[str, ...], list[SavedUnit]] = {}
    for unit in found.units:
        groups.setdefault(unit.group, []).append(unit)
    loaded: dict[tuple[str, ...], Clusters] = {}
    for units in groups.values():  # every DUC folder read before anything is chosen: a bad one stops the run at once
        folders = tuple(duc_dirs) if duc_dirs else units[0].duc_dirs
        if not folders:
            raise ExperimentError(f"{units[0].folder.name}: its command names no --duc_dirs; give --duc_dirs")
        if folders not in loaded:
            try:
                loaded[folders] = Clusters.load(folders)
            except (EvaluationError, OSError, ValueError) as error:
                hint = "" if duc_dirs else " (the folders the units' command names; give --duc_dirs)"
                raise ExperimentError(f"{error}{hint}") from None
    clusters = {group: loaded[tuple(duc_dirs) if duc_dirs else units[0].duc_dirs] for group, units in groups.items()}
    total = selections([(clusters[group], units) for group, units in groups.items()], rules, mixes, average_seeds,
                       baselines)
    results = []
    with tqdm(total=total, desc="rescoring", unit="cluster", disable=not progress, file=sys.stderr) as bar:
        for group, units in groups.items():
            if progress:
                bar.write(f"rescoring {len(units)} unit(s) of {' '.join(group)}", file=sys.stderr)
            record = rescore_group(clusters[group], units, rules, mixes, average_seeds, bar, baselines)
            results.append({"command": list(group), "units": sorted(unit.folder.name for unit in units), **record})
    return {"settings": official_settings(), "notes": found.notes, "groups": results}


# ---- the table ---------------------------------------------------------------------------------------------------


def to_markdown(result: Mapping[str, Any]) -> str:
    """``rescore.md``: one table per group, a row per (rule, mix), per year R-1, R-2 and R-SU4 recall x100."""
    parts = ["# Summaries chosen again from saved sentence scores", "",
             f"Official DUC ROUGE settings (`{result['settings']}`), recall x100: mean ± sample standard deviation "
             "over the seeds [95% bootstrap interval of the median seed's run]; 'seeds averaged': one summary per "
             "cluster from the seeds' scores averaged sentence by sentence. Under each rule, the baselines chosen by "
             "the same rule (`QUERY-SIM (ILP)`; the bare name is the paper's greedy rule): one run each."]
    for group in result["groups"]:
        years = sorted({year for row in group["rows"] for year in row["years"]})
        header = ["System", "Rule", "Mix", "Seeds",
                  *(f"DUC {year} {MEASURE_NAMES[m]}" for year in years for m in MEASURES)]
        lines = []
        for row in group["rows"]:
            runs = max((summary.get("runs", 0) for summary in row["years"].values() if summary), default=0)
            rule = Rule(row["rule"], row["settings"]).label
            seeds = "averaged" if row["average"] else "-" if row.get("baseline") else str(runs)
            lines.append([row.get("system", MODEL_SYSTEM), rule, row["mix"], seeds,
                          *(ours_cell(row["years"].get(year), measure) for year in years for measure in MEASURES)])
        seeds = ", ".join(f"{seed} (folds {' '.join(map(str, folds)) or '-'})" for seed, folds in group["seeds"].items())
        parts += ["", f"## `{' '.join(group['command'])}`", "", f"Seeds: {seeds}.",
                  *(f"- {note}" for note in group["missing"]), "", markdown_table(header, lines)]
    if result["notes"]:
        parts += ["", "Passed over:", *(f"- {note}" for note in result["notes"])]
    return "\n".join(parts) + "\n"


def write_outputs(folder: str | Path, result: Mapping[str, Any], table: str) -> list[Path]:
    """``rescore.md`` and ``rescore.json`` into ``folder`` (made if missing), each written to a temporary file beside
    it and renamed over the old one: a reader, or a second run writing at the same time, sees a whole file, never a
    mix, and a run killed halfway leaves the previous files. Returns the two paths."""
    import os
    import tempfile

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (("rescore.md", table), ("rescore.json", json.dumps(result, indent=1) + "\n")):
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.replace(temporary, folder / name)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        written.append(folder / name)
    return written
